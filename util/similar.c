/* similar.c -- "did you mean": the nearest of a list of names by the
 * optimal string alignment distance (Levenshtein's edits and the swap of
 * two neighbouring bytes, a common typo). */
#include "util/similar.h"

#include <ctype.h>
#include <string.h>

enum { LONGEST = 64 };

static int
fold(int c)
{
	return c == '_' ? '-' : tolower(c);
}

static int
distance(const char *a, const char *b)
{
	int n = (int)strlen(a), m = (int)strlen(b);
	int d[LONGEST + 1][LONGEST + 1];

	if (n > LONGEST || m > LONGEST)
		return LONGEST;
	for (int i = 0; i <= n; i++)
		d[i][0] = i;
	for (int j = 0; j <= m; j++)
		d[0][j] = j;
	for (int i = 1; i <= n; i++)
		for (int j = 1; j <= m; j++) {
			int cost = fold((unsigned char)a[i - 1]) != fold((unsigned char)b[j - 1]);
			int v = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;
			if (d[i - 1][j - 1] + cost < v)
				v = d[i - 1][j - 1] + cost;
			if (i > 1 && j > 1 &&
			    fold((unsigned char)a[i - 1]) == fold((unsigned char)b[j - 2]) &&
			    fold((unsigned char)a[i - 2]) == fold((unsigned char)b[j - 1]) &&
			    d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	return d[n][m];
}

const char *
similar_name(const char *s, const char *(*name)(int))
{
	int len = (int)strlen(s), most = len / 3, best = LONGEST;
	const char *pick = NULL, *c;

	most = most < 1 ? 1 : most > 3 ? 3 : most;
	for (int i = 0; (c = name(i)); i++) {
		int d = distance(s, c);
		if (d < best)
			best = d, pick = c;
	}
	return best <= most ? pick : NULL;
}
