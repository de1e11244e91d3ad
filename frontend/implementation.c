/* implementation.c -- software stacks: ODL `implementation` blocks, built-in
 * (builtin_impl.c) or from a file.  A block is a list of `key = value;`
 * settings (ir/implkeys.def, docs/systems.md "Implementations"); a key
 * left out keeps the value of the built-in its `base` names, else the
 * generic default (implementation_defaults). */
#include "frontend/frontend.h"
#include "grammar/ast.h"

#include <stdlib.h>
#include <string.h>

static Implementation *from_text(const char *file, const char *text, size_t len, Arena *a,
				 const char *source, int depth);

/* The values of the built-in that d's `base` names into im (the generic
 * defaults without one); false after an error (reported).  A built-in
 * may stand on another, at most MAX_BASES deep. */
enum { MAX_BASES = 4 };
static bool
base(const Decl *d, Arena *a, int depth, Implementation *im)
{
	const Implementation *b;
	const char *text;

	implementation_defaults(im);
	for (const Stmt *st = d->body; st; st = st->next) {
		if (st->kind != ST_LET || strcmp(st->lhs, "base") != 0)
			continue;
		if (st->expr->kind != E_STRING)
			return true; /* key_set reports the type */
		if (!(text = builtin_impl(st->expr->name))) {
			diag_error(st->expr->loc,
				   "'base' must name a built-in implementation, "
				   "not '%.64s' (--list-implementations shows them)",
				   st->expr->name);
			return false;
		}
		if (depth >= MAX_BASES) {
			diag_error(st->expr->loc, "'base' names built-ins more than %d deep",
				   MAX_BASES);
			return false;
		}
		if (!(b = from_text(arena_printf(a, "<built-in %s>", st->expr->name), text,
				    strlen(text), a, "built-in", depth + 1)))
			return false;
		*im = *b;
		return true;
	}
	return true;
}

static Implementation *
elaborate(const Decl *d, Arena *a, const char *source, int depth)
{
	Implementation *im = arena_alloc(a, sizeof *im);
	bool seen[NIMPL_KEYS] = { false };
	int errors = diag_errors();
	const char *bad, *want;

	if (!base(d, a, depth, im))
		return NULL;
	im->name = d->name;
	im->source = source;
	for (const Stmt *st = d->body; st; st = st->next) {
		const SysKey *k;
		if (st->kind != ST_LET) {
			diag_error(st->loc, "an implementation holds only 'key = value;' settings");
			continue;
		}
		if (!(k = key_find(impl_keys, NIMPL_KEYS, st->lhs))) {
			diag_error(st->loc, "unknown implementation setting '%.64s'", st->lhs);
			continue;
		}
		if (seen[k - impl_keys])
			diag_error(st->loc, "'%s' is set twice", k->name);
		seen[k - impl_keys] = true;
		key_set(k, im, st->expr, st->expr->loc);
	}
	if (diag_errors() == errors && (bad = implementation_check(im, &want))) {
		/* at the setting that gave the value, else (its base's) the block */
		Loc at = d->loc;
		for (const Stmt *st = d->body; st; st = st->next)
			if (st->kind == ST_LET && strcmp(st->lhs, bad) == 0)
				at = st->expr->loc;
		diag_error(at, "implementation '%s': '%s' must be %s", d->name, bad, want);
	}
	return diag_errors() > errors ? NULL : im;
}

static Implementation *
from_text(const char *file, const char *text, size_t len, Arena *a, const char *source,
	  int depth)
{
	const Decl *d = odl_block(file, text, len, a, D_IMPLEMENTATION, "implementation");

	return d ? elaborate(d, a, source, depth) : NULL;
}

Implementation *
implementation_load(const char *name, Arena *a, FileList *files)
{
	return implementation_load_at(name, LOC_NONE, a, files);
}

Implementation *
implementation_load_at(const char *name, Loc at, Arena *a, FileList *files)
{
	const char *source;
	const Decl *d = noun_block(&noun_implementation, &name, at, a, files, &source);
	Implementation *im = d ? elaborate(d, a, source, 0) : NULL;

	if (im && strcmp(source, "built-in") == 0)
		im->name = name;
	return im;
}

void
implementation_list(FILE *f)
{
	const char *name;

	for (int i = 0; (name = builtin_impl_name(i)); i++)
		fprintf(f, "%s%s", i ? "\n" : "", builtin_impl(name));
}
