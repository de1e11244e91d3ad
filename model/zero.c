/* zero.c -- ZeRO: the model states sharded over the data-parallel group
 * (Rajbhandari et al., SC'20; DeepSpeed's zero_optimization stages;
 * PyTorch FSDP's FULL_SHARD is stage 3), docs/model.md "ZeRO".
 *
 * Under ZeRO the states are laid out as DeepSpeed does: with mixed
 * precision, 16-bit parameters and gradients (2 + 2 bytes per parameter)
 * and, in the optimizer, the fp32 master weights with the optimizer's
 * moments (4 + 8 bytes for Adam: K = 12); in fp32, 4 + 4 and the
 * moments.  Stage 1 shards the optimizer states over the Nd GPUs of the
 * group, stage 2 the gradients too, stage 3 the parameters too:
 *
 *   stage 0  (2 + 2 + K) W        stage 2  2 W + (2 + K) W / Nd
 *   stage 1  (2 + 2) W + K W / Nd stage 3  (2 + 2 + K) W / Nd
 *
 * Communication: every stage reduce-scatters the gradients during the
 * backward (in the window DDP's all-reduce had); stages 1 and 2 then
 * all-gather the updated parameters after the step, exposed: two rings,
 * the volume of DDP's all-reduce but not its tree (zero_exchange);
 * stage 3 instead all-gathers every layer's parameters before its forward
 * and again before its backward, prefetched while the layer before it
 * computes: hidden behind the compute as far as it lasts.
 *
 * FSDP's HYBRID_SHARD (--fsdp hybrid; DeepSpeed's ZeRO++ hpZ) shards over
 * the group's GPUs inside one node and replicates across nodes: the
 * states divide by the k GPUs of the node, the parameter gathers stay on
 * the node's links, and the gradients are reduce-scattered inside the
 * node, then each shard all-reduced across the nodes by the k GPUs at
 * once (sharing the node's NIC):
 *
 *   exchange = allgather(node, p W) + allreduce(across, p W / k)
 *
 * in buckets during backward as DDP's all-reduce would be: as much of it
 * is hidden as the bucket timeline hid of DDP's exchange (overlap.c).
 *
 * That is DeepSpeed's ZeRO.  A PyTorch stack (zero_partition "tensors")
 * runs stages 2 and 3 as FSDP, and FSDP as the plan runs it
 * (python/oraclec/runner.py's FsdpJob: the whole model one
 * FullyShardedDataParallel unit, auto_wrap_policy None, use_orig_params,
 * no MixedPrecision) is priced as its runtime does the work, from PyTorch
 * 2.0's torch/distributed/fsdp/_runtime_utils.py (commit 00ae0bc) --
 * FSDP_UNITS units, each per iteration:
 *
 *   forward   _pre_forward_unshard all-gathers the unit's flat parameter
 *             on the unshard stream and makes the compute stream wait for
 *             it; forward_prefetch (off by default) would gather the next
 *             unit's, and one unit has no next, nor compute before it to
 *             hide behind: exposed.  limit_all_gathers (on by default)
 *             lets at most two gathers be in flight; one unit issues one.
 *   backward  _post_forward_reshard frees no parameter of the root ("Do
 *             not free the root's parameters in the post-forward for
 *             FULL_SHARD"), and SHARD_GRAD_OP frees none after forward:
 *             _pre_backward_hook gathers nothing again, and
 *             backward_prefetch (BACKWARD_PRE) has no unit to prefetch.
 *   after     _post_backward_hook runs when the flat parameter's gradient
 *             is whole, at the end of the backward for one unit:
 *             reduce-scatter over the shard group, HYBRID_SHARD's
 *             all-reduce of the shard across the nodes, and the root's
 *             final callback makes the step wait for them: exposed.
 *   CPU       the hooks (pre/post forward, pre/post backward: a stream
 *             wait, the gather's or reduce-scatter's issue, an event, the
 *             pad and chunk of the gradient; FSDP_HOOK_OPS operators) and,
 *             under use_orig_params, a view per original parameter each
 *             time the flat parameter changes storage (_use_unsharded_views
 *             after the gather, _use_sharded_views after the reshard), at
 *             the implementation's dispatch cost each.
 *
 * The collectives move the parameters in their own type: fp32 under
 * autocast (elem_bytes), not DeepSpeed's 16-bit copies. */
#include "model/model.h"

/* FSDP units: the plan wraps the whole model as one (runner.py) */
enum { FSDP_UNITS = 1 };
/* Operators the four hooks issue per unit besides the views
 * (_runtime_utils.py): pre-forward a wait_stream and the all-gather into
 * a new tensor (2); post-forward an event record (1); pre-backward a
 * wait_stream (1); post-backward a wait_stream, the chunk, pad and
 * empty_like of the gradient, the reduce-scatter, HYBRID's all-reduce,
 * the cast and the shard's save (8): 12 */
enum { FSDP_HOOK_OPS = 12 };

/* Bytes per parameter of the 16-bit (or fp32) parameters and gradients
 * under ZeRO. */
static double
state_bytes(const Analysis *an, const Graph *g)
{
	int low = precision_low(an->q.set.prec);

	return low ? low : elem_bytes(an);
}

/* Bytes per parameter of the gradients ZeRO reduce-scatters: the 16-bit
 * (or fp32) state's, Megatron's fp32 buffers under master_weights at bf16
 * (its distributed optimizer, grad_bytes). */
static double
reduced_bytes(const Analysis *an, const Graph *g)
{
	return master_weights(an) ? grad_bytes(an) : state_bytes(an, g);
}

bool
master_weights(const Analysis *an)
{
	return an->q.impl.master_fp32 && !precision_low(an->q.set.prec) &&
	       precision_bytes(an->q.set.prec) < 4;
}

/* Megatron-LM's validate_args turns --accumulate-allreduce-grads-in-fp32
 * on under --bf16 ("bfloat16 requires gradient accumulation and
 * all-reduce to be done in fp32", megatron/training/arguments.py lines
 * 1204-1217 at d98e8a64), and training.py line 2635 makes it the DDP's
 * grad_reduce_in_fp32: the gradient buffers, and so the all-reduce or the
 * distributed optimizer's reduce-scatter of them, are fp32.  With --fp16
 * they stay 16-bit (the fp32 main gradients are copied after the
 * exchange). */
int
grad_bytes(const Analysis *an)
{
	return master_weights(an) && an->q.set.prec == PREC_BF16 ? 4 : elem_bytes(an);
}

/* With master_weights (a 16-bit module, Megatron's --fp16 or --bf16) the
 * optimizer holds fp32 main weights beside its moments, and the main
 * gradients are fp32 with bf16 (arguments.py@d98e8a64, validate_args:
 * "bfloat16 requires gradient accumulation and all-reduce to be done in
 * fp32"), the 16-bit gradients copied into an fp32 main gradient with
 * fp16: Megatron-LM's docs/user-guide/features/dist_optimizer.md gives
 * the bytes a parameter as
 *
 *   fp16 parameters, fp16 gradients   20    4 + 16/d  (distributed)
 *   bf16 parameters, fp32 gradients   18    6 + 12/d
 *   fp32 parameters, fp32 gradients   16    8 +  8/d
 *
 * with Adam's 8 bytes: 2 + 2 + (4 main + 4 main gradient + 8), 2 + 4 +
 * (4 + 8), 4 + 4 + 8; d the data-parallel size its distributed optimizer
 * (--zero 1) shards over. */
void
zero_memory(const Analysis *an, const Graph *g, double weights, double nd, MemUse *m)
{
	double p = state_bytes(an, g), gr = p;
	double k = optimizer_bytes(an->q.set.opt) + (precision_info[an->q.set.prec].low ? 4 : 0);
	int z = an->q.set.zero;

	if (master_weights(an)) {
		gr = grad_bytes(an);
		k += 4 + (gr < 4 ? 4 : 0);
	}
	if (nd < 1 || z < 1)
		nd = 1;
	m->weights = weights * p / (z >= 3 ? nd : 1);
	m->grads = weights * gr / (z >= 2 ? nd : 1);
	m->optimizer = weights * k / nd;
}

double
zero_step_arrays(const Analysis *an, double arrays, double nd)
{
	double share = nd > 1 ? arrays / nd : arrays;

	if (!an->q.set.zero)
		return arrays;
	if (an->q.set.zero >= 2 || an->q.impl.flat_zero)
		return 1;
	return share >= 1 || arrays == 0 ? share : 1; /* a rank steps at least one */
}

Group
zero_group(const Analysis *an, Group grad)
{
	if (an->q.set.zero_node && grad.per_node >= 1 && grad.per_node < grad.size)
		return (Group){ grad.per_node, grad.per_node, 1 };
	return grad;
}

double
zero_node_exchange(const Analysis *an, const Graph *g, Group grad, double weights,
		   double window, double *hidden)
{
	int64_t k = grad.per_node;
	Group node = { k, k, 1 }, across = { grad.size / k, 1, k };
	double b = weights * reduced_bytes(an, g);
	double t = coll_reduce_scatter(an, node, b) + coll_allreduce(an, across, b / k);

	*hidden = t < window ? t : window;
	return t - *hidden;
}

void
zero_exchange(const Analysis *an, const Graph *g, Group grp, double weights, double *grad,
	      double *hidden)
{
	double window = *hidden, rs, ag;

	if (an->q.set.zero < 1 || grp.size <= 1)
		return;
	/* the reduce-scatter in the backward's buckets, in the window DDP's
	 * all-reduce had; stages 1 and 2 then all-gather the updated 16-bit
	 * parameters at the end of DeepSpeed's step() (FSDP SHARD_GRAD_OP: in
	 * the next forward's pre-forward hook, before the first layer runs);
	 * stage 3 gathers them layer by layer instead (zero_gather_time).
	 * NCCL runs both as rings (no tree before NVLS and CollNet) */
	rs = coll_reduce_scatter(an, grp, weights * reduced_bytes(an, g));
	ag = an->q.set.zero < 3 ? coll_allgather(an, grp, weights * state_bytes(an, g)) : 0;
	*hidden = rs < window ? rs : window;
	*grad = rs - *hidden + ag;
}

double
zero_gather_time(const Analysis *an, const Graph *g, Group grp, double weights, double compute,
		 double *hidden)
{
	double t;

	*hidden = 0;
	if (an->q.set.zero < 3 || grp.size <= 1)
		return 0;
	/* the whole model's parameters gathered twice, forward and backward */
	t = 2 * coll_allgather(an, grp, weights * state_bytes(an, g));
	*hidden = t < compute ? t : compute;
	return t - *hidden;
}

bool
zero_fsdp(const Analysis *an)
{
	return an->q.set.zero >= 2 && !an->q.impl.flat_zero;
}

double
fsdp_exchange(const Analysis *an, const Graph *g, Group grad, double weights, int *gathers)
{
	Group shard = zero_group(an, grad);
	double b = weights * elem_bytes(an), t;

	*gathers = 0;
	if (shard.size <= 1 && grad.size <= 1)
		return 0;
	/* per unit: its gather before forward (none again in backward, the
	 * root kept unsharded), its reduce-scatter after backward */
	*gathers = FSDP_UNITS;
	t = FSDP_UNITS * (coll_allgather(an, shard, b) + coll_reduce_scatter(an, shard, b));
	if (shard.size < grad.size) { /* HYBRID_SHARD: the shard across nodes */
		Group across = { grad.size / shard.size, 1, shard.size };
		t += FSDP_UNITS * coll_allreduce(an, across, b / (double)shard.size);
	}
	return t;
}

double
fsdp_host(const Analysis *an, double arrays)
{
	if (!zero_fsdp(an))
		return 0;
	return FSDP_UNITS * (FSDP_HOOK_OPS + 2 * arrays) * an->q.impl.dispatch;
}
