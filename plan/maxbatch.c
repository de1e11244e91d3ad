/* maxbatch.c -- the largest batch per GPU each strategy fits with the
 * other settings as given (--max-batch; docs/model.md, "The largest
 * batch"): its grid and nesting kept, a pipeline's micro-batches (and
 * gradient accumulation's) dividing each replica's batch.
 *
 * The memory per GPU grows with the samples a GPU holds, so whether a
 * batch fits is monotone in it (tests/test_strategy.c checks it on every
 * strategy, one batch after another): doubling finds a batch that does
 * not fit, bisection the largest that does, about 2 log2(b) predictions
 * a strategy.  A global batch beyond the dataset is not looked for: an
 * epoch would be less than one iteration. */
#include "plan/plan.h"

#include <inttypes.h>
#include <string.h>

/* The most samples per GPU --batch-per-gpu takes (main.c). */
#define MAX_BATCH ((int64_t)1 << 30)

/* Whether batch b fits for k's strategy on k's grid and nesting: its
 * prediction into *t; *whole false when it fits in memory but its
 * micro-batches do not divide a replica's batch. */
static bool
fits(const Graph *g, const Analysis *an, const StrategyOpts *o, const Candidate *k, int64_t b,
     Candidate *t, bool *whole)
{
	Analysis a = *an;
	StrategyOpts so = *o;
	int64_t replicas, parts;

	a.q.set.batch_per_gpu = b;
	so.nest = (int)k->nest;
	so.beat = 0;
	strategy_predict(g, &a, &so, k->kind, k->grid, t);
	*whole = true;
	if (!t->computable || !t->feasible)
		return false;
	replicas = t->grid[DIM_DATA] > 0 ? t->grid[DIM_DATA] : 1;
	parts = replicas * (t->micro_batches > 1 ? t->micro_batches : 1);
	*whole = t->global_batch % parts == 0;
	return true;
}

/* The largest b of at most `cap` that fits with whole micro-batches, or 0
 * (the reason at one sample into *why). */
static int64_t
largest(const Graph *g, const Analysis *an, const StrategyOpts *o, const Candidate *k,
	int64_t cap, const char **why)
{
	/* a fixed micro-batch count: multiples of it only */
	int64_t step = an->q.set.micro_batches > 1 ? an->q.set.micro_batches : 1;
	int64_t lo, hi, b;
	Candidate t;
	bool whole;

	*why = NULL;
	if (!fits(g, an, o, k, step, &t, &whole)) {
		*why = t.reason ? t.reason : "does not fit in GPU memory";
		return 0;
	}
	/* lo fits (in memory), hi does not, in units of step */
	lo = 1, hi = 2;
	while (hi * step <= cap && fits(g, an, o, k, hi * step, &t, &whole))
		lo = hi, hi *= 2;
	if (hi * step > cap) {
		if (fits(g, an, o, k, cap / step * step, &t, &whole))
			lo = cap / step, hi = lo + 1;
		else
			hi = cap / step;
	}
	while (hi - lo > 1) {
		int64_t mid = lo + (hi - lo) / 2;
		if (fits(g, an, o, k, mid * step, &t, &whole))
			lo = mid;
		else
			hi = mid;
	}
	/* the micro-batch count the model chose must divide the batch: down
	 * to its multiple, or one sample less, until both hold */
	for (b = lo * step; b >= step; ) {
		if (!fits(g, an, o, k, b, &t, &whole))
			b -= step;
		else if (!whole)
			b = t.micro_batches > 1 && b % t.micro_batches ? b - b % t.micro_batches
								      : b - step;
		else
			break;
	}
	if (b < step) {
		*why = "no batch splits into whole micro-batches";
		return 0;
	}
	return b;
}

bool
max_batch_run(const Graph *g, Analysis *an, const StrategyOpts *o)
{
	int64_t step = an->q.set.micro_batches > 1 ? an->q.set.micro_batches : 1;

	if (an->q.set.batch_per_gpu <= 0) /* strong scaling: no batch per GPU */
		return false;
	for (int i = 0; i < STRAT_COUNT; i++) {
		Candidate *k = &an->cand[i];
		int64_t width, cap;
		if (!k->analysed)
			continue;
		if (!k->computable) {
			k->max_batch = 0;
			k->max_batch_why = k->reason;
			continue;
		}
		/* the data-parallel width the batch per GPU multiplies into the
		 * global batch; a global batch past the dataset is not looked
		 * for */
		width = k->global_batch / an->q.set.batch_per_gpu;
		cap = an->q.set.dataset_size / (width > 1 ? width : 1);
		cap = cap > MAX_BATCH ? MAX_BATCH : cap < step ? step : cap;
		k->max_batch = largest(g, an, o, k, cap, &k->max_batch_why);
		if (k->max_batch && k->max_batch + step > cap)
			k->max_batch_why = "a larger global batch would exceed the dataset";
	}
	an->max_batch = true;
	return true;
}
