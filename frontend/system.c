/* system.c -- cluster descriptions: ODL `system` blocks, built-in or from a
 * file, and ParaDL's .plat files.
 *
 * A system block is a list of `key = value;` settings and `level NAME {
 * ... }` blocks, values being literals (numbers, quantities with units,
 * strings, booleans).  Each key has one dimension; a value in the wrong
 * unit is an error naming the key, and so is a number outside the key's
 * range (docs/limits.md, "Numbers": a constant that makes a time
 * infinite or a memory absurd is refused here, where the file and line
 * are known).  docs/systems.md lists the keys. */
#include "frontend/frontend.h"
#include "grammar/ast.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

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
};

typedef SysKey Key;

static const char *const unit_name[] = { "a plain number", "bytes (e.g. 16GiB)",
					 "seconds (e.g. 9us)", "a bandwidth (e.g. 12.5GB/s)",
					 "FLOP/s (e.g. 15.7TFLOPS)" };
static const char *const unit_symbol[] = { "", " bytes", " s", " bytes/s", " FLOP/s" };

/* Defaults for what a user's file may leave out: generic values for a
 * current GPU and an eager framework (docs/systems.md says so). */
static void
defaults(System *s)
{
	/* the implementation's (ir/implementation.h) unless a file sets them */
	s->p2p_lat = -1;
	s->dispatch = -1;
	s->decode_bw = -1;
	s->eff_conv = 0.7;
	s->eff_gemm = 0.8;
	s->eff_mem = 0.8;
	s->kernel_lat = 5e-6;
	s->reserved = 1024.0 * 1024 * 1024;
	s->cpu_cores = 32;
	s->storage_bw = 10e9;
	s->intra = "nvlink";
	s->gpu = "GPU";
}

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
		if (e->kind != E_INT || e->ival < 0 || e->ival > (int64_t)1 << 30)
			break;
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
				   unit_symbol[k->unit], range[k->range].text, unit_symbol[k->unit]);
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

/* Applies the settings of one block; `seen` marks the keys given. */
static void
settings(const Stmt *st, const Key *keys, size_t n, void *base, bool *seen, System *s)
{
	for (; st; st = st->next) {
		const Key *k;
		if (st->kind == ST_LEVEL && keys == sys_keys) {
			NetLevel *lv;
			bool lseen[sizeof level_keys / sizeof level_keys[0]] = { false };
			if (s->nlevels == MAX_LEVELS) {
				diag_error(st->loc, "more than %d network levels", MAX_LEVELS);
				continue;
			}
			lv = &s->level[s->nlevels++];
			lv->name = st->lhs;
			lv->oversub = 1;
			settings(st->body, level_keys, sizeof lseen / sizeof lseen[0], lv, lseen, s);
			for (size_t i = 0; i < sizeof lseen / sizeof lseen[0]; i++)
				if (level_keys[i].required && !lseen[i])
					diag_error(st->loc, "level '%s' does not give '%s'", st->lhs,
						   level_keys[i].name);
			if (lv->oversub < 1)
				lv->oversub = 1;
			continue;
		}
		if (st->kind != ST_LET) {
			diag_error(st->loc, "a system holds only 'key = value;' settings and "
				   "'level' blocks");
			continue;
		}
		if (!(k = key_find(keys, n, st->lhs))) {
			diag_error(st->loc, "unknown %s setting '%.64s'",
				   keys == sys_keys ? "system" : "level", st->lhs);
			continue;
		}
		if (seen[k - keys])
			diag_error(st->loc, "'%s' is set twice", k->name);
		seen[k - keys] = true;
		key_set(k, base, st->expr, st->expr->loc);
	}
}

static System *
elaborate(const Decl *d, Arena *a, const char *source)
{
	System *s = arena_alloc(a, sizeof *s);
	bool seen[sizeof sys_keys / sizeof sys_keys[0]] = { false };
	int errors = diag_errors();

	defaults(s);
	s->name = d->name;
	s->source = source;
	settings(d->body, sys_keys, sizeof seen / sizeof seen[0], s, seen, s);
	for (size_t i = 0; i < sizeof seen / sizeof seen[0]; i++)
		if (sys_keys[i].required && !seen[i])
			diag_error(d->loc, "system '%s' does not give '%s'", d->name,
				   sys_keys[i].name);
	/* each real key was checked against its range as it was set */
	if (diag_errors() == errors && s->gpus_per_node < 1)
		diag_error(d->loc, "system '%s': 'gpus_per_node' must be at least 1", d->name);
	if (diag_errors() == errors && s->nlevels == 0) {
		/* one flat switch */
		s->level[0] = (NetLevel){ "switch", 0, 100e-9, 1 };
		s->nlevels = 1;
	}
	return diag_errors() > errors ? NULL : s;
}

static System *
from_text(const char *file, const char *text, size_t len, Arena *a, const char *source)
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
		if (d->kind != D_SYSTEM)
			continue;
		if (found) {
			diag_error(d->loc, "a second system '%s' in one file", d->name);
			return NULL;
		}
		found = d;
	}
	if (!found) {
		diag_error((Loc){ file, 0, 0 }, "no system in this file");
		return NULL;
	}
	return elaborate(found, a, source);
}

static System *load(const char *name, Arena *a, FileList *files);

/* The system and the implementation it names (else the default one). */
System *
system_load(const char *name, Arena *a, FileList *files)
{
	System *s = load(name, a, files);

	if (s && !(s->impl = implementation_load(s->implementation ? s->implementation
								  : default_implementation,
						 a, files)))
		return NULL;
	return s;
}

static System *
load(const char *name, Arena *a, FileList *files)
{
	const char *text = builtin_system(name);
	char *buf;
	size_t len;
	System *s;
	size_t n = strlen(name);

	if (text) {
		/* reported as --list-systems names it (dgx-a100), not as the
		 * ODL identifier of its block (dgx_a100) */
		name = builtin_system_canonical(name);
		s = from_text(arena_printf(a, "<built-in %s>", name), text, strlen(text), a,
			      "built-in");
		if (s)
			s->name = name;
		return s;
	}
	if (n > 5 && strcmp(name + n - 5, ".plat") == 0) {
		/* the default system, with the constants the file gives */
		s = load(default_system, a, files);
		return s && plat_read(name, files, s) ? s : NULL;
	}
	if (!strchr(name, '/') && !strchr(name, '.')) {
		diag_error(LOC_NONE, "unknown system '%.64s' (--list-systems shows the built-in "
			   "ones; a file name needs a '.' or a '/')", name);
		return NULL;
	}
	if (!(buf = file_read(name, &len, MAX_ODL_BYTES, LOC_NONE)))
		return NULL;
	files_add(files, name);
	s = from_text(name, buf, len, a, name);
	free(buf);
	return s;
}

void
system_list(FILE *f)
{
	const char *name;

	for (int i = 0; (name = builtin_system_name(i)); i++)
		fprintf(f, "%s%s", i ? "\n" : "", builtin_system(name));
}
