/* output.h -- atomic output files: write to a temporary file beside the
 * target, rename it into place on success, remove it on failure, so make
 * never sees half a report.  Several outputs commit together: every one
 * is written and flushed before the first is renamed. */
#ifndef ORACLEC_UTIL_OUTPUT_H
#define ORACLEC_UTIL_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>

typedef struct OutFile {
	const char *path;  /* NULL: stdout */
	char *tmp;         /* the temporary file, malloc'd; NULL: in place */
	FILE *f;           /* NULL once closed */
} OutFile;

/* Whether path is written in place rather than through a temporary
 * file: standard output ("-"), or something that exists and is not a
 * regular file (a device such as /dev/null, a FIFO). */
bool out_in_place(const char *path);
/* false after reporting why the file cannot be created */
bool out_open(OutFile *o, const char *path);
/* flushes, checks for write errors, renames; false after reporting */
bool out_commit(OutFile *o);
/* out_commit for n files at once: all are renamed into place only when
 * all were written without error; else none is, and all are removed */
bool out_commit_all(OutFile *o, int n);
/* removes the temporary file; for error paths */
void out_abort(OutFile *o);

#endif
