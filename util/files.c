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

/* Reports that path cannot be read: at the include statement `where`, or
 * at the file itself. */
static void
fail(Loc where, const char *path, const char *what)
{
	if (where.file)
		diag_error(where, "cannot read '%s': %s", path, what);
	else
		diag_error((Loc){ path, 0, 0 }, "cannot read file: %s", what);
}

int
file_open(const char *path, Loc where)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	struct stat st;
	int flags;

	if (fd < 0) {
		fail(where, path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		fail(where, path, "not a regular file");
		close(fd);
		return -1;
	}
	if ((flags = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0) {
		fail(where, path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* path with its directory resolved (symbolic links, "." and ".."), for a
 * file that does not exist yet; malloc'd.  A directory that cannot be
 * resolved is kept as written. */
static char *
resolved(const char *path)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	char *dir = slash ? xcalloc((size_t)(slash - path) + 2, 1) : NULL;
	char *real, *out;

	if (dir)
		memcpy(dir, path, slash > path ? (size_t)(slash - path) : 1);
	real = realpath(dir ? dir : ".", NULL);
	if (!real)
		real = strcpy(xcalloc(strlen(dir ? dir : ".") + 1, 1), dir ? dir : ".");
	out = xcalloc(strlen(real) + strlen(base) + 2, 1);
	sprintf(out, "%s/%s", real, base);
	free(real);
	free(dir);
	return out;
}

char *
file_relative(const char *path, const char *from)
{
	char *to = realpath(path, NULL), *at = resolved(from ? from : "x"), *out, *end;
	size_t c = 0, up = 0;

	if (!to) {
		free(at);
		return NULL;
	}
	/* from's folder, without a '/' at its end ("" for the root) */
	*strrchr(at, '/') = '\0';
	for (end = at + strlen(at); end > at && end[-1] == '/';)
		*--end = '\0';
	/* c: where the folders both paths lie in end, a '/' in `to` */
	for (size_t i = 0;; i++) {
		if ((at[i] == '\0' || at[i] == '/') && to[i] == '/')
			c = i;
		if (at[i] == '\0' || at[i] != to[i])
			break;
	}
	for (const char *p = at + c; *p; p++)
		up += *p == '/';
	out = xcalloc(3 * up + strlen(to + c) + 1, 1);
	for (size_t i = 0; i < up; i++)
		strcat(out, "../");
	strcat(out, to + c + 1);
	free(to);
	free(at);
	return out;
}

bool
file_same(const char *a, const char *b)
{
	struct stat sa, sb;
	bool ea = stat(a, &sa) == 0, eb = stat(b, &sb) == 0;
	char *ra, *rb;
	bool same;

	if (ea || eb)
		return ea && eb && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	ra = resolved(a);
	rb = resolved(b);
	same = strcmp(ra, rb) == 0;
	free(ra);
	free(rb);
	return same;
}

char *
file_read(const char *path, size_t *len, size_t limit, Loc where)
{
	int fd = file_open(path, where);
	FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
	struct stat st;
	char *buf;
	size_t n;

	if (!f) {
		if (fd >= 0) {
			fail(where, path, strerror(errno));
			close(fd);
		}
		return NULL;
	}
	if (fstat(fileno(f), &st) != 0) {
		fail(where, path, strerror(errno));
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
