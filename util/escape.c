/* escape.c -- one escaper per output language (escape.h). */
#include "util/escape.h"
#include "util/arena.h"

#include <stdlib.h>
#include <string.h>

/* The UTF-8 sequence at p (Unicode's table 3-7: shortest form, no
 * surrogates, at most U+10FFFF): its length (1 to 4) with its code point
 * in *cp, or minus the length of its maximal bad subpart (the lead byte
 * and the continuation bytes that could still have made a sequence), which
 * is what one U+FFFD replaces (as Python's and the WHATWG decoders do). */
static int
utf8_seq(const unsigned char *p, unsigned *cp)
{
	unsigned c = p[0], lo = 0x80, hi = 0xbf;
	int n;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, c &= 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, c &= 0x0f, lo = c == 0 ? 0xa0 : 0x80, hi = c == 0xd ? 0x9f : 0xbf;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, c &= 0x07, lo = c == 0 ? 0x90 : 0x80, hi = c == 4 ? 0x8f : 0xbf;
	else
		return -1;
	for (int i = 1; i < n; i++, lo = 0x80, hi = 0xbf) {
		if (p[i] < lo || p[i] > hi) /* also stops at the NUL */
			return -i;
		c = c << 6 | (p[i] & 0x3f);
	}
	*cp = c;
	return n;
}

bool
utf8_valid(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	unsigned cp;
	int n;

	for (; *p; p += n)
		if ((n = utf8_seq(p, &cp)) < 0)
			return false;
	return true;
}

char *
utf8_fix(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	char *out = xcalloc(3 * strlen(s) + 1, 1), *q = out;
	unsigned cp;
	int n;

	for (; *p; p += n) {
		if ((n = utf8_seq(p, &cp)) > 0) {
			memcpy(q, p, (size_t)n);
			q += n;
		} else {
			memcpy(q, "\xef\xbf\xbd", 3); /* U+FFFD */
			q += 3;
			n = -n;
		}
	}
	*q = '\0';
	return out;
}

/* Where esc_text writes: a file, a buffer, or nowhere (counting). */
typedef struct Sink {
	FILE *f;
	char *buf;
	size_t n;
} Sink;

static void
put(Sink *k, const char *s, size_t n)
{
	if (k->f)
		fwrite(s, 1, n, k->f);
	if (k->buf)
		memcpy(k->buf + k->n, s, n);
	k->n += n;
}

static void
hex(Sink *k, unsigned char c)
{
	char b[5];

	snprintf(b, sizeof b, "\\x%02x", c);
	put(k, b, 4);
}

static size_t
text(Sink *k, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	unsigned cp;
	int n;

	for (; *p; p += n) {
		n = utf8_seq(p, &cp);
		if (n == 1 && cp == '\\')
			put(k, "\\\\", 2);
		else if (n == 1 && cp == '\n')
			put(k, "\\n", 2);
		else if (n == 1 && cp == '\r')
			put(k, "\\r", 2);
		else if (n == 1 && cp == '\t')
			put(k, "\\t", 2);
		else if (n > 0 && !(cp < 0x20 || (cp >= 0x7f && cp <= 0x9f)))
			put(k, (const char *)p, (size_t)n);
		else
			for (int i = 0; i < abs(n); i++)
				hex(k, p[i]);
		n = abs(n);
	}
	return k->n;
}

size_t
esc_text(FILE *f, const char *s)
{
	return text(&(Sink){ .f = f }, s);
}

void
esc_text_pad(FILE *f, const char *s, size_t width)
{
	for (size_t n = esc_text(f, s); n < width; n++)
		fputc(' ', f);
}

char *
esc_text_dup(const char *s)
{
	Sink k = { .buf = xcalloc(esc_text(NULL, s) + 1, 1) };

	text(&k, s);
	return k.buf;
}

char *
esc_text_cut(const char *s, size_t len, size_t max)
{
	size_t n = len < max ? len : max;
	char *head = xcalloc(n + 1, 1), *out, *t;

	memcpy(head, s, n);
	t = esc_text_dup(head);
	free(head);
	if (n == len)
		return t;
	out = xcalloc(strlen(t) + 4, 1);
	memcpy(out, t, strlen(t));
	memcpy(out + strlen(t), "...", 3);
	free(t);
	return out;
}

void
esc_xml(FILE *f, const char *s)
{
	char *t = esc_text_dup(s);

	for (const char *p = t; *p; p++)
		switch (*p) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default: fputc(*p, f);
		}
	free(t);
}

void
esc_shell(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++)
		if (*s == '\'')
			fputs("'\\''", f);
		else
			fputc(*s, f);
	fputc('\'', f);
}

static void
csv_field(FILE *f, const char *s, bool quote)
{
	if (!quote && !strpbrk(s, ",\"\r\n")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

void
esc_csv(FILE *f, const char *s)
{
	csv_field(f, s, false);
}

void
esc_csv_quoted(FILE *f, const char *s)
{
	csv_field(f, s, true);
}

const char *
make_bad(const char *s)
{
	for (; *s; s++)
		if ((*s > 0 && *s < 0x20) || *s == 0x7f || *s == ';' ||
		    (*s == '\\' && !s[1]))
			return s;
	return NULL;
}

/* GNU make expands a name holding a wildcard, or starting with '~', as a
 * glob (where a backslash quotes the next character). */
static bool
make_glob(const char *s)
{
	return *s == '~' || strpbrk(s, "*?[");
}

/* A byte make reads specially, so quoted with a backslash: a space,
 * '#', ':', in a target '%' (a pattern), in a prerequisite '|' (order-only
 * prerequisites follow).  make halves a backslash run before one, so such
 * a run is written doubled. */
static bool
make_special(char c, bool target)
{
	return c && (strchr(" #:", c) || (c == '%' && target) || (c == '|' && !target));
}

/* How GNU make reads a rule's words: a backslash run is literal except
 * before a special byte, where it is halved and an odd one quotes that
 * byte; '$' starts a variable; a '=' makes a variable assignment, even
 * quoted, so it is written as an expansion that yields it; a wildcard
 * is quoted for glob as a bracket expression (make's own \* is unreliable). */
void
esc_make(FILE *f, const char *s, bool target)
{
	bool glob = make_glob(s);

	for (const char *p = s; *p; p++) {
		if (*p == '\\') {
			size_t run = strspn(p, "\\");
			size_t n = run * (glob ? 2 : 1) * (make_special(p[run], target) ? 2 : 1);
			for (size_t i = 0; i < n; i++)
				fputc('\\', f);
			p += run - 1;
		} else if (*p == '$') {
			fputs("$$", f);
		} else if (*p == '=') {
			fputs("$(if ,,=)", f);
		} else if (glob && (strchr("*?[", *p) || (*p == '~' && p == s))) {
			fprintf(f, "[%c]", *p);
		} else {
			if (make_special(*p, target))
				fputc('\\', f);
			fputc(*p, f);
		}
	}
}

void
esc_odl_string(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', f);
	for (; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", f);
		else if (*p == '\r')
			fputs("\\r", f);
		else if (*p == '\t')
			fputs("\\t", f);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\x%02x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

void
esc_odl_ident(FILE *f, const char *s)
{
	static const char *const keyword[] = { "model", "block", "include", "input", "output",
					       "dataset", "return", "repeat", "as", "true",
					       "false", "system", "level", "if", "else" };
	bool kw = false;

	if (!*s || (*s >= '0' && *s <= '9'))
		fputc('_', f);
	for (const char *p = s; *p; p++)
		fputc((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			      (*p >= '0' && *p <= '9') || *p == '_'
		      ? *p : '_', f);
	for (size_t i = 0; i < sizeof keyword / sizeof keyword[0]; i++)
		kw |= strcmp(s, keyword[i]) == 0;
	if (kw)
		fputc('_', f);
}
