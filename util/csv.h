/* csv.h -- fields of one CSV record (RFC 4180 quoting, one line), for the
 * readers of CSV files (util/csv.c). */
#ifndef ORACLEC_UTIL_CSV_H
#define ORACLEC_UTIL_CSV_H

#include <stdbool.h>
#include <stddef.h>

/* The next field of `line` at *p (moved past it and its comma) into buf
 * (cap bytes), unquoted ("" for a quote); *col its 1-based column, *more
 * whether a comma followed.  False after reporting, at path:lineno:col, an
 * unterminated quote, text after a closing quote or a field too long. */
bool csv_field(const char *path, int lineno, const char *line, const char **p, char *buf,
	       size_t cap, int *col, bool *more);

/* s, blanks around it allowed, as csv_decimal reads it (no hexadecimal,
 * inf or nan; 63 characters at most); false when it is not one. */
bool csv_real(const char *s, double *v);

/* s as a decimal number as a CSV writes one, [+-]digits[.digits]
 * [e[+-]digits] and nothing else, finite, into *v: no blank around it
 * (strtod skips one before, not after), no hexadecimal ("0x1p-3"), no inf
 * or nan; false otherwise. */
bool csv_decimal(const char *s, double *v);

#endif
