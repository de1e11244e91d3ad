/* csv.c -- fields of one CSV record (util/csv.h). */
#include "util/csv.h"
#include "util/diag.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

bool
csv_field(const char *path, int lineno, const char *line, const char **p, char *buf,
	  size_t cap, int *col, bool *more)
{
	const char *s = *p;
	size_t n = 0;

	*col = (int)(s - line) + 1;
	if (*s == '"') {
		for (s++;; s++) {
			if (!*s) {
				diag_error((Loc){ path, lineno, *col },
					   "unterminated quoted field");
				return false;
			}
			if (*s == '"' && s[1] != '"')
				break;
			if (*s == '"')
				s++;
			if (n + 1 < cap)
				buf[n++] = *s;
		}
		s++;
		if (*s && *s != ',') {
			diag_error((Loc){ path, lineno, (int)(s - line) + 1 },
				   "expected ',' after a quoted field");
			return false;
		}
	} else {
		for (; *s && *s != ','; s++)
			if (n + 1 < cap)
				buf[n++] = *s;
	}
	if (n + 1 >= cap) {
		diag_error((Loc){ path, lineno, *col }, "field longer than %zu bytes", cap - 2);
		return false;
	}
	buf[n] = '\0';
	*more = *s == ',';
	*p = *more ? s + 1 : s;
	return true;
}

bool
csv_real(const char *s, double *v)
{
	char buf[64];
	size_t n;

	while (*s == ' ' || *s == '\t')
		s++;
	n = strlen(s);
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	if (n >= sizeof buf)
		return false;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return csv_decimal(buf, v);
}

bool
csv_decimal(const char *s, double *v)
{
	const char *p = s + (*s == '+' || *s == '-');
	size_t whole = strspn(p, "0123456789"), frac = 0;
	char *end;

	p += whole;
	if (*p == '.')
		p++, frac = strspn(p, "0123456789"), p += frac;
	if (!whole && !frac)
		return false;
	if (*p == 'e' || *p == 'E') {
		p += 1 + (p[1] == '+' || p[1] == '-');
		if (!strspn(p, "0123456789"))
			return false;
		p += strspn(p, "0123456789");
	}
	if (*p)
		return false;
	errno = 0;
	*v = strtod(s, &end);
	return *end == '\0' && !errno && isfinite(*v);
}
