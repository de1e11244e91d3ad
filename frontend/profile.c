/* profile.c -- --profile: measured per-layer times from a CSV file, or a
 * profiler's trace (a JSON object: trace.c), told apart by content.
 *
 *   layer,forward_s,backward_s
 *   conv1,0.000123,0.000251
 *
 * One row per layer: its name in the model (as reports and --layers print
 * it), then the forward and the backward seconds per sample it took on the
 * GPU it was profiled on.  A name may be double-quoted (with "" for a
 * quote), for names that hold commas.  Blank lines are skipped.  Every
 * error names its line; a file with any error changes nothing, so a
 * report never mixes a half-read profile with estimates.  The times become
 * one Timing per row (Graph.timing), which model/compute.c uses in place
 * of the roofline for those layers. */
#include "frontend/frontend.h"
#include "util/csv.h"
#include "util/map.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char header[] = "layer,forward_s,backward_s";
static const char *const column[3] = { "layer", "forward_s", "backward_s" };

typedef struct Csv {
	const char *path;
	Arena *a;
	int line;
} Csv;

static Loc
at(const Csv *c, int col)
{
	return (Loc){ c->path, c->line, col };
}

/* A seconds-per-sample column: a number from 0 to MAX_SAMPLE_SECONDS. */
static bool
seconds(Csv *c, const char *text, int col, const char *name, double *v)
{
	const char *s = text;

	while (*s == ' ' || *s == '\t')
		s++;
	if (!*s) {
		diag_error(at(c, col), "missing %s", name);
		return false;
	}
	if (!csv_real(s, v)) {
		char *end;
		double x = strtod(s, &end);
		diag_error(at(c, col), end > s && !isfinite(x) ? "%s '%.32s' is not a finite number"
			   : "%s '%.32s' is not a number (seconds per sample)", name, s);
		return false;
	}
	if (*v < 0) {
		diag_error(at(c, col), "%s %.32s is negative", name, s);
		return false;
	}
	if (*v > MAX_SAMPLE_SECONDS) {
		diag_error(at(c, col), "%s %.32s is more than 1e6 seconds per sample", name, s);
		return false;
	}
	return true;
}

/* One data row into *t; false after reporting. */
static bool
row(Csv *c, const char *line, const Map *layers, Map *seen, const Graph *g, Timing *t)
{
	char f[3][1024];
	int col[3];
	const char *p = line;
	double v[2];
	intptr_t l, prev;
	bool more = true;

	for (int i = 0; i < 3; i++) {
		if (!more) {
			diag_error(at(c, (int)strlen(line) + 1), "missing column '%s'", column[i]);
			return false;
		}
		if (!csv_field(c->path, c->line, line, &p, f[i], sizeof f[i], &col[i], &more))
			return false;
	}
	if (more) {
		diag_error(at(c, (int)(p - line) + 1), "more than 3 columns (%s)", header);
		return false;
	}
	if (!(l = (intptr_t)map_get(layers, f[0]))) {
		diag_error(at(c, col[0]), "unknown layer '%.64s' (model '%s' has no layer of that "
					  "name; --layers lists them)", f[0], g->name);
		return false;
	}
	if ((prev = (intptr_t)map_get(seen, f[0]))) {
		diag_error(at(c, col[0]), "layer '%.64s' is already timed on line %d", f[0],
			   (int)prev);
		return false;
	}
	if (!seconds(c, f[1], col[1], column[1], &v[0]) ||
	    !seconds(c, f[2], col[2], column[2], &v[1]))
		return false;
	map_put(seen, g->layer[l - 1].name, (void *)(intptr_t)c->line);
	*t = (Timing){ (int)l - 1, (int)l - 1, v[0], v[1], true, at(c, 1) };
	return true;
}

bool
profile_load(const char *path, Graph *g, FileList *files)
{
	size_t len;
	char *text = file_read(path, &len, MAX_TRACE_BYTES, LOC_NONE), *p, *end;
	Csv c = { path, g->arena, 0 };
	Map layers, seen;
	Timing *t = NULL;
	int nt = 0, cap = 0, errors = diag_errors();

	if (!text)
		return false;
	files_add(files, path);
	map_init(&layers, g->arena);
	map_init(&seen, g->arena);
	for (int i = 0; i < g->nlayer; i++)
		map_put(&layers, g->layer[i].name, (void *)(intptr_t)(i + 1));
	p = text, end = text + len;
	if (len >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0)
		p += 3; /* a UTF-8 byte-order mark, as spreadsheets write */
	if (strchr("{[", p[strspn(p, " \t\r\n")]) && p[strspn(p, " \t\r\n")]) {
		bool ok = trace_read(path, text, len, g); /* JSON: a trace */
		free(text);
		return ok;
	}
	if (len > MAX_ODL_BYTES) {
		diag_error((Loc){ path, 0, 0 }, "cannot read file: file is larger than the limit "
			   "of %zu bytes", MAX_ODL_BYTES);
		free(text);
		return false;
	}
	while (p < end) {
		char *nl = memchr(p, '\n', end - p), *eol = nl ? nl : end, *z;
		c.line++;
		if (eol > p && eol[-1] == '\r')
			eol[-1] = '\0';
		*eol = '\0';
		if ((z = memchr(p, '\0', eol - p)) && z + 1 < eol) {
			diag_error(at(&c, (int)(z - p) + 1), "a NUL byte (not a text file?)");
			break;
		}
		if (c.line == 1) {
			if (strcmp(p, header) != 0)
				diag_error(at(&c, 1), "expected the header '%s'", header);
		} else if (p[strspn(p, " \t")]) {
			if (nt == cap) {
				cap = cap ? 2 * cap : 16;
				t = xrealloc(t, cap * sizeof *t);
			}
			if (row(&c, p, &layers, &seen, g, &t[nt]))
				nt++;
		}
		if (diag_errors() > errors && c.line == 1)
			break; /* not a profile: do not report every line */
		p = nl ? nl + 1 : end;
	}
	if (c.line == 0)
		diag_error((Loc){ path, 1, 1 }, "expected the header '%s'", header);
	free(text);
	if (diag_errors() > errors) {
		free(t);
		return false;
	}
	if (nt == 0)
		diag_warn((Loc){ path, 1, 1 }, "no layer times after the header");
	g->timing = arena_grow(g->arena, g->timing, g->ntiming, g->ntiming + nt, sizeof *t);
	if (nt)
		memcpy(g->timing + g->ntiming, t, nt * sizeof *t);
	g->ntiming += nt;
	free(t);
	return true;
}
