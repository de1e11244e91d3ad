/* files.h -- reading input files, and the list of every file read (for
 * make dependency rules). */
#ifndef ORACLEC_UTIL_FILES_H
#define ORACLEC_UTIL_FILES_H

#include <stdbool.h>
#include <stddef.h>

#include "util/diag.h"

typedef struct FileList {
	char **path;  /* as the user (or the include) named them, malloc'd */
	int n, cap;
} FileList;

/* Every file opened for input is added here, in order, once. */
void files_add(FileList *fl, const char *path);
void files_free(FileList *fl);

/* Opens path for reading without ever blocking: O_NONBLOCK while opening,
 * so a FIFO does not wait for a writer, then anything but a regular file
 * (a FIFO, a device, a directory) is refused, then O_NONBLOCK is cleared.
 * The descriptor (close-on-exec), or -1 after an error reported at `where`
 * (the include statement, or nothing).  Every input is opened here. */
int file_open(const char *path, Loc where);

/* Whether a and b name one file: the same device and inode when both
 * exist; the same resolved directory and name when neither does yet. */
bool file_same(const char *a, const char *b);

/* The existing file path as a path from the folder of file `from` (which
 * need not exist yet; NULL: the working directory), both resolved
 * (symbolic links, "." and ".."): "../impl/gpu.odl"; malloc'd.  NULL when
 * path cannot be resolved. */
char *file_relative(const char *path, const char *from);

/* Reads all of path into a malloc'd buffer followed by two NUL bytes (what
 * flex's yy_scan_buffer wants).  Files over `limit` bytes are refused.
 * Errors are reported at `where` (the include statement, or nothing). */
char *file_read(const char *path, size_t *len, size_t limit, Loc where);

#endif
