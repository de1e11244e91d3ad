/* sysfile.c -- a System written back as ODL, e.g. after calibration; the
 * result reads back with --system to the same doubles: each quantity the
 * shortest text that does (bytes, bytes/s and FLOP/s in those units,
 * seconds in ns, us, ms or s); the keys are those of ir/syskeys.def, in
 * its order.  Strings are ODL string literals, names ODL
 * identifiers (a .plat system is named by its path), the comment text
 * that cannot end its line (util/escape.h). */
#include "backends/backends.h"
#include "util/escape.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>
#include <stdlib.h>

/* Whether key k is set in the struct at base: a string not NULL, a real
 * not negative (-1: the implementation's, ir/implementation.h). */
static bool
given(const SysKey *k, const void *base)
{
	const char *p = (const char *)base + k->off;

	return k->type == SK_STRING ? *(const char *const *)p != NULL
	       : k->type == SK_REAL ? *(const double *)p >= 0
				    : true;
}

/* v as the shortest text whose value, read as grammar/lex.l reads a
 * quantity (strtod, then times scale), is v again, a whole number without
 * an exponent: into buf; false when none is (a product with scale that
 * rounds away from v). */
static bool
exact(double v, double scale, char *buf, size_t size)
{
	double x = v / scale;

	if (x == floor(x) && fabs(x) < 1e17) {
		snprintf(buf, size, "%.0f", x);
		if (strtod(buf, NULL) * scale == v)
			return true;
	}
	for (int p = 1; p <= 17; p++) {
		snprintf(buf, size, "%.*g", p, x);
		if (strtod(buf, NULL) * scale == v)
			return true;
	}
	return false;
}

/* Seconds v in the unit whose exact text is shortest, the smaller on a
 * tie: 5us (5 * 1e-6 is not the double 5e-6, and as ns it is
 * 4999.999999999999ns), 90ns, 11598.9382613973ns; s always reads back. */
static void
seconds(FILE *f, double v)
{
	static const struct { const char *name; double scale; } u[] = {
		{ "ns", 1e-9 }, { "us", 1e-6 }, { "ms", 1e-3 }, { "s", 1 },
	};
	char best[40] = "", num[40];
	const char *name = "s";

	for (size_t i = 0; i < sizeof u / sizeof u[0]; i++)
		if (exact(v, u[i].scale, num, sizeof num) &&
		    (!*best || strlen(num) < strlen(best))) {
			memcpy(best, num, sizeof best);
			name = u[i].name;
		}
	fprintf(f, "%s%s", best, name);
}

/* Key k of the struct at base, as ODL writes it: reals in base units
 * with their unit, the shortest text that reads back to the same double
 * (16 GiB as 17179869184B; %.10g wrote 17179869180B), seconds in the
 * unit that says them shortest; strings as ODL string literals. */
static void
key(FILE *f, const SysKey *k, const void *base)
{
	static const char *const unit[] = { [U_NONE] = "", [U_BYTES] = "B",
					    [U_SECONDS] = "", [U_BYTES_PER_S] = "B/s",
					    [U_FLOPS] = "FLOPS" };
	const char *p = (const char *)base + k->off;
	const char *str;
	char num[40];
	double v;

	fprintf(f, "%s = ", k->name);
	switch (k->type) {
	case SK_REAL:
		v = *(const double *)p;
		if (k->unit == U_SECONDS) {
			seconds(f, v);
			break;
		}
		exact(v, 1, num, sizeof num);
		fprintf(f, "%s%s", num, unit[k->unit]);
		break;
	case SK_INT: fprintf(f, "%d", *(const int *)p); break;
	case SK_INT64: fprintf(f, "%" PRId64, *(const int64_t *)p); break;
	case SK_BOOL: fputs(*(const bool *)p ? "true" : "false", f); break;
	case SK_STRING:
		str = *(const char *const *)p;
		esc_odl_string(f, str ? str : "");
		break;
	}
	fputc(';', f);
}

/* Every key of ir/syskeys.def the system sets, then the levels. */
bool
system_emit(const System *s, const char *name, const char *comment, FILE *f)
{
	fputs("// ", f);
	esc_text(f, comment);
	fputs("\nsystem ", f);
	esc_odl_ident(f, name);
	fputs(" {\n", f);
	for (int i = 0; i < NSYS_KEYS; i++) {
		if (!given(&sys_keys[i], s))
			continue;
		fputs("    ", f);
		key(f, &sys_keys[i], s);
		fputc('\n', f);
	}
	for (int i = 0; i < s->nlevels; i++) {
		fputs("    level ", f);
		esc_odl_ident(f, s->level[i].name);
		fputs(" {", f);
		for (int k = 0; k < NLEVEL_KEYS; k++) {
			fputc(' ', f);
			key(f, &level_keys[k], &s->level[i]);
		}
		fputs(" }\n", f);
	}
	fprintf(f, "}\n");
	return !ferror(f);
}
