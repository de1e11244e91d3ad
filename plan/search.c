/* search.c -- the joint search (--search; docs/model.md, "Search"): every
 * strategy on every grid of the GPU count (each factorization of a
 * hybrid), crossed with the choices no option fixes -- the pipeline
 * schedule (GPipe, 1F1B, interleaved with 2 chunks), the ZeRO stage (0-3,
 * and stage 3 inside each node, FSDP hybrid, when the GPUs span nodes)
 * and recomputation (none, full) -- each predicted by the cost model as a
 * single analysis would; the pipeline's micro-batch count is chosen inside
 * each prediction, as always.  Ranked as the analysis ranks: feasible
 * first, then the shorter epoch.  The best SEARCH_TOP are kept, each loser
 * with why it lost.
 *
 * Pruning: ZeRO and recomputation never shorten anything but the weight
 * update (ZeRO's sharded step; FSDP hybrid, whose exchange is another, is
 * never pruned), so once a grid's plain configuration fits
 * and its time without the update already exceeds the best epoch found,
 * its variants are skipped (counted as pruned). */
#include "model/model.h"
#include "plan/analysis.h"
#include "plan/plan.h"
#include "util/clock.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* a before b: feasible first, then the shorter epoch */
static bool
ahead(const SearchConfig *a, const SearchConfig *b)
{
	if (a->feasible != b->feasible)
		return a->feasible;
	return a->epoch < b->epoch;
}

/* Keeps c among the best SEARCH_TOP, in order. */
static void
keep(Search *s, const SearchConfig *c)
{
	int i = s->ntop < SEARCH_TOP ? s->ntop++ : SEARCH_TOP;

	if (i == SEARCH_TOP && !ahead(c, &s->top[SEARCH_TOP - 1]))
		return;
	if (i == SEARCH_TOP)
		i = SEARCH_TOP - 1;
	while (i > 0 && ahead(c, &s->top[i - 1])) {
		s->top[i] = s->top[i - 1];
		i--;
	}
	s->top[i] = *c;
}

/* One configuration: predicted, recorded, kept if among the best. */
static const Candidate *
evaluate(const Graph *g, Analysis *a, const StrategyOpts *o, StrategyKind kind,
	 const int64_t grid[DIM_COUNT], Search *s, Candidate *k)
{
	SearchConfig c = { .kind = kind };
	StrategyOpts so = *o;

	so.beat = s->best < INFINITY ? s->best : 0;
	so.no_stages = true; /* k's stages are not read: none allocated */
	strategy_predict(g, a, &so, kind, grid, k);
	if (k->reason == pipeline_bounded) {
		s->pruned++;
		return k;
	}
	s->evaluated++;
	if (!k->computable)
		return k;
	memcpy(c.grid, k->grid, sizeof c.grid);
	c.nest = k->nest;
	c.schedule = a->schedule;
	c.virtual_stages = a->virtual_stages;
	c.zero = a->zero;
	c.zero_node = a->zero_node;
	c.prec = a->prec;
	c.recompute = a->rc.k;
	c.micro_batches = k->micro_batches;
	c.iteration = k->t.total;
	c.epoch = k->epoch;
	c.memory = k->mem.total;
	c.feasible = k->feasible;
	c.reason = k->reason;
	c.bottleneck = k->bottleneck;
	keep(s, &c);
	if (c.feasible && c.epoch < s->best)
		s->best = c.epoch;
	return k;
}

/* The variants of one grid: schedules (pipelines), ZeRO stages,
 * recomputation, with the plain one first for the bound. */
static void
grid_variants(const Graph *g, const Analysis *an, const StrategyOpts *o, const SearchFix *fix,
	      const Recompute *full, StrategyKind kind, const int64_t grid[DIM_COUNT], Search *s)
{
	static const struct { Schedule sched; int v; } scheds[] = {
		{ SCHED_GPIPE, 1 }, { SCHED_1F1B, 1 }, { SCHED_INTERLEAVED, 2 },
	};
	int nsched = STRATEGY_PIPELINED(kind) && !fix->schedule ? 3 : 1;
	/* z = 4: stage 3 inside each node (FSDP hybrid), when the GPUs span
	 * nodes; pipelines take ZeRO-1 at most (docs/model.md) */
	int z0 = fix->zero ? an->zero + (an->zero_node ? 1 : 0) : 0;
	int z1 = fix->zero ? z0
		 : STRATEGY_PIPELINED(kind) ? 1
		 : an->gpus > an->sys->gpus_per_node ? 4
						      : 3;
	int nr = fix->recompute ? 1 : 2;
	Analysis a = *an;
	Candidate k;

	for (int si = 0; si < nsched; si++) {
		bool bound = false;
		if (nsched > 1)
			a.schedule = scheds[si].sched, a.virtual_stages = scheds[si].v;
		for (int z = z0; z <= z1; z++)
			for (int r = 0; r < nr; r++) {
				const Candidate *c;
				/* hybrid's exchange differs from DDP's: not bounded */
				if (bound && z < 4) {
					s->pruned++;
					continue;
				}
				a.zero = z < 4 ? z : 3;
				a.zero_node = z == 4;
				a.rc = fix->recompute ? an->rc : r ? *full : (Recompute){ 0 };
				c = evaluate(g, &a, o, kind, grid, s, &k);
				/* the plain configuration sets the bound for the rest */
				if (z == z0 && r == 0 && c->computable &&
				    c->feasible && c->t.total > 0 &&
				    c->epoch * (c->t.total - c->t.update) / c->t.total > s->best)
					bound = true;
			}
	}
}

void
search_begin(Search *s, double budget_s)
{
	*s = (Search){ .best = INFINITY, .deadline = budget_s > 0 ? clock_ms() + budget_s * 1e3 : 0 };
}

bool
search_run(const Graph *g, const Analysis *an, const StrategyOpts *o, const SearchFix *fix,
	   Search *s)
{
	Recompute full = { 0 };
	int64_t p = an->gpus;

	if (!fix->recompute)
		recompute_plan(g, 0, &full);
	for (int kind = 0; kind < STRAT_COUNT; kind++) {
		int64_t grid[DIM_COUNT], it = 0;
		if (!(o->mask & (1u << kind)))
			continue;
		while (grid_next((StrategyKind)kind, p, &it, grid)) {
			if (s->deadline && clock_ms() > s->deadline) {
				s->stopped = true;
				return true;
			}
			grid_variants(g, an, o, fix, &full, (StrategyKind)kind, grid, s);
		}
	}
	return true;
}

void
search_end(Search *s)
{
	/* why each kept one but the first lost */
	for (int i = 1; i < s->ntop; i++) {
		SearchConfig *c = &s->top[i];
		if (!c->feasible)
			snprintf(c->why, sizeof c->why, "%s", c->reason ? c->reason : "does not fit");
		else if (s->top[0].feasible)
			snprintf(c->why, sizeof c->why, "%.3fx the best epoch time (%s)",
				 c->epoch / s->top[0].epoch, c->bottleneck);
	}
}

/* The mixed precisions a GPU runs: fp32, TF32 where it has it, and
 * autocast to each 16-bit format it has (pure fp16 and bf16 are left out:
 * they change the numerics beyond what a tuning search should decide). */
static bool
runs(const System *sys, Precision p)
{
	switch (p) {
	case PREC_FP32: return true;
	case PREC_TF32: return sys->peak[DT_TF32] > 0;
	case PREC_AMP_FP16: return sys->peak[DT_FP16] > 0;
	case PREC_AMP_BF16: return sys->peak[DT_BF16] > 0;
	default: return false;
	}
}

bool
search_all(Graph *g, const Analysis *an, const Settings *set, const StrategyOpts *o,
	   const SearchFix *fix, double budget_s, Search *s)
{
	Analysis a;
	Precision cur = set->prec;
	bool ok = true, moved = false;

	search_begin(s, budget_s);
	if (fix->precision) {
		ok = search_run(g, an, o, fix, s);
		search_end(s);
		return ok;
	}
	/* g is counted at set's precision: an serves it until g moves */
	for (int p = 0; p < PREC_COUNT && ok && !s->stopped; p++) {
		Settings at = *set;
		if (!runs(an->sys, (Precision)p))
			continue;
		at.prec = (Precision)p;
		if (p != (int)cur) {
			ok = analysis_precision(g, &a, &at, an->sys);
			cur = (Precision)p;
			moved = true;
		}
		ok = ok && search_run(g, moved ? &a : an, o, fix, s);
	}
	/* g back as the rest of the run (report, sweep, advice) reads it */
	if (cur != set->prec)
		ok = analysis_precision(g, &a, set, an->sys) && ok;
	search_end(s);
	return ok;
}
