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
 * buckets cost latency and large ones hide little.  Where the stack
 * groups the gradients by count, a group also closes a bucket: MXNet
 * Horovod's num_groups (grad_groups) cuts the parameter list into that
 * many runs of equal length in the model's order; Fujitsu's Horovod
 * (grad_group_tensors U, grad_group_growth p) counts from the output's
 * end, group o the tensors U o^p to U (o+1)^p - 1 (operations.cc,
 * RunLoopOnce: 3, 21, 57 and 80 of ResNet-50's 161 for U = 3, p = 3).
 *
 * On a host device (a probed CPU) nothing hides: the collective is the
 * cores' own work (gloo's copies through the loopback and its sums), and
 * the ranks' compute threads already fill those cores, so it time-shares
 * them with the backward and the step grows by all of it.  A trace of
 * ResNet-18 data=2 on this project's 2-core machine (docs/probe.md, run
 * 6) saw gloo's threads run 95 ms a step beside the backward, twice the
 * 47 ms the exchange takes alone.
 *
 * On a GPU the hidden part is not free either: NCCL runs a collective as
 * a kernel of one CUDA block a channel (nccl_channels), and each block
 * holds an SM for as long as the collective runs, so the backward's
 * kernels beside it fill their waves on the SMs left (an all-gather's 24
 * blocks on an H100 pushed a 132-block GEMM into a second wave: NVIDIA's
 * developer forums, t/337991).  While the hidden part runs, the backward
 * goes at (sms - channels) / sms of its speed, and ends later by the
 * hidden time x channels / sms (nccl_sms_held): iteration_finish adds it
 * to the compute, the exchange's own parts kept as they are.
 * Only the stack on NCCL (an nccl_version) and a GPU with its SMs given
 * (sms): what else contends (memory bandwidth, the SMs' issue slots an
 * SM shares with a block that co-resides) is not priced. */
#include "model/reuse.h"

#include <math.h>

/* Fujitsu's group of the r-th tensor from the output's end: the o with
 * U o^p <= r < U (o+1)^p. */
static double
growing_group(double r, double u, int p)
{
	double o = floor(pow(r / u, 1.0 / p));

	while (u * pow(o + 1, p) <= r) /* pow's rounding, either way */
		o++;
	while (o > 0 && u * pow(o, p) > r)
		o--;
	return o;
}

/* Whether a group of gradients is whole once the backward of the layer
 * whose tensors are `before` to `before + nw - 1` (in the model's order,
 * of `arrays`) ends: whether one of them is a group's first. */
static bool
closes_group(const Implementation *im, double arrays, double before, double nw)
{
	if (nw <= 0)
		return false;
	if (im->grad_groups > 0) {
		double per = ceil(arrays / im->grad_groups);
		return ceil(before / per) * per <= before + nw - 1;
	}
	if (im->grad_group_tensors > 0) {
		/* from the output's end, these tensors are r_lo .. r_hi; a
		 * group is whole at its highest r, where the next tensor is
		 * another group's */
		double u = im->grad_group_tensors, hi = arrays - 1 - before, lo = hi - nw + 1;
		return growing_group(lo, u, im->grad_group_power) <
		       growing_group(hi + 1, u, im->grad_group_power);
	}
	return false;
}

double
grad_time(const Analysis *an, const Graph *g, Group grp, double n, const double *wshare,
	  double *hidden)
{
	const LayerTable *tb = layer_table(an, g);
	double ready = 0, done = 0, fill = 0, all = 0, sum = 0, other_share = -1;
	double before = tb->arrays; /* tensors of the layers before i */
	Times whole, other;

	*hidden = 0;
	for (int i = 0; i < g->nlayer; i++)
		all += (double)tb->params[i] * (wshare ? wshare[i] : 1);
	if (grp.size <= 1 || all <= 0)
		return 0;
	if (!an->q.impl.overlap_grad)
		return coll_grad_allreduce(an, grp, all * grad_bytes(an));
	/* each layer's backward at its share: the rows of share 1 and of the
	 * first other share (a split layer's), else computed */
	whole = layer_times(an, g, n, 1, DIM_DATA);
	for (int i = g->nlayer - 1; i >= 0; i--) {
		double share = wshare ? wshare[i] : 1;
		if (share != 1 && other_share < 0)
			other = layer_times(an, g, n, share, DIM_DATA), other_share = share;
		ready += share == 1 ? times_of(&whole, i, true)
			 : share == other_share
				 ? times_of(&other, i, true)
				 : layer_time(an, g, &g->layer[i], n, share, DIM_DATA, true);
		bool group;
		before -= tb->nw[i];
		group = closes_group(&an->q.impl, tb->arrays, before, tb->nw[i]);
		fill += (double)tb->params[i] * share * grad_bytes(an);
		if (fill > 0 && (fill >= an->q.impl.bucket || i == 0 || group)) {
			double t = coll_grad_allreduce(an, grp, fill);
			done = (done > ready ? done : ready) + t;
			sum += t;
			fill = 0;
		}
	}
	/* done - ready is sum less what hid, summed in another order: where
	 * nothing hid it may pass sum by a rounding (cosmoflow on 64 GPUs of
	 * dgx_1 hid -6.2e-18 s) */
	*hidden = done > ready ? sum - (done - ready) : sum;
	if (*hidden < 0 || an->q.sys->host_device)
		*hidden = 0;
	return sum - *hidden;
}

/* What the data-parallel wrapper launches around the exchange (docs/model.md,
 * "The wrapper's own kernels"), nothing under ZeRO stages 2 and 3, whose
 * shards are flat buffers.  DDP's reducer (torch/csrc/distributed/c10d/reducer.cpp,
 * gradient_as_bucket_view=False, the default) copies each gradient into
 * its bucket as it is ready (copy_grad_to_bucket, a mul_out by 1/world)
 * and each back after the all-reduce (copy_bucket_to_grad): a kernel per
 * tensor each way, on the compute stream, reading and writing the
 * gradient.  DDP(broadcast_buffers=True) begins every forward with a
 * broadcast of the module's buffers from rank 0, flattened into one
 * tensor and copied back one by one: batch norm's running mean and
 * variance and its num_batches_tracked, three tensors a layer.
 * tools/ddp_kernels.py counts these operators in a real DDP iteration. */
double
buffer_bytes(const Analysis *an, int64_t buffers)
{
	if (!an->q.impl.broadcast_buffers || buffers <= 0)
		return 0;
	return (double)buffers * 4 + 8; /* running statistics in fp32, an int64 */
}

double
reducer_kernels(const Analysis *an, const Graph *g, int nw, int64_t buffers, double weights)
{
	const System *s = an->q.sys;
	double bw = s->mem_bw * s->eff_mem, b = buffer_bytes(an, buffers), t;

	if (an->q.set.zero >= 2)
		return 0;
	t = an->q.impl.grad_copies * (nw * s->kernel_lat + 2 * weights * elem_bytes(an) / bw);
	/* flattened (a read and a write), copied back (another) */
	return b > 0 ? t + 3 * s->kernel_lat + 4 * b / bw : t;
}

double
reducer_layer(const Analysis *an, const Graph *g, const Layer *l, double weights)
{
	return reducer_kernels(an, g, l->nw, l->cost.buffers, weights);
}

double
reducer_total(const Analysis *an, Group grp, double t, double bytes)
{
	if (grp.size <= 1 || an->q.set.zero >= 2)
		return 0;
	/* one flatten kernel and one broadcast of them all: DDP's
	 * _broadcast_coalesced (torch/csrc/distributed/c10d/comm.cpp) */
	if (bytes > 0)
		t += an->q.sys->kernel_lat + coll_broadcast(an, grp, bytes);
	return t;
}

double
reducer_time(const Analysis *an, const Graph *g, Group grp, int first, int last,
	     const double *wshare)
{
	const LayerTable *tb;
	double t = 0, bytes = 0;

	if (grp.size <= 1 || an->q.set.zero >= 2)
		return 0;
	tb = layer_table_full(an, g);
	for (int i = first; i <= last; i++) {
		t += reducer_kernels(an, g, tb->nw[i], tb->buffers[i],
				     (double)tb->params[i] * (wshare ? wshare[i] : 1));
		bytes += buffer_bytes(an, tb->buffers[i]);
	}
	return reducer_total(an, grp, t, bytes);
}
