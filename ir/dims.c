/* dims.c -- small helpers on per-sample shapes. */
#include "ir/ir.h"
#include "util/checked.h"

#include <inttypes.h>
#include <string.h>

bool
shape_elems(const Shape *s, int64_t *out)
{
	int64_t n = 1;

	for (int i = 0; i < s->rank; i++)
		if (!ck_mul(n, s->d[i], &n))
			return false;
	*out = n;
	return true;
}

char *
shape_str(const Shape *s, char *buf, size_t n)
{
	size_t len = 0;

	buf[0] = '\0';
	if (s->rank == 0) {
		snprintf(buf, n, "scalar");
		return buf;
	}
	for (int i = 0; i < s->rank && len < n; i++) {
		int k = snprintf(buf + len, n - len, "%s%" PRId64, i ? "x" : "", s->d[i]);
		if (k < 0)
			break;
		len += (size_t)k;
	}
	return buf;
}

bool
shape_eq(const Shape *a, const Shape *b)
{
	return a->rank == b->rank && memcmp(a->d, b->d, a->rank * sizeof a->d[0]) == 0;
}
