/* files.h -- reading input files, and the list of every file read (for
 * make dependency rules). */
#ifndef ORACLEC_UTIL_FILES_H
#define ORACLEC_UTIL_FILES_H

#include <stddef.h>

#include "util/diag.h"

typedef struct FileList {
	char **path;  /* as the user (or the include) named them, malloc'd */
	int n, cap;
} FileList;

/* Every file opened for input is added here, in order, once. */
void files_add(FileList *fl, const char *path);
void files_free(FileList *fl);

/* Reads all of path into a malloc'd buffer followed by two NUL bytes (what
 * flex's yy_scan_buffer wants).  Files over `limit` bytes are refused.
 * Errors are reported at `where` (the include statement, or nothing). */
char *file_read(const char *path, size_t *len, size_t limit, Loc where);

#endif
