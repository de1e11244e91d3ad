/* sweep.c -- the planning steps that run the strategies again on other
 * GPU counts: the sweep (--sweep, and the charts that draw one) and the
 * fewer GPUs the advice compares the recommendation with. */
#include "plan/plan.h"

/* Fewer GPUs the advice compares with: halvings down to 1/64 of them. */
enum { ADVICE_HALVINGS = 6 };

int64_t
sweep_grids(int counts)
{
	int64_t c = 0, grid[DIM_COUNT];

	for (int i = 0; i < counts; i++)
		for (int k = 0; k < STRAT_COUNT; k++)
			for (int64_t it = 0;
			     grid_next((StrategyKind)k, (int64_t)1 << i, &it, grid);)
				c++;
	return c;
}

/* an on `gpus` GPUs instead, with no sweep of its own */
static bool
again(const Graph *g, const Analysis *an, Analysis *out, int64_t gpus, const StrategyOpts *so)
{
	*out = *an;
	out->sweep = NULL;
	out->nsweep = 0;
	out->q.set.gpus = gpus;
	return strategies_run(g, out, so);
}

/* A sweep's best throughput a GPU, 0 where none fits. */
static double
per_gpu(const Analysis *s)
{
	return s->best >= 0 ? s->cand[s->best].throughput / (double)s->q.set.gpus : 0;
}

/* Each point's per-GPU throughput relative to one node's (issue 39.6):
 * where scaling breaks, as the user sees it.  One node is the point of
 * the most GPUs that fit in one, the first point where a node holds
 * fewer GPUs than any point but the first. */
static void
node_scaling(Analysis *an)
{
	int ref = 0;
	double base;

	for (int i = 0; i < an->nsweep; i++)
		if (an->sweep[i].q.set.gpus <= an->q.sys->gpus_per_node)
			ref = i;
	base = per_gpu(&an->sweep[ref]);
	an->node_gpus = an->sweep[ref].q.set.gpus;
	for (int i = 0; i < an->nsweep; i++)
		an->sweep[i].node_scaling = base > 0 ? per_gpu(&an->sweep[i]) / base : 0;
}

bool
sweep_run(const Graph *g, Analysis *an, const StrategyOpts *so, Arena *a, SweepProgress *progress)
{
	bool pow2 = (an->q.set.gpus & (an->q.set.gpus - 1)) == 0;
	int n = pow2 ? 0 : 1;
	int64_t grids;

	for (int64_t p = 1; p <= an->q.set.gpus; p *= 2)
		n++;
	grids = sweep_grids(n);
	an->sweep = arena_array(a, n, sizeof *an->sweep);
	for (int i = 0; i < n; i++) {
		if (progress)
			progress(i, n, grids);
		if (!again(g, an, &an->sweep[i], i == n - 1 ? an->q.set.gpus : (int64_t)1 << i, so))
			return false;
	}
	if (progress)
		progress(n, n, grids);
	an->nsweep = n;
	node_scaling(an);
	return true;
}

bool
advice_run(const Graph *g, Analysis *an, const StrategyOpts *so, Arena *a)
{
	Analysis *fewer = an->sweep;
	int n = an->nsweep;

	if (!fewer && !so->forced) {
		int64_t p = an->q.set.gpus;
		n = 0;
		fewer = arena_array(a, ADVICE_HALVINGS, sizeof *fewer);
		for (int i = 0; i < ADVICE_HALVINGS && (p /= 2) >= 1; i++)
			n++;
		for (int i = 0; i < n; i++)
			if (!again(g, an, &fewer[i], an->q.set.gpus >> (n - i), so))
				return false;
	}
	advise(g, an, fewer, n);
	return true;
}
