/* implementation.c -- software stacks: ODL `implementation` blocks, built-in
 * (builtin_impl.c) or from a file.  A block is a list of `key = value;`
 * settings (ir/implkeys.def, docs/systems.md "Implementations"); a key
 * left out keeps the generic default (implementation_defaults). */
#include "frontend/frontend.h"
#include "grammar/ast.h"

#include <stdlib.h>
#include <string.h>

static Implementation *
elaborate(const Decl *d, Arena *a, const char *source)
{
	Implementation *im = arena_alloc(a, sizeof *im);
	bool seen[NIMPL_KEYS] = { false };
	int errors = diag_errors();
	const char *bad, *want;

	implementation_defaults(im);
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
	if (diag_errors() == errors && (bad = implementation_check(im, &want)))
		diag_error(d->loc, "implementation '%s': '%s' must be %s", d->name, bad, want);
	return diag_errors() > errors ? NULL : im;
}

static Implementation *
from_text(const char *file, const char *text, size_t len, Arena *a, const char *source)
{
	const Decl *d = odl_block(file, text, len, a, D_IMPLEMENTATION, "implementation");

	return d ? elaborate(d, a, source) : NULL;
}

Implementation *
implementation_load(const char *name, Arena *a, FileList *files)
{
	return implementation_load_at(name, LOC_NONE, a, files);
}

Implementation *
implementation_load_at(const char *name, Loc at, Arena *a, FileList *files)
{
	const char *text = builtin_impl(name);
	char *buf;
	size_t len;
	Implementation *im;

	if (text) {
		name = builtin_impl_canonical(name);
		im = from_text(arena_printf(a, "<built-in %s>", name), text, strlen(text), a,
			       "built-in");
		if (im)
			im->name = name;
		return im;
	}
	if (!strchr(name, '/') && !strchr(name, '.')) {
		diag_error(at, "unknown implementation '%.64s' (--list-implementations "
			   "shows the built-in ones; a file name needs a '.' or a '/')", name);
		return NULL;
	}
	if (!(buf = file_read(name, &len, MAX_ODL_BYTES, at)))
		return NULL;
	files_add(files, name);
	im = from_text(name, buf, len, a, name);
	free(buf);
	return im;
}

void
implementation_list(FILE *f)
{
	const char *name;

	for (int i = 0; (name = builtin_impl_name(i)); i++)
		fprintf(f, "%s%s", i ? "\n" : "", builtin_impl(name));
}
