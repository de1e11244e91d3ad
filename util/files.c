/* files.c -- whole-file reads with a size limit; the list of inputs. */
#include "util/files.h"
#include "util/arena.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void
files_add(FileList *fl, const char *path)
{
	for (int i = 0; i < fl->n; i++)
		if (strcmp(fl->path[i], path) == 0)
			return;
	if (fl->n == fl->cap) {
		fl->cap = fl->cap ? 2 * fl->cap : 8;
		fl->path = xrealloc(fl->path, fl->cap * sizeof *fl->path);
	}
	fl->path[fl->n] = xcalloc(strlen(path) + 1, 1);
	strcpy(fl->path[fl->n++], path);
}

void
files_free(FileList *fl)
{
	for (int i = 0; i < fl->n; i++)
		free(fl->path[i]);
	free(fl->path);
	fl->path = NULL;
	fl->n = fl->cap = 0;
}

static void
fail(Loc where, const char *path, const char *what)
{
	if (where.file)
		diag_error(where, "cannot read '%s': %s", path, what);
	else
		diag_error((Loc){ path, 0, 0 }, "cannot read file: %s", what);
}

char *
file_read(const char *path, size_t *len, size_t limit, Loc where)
{
	/* O_NONBLOCK: opening a FIFO must not wait for a writer */
	int fd = open(path, O_RDONLY | O_NONBLOCK);
	FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
	struct stat st;
	char *buf;
	size_t n;

	if (!f) {
		fail(where, path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
		fail(where, path, "not a regular file");
		fclose(f);
		return NULL;
	}
	if ((unsigned long long)st.st_size > limit) {
		char msg[96];
		snprintf(msg, sizeof msg, "file is larger than the limit of %zu bytes", limit);
		fail(where, path, msg);
		fclose(f);
		return NULL;
	}
	n = (size_t)st.st_size;
	buf = xcalloc(n + 2, 1);
	if (fread(buf, 1, n, f) != n || ferror(f)) {
		fail(where, path, "read error");
		free(buf);
		fclose(f);
		return NULL;
	}
	fclose(f);
	*len = n;
	return buf;
}
