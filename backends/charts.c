/* charts.c -- the report's four charts (docs/report.md), each a complete
 * SVG drawn with svg.c from what the passes found:
 *
 *   scaling    epoch and iteration time against GPU count (log-log) for
 *              every strategy over the sweep, ideal scaling dashed, points
 *              that do not fit crossed (the reason as a tooltip), the
 *              recommendation ringed
 *   breakdown  where an iteration's time goes, per strategy: stacked bars
 *   memory     memory per GPU by part, per strategy, against the GPU's
 *   layers     FLOPs, kept activations and parameters per layer, with the
 *              pipeline's cut points
 */
#include "backends/charts.h"
#include "backends/svg.h"
#include "util/escape.h"

#include <math.h>
#include <stdlib.h>

enum { WIDTH = 960, LEFT = 170, RIGHT = 30 };

/* ---- scaling ------------------------------------------------------------ */

/* The smallest and largest positive value of a strategy's time (epoch or
 * iteration) over the sweep, into *lo and *hi. */
static void
time_range(const Analysis *an, bool epoch, double *lo, double *hi)
{
	*lo = INFINITY, *hi = 0;
	for (int i = 0; i < an->nsweep; i++)
		for (int k = 0; k < STRAT_COUNT; k++) {
			const Candidate *c = &an->sweep[i].cand[k];
			double v = epoch ? c->epoch : c->t.total;
			if (!c->analysed || !c->computable || !(v > 0))
				continue;
			if (v < *lo)
				*lo = v;
			if (v > *hi)
				*hi = v;
		}
	if (!(*hi > 0))
		*lo = 1, *hi = 10;
}

/* One log-log plot of the sweep at (0, top): epoch or iteration time. */
static void
scaling_plot(FILE *f, const Analysis *an, double top, bool epoch)
{
	Plot p = { .f = f, .x = LEFT, .y = top, .w = WIDTH - LEFT - RIGHT, .h = 300 };
	double lo, hi, *x = xcalloc((size_t)an->nsweep + 1, sizeof *x);
	double *y = xcalloc((size_t)an->nsweep + 1, sizeof *y);
	const Analysis *last = &an->sweep[an->nsweep - 1];
	char title[160];

	time_range(an, epoch, &lo, &hi);
	axis_decades(1, (double)last->q.set.gpus, &p.ax.lo, &p.ax.hi);
	axis_decades(lo, hi, &p.ay.lo, &p.ay.hi);
	p.ax.log = p.ay.log = true;
	p.ax.label = "GPUs";
	p.ay.label = epoch ? "epoch time (s)" : "iteration time (s)";
	plot_frame(&p);
	/* ideal: the fastest strategy on one GPU, its epoch divided by p
	 * (weak and strong scaling alike); the iteration stays flat under
	 * weak scaling and divides under strong */
	if (an->sweep[0].best >= 0) {
		const Candidate *b = &an->sweep[0].cand[an->sweep[0].best];
		double v = epoch ? b->epoch : b->t.total, g = (double)last->q.set.gpus;
		double end = epoch || an->q.set.global_batch ? v / g : v;
		if (end < p.ay.lo) /* keep the line inside the plot */
			g = epoch || an->q.set.global_batch ? v / p.ay.lo : g, end = p.ay.lo;
		plot_dashed(&p, 1, v, g, end, "ideal");
	}
	for (int k = 0; k < STRAT_COUNT; k++) {
		int n = 0;
		if (!an->cand[k].analysed)
			continue;
		for (int i = 0; i < an->nsweep; i++) {
			const Candidate *c = &an->sweep[i].cand[k];
			double v = epoch ? c->epoch : c->t.total;
			if (!c->computable || !(v > 0))
				continue;
			if (c->feasible)
				x[n] = (double)an->sweep[i].q.set.gpus, y[n++] = v;
			else {
				char why[400], b1[32];
				snprintf(why, sizeof why, "%s: %lld GPU%s, %s: %s",
					 strategy_name[k], (long long)an->sweep[i].q.set.gpus,
					 an->sweep[i].q.set.gpus == 1 ? "" : "s",
					 svg_unit(v, "s", b1, sizeof b1),
					 c->reason ? c->reason : "does not fit");
				plot_cross(&p, (double)an->sweep[i].q.set.gpus, v, why);
			}
		}
		plot_series(&p, x, y, n, k, strategy_name[k], "GPU", "s");
	}
	if (an->decision.k) {
		const Candidate *b = an->decision.k;
		snprintf(title, sizeof title, "recommended: %s on %lld GPUs",
			 strategy_name[b->kind], (long long)an->q.set.gpus);
		plot_ring(&p, (double)an->q.set.gpus, epoch ? b->epoch : b->t.total, title);
	}
	free(x);
	free(y);
}

/* The best strategy's samples/s a GPU over one node's at each point of
 * the sweep (Analysis.node_scaling, plan/sweep.c), in per cent, against
 * GPUs (log), 100 dashed: where scaling breaks. */
static void
node_plot(FILE *f, const Analysis *an, double top)
{
	Plot p = { .f = f, .x = LEFT, .y = top, .w = WIDTH - LEFT - RIGHT, .h = 240 };
	double *x = xcalloc((size_t)an->nsweep + 1, sizeof *x), hi = 100;
	double *y = xcalloc((size_t)an->nsweep + 1, sizeof *y);
	char label[80];
	int n = 0;

	for (int i = 0; i < an->nsweep; i++)
		if (an->sweep[i].node_scaling > 0) {
			x[n] = (double)an->sweep[i].q.set.gpus;
			y[n] = 100 * an->sweep[i].node_scaling;
			hi = y[n] > hi ? y[n] : hi;
			n++;
		}
	axis_decades(1, (double)an->sweep[an->nsweep - 1].q.set.gpus, &p.ax.lo, &p.ax.hi);
	p.ax.log = true;
	p.ax.label = "GPUs";
	p.ay.lo = 0;
	p.ay.hi = axis_nice(hi * 1.05);
	snprintf(label, sizeof label, "samples/s a GPU, %% of one node's (%lld GPUs)",
		 (long long)an->node_gpus);
	p.ay.label = label;
	plot_frame(&p);
	plot_dashed(&p, p.ax.lo, 100, p.ax.hi, 100, "ideal");
	plot_series(&p, x, y, n, 0, "best", "GPU", "%");
	free(x);
	free(y);
}

bool
chart_scaling(FILE *f, const Graph *g, const Analysis *an)
{
	const char *names[STRAT_COUNT + 2];
	int n = 0, colour[STRAT_COUNT + 2];

	if (an->nsweep < 1) { /* --grid: one grid, no sweep */
		svg_begin(f, WIDTH, 60, "scaling", "Scaling");
		svg_text(f, LEFT, 30, "start", "chart-title",
			 "No scaling chart: --grid analyses one grid, without a sweep");
		svg_end(f);
		return !ferror(f);
	}
	for (int k = 0; k < STRAT_COUNT; k++) /* those analysed, each in its colour */
		if (an->cand[k].analysed)
			colour[n] = k, names[n++] = strategy_name[k];
	svg_begin(f, WIDTH, 1120, "scaling",
		  "Scaling: epoch and iteration time against GPUs, and per GPU against one node");
	svg_text(f, LEFT, 24, "start", "chart-title", "Scaling (log-log; dashed: ideal)");
	svg_legend_lines(f, LEFT, 50, WIDTH - LEFT - RIGHT, names, colour, n);
	scaling_plot(f, an, 80, true);
	scaling_plot(f, an, 450, false);
	node_plot(f, an, 820);
	svg_end(f);
	(void)g;
	return !ferror(f);
}

/* ---- breakdown and memory ---------------------------------------------- */

/* The candidates a bar chart shows: analysed and computed, in table
 * order; their count. */
static int
shown(const Analysis *an, int *idx)
{
	int n = 0;

	for (int k = 0; k < STRAT_COUNT; k++)
		if (an->cand[k].analysed && an->cand[k].computable)
			idx[n++] = k;
	return n;
}

/* The parts of the text's "iteration by part", in its order. */
static const char *const time_part[] = {
	"compute", "pipeline bubble", "gradient exchange (exposed)", "reducer (DDP's copies)",
	"layer-wise collectives", "halo / point-to-point", "weight update", "recomputation",
	"input copies", "host wait", "synchronised batch norm", "the slowest of N",
};
enum { TIME_PARTS = sizeof time_part / sizeof time_part[0] };

static void
time_parts(const Candidate *k, double *v)
{
	v[0] = k->t.compute, v[1] = k->t.bubble, v[2] = k->t.grad, v[3] = k->t.reducer;
	v[4] = k->t.layer, v[5] = k->t.p2p, v[6] = k->t.update, v[7] = k->t.recompute;
	v[8] = k->t.feed, v[9] = k->t.dispatch, v[10] = k->t.sync_bn, v[11] = k->t.skew;
}

static const char *const mem_part[] = {
	"weights", "gradients", "optimizer", "activations", "backward peak", "workspace",
	"reserved",
};

static void
mem_parts(const Candidate *k, double *v)
{
	v[0] = k->mem.weights, v[1] = k->mem.grads, v[2] = k->mem.optimizer;
	v[3] = k->mem.activations, v[4] = k->mem.transient, v[5] = k->mem.workspace;
	v[6] = k->mem.buffers;
}

/* Stacked bars of the shown candidates: time (memory false) or memory
 * parts; the overlapped input time (time) or the GPU's capacity (memory)
 * dashed. */
static bool
bars(FILE *f, const Analysis *an, bool memory)
{
	int idx[STRAT_COUNT], n = shown(an, idx), nparts = memory ? 7 : TIME_PARTS;
	const char *const *part = memory ? mem_part : time_part;
	double v[TIME_PARTS], top = 0, height = 60 + 34.0 * (n ? n : 1);
	Plot p = { .f = f, .x = LEFT, .y = 90, .w = WIDTH - LEFT - RIGHT, .h = height - 60 };
	char label[64], axis[48];
	const char *unit = "B";
	double scale;

	for (int i = 0; i < n; i++) {
		const Candidate *k = &an->cand[idx[i]];
		double sum = 0;
		memory ? mem_parts(k, v) : time_parts(k, v);
		for (int j = 0; j < nparts; j++)
			sum += v[j];
		if (!memory && k->t.input > sum)
			sum = k->t.input;
		if (sum > top)
			top = sum;
	}
	if (memory && an->q.sys->mem > top)
		top = an->q.sys->mem;
	/* bytes on an axis of a binary unit: 0, 20, 40 ... GiB */
	scale = memory ? svg_binary(top, &unit) : 1;
	snprintf(axis, sizeof axis, "memory per GPU (%s)", unit);
	p.ax = (Axis){ 0, axis_nice(top / scale) * scale, false,
		       memory ? axis : "time per iteration (s)" };
	svg_begin(f, WIDTH, height + 90, memory ? "memory" : "breakdown",
		  memory ? "Memory per GPU by part" : "Where an iteration's time goes");
	svg_text(f, LEFT, 24, "start", "chart-title",
		 memory ? "Memory per GPU at the backward peak"
			: "Time per iteration by part (dashed: the input pipeline, overlapped)");
	svg_legend(f, LEFT, 50, WIDTH - LEFT - RIGHT, part, nparts);
	fprintf(f, "<g class=\"frame\">\n");
	fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"none\" "
		   "stroke=\"#444\"/>\n", p.x, p.y, p.w, p.h);
	for (double t = 0, step = axis_nice(p.ax.hi / scale / 5) * scale; t <= p.ax.hi * 1.0001;
	     t += step) {
		char buf[32];
		svg_text(f, plot_x(&p, t), p.y + p.h + 16, "middle", "tick x",
			 svg_si(t / scale, buf, sizeof buf));
	}
	svg_text(f, p.x + p.w / 2, p.y + p.h + 36, "middle", "axis-label", p.ax.label);
	fputs("</g>\n", f);
	for (int i = 0; i < n; i++) {
		const Candidate *k = &an->cand[idx[i]];
		snprintf(label, sizeof label, "%s%s", strategy_name[k->kind],
			 k->feasible ? "" : " (no fit)");
		memory ? mem_parts(k, v) : time_parts(k, v);
		plot_hbar(&p, i, n, label, v, part, nparts, idx[i] == an->best ? "recommended" : "",
			  memory ? "B" : "s");
		if (!memory && k->t.input > 0) {
			double x = plot_x(&p, k->t.input), band = p.h / n;
			fprintf(f,
				"<line class=\"input\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" "
				"y2=\"%.2f\" stroke=\"#000\" stroke-dasharray=\"3 3\"/>\n",
				x, p.y + band * i + band * 0.1, x,
				p.y + band * (i + 1) - band * 0.1);
		}
	}
	if (memory) {
		double x = plot_x(&p, an->q.sys->mem);
		fprintf(f,
			"<line class=\"capacity\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" "
			"stroke=\"#D55E00\" stroke-width=\"2\" stroke-dasharray=\"6 4\"/>\n",
			x, p.y - 6, x, p.y + p.h);
		svg_text(f, x, p.y - 10, "middle", "capacity-label", "GPU memory");
	}
	svg_end(f);
	return !ferror(f);
}

bool
chart_breakdown(FILE *f, const Graph *g, const Analysis *an)
{
	(void)g;
	return bars(f, an, false);
}

bool
chart_memory(FILE *f, const Graph *g, const Analysis *an)
{
	(void)g;
	return bars(f, an, true);
}

/* ---- layers ------------------------------------------------------------- */

/* One strip: a bar per layer of v[i], linear from 0; bytes where `bytes`
 * (the axis in a binary unit, which its label says). */
static void
strip(FILE *f, const Graph *g, double top, double *v, const char *label, int c, bool bytes)
{
	Plot p = { .f = f, .x = LEFT, .y = top, .w = WIDTH - LEFT - RIGHT, .h = 120 };
	double hi = 0, bw, scale = 1;
	const char *unit;
	char axis[64];

	for (int i = 0; i < g->nlayer; i++)
		if (v[i] > hi)
			hi = v[i];
	if (bytes) {
		scale = svg_binary(hi, &unit);
		for (int i = 0; i < g->nlayer; i++)
			v[i] /= scale;
		hi /= scale;
	}
	if (bytes) {
		snprintf(axis, sizeof axis, "%s (%s)", label, unit);
		label = axis;
	}
	p.ax = (Axis){ 0, g->nlayer > 0 ? g->nlayer : 1, false, "layer (in order)" };
	p.ay = (Axis){ 0, axis_nice(hi), false, label };
	plot_frame(&p);
	bw = p.w / (g->nlayer > 0 ? g->nlayer : 1);
	fprintf(f, "<g class=\"strip\" fill=\"%s\">\n", svg_colour(c));
	for (int i = 0; i < g->nlayer; i++) {
		double y = plot_y(&p, v[i]);
		if (!(v[i] > 0))
			continue;
		fprintf(f, "<rect class=\"layer-bar\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
			   "height=\"%.2f\"><title>", plot_x(&p, i), y, bw > 1 ? bw - 0.3 : bw,
			p.y + p.h - y);
		esc_xml(f, g->layer[i].name);
		fputs("</title></rect>\n", f);
	}
	fputs("</g>\n", f);
}

bool
chart_layers(FILE *f, const Graph *g, const Analysis *an)
{
	int L = g->nlayer;
	double *v = xcalloc((size_t)L + 1, sizeof *v), x;
	/* the cuts of the recommended strategy's pipeline, if it has one */
	const Candidate *pk = an->decision.k && STRATEGY_PIPELINED(an->decision.k->kind)
				      ? an->decision.k
				      : NULL;
	bool cuts = pk && pk->computable && pk->stages > 1 && pk->stage_time;
	Plot cut = { .f = f, .x = LEFT, .y = 80, .w = WIDTH - LEFT - RIGHT, .h = 520 };
	char title[160], buf[32];

	svg_begin(f, WIDTH, 720, "layers", "Per layer: FLOPs, kept activations, parameters");
	if (cuts)
		snprintf(title, sizeof title,
			 "Per layer, per sample (vertical lines: where the "
			 "stages of the recommended %s end)",
			 strategy_name[pk->kind]);
	else
		snprintf(title, sizeof title, "Per layer, per sample");
	svg_text(f, LEFT, 24, "start", "chart-title", title);
	for (int i = 0; i < L; i++)
		v[i] = (double)(g->layer[i].cost.flops_fwd + g->layer[i].cost.flops_bwd);
	strip(f, g, 60, v, "FLOPs (fwd + bwd)", 0, false);
	for (int i = 0; i < L; i++)
		v[i] = (double)an->layer_bytes[i].act;
	strip(f, g, 260, v, "kept activations", 1, true);
	for (int i = 0; i < L; i++)
		v[i] = (double)g->layer[i].cost.params;
	strip(f, g, 460, v, "parameters", 2, false);
	cut.ax = (Axis){ 0, L > 0 ? L : 1, false, "" };
	if (an->per_layer && an->per_layer->done) { /* each layer's own split */
		double bw = cut.w / (L > 0 ? L : 1);
		fputs("<g class=\"per-layer\">\n", f);
		svg_text(f, LEFT - 6, 646, "end", "bar-label", "per-layer split");
		for (int i = 0; i < L; i++) {
			fprintf(f, "<rect class=\"split\" x=\"%.2f\" y=\"636\" width=\"%.2f\" "
				   "height=\"14\" fill=\"%s\"><title>", plot_x(&cut, i), bw,
				svg_colour(an->per_layer->mode[i]));
			esc_xml(f, g->layer[i].name);
			fputs(": ", f);
			esc_xml(f, per_layer_mode_name[an->per_layer->mode[i]]);
			fputs("</title></rect>\n", f);
		}
		svg_legend(f, LEFT, 680, WIDTH - LEFT - RIGHT, per_layer_mode_name, PL_MODES);
		fputs("</g>\n", f);
	}
	if (cuts) {
		fputs("<g class=\"cuts\">\n", f);
		for (int s = 0; s + 1 < pk->stages; s++) {
			x = plot_x(&cut, pk->stage_end[s] + 1);
			snprintf(title, sizeof title, "stage %d ends; its time per micro-batch %s",
				 s, svg_unit(pk->stage_time[s], "s", buf, sizeof buf));
			fprintf(f,
				"<line class=\"cut\" x1=\"%.2f\" y1=\"60\" x2=\"%.2f\" y2=\"580\" "
				"stroke=\"#D55E00\" stroke-dasharray=\"4 3\"><title>",
				x, x);
			esc_xml(f, title);
			fputs("</title></line>\n", f);
		}
		fputs("</g>\n", f);
	}
	svg_end(f);
	free(v);
	(void)an;
	return !ferror(f);
}

const Chart charts[CHART_COUNT] = {
	{ "scaling", true, chart_scaling },
	{ "breakdown", false, chart_breakdown },
	{ "memory", false, chart_memory },
	{ "layers", false, chart_layers },
};

const Chart *
chart_find(const char *name)
{
	for (int i = 0; i < CHART_COUNT; i++)
		if (strcmp(charts[i].name, name) == 0)
			return &charts[i];
	return NULL;
}
