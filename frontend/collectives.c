/* collectives.c -- a table of measured collectives: the output of
 * nccl-tests (all_reduce_perf, all_gather_perf, reduce_scatter_perf,
 * alltoall_perf, sendrecv_perf, broadcast_perf), as a system's
 * `collectives` key names it (docs/systems.md, "Measured collectives").
 *
 *   # Collective test starting: all_reduce_perf
 *   # nThread 1 nGpus 1 minBytes 8 maxBytes 134217728 step: 2(factor) ...
 *   #  Rank  0 Group  0 Pid 4242 on node01 device  0 [0x07] NVIDIA A100
 *   ...
 *   #       size   count    type   redop    root     time   algbw   busbw #wrong ...
 *          8       2   float     sum      -1    22.58    0.00    0.00      0 ...
 *
 * A run begins at `# Collective test starting` or `# nThread` (nccl-tests
 * prints both, src/common.cu and src/util.cu); its collective is the one
 * that line names, else a `# collective NAME` comment, else the file's
 * name (all_reduce_perf.txt); its ranks are its `#  Rank N` lines, or a
 * `# nranks N` comment where they were cut.  A row is a line whose first
 * field is a size; its time is the in-place one where measured, else the
 * out-of-place one, found by the column header (`time` twice) or, without
 * one, as the eighth and fourth fields from the end.  Other lines (NCCL's
 * INFO lines, mpirun's) are skipped.  The first error, alone, names its
 * file, line and column (a file with no run: the system's key); a file
 * with any error gives no table. */
#include "frontend/frontend.h"
#include "util/csv.h"
#include "util/escape.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Bounds (docs/limits.md): runs, rows, a size, a time, ranks, files. */
enum { MAX_COLL_RUNS = 4096, MAX_COLL_ROWS = 1 << 20, MAX_COLL_FILES = 64, MAX_FIELDS = 64 };
#define MAX_COLL_BYTES 1125899906842624.0 /* 2^50 */
#define MIN_COLL_SECONDS 1e-9
#define MAX_COLL_SECONDS 1e6
#define MAX_COLL_RANKS 1073741824.0 /* 2^30 */

typedef struct Row {
	double bytes, seconds;
	int line, col;         /* where its size is */
} Row;

typedef struct Run {
	int coll;              /* Coll, -1 not yet known */
	int64_t ranks;         /* from its Rank lines, or nranks */
	bool nranks;           /* a `# nranks` comment gave them */
	bool rank_lines;       /* its `#  Rank` lines began */
	int line;
	int n, cap;
	Row *row;
} Run;

typedef struct Reader {
	const char *path;
	int line;
	int file_coll;         /* the collective the file's name says, -1 none */
	int t_oop, t_ip;       /* the header's time columns, -1 unknown */
	Run *run;
	int nrun, cap;
	int64_t rows;
} Reader;

static Loc
at(const Reader *r, int col)
{
	return (Loc){ r->path, r->line, col };
}

/* Which collective nccl-tests' program or test name s names (a path, a
 * "_perf" suffix and a "_mpi" one allowed), -1 for none. */
static int
coll_named(const char *s, size_t n, bool within)
{
	for (int c = 0; c < COLL_COUNT; c++) {
		size_t k = strlen(coll_test_name[c]);
		for (size_t i = 0; i + k <= n; i++) {
			if (strncmp(s + i, coll_test_name[c], k) != 0)
				continue;
			if (within)
				return c;
			/* the whole word: after a '/' or the start, before
			 * "_perf", the end or a blank */
			if ((i == 0 || s[i - 1] == '/') &&
			    (i + k == n || s[i + k] == '_' || isspace((unsigned char)s[i + k])))
				return c;
		}
	}
	return -1;
}

/* A new run, unless the current one has neither rows nor Rank lines yet
 * (`# Collective test starting` then `# nThread`: one run), and, where
 * `named`, no collective either. */
static void
run_begin(Reader *r, bool named)
{
	const Run *last = r->nrun ? &r->run[r->nrun - 1] : NULL;

	if (last && last->n == 0 && !last->rank_lines && (!named || last->coll < 0))
		return;
	if (r->nrun == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 8;
		r->run = xrealloc(r->run, (size_t)r->cap * sizeof *r->run);
	}
	r->run[r->nrun++] = (Run){ .coll = -1, .line = r->line };
	r->t_oop = r->t_ip = -1;
}

static Run *
current(Reader *r)
{
	if (!r->nrun)
		run_begin(r, false);
	return &r->run[r->nrun - 1];
}

/* The fields of line s (at most MAX_FIELDS), each with its column. */
static int
fields(char *s, char **f, int *col)
{
	int n = 0;
	char *p = s;

	while (n < MAX_FIELDS) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			break;
		f[n] = p, col[n] = (int)(p - s) + 1, n++;
		while (*p && *p != ' ' && *p != '\t')
			p++;
		if (*p)
			*p++ = '\0';
	}
	return n;
}

static void
bad(const Reader *r, int col, const char *what, const char *s, const char *why)
{
	char *t = esc_text_cut(s, strlen(s), NAME_SHOWN);

	diag_error(at(r, col), "%s '%s' %s", what, t, why);
	free(t);
}

/* A comment: a run's start, its collective, its ranks, the header. */
static void
comment(Reader *r, char *line)
{
	char *f[MAX_FIELDS];
	int col[MAX_FIELDS], n = fields(line + 1, f, col);

	if (n >= 4 && strcmp(f[0], "Collective") == 0 && strcmp(f[1], "test") == 0 &&
	    strcmp(f[2], "starting:") == 0) {
		run_begin(r, true);
		current(r)->coll = coll_named(f[3], strlen(f[3]), false);
		if (current(r)->coll < 0)
			bad(r, col[3] + 1, "collective", f[3], "is not one oraclec reads "
			    "(all_reduce, all_gather, reduce_scatter, broadcast, alltoall, "
			    "sendrecv)");
	} else if (n >= 1 && strcmp(f[0], "nThread") == 0) {
		run_begin(r, false);
	} else if (n >= 2 && strcmp(f[0], "collective") == 0) {
		int c = coll_named(f[1], strlen(f[1]), false);
		if (c < 0)
			bad(r, col[1] + 1, "collective", f[1], "is not one oraclec reads "
			    "(all_reduce, all_gather, reduce_scatter, broadcast, alltoall, "
			    "sendrecv)");
		else
			current(r)->coll = c;
	} else if (n >= 2 && (strcmp(f[0], "nranks") == 0 || strcmp(f[0], "Rank") == 0)) {
		double v;
		Run *run = current(r);
		if (!csv_decimal(f[1], &v) || v != floor(v) || v < (f[0][0] == 'n' ? 1 : 0) ||
		    v >= MAX_COLL_RANKS) {
			bad(r, col[1] + 1, f[0][0] == 'n' ? "nranks" : "rank", f[1],
			    "is not a whole number from 1 to 2^30");
			return;
		}
		if (f[0][0] == 'n')
			run->ranks = (int64_t)v, run->nranks = true;
		else if (!run->nranks && (int64_t)v + 1 > run->ranks)
			run->ranks = (int64_t)v + 1;
		run->rank_lines |= f[0][0] == 'R';
	} else if (n >= 1 && strcmp(f[0], "size") == 0) {
		r->t_oop = r->t_ip = -1;
		for (int i = 1; i < n; i++)
			if (strcmp(f[i], "time") == 0) {
				if (r->t_oop < 0)
					r->t_oop = i;
				else if (r->t_ip < 0)
					r->t_ip = i;
			}
	}
}

/* A time in microseconds, or NAN where the field is "N/A"; false after
 * an error. */
static bool
micros(const Reader *r, const char *s, int col, double *us)
{
	*us = NAN;
	if (strcmp(s, "N/A") == 0)
		return true;
	if (!csv_decimal(s, us) || !(*us * 1e-6 >= MIN_COLL_SECONDS) ||
	    !(*us * 1e-6 <= MAX_COLL_SECONDS)) {
		bad(r, col, "time", s, "is not a time from 1e-3 to 1e12 microseconds");
		return false;
	}
	return true;
}

static void
row(Reader *r, char *line)
{
	char *f[MAX_FIELDS];
	int col[MAX_FIELDS], n = fields(line, f, col), io, ii;
	double size = NAN, oop, ip;
	Run *run = current(r);

	if (!csv_decimal(f[0], &size) || size != floor(size) || size < 0 ||
	    size > MAX_COLL_BYTES) {
		bad(r, col[0], "size", f[0], "is not a whole number of bytes from 0 to 2^50");
		return;
	}
	/* the header's columns, else the eighth and fourth from the end */
	io = r->t_oop >= 0 ? r->t_oop : n - 8;
	ii = r->t_oop >= 0 ? r->t_ip : n - 4;
	if (io < 1 || io >= n || ii >= n || (r->t_oop < 0 && n < 9)) {
		diag_error(at(r, col[n - 1]), "a row of %d fields: nccl-tests writes the size, "
			   "the count, the type, then the time, algbw, busbw and #wrong out of "
			   "place and in place", n);
		return;
	}
	ip = NAN;
	if (!micros(r, f[io], col[io], &oop) || (ii > 0 && !micros(r, f[ii], col[ii], &ip)))
		return;
	if (isnan(ip))
		ip = oop;
	if (isnan(ip)) {
		diag_error(at(r, col[io]), "no time measured (N/A in and out of place)");
		return;
	}
	if (size == 0)
		return; /* nccl-tests' -b 0: nothing moved */
	if (r->rows == MAX_COLL_ROWS) {
		diag_error(at(r, 1), "more than %d rows", MAX_COLL_ROWS);
		return;
	}
	if (run->n == run->cap) {
		run->cap = run->cap ? 2 * run->cap : 32;
		run->row = xrealloc(run->row, (size_t)run->cap * sizeof *run->row);
	}
	run->row[run->n++] = (Row){ size, ip * 1e-6, r->line, col[0] };
	r->rows++;
}

static int
by_size(const void *a, const void *b)
{
	const Row *x = a, *y = b;

	if (x->bytes != y->bytes)
		return (x->bytes > y->bytes) - (x->bytes < y->bytes);
	return (x->line > y->line) - (x->line < y->line);
}

/* Each run's rows sorted by size; a size twice in a run is an error at
 * the first line that repeats one (sorted, not searched row by row: a
 * file may hold 2^20 rows). */
static void
sort_rows(Reader *r)
{
	const Row *again = NULL, *first = NULL;

	for (int i = 0; i < r->nrun; i++) {
		Run *run = &r->run[i];
		if (run->n)
			qsort(run->row, (size_t)run->n, sizeof *run->row, by_size);
		for (int j = 1; j < run->n; j++)
			if (run->row[j].bytes == run->row[j - 1].bytes &&
			    (!again || run->row[j].line < again->line))
				again = &run->row[j], first = &run->row[j - 1];
	}
	if (again)
		diag_error((Loc){ r->path, again->line, again->col },
			   "size %.0f again in this run (line %d)", again->bytes, first->line);
}

/* Each run complete: its collective, its ranks, a row; none twice. */
static void
check_runs(Reader *r, const CollRun *kept, int nkept)
{
	int errors = diag_errors();

	for (int i = 0; i < r->nrun && diag_errors() == errors; i++) {
		Run *run = &r->run[i];
		Loc l = { r->path, run->line, 1 };
		if (run->n == 0 && run->coll < 0 && !run->ranks)
			continue; /* a start with nothing after it */
		if (run->coll < 0)
			run->coll = r->file_coll;
		if (run->coll < 0)
			diag_error(l, "which collective this run measured: no '# Collective test "
				   "starting' line, no '# collective NAME' comment, and the file's "
				   "name names none");
		else if (!run->ranks)
			diag_error(l, "how many ranks this run had: no '#  Rank N' lines and no "
				   "'# nranks N' comment");
		else if (!run->n)
			diag_error(l, "this run has no rows");
		else
			for (int j = 0; j < nkept + i; j++) {
				const CollRun *o = j < nkept ? &kept[j] : NULL;
				const Run *p = j >= nkept ? &r->run[j - nkept] : NULL;
				if ((o ? (int)o->coll : p->coll) == run->coll &&
				    (o ? o->ranks : p->ranks) == run->ranks) {
					diag_error(l, "a second %s run over %lld ranks (the "
						   "first at %s:%d)", coll_test_name[run->coll],
						   (long long)run->ranks, o ? o->path : r->path,
						   o ? o->line : p->line);
					break;
				}
			}
	}
}

/* One file's runs, appended to *out (*n of them, *cap room). */
static bool
parse(const char *path, const char *text, size_t len, Arena *a, CollRun **out, int *n, int *cap)
{
	Reader r = { .path = path, .t_oop = -1, .t_ip = -1 };
	const char *p = text, *endp = text + len, *base = strrchr(path, '/');
	int errors = diag_errors();
	char *line = NULL;
	size_t capline = 0;

	base = base ? base + 1 : path;
	r.file_coll = coll_named(base, strlen(base), true);
	while (p < endp && diag_errors() == errors) {
		const char *nl = memchr(p, '\n', (size_t)(endp - p));
		size_t k = nl ? (size_t)(nl - p) : (size_t)(endp - p);
		r.line++;
		if (k && p[k - 1] == '\r')
			k--;
		if (memchr(p, '\0', k)) {
			diag_error(at(&r, 1), "a NUL byte: not a text file");
			break;
		}
		if (k + 1 > capline)
			line = xrealloc(line, capline = k + 1);
		memcpy(line, p, k);
		line[k] = '\0';
		p = nl ? nl + 1 : endp;
		if (line[0] == '#')
			comment(&r, line);
		else if (isdigit((unsigned char)line[strspn(line, " \t")]))
			row(&r, line);
		if (r.nrun > MAX_COLL_RUNS || *n + r.nrun > MAX_COLL_RUNS) {
			diag_error(at(&r, 1), "more than %d runs", MAX_COLL_RUNS);
			break;
		}
	}
	free(line);
	if (diag_errors() == errors)
		sort_rows(&r);
	if (diag_errors() == errors)
		check_runs(&r, *out, *n);
	for (int i = 0; i < r.nrun; i++) {
		Run *run = &r.run[i];
		if (diag_errors() == errors && run->n) {
			double *bytes = arena_array(a, (size_t)run->n, sizeof *bytes);
			double *secs = arena_array(a, (size_t)run->n, sizeof *secs);
			for (int j = 0; j < run->n; j++)
				bytes[j] = run->row[j].bytes, secs[j] = run->row[j].seconds;
			if (*n == *cap) {
				*cap = *cap ? 2 * *cap : 8;
				*out = xrealloc(*out, (size_t)*cap * sizeof **out);
			}
			(*out)[(*n)++] = (CollRun){ (Coll)run->coll, run->ranks, run->n, bytes,
						    secs, path, run->line };
		}
		free(run->row);
	}
	free(r.run);
	return diag_errors() == errors;
}

static int
by_run(const void *a, const void *b)
{
	const CollRun *x = a, *y = b;

	if (x->coll != y->coll)
		return (int)x->coll - (int)y->coll;
	return (x->ranks > y->ranks) - (x->ranks < y->ranks);
}

CollTable *
collectives_parse(const char *path, const char *text, size_t len, Arena *a)
{
	CollTable *t = arena_alloc(a, sizeof *t);
	CollRun *run = NULL;
	int n = 0, cap = 0;

	t->path = path;
	if (!parse(path, text, len, a, &run, &n, &cap)) {
		free(run);
		return NULL;
	}
	return collectives_table(t, run, n, a);
}

CollTable *
collectives_table(CollTable *t, CollRun *run, int n, Arena *a)
{
	CollRun *kept = n ? arena_array(a, (size_t)n, sizeof *kept) : NULL;

	if (n) {
		qsort(run, (size_t)n, sizeof *run, by_run);
		memcpy(kept, run, (size_t)n * sizeof *kept);
	}
	free(run);
	t->run = kept;
	t->nrun = n;
	return t;
}

CollTable *
collectives_load(const char *list, Loc where, Arena *a, FileList *files)
{
	CollTable *t = arena_alloc(a, sizeof *t);
	CollRun *run = NULL;
	int n = 0, cap = 0, nfile = 0, errors = diag_errors();
	const char *p = list;

	t->path = list;
	for (;;) {
		size_t k = strcspn(p, ",");
		const char *path = arena_strndup(a, p, k);
		size_t len;
		char *text;
		if (!*path) {
			diag_error(where, "'collectives' names an empty file");
			break;
		}
		if (++nfile > MAX_COLL_FILES) {
			diag_error(where, "'collectives' names more than %d files", MAX_COLL_FILES);
			break;
		}
		if (!(text = file_read(path, &len, MAX_ODL_BYTES, where)))
			break;
		files_add(files, path);
		int before = n;
		bool ok = parse(path, text, len, a, &run, &n, &cap);
		free(text);
		if (ok && n == before) {
			char *t = esc_text_cut(path, strlen(path), NAME_SHOWN);
			diag_error(where, "'%s' holds no run of nccl-tests (no row of a size "
				   "and its times)", t);
			free(t);
		}
		if (diag_errors() > errors)
			break;
		if (!p[k])
			break;
		p += k + 1;
	}
	if (diag_errors() > errors) {
		free(run);
		return NULL;
	}
	return collectives_table(t, run, n, a);
}
