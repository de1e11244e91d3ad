/* diag.c -- counted diagnostics in the GNU "file:line:col: error: msg" form. */
#include "util/diag.h"

#include <stdarg.h>
#include <stdlib.h>

FILE *diag_out;
const char *progname = "oraclec";
int diag_quiet;
int diag_verbose;

/* Past this many errors the rest are counted but not printed, so a binary
 * file fed to the parser cannot flood the terminal. */
enum { MAX_SHOWN = 50 };

static int nerrors;

static void
vreport(Loc loc, const char *kind, const char *fmt, va_list ap)
{
	FILE *f = diag_out ? diag_out : stderr;

	if (!loc.file)
		fprintf(f, "%s: %s: ", progname, kind);
	else if (loc.line <= 0)
		fprintf(f, "%s: %s: ", loc.file, kind);
	else
		fprintf(f, "%s:%d:%d: %s: ", loc.file, loc.line, loc.col, kind);
	vfprintf(f, fmt, ap);
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
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
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
