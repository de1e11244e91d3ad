/* diag.c -- counted diagnostics in the GNU "file:line:col: error: msg" form. */
#include "util/diag.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

FILE *diag_out;
const char *progname = "oraclec";
int diag_quiet;
int diag_verbose;

/* Past this many errors the rest are counted but not printed, so a binary
 * file fed to the parser cannot flood the terminal. */
enum { MAX_SHOWN = 50 };

static int nerrors;

/* s with every control byte (C0 and DEL) written visibly: \n \r \t as
 * those two characters, the others as \xNN.  File names and names from
 * inputs reach messages, and a message is one line that cannot move the
 * terminal's cursor or start an escape sequence. */
static void
put_clean(FILE *f, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p >= 0x20 && *p != 0x7f)
			fputc(*p, f);
		else if (*p == '\n' || *p == '\r' || *p == '\t')
			fprintf(f, "\\%c", *p == '\n' ? 'n' : *p == '\r' ? 'r' : 't');
		else
			fprintf(f, "\\x%02x", *p);
	}
}

/* The message, formatted, through put_clean. */
static void
vput_clean(FILE *f, const char *fmt, va_list ap)
{
	char small[512], *buf = small;
	va_list again;
	int n;

	va_copy(again, ap);
	n = vsnprintf(small, sizeof small, fmt, ap);
	if (n >= (int)sizeof small && (buf = malloc((size_t)n + 1)) != NULL)
		vsnprintf(buf, (size_t)n + 1, fmt, again);
	va_end(again);
	if (n < 0)
		return;
	put_clean(f, buf ? buf : small);
	if (buf != small)
		free(buf);
}

static void
vreport(Loc loc, const char *kind, const char *fmt, va_list ap)
{
	FILE *f = diag_out ? diag_out : stderr;

	if (!loc.file) {
		fprintf(f, "%s: %s: ", progname, kind);
	} else {
		put_clean(f, loc.file);
		if (loc.line <= 0)
			fprintf(f, ": %s: ", kind);
		else
			fprintf(f, ":%d:%d: %s: ", loc.line, loc.col, kind);
	}
	vput_clean(f, fmt, ap);
	fputc('\n', f);
}

void
diag_error(Loc loc, const char *fmt, ...)
{
	va_list ap;

	if (++nerrors > MAX_SHOWN) {
		if (nerrors == MAX_SHOWN + 1) {
			FILE *f = diag_out ? diag_out : stderr;
			fprintf(f, "%s: too many errors, the rest are not shown\n",
				progname);
		}
		return;
	}
	va_start(ap, fmt);
	vreport(loc, "error", fmt, ap);
	va_end(ap);
}

void
diag_warn(Loc loc, const char *fmt, ...)
{
	va_list ap;

	if (diag_quiet)
		return;
	va_start(ap, fmt);
	vreport(loc, "warning", fmt, ap);
	va_end(ap);
}

void
diag_note(Loc loc, const char *fmt, ...)
{
	va_list ap;

	if (diag_quiet || nerrors > MAX_SHOWN)
		return;
	va_start(ap, fmt);
	vreport(loc, "note", fmt, ap);
	va_end(ap);
}

void
diag_verbose_note(const char *fmt, ...)
{
	FILE *f = diag_out ? diag_out : stderr;
	va_list ap;

	if (!diag_verbose || diag_quiet)
		return;
	fprintf(f, "%s: ", progname);
	va_start(ap, fmt);
	vput_clean(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
}

void
diag_progress(const char *fmt, ...)
{
	FILE *f = diag_out ? diag_out : stderr;
	va_list ap;

	if (diag_quiet)
		return;
	fprintf(f, "%s: ", progname);
	va_start(ap, fmt);
	vput_clean(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	fflush(f);
}

int
diag_errors(void)
{
	return nerrors;
}

void
diag_reset(void)
{
	nerrors = 0;
}

void
die(const char *fmt, ...)
{
	va_list ap;
	FILE *f = diag_out ? diag_out : stderr;

	fprintf(f, "%s: internal error: ", progname);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	abort();
}
