/* noun.c -- a system or an implementation by name: a built-in's text or a
 * file's, read as one ODL block.  The two nouns a user names on the
 * command line, and one file names in another, are found one way: a name
 * without a '.' or a '/' is a built-in's (else an error naming the
 * nearest), anything else a file. */
#include "frontend/frontend.h"
#include "grammar/ast.h"
#include "util/similar.h"

#include <stdlib.h>
#include <string.h>

const Noun noun_system = { "system", "--list-systems", D_SYSTEM, builtin_system,
			   builtin_system_canonical, builtin_system_name };
const Noun noun_implementation = { "implementation", "--list-implementations",
				   D_IMPLEMENTATION, builtin_impl, builtin_impl_canonical,
				   builtin_impl_name };

const Decl *
noun_block(const Noun *n, const char **name, Loc at, Arena *a, FileList *files,
	   const char **source)
{
	const char *text = n->builtin(*name);
	const Decl *d;
	char *buf;
	size_t len;

	if (text) {
		/* reported as the list names it (dgx-a100), not as the ODL
		 * identifier of its block (dgx_a100) */
		*name = n->canonical(*name);
		*source = "built-in";
		return odl_block(arena_printf(a, "<built-in %s>", *name), text, strlen(text), a,
				 n->kind, n->what);
	}
	if (!strchr(*name, '/') && !strchr(*name, '.')) {
		const char *near = similar_name(*name, n->name);
		diag_error(at, "unknown %s '%.64s'%s%s%s (%s shows the built-in ones; a file name "
			   "needs a '.' or a '/')", n->what, *name, near ? "; did you mean '" : "",
			   near ? near : "", near ? "'?" : "", n->list);
		return NULL;
	}
	if (!(buf = file_read(*name, &len, MAX_ODL_BYTES, at)))
		return NULL;
	files_add(files, *name);
	*source = *name;
	d = odl_block(*name, buf, len, a, n->kind, n->what);
	free(buf);
	return d;
}
