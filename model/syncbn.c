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
 * pipeline stage exchanges its own layers' (first..last). */
#include "model/model.h"

double
sync_bn_time(const Analysis *an, const Graph *g, Group data, int first, int last)
{
	int64_t k = an->q.set.sync_bn < data.size ? an->q.set.sync_bn : data.size;
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
