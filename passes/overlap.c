/* overlap.c -- the gradient exchange, overlapped with backward in buckets
 * as DDP (bucket_cap_mb), Horovod (tensor fusion) and DeepSpeed
 * (overlap_comm) do it (docs/model.md, "Gradient exchange").
 *
 * Backward runs the layers last to first; a layer's weight gradients are
 * ready when its backward ends.  They fill buckets in that order; a bucket
 * is all-reduced as soon as it is full (the first layer's closes the
 * last, partial one), after the bucket before it (one communication
 * stream).  What runs past the end of backward is exposed; the rest is
 * hidden behind it.  Each bucket pays the collective's start-up, so small
 * buckets cost latency and large ones hide little. */
#include "passes/model.h"
#include "passes/passes.h"

double
grad_time(const Analysis *an, const Graph *g, Group grp, double n, const double *wshare,
	  double *hidden)
{
	double ready = 0, done = 0, fill = 0, all = 0, sum = 0;

	*hidden = 0;
	for (int i = 0; i < g->nlayer; i++)
		all += (double)g->layer[i].cost.params * (wshare ? wshare[i] : 1);
	if (grp.size <= 1 || all <= 0)
		return 0;
	if (!an->impl.overlap_grad)
		return allreduce_time(an->sys, grp, all * g->elem_bytes);
	for (int i = g->nlayer - 1; i >= 0; i--) {
		const Layer *l = &g->layer[i];
		double share = wshare ? wshare[i] : 1;
		ready += layer_time(an, g, l, n, share, true);
		fill += (double)l->cost.params * share * g->elem_bytes;
		if (fill > 0 && (fill >= an->impl.bucket || i == 0)) {
			double t = allreduce_time(an->sys, grp, fill);
			done = (done > ready ? done : ready) + t;
			sum += t;
			fill = 0;
		}
	}
	*hidden = done > ready ? sum - (done - ready) : sum;
	return sum - *hidden;
}
