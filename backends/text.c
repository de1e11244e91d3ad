/* text.c -- the human-readable report.  Names from the inputs are
 * written through esc_text() (util/escape.h), so no control character
 * reaches the terminal. */
#include "backends/backends.h"
#include "util/escape.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

/* 25557032 -> "25,557,032" (fixed, locale-independent) */
static const char *
grouped(int64_t v, char *buf)
{
	char tmp[32];
	int n = snprintf(tmp, sizeof tmp, "%" PRId64, v < 0 ? -v : v), j = 0;

	if (v < 0)
		buf[j++] = '-';
	for (int i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			buf[j++] = ',';
		buf[j++] = tmp[i];
	}
	buf[j] = '\0';
	return buf;
}

/* bytes in binary units, 3 significant digits: "97.5 MiB" */
static const char *
bytes(int64_t v, char *buf)
{
	static const char *unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double x = (double)v;
	int u = 0;

	while (x >= 1024 && u < 6)
		x /= 1024, u++;
	if (u == 0)
		snprintf(buf, 32, "%" PRId64 " B", v);
	else
		snprintf(buf, 32, "%.*f %s", x < 10 ? 2 : x < 100 ? 1 : 0, x, unit[u]);
	return buf;
}

/* counts in decimal units: "8.18 G" */
static const char *
si(int64_t v, char *buf)
{
	static const char *unit[] = { "", " K", " M", " G", " T", " P", " E" };
	double x = (double)v;
	int u = 0;

	while (x >= 1000 && u < 6)
		x /= 1000, u++;
	if (u == 0)
		snprintf(buf, 32, "%" PRId64, v);
	else
		snprintf(buf, 32, "%.*f%s", x < 10 ? 2 : x < 100 ? 1 : 0, x, unit[u]);
	return buf;
}

/* a layer's seconds in a narrow column: "812.3 us", "12.41 ms" */
static const char *
short_secs(double v, char *buf)
{
	if (v < 1e-3)
		snprintf(buf, 32, "%.1f us", v * 1e6);
	else if (v < 1)
		snprintf(buf, 32, "%.2f ms", v * 1e3);
	else
		snprintf(buf, 32, "%.3f s", v);
	return buf;
}

enum { DIFFER_SHOWN = 10 };

/* The layers a profile measured where the table's or the model's
 * prediction differs most from the measurement (in seconds, the largest
 * first), DIFFER_SHOWN of them at most. */
static void
differ_lines(const Graph *g, const Analysis *an, int w, FILE *f)
{
	int top[DIFFER_SHOWN], n = 0;
	char b1[32], b2[32];

	for (int i = 0; i < g->nlayer; i++) {
		const LayerTime *t = &an->layer_times[i];
		double d = fabs(t->time_s - t->predicted_s);
		int at;
		if (t->src != TS_PROFILE || isnan(t->predicted_s))
			continue;
		for (at = n; at > 0; at--) { /* insertion: the largest first, ties in order */
			const LayerTime *o = &an->layer_times[top[at - 1]];
			if (fabs(o->time_s - o->predicted_s) >= d)
				break;
			if (at < DIFFER_SHOWN)
				top[at] = top[at - 1];
		}
		if (at < DIFFER_SHOWN) {
			top[at] = i;
			if (n < DIFFER_SHOWN)
				n++;
		}
	}
	if (!n)
		return;
	fprintf(f, "\nmeasured against predicted, the %d layer%s that differ most\n", n,
		n == 1 ? "" : "s");
	fprintf(f, "%5s  %-*s  %10s %10s %7s  %s\n", "#", w, "layer", "measured", "predicted",
		"ratio", "predicted by");
	for (int k = 0; k < n; k++) {
		const LayerTime *t = &an->layer_times[top[k]];
		fprintf(f, "%5d  ", top[k]);
		esc_text_pad(f, g->layer[top[k]].name, (size_t)w);
		fprintf(f, "  %10s %10s ", short_secs(t->time_s, b1),
			short_secs(t->predicted_s, b2));
		double r = t->predicted_s > 0 ? t->time_s / t->predicted_s : NAN;
		if (isnan(r))
			snprintf(b1, sizeof b1, "-");
		else
			snprintf(b1, sizeof b1, "%.*fx", r < 10 ? 2 : r < 1000 ? 1 : 0, r);
		fprintf(f, "%7s", b1);
		fprintf(f, "  %s\n", time_source_name[t->predicted_src]);
	}
}

static void
layer_lines(const Graph *g, const Analysis *an, FILE *f)
{
	char b1[96], b2[32], b3[32], b4[32], b5[32];
	int w = 5;

	for (int i = 0; i < g->nlayer; i++) {
		int n = (int)esc_text(NULL, g->layer[i].name);
		if (n > w)
			w = n < 48 ? n : 48;
	}
	fprintf(f, "\n%5s  %-*s  %-15s %-18s %12s %10s %10s %10s %10s  %s\n", "#", w, "layer",
		"op", "output", "params", "MACs", "FLOPs fwd", "kept", "time", "from");
	for (int i = 0; i < g->nlayer; i++) {
		const Layer *l = &g->layer[i];
		const LayerTime *t = &an->layer_times[i];
		fprintf(f, "%5d  ", i);
		esc_text_pad(f, l->name, (size_t)w);
		fprintf(f, "  %-15s %-18s %12s %10s %10s %10s %10s  %s\n", op_name(l->op),
			shape_str(&g->tensor[l->out[0]].shape, b1, sizeof b1),
			grouped(l->cost.params, b2), si(l->cost.macs, b3),
			si(l->cost.flops_fwd, b4), bytes(an->layer_bytes[i].act, (char[32]){ 0 }),
			short_secs(t->time_s, b5), time_source_name[t->src]);
	}
	differ_lines(g, an, w, f);
}

/* seconds, fixed format: "0.2140 s"; "-" when not computable */
static const char *
secs(bool ok, double v, char *buf)
{
	if (!ok)
		snprintf(buf, 32, "-");
	else if (v >= 100)
		snprintf(buf, 32, "%.0f s", v);
	else
		snprintf(buf, 32, "%.4f s", v);
	return buf;
}

/* The mark after a grid nested other than model-inner (nested_note says
 * what it means). */
static const char *const nest_mark[NEST_COUNT] = { "", "*", "^" };

/* A grid in dimension order, with its nesting's mark. */
static const char *
grid_str(const Candidate *k, char *buf, size_t n)
{
	size_t len;

	if (!*grid_format(k->grid, NULL, 0, buf, n))
		snprintf(buf, n, "-");
	else if (*nest_mark[k->nest] && (len = strlen(buf)) + 2 <= n)
		memcpy(buf + len, nest_mark[k->nest], 2);
	return buf;
}

/* The footnotes of the nestings a table used (a bit per nesting). */
static void
nested_note(unsigned used, FILE *f)
{
	if (used & 1u << NEST_DATA_INNER)
		fputs("* data-inner: the data dimension innermost, so a shard's replicas share a "
		      "node\n  and its model-parallel groups span nodes (docs/model.md, "
		      "\"Placement\")\n",
		      f);
	if (used & 1u << NEST_PIPELINE_OUTER)
		fputs("^ pipeline-outer: the split innermost, then data, the stages outermost "
		      "(Megatron-LM's\n  tp-dp-pp), so a stage's replicas share a node and its "
		      "sends cross nodes\n  (docs/model.md, \"Placement\")\n",
		      f);
}

static void
system_lines(const Analysis *an, FILE *f)
{
	const System *s = an->q.sys;
	char b1[32], b2[32];

	fputs("system       ", f);
	esc_text(f, s->name);
	fputs(" (", f);
	esc_text(f, s->source);
	fprintf(f, "): %d x ", s->gpus_per_node);
	esc_text(f, s->gpu);
	fputs(" per node, ", f);
	esc_text(f, s->intra);
	fprintf(f, " %.0f GB/s, network %.1f GB/s per node\n", s->intra_bw / 1e9, s->nic_bw / 1e9);
	fputs("software     ", f);
	esc_text(f, an->q.impl.name);
	fputs(" (", f);
	esc_text(f, an->q.impl.source);
	fputs("): ", f);
	esc_text(f, an->q.impl.framework);
	fputc('\n', f);
	if (an->q.set.global_batch)
		snprintf(b1, sizeof b1, "global batch %" PRId64, an->q.set.global_batch);
	else
		snprintf(b1, sizeof b1, "%" PRId64 " samples per GPU", an->q.set.batch_per_gpu);
	fprintf(f, "training     %" PRId64 " GPU%s, %s, %s, %s, %s samples per epoch",
		an->q.set.gpus, an->q.set.gpus == 1 ? "" : "s", b1, precision_name(an->q.set.prec),
		optimizer_name(an->q.set.opt), grouped(an->q.set.dataset_size, b2));
	if (an->q.set.zero)
		fprintf(f, ", ZeRO stage %d%s", an->q.set.zero,
			an->q.set.zero_node ? " inside each node (FSDP hybrid)" : "");
	if (an->rc.k == RECOMPUTE_SELECTIVE)
		fputs(", selective recomputation (attention)", f);
	else if (an->rc.k)
		fprintf(f, ", recomputation every %d layers", an->rc.k);
	if (an->q.set.forward_only)
		fputs(", forward only", f);
	fputc('\n', f);
}

/* samples per second, 3 significant digits or whole: "2,118", "45.3" */
static const char *
rate(bool ok, double v, char *buf)
{
	if (!ok)
		snprintf(buf, 32, "-");
	else if (v >= 1000)
		grouped((int64_t)(v + 0.5), buf);
	else
		snprintf(buf, 32, "%.*f", v >= 100 ? 0 : v >= 10 ? 1 : 2, v);
	return buf;
}

/* a fraction as a percentage: "37.0 %" */
static const char *
percent(bool ok, double v, char *buf)
{
	if (!ok)
		snprintf(buf, 32, "-");
	else
		snprintf(buf, 32, "%.1f %%", 100 * v);
	return buf;
}

/* One part of an iteration in its column: "-" without times, "0" for
 * none, else seconds. */
static const char *
part(bool ok, double v, char *buf)
{
	if (!ok)
		snprintf(buf, 32, "-");
	else if (v == 0)
		snprintf(buf, 32, "0");
	else
		snprintf(buf, 32, v >= 100 ? "%.1f" : "%.4f", v);
	return buf;
}

/* The fits column: "yes", "no" where the memory does not fit, "not run"
 * where the implementation does not run the strategy, "-" beyond its
 * limits (no prediction). */
static const char *
fits(const Candidate *k)
{
	return k->not_run ? "not run" : !k->computable ? "-" : k->feasible ? "yes" : "no";
}

/* The grid column: 30 characters, wider where a grid's text is longer
 * (dptc's four sizes and a placement's mark) */
enum { GRID_WIDTH = 30 };

static int
widest(int w, const char *text)
{
	int n = (int)strlen(text);

	return n > w ? n : w;
}

/* A peak in FLOP/s as TFLOP/s: "494.7 TFLOP/s" */
static const char *
flops(double v, char *buf)
{
	snprintf(buf, 32, "%.1f TFLOP/s", v / 1e12);
	return buf;
}

/* The strategies in rank order (the recommendation first, then the
 * feasible by epoch), and the parts each iteration adds up. */
static void
strategy_table(const Analysis *an, FILE *f)
{
	char grid[96], b1[32], b3[32], b4[32], b5[32], b6[32], b7[32], mb[32];
	unsigned nested = 0;
	int idx[STRAT_COUNT], n = rank_order(an, idx), w = 9, gw = GRID_WIDTH;

	for (int i = 0; i < n; i++)
		gw = widest(gw, grid_str(&an->cand[idx[i]], grid, sizeof grid));
	fprintf(f, "\n%-9s %-*s %-7s %10s %10s %10s %6s %11s  %s%s\n", "strategy", gw, "grid",
		"fits", "iteration", "epoch", "samples/s", "MFU", "memory/GPU",
		an->max_batch ? "max batch/GPU  " : "", "limited by");
	for (int i = 0; i < n; i++) {
		const Candidate *k = &an->cand[idx[i]];
		if (an->max_batch)
			snprintf(mb, sizeof mb, "%13" PRId64 "  ", k->max_batch);
		fprintf(f, "%-9s %-*s %-7s %10s %10s %10s %6s %11s  %s%s\n",
			strategy_name[k->kind], gw, grid_str(k, grid, sizeof grid), fits(k),
			secs(k->computable, k->t.total, b3),
			secs(k->computable, k->epoch, b4), rate(k->computable, k->throughput, b6),
			percent(k->computable, k->mfu, b7),
			k->computable ? bytes((int64_t)k->mem.total, b5) : "-",
			an->max_batch ? mb : "", k->feasible ? k->bottleneck : k->reason);
		nested |= 1u << k->nest;
	}
	nested_note(nested, f);
	for (int i = 0; i < n; i++)
		if (an->cand[idx[i]].mfu_peak > 0) {
			fprintf(f, "MFU: the model's FLOPs per second per GPU over %s, the dense "
				   "peak of the formats its matrix products run in at %s\n  "
				   "(docs/model.md, \"Throughput and MFU\")\n",
				flops(an->cand[idx[i]].mfu_peak, b1),
				precision_name(an->q.set.prec));
			break;
		}
	/* --max-batch: where the dataset, not the memory, stopped it */
	for (int i = 0, m = 0; an->max_batch && i < n; i++) {
		const Candidate *k = &an->cand[idx[i]];
		if (k->max_batch && k->max_batch_why)
			fprintf(f, "%s%s",
				m++ ? ", "
				    : "max batch/GPU at the dataset's limit (a larger "
				      "global batch would exceed it): ",
				strategy_name[k->kind]);
		if (i == n - 1 && m)
			fputc('\n', f);
	}
	/* every part the iteration adds (the input pipeline overlaps them:
	 * an iteration is their sum, or the input's time where that is
	 * longer); synchronised batch norm and the slowest of N where any
	 * strategy has them */
	bool shown[ITER_COLUMNS];
	fprintf(f, "\niteration by part (s): compute + bubble + exchange + reducer + collectives + "
		   "p2p/halo + update\n  + recompute + copies + host wait");
	for (int j = 0; j < ITER_COLUMNS; j++)
		if ((shown[j] = iter_column_shown(an, j)) && iter_column[j].optional)
			fprintf(f, " + %s", iter_column[j].name);
	fprintf(f, " = iteration, or the input pipeline's time where that is longer\n%-9s",
		"strategy");
	for (int j = 0; j < ITER_COLUMNS; j++)
		if (shown[j])
			fprintf(f, " %*s", w, iter_column[j].head);
	fputc('\n', f);
	for (int i = 0; i < n; i++) {
		const Candidate *k = &an->cand[idx[i]];
		if (!k->computable)
			continue;
		fprintf(f, "%-9s", strategy_name[k->kind]);
		for (int j = 0; j < ITER_COLUMNS; j++)
			if (shown[j])
				fprintf(f, " %*s", w, part(true, iter_column_value(&k->t, j), b1));
		fputc('\n', f);
	}
}

/* seconds per sample: "3.1195 ms", "2.1081 s" */
static const char *
per_sample(double v, char *buf)
{
	if (v < 1)
		snprintf(buf, 32, "%.4f ms", v * 1e3);
	else
		snprintf(buf, 32, "%.4f s", v);
	return buf;
}

/* The measured times the report used: how many layers, the total, each
 * span shared out over several layers, and the 1:2 assumption. */
static void
profile_lines(const Graph *g, Precision p, FILE *f)
{
	int timed = 0;
	double sum = 0;
	bool guessed = false;
	char b1[32];

	for (int i = 0; i < g->nlayer; i++)
		if (g->layer[i].timed)
			timed++,
			sum += layer_measured(g, i, p, false) + layer_measured(g, i, p, true);
	for (int i = 0; i < g->ntiming; i++)
		guessed |= !g->timing[i].split;
	fprintf(f, "profile      %d of %d layers measured: %s per sample, forward and backward\n",
		timed, g->nlayer, per_sample(sum, b1));
	for (int i = 0; i < g->ntiming; i++) {
		const Timing *t = &g->timing[i];
		int n = t->last - t->first + 1;
		if (n == 1)
			continue;
		fputs("             ", f);
		esc_text(f, t->loc.file);
		fprintf(f, ":%d: %s for %s%d layers (", t->loc.line,
			per_sample(t->fwd + t->bwd, b1), n == g->nlayer ? "all " : "", n);
		esc_text(f, g->layer[t->first].name);
		fputs(" to ", f);
		esc_text(f, g->layer[t->last].name);
		fputs("), shared out in proportion to their estimates\n", f);
	}
	if (guessed)
		fprintf(f, "             forward:backward taken as 1:2 where only a total was "
			   "measured\n");
}

/* an epoch time in a narrow column: about 3 significant digits */
static const char *
epoch(double v, char *buf)
{
	snprintf(buf, 32, "%.*f s", v >= 100 ? 0 : v >= 10 ? 1 : v >= 1 ? 2 : 3, v);
	return buf;
}

/* --sweep: one row per GPU count, the epoch time of every strategy asked
 * for, and the best. */
static void
sweep_table(const Analysis *an, FILE *f)
{
	char b[32], grid[96];
	unsigned nested = 0;

	fprintf(f, "\nsweep: epoch time by GPU count (\"-\": beyond the strategy's limit, "
		   "\"oom\": does not fit, \"not run\": not by the implementation);\n"
		   "per GPU: the best's samples/s a GPU over one node's (%" PRId64 " GPUs)\n%7s",
		an->node_gpus, "gpus");
	for (int k = 0; k < STRAT_COUNT; k++)
		if (an->cand[k].analysed)
			fprintf(f, " %10s", strategy_name[k]);
	fprintf(f, "  per GPU  best\n");
	for (int i = 0; i < an->nsweep; i++) {
		const Analysis *s = &an->sweep[i];
		fprintf(f, "%7" PRId64, s->q.set.gpus);
		for (int k = 0; k < STRAT_COUNT; k++) {
			const Candidate *c = &s->cand[k];
			if (c->analysed)
				fprintf(f, " %10s", !c->computable ? "-" : c->not_run ? "not run"
						    : !c->feasible ? "oom" : epoch(c->epoch, b));
		}
		if (s->node_scaling > 0)
			fprintf(f, " %8.3f", s->node_scaling);
		else
			fprintf(f, " %8s", "-");
		if (s->best < 0)
			fprintf(f, "  none fits\n");
		else
			fprintf(f, "  %s (%s)\n", strategy_name[s->best],
				grid_str(&s->cand[s->best], grid, sizeof grid));
		nested |= s->best >= 0 ? 1u << s->cand[s->best].nest : 0;
	}
	nested_note(nested, f);
}

/* The recommended strategy's memory per GPU by part (MemUse). */
static void
memory_line(const Candidate *k, FILE *f)
{
	const struct {
		const char *name;
		double v;
	} part[] = {
		{ "weights", k->mem.weights },       { "gradients", k->mem.grads },
		{ "optimizer", k->mem.optimizer },   { "activations", k->mem.activations },
		{ "backward peak", k->mem.transient }, { "workspace", k->mem.workspace },
		{ "reserved", k->mem.buffers },
	};
	char b[32];

	fprintf(f, "memory per GPU: %s at the peak =", bytes((int64_t)k->mem.total, b));
	for (size_t i = 0; i < sizeof part / sizeof part[0]; i++)
		fprintf(f, "%s %s %s", i ? " +" : "", part[i].name, bytes((int64_t)part[i].v, b));
	fprintf(f, ".\n");
}

/* --per-layer: the choice against the uniform ones, and the runs of
 * layers in one mode. */
static void
per_layer_lines(const Graph *g, const Analysis *an, FILE *f)
{
	const PerLayer *pl = an->per_layer;
	char b[32];

	fprintf(f, "\nper-layer: %d blocks on %lld GPUs, global batch %.0f: %s per iteration "
		   "(uniform:", pl->nblocks, (long long)an->q.set.gpus, pl->global_batch,
		secs(true, pl->time, b));
	for (int m = 0; m < PL_MODES; m++)
		fprintf(f, " %s %s", per_layer_mode_name[m],
			isfinite(pl->uniform[m]) ? secs(true, pl->uniform[m], b) : "-");
	fprintf(f, "), %s per GPU%s\n", bytes((int64_t)pl->memory, b),
		!pl->fits    ? ": does not fit in GPU memory"
		: pl->limited ? " (chosen to fit: the fastest assignment does not)"
			      : "");
	for (int i = 0; i < g->nlayer;) {
		int j = i;
		char how[64];
		while (j + 1 < g->nlayer && pl->mode[j + 1] == pl->mode[i] &&
		       pl->degree[j + 1] == pl->degree[i])
			j++;
		/* a mode on all GPUs by its name; on fewer, the grid */
		if (pl->mode[i] == PL_DATA || pl->degree[i] == an->q.set.gpus)
			snprintf(how, sizeof how, "%s", per_layer_mode_name[pl->mode[i]]);
		else
			snprintf(how, sizeof how, "data=%lld x %s=%lld",
				 (long long)(an->q.set.gpus / pl->degree[i]),
				 per_layer_mode_name[pl->mode[i]], (long long)pl->degree[i]);
		fprintf(f, "  %-8s layers %d-%d (", how, i, j);
		esc_text(f, g->layer[i].name);
		fputs(" .. ", f);
		esc_text(f, g->layer[j].name);
		fputs(")\n", f);
		i = j + 1;
	}
}

/* --search: the best configurations, and why each lost to the first. */
static void
search_table(const Search *s, FILE *f)
{
	char b1[32], b2[32], b3[32], b4[32];
	unsigned nested = 0;
	bool sp = false;

	fprintf(f, "\nsearch: %d configurations evaluated, %d pruned%s; the best %d:\n",
		s->evaluated, s->pruned,
		s->stopped ? ", stopped at --search-time with some untried" : "", s->ntop);
	if (s->simpler[0])
		fprintf(f, "%s.\n", s->simpler);
	char grids[SEARCH_TOP][96];
	int gw = GRID_WIDTH;

	for (int i = 0; i < s->ntop; i++) {
		const SearchConfig *c = &s->top[i];
		Candidate k = { .kind = c->kind, .nest = c->nest };
		memcpy(k.grid, c->grid, sizeof k.grid);
		char *grid = grids[i];
		grid_str(&k, grid, sizeof grids[i]);
		if (c->sequence_parallel) /* Megatron's, beside the tensor split */
			strncat(grid, " +sp", sizeof grids[i] - strlen(grid) - 1), sp = true;
		gw = widest(gw, grid);
	}
	fprintf(f, "%-9s %-*s %-14s %-9s %4s %-10s %10s %10s %6s %11s  %s\n", "strategy", gw,
		"grid", "schedule", "precision", "zero", "recompute", "iteration", "epoch", "MFU",
		"memory/GPU", "lost by");
	for (int i = 0; i < s->ntop; i++) {
		const SearchConfig *c = &s->top[i];
		const char *grid = grids[i];
		char sched[32], rc[32];
		if (!STRATEGY_PIPELINED(c->kind))
			snprintf(sched, sizeof sched, "-");
		else
			schedule_label(c->schedule, c->virtual_stages, sched, sizeof sched);
		recompute_label(c->recompute, rc, sizeof rc);
		fprintf(f, "%-9s %-*s %-14s %-9s %3d%s %-10s %10s %10s %6s %11s  %s\n",
			strategy_name[c->kind], gw, grid, sched,
			precision_name(c->prec), c->zero, c->zero_node ? "h" : " ", rc,
			secs(true, c->iteration, b1), secs(true, c->epoch, b2),
			percent(true, c->mfu, b4), bytes((int64_t)c->memory, b3),
			i ? c->why : "(recommended)");
		nested |= 1u << c->nest;
	}
	nested_note(nested, f);
	if (sp)
		fputs("+sp: with Megatron's sequence parallelism (--sequence-parallel)\n", f);
	fputs("MFU: over the dense peak of each configuration's precision (JSON: "
	      "mfu_peak_flops)\n", f);
}

/* The decision's strategy and grid, and under --search its settings:
 * "data parallelism (data=1024), amp-bf16, ZeRO stage 2" */
static const char *
decided(const Analysis *an, char *buf, size_t n)
{
	const Decision *d = &an->decision;
	char grid[96], c[CONFIG_TEXT_MAX];
	const char *settings;

	config_text(&d->c, c, sizeof c);
	/* what follows the grid's ")" */
	settings = an->search ? strstr(c, "), ") : NULL;
	snprintf(buf, n, "%s parallelism (%s)%s", strategy_name[d->c.kind],
		 grid_str(d->k, grid, sizeof grid), settings ? settings + 1 : "");
	return buf;
}

static void
recommendation(const Analysis *an, FILE *f)
{
	const Decision *d = &an->decision;
	const Candidate *k = d->k;
	const PerLayer *pl = an->per_layer;
	char what[CONFIG_TEXT_MAX + 96], b1[32], b2[32], b3[32];

	if (d->from == DECIDED_NONE) {
		fprintf(f, "\nrecommendation: %s.\n", an->why_none);
		for (int i = 0; i < an->nwarning; i++)
			fprintf(f, "warning [%s]: %s.\n", an->warning[i].code,
				an->warning[i].message);
		return;
	}
	if (d->from == DECIDED_PER_LAYER) {
		fprintf(f, "\nrecommendation: use the per-layer splits (below): %s per iteration, "
			   "%s per epoch", secs(true, pl->time, b1), secs(true, pl->epoch, b2));
		if (k)
			fprintf(f, ".\nbest strategy: use %s: %s per iteration, %s per epoch",
				decided(an, what, sizeof what), secs(true, k->t.total, b1),
				secs(true, k->epoch, b2));
		else
			fputs("; no uniform strategy fits", f);
	} else {
		fprintf(f, "\nrecommendation%s: use %s: %s per iteration, %s per epoch",
			d->from == DECIDED_SEARCH ? " (the search's best, below)" : "",
			decided(an, what, sizeof what), secs(true, k->t.total, b1),
			secs(true, k->epoch, b2));
	}
	if (!k) {
		fputs(".\n", f);
		for (int i = 0; i < an->nwarning; i++)
			fprintf(f, "warning [%s]: %s.\n", an->warning[i].code,
				an->warning[i].message);
		return;
	}
	if (d->runner_up > 1.005)
		fprintf(f, ", %.2fx faster than the next best", d->runner_up);
	fprintf(f, "; it is limited by %s.\n", k->bottleneck);
	if (k->tokens > 0) {
		fprintf(f, "tokens: %s per second", rate(true, k->tokens, b1));
		if (k->mfu_std > 0)
			fprintf(f, ", MFU %s by the standard count (Narayanan et al. 2021, eq. 3) "
				   "against %s by the layers' FLOPs", percent(true, k->mfu_std, b2),
				percent(true, k->mfu, b3));
		fputs(".\n", f);
	}
	memory_line(k, f);
	for (int i = 0; i < an->nnote; i++)
		fprintf(f, "note: %s.\n", an->note[i]);
	for (int i = 0; i < an->nwarning; i++)
		fprintf(f, "warning [%s]: %s.\n", an->warning[i].code, an->warning[i].message);
}

/* A sequence model's length, and a transformer's dimensions as
 * Megatron-LM names them with the standard count of its FLOPs. */
static void
transformer_lines(const Graph *g, const Analysis *an, FILE *f)
{
	const Transformer *t = &an->tf;
	char b1[32], b2[32];

	fprintf(f, "sequence     %s tokens per sample\n", grouped(g->seq_len, b1));
	if (!t->layers)
		return;
	fprintf(f, "transformer  %d layers, hidden %" PRId64 ", %" PRId64 " heads of %" PRId64,
		t->layers, t->hidden, t->heads, t->head_dim);
	if (t->kv_groups != t->heads)
		fprintf(f, " (%" PRId64 " key/value groups)", t->kv_groups);
	fprintf(f, ", ffn %" PRId64 "%s", t->ffn, t->swiglu ? " (SwiGLU)" : "");
	if (t->vocab)
		fprintf(f, ", vocabulary %s", grouped(t->vocab, b1));
	fprintf(f, "\n             %s, %s positions (%s), %s\n",
		t->rmsnorm ? "RMSNorm" : "LayerNorm",
		t->rope ? "rotary" : t->learned ? "learned" : "no", grouped(t->positions, b2),
		t->output < 0 ? "no output layer over the vocabulary"
		: t->untied   ? "untied output layer"
			      : "output layer tied to the embedding");
	fprintf(f, "FLOPs (std)  %s per sample, forward and backward: 72 s l h^2 (1 + s/6h + "
		   "V/12lh)\n             (Narayanan et al. 2021, eq. 3; Megatron-LM's count)\n",
		si((int64_t)an->tf_flops[0], b1));
}

bool
text_emit(const Graph *g, const Analysis *an, const ReportOpts *o, FILE *f)
{
	const Totals *t = &g->total;
	const ModelBytes *b = &an->bytes;
	char b1[32], b2[32], b3[96];

	fputs("model        ", f);
	esc_text(f, g->name);
	fputs(" (", f);
	esc_text(f, g->source);
	fprintf(f, ", %s)\n", g->format);
	for (int i = 0; i < g->ninput; i++) {
		const Tensor *in = &g->tensor[g->input[i]];
		fputs("input        ", f);
		esc_text(f, in->name);
		fprintf(f, ": %s per sample\n", shape_str(&in->shape, b3, sizeof b3));
	}
	fprintf(f, "layers       %d\n", g->nlayer);
	fprintf(f, "parameters   %s (%s at %d bytes each)\n", grouped(t->params, b1),
		bytes(b->weights, b2), b->item);
	fprintf(f, "MACs         %s forward per sample\n", grouped(t->macs, b1));
	fprintf(f, "FLOPs        %s forward, %s backward per sample\n", si(t->flops_fwd, b1),
		si(t->flops_bwd, b2));
	fprintf(f, "activations  %s per sample kept for backward\n", bytes(b->act, b1));
	fprintf(f, "saved        %s per sample as autograd saves it (fp32, input excluded)",
		bytes(b->saved, b1));
	if (b->saved_fixed)
		fprintf(f, " + %s per batch", bytes(b->saved_fixed, b2));
	fputc('\n', f);
	if (g->seq_len)
		transformer_lines(g, an, f);
	if (g->batch)
		fprintf(f, "batch        the file fixes the batch at %" PRId64
			   "; figures are per sample\n", g->batch);
	if (g->bn_restored)
		fprintf(f, "note         BatchNormalization, folded into the convolutions by an "
			   "eval-mode\n             export, restored after %d of them "
			   "(--as-exported: the file's graph)\n", g->bn_restored);
	else if (g->bn_folded)
		fprintf(f, "note         BatchNormalization looks folded into the convolutions "
			   "(an eval-mode export);\n             the counts are of the file\n");
	if (g->merged_inits)
		fprintf(f,
			"note         %d initializer%s of equal elements read by several modules "
			"(the exporter's merges\n             of a fresh model's ones and zeros): "
			"counted once per module, %s parameters more\n",
			g->merged_inits, g->merged_inits == 1 ? "" : "s",
			grouped(g->merged_params, b1));
	for (int i = 0; i < g->nunknown; i++) {
		fputs("unknown op   ", f);
		esc_text(f, g->unknown[i].op);
		fprintf(f, ": %d node%s of %d layers, counted as zero\n", g->unknown[i].count,
			g->unknown[i].count == 1 ? "" : "s", g->nlayer);
	}
	if (g->dataset_size)
		fprintf(f, "dataset      %s samples\n", grouped(g->dataset_size, b1));
	if (g->ntiming)
		profile_lines(g, an->q.set.prec, f);
	system_lines(an, f);
	strategy_table(an, f);
	recommendation(an, f);
	if (an->search)
		search_table(an->search, f);
	if (an->per_layer && an->per_layer->done)
		per_layer_lines(g, an, f);
	if (an->nsweep)
		sweep_table(an, f);
	if (o->layers)
		layer_lines(g, an, f);
	return !ferror(f);
}
