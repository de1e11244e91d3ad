/* tabletime.c -- a layer's kernel time from the kernel table its system
 * names (System.table, docs/kernel-table.md; docs/model.md, "Measured
 * kernels"): the layer's key, or the key of the part of it a GPU computes
 * under a split, looked up at the batch it runs (model/kerneltable.c:
 * the row at that batch, else two rows around it in log-log); where the
 * table has none, the model's time stands (compute.c).
 *
 *   forward    the row's fwd
 *   backward   a convolution's or linear layer's bwd_data where it has a
 *              gradient of its input (Cost.flops_bwd_data) and bwd_weight
 *              where it has one of its weights; a product of two
 *              activations both (the gradients of its two operands); a
 *              norm's bwd_data is its whole backward, as is an
 *              attention's, an element-wise or pooling layer's; a part
 *              the rows lack (empty) is the model's time shared by FLOPs
 *   attention  the product QK^T's key is the whole attention's: where it
 *              has a time, the attention's other layers (scaling,
 *              softmax, the product with V) take none
 *
 * The times are the kernels' own, launches and tails with them (the
 * probe's calls back to back); autocast's casts and the accumulation of
 * gradients are operators of their own, added by compute.c as for the
 * model's time.  On a device that is the CPU issuing the work
 * (System.host_device) a measured call holds its own dispatch, which the
 * host lane adds as well (host.c): compute.c says how much (the call's
 * dispatch and library calls), taken off here.
 *
 * Every key and batch looked up is recorded where the engine keeps a
 * record (Engine.needs, --kernels-needed): what a probe must measure for
 * the strategies priced, found by the pricing itself. */
#include "model/model.h"
#include "model/kerneltable.h"

#include <math.h>

/* The product QK^T of the attention layer l is part of (ATTN_CORE,
 * ATTN_PV), through the inputs the attention's own layers made; -1 for
 * none. */
static int
attention_qk(const Graph *g, const Layer *l)
{
	for (int steps = 0; steps < 64 && l->attn > ATTN_QK; steps++) {
		const Layer *from = NULL;
		for (int k = 0; k < l->nin && !from; k++) {
			int p = g->tensor[l->in[k]].producer;
			if (p >= 0 && g->layer[p].attn != ATTN_NONE)
				from = &g->layer[p];
		}
		if (!from)
			return -1;
		l = from;
	}
	return l->attn == ATTN_QK ? (int)(l - g->layer) : -1;
}

/* Layer i's key at the analysis's precision and layout, whole (share 1)
 * or the part of it one GPU computes when split 1/share ways along how
 * (kernel_key_shard); *per_sample its batch for one sample.  False where
 * there is none: a layer without a key, a part no split of whole ways
 * makes (a strip with halo rows, a grown layer after a gather). */
static bool
part_key(const Analysis *an, const Graph *g, int i, double share, GridDim how, KernelKey *k,
	 int64_t *per_sample)
{
	double ways;

	if (!kernel_key(g, i, an->q.set.prec, an->q.set.channels_last, k, per_sample))
		return false;
	if (share == 1)
		return true;
	if (how == DIM_DATA || !(share > 0) || share > 1)
		return false;
	ways = round(1 / share);
	if (fabs(share * ways - 1) > 1e-9)
		return false;
	return kernel_key_shard(k, how, (int64_t)ways, k);
}

/* The backward of layer l from the times kt of its key k; model: the
 * model's time of the same backward, for the parts kt lacks.  NAN where
 * the table gives no part of it. */
static double
backward(const Layer *l, const KernelKey *k, const KernelTime *kt, double model)
{
	const Cost *c = &l->cost;
	double fd = (double)c->flops_bwd_data, fw = (double)c->flops_bwd_weight, all = fd + fw;
	bool data = true, weight = false, lack_d, lack_w;
	double t = 0;

	if (c->elems_bwd == 0 && c->flops_bwd == 0)
		return 0; /* no backward: an add passes its gradient on */
	if (k->cls == KC_CONV || (k->cls == KC_GEMM && k->d[3] == 1)) {
		data = fd > 0, weight = fw > 0;
	} else if (k->cls == KC_GEMM) { /* two activations: both gradients */
		data = weight = fd > 0;
		all = 0;
	} else {
		all = 0;
	}
	if (!data && !weight)
		return 0;
	lack_d = data && isnan(kt->bwd_data);
	lack_w = weight && isnan(kt->bwd_weight);
	if ((!data || lack_d) && (!weight || lack_w))
		return NAN;
	if (data)
		t += lack_d ? model * (all > 0 ? fd / all : 0.5) : kt->bwd_data;
	if (weight)
		t += lack_w ? model * (all > 0 ? fw / all : 0.5) : kt->bwd_weight;
	return t;
}

double
table_time(const Analysis *an, const Graph *g, const Layer *l, double n, double share,
	   GridDim how, bool bwd, double model, double call, KernelSource *src)
{
	const KernelTable *t = an->q.sys->table;
	KernelNeeds *needs = an->eng->needs;
	KernelKey k;
	KernelTime kt;
	int64_t per;
	double v;

	*src = KS_NONE;
	if (!t && !needs)
		return NAN;
	if (l->attn == ATTN_CORE || l->attn == ATTN_PV) {
		int qk = attention_qk(g, l);
		KernelSource s;
		if (qk < 0)
			return NAN;
		table_time(an, g, &g->layer[qk], n, share, how, bwd, 0, 0, &s);
		*src = s;
		return s == KS_NONE ? NAN : 0;
	}
	if (!part_key(an, g, (int)(l - g->layer), share, how, &k, &per))
		return NAN;
	kernel_needs_add(needs, &k, n * (double)per);
	if (!t)
		return NAN;
	kt = kernel_lookup(t, &k, n * (double)per);
	if (kt.src == KS_NONE)
		return NAN;
	v = bwd ? backward(l, &k, &kt, model) : kt.fwd;
	if (isnan(v))
		return NAN;
	v -= call; /* a probed CPU's dispatch is the host lane's */
	if (v < 0)
		v = 0;
	*src = kt.src;
	return v;
}
