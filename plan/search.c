/* search.c -- the joint search (--search; docs/model.md, "Search"): every
 * strategy on every grid of the GPU count (each factorization of a
 * hybrid), crossed with the choices no option fixes -- the pipeline
 * schedule (GPipe, 1F1B, interleaved with 2 chunks), the ZeRO stage (0-3,
 * and stage 3 inside each node, FSDP hybrid, when the GPUs span nodes)
 * and recomputation (none, full) -- and, on a grid with a tensor dimension
 * of a transformer, Megatron's sequence parallelism (off, on) and its
 * selective recomputation (the attention core), and beside a 16-bit
 * precision the user gave on a transformer, fp8 where the GPUs have its
 * peak -- each predicted by the cost model as a single analysis would
 * (never a tensor group larger than a node); the pipeline's micro-batch
 * count is chosen inside each prediction, as always.  Ranked as the analysis ranks: feasible
 * first, then the shorter epoch.  The best SEARCH_TOP are kept, each loser
 * with why it lost.
 *
 * Pruning: ZeRO and recomputation never shorten anything but the weight
 * update (ZeRO's sharded step; FSDP hybrid, whose exchange is another, is
 * never pruned), so once a grid's plain configuration (at a schedule and
 * a sequence parallelism, which shortens the whole layers) fits
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
	SearchConfig c;
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
	candidate_config(a, k, &c);
	keep(s, &c);
	if (c.feasible && c.epoch < s->best)
		s->best = c.epoch;
	if (c.feasible) {
		int z = c.zero, d = grid_dimensions(c.grid) - 1, r = c.recompute != 0;
		if (!s->has_simplest[z][d][r] || c.epoch < s->simplest[z][d][r].epoch)
			s->simplest[z][d][r] = c, s->has_simplest[z][d][r] = true;
	}
	return k;
}

/* The recomputations the search tries on grid, into rk (RECOMPUTE_*
 * of settings.def) and rc: what --recompute fixes, else none, full
 * where the implementation runs segments, and selective (Megatron's
 * attention core) where it runs that and a tensor dimension splits a
 * transformer (the layers it frees are the attention's). */
static int
recomputes(const Analysis *an, const SearchFix *fix, const Recompute *full, const Recompute *sel,
	   const int64_t grid[DIM_COUNT], int rk[3], Recompute rc[3])
{
	const Implementation *im = &an->q.impl;
	int n = 0;

	if (fix->recompute) {
		rk[0] = an->q.set.recompute, rc[0] = an->rc;
		return 1;
	}
	rk[n] = RECOMPUTE_NONE, rc[n++] = (Recompute){ 0 };
	if (impl_runs_recompute(im, 1))
		rk[n] = RECOMPUTE_FULL, rc[n++] = *full;
	if (grid[DIM_TENSOR] > 1 && an->tf.layers > 0 && sel->redo &&
	    impl_runs_recompute(im, RECOMPUTE_SELECTIVE))
		rk[n] = RECOMPUTE_ATTENTION, rc[n++] = *sel;
	return n;
}

/* The variants of one grid: schedules (pipelines), sequence parallelism
 * (a transformer's tensor dimension), ZeRO stages, recomputation, with
 * the plain one first for the bound. */
static void
grid_variants(const Graph *g, const Analysis *an, const StrategyOpts *o, const SearchFix *fix,
	      const Recompute *full, const Recompute *sel, StrategyKind kind,
	      const int64_t grid[DIM_COUNT], Search *s)
{
	static const struct { Schedule sched; int v; } scheds[] = {
		{ SCHED_GPIPE, 1 }, { SCHED_1F1B, 1 }, { SCHED_INTERLEAVED, 2 },
	};
	int nsched = STRATEGY_PIPELINED(kind) && !fix->schedule ? 3 : 1;
	const Implementation *im = &an->q.impl;
	/* z = 4: stage 3 inside each node (FSDP hybrid), when the GPUs span
	 * nodes; pipelines take ZeRO-1 at most (docs/model.md) */
	int z0 = fix->zero ? an->q.set.zero + (an->q.set.zero_node ? 1 : 0) : 0;
	int z1 = fix->zero ? z0
		 : STRATEGY_PIPELINED(kind) ? 1
		 : an->q.set.gpus > an->q.sys->gpus_per_node ? 4
						      : 3;
	/* what no option fixes, only as the implementation runs it */
	int rk[3], nr;
	Recompute rc[3];
	int nsp = !fix->sequence_parallel && grid[DIM_TENSOR] > 1 && an->tf.layers > 0 ? 2 : 1;
	Analysis a = *an;
	Candidate k;

	nr = recomputes(an, fix, full, sel, grid, rk, rc);
	for (int si = 0; si < nsched * nsp; si++) {
		bool bound = false, first = true;
		if (nsched > 1 && !impl_runs_schedule(im, scheds[si / nsp].sched))
			continue;
		if (nsched > 1)
			a.q.set.schedule = scheds[si / nsp].sched,
			a.q.set.virtual_stages = scheds[si / nsp].v;
		if (nsp > 1)
			a.q.set.sequence_parallel = si % nsp == 1;
		for (int z = z0; z <= z1; z++) {
			if (!fix->zero && !impl_runs_zero(im, z < 4 ? z : 3, z == 4))
				continue;
			for (int r = 0; r < nr; r++) {
				const Candidate *c;
				/* hybrid's exchange differs from DDP's: not bounded */
				if (bound && z < 4) {
					s->pruned++;
					continue;
				}
				a.q.set.zero = z < 4 ? z : 3;
				a.q.set.zero_node = z == 4;
				/* what is asked, and the plan of it: the query keys the
				 * memos (model/key.c), so it says what the plan is of */
				a.q.set.recompute = rk[r];
				a.rc = rc[r];
				c = evaluate(g, &a, o, kind, grid, s, &k);
				/* the plainest configuration sets the bound for the rest */
				if (first && c->computable && c->feasible && c->t.total > 0 &&
				    c->epoch * (c->t.total - c->t.update) / c->t.total > s->best)
					bound = true;
				first = false;
			}
		}
	}
}

void
search_begin(Search *s, double budget_s)
{
	*s = (Search){ .best = INFINITY,
		       .deadline = budget_s > 0 ? clock_ms() + budget_s * 1e3 : 0 };
}

bool
search_run(const Graph *g, const Analysis *an, const StrategyOpts *o, const SearchFix *fix,
	   Search *s)
{
	Recompute full = { 0 }, sel = { 0 };
	int64_t p = an->q.set.gpus;

	if (!fix->recompute)
		recompute_plan(g, 0, an->q.set.prec, &full);
	if (!fix->recompute && an->tf.layers > 0)
		recompute_selective(g, an->q.set.prec, &sel);
	for (int kind = 0; kind < STRAT_COUNT; kind++) {
		int64_t grid[DIM_COUNT], it = 0;
		/* the search explores context parallelism on a transformer too
		 * (issue 42.5's dimensions), where the ranking of the default
		 * strategies leaves it to --strategies */
		bool ctx = an->tf.layers > 0 && (o->mask & (1u << kind)) &&
			   (strategy_info[kind].dims & DIM_BIT(DIM_CONTEXT));
		if (!(strategy_asked(an, o, (StrategyKind)kind) || ctx) ||
		    !impl_runs_strategy(&an->q.impl, (StrategyKind)kind))
			continue;
		while (grid_next((StrategyKind)kind, p, &it, grid)) {
			if (s->deadline && clock_ms() > s->deadline) {
				s->stopped = true;
				return true;
			}
			/* Megatron keeps a tensor-parallel group inside a node
			 * (SC'21, Takeaway #1): a larger one is priced when
			 * --grid asks for it, never proposed */
			if (grid[DIM_TENSOR] > an->q.sys->gpus_per_node)
				continue;
			grid_variants(g, an, o, fix, &full, &sel, (StrategyKind)kind, grid, s);
		}
	}
	return true;
}

Settings
search_settings(const Settings *set, const SearchFix *fix, const SearchConfig *c)
{
	Settings at = *set;

	/* as grid_variants and search_all set them */
	at.prec = c->prec;
	at.schedule = c->schedule;
	at.virtual_stages = c->virtual_stages;
	at.zero = c->zero;
	at.zero_node = c->zero_node;
	if (!fix->recompute)
		at.recompute = c->recompute == RECOMPUTE_SELECTIVE ? RECOMPUTE_ATTENTION
			       : c->recompute			  ? RECOMPUTE_FULL
								  : RECOMPUTE_NONE;
	if (!fix->sequence_parallel)
		at.sequence_parallel = c->sequence_parallel;
	return at;
}

/* Whether a is b: the same configuration. */
static bool
same(const SearchConfig *a, const SearchConfig *b)
{
	return a->kind == b->kind && memcmp(a->grid, b->grid, sizeof a->grid) == 0 &&
	       a->nest == b->nest && a->schedule == b->schedule &&
	       a->virtual_stages == b->virtual_stages && a->zero == b->zero &&
	       a->zero_node == b->zero_node && a->prec == b->prec && a->recompute == b->recompute &&
	       a->sequence_parallel == b->sequence_parallel;
}

/* Whether a is as simple as b in every respect (ZeRO stage, grid
 * dimensions, recomputation) and simpler in one. */
static bool
simpler(const SearchConfig *a, const SearchConfig *b)
{
	int za = a->zero, zb = b->zero, da = grid_dimensions(a->grid),
	    db = grid_dimensions(b->grid);
	int ra = a->recompute != 0, rb = b->recompute != 0;

	return za <= zb && da <= db && ra <= rb && (za < zb || da < db || ra < rb);
}

static const char *
zero_text(const SearchConfig *c, char *buf, size_t n)
{
	snprintf(buf, n, "%s",
		 !c->zero       ? "no ZeRO"
		 : c->zero_node ? "FSDP hybrid"
				: (const char *[]){ "", "ZeRO 1", "ZeRO 2", "ZeRO 3" }[c->zero]);
	return buf;
}

/* The simplest configuration within SIMPLER_WITHIN of the fastest goes
 * first: of those as simple as the fastest in every respect (ZeRO stage,
 * grid dimensions, recomputation) and simpler in one, the ones no other
 * is simpler than, the fastest of them. */
static void
simplest_first(Search *s)
{
	const SearchConfig *fast = &s->top[0], *pick = NULL;
	SearchConfig *in[4 * DIM_COUNT * 2], chosen;
	int n = 0, at;
	size_t len;
	char b1[32], b2[32], rc[32];

	s->simpler[0] = '\0';
	if (!s->ntop || !fast->feasible)
		return;
	for (int z = 0; z < 4; z++)
		for (int d = 0; d < DIM_COUNT; d++)
			for (int r = 0; r < 2; r++)
				if (s->has_simplest[z][d][r] &&
				    s->simplest[z][d][r].epoch <=
					    fast->epoch * (1 + SIMPLER_WITHIN) &&
				    (simpler(&s->simplest[z][d][r], fast) ||
				     same(&s->simplest[z][d][r], fast)))
					in[n++] = &s->simplest[z][d][r];
	for (int i = 0; i < n; i++) {
		bool minimal = true;
		for (int j = 0; j < n && minimal; j++)
			minimal = !simpler(in[j], in[i]);
		if (minimal && (!pick || in[i]->epoch < pick->epoch))
			pick = in[i];
	}
	if (!pick || same(pick, fast))
		return;
	chosen = *pick;
	/* what makes it simpler, said before top moves */
	len = (size_t)snprintf(s->simpler, sizeof s->simpler, "the first is within %.0f %% of the "
			       "fastest (%s, %.4g s per epoch) and simpler:", 100 * SIMPLER_WITHIN,
			       strategy_name[fast->kind], fast->epoch);
	if (chosen.zero < fast->zero)
		len += (size_t)snprintf(s->simpler + len, sizeof s->simpler - len,
					" %s against %s;", zero_text(&chosen, b1, sizeof b1),
					zero_text(fast, b2, sizeof b2));
	if (grid_dimensions(chosen.grid) < grid_dimensions(fast->grid) && len < sizeof s->simpler)
		len += (size_t)snprintf(
			s->simpler + len, sizeof s->simpler - len,
			" %d grid dimension%s against %d;", grid_dimensions(chosen.grid),
			grid_dimensions(chosen.grid) == 1 ? "" : "s", grid_dimensions(fast->grid));
	if (!chosen.recompute && fast->recompute && len < sizeof s->simpler)
		len += (size_t)snprintf(s->simpler + len, sizeof s->simpler - len,
					" no recomputation against %s;",
					recompute_label(fast->recompute, rc, sizeof rc));
	if (len < sizeof s->simpler && s->simpler[len - 1] == ';')
		s->simpler[len - 1] = '\0';
	/* out of top where it is in it, then first */
	for (at = 0; at < s->ntop && !same(&s->top[at], &chosen); at++)
		;
	if (at == s->ntop)
		at = s->ntop < SEARCH_TOP ? s->ntop++ : SEARCH_TOP - 1;
	memmove(&s->top[1], &s->top[0], (size_t)at * sizeof s->top[0]);
	s->top[0] = chosen;
}

void
search_end(Search *s)
{
	simplest_first(s);
	/* why each kept one but the first lost */
	for (int i = 1; i < s->ntop; i++) {
		SearchConfig *c = &s->top[i];
		if (!c->feasible)
			snprintf(c->why, sizeof c->why, "%s",
				 c->reason ? c->reason : "does not fit");
		else if (s->top[0].feasible && c->epoch < s->top[0].epoch)
			snprintf(c->why, sizeof c->why, "%.1f %% faster, within %.0f %%: the first "
				 "is simpler", 100 * (1 - c->epoch / s->top[0].epoch),
				 100 * SIMPLER_WITHIN);
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

/* Whether the search also tries fp8 beside the precision the user gave:
 * a 16-bit one (Megatron-LM's --fp8-format runs on top of --bf16 or
 * --fp16) on a transformer, on GPUs with an FP8 peak, under a stack that
 * runs it. */
static bool
fp8_beside(const Analysis *an, Precision p)
{
	return p != PREC_FP8 && (precision_bytes(p) == 2 || precision_low(p) == 2) &&
	       an->tf.layers > 0 && an->q.sys->peak[DT_FP8] > 0 &&
	       impl_runs_precision(&an->q.impl, PREC_FP8);
}

bool
search_all(const Graph *g, const Analysis *an, const Settings *set, const StrategyOpts *o,
	   const SearchFix *fix, double budget_s, Search *s)
{
	bool ok = true;

	search_begin(s, budget_s);
	if (fix->precision) {
		ok = search_run(g, an, o, fix, s);
		if (ok && !s->stopped && fp8_beside(an, set->prec)) {
			Settings at = *set;
			Analysis a;
			at.prec = PREC_FP8;
			ok = analysis_setup(&a, an->eng, &at, g, an->q.sys) &&
			     search_run(g, &a, o, fix, s);
		}
		search_end(s);
		return ok;
	}
	/* another precision is another query on the same graph: an analysis
	 * set up for it prices g's counts at its widths */
	for (int p = 0; p < PREC_COUNT && ok && !s->stopped; p++) {
		Settings at = *set;
		Analysis a;
		if (!runs(an->q.sys, (Precision)p) ||
		    !impl_runs_precision(&an->q.impl, (Precision)p))
			continue;
		at.prec = (Precision)p;
		if (at.prec == set->prec)
			ok = search_run(g, an, o, fix, s);
		else
			ok = analysis_setup(&a, an->eng, &at, g, an->q.sys) &&
			     search_run(g, &a, o, fix, s);
	}
	search_end(s);
	return ok;
}
