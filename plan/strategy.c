/* strategy.c -- the parallel strategies of the ParaDL paper on p GPUs:
 * every strategy of the table (ir/strategies.def) on its grids, each
 * predicted by the cost model (model/costmodel.h), then finished
 * (model/iteration.c) and ranked.
 *
 * A strategy of one dimension has one grid, that dimension = p; a hybrid
 * (data x another dimension) has every p = p1 x p2 with both > 1, and
 * keeps the best.  Ranking: feasible first, then the shorter epoch.
 *
 * A grid beyond its strategy's limit is kept with the reason and no
 * times; one over the GPU's memory keeps its times and is marked
 * infeasible (iteration_finish). */
#include "model/model.h"
#include "plan/plan.h"

#include <math.h>
#include <string.h>

/* The better of two candidates: feasible first, then the shorter epoch
 * (iterations differ in size between strategies under weak scaling; the
 * time to see the whole dataset compares them fairly). */
static bool
better(const Candidate *a, const Candidate *b)
{
	if (a->computable != b->computable)
		return a->computable;
	if (a->feasible != b->feasible)
		return a->feasible;
	return a->computable && a->epoch < b->epoch;
}

const CostModel *
strategy_cost_model(const StrategyOpts *o)
{
	return o->model ? o->model : &cost_model_physical;
}

void
candidate_rates(const Graph *g, const Analysis *an, Candidate *k)
{
	const Totals *t = &g->total;
	double flops = (double)t->flops_fwd + (an->q.set.forward_only ? 0 : (double)t->flops_bwd);
	int64_t gpus = grid_gpus(k->grid) > 0 ? grid_gpus(k->grid) : an->q.set.gpus;
	double peak = matmul_peak(g, an);

	double std = an->tf_flops[0];

	k->throughput = k->mfu = k->tokens = k->mfu_std = 0;
	k->mfu_peak = peak;
	if (!k->computable || !(k->t.total > 0))
		return;
	k->throughput = (double)k->global_batch / k->t.total;
	k->mfu = peak > 0 && gpus > 0 ? flops * k->throughput / (double)gpus / peak : 0;
	k->tokens = k->throughput * (double)g->seq_len;
	/* the standard count is of forward and backward (a third forward) */
	if (an->q.set.forward_only)
		std /= 3;
	k->mfu_std = peak > 0 && gpus > 0 ? std * k->throughput / (double)gpus / peak : 0;
}

/* One strategy on one grid nested one way: the model's prediction,
 * finished, with its throughput and MFU. */
static void
predict_nested(const PredictCtx *pc, const CostModel *m, StrategyKind kind,
	       const int64_t grid[DIM_COUNT], Nesting nest, Candidate *k)
{
	*k = (Candidate){ .kind = kind, .split = -1, .analysed = true, .nest = nest };
	m->predict(pc, kind, grid, k);
	sync_bn_limit(pc->g, pc->an, k);
	iteration_finish(pc->an, m, k);
	candidate_rates(pc->g, pc->an, k);
}

/* Whether another nesting could beat `beat` where model-inner gave k: it
 * changes where the groups sit, not what they compute or hold, so it
 * fits and computes as k does (but for FSDP's hybrid shard, sharded over
 * the replicas on a node), and it can save at most k's exposed gradient
 * exchange (its model-parallel groups cross slower links, never faster
 * ones). */
static bool
may_beat(const Analysis *an, const Candidate *k, double beat)
{
	double rest = k->t.total - k->t.grad;

	if (an->q.set.zero_node)
		return true;
	if (!k->computable || !k->feasible)
		return false;
	if (rest < k->t.input)
		rest = k->t.input;
	return k->t.total <= 0 || k->epoch * rest / k->t.total < beat;
}

/* One strategy on one grid: nested as --nesting says, else model-inner
 * and, where the grid has data and another dimension, the model prices
 * nestings and another nesting may beat pc->beat, data-inner and (data,
 * pipeline and a split) pipeline-outer; the best (a tie goes to the
 * earlier: model-inner, the usual placement). */
static void
predict(const PredictCtx *pc, const CostModel *m, StrategyKind kind,
	const int64_t grid[DIM_COUNT], Candidate *k)
{
	Candidate alt;
	bool split = grid_split(grid) > 1;

	if (pc->nest != NEST_COUNT || !m->nests) {
		predict_nested(pc, m, kind, grid, m->nests ? (Nesting)pc->nest : NEST_MODEL_INNER,
			       k);
		return;
	}
	predict_nested(pc, m, kind, grid, NEST_MODEL_INNER, k);
	if (grid[DIM_DATA] <= 1 || grid_gpus(grid) == grid[DIM_DATA] ||
	    !may_beat(pc->an, k, pc->beat))
		return;
	for (int n = NEST_DATA_INNER; n < NEST_COUNT; n++) {
		if ((n == NEST_PIPELINE_OUTER && (grid[DIM_PIPELINE] <= 1 || !split)) ||
		    (n == NEST_DATA_INNER && pc->megatron && split))
			continue;
		predict_nested(pc, m, kind, grid, (Nesting)n, &alt);
		if (better(&alt, k))
			*k = alt;
	}
}

/* One strategy on p GPUs: its one grid, or (hybrids) the best of its
 * factorizations p = p1 x p2 (x p3), data p1 outer. */
static void
analyse_one(const PredictCtx *pc, const CostModel *m, StrategyKind kind, Candidate *k)
{
	/* a hybrid with no grid of p GPUs: why, by its grids */
	static const char *const needs[] = {
		[GRID_FACTORS] = "needs two factors above 1 (p = p1 x p2)",
		[GRID_FACTORS3] = "needs three factors above 1 (p = p1 x p2 x p3)",
		[GRID_FACTORS4] = "needs four factors above 1 (p = p1 x p2 x p3 x p4)",
	};
	int64_t grid[DIM_COUNT], it = 0;
	bool any = false;
	Candidate tmp;
	PredictCtx c = *pc; /* beat: the best grid so far */

	while (grid_next(kind, pc->an->q.set.gpus, &it, grid)) {
		predict(&c, m, kind, grid, &tmp);
		if (!any || better(&tmp, k))
			*k = tmp, any = true;
		if (k->feasible && k->epoch < c.beat)
			c.beat = k->epoch;
	}
	if (!any)
		*k = (Candidate){ .kind = kind,
				  .split = -1,
				  .analysed = true,
				  .computable = false,
				  .feasible = false,
				  .reason = needs[strategy_info[kind].grids],
				  .bottleneck = "scaling limit" };
}

bool
strategy_predict(const Graph *g, Analysis *an, const StrategyOpts *o, StrategyKind kind,
		 const int64_t grid[DIM_COUNT], Candidate *k)
{
	PredictCtx pc = { g, an, o->spatial_split, o->cut_after, o->nest,
			  o->beat > 0 ? o->beat : INFINITY, o->megatron, o->no_stages };

	*k = (Candidate){ .kind = kind, .split = -1, .analysed = true };
	if ((unsigned)kind >= STRAT_COUNT)
		return false;
	predict(&pc, strategy_cost_model(o), kind, grid, k);
	return true;
}

/* A list key's words as a reader reads them: "data,spatial" -> "data,
 * spatial". */
const char *
impl_list_text(Arena *a, const char *list)
{
	size_t n = 0;
	char *out = arena_alloc(a, 2 * strlen(list) + 1);

	for (const char *p = list; *p; p++) {
		out[n++] = *p;
		if (*p == ',' && p[1] != ' ')
			out[n++] = ' ';
	}
	out[n] = '\0';
	return out;
}

/* A strategy the implementation does not run is not recommended: it keeps
 * its times and memory, marked as not feasible with the reason. */
static void
refuse_unrun(const Graph *g, const Analysis *an, Candidate *k)
{
	if (impl_runs_strategy(&an->q.impl, k->kind))
		return;
	k->not_run = true;
	if (!k->computable) /* its limit's reason stands */
		return;
	k->feasible = false;
	k->reason = arena_printf(g->arena, "%s does not run %s parallelism (it runs %s)",
				 an->q.impl.name, strategy_name[k->kind],
				 impl_list_text(g->arena, an->q.impl.strategies));
	k->bottleneck = "implementation";
}

int
grid_dimensions(const int64_t grid[DIM_COUNT])
{
	int n = 0;

	for (int d = 0; d < DIM_COUNT; d++)
		n += grid[d] > 0;
	return n;
}

void
candidate_config(const Analysis *an, const Candidate *k, SearchConfig *c)
{
	*c = (SearchConfig){ .kind = k->kind,
			     .nest = k->nest,
			     .schedule = an->q.set.schedule,
			     .virtual_stages = an->q.set.virtual_stages,
			     .zero = an->q.set.zero,
			     .zero_node = an->q.set.zero_node,
			     .prec = an->q.set.prec,
			     .recompute = an->rc.k,
			     .sequence_parallel =
				     an->q.set.sequence_parallel && k->grid[DIM_TENSOR] > 1,
			     .micro_batches = k->micro_batches,
			     .iteration = k->t.total,
			     .epoch = k->epoch,
			     .memory = k->mem.total,
			     .throughput = k->throughput,
			     .mfu = k->mfu,
			     .mfu_peak = k->mfu_peak,
			     .feasible = k->feasible,
			     .reason = k->reason,
			     .bottleneck = k->bottleneck };
	memcpy(c->grid, k->grid, sizeof c->grid);
}

/* Whether candidate j is listed before k: the recommendation first, then
 * the feasible, those with times, the shorter epoch, the table's order. */
static bool
ahead_of(const Analysis *an, int j, int k)
{
	const Candidate *a = &an->cand[j], *b = &an->cand[k];

	if (j == an->best || k == an->best)
		return j == an->best;
	if (a->feasible != b->feasible)
		return a->feasible;
	if (a->computable != b->computable)
		return a->computable;
	if (a->computable && a->epoch != b->epoch)
		return a->epoch < b->epoch;
	return j < k;
}

void
strategy_ranks(Analysis *an)
{
	/* the order the reports list them in: the recommendation, then the
	 * feasible by epoch, then the rest with times by epoch, then those
	 * without (ties in the table's order) */
	for (int k = 0; k < STRAT_COUNT; k++) {
		int at = 0;
		const Candidate *c = &an->cand[k];
		an->cand[k].rank = 0;
		if (!c->analysed)
			continue;
		for (int j = 0; j < STRAT_COUNT; j++)
			at += an->cand[j].analysed && j != k && ahead_of(an, j, k);
		an->cand[k].rank = at + 1;
	}
}

/* The ranking's answer: the recommended candidate r (-1: none), and the
 * next best feasible epoch's ratio to its. */
static void
ranking_decision(Analysis *an, int r, double second)
{
	an->decision = (Decision){ .from = r >= 0 ? DECIDED_RANKING : DECIDED_NONE, .at = an };
	if (r < 0)
		return;
	an->decision.k = &an->cand[r];
	candidate_config(an, &an->cand[r], &an->decision.c);
	an->decision.runner_up = isfinite(second) && an->cand[r].epoch > 0
					 ? second / an->cand[r].epoch
					 : 0;
}

/* The recommendation among the feasible candidates: of those within
 * SIMPLER_WITHIN of the shortest epoch, the one with the fewest grid
 * dimensions, then the shorter epoch (a tie, rounding apart, to the
 * earlier in the table); an->fastest, the shortest epoch's. */
static void
rank_strategies(Analysis *an)
{
	double second = INFINITY;
	int f = -1, r = -1;

	for (int k = 0; k < STRAT_COUNT; k++) {
		const Candidate *c = &an->cand[k];
		if (c->analysed && c->feasible &&
		    (f < 0 || c->epoch < an->cand[f].epoch * (1 - 1e-9)))
			f = k;
	}
	for (int k = 0; f >= 0 && k < STRAT_COUNT; k++) {
		const Candidate *c = &an->cand[k];
		int dc, dr;
		if (!c->analysed || !c->feasible ||
		    c->epoch > an->cand[f].epoch * (1 + SIMPLER_WITHIN))
			continue;
		dc = grid_dimensions(c->grid);
		dr = r < 0 ? 0 : grid_dimensions(an->cand[r].grid);
		if (r < 0 || dc < dr || (dc == dr && c->epoch < an->cand[r].epoch * (1 - 1e-9)))
			r = k;
	}
	for (int k = 0; r >= 0 && k < STRAT_COUNT; k++)
		if (k != r && an->cand[k].analysed && an->cand[k].feasible &&
		    an->cand[k].epoch < second)
			second = an->cand[k].epoch;
	an->best = r;
	an->fastest = f;
	strategy_ranks(an);
	ranking_decision(an, r, second);
}

bool
strategy_asked(const Analysis *an, const StrategyOpts *o, StrategyKind k)
{
	if (!(o->mask & (1u << k)))
		return false;
	/* Megatron's tensor parallelism by default on a transformer only;
	 * its context parallelism only when --strategies names it (a
	 * longer sequence's choice, not a default's) */
	if (o->listed)
		return true;
	return !(strategy_info[k].dims & DIM_BIT(DIM_CONTEXT)) &&
	       (an->tf.layers > 0 || !(strategy_info[k].dims & DIM_BIT(DIM_TENSOR)));
}

bool
strategies_run(const Graph *g, Analysis *an, const StrategyOpts *o)
{
	PredictCtx pc = { g, an, o->spatial_split, o->cut_after, o->nest,
			  o->beat > 0 ? o->beat : INFINITY, o->megatron, o->no_stages };
	const CostModel *m = strategy_cost_model(o);

	an->best = an->fastest = -1;
	for (int k = 0; k < STRAT_COUNT; k++)
		an->cand[k] = (Candidate){ .kind = (StrategyKind)k, .split = -1 };
	if (o->forced) {
		/* the grid asked for, whether or not the implementation runs
		 * it (advice warns) */
		predict(&pc, m, o->kind, o->grid, &an->cand[o->kind]);
		an->best = an->fastest = an->cand[o->kind].feasible ? (int)o->kind : -1;
		an->cand[o->kind].rank = 1;
		ranking_decision(an, an->best, INFINITY);
		return true;
	}
	for (int k = 0; k < STRAT_COUNT; k++) {
		Candidate *cd = &an->cand[k];
		if (!strategy_asked(an, o, (StrategyKind)k))
			continue;
		analyse_one(&pc, m, (StrategyKind)k, cd);
		refuse_unrun(g, an, cd);
	}
	rank_strategies(an);
	return true;
}
