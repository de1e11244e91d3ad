/* strategy.c -- the parallel strategies of the ParaDL paper as process
 * grids over p GPUs, each predicted for time per iteration and memory per
 * GPU with the model of compute.c and comm.c.
 *
 *   data      every GPU holds the model and B/p samples; gradients are
 *             all-reduced
 *   filter    convolutions and fully connected layers split their output
 *             channels p ways (all-gather of outputs forward, all-reduce of
 *             input gradients backward); other layers are replicated
 *   channel   the same layers split their input channels (all-reduce of
 *             partial outputs forward, all-gather of input gradients)
 *   spatial   the leading layers split H x W(x D) into p strips, exchanging
 *             halos with the neighbours; after the split layer the
 *             activations are gathered and the group continues as data
 *             parallel; gradients are all-reduced
 *   pipeline  contiguous stages (pipeline.c), GPipe schedule
 *   df, ds    p = p1 x p2: data across p1 groups, filter or spatial inside
 *             a group (placed inside a node when it fits); every
 *             factorization is tried and the fastest kept
 *
 * Weak scaling: the global batch is the per-GPU batch times the data-
 * parallel width; strong scaling fixes it.  A grid beyond its strategy's
 * limit is kept with the reason and no times; one over the GPU's memory
 * keeps its times and is marked infeasible; one whose times or memory are
 * not finite, or beyond MAX_TIME and MAX_BYTES, is kept with the reason
 * and no times, so every number a report prints is finite. */
#include "passes/model.h"
#include "passes/passes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The largest prediction kept: seconds (of an iteration or an epoch) and
 * bytes per GPU (below 2^63, so a byte count converts to an integer);
 * docs/limits.md, "Numbers". */
#define MAX_TIME 1e30
#define MAX_BYTES 4611686018427387904.0 /* 2^62 */

typedef struct Ctx {
	const Graph *g;
	Analysis *an;
	const StrategyOpts *o;
	const System *s;
	double delta;     /* bytes per item */
	double W;         /* parameters */
	double arrays;    /* parameter tensors */
} Ctx;

static bool
split_layer(const Layer *l)
{
	OpClass c = op_info[l->op].cls;

	return c == OPC_CONV || c == OPC_FC;
}

static bool
reads_input(const Graph *g, const Layer *l)
{
	for (int i = 0; i < l->nin; i++)
		if (g->tensor[l->in[i]].producer >= 0)
			return false;
	return true;
}

static int64_t
batch_for(const Ctx *c, int64_t data_width)
{
	return c->an->global_batch ? c->an->global_batch : c->an->batch_per_gpu * data_width;
}

/* Layer-wise compute of a grid where the split layers do 1/ways of the
 * work on n samples and the rest is replicated. */
static double
split_compute(const Ctx *c, double n, int64_t ways, bool channel)
{
	double t = 0;

	for (int i = 0; i < c->g->nlayer; i++) {
		const Layer *l = &c->g->layer[i];
		bool split = split_layer(l) && !(channel && reads_input(c->g, l));
		double share = split ? 1.0 / ways : 1;
		t += layer_time(c->s, c->an->prec, c->g, l, n, share, false) +
		     layer_time(c->s, c->an->prec, c->g, l, n, share, true);
	}
	return t;
}

static double
memory(const Ctx *c, Candidate *k, double weights, double act_samples, double act_share)
{
	k->mem.weights = weights * c->delta;
	k->mem.grads = weights * c->delta;
	k->mem.optimizer = weights * optimizer_bytes(c->an->opt);
	k->mem.activations = (double)c->g->total.act_bytes * act_samples * act_share;
	k->mem.buffers = c->s->reserved;
	k->mem.total = k->mem.weights + k->mem.grads + k->mem.optimizer + k->mem.activations +
		       k->mem.buffers;
	return k->mem.total;
}

static void
beyond(Candidate *k, const char *reason)
{
	k->computable = false;
	k->feasible = false;
	k->reason = reason;
	k->bottleneck = "scaling limit";
}

/* ---- data --------------------------------------------------------------- */

static void
data(const Ctx *c, Candidate *k, int64_t p)
{
	int64_t B = batch_for(c, p), gpn = c->s->gpus_per_node;
	double n = (double)B / p;

	k->grid[DIM_DATA] = p;
	k->global_batch = B;
	/* strong scaling: one sample per GPU at most; weak: no more samples
	 * per iteration than the dataset holds */
	k->max_gpus = c->an->global_batch ? B : c->an->dataset_size / c->an->batch_per_gpu;
	if (p > B)
		return beyond(k, "more GPUs than samples in the batch");
	k->per_gpu_batch = n;
	k->t.compute = span_time(c->s, c->an->prec, c->g, 0, c->g->nlayer - 1, n, 1);
	k->t.grad = allreduce_time(c->s, (Group){ p, p < gpn ? p : gpn, 1 }, c->W * c->delta);
	k->t.update = update_time(c->s, c->an->opt, c->W, c->arrays);
	k->t.input = input_time(c->s, n, (double)(p < gpn ? p : gpn), c->an->sample_bytes, c->an->decode);
	memory(c, k, c->W, n, 1);
}

/* ---- filter and channel ------------------------------------------------- */

/* Per-layer collectives of a filter (or channel) split `ways` wide, on n
 * samples, among GPUs placed `per_node` to a node with `sharing` groups
 * per node.  Returns the forward + backward communication time. */
static double
layer_collectives(const Ctx *c, double n, Group grp, bool channel, double *split_w,
		  int64_t *limit)
{
	double t = 0, y, x;

	*split_w = 0;
	*limit = INT64_MAX;
	for (int i = 0; i < c->g->nlayer; i++) {
		const Layer *l = &c->g->layer[i];
		const Shape *in = &c->g->tensor[l->in[0]].shape;
		bool first = reads_input(c->g, l);
		int64_t ways;
		if (!split_layer(l) || (channel && first))
			continue;
		*split_w += (double)l->cost.params;
		/* a convolution's channels follow its leading dimensions (ONNX:
		 * frames or windows merged with the batch) */
		ways = channel ? (op_info[l->op].cls == OPC_CONV ? in->d[l->attr.lead]
								 : in->d[in->rank - 1])
			       : l->attr.filters;
		if (ways < *limit)
			*limit = ways;
		y = (double)c->g->tensor[l->out[0]].elems * n * c->delta;
		x = (double)c->g->tensor[l->in[0]].elems * n * c->delta;
		if (channel) /* partial outputs summed; input gradients gathered */
			t += allreduce_time(c->s, grp, y) + (first ? 0 : allgather_time(c->s, grp, x));
		else         /* outputs gathered; input-gradient partial sums reduced */
			t += allgather_time(c->s, grp, y) + (first ? 0 : allreduce_time(c->s, grp, x));
	}
	return t;
}

/* filter or channel over `ways` GPUs inside data groups of `p1` */
static void
model_split(const Ctx *c, Candidate *k, int64_t p1, int64_t ways, bool channel)
{
	int64_t B = batch_for(c, p1), gpn = c->s->gpus_per_node, limit;
	int64_t inner = ways < gpn ? ways : gpn;
	double n = (double)B / p1, split_w, local_w;
	GridDim dim = channel ? DIM_CHANNEL : DIM_FILTER;
	Group grp = { ways, inner, 1 };

	k->grid[dim] = ways;
	if (p1 > 1)
		k->grid[DIM_DATA] = p1;
	k->global_batch = B;
	k->t.layer = layer_collectives(c, n, grp, channel, &split_w, &limit);
	k->max_gpus = limit;
	if (p1 > B)
		return beyond(k, "more data groups than samples in the batch");
	if (ways > limit)
		return beyond(k, channel ? "more GPUs than the fewest input channels of a layer"
					 : "more GPUs than the fewest filters of a layer");
	k->per_gpu_batch = n;
	k->t.compute = split_compute(c, n, ways, channel);
	local_w = split_w / ways + (c->W - split_w);
	/* data groups: one GPU per group in each node position; the node's
	 * other GPUs run the other positions' all-reduces at the same time */
	k->t.grad = allreduce_time(c->s, (Group){ p1, p1 * ways <= gpn ? p1 : 1,
						  p1 * ways <= gpn ? 1 : inner },
				   local_w * c->delta);
	k->t.update = update_time(c->s, c->an->opt, local_w, c->arrays);
	/* each sample is loaded once per model-parallel group */
	k->t.input = input_time(c->s, n / ways, (double)(p1 * ways < gpn ? p1 * ways : gpn),
				c->an->sample_bytes, c->an->decode);
	memory(c, k, local_w, n, 1);
}

/* ---- spatial ------------------------------------------------------------ */

/* Layers with spatial extent to split: the leading run whose outputs have
 * at least `ways` rows.  Returns the last layer that can be split. */
static int
spatial_limit(const Graph *g, int64_t ways)
{
	int last = -1;

	for (int i = 0; i < g->nlayer; i++) {
		const Shape *y = &g->tensor[g->layer[i].out[0]].shape;
		if (y->rank < 2 || y->d[1] < ways)
			break;
		last = i;
	}
	return last;
}

/* Halo bytes of layer l for n samples: floor(K/2) rows of the input on
 * each side of a strip, forward, and of the output gradient, backward. */
static double
halo(const Ctx *c, const Layer *l, double n, bool bwd)
{
	const Shape *s = &c->g->tensor[bwd ? l->out[0] : l->in[0]].shape;
	double row = 1;
	int64_t k = l->attr.kernel[0] / 2;

	if ((op_info[l->op].cls != OPC_CONV && op_info[l->op].cls != OPC_POOL) || k < 1 ||
	    s->rank < 2)
		return -1;
	for (int i = 0; i < s->rank; i++)
		if (i != 1)
			row *= (double)s->d[i];
	return k * row * n * c->delta;
}

/* Halo exchange of one layer, forward and backward: a strip with
 * neighbours on both sides sends one halo to each, one after the other
 * (the paper's 2 alpha per layer and pass). */
static double
halo_time(const Ctx *c, const Layer *l, double n, int64_t ways)
{
	bool across = ways > c->s->gpus_per_node;
	double h;

	if (ways <= 1 || (h = halo(c, l, n, false)) < 0)
		return 0;
	return (ways > 2 ? 2 : 1) *
	       (p2p_time(c->s, h, across) + p2p_time(c->s, halo(c, l, n, true), across));
}

/* The gather of the split layer's output forward and the scatter of its
 * gradient backward. */
static double
split_gather(const Ctx *c, int split, double n, int64_t ways)
{
	int64_t gpn = c->s->gpus_per_node;

	return 2 * allgather_time(c->s, (Group){ ways, ways < gpn ? ways : gpn, 1 },
				  (double)c->g->tensor[c->g->layer[split].out[0]].elems * n *
					  c->delta);
}

/* The split point with the least time, in one pass: prefix sums of the
 * split layers' compute and halos, suffix sums of the data-parallel rest
 * (grad, update and input do not depend on the split). */
static int
best_split(const Ctx *c, double n, int64_t ways, int last)
{
	const Graph *g = c->g;
	int L = g->nlayer, best = 0;
	double *rest = xcalloc(L + 1, sizeof *rest), head = 0, best_t = INFINITY;

	for (int i = L - 1; i >= 0; i--)
		rest[i] = rest[i + 1] + span_time(c->s, c->an->prec, g, i, i, n / ways, 1);
	for (int i = 0; i <= last; i++) {
		double t;
		head += span_time(c->s, c->an->prec, g, i, i, n, 1.0 / ways) +
			halo_time(c, &g->layer[i], n, ways);
		t = head + rest[i + 1] + split_gather(c, i, n, ways);
		if (t < best_t * (1 - 1e-12)) /* ties (rounding apart): the earliest */
			best_t = t, best = i;
	}
	free(rest);
	return best;
}

/* Spatial over `ways` GPUs inside data groups of p1 (ds when p1 > 1),
 * split after layer `split`. */
static void
spatial_at(const Ctx *c, Candidate *k, int64_t p1, int64_t ways, int split)
{
	int64_t B = batch_for(c, p1), gpn = c->s->gpus_per_node;
	double n = (double)B / p1;

	k->split = split;
	k->per_gpu_batch = n / ways;
	k->t.compute = span_time(c->s, c->an->prec, c->g, 0, split, n, 1.0 / ways) +
		       span_time(c->s, c->an->prec, c->g, split + 1, c->g->nlayer - 1,
				 n / ways, 1);
	k->t.p2p = 0;
	for (int i = 0; i <= split; i++)
		k->t.p2p += halo_time(c, &c->g->layer[i], n, ways);
	k->t.layer = split_gather(c, split, n, ways);
	k->t.grad = allreduce_time(c->s,
				   (Group){ p1 * ways, p1 * ways < gpn ? p1 * ways : gpn, 1 },
				   c->W * c->delta);
	k->t.update = update_time(c->s, c->an->opt, c->W, c->arrays);
	/* each sample is loaded once per model-parallel group */
	k->t.input = input_time(c->s, n / ways, (double)(p1 * ways < gpn ? p1 * ways : gpn),
				c->an->sample_bytes, c->an->decode);
	memory(c, k, c->W, n, 1.0 / ways);
}

static double
partial_total(const Candidate *k)
{
	double rest = k->t.compute + k->t.bubble + k->t.grad + k->t.layer + k->t.p2p +
		      k->t.update;
	return rest > k->t.input ? rest : k->t.input;
}

static void
spatial(const Ctx *c, Candidate *k, int64_t p1, int64_t ways)
{
	int64_t B = batch_for(c, p1);
	int last = spatial_limit(c->g, ways);

	k->grid[DIM_SPATIAL] = ways;
	if (p1 > 1)
		k->grid[DIM_DATA] = p1;
	k->global_batch = B;
	k->max_gpus = c->g->nlayer ? c->g->tensor[c->g->layer[0].out[0]].shape.d[1] : 1;
	if (p1 > B)
		return beyond(k, "more data groups than samples in the batch");
	/* rows are the second dimension of [C, H, W]: a model whose layers
	 * have dimensions before the channels (an ONNX file that merges
	 * frames or windows with the batch) has them elsewhere */
	for (int i = 0; i < c->g->nlayer; i++)
		if (c->g->layer[i].attr.lead > 0) {
			k->max_gpus = 1;
			return beyond(k, "layers with dimensions before the channels are not "
					 "split spatially");
		}
	if (last < 0)
		return beyond(k, "more GPUs than rows in the first layer's output");
	spatial_at(c, k, p1, ways,
		   c->o->spatial_split == SPLIT_ALL ? last
						    : best_split(c, (double)B / p1, ways, last));
}

/* ---- common ------------------------------------------------------------- */

static const char *
bottleneck(const Candidate *k)
{
	struct { double v; const char *name; } part[] = {
		{ k->t.compute, "compute" },
		{ k->t.bubble, "pipeline bubble and imbalance" },
		{ k->t.grad, "gradient exchange" },
		{ k->t.layer, "layer-wise collectives" },
		{ k->t.p2p, "point-to-point/halo" },
		{ k->t.update, "weight update" },
	};
	const char *worst = part[0].name;
	double v = part[0].v;

	if (k->t.input >= k->t.compute + k->t.bubble + k->t.communication + k->t.update)
		return "input pipeline"; /* it sets the pace */
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
			     k->t.update, k->t.input, k->t.communication, k->t.total, k->epoch };
	const double m[] = { k->mem.weights, k->mem.grads, k->mem.optimizer,
			     k->mem.activations, k->mem.buffers, k->mem.total };

	if (!within(t, sizeof t / sizeof t[0], MAX_TIME))
		return "time overflows";
	if (!within(m, sizeof m / sizeof m[0], MAX_BYTES))
		return "memory overflows";
	return NULL;
}

/* The end of every candidate's prediction: the sums, the bottleneck and
 * whether it fits; a candidate whose figures overflow is not computable. */
static void
finish(const Ctx *c, Candidate *k)
{
	const char *why;

	if (!k->computable && k->reason)
		return;
	k->computable = true;
	k->t.communication = k->t.grad + k->t.layer + k->t.p2p;
	k->t.total = partial_total(k);
	k->epoch = k->t.total * ceil((double)c->an->dataset_size / (double)k->global_batch);
	if ((why = overflow(k))) {
		k->computable = false;
		k->feasible = false;
		k->reason = why;
		k->bottleneck = why;
		return;
	}
	k->bottleneck = bottleneck(k);
	k->feasible = k->mem.total <= c->s->mem;
	if (!k->feasible) {
		k->reason = "does not fit in GPU memory";
		k->bottleneck = "memory capacity";
	}
}

/* The better of two candidates: feasible first, then the shorter epoch
 * (iterations differ in size between strategies under weak scaling; the
 * time to see the whole dataset compares them fairly). */
static bool
better(const Candidate *a, const Candidate *b)
{
	if (a->computable != b->computable)
		return a->computable;
	if (a->feasible != b->feasible)
		return a->feasible;
	return a->computable && a->epoch < b->epoch;
}

/* Hybrids: every p = p1 x p2 with both factors > 1. */
static void
hybrid(const Ctx *c, Candidate *k, int64_t p, bool ds)
{
	int64_t grid[DIM_COUNT] = { 0 };
	Candidate best = { .kind = k->kind, .split = -1 }, tmp;
	bool any = false;

	for (int64_t p2 = 2; p2 < p; p2++) {
		if (p % p2)
			continue;
		tmp = (Candidate){ .kind = k->kind, .split = -1 };
		grid[DIM_DATA] = p / p2;
		grid[ds ? DIM_SPATIAL : DIM_FILTER] = p2;
		if (c->o->paper)
			paper_predict(c->g, c->an, k->kind, grid, &tmp);
		else if (ds)
			spatial(c, &tmp, p / p2, p2);
		else
			model_split(c, &tmp, p / p2, p2, false);
		finish(c, &tmp);
		if (!any || better(&tmp, &best))
			best = tmp, any = true;
	}
	if (!any)
		return beyond(k, "needs two factors above 1 (p = p1 x p2)");
	best.analysed = k->analysed;
	*k = best;
}

/* One strategy at the analysis's GPU count (hybrids: the best grid). */
static void
analyse_one(const Ctx *c, Candidate *cd, StrategyKind k)
{
	static const GridDim dim[] = { [STRAT_DATA] = DIM_DATA, [STRAT_SPATIAL] = DIM_SPATIAL,
				       [STRAT_PIPELINE] = DIM_PIPELINE, [STRAT_FILTER] = DIM_FILTER,
				       [STRAT_CHANNEL] = DIM_CHANNEL };
	int64_t p = c->an->gpus, grid[DIM_COUNT] = { 0 };

	if (c->o->paper && k != STRAT_DF && k != STRAT_DS) {
		grid[dim[k]] = p;
		paper_predict(c->g, c->an, k, grid, cd);
		cd->analysed = true;
		return;
	}
	switch (k) {
	case STRAT_DATA: data(c, cd, p); break;
	case STRAT_FILTER: model_split(c, cd, 1, p, false); break;
	case STRAT_CHANNEL: model_split(c, cd, 1, p, true); break;
	case STRAT_SPATIAL: spatial(c, cd, 1, p); break;
	case STRAT_PIPELINE: pipeline(c->g, c->an, cd, p, c->o->cut_after); break;
	case STRAT_DF: hybrid(c, cd, p, false); break;
	case STRAT_DS: hybrid(c, cd, p, true); break;
	case STRAT_COUNT: break;
	}
}

bool
strategy_predict(const Graph *g, Analysis *an, const StrategyOpts *o, StrategyKind kind,
		 const int64_t grid[DIM_COUNT], Candidate *k)
{
	Ctx c = { g, an, o, an->sys, g->elem_bytes, (double)g->total.params, 0 };
	int64_t p1 = grid[DIM_DATA] ? grid[DIM_DATA] : 1;

	for (int i = 0; i < g->nlayer; i++)
		c.arrays += g->layer[i].nw;
	*k = (Candidate){ .kind = kind, .split = -1, .analysed = true };
	if (o->paper) {
		paper_predict(g, an, kind, grid, k);
		finish(&c, k);
		return true;
	}
	switch (kind) {
	case STRAT_DATA: data(&c, k, p1); break;
	case STRAT_FILTER:
	case STRAT_DF: model_split(&c, k, p1, grid[DIM_FILTER], false); break;
	case STRAT_CHANNEL: model_split(&c, k, p1, grid[DIM_CHANNEL], true); break;
	case STRAT_SPATIAL:
	case STRAT_DS: spatial(&c, k, p1, grid[DIM_SPATIAL]); break;
	case STRAT_PIPELINE: pipeline(g, an, k, grid[DIM_PIPELINE], o->cut_after); break;
	case STRAT_COUNT: return false;
	}
	finish(&c, k);
	return true;
}

bool
strategies_run(const Graph *g, Analysis *an, const StrategyOpts *o)
{
	Ctx c = { g, an, o, an->sys, g->elem_bytes, (double)g->total.params, 0 };
	double best = INFINITY, second = INFINITY;

	for (int i = 0; i < g->nlayer; i++)
		c.arrays += g->layer[i].nw;
	an->best = -1;
	if (o->forced) {
		for (int k = 0; k < STRAT_COUNT; k++)
			an->cand[k] = (Candidate){ .kind = (StrategyKind)k, .split = -1 };
		strategy_predict(g, an, o, o->kind, o->grid, &an->cand[o->kind]);
		an->best = an->cand[o->kind].feasible ? (int)o->kind : -1;
		an->runner_up_ratio = 0;
		return true;
	}
	for (int k = 0; k < STRAT_COUNT; k++) {
		Candidate *cd = &an->cand[k];
		*cd = (Candidate){ .kind = (StrategyKind)k, .split = -1 };
		if (!(o->mask & (1u << k)))
			continue;
		cd->analysed = true;
		analyse_one(&c, cd, (StrategyKind)k);
		finish(&c, cd);
		/* a tie (rounding apart) goes to the simpler, earlier strategy */
		if (cd->feasible && cd->epoch < best * (1 - 1e-9)) {
			second = best;
			best = cd->epoch;
			an->best = k;
		} else if (cd->feasible && cd->epoch < second) {
			second = cd->epoch;
		}
	}
	an->runner_up_ratio = isfinite(second) && best > 0 ? second / best : 0;
	return true;
}
