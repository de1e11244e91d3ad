/* diag.h -- diagnostics: "file:line:col: error: msg", counted, never fatal.
 *
 * Input errors are counted and reported in the GNU format; each phase ends
 * with `if (diag_errors()) ...`.  die() is for internal errors only. */
#ifndef ORACLEC_UTIL_DIAG_H
#define ORACLEC_UTIL_DIAG_H

#include <stdio.h>

/* A place in an input file.  line == 0: the file as a whole (ONNX);
 * file == NULL: no file at all (command line). */
typedef struct Loc {
	const char *file;
	int line, col;
} Loc;

#define LOC_NONE ((Loc){ 0, 0, 0 })

extern FILE *diag_out;     /* stderr unless a test points it elsewhere */
extern const char *progname;
extern int diag_quiet;     /* -q: drop warnings and notes */
extern int diag_verbose;   /* -v: say what is read, run and written */

void diag_error(Loc loc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void diag_warn(Loc loc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void diag_note(Loc loc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* With -v (and without -q): "oraclec: msg" on the diagnostics stream. */
void diag_verbose_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Without -q: "oraclec: msg" on the diagnostics stream, flushed; for work
 * long enough that a user wants to know it goes on. */
void diag_progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int diag_errors(void);
void diag_reset(void);

_Noreturn void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
