/* syncbn.c -- synchronised batch norm (--sync-bn K; docs/model.md,
 * "Synchronised batch norm").
 *
 * With a few samples a GPU, batch norm's statistics over one GPU's batch
 * are too noisy, so the largest ResNet-50 runs share them among groups of
 * K GPUs (MLPerf's bn_group, torch.nn.SyncBatchNorm with process groups of
 * K).  As torch/nn/modules/_functions.py runs it (SyncBatchNorm.forward
 * and backward, PyTorch 1.13): forward computes each GPU's mean and
 * inverse standard deviation, all-gathers them with its sample count
 * (2C + 1 fp32 values a GPU), and combines them in one more kernel
 * (batch_norm_gather_stats_with_counts); backward all-reduces the two
 * per-channel sums the input gradient needs (2C fp32 values) after one
 * more reduction kernel.  Each exchange blocks the layer's next kernel:
 * nothing hides it.  The group is K consecutive ranks of the data-
 * parallel dimension, inside a node where K divides the node.  A
 * pipeline stage exchanges its own layers' (first..last).
 *
 * The groups must be of one size: torch.distributed.new_group takes any
 * ranks, but MLPerf's bn_group and the launcher (runner.py,
 * sync_bn_group) cut the data dimension into K-rank pieces, and a last,
 * shorter piece would average its statistics over fewer samples than
 * the rest.  sync_bn_refusal is that rule, once: every grid's prediction
 * asks it (plan/strategy.c), so no plan meets a refused grid, and the
 * plan's groups (plan/placement.c) and the pricing here are of one size,
 * sync_bn_group's. */
#include "model/model.h"

#include <inttypes.h>
#include <string.h>

int64_t
sync_bn_group(const Analysis *an, int64_t data)
{
	int64_t k = an->q.set.sync_bn;

	return k < data ? k : data;
}

const char *
sync_bn_refusal(const Graph *g, const Analysis *an, int64_t data)
{
	int64_t k = sync_bn_group(an, data);

	if (k <= 1 || data % k == 0)
		return NULL;
	return arena_printf(g->arena,
			    "--sync-bn %d does not divide the data dimension's %" PRId64
			    " ranks into groups of equal size",
			    an->q.set.sync_bn, data);
}

void
sync_bn_limit(const Graph *g, const Analysis *an, Candidate *k)
{
	Candidate kept;
	const char *why;

	if (k->reason ||
	    !(why = sync_bn_refusal(g, an, k->grid[DIM_DATA] > 0 ? k->grid[DIM_DATA] : 1)))
		return;
	/* what a grid beyond a limit keeps: its place, batch and limit */
	kept = (Candidate){ .kind = k->kind,
			    .analysed = k->analysed,
			    .nest = k->nest,
			    .global_batch = k->global_batch,
			    .max_gpus = k->max_gpus,
			    .split = -1 };
	memcpy(kept.grid, k->grid, sizeof kept.grid);
	*k = kept;
	beyond_limit(k, why);
}

double
sync_bn_time(const Analysis *an, const Graph *g, Group data, int first, int last)
{
	int64_t k = sync_bn_group(an, data.size);
	int64_t per = data.per_node < 1 ? 1 : data.per_node;
	Group grp = { k, per < k ? per : k, 1 };
	double t = 0, lat = an->q.sys->kernel_lat;

	if (k <= 1)
		return 0;
	for (int i = first; i <= last && i < g->nlayer; i++) {
		const Layer *l = &g->layer[i];
		double c;
		if (l->op != OP_BATCHNORM)
			continue;
		c = (double)l->cost.params / 2; /* its scale and shift */
		t += coll_allgather(an, grp, (double)k * (2 * c + 1) * 4) + lat;
		if (!an->q.set.forward_only)
			t += coll_allreduce(an, grp, 2 * c * 4) + lat;
	}
	return t;
}
