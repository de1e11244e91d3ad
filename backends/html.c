/* html.c -- the visual report (-f html): one self-contained page, inline
 * CSS and SVG, no script and no external resource, so it opens from a mail
 * attachment or a cluster's file browser (docs/report.md).  It shows the
 * recommendation, the ranking, the system and training settings, the
 * command line, and the four charts of charts.c.  The numbers are the
 * passes'; this file only lays them out.  Also -f svg: one chart,
 * chosen with --plot. */
#include "backends/backends.h"
#include "backends/charts.h"
#include "backends/svg.h"
#include "util/escape.h"

#include <inttypes.h>
#include <string.h>

static const char style[] =
	"body{font-family:sans-serif;margin:24px auto;max-width:1000px;color:#222}"
	"h1{font-size:22px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ccc}"
	"table{border-collapse:collapse;font-size:13px}"
	"td,th{padding:3px 8px;border-bottom:1px solid #e4e4e4;text-align:right}"
	"td:first-child,th:first-child,td.l{text-align:left}"
	"tr.recommended{font-weight:bold;background:#fff6d5}"
	".recommendation{font-size:15px;background:#f3f7fb;padding:10px;border-left:4px solid "
	"#0072B2}"
	"code{background:#f4f4f4;padding:2px 4px;word-break:break-all}"
	".warning{color:#a04000}"
	"svg{display:block;margin:8px 0}"
	"svg .chart-title{font-weight:bold;font-size:14px}"
	"svg .row.recommended .bar-label{font-weight:bold}"
	"svg .axis-label{font-size:12px}svg .tick{fill:#444;font-size:11px}";

static void
cell(FILE *f, const char *s, bool left)
{
	fputs(left ? "<td class=\"l\">" : "<td>", f);
	esc_xml(f, s);
	fputs("</td>", f);
}

static const char *
num(bool ok, const char *fmt, double v, char *buf)
{
	if (!ok)
		return "-";
	snprintf(buf, 32, fmt, v);
	return buf;
}

/* The grid as "data=4,spatial=2". */
static const char *
grid_text(const Candidate *k, char *buf, size_t n)
{
	size_t len = 0;

	buf[0] = '\0';
	for (int d = 0; d < DIM_COUNT && len < n; d++)
		if (k->grid[d])
			len += (size_t)snprintf(buf + len, n - len, "%s%s=%" PRId64, len ? "," : "",
						grid_dim_name[d], k->grid[d]);
	return len ? buf : "-";
}

static void
ranking(FILE *f, const Analysis *an)
{
	char grid[96], b[7][32];
	int idx[STRAT_COUNT], n = rank_order(an, idx);

	fputs("<table class=\"ranking\"><tr><th>strategy</th><th>grid</th><th>fits</th>"
	      "<th>iteration (s)</th><th>epoch (s)</th><th>samples/s</th><th>MFU</th>"
	      "<th>memory/GPU (GiB)</th>", f);
	if (an->max_batch)
		fputs("<th>max batch/GPU</th>", f);
	fputs("<th>limited by</th></tr>\n", f);
	for (int i = 0; i < n; i++) {
		const Candidate *k = &an->cand[idx[i]];
		bool c = k->computable;
		fprintf(f, "<tr class=\"%s\">", idx[i] == an->best ? "recommended" : "");
		cell(f, strategy_name[k->kind], true);
		cell(f, grid_text(k, grid, sizeof grid), true);
		cell(f, k->not_run ? "not run" : !k->computable ? "-" : k->feasible ? "yes" : "no",
		     true);
		cell(f, num(c, "%.4f", k->t.total, b[2]), false);
		cell(f, num(c, "%.1f", k->epoch, b[3]), false);
		cell(f, num(c, "%.0f", k->throughput, b[5]), false);
		cell(f, num(c, "%.1f %%", 100 * k->mfu, b[6]), false);
		cell(f, num(c, "%.2f", k->mem.total / 1073741824.0, b[4]), false);
		if (an->max_batch)
			cell(f, num(true, "%.0f", (double)k->max_batch, b[5]), false);
		cell(f, k->feasible ? k->bottleneck : k->reason ? k->reason : "-", true);
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
	for (int i = 0; i < n; i++)
		if (an->cand[idx[i]].mfu_peak > 0) {
			fprintf(f, "<p>MFU: the model's FLOPs per second per GPU over %.1f "
				   "TFLOP/s, the dense peak of the formats its matrix products "
				   "run in at %s.</p>\n",
				an->cand[idx[i]].mfu_peak / 1e12, precision_name(an->q.set.prec));
			break;
		}
}

/* Every part an iteration adds, as the text's table: their sum is the
 * iteration, or the input pipeline's time where that is longer. */
static void
parts(FILE *f, const Analysis *an)
{
	int idx[STRAT_COUNT], n = rank_order(an, idx);
	char b[32];

	bool shown[ITER_COLUMNS];

	fputs("<p>Iteration by part (s): compute + bubble + exchange + reducer + collectives + "
	      "p2p/halo + update + recompute + copies + host wait", f);
	for (int j = 0; j < ITER_COLUMNS; j++)
		if ((shown[j] = iter_column_shown(an, j)) && iter_column[j].optional)
			fprintf(f, " + %s", iter_column[j].name);
	fputs(" = iteration, or the input pipeline's time where that is longer.</p>\n"
	      "<table class=\"parts\"><tr><th>strategy</th>", f);
	for (int j = 0; j < ITER_COLUMNS; j++)
		if (shown[j])
			fprintf(f, "<th>%s</th>", iter_column[j].html);
	fputs("</tr>\n", f);
	for (int i = 0; i < n; i++) {
		const Candidate *k = &an->cand[idx[i]];
		if (!k->computable)
			continue;
		fprintf(f, "<tr class=\"%s\">", idx[i] == an->best ? "recommended" : "");
		cell(f, strategy_name[k->kind], true);
		for (int j = 0; j < ITER_COLUMNS; j++) {
			double v = iter_column_value(&k->t, j);
			if (shown[j])
				cell(f, num(true, v == 0 ? "%.0f" : "%.4f", v, b), false);
		}
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
}

static void
recommendation(FILE *f, const Analysis *an)
{
	const Decision *d = &an->decision;
	const Candidate *k = d->k;
	const PerLayer *pl = an->per_layer;
	char c[CONFIG_TEXT_MAX], b[32];

	fputs("<p class=\"recommendation\">", f);
	if (d->from == DECIDED_NONE) {
		fputs("Recommendation: ", f);
		esc_xml(f, an->why_none);
		fputs(".</p>\n", f);
	} else {
		if (d->from == DECIDED_PER_LAYER)
			fprintf(f, "Use the <b>per-layer splits</b>: %.4f s per iteration, %.1f s "
				   "per epoch.%s",
				pl->time, pl->epoch, k ? "<br>Best strategy: " : "");
		else if (d->from == DECIDED_SEARCH)
			fputs("The search's best (<a href=\"#search\">below</a>): ", f);
		if (k) {
			fputs(d->from == DECIDED_RANKING ? "Use <b>" : "use <b>", f);
			esc_xml(f, config_text(&d->c, c, sizeof c));
			fprintf(f, "</b>: %.4f s per iteration, %.1f s per epoch, %s per GPU",
				k->t.total, k->epoch, svg_bytes(k->mem.total, b, sizeof b));
			if (d->runner_up > 1.005)
				fprintf(f, ", %.2fx faster than the next best", d->runner_up);
			fputs("; it is limited by ", f);
			esc_xml(f, k->bottleneck);
			fputs(".", f);
		}
		fputs("</p>\n", f);
	}
	for (int i = 0; i < an->nnote; i++) {
		fputs("<p class=\"note\">note: ", f);
		esc_xml(f, an->note[i]);
		fputs(".</p>\n", f);
	}
	for (int i = 0; i < an->nwarning; i++) {
		fputs("<p class=\"warning\">warning [", f);
		esc_xml(f, an->warning[i].code);
		fputs("]: ", f);
		esc_xml(f, an->warning[i].message);
		fputs(".</p>\n", f);
	}
}

static void
row(FILE *f, const char *key, const char *value)
{
	fputs("<tr><td class=\"l\">", f);
	esc_xml(f, key);
	fputs("</td><td class=\"l\">", f);
	esc_xml(f, value);
	fputs("</td></tr>\n", f);
}

static void
settings(FILE *f, const Graph *g, const Analysis *an)
{
	const System *s = an->q.sys;
	char b[160];

	fputs("<table class=\"settings\">\n", f);
	row(f, "model", g->name);
	row(f, "file", g->source);
	snprintf(b, sizeof b, "%d layers, %" PRId64 " parameters, %.3g GFLOPs forward per sample",
		 g->nlayer, g->total.params, (double)g->total.flops_fwd / 1e9);
	row(f, "size", b);
	snprintf(b, sizeof b, "%d x %s per node, %s %.0f GB/s, network %.1f GB/s per node",
		 s->gpus_per_node, s->gpu, s->intra, s->intra_bw / 1e9, s->nic_bw / 1e9);
	row(f, "system", s->name);
	row(f, "hardware", b);
	row(f, "software", an->q.impl.name);
	if (an->q.set.global_batch)
		snprintf(b, sizeof b, "%" PRId64 " GPUs, global batch %" PRId64 ", %s, %s",
			 an->q.set.gpus, an->q.set.global_batch, precision_name(an->q.set.prec),
			 optimizer_name(an->q.set.opt));
	else
		snprintf(b, sizeof b, "%" PRId64 " GPUs, %" PRId64 " samples per GPU, %s, %s",
			 an->q.set.gpus, an->q.set.batch_per_gpu, precision_name(an->q.set.prec),
			 optimizer_name(an->q.set.opt));
	row(f, "training", b);
	snprintf(b, sizeof b, "%" PRId64 " samples", an->q.set.dataset_size);
	row(f, "epoch", b);
	fputs("</table>\n", f);
}

static bool
section(FILE *f, const char *title, const Chart *c, const Graph *g, const Analysis *an)
{
	fputs("<h2>", f);
	esc_xml(f, title);
	fputs("</h2>\n", f);
	return c->emit(f, g, an);
}

/* --search: the best configurations, the first recommended, and what
 * each other lost by. */
static void
search(FILE *f, const Search *s)
{
	char grid[96], b[6][32];

	fprintf(f, "<h2 id=\"search\">Search</h2>\n<p>%d configurations evaluated, %d pruned%s; "
		   "the best %d.", s->evaluated, s->pruned,
		s->stopped ? ", stopped at --search-time with some untried" : "", s->ntop);
	if (s->simpler[0]) {
		fputs(" ", f);
		esc_xml(f, s->simpler);
		fputs(".", f);
	}
	fputs("</p>\n<table class=\"search\"><tr><th>strategy</th><th>grid</th><th>nesting</th>"
	      "<th>schedule</th><th>precision</th><th>ZeRO</th><th>recompute</th>"
	      "<th>iteration (s)</th><th>epoch (s)</th><th>MFU</th><th>memory/GPU</th>"
	      "<th>lost by</th></tr>\n", f);
	for (int i = 0; i < s->ntop; i++) {
		const SearchConfig *c = &s->top[i];
		Candidate k = { .kind = c->kind };
		memcpy(k.grid, c->grid, sizeof k.grid);
		fprintf(f, "<tr class=\"%s\">", i ? "" : "recommended");
		cell(f, strategy_name[c->kind], true);
		grid_text(&k, grid, sizeof grid);
		if (c->sequence_parallel) /* Megatron's, beside the tensor split */
			strncat(grid, ", sequence parallel", sizeof grid - strlen(grid) - 1);
		cell(f, grid, true);
		cell(f, nesting_name[c->nest], true);
		cell(f, STRATEGY_PIPELINED(c->kind)
				? schedule_label(c->schedule, c->virtual_stages, b[0], sizeof b[0])
				: "-",
		     true);
		cell(f, precision_name(c->prec), true);
		snprintf(b[1], sizeof b[1], "%d%s", c->zero, c->zero_node ? " (FSDP hybrid)" : "");
		cell(f, b[1], true);
		cell(f, recompute_label(c->recompute, b[2], sizeof b[2]), true);
		cell(f, num(true, "%.4f", c->iteration, b[3]), false);
		cell(f, num(true, "%.1f", c->epoch, b[4]), false);
		cell(f, num(true, "%.1f %%", 100 * c->mfu, b[5]), false);
		cell(f, svg_bytes(c->memory, b[0], sizeof b[0]), false);
		cell(f, i ? c->why : "(recommended)", true);
		fputs("</tr>\n", f);
	}
	fputs("</table>\n<p>MFU: over the dense peak of each configuration's precision.</p>\n",
	      f);
}

bool
html_emit(const Graph *g, const Analysis *an, const ReportOpts *o, FILE *f)
{
	bool ok = true;

	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta "
	      "charset=\"utf-8\">\n<title>oraclec: ",
	      f);
	esc_xml(f, g->name);
	fprintf(f, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>oraclec: ", style);
	esc_xml(f, g->name);
	fprintf(f, " on %" PRId64 " GPUs of ", an->q.set.gpus);
	esc_xml(f, an->q.sys->name);
	fputs("</h1>\n", f);
	recommendation(f, an);
	fputs("<h2>Ranking</h2>\n", f);
	if (an->search)
		fputs("<p>The strategies at the settings given; the search (below) varies the "
		      "rest.</p>\n", f);
	ranking(f, an);
	parts(f, an);
	if (an->search)
		search(f, an->search);
	ok &= section(f, "Scaling", &charts[0], g, an);
	ok &= section(f, "Where the time goes", &charts[1], g, an);
	ok &= section(f, "Memory per GPU", &charts[2], g, an);
	ok &= section(f, "Per layer", &charts[3], g, an);
	fputs("<h2>Settings</h2>\n", f);
	settings(f, g, an);
	if (o->command) {
		fputs("<p>Command: <code>", f);
		esc_xml(f, o->command);
		fputs("</code></p>\n", f);
	}
	fputs("<p>Every number is explained in oraclec's docs/model.md; the charts in "
	      "docs/report.md.</p>\n</body>\n</html>\n", f);
	return ok && !ferror(f);
}

bool
svg_emit(const Graph *g, const Analysis *an, const ReportOpts *o, FILE *f)
{
	const Chart *c = chart_find(o->plot ? o->plot : charts[0].name);

	return c && c->emit(f, g, an);
}
