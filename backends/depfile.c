/* depfile.c -- a make rule naming every file an analysis read, as gcc's
 * -M/-MD write: "target: model include... system profile", and with -MP
 * an empty rule for each file after the first, so make does not fail when
 * one is deleted.  Names are quoted for make ($ -> $$, # -> \#, spaces
 * and tabs escaped). */
#include "backends/backends.h"

static void
quoted(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '$')
			fputc('$', f);
		else if (*s == '#' || *s == ' ' || *s == '\t')
			fputc('\\', f);
		fputc(*s, f);
	}
}

bool
depfile_emit(const FileList *files, const char *target, bool phony, FILE *f)
{
	quoted(f, target);
	fputc(':', f);
	for (int i = 0; i < files->n; i++) {
		fputs(" \\\n ", f);
		quoted(f, files->path[i]);
	}
	fputc('\n', f);
	for (int i = 1; phony && i < files->n; i++) {
		fputc('\n', f);
		quoted(f, files->path[i]);
		fputs(":\n", f);
	}
	return !ferror(f);
}
