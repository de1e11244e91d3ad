/* output.h -- atomic output files: write to a temporary file beside the
 * target, rename it into place on success, remove it on failure, so make
 * never sees half a report. */
#ifndef ORACLEC_UTIL_OUTPUT_H
#define ORACLEC_UTIL_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>

typedef struct OutFile {
	const char *path;  /* NULL: stdout */
	char *tmp;         /* the temporary file, malloc'd */
	FILE *f;
} OutFile;

/* false after reporting why the file cannot be created */
bool out_open(OutFile *o, const char *path);
/* flushes, checks for write errors, renames; false after reporting */
bool out_commit(OutFile *o);
/* removes the temporary file; for error paths */
void out_abort(OutFile *o);

#endif
