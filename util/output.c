/* output.c -- temp file + rename for -o; checked flush for stdout. */
#include "util/output.h"
#include "util/arena.h"
#include "util/diag.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool
out_open(OutFile *o, const char *path)
{
	int fd;
	struct stat st;

	o->path = path;
	o->tmp = NULL;
	o->f = stdout;
	if (!path || strcmp(path, "-") == 0) {
		o->path = NULL;
		return true;
	}
	/* a device or a FIFO (-o /dev/null) is written in place: renaming a
	 * file over it would replace it */
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		if (!(o->f = fopen(path, "w"))) {
			diag_error((Loc){ path, 0, 0 }, "cannot open output: %s", strerror(errno));
			return false;
		}
		return true;
	}
	o->tmp = xcalloc(strlen(path) + 16, 1);
	sprintf(o->tmp, "%s.tmpXXXXXX", path);
	fd = mkstemp(o->tmp);
	if (fd < 0 || !(o->f = fdopen(fd, "w"))) {
		diag_error((Loc){ path, 0, 0 }, "cannot create output: %s", strerror(errno));
		if (fd >= 0)
			close(fd), unlink(o->tmp);
		free(o->tmp);
		o->tmp = NULL;
		return false;
	}
	{ /* mkstemp makes 0600; give the mode a plain fopen would */
		mode_t mask = umask(0);
		umask(mask);
		fchmod(fd, 0666 & ~mask);
	}
	return true;
}

bool
out_commit(OutFile *o)
{
	const char *name = o->path ? o->path : "<stdout>";
	bool ok = fflush(o->f) == 0 && !ferror(o->f);
	int err = errno;

	if (o->path) {
		ok = (fclose(o->f) == 0) && ok;
		err = ok ? 0 : errno;
		if (ok && o->tmp && rename(o->tmp, o->path) != 0) {
			err = errno;
			ok = false;
		}
		if (!ok && o->tmp)
			unlink(o->tmp);
		free(o->tmp);
		o->tmp = NULL;
	}
	if (!ok)
		diag_error((Loc){ name, 0, 0 }, "write failed: %s", strerror(err ? err : EIO));
	return ok;
}

void
out_abort(OutFile *o)
{
	if (o->path) {
		fclose(o->f);
		if (o->tmp)
			unlink(o->tmp);
		free(o->tmp);
		o->tmp = NULL;
	}
}
