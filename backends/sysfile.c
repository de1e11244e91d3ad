/* sysfile.c -- a System written back as ODL, e.g. after calibration; the
 * result reads back with --system.  Quantities in base units with their
 * unit, so nothing is lost; the keys are those of ir/syskeys.def, in
 * its order.  Strings are ODL string literals, names ODL
 * identifiers (a .plat system is named by its path), the comment text
 * that cannot end its line (util/escape.h). */
#include "backends/backends.h"
#include "util/escape.h"

#include <inttypes.h>

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

/* Key k of the struct at base, as ODL writes it: reals in base units
 * with their unit (seconds as ns, exact enough to read back), strings as
 * ODL string literals. */
static void
key(FILE *f, const SysKey *k, const void *base)
{
	static const char *const unit[] = { [U_NONE] = "", [U_BYTES] = "B",
					    [U_SECONDS] = "ns", [U_BYTES_PER_S] = "B/s",
					    [U_FLOPS] = "FLOPS" };
	const char *p = (const char *)base + k->off;
	const char *str;

	fprintf(f, "%s = ", k->name);
	switch (k->type) {
	case SK_REAL:
		fprintf(f, "%.10g%s", *(const double *)p * (k->unit == U_SECONDS ? 1e9 : 1),
			unit[k->unit]);
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
