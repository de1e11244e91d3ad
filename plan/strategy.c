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

static const CostModel *
model_of(const StrategyOpts *o)
{
	return o->model ? o->model : &cost_model_physical;
}

/* One strategy on one grid nested one way: the model's prediction,
 * finished. */
static void
predict_nested(const PredictCtx *pc, const CostModel *m, StrategyKind kind,
	       const int64_t grid[DIM_COUNT], Nesting nest, Candidate *k)
{
	*k = (Candidate){ .kind = kind, .split = -1, .analysed = true, .nest = nest };
	m->predict(pc, kind, grid, k);
	iteration_finish(pc->an, k);
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

	if (an->zero_node)
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
		predict_nested(pc, m, kind, grid, m->nests ? (Nesting)pc->nest : NEST_MODEL_INNER, k);
		return;
	}
	predict_nested(pc, m, kind, grid, NEST_MODEL_INNER, k);
	if (grid[DIM_DATA] <= 1 || grid_gpus(grid) == grid[DIM_DATA] || !may_beat(pc->an, k, pc->beat))
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
	int64_t grid[DIM_COUNT], it = 0;
	bool any = false;
	Candidate tmp;
	PredictCtx c = *pc; /* beat: the best grid so far */

	while (grid_next(kind, pc->an->gpus, &it, grid)) {
		predict(&c, m, kind, grid, &tmp);
		if (!any || better(&tmp, k))
			*k = tmp, any = true;
		if (k->feasible && k->epoch < c.beat)
			c.beat = k->epoch;
	}
	if (!any)
		*k = (Candidate){ .kind = kind, .split = -1, .analysed = true, .computable = false,
				  .feasible = false,
				  .reason = strategy_info[kind].grids == GRID_FACTORS3
						    ? "needs three factors above 1 (p = p1 x p2 x p3)"
						    : "needs two factors above 1 (p = p1 x p2)",
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
	predict(&pc, model_of(o), kind, grid, k);
	return true;
}

bool
strategies_run(const Graph *g, Analysis *an, const StrategyOpts *o)
{
	PredictCtx pc = { g, an, o->spatial_split, o->cut_after, o->nest,
			  o->beat > 0 ? o->beat : INFINITY, o->megatron, o->no_stages };
	const CostModel *m = model_of(o);
	double best = INFINITY, second = INFINITY;

	an->best = -1;
	for (int k = 0; k < STRAT_COUNT; k++)
		an->cand[k] = (Candidate){ .kind = (StrategyKind)k, .split = -1 };
	if (o->forced) {
		predict(&pc, m, o->kind, o->grid, &an->cand[o->kind]);
		an->best = an->cand[o->kind].feasible ? (int)o->kind : -1;
		an->runner_up_ratio = 0;
		return true;
	}
	for (int k = 0; k < STRAT_COUNT; k++) {
		Candidate *cd = &an->cand[k];
		if (!(o->mask & (1u << k)))
			continue;
		analyse_one(&pc, m, (StrategyKind)k, cd);
		/* a tie (rounding apart) goes to the simpler, earlier strategy */
		if (cd->feasible && cd->epoch < best * (1 - 1e-9)) {
			second = best;
			best = cd->epoch;
			an->best = k;
		} else if (cd->feasible && cd->epoch < second) {
			second = cd->epoch;
		}
	}
	an->runner_up_ratio = isfinite(second) && best > 0 ? second / best : 0;
	return true;
}
