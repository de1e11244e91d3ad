/* iteration.c -- one iteration of a predicted strategy added up: its
 * parts summed (the input overlapping the rest), the epoch, the largest
 * part named as the bottleneck, and whether it fits in the GPU's memory.
 * A candidate whose times or memory are not finite, or beyond MAX_TIME
 * and MAX_BYTES, is kept with the reason and no times, so every number a
 * report prints is finite. */
#include "model/model.h"

#include <math.h>

/* The largest prediction kept: seconds (of an iteration or an epoch) and
 * bytes per GPU (below 2^63, so a byte count converts to an integer);
 * docs/limits.md, "Numbers". */
#define MAX_TIME 1e30
#define MAX_BYTES 4611686018427387904.0 /* 2^62 */

double
iteration_busy(const IterTime *t)
{
	return t->compute + t->bubble + t->grad + t->reducer + t->layer + t->p2p + t->update +
	       t->feed + t->recompute + t->dispatch + t->sync_bn + t->skew;
}

static double
partial_total(const Candidate *k)
{
	double rest = iteration_busy(&k->t);

	return rest > k->t.input ? rest : k->t.input;
}

/* The largest part of the iteration, in the paper's terms; "host" where
 * the CPU that issues the kernels takes longer than the GPU's work (the
 * host lane, host.c: the GPU waits for it). */
static const char *
bottleneck(const Candidate *k)
{
	struct { double v; const char *name; } part[] = {
		{ k->t.compute, "compute" },
		{ k->t.bubble, "pipeline bubble and imbalance" },
		{ k->t.grad + k->t.reducer, "gradient exchange" },
		{ k->t.layer, "layer-wise collectives" },
		{ k->t.p2p, "point-to-point/halo" },
		{ k->t.update, "weight update" },
		{ k->t.feed, "input copies" },
		{ k->t.recompute, "recomputation" },
		{ k->t.dispatch, "host" },
		{ k->t.sync_bn, "synchronised batch norm" },
		{ k->t.skew, "the slowest of N" },
	};
	const char *worst = part[0].name;
	double v = part[0].v;

	if (k->t.input >= iteration_busy(&k->t))
		return "input pipeline"; /* it sets the pace */
	if (k->t.dispatch > 0 && k->t.host >= iteration_busy(&k->t) - k->t.dispatch)
		return "host";
	for (size_t i = 1; i < sizeof part / sizeof part[0]; i++)
		if (part[i].v > v)
			v = part[i].v, worst = part[i].name;
	return worst;
}

/* Whether each of the n values is a number of magnitude at most max
 * (false for infinities and NaN). */
static bool
within(const double *v, size_t n, double max)
{
	for (size_t i = 0; i < n; i++)
		if (!(fabs(v[i]) <= max))
			return false;
	return true;
}

/* The reason a computed candidate cannot be reported, or NULL: a time or
 * a memory figure that is not finite or beyond the largest kept. */
static const char *
overflow(const Candidate *k)
{
	const double t[] = { k->t.compute, k->t.bubble, k->t.grad, k->t.layer, k->t.p2p,
			     k->t.update, k->t.input, k->t.feed, k->t.communication, k->t.total,
			     k->epoch, k->t.grad_hidden, k->t.recompute, k->t.dispatch, k->t.host,
			     k->t.reducer, k->t.sync_bn, k->t.skew };
	const double m[] = { k->mem.weights, k->mem.grads, k->mem.optimizer,
			     k->mem.activations, k->mem.buffers, k->mem.total };

	if (!within(t, sizeof t / sizeof t[0], MAX_TIME))
		return "time overflows";
	if (!within(m, sizeof m / sizeof m[0], MAX_BYTES))
		return "memory overflows";
	return NULL;
}

/* The end of every candidate's prediction: the slowest of N where the
 * model prices it, the sums, the bottleneck and whether it fits; a
 * candidate whose figures overflow is not computable. */
void
iteration_finish(const Analysis *an, const CostModel *m, Candidate *k)
{
	const char *why;

	if (!k->computable && k->reason)
		return;
	k->computable = true;
	k->t.communication = k->t.grad + k->t.layer + k->t.p2p;
	/* the backward beside the hidden exchange, on the SMs NCCL leaves it */
	k->t.compute += k->t.grad_hidden * nccl_sms_held(an);
	k->t.skew = 0;
	if (m->lockstep)
		k->t.skew = skew_time(an, &k->t);
	k->t.total = partial_total(k);
	k->epoch = k->t.total * ceil((double)an->q.set.dataset_size / (double)k->global_batch);
	if ((why = overflow(k))) {
		k->computable = false;
		k->feasible = false;
		k->reason = why;
		k->bottleneck = why;
		return;
	}
	k->bottleneck = bottleneck(k);
	k->feasible = k->mem.total <= an->q.sys->mem;
	if (!k->feasible) {
		k->reason = "does not fit in GPU memory";
		k->bottleneck = "memory capacity";
	}
}
