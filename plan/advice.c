/* advice.c -- what a user should know before following the
 * recommendation: warnings with a stable code and a sentence
 * (docs/model.md, "Warnings").
 *
 *   global-batch-exceeds-dataset  an iteration would take more samples
 *                                 than the dataset has
 *   beyond-strategy-limit         the recommended strategy (one dimension)
 *                                 runs on more GPUs than its own limit
 *   fewer-gpus-as-fast            half, a quarter, ... of the GPUs reach
 *                                 an epoch within 2 % of the best (or
 *                                 faster): the rest are wasted
 *   different-global-batches      the strategies were ranked at different
 *                                 global batches (weak scaling)
 *   needs-unsupported-split       the winner splits images spatially, which
 *                                 no mainstream framework provides, for
 *                                 less than 5 % over one that they do
 *
 * requires: strategies_run on an (and on each of `fewer`, the same
 * analysis on fewer GPUs); provides: an->warning[]. */
#include "plan/plan.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

/* An epoch within this fraction of the best counts as as fast. */
#define AS_FAST 0.02
/* A gain below this does not justify a split frameworks lack. */
#define SMALL_GAIN 0.05

static void
warn(Analysis *an, const char *code, const char *fmt, ...)
{
	va_list ap;
	Warning *w;

	if (an->nwarning == MAX_WARNINGS)
		return;
	w = &an->warning[an->nwarning++];
	w->code = code;
	va_start(ap, fmt);
	vsnprintf(w->message, sizeof w->message, fmt, ap);
	va_end(ap);
}

static bool
splits_space(StrategyKind s)
{
	return s == STRAT_SPATIAL || s == STRAT_DS || s == STRAT_DPS;
}

void
advise(const Graph *g, Analysis *an, const Analysis *fewer, int nfewer)
{
	const Candidate *best, *alt = NULL;
	int64_t batch = -1;
	bool mixed = false;

	(void)g;
	an->nwarning = 0;
	if (an->best < 0)
		return;
	best = &an->cand[an->best];
	if (best->global_batch > an->dataset_size)
		warn(an, "global-batch-exceeds-dataset",
		     "the global batch of %s parallelism (%" PRId64 " samples) exceeds the "
		     "dataset (%" PRId64 "): an epoch is less than one iteration; use fewer "
		     "GPUs or a smaller batch per GPU",
		     strategy_name[best->kind], best->global_batch, an->dataset_size);
	/* a hybrid's limit is its model-parallel factor's; its data factor
	 * is bounded by the dataset, above */
	if (strategy_info[best->kind].grids == GRID_WHOLE && grid_gpus(best->grid) > best->max_gpus)
		warn(an, "beyond-strategy-limit",
		     "%s parallelism is recommended on %" PRId64 " GPUs, beyond its limit of "
		     "%" PRId64 " for this model and batch",
		     strategy_name[best->kind], grid_gpus(best->grid), best->max_gpus);
	for (int i = 0; i < nfewer; i++) {
		const Analysis *f = &fewer[i];
		if (f->best >= 0 && f->gpus < an->gpus &&
		    f->cand[f->best].epoch <= best->epoch * (1 + AS_FAST)) {
			warn(an, "fewer-gpus-as-fast",
			     "%" PRId64 " GPUs (%s parallelism) would take %.4g s per epoch, "
			     "against %.4g s on %" PRId64 ": the other GPUs add nothing",
			     f->gpus, strategy_name[f->cand[f->best].kind], f->cand[f->best].epoch,
			     best->epoch, an->gpus);
			break; /* fewer[] runs from the fewest GPUs up */
		}
	}
	for (int s = 0; s < STRAT_COUNT; s++) {
		const Candidate *k = &an->cand[s];
		if (!k->analysed || !k->feasible)
			continue;
		mixed = mixed || (batch >= 0 && k->global_batch != batch);
		batch = k->global_batch;
		if (!splits_space(k->kind) && (!alt || k->epoch < alt->epoch))
			alt = k;
	}
	if (mixed)
		warn(an, "different-global-batches",
		     "the strategies were ranked at different global batches (under weak "
		     "scaling the batch grows with the data-parallel width; %s: %" PRId64 "); "
		     "--global-batch compares them at one",
		     strategy_name[best->kind], best->global_batch);
	if (splits_space(best->kind) && alt && alt->epoch < best->epoch * (1 + SMALL_GAIN))
		warn(an, "needs-unsupported-split",
		     "%s parallelism splits images spatially, which PyTorch, DeepSpeed and "
		     "Megatron do not provide, for %.1f %% over %s parallelism, which they do",
		     strategy_name[best->kind], 100 * (alt->epoch / best->epoch - 1),
		     strategy_name[alt->kind]);
}
