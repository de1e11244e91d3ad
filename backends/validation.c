/* validation.c -- the report of `oraclec validate`: every measured run
 * with oraclec's and ParaDL's prediction and accuracy, then the means per
 * strategy and overall.  Runs that give their precision get its column,
 * runs that measured their peak memory the memory's (measured, predicted,
 * accuracy) and its mean; a file without them, the table as it was.  Text,
 * CSV or JSON (the Backend table says which a format has); nothing is
 * computed here.  Names from the CSV (model, grid) are
 * escaped for the format (util/escape.h). */
#include "backends/backends.h"
#include "backends/jsonout.h"
#include "util/escape.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

static void
num(FILE *f, double v, const char *fmt, const char *none)
{
	if (isnan(v))
		fputs(none, f);
	else
		fprintf(f, fmt, v);
}

/* Seconds in a column of 10: fixed to 1e5, where the column fills, then
 * %g (a prediction may reach 1e30 s, docs/limits.md); "-" when none. */
static void
seconds(FILE *f, double v)
{
	if (isnan(v))
		fputs("         - ", f);
	else
		fprintf(f, v < 1e5 ? "%10.4f " : "%10.4g ", v);
}

/* Whether any run gives its precision; measured its peak memory. */
static bool
any_prec(const Validation *v)
{
	for (int i = 0; i < v->nrow; i++)
		if (v->row[i].has_prec)
			return true;
	return false;
}

static bool
any_peak(const Validation *v)
{
	for (int i = 0; i < v->nrow; i++)
		if (!isnan(v->row[i].peak))
			return true;
	return false;
}

/* Bytes as GB in a column of 10 ("-" when none). */
static void
gigabytes(FILE *f, double v)
{
	if (isnan(v))
		fputs("         - ", f);
	else
		fprintf(f, v < 1e14 ? "%10.3f " : "%10.4g ", v / 1e9);
}

/* Which implementation predicted the runs: one line naming it when every
 * run used one, else a line per run that used another than the first. */
static void
implementations(const Validation *v, FILE *f)
{
	const char *first = v->nrow ? v->row[0].impl_used : NULL;
	bool one = true;

	for (int i = 1; i < v->nrow; i++)
		one = one && v->row[i].impl_used && first &&
		      strcmp(v->row[i].impl_used, first) == 0;
	if (!first)
		return;
	fputs("implementation ", f);
	esc_text(f, first);
	fputs(one ? " (every run)\n" : " (run 1; the others below)\n", f);
	for (int i = 1; i < v->nrow && !one; i++)
		if (v->row[i].impl_used && strcmp(v->row[i].impl_used, first) != 0) {
			fprintf(f, "  run %d: ", i + 1);
			esc_text(f, v->row[i].impl_used);
			fputc('\n', f);
		}
}

bool
validation_text(const Validation *v, FILE *f)
{
	bool prec = any_prec(v), peak = any_peak(v);

	fprintf(f, "%-10s %-8s %6s %-22s ", "model", "strategy", "gpus", "grid");
	if (prec)
		fprintf(f, "%-9s ", "precision");
	fprintf(f, "%10s %10s %8s %10s %8s  ", "measured", "oraclec", "acc", "paradl", "acc");
	if (peak)
		fprintf(f, "%10s %10s %8s  ", "peak GB", "oraclec", "acc");
	fprintf(f, "%s\n", "limited by");
	for (int i = 0; i < v->nrow; i++) {
		const Measured *r = &v->row[i];
		esc_text_pad(f, r->model, 10);
		fprintf(f, " %-8s %6" PRId64 " ", strategy_name[r->kind], r->gpus);
		esc_text_pad(f, r->grid_text, 22);
		fputc(' ', f);
		if (prec)
			fprintf(f, "%-9s ", r->has_prec ? precision_name(r->prec) : "-");
		seconds(f, r->measured);
		seconds(f, r->predicted);
		num(f, r->acc, "%8.3f ", "       - ");
		seconds(f, r->paradl);
		num(f, r->acc_paradl, "%8.3f ", "       - ");
		if (peak) {
			fputc(' ', f);
			gigabytes(f, r->peak);
			gigabytes(f, r->predicted_peak);
			num(f, r->acc_mem, "%8.3f ", "       - ");
		}
		fputc(' ', f);
		esc_text(f, r->note ? r->note : "");
		fputc('\n', f);
	}
	fprintf(f, "\n%-10s %5s %10s %10s\n", "strategy", "rows", "oraclec", "paradl");
	for (int k = 0; k < STRAT_COUNT; k++) {
		const Accuracy *a = &v->per[k];
		if (!a->n && !a->n_paradl)
			continue;
		fprintf(f, "%-10s %5d ", strategy_name[k], a->n);
		num(f, a->oraclec, "%10.3f ", "         - ");
		num(f, a->paradl, "%10.3f", "         -");
		fputc('\n', f);
	}
	fprintf(f, "%-10s %5d ", "all", v->all.n);
	num(f, v->all.oraclec, "%10.3f ", "         - ");
	num(f, v->all.paradl, "%10.3f", "         -");
	fputc('\n', f);
	if (peak) {
		fprintf(f, "%-10s %5d ", "memory", v->mem.n);
		num(f, v->mem.oraclec, "%10.3f ", "         - ");
		fputs("         -   (peak memory: as measured, against the predicted peak less the "
		      "reserve; a host device's also less the weights and optimizer state)\n", f);
	}
	fprintf(f, "%-10s %5" PRId64 " ", "tau", v->rank.pairs);
	num(f, v->rank.tau, "%10.3f ", "         - ");
	num(f, v->rank_paradl.tau, "%10.3f", "         -");
	fputs("   (Kendall's tau over pairs of runs: whether the times rank as measured)\n", f);
	implementations(v, f);
	return !ferror(f);
}

bool
validation_csv(const Validation *v, FILE *f)
{
	bool prec = any_prec(v), peak = any_peak(v);

	fprintf(f, "model,strategy,gpus,grid,measured_s,predicted_s,accuracy,paradl_s,"
		   "paradl_accuracy,limited_by%s%s,implementation\n", prec ? ",precision" : "",
		peak ? ",measured_peak_bytes,predicted_peak_bytes,memory_accuracy" : "");
	for (int i = 0; i < v->nrow; i++) {
		const Measured *r = &v->row[i];
		esc_csv(f, r->model);
		fprintf(f, ",%s,%" PRId64 ",", strategy_name[r->kind], r->gpus);
		esc_csv_quoted(f, r->grid_text);
		fprintf(f, ",%.6f,", r->measured);
		num(f, r->predicted, "%.6f", "");
		fputc(',', f);
		num(f, r->acc, "%.4f", "");
		fputc(',', f);
		num(f, r->paradl, "%.6f", "");
		fputc(',', f);
		num(f, r->acc_paradl, "%.4f", "");
		fputc(',', f);
		esc_csv(f, r->note ? r->note : "");
		if (prec)
			fprintf(f, ",%s", r->has_prec ? precision_name(r->prec) : "");
		if (peak) {
			fputc(',', f);
			num(f, r->peak, "%.0f", "");
			fputc(',', f);
			num(f, r->predicted_peak, "%.0f", "");
			fputc(',', f);
			num(f, r->acc_mem, "%.4f", "");
		}
		fputc(',', f);
		esc_csv(f, r->impl_used ? r->impl_used : "");
		fputc('\n', f);
	}
	return !ferror(f);
}

/* A figure, null when there is none. */
static json_t *
real_or_null(double v)
{
	return isnan(v) ? json_null() : json_real(v);
}

static json_t *
accuracy_json(const Accuracy *a)
{
	json_t *o = json_object();

	set(o, "runs", json_integer(a->n));
	set(o, "oraclec", real_or_null(a->oraclec));
	set(o, "paradl_runs", json_integer(a->n_paradl));
	set(o, "paradl", real_or_null(a->paradl));
	return o;
}

bool
validation_json(const Validation *v, FILE *f)
{
	json_t *root = json_object(), *runs = json_array(), *per = json_object(), *tau;
	int status;

	for (int i = 0; i < v->nrow; i++) {
		const Measured *r = &v->row[i];
		json_t *o = json_object();
		set(o, "model", jstr(r->model));
		set(o, "strategy", json_string(strategy_name[r->kind]));
		set(o, "gpus", json_integer(r->gpus));
		set(o, "grid", jstr(r->grid_text));
		set(o, "precision",
		    r->has_prec ? json_string(precision_name(r->prec)) : json_null());
		set(o, "measured_s", json_real(r->measured));
		set(o, "predicted_s", real_or_null(r->predicted));
		set(o, "accuracy", real_or_null(r->acc));
		set(o, "paradl_s", real_or_null(r->paradl));
		set(o, "paradl_accuracy", real_or_null(r->acc_paradl));
		set(o, "measured_peak_bytes", real_or_null(r->peak));
		set(o, "predicted_peak_bytes", real_or_null(r->predicted_peak));
		set(o, "memory_accuracy", real_or_null(r->acc_mem));
		set(o, "limited_by", r->note ? jstr(r->note) : json_null());
		set(o, "implementation", r->impl_used ? jstr(r->impl_used) : json_null());
		json_array_append_new(runs, o);
	}
	set(root, "runs", runs);
	for (int k = 0; k < STRAT_COUNT; k++)
		if (v->per[k].n || v->per[k].n_paradl)
			set(per, strategy_name[k], accuracy_json(&v->per[k]));
	set(root, "strategies", per);
	set(root, "all", accuracy_json(&v->all));
	set(root, "memory", accuracy_json(&v->mem));
	tau = json_object();
	set(tau, "pairs", json_integer(v->rank.pairs));
	set(tau, "oraclec", real_or_null(v->rank.tau));
	set(tau, "paradl", real_or_null(v->rank_paradl.tau));
	set(root, "tau", tau);
	status =
		json_dumpf(root, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
	json_decref(root);
	fputc('\n', f);
	return status == 0 && !ferror(f);
}
