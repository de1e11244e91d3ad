/* output.c -- temp file + rename for -o and -MF; checked flush for stdout. */
#include "util/output.h"
#include "util/arena.h"
#include "util/diag.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The temporary file's name pattern, in the target's directory so that
 * rename is atomic, short whatever the target's name (a name of NAME_MAX
 * bytes plus a suffix would be too long). */
static const char tmp_pattern[] = ".oraclec.tmpXXXXXX";

/* The temporary files being written, removed by a fatal signal (SIGTERM,
 * SIGINT, SIGHUP, SIGQUIT) before it ends the process as it would have:
 * a report cut short leaves no .oraclec.tmp file beside its target.  A
 * process's signals are its own, so this list is too; it changes only
 * with the signals blocked, and the handler calls only unlink and raise,
 * which are async-signal-safe. */
enum { LIVE_TMPS = 8 };
static char *live[LIVE_TMPS];
static const int fatal[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT };

static void
on_fatal(int sig)
{
	for (int i = 0; i < LIVE_TMPS; i++)
		if (live[i])
			unlink(live[i]);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Adds t to the live list (remove: takes it off), the signals blocked. */
static void
live_tmp(char *t, bool add)
{
	static bool handled;
	sigset_t all, old;

	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	if (!handled) {
		struct sigaction sa = { .sa_handler = on_fatal };
		sigemptyset(&sa.sa_mask);
		for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++) {
			struct sigaction was;
			/* a signal the caller ignores (nohup) stays ignored */
			if (sigaction(fatal[i], NULL, &was) == 0 && was.sa_handler != SIG_IGN)
				sigaction(fatal[i], &sa, NULL);
		}
		handled = true;
	}
	for (int i = 0; i < LIVE_TMPS; i++)
		if (add ? !live[i] : live[i] == t) {
			live[i] = add ? t : NULL;
			break;
		}
	sigprocmask(SIG_SETMASK, &old, NULL);
}

bool
out_in_place(const char *path)
{
	struct stat st;

	return !path || strcmp(path, "-") == 0 || (stat(path, &st) == 0 && !S_ISREG(st.st_mode));
}

/* "dir/name" -> "dir/.oraclec.tmpXXXXXX", malloc'd. */
static char *
tmp_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	size_t dir = slash ? (size_t)(slash - path) + 1 : 0;
	char *t = xcalloc(dir + sizeof tmp_pattern, 1);

	memcpy(t, path, dir);
	memcpy(t + dir, tmp_pattern, sizeof tmp_pattern);
	return t;
}

/* A device or a FIFO (-o /dev/null) is written in place: renaming a file
 * over it would replace it. */
static bool
open_in_place(OutFile *o, const char *path)
{
	if (!(o->f = fopen(path, "w"))) {
		diag_error((Loc){ path, 0, 0 }, "cannot open output: %s", strerror(errno));
		return false;
	}
	return true;
}

bool
out_open(OutFile *o, const char *path)
{
	struct stat st;
	bool exists;
	mode_t mode;
	int fd;

	*o = (OutFile){ path, NULL, stdout };
	if (!path || strcmp(path, "-") == 0) {
		o->path = NULL;
		return true;
	}
	exists = stat(path, &st) == 0;
	if (exists && S_ISDIR(st.st_mode)) {
		diag_error((Loc){ path, 0, 0 }, "cannot open output: %s", strerror(EISDIR));
		return false;
	}
	if (exists && !S_ISREG(st.st_mode))
		return open_in_place(o, path);
	o->tmp = tmp_name(path);
	live_tmp(o->tmp, true);
	fd = mkstemp(o->tmp);
	if (fd < 0 || !(o->f = fdopen(fd, "w"))) {
		diag_error((Loc){ path, 0, 0 }, "cannot create output: %s", strerror(errno));
		if (fd >= 0)
			close(fd), unlink(o->tmp);
		live_tmp(o->tmp, false);
		free(o->tmp);
		*o = (OutFile){ 0 };
		return false;
	}
	/* mkstemp makes 0600: a file replaced keeps its permissions, a new
	 * one gets those a plain fopen would give (umask applied) */
	if (exists) {
		mode = st.st_mode & 0777;
	} else {
		mode = umask(0);
		umask(mode);
		mode = 0666 & ~mode;
	}
	fchmod(fd, mode);
	return true;
}

/* Flushes and closes o, checking for write errors; false after reporting.
 * The temporary file stays, to be renamed or removed. */
static bool
finish(OutFile *o)
{
	bool ok;
	int err;

	errno = 0;
	ok = fflush(o->f) == 0 && !ferror(o->f);
	err = errno;
	if (o->path) {
		if (fclose(o->f) != 0 && ok) {
			ok = false;
			err = errno;
		}
		o->f = NULL;
	}
	if (!ok)
		diag_error((Loc){ o->path ? o->path : "<stdout>", 0, 0 }, "write failed: %s",
			   strerror(err ? err : EIO));
	return ok;
}

/* Renames o's temporary file into place; false after reporting. */
static bool
put_in_place(OutFile *o)
{
	bool ok = true;

	if (o->tmp && rename(o->tmp, o->path) != 0) {
		diag_error((Loc){ o->path, 0, 0 }, "write failed: %s", strerror(errno));
		unlink(o->tmp);
		ok = false;
	}
	if (o->tmp)
		live_tmp(o->tmp, false);
	free(o->tmp);
	o->tmp = NULL;
	return ok;
}

bool
out_commit(OutFile *o)
{
	return out_commit_all(o, 1);
}

/* Temporary files are finished first, what is written in place (stdout,
 * devices) last, so that a full disk under a temporary file keeps a
 * report off stdout as far as stdio's buffer allows. */
bool
out_commit_all(OutFile *o, int n)
{
	bool ok = true;

	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < n && ok; i++)
			if ((pass == 0) == (o[i].tmp != NULL))
				ok = finish(&o[i]);
	for (int i = 0; i < n; i++) {
		if (!ok)
			out_abort(&o[i]);
		else if (!put_in_place(&o[i]))
			ok = false;
	}
	return ok;
}

void
out_abort(OutFile *o)
{
	if (o->path && o->f)
		fclose(o->f);
	o->f = NULL;
	if (o->tmp) {
		unlink(o->tmp);
		live_tmp(o->tmp, false);
	}
	free(o->tmp);
	o->tmp = NULL;
}
