/* depfile.c -- a make rule naming every file an analysis read, as gcc's
 * -M/-MD write: "target: model include... system profile", and with -MP
 * an empty rule for each file after the first, so make does not fail when
 * one is deleted.  Names are quoted for GNU make by esc_make()
 * (util/escape.h); a name make cannot read back (a newline, another
 * control character, a ';', a final backslash) is refused before anything
 * is written. */
#include "backends/backends.h"
#include "util/escape.h"

#include <stdlib.h>

/* false, after saying why, when make cannot read s back */
static bool
writable(const char *s)
{
	const char *bad = make_bad(s);
	char *name;

	if (!bad)
		return true;
	name = esc_text_dup(s);
	if (*bad == ';')
		diag_error(LOC_NONE, "cannot write a make rule naming '%s': a ';' in a file name "
			   "would start a recipe", name);
	else if (*bad == '\\')
		diag_error(LOC_NONE, "cannot write a make rule naming '%s': make cannot read a "
			   "file name that ends in a backslash", name);
	else
		diag_error(LOC_NONE, "cannot write a make rule naming '%s': make cannot read the "
			   "control character 0x%02x in a file name", name, (unsigned char)*bad);
	free(name);
	return false;
}

bool
depfile_check(const FileList *files, const char *target)
{
	bool ok = writable(target);

	for (int i = 0; i < files->n; i++)
		ok &= writable(files->path[i]);
	return ok;
}

bool
depfile_emit(const FileList *files, const char *target, bool phony, FILE *f)
{
	if (!depfile_check(files, target))
		return false;
	esc_make(f, target, true);
	fputc(':', f);
	for (int i = 0; i < files->n; i++) {
		fputs(" \\\n ", f);
		esc_make(f, files->path[i], false);
	}
	fputc('\n', f);
	for (int i = 1; phony && i < files->n; i++) {
		fputc('\n', f);
		esc_make(f, files->path[i], true);
		fputs(":\n", f);
	}
	return !ferror(f);
}
