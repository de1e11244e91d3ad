/* measured.c -- the CSV of measured runs that `oraclec validate` reads
 * (the columns of the shared calibration set: model, strategy, gpus, grid,
 * global_batch, dataset_size, measured_iteration_s and optionally
 * paradl_projected_iteration_s; and those python3 -m oraclec.launch
 * --out writes after them, each optional and empty where unknown:
 * precision, implementation, peak_memory_bytes; others are ignored).
 * RFC 4180 quoting. */
#include "frontend/frontend.h"
#include "util/csv.h"
#include "util/escape.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_FIELDS = 64, MAX_ROWS = 100000 };
/* An iteration's measured (or ParaDL's projected) seconds: a microsecond
 * to a million seconds (11.6 days), as a ParaDL table's time per sample
 * (MAX_SAMPLE_SECONDS); outside it a number is a unit or typing mistake,
 * and 1e300 printed 300 digits into validate's table. */
#define MIN_ITERATION_SECONDS 1e-6
#define MAX_ITERATION_SECONDS MAX_SAMPLE_SECONDS

enum { C_MODEL, C_STRATEGY, C_GPUS, C_GRID, C_BATCH, C_DATASET, C_MEASURED, C_PARADL, C_PREC,
       C_IMPL, C_PEAK, NCOL, C_REQUIRED = C_PARADL };
static const char *const colname[NCOL] = { "model", "strategy", "gpus", "grid", "global_batch",
					   "dataset_size", "measured_iteration_s",
					   "paradl_projected_iteration_s", "precision",
					   "implementation", "peak_memory_bytes" };

/* Splits one record at p into fields (unquoting in place); returns the
 * start of the next record, or NULL at a broken quote. */
static char *
record(char *p, char **field, int *nf, int ncolmax)
{
	*nf = 0;
	for (;;) {
		char *out = p;
		if (*nf < ncolmax)
			field[*nf] = p;
		if (*p == '"') {
			char *w = p;
			for (p++;; p++) {
				if (*p == '\0')
					return NULL;
				if (*p == '"' && p[1] == '"')
					*w++ = '"', p++;
				else if (*p == '"')
					break;
				else
					*w++ = *p;
			}
			p++;
			*w = '\0';
			if (*nf < ncolmax)
				field[*nf] = out;
		} else {
			while (*p && *p != ',' && *p != '\n' && *p != '\r')
				p++;
		}
		(*nf)++;
		if (*p == ',') {
			*p++ = '\0';
			continue;
		}
		if (*p == '\r')
			*p++ = '\0';
		if (*p == '\n')
			*p++ = '\0';
		return p;
	}
}

/* Seconds of one iteration in field c (`what`), within the range; false
 * after an error at its column. */
static bool
seconds(const char *field, const char *what, Loc at, double *v)
{
	if (!csv_decimal(field, v) || *v <= 0) {
		diag_error(at, "%s must be a positive number of seconds", what);
		return false;
	}
	if (*v < MIN_ITERATION_SECONDS || *v > MAX_ITERATION_SECONDS) {
		diag_error(at, "%s %g is out of range (1e-6 to 1e6 seconds)", what, *v);
		return false;
	}
	return true;
}

/* An implementation named in the CSV at `csv`: a built-in's name (one
 * with neither '/' nor '.') or an absolute path as it is, else a path
 * from the CSV's directory, as a system file's implementation key is
 * read from the system file's. */
static const char *
beside(const char *csv, const char *name, Arena *a)
{
	const char *slash = strrchr(csv, '/');

	if (builtin_impl(name) || (!strchr(name, '/') && !strchr(name, '.')) || name[0] == '/' ||
	    !slash)
		return arena_strdup(a, name);
	return arena_printf(a, "%.*s/%s", (int)(slash - csv), csv, name);
}

/* The optional columns the runner writes: precision, implementation and
 * peak memory; empty fields say nothing. */
static bool
runner_columns(Measured *m, char **f, const int *idx, Loc loc, const char *line, Arena *a)
{
	double v;
#define AT(c) ((Loc){ loc.file, loc.line, (int)(f[idx[c]] - line) + 1 })

	m->has_prec = false;
	m->impl = NULL;
	m->implementation = NULL;
	m->peak = NAN;
	if (idx[C_PREC] >= 0 && *f[idx[C_PREC]]) {
		if (!precision_parse(f[idx[C_PREC]], &m->prec)) {
			char *s = esc_text_cut(f[idx[C_PREC]], strlen(f[idx[C_PREC]]), NAME_SHOWN);
			diag_error(AT(C_PREC), "unknown precision '%s' (fp32, tf32, amp-fp16, "
				   "amp-bf16, fp16, bf16)", s);
			free(s);
			return false;
		}
		m->has_prec = true;
		m->prec_loc = AT(C_PREC);
	}
	if (idx[C_IMPL] >= 0 && *f[idx[C_IMPL]]) {
		m->impl = beside(loc.file, f[idx[C_IMPL]], a);
		m->impl_loc = AT(C_IMPL);
	}
	if (idx[C_PEAK] >= 0 && *f[idx[C_PEAK]]) {
		if (!csv_decimal(f[idx[C_PEAK]], &v) || v < 1 || v > MAX_SYSTEM_BYTES) {
			diag_error(AT(C_PEAK), "peak_memory_bytes must be a number of bytes from 1 "
				   "to 2^60 (empty: not measured)");
			return false;
		}
		m->peak = v;
	}
	return true;
#undef AT
}

/* Row m from the fields f of the record that begins at `line` (each
 * error at its field's column). */
static bool
row(Measured *m, char **f, const int *idx, Loc loc, const char *line, Arena *a)
{
	double gpus, batch, dataset;
	StrategyKind k;
	char bad[1];
#define AT(c) ((Loc){ loc.file, loc.line, (int)(f[idx[c]] - line) + 1 })

	m->loc = loc;
	m->model = arena_strdup(a, f[idx[C_MODEL]]);
	if ((k = strategy_lookup(f[idx[C_STRATEGY]])) == STRAT_COUNT) {
		diag_error(AT(C_STRATEGY), "unknown strategy '%.40s'", f[idx[C_STRATEGY]]);
		return false;
	}
	m->kind = k;
	m->grid_text = arena_strdup(a, f[idx[C_GRID]]);
	if (grid_parse(m->grid_text, m->grid, bad, sizeof bad) != GRID_OK) {
		diag_error(AT(C_GRID), "bad grid '%.60s' (e.g. data=64,spatial=4)", m->grid_text);
		return false;
	}
	if (!csv_decimal(f[idx[C_GPUS]], &gpus) || gpus < 1 || gpus > (1 << 24)) {
		diag_error(AT(C_GPUS), "gpus, global_batch and dataset_size must be positive "
			   "numbers");
		return false;
	}
	if (!csv_decimal(f[idx[C_BATCH]], &batch) || batch < 1 || batch > 1e12) {
		diag_error(AT(C_BATCH), "gpus, global_batch and dataset_size must be positive "
			   "numbers");
		return false;
	}
	if (!csv_decimal(f[idx[C_DATASET]], &dataset) || dataset < 1 || dataset > 1e15) {
		diag_error(AT(C_DATASET), "gpus, global_batch and dataset_size must be positive "
			   "numbers");
		return false;
	}
	if (!seconds(f[idx[C_MEASURED]], "measured_iteration_s", AT(C_MEASURED), &m->measured))
		return false;
	m->gpus = (int64_t)gpus;
	if (grid_dims(m->grid) != strategy_info[m->kind].dims || grid_gpus(m->grid) != m->gpus) {
		diag_error(AT(C_GRID), "grid '%.60s' is not a %s grid over %" PRId64 " GPUs",
			   m->grid_text, strategy_name[m->kind], m->gpus);
		return false;
	}
	m->global_batch = (int64_t)batch;
	m->dataset_size = (int64_t)dataset;
	m->paradl = NAN;
	if (idx[C_PARADL] >= 0 && *f[idx[C_PARADL]] &&
	    !seconds(f[idx[C_PARADL]], "paradl_projected_iteration_s", AT(C_PARADL), &m->paradl))
		return false;
	m->predicted = NAN;
	m->predicted_peak = NAN;
	m->acc_mem = NAN;
	return runner_columns(m, f, idx, loc, line, a);
#undef AT
}

Measured *
measured_load(const char *path, Arena *a, FileList *files, int *n)
{
	size_t len;
	char *text = file_read(path, &len, 64u << 20, LOC_NONE), *p, *field[MAX_FIELDS];
	int nf, ncols, idx[NCOL], line = 1, cap = 0;
	Measured *rows = NULL;
	int errors = diag_errors();

	*n = 0;
	if (!text)
		return NULL;
	files_add(files, path);
	if (!(p = record(text, field, &nf, MAX_FIELDS)) || nf > MAX_FIELDS) {
		diag_error((Loc){ path, 1, 1 }, "bad header");
		free(text);
		return NULL;
	}
	ncols = nf;
	for (int c = 0; c < NCOL; c++) {
		idx[c] = -1;
		for (int i = 0; i < nf; i++)
			if (strcmp(field[i], colname[c]) == 0)
				idx[c] = i;
		if (idx[c] < 0 && c < C_REQUIRED)
			diag_error((Loc){ path, 1, 1 }, "missing column '%s'", colname[c]);
	}
	while (diag_errors() == errors && *p) {
		char *start = p;
		line++;
		if (!(p = record(p, field, &nf, MAX_FIELDS))) {
			diag_error((Loc){ path, line, 1 }, "unterminated quoted field");
			break;
		}
		if (nf == 1 && !*field[0])
			continue; /* blank line */
		if (nf > MAX_FIELDS || nf < 1) {
			diag_error((Loc){ path, line, 1 }, "bad number of fields");
			break;
		}
		if (nf != ncols) { /* a field more or less: the columns would shift */
			diag_error((Loc){ path, line, 1 }, "row has %d fields where the header has "
				   "%d columns", nf, ncols);
			break;
		}
		if (*n == MAX_ROWS) {
			diag_error((Loc){ path, line, 1 }, "more than %d rows", MAX_ROWS);
			break;
		}
		if (*n == cap) {
			cap = cap ? 2 * cap : 32;
			rows = arena_grow(a, rows, *n, cap, sizeof *rows);
		}
		if (!row(&rows[*n], field, idx, (Loc){ path, line, 1 }, start, a))
			break;
		(*n)++;
	}
	free(text);
	if (diag_errors() > errors)
		return NULL;
	if (*n == 0) {
		diag_error((Loc){ path, 0, 0 }, "no measured runs in this file");
		return NULL;
	}
	return rows;
}
