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
 *   large-global-batch            the recommendation's global batch is past
 *                                 the largest the literature trains to
 *                                 full accuracy with the optimizer in use
 *   unsupported-by-implementation an option given (precision, ZeRO,
 *                                 recomputation, schedule, --grid) that the
 *                                 implementation does not run
 *   tensor-spans-nodes            the recommendation's tensor-parallel
 *                                 group spans nodes, its all-reduces over
 *                                 the network (Megatron keeps it in one)
 *
 * requires: strategies_run on an (and on each of `fewer`, the same
 * analysis on fewer GPUs); provides: an->warning[]. */
#include "model/model.h"
#include "plan/plan.h"

#include <inttypes.h>
#include <math.h>
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

/* The largest global batch the literature trains to full accuracy with
 * each optimizer, and where (docs/model.md, "Warnings", has the
 * references).  What oraclec knows of the optimizer is --optimizer;
 * nothing of layer-wise adaptation (LARS, LAMB), which it names as the
 * way further. */
static const struct {
	int64_t batch;
	const char *where;
} batch_limit[] = {
	[OPT_SGD] = { 8192, "the largest ResNet-50 trains to full accuracy with momentum SGD, "
			    "the learning rate scaled with the batch and a gradual warm-up (Goyal "
			    "et al. 2017); LARS reaches about 32,768 (You, Gitman and Ginsburg "
			    "2017)" },
	[OPT_MOMENTUM] = { 8192, "the largest ResNet-50 trains to full accuracy with momentum "
				 "SGD, the learning rate scaled with the batch and a gradual "
				 "warm-up (Goyal et al. 2017); LARS reaches about 32,768 (You, "
				 "Gitman and Ginsburg 2017)" },
	[OPT_ADAM] = { 8192, "the batch BERT-sized models train with Adam (RoBERTa, Liu et al. "
			     "2019); AdamW stops scaling at 16,384, where LAMB reaches 32,768 (You "
			     "et al. 2020)" },
	[OPT_ADAMW] = { 8192, "the batch BERT-sized models train with AdamW (RoBERTa, Liu et al. "
			      "2019); it stops scaling at 16,384, where LAMB reaches 32,768 (You "
			      "et al. 2020)" },
	[OPT_RMSPROP] = { 4096, "the batch MnasNet and EfficientNet train with RMSProp (Tan et al. "
				"2019; Tan and Le 2019)" },
};

/* 32768 -> "32,768" */
static const char *
thousands(int64_t v, char *buf, size_t n)
{
	char tmp[32];
	int len = snprintf(tmp, sizeof tmp, "%" PRId64, v), j = 0;

	for (int i = 0; i < len && (size_t)j + 2 < n; i++) {
		if (i && (len - i) % 3 == 0 && tmp[0] != '-')
			buf[j++] = ',';
		buf[j++] = tmp[i];
	}
	buf[j] = '\0';
	return buf;
}

static bool
splits_space(StrategyKind s)
{
	return s == STRAT_SPATIAL || s == STRAT_DS || s == STRAT_DPS;
}

/* The candidate the warnings are about: the decision's, else the one
 * strategy analysed (a --grid that does not fit), else none. */
static const Candidate *
subject(const Analysis *an)
{
	const Candidate *k = NULL;

	if (an->decision.k)
		return an->decision.k;
	for (int s = 0; s < STRAT_COUNT; s++)
		if (an->cand[s].analysed) {
			if (k)
				return NULL;
			k = &an->cand[s];
		}
	return k;
}

/* What the analysis was asked for that its implementation does not run
 * (options given, a grid --grid forced; oraclec itself proposes nothing
 * of the kind): one warning naming each, with what it runs. */
static void
unsupported(const Graph *g, Analysis *an, const Candidate *k)
{
	const Implementation *im = &an->q.impl;
	char what[256], lb[32];
	size_t n = 0;
	int parts = 0;

#define ADD(...)                                                                                 \
	(n < sizeof what                                                                         \
		 ? (n += (size_t)snprintf(what + n, sizeof what - n, "%s", parts++ ? "; " : ""), \
		    n < sizeof what                                                              \
			    ? (n += (size_t)snprintf(what + n, sizeof what - n, __VA_ARGS__))    \
			    : 0)                                                                 \
		 : 0)
	if (!impl_runs_precision(im, an->q.set.prec))
		ADD("%s (it runs %s)", precision_name(an->q.set.prec),
		    impl_list_text(g->arena, im->precisions));
	if ((an->q.set.zero || an->q.set.zero_node) &&
	    !impl_runs_zero(im, an->q.set.zero, an->q.set.zero_node))
		ADD("%s (its ZeRO stages: %s)",
		    an->q.set.zero_node   ? "FSDP's hybrid shard"
		    : an->q.set.zero == 1 ? "ZeRO stage 1"
		    : an->q.set.zero == 2 ? "ZeRO stage 2"
					  : "ZeRO stage 3",
		    impl_list_text(g->arena, im->zero_stages));
	if (!impl_runs_recompute(im, an->rc.k))
		ADD("%s (it recomputes: %s)",
		    an->rc.k < 0 ? "selective recomputation" : "recomputation in segments",
		    impl_list_text(g->arena, im->recompute));
	if (k && k->computable && STRATEGY_PIPELINED(k->kind) &&
	    !impl_runs_schedule(im, an->q.set.schedule))
		ADD("the %s schedule (its schedules: %s)",
		    schedule_label(an->q.set.schedule, an->q.set.virtual_stages, lb, sizeof lb),
		    *im->schedules ? impl_list_text(g->arena, im->schedules) : "none");
	if (k && k->feasible && !impl_runs_strategy(im, k->kind))
		ADD("%s parallelism (it runs %s)", strategy_name[k->kind],
		    impl_list_text(g->arena, im->strategies));
#undef ADD
	if (parts)
		warn(an, "unsupported-by-implementation",
		     "%s does not run %s: the figures are for a stack that does "
		     "(--implementation names one; --list-implementations)", im->name, what);
}

static void
note(Analysis *an, const char *fmt, ...)
{
	va_list ap;

	if (an->nnote == (int)(sizeof an->note / sizeof an->note[0]))
		return;
	va_start(ap, fmt);
	vsnprintf(an->note[an->nnote++], sizeof an->note[0], fmt, ap);
	va_end(ap);
}

/* Why nothing is recommended: memory (with the usual way out) where a
 * strategy does not fit, else each strategy's own reason (a grid --grid
 * forced: its reason alone). */
static void
why_none(Analysis *an)
{
	size_t n = 0;
	int analysed = 0;
	bool memory = false;
	char grid[GRID_TEXT_MAX];

	for (int s = 0; s < STRAT_COUNT; s++) {
		const Candidate *k = &an->cand[s];
		analysed += k->analysed;
		memory |= k->analysed && k->computable && !k->feasible && !k->not_run;
	}
	if (memory || !analysed) {
		snprintf(an->why_none, sizeof an->why_none,
			 "no strategy fits on %" PRId64 " GPUs of "
			 "this system; use a smaller batch, more GPUs or a larger GPU",
			 an->q.set.gpus);
		return;
	}
	for (int s = 0; s < STRAT_COUNT && analysed == 1; s++) {
		const Candidate *k = &an->cand[s];
		if (k->analysed)
			snprintf(an->why_none, sizeof an->why_none,
				 "%s parallelism (%s) does not run on "
				 "%" PRId64 " GPUs of this system: %s",
				 strategy_name[k->kind],
				 *grid_format(k->grid, NULL, 0, grid, sizeof grid) ? grid : "-",
				 an->q.set.gpus, k->reason ? k->reason : "no prediction");
	}
	if (analysed == 1)
		return;
	n = (size_t)snprintf(an->why_none, sizeof an->why_none, "no strategy runs on %" PRId64
			     " GPUs of this system:", an->q.set.gpus);
	for (int s = 0, first = 1; s < STRAT_COUNT && n < sizeof an->why_none; s++) {
		const Candidate *k = &an->cand[s];
		if (!k->analysed)
			continue;
		n += (size_t)snprintf(an->why_none + n, sizeof an->why_none - n, "%s %s, %s",
				      first ? "" : ";", strategy_name[k->kind],
				      k->reason ? k->reason : "no prediction");
		first = 0;
	}
}

/* Why the recommendation is not the fastest: the simpler within
 * SIMPLER_WITHIN of the ranking's strategies (the search's section says
 * it of its configurations: Search.simpler), per-layer splits faster or
 * not by enough. */
static void
notes(const Graph *g, Analysis *an)
{
	const Candidate *b = an->decision.k,
			*f = an->fastest >= 0 ? &an->cand[an->fastest] : b;
	const PerLayer *pl = an->per_layer;
	char g1[GRID_TEXT_MAX], g2[GRID_TEXT_MAX];

	if (an->decision.from != DECIDED_SEARCH && f != b)
		note(an,
		     "%s parallelism (%s) is within %.0f %% of the fastest, %s parallelism (%s) "
		     "at %.4g s per epoch, and simpler: %d grid dimension%s against %d",
		     strategy_name[b->kind], grid_format(b->grid, NULL, 0, g1, sizeof g1),
		     100 * SIMPLER_WITHIN, strategy_name[f->kind],
		     grid_format(f->grid, NULL, 0, g2, sizeof g2), f->epoch,
		     grid_dimensions(b->grid), grid_dimensions(b->grid) == 1 ? "" : "s",
		     grid_dimensions(f->grid));
	if (pl && pl->done) {
		int u = 0;
		double gain;
		for (int m = 1; m < PL_MODES; m++)
			if (pl->uniform[m] < pl->uniform[u])
				u = m;
		gain = isfinite(pl->uniform[u]) ? 1 - pl->time / pl->uniform[u] : 0;
		if (pl->recommended)
			note(an,
			     "the per-layer splits are recommended: %.4g s per iteration, %.4g "
			     "s per "
			     "epoch, %.1f %% faster than uniform %s parallelism under the same "
			     "model "
			     "(%.4g s) and faster than %s parallelism (%s) at %.4g s per epoch",
			     pl->time, pl->epoch, 100 * gain, per_layer_mode_name[u],
			     pl->uniform[u], strategy_name[b->kind],
			     grid_format(b->grid, NULL, 0, g1, sizeof g1), b->epoch);
		else if (gain > 0.0005 && gain * (1 + SIMPLER_WITHIN) <= SIMPLER_WITHIN)
			note(an,
			     "the per-layer splits reach %.4g s per iteration, %.1f %% faster than "
			     "uniform %s parallelism under the same model (%.4g s): within "
			     "%.0f %%, "
			     "a uniform strategy is simpler",
			     pl->time, 100 * gain, per_layer_mode_name[u], pl->uniform[u],
			     100 * SIMPLER_WITHIN);
		else if (gain > 0.0005 && pl->fits)
			note(an,
			     "the per-layer splits reach %.4g s per iteration, %.1f %% faster than "
			     "uniform %s parallelism under the same model, but %.4g s per epoch "
			     "against %s parallelism's %.4g s%s",
			     pl->time, 100 * gain, per_layer_mode_name[u], pl->epoch,
			     strategy_name[b->kind], b->epoch,
			     pl->epoch < b->epoch ? arena_printf(g->arena,
								 ": within %.0f %%, the "
								 "strategy is simpler",
								 100 * SIMPLER_WITHIN)
						  : "");
	}
}

/* Megatron-LM keeps a tensor-parallel group inside a node, on NVLink
 * (Narayanan et al., SC'21, Takeaway #1: tensor model parallelism up to
 * degree g on g-GPU servers, pipelines across them; its tp-cp-ep-dp-pp
 * rank order puts the group innermost).  It still runs a larger or
 * strided group, so the grid is priced as asked, its all-reduces over
 * the network, and said so. */
static void
tensor_spans_nodes(Analysis *an, const Candidate *k)
{
	int64_t t = k->grid[DIM_TENSOR];
	Mapping m;

	if (t <= 1 || !k->feasible)
		return;
	grid_map(an->q.sys, k->grid, k->nest, &m);
	/* the tensor group itself: with context parallelism the model group
	 * is tensor x context, a ring of tensor groups */
	if (m.tensor.per_node < m.tensor.size)
		warn(an, "tensor-spans-nodes",
		     "tensor=%" PRId64 " spans %" PRId64 " nodes (%" PRId64 " of its GPUs on "
		     "each, of %" PRId64 "): its all-reduces, two a layer each way, go over the "
		     "network, which Megatron-LM avoids by keeping the tensor-parallel group "
		     "inside a node",
		     t, (m.tensor.size + m.tensor.per_node - 1) / m.tensor.per_node,
		     m.tensor.per_node, an->q.sys->gpus_per_node);
}

void
advise(const Graph *g, Analysis *an, const Analysis *fewer, int nfewer)
{
	const Candidate *best, *alt = NULL;
	int64_t batch = -1;
	bool mixed = false;

	an->nwarning = an->nnote = 0;
	an->why_none[0] = '\0';
	unsupported(g, an, subject(an));
	if (!an->decision.k) {
		if (an->decision.from == DECIDED_NONE)
			why_none(an);
		return;
	}
	notes(g, an);
	best = an->decision.k;
	if (best->global_batch > an->q.set.dataset_size)
		warn(an, "global-batch-exceeds-dataset",
		     "the global batch of %s parallelism (%" PRId64 " samples) exceeds the "
		     "dataset (%" PRId64 "): an epoch is less than one iteration; use fewer "
		     "GPUs or a smaller batch per GPU",
		     strategy_name[best->kind], best->global_batch, an->q.set.dataset_size);
	if ((unsigned)an->q.set.opt < sizeof batch_limit / sizeof batch_limit[0] &&
	    best->global_batch > batch_limit[an->q.set.opt].batch) {
		char b1[32], b2[32];
		warn(an, "large-global-batch",
		     "the global batch of %s parallelism, %s samples, is past %s, %s: expect "
		     "lower accuracy, or more epochs to reach it; fewer GPUs or a smaller "
		     "batch stay within it",
		     strategy_name[best->kind], thousands(best->global_batch, b1, sizeof b1),
		     thousands(batch_limit[an->q.set.opt].batch, b2, sizeof b2),
		     batch_limit[an->q.set.opt].where);
	}
	/* a hybrid's limit is its model-parallel factor's; its data factor
	 * is bounded by the dataset, above */
	if (strategy_info[best->kind].grids == GRID_WHOLE && grid_gpus(best->grid) > best->max_gpus)
		warn(an, "beyond-strategy-limit",
		     "%s parallelism is recommended on %" PRId64 " GPUs, beyond its limit of "
		     "%" PRId64 " for this model and batch",
		     strategy_name[best->kind], grid_gpus(best->grid), best->max_gpus);
	for (int i = 0; i < nfewer; i++) {
		const Analysis *f = &fewer[i];
		if (f->best >= 0 && f->q.set.gpus < an->q.set.gpus &&
		    f->cand[f->best].epoch <= best->epoch * (1 + AS_FAST)) {
			warn(an, "fewer-gpus-as-fast",
			     "%" PRId64 " GPUs (%s parallelism) would take %.4g s per epoch, "
			     "against %.4g s on %" PRId64 ": the other GPUs add nothing",
			     f->q.set.gpus, strategy_name[f->cand[f->best].kind],
			     f->cand[f->best].epoch, best->epoch, an->q.set.gpus);
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
	tensor_spans_nodes(an, best);
	if (splits_space(best->kind) && alt && alt->epoch < best->epoch * (1 + SMALL_GAIN))
		warn(an, "needs-unsupported-split",
		     "%s parallelism splits images spatially, which PyTorch, DeepSpeed and "
		     "Megatron do not provide, for %.1f %% over %s parallelism, which they do",
		     strategy_name[best->kind], 100 * (alt->epoch / best->epoch - 1),
		     strategy_name[alt->kind]);
}
