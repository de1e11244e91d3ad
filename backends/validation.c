/* validation.c -- the report of `oraclec validate`: every measured run
 * with oraclec's and ParaDL's prediction and accuracy, then the means per
 * strategy and overall.  Runs that give their precision get its column,
 * runs that measured their peak memory the memory's (measured, predicted,
 * accuracy) and its mean; a file without them, the table as it was.  Text
 * or CSV; nothing is computed here.  Names from the CSV (model, grid) are
 * escaped for the format (util/escape.h). */
#include "backends/backends.h"
#include "util/escape.h"

#include <inttypes.h>
#include <math.h>

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

static void
text(const Validation *v, FILE *f)
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
}

static void
csv(const Validation *v, FILE *f)
{
	bool prec = any_prec(v), peak = any_peak(v);

	fprintf(f, "model,strategy,gpus,grid,measured_s,predicted_s,accuracy,paradl_s,"
		   "paradl_accuracy,limited_by%s%s\n", prec ? ",precision" : "",
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
		fputc('\n', f);
	}
}

bool
validation_emit(const Validation *v, const char *format, FILE *f)
{
	if (format[0] == 'c')
		csv(v, f);
	else
		text(v, f);
	return !ferror(f);
}
