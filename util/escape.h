/* escape.h -- one escaper per output language, for every string that came
 * from an input (file, graph, node, layer, module and system names, ODL
 * strings).  A backend never formats such a string with a bare %s: it
 * writes it through the escaper of the file it is writing, so no name can
 * end a comment line, open a shell command, split a CSV row or a make
 * rule, or make JSON drop a key.  docs/limits.md, "Names in generated
 * files", says what each one writes.
 *
 * No output is Python source (the PyTorch plan is JSON), so there is no
 * Python escaper. */
#ifndef ORACLEC_UTIL_ESCAPE_H
#define ORACLEC_UTIL_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Text for a terminal, a shell comment or an ODL comment: printable ASCII
 * and valid UTF-8 as they are, except that a backslash is written `\\`;
 * \n \r \t as those two characters; any other control byte (C0, DEL),
 * C1 control (U+0080..U+009F) or byte of invalid UTF-8 as \xNN.  The
 * result holds no control character, so it can never end a line.
 * Returns the bytes written; with f NULL it only counts them. */
size_t esc_text(FILE *f, const char *s);
/* The same, left-aligned in a column of `width` bytes, as "%-*s". */
void esc_text_pad(FILE *f, const char *s, size_t width);
/* The same, into a malloc'd string (for diagnostics). */
char *esc_text_dup(const char *s);
/* The first len bytes of s for a message, escaped so, cut after `max` of
 * them with "..." after it (malloc'd): a name from the command line or a
 * file can neither hold a control byte nor fill a screen.  A cut through a
 * UTF-8 sequence shows its bytes as \xNN. */
char *esc_text_cut(const char *s, size_t len, size_t max);
/* The bytes of a name a diagnostic quotes before cutting it (docs/limits.md,
 * "Limits on files and syntax"). */
enum { NAME_SHOWN = 64 };

/* A POSIX shell word: single-quoted, each ' as '\''. */
void esc_shell(FILE *f, const char *s);

/* A CSV field (RFC 4180): in double quotes, inner quotes doubled, when it
 * holds a comma, a quote, CR or LF; else as it is.  Other bytes are kept,
 * so a reader gets the name back exactly. */
void esc_csv(FILE *f, const char *s);
/* The same, always quoted (fields that the CSV formats always quote). */
void esc_csv_quoted(FILE *f, const char *s);

/* A target or prerequisite of a GNU make rule.  make_bad(s) is the first
 * byte that make cannot read back in a file name, or NULL: a control
 * character (a quoted tab is a space in a target), a ';' (it starts a
 * recipe whatever precedes it), a final backslash (make keeps a backslash
 * pair at the end of a line).  esc_make() must only be given names without one.  target: the
 * name is a rule's target, where '%' would make a pattern rule. */
const char *make_bad(const char *s);
void esc_make(FILE *f, const char *s, bool target);

/* An ODL string literal, quotes included: \" \\ \n \r \t, other control
 * bytes as \xNN, everything else as it is (grammar/lex.l reads it back). */
void esc_odl_string(FILE *f, const char *s);
/* An ODL identifier for s: each byte outside [A-Za-z0-9_] made '_', a '_'
 * before a leading digit, after a keyword, or for the empty string. */
void esc_odl_ident(FILE *f, const char *s);

/* XML (and HTML) character data or a quoted attribute value: the text of
 * esc_text (no control byte, valid UTF-8) with & < > " ' as entities. */
void esc_xml(FILE *f, const char *s);

/* UTF-8 (RFC 3629: shortest form, no surrogates, at most U+10FFFF). */
bool utf8_valid(const char *s);
/* A malloc'd copy of s with each maximal bad subpart (a byte that cannot
 * start a sequence, or a sequence cut short) replaced by one U+FFFD, as
 * Python's bytes.decode(errors="replace") does; JSON must be UTF-8. */
char *utf8_fix(const char *s);

#endif
