/* keys.c -- one `key = value;` setting of an ODL description block
 * (system, level, implementation) stored into its struct by the key's
 * table row (ir/syskeys.def, ir/implkeys.def): the type, the unit a
 * quantity must be written in and the range a number must lie in
 * (docs/limits.md, "Numbers"), each an error naming the key. */
#include "frontend/frontend.h"
#include "grammar/ast.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* The largest integer a key takes (2^30: a count of GPUs, cores, SMs or
 * workers far past any machine's), docs/limits.md. */
#define MAX_KEY_INT ((int64_t)1 << 30)

/* The values a real key takes: lo to hi, and 0 too when `zero`; `text`
 * says so in the key's unit for messages.  Indexed by SysRange, the
 * range column of ir/syskeys.def. */
typedef struct Range {
	double lo, hi;
	bool zero;
	const char *text;
} Range;

static const Range range[] = {
	[SR_RATE] = { SYS_MIN_RATE, SYS_MAX_RATE, false, "1 to 1e21" },
	[SR_RATE0] = { SYS_MIN_RATE, SYS_MAX_RATE, true, "0, or 1 to 1e21" },
	[SR_BYTES] = { 1, MAX_SYSTEM_BYTES, false, "1 to 2^60" },
	[SR_BYTES0] = { 1, MAX_SYSTEM_BYTES, true, "0, or 1 to 2^60" },
	[SR_SECS] = { SYS_MIN_SECONDS, SYS_MAX_SECONDS, true, "0, or 1e-12 to 1000" },
	[SR_EFF] = { SYS_MIN_EFF, 1, false, "1e-6 to 1" },
	[SR_OVERSUB] = { 0, SYS_MAX_OVERSUB, true, "0 to 1e6" },
	[SR_COUNT] = { 0, SYS_MAX_COUNT, true, "0 to 1e15" },
	[SR_SCALE] = { SYS_MIN_EFF, SYS_MAX_SCALE, false, "1e-6 to 1e6" },
	[SR_FRACTION0] = { 0, 1, true, "0 to 1" },
	[SR_CAPABILITY] = { 1, 20, true, "0, or 1 to 20" },
};

static const char *const unit_name[] = { "a plain number", "bytes (e.g. 16GiB)",
					 "seconds (e.g. 9us)", "a bandwidth (e.g. 12.5GB/s)",
					 "FLOP/s (e.g. 15.7TFLOPS)" };
static const char *const unit_symbol[] = { "", " bytes", " s", " bytes/s", " FLOP/s" };

/* Whether v is one of the values r allows. */
static bool
in_range(const Range *r, double v)
{
	return (r->zero && v == 0) || (v >= r->lo && v <= r->hi);
}

/* Stores the value e of key k into its field of base; false after an
 * error (the wrong type or unit, a negative number, out of range). */
bool
key_set(const SysKey *k, void *base, const Expr *e, Loc loc)
{
	char *p = (char *)base + k->off;
	double v = e->kind == E_INT ? (double)e->ival : e->fval;
	bool neg = e->kind == E_NEG;

	if (neg) {
		diag_error(loc, "'%s' must not be negative", k->name);
		return false;
	}
	switch (k->type) {
	case SK_STRING:
		if (e->kind != E_STRING)
			break;
		*(const char **)p = e->name;
		return true;
	case SK_BOOL:
		if (e->kind != E_BOOL)
			break;
		*(bool *)p = e->ival != 0;
		return true;
	case SK_INT:
	case SK_INT64:
		if (e->kind != E_INT)
			break;
		if (e->ival > MAX_KEY_INT) {
			diag_error(loc, "'%s' %" PRId64 " is out of range (0 to %" PRId64 ")",
				   k->name, e->ival, (int64_t)MAX_KEY_INT);
			return false;
		}
		if (k->type == SK_INT64)
			*(int64_t *)p = e->ival;
		else
			*(int *)p = (int)e->ival;
		return true;
	case SK_REAL:
		if ((e->kind != E_INT && e->kind != E_FLOAT) || e->unit != k->unit || v < 0)
			break;
		if (!in_range(&range[k->range], v)) {
			diag_error(loc, "'%s' %g%s is out of range (%s%s)", k->name, v,
				   unit_symbol[k->unit], range[k->range].text,
				   unit_symbol[k->unit]);
			return false;
		}
		*(double *)p = v;
		return true;
	}
	diag_error(loc, "'%s' must be %s", k->name,
		   k->type == SK_STRING ? "a string"
		   : k->type == SK_BOOL ? "true or false"
		   : k->type != SK_REAL ? "a non-negative integer"
				       : unit_name[k->unit]);
	return false;
}

const SysKey *
key_find(const SysKey *keys, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(keys[i].name, name) == 0)
			return &keys[i];
	return NULL;
}

const Decl *
odl_block(const char *file, const char *text, size_t len, Arena *a, int kind, const char *what)
{
	char *buf = xcalloc(len + 2, 1);
	const Decl *d, *found = NULL;
	int errors = diag_errors();

	memcpy(buf, text, len);
	d = dsl_parse(file, buf, len, a);
	free(buf);
	if (diag_errors() > errors)
		return NULL;
	for (; d; d = d->next) {
		/* a system file may be a model file that carries its system, and
		 * the model's includes are not followed here (docs/systems.md);
		 * an implementation file holds its block alone */
		if (d->kind == D_INCLUDE && kind == D_IMPLEMENTATION) {
			diag_error(d->loc, "an implementation file does not follow 'include': "
				   "give every key in its one implementation block");
			return NULL;
		}
		if ((int)d->kind != kind)
			continue;
		if (found) {
			diag_error(d->loc, "a second %s '%s' in one file", what, d->name);
			return NULL;
		}
		found = d;
	}
	if (!found)
		diag_error((Loc){ file, 0, 0 }, "no %s in this file", what);
	return found;
}
