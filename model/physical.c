/* physical.c -- the default cost model (--cost-model default): each
 * strategy on its grid, predicted for time per iteration and memory per
 * GPU from the layers' times (compute.c), the collectives on the cluster
 * (comm.c) and the grid's place on it (mapping.c); docs/model.md, "The
 * strategies".
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
 *             a group (placed inside a node when it fits)
 *
 * Weak scaling: the global batch is the per-GPU batch times the data-
 * parallel width; strong scaling fixes it.  A grid beyond its strategy's
 * limit is left not computable with the reason; strategy.c does the rest
 * (sums, epoch, feasibility, ranking). */
#include "model/costmodel.h"
#include "model/reuse.h"
#include "util/checked.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>


typedef struct Ctx {
	const Graph *g;
	const Analysis *an;
	const PredictCtx *pc;
	const System *s;
	Mapping map;      /* the grid on the cluster */
	const int64_t *grid; /* its sizes, DIM_COUNT */
	double delta;     /* bytes per item */
	double W;         /* parameters */
	double arrays;    /* parameter tensors */
} Ctx;

static int64_t
batch_for(const Ctx *c, int64_t data_width)
{
	return c->an->q.set.global_batch ? c->an->q.set.global_batch
					 : c->an->q.set.batch_per_gpu * data_width;
}

/* Layer-wise compute of a grid where the split layers do 1/ways of the
 * work on n samples and the rest is replicated. */
static double
split_compute(const Ctx *c, double n, int64_t ways, bool channel)
{
	Times whole = layer_times(c->an, c->g, n, 1, DIM_DATA),
	      part = layer_times(c->an, c->g, n, 1.0 / ways, channel ? DIM_CHANNEL : DIM_FILTER);
	const LayerTable *tb = layer_table(c->an, c->g);
	double t = 0;

	/* the layers a split divides: conv and fc (channel: but those that
	 * read the input), model_split_layer's */
	for (int i = 0; i < c->g->nlayer; i++) {
		bool split = tb->split[i] & (1u << channel);
		const Times *r = split ? &part : &whole;
		t += times_of(r, i, false) + times_of(r, i, true);
	}
	return t;
}

/* The memory breakdown of a GPU holding `weights` parameters and the
 * activations of act_samples samples, act_share of each. */
static void
memory(const Ctx *c, Candidate *k, double weights, double act_samples, double act_share)
{
	KeptBytes t = kept(c->an, c->g);

	if (c->an->rc.k) /* recomputation keeps a fraction of them */
		t.act = (int64_t)((double)t.act * c->an->rc.fraction);
	k->mem.weights = weights * c->delta + mem_cast_weights(c->an, c->g, weights);
	k->mem.grads = weights * c->delta;
	k->mem.optimizer = weights * optimizer_bytes(c->an->q.set.opt);
	if (c->an->q.set.zero || master_weights(c->an))
		zero_memory(c->an, c->g, weights, (double)zero_group(c->an, c->map.grad).size,
			    &k->mem);
	mem_activations(&k->mem, &t, act_samples, act_share);
	mem_total(&k->mem, c->s);
}

/* Under ZeRO: the optimizer step on this GPU's shard of the `weights`
 * (zero_step_arrays: stage 1 whole tensors or a flat slice as the
 * implementation partitions, stages 2 and 3 one flat shard) -- and stage 3's parameter
 * gathers beside the gradient exchange; FSDP hybrid shards inside the
 * node, and its exchange is the node's. */
static void
sharded(const Ctx *c, Candidate *k, double weights)
{
	Group shard = zero_group(c->an, c->map.grad);
	double hidden, left = k->t.compute, nd = shard.size > 1 ? (double)shard.size : 1;

	if (!c->an->q.set.zero)
		return;
	k->t.update = update_time(c->an, weights / nd, zero_step_arrays(c->an, c->arrays, nd));
	if (zero_fsdp(c->an)) { /* as FSDP runs: nothing hidden (zero.c) */
		int gathers;
		k->t.grad = fsdp_exchange(c->an, c->g, c->map.grad, weights, &gathers);
		k->t.grad_hidden = 0;
		return;
	}
	if (shard.size < c->map.grad.size) { /* in the window DDP's exchange had */
		k->t.grad = zero_node_exchange(c->an, c->g, c->map.grad, weights,
					       k->t.grad_hidden, &hidden);
		k->t.grad_hidden = hidden;
		left -= hidden;
	} else {
		zero_exchange(c->an, c->g, shard, weights, &k->t.grad, &k->t.grad_hidden);
	}
	k->t.grad += zero_gather_time(c->an, c->g, shard, weights, left, &hidden);
	k->t.grad_hidden += hidden;
}

/* How a strategy splits its layers' work, for recompute. */
typedef enum Work { WORK_ROWS, WORK_FILTER, WORK_CHANNEL } Work;

/* The input of one iteration (docs/model.md, "Input pipeline").  Each
 * GPU's process loads its `own` samples with its share of the node's
 * cores; a node loader (Implementation.model_loader, for the strategies
 * with a model-parallel group) prepares the node's `node` samples on all
 * its cores, then every GPU receives the whole node batch through host
 * memory and copies it to the GPU (t.feed). */
static void
input(const Ctx *c, Candidate *k, double own, double node, bool model_parallel)
{
	const System *s = c->s;
	double tensor = c->g->ninput ? (double)c->g->tensor[c->g->input[0]].elems * 4 : 0;

	if (c->an->q.set.data == DATA_SYNTHETIC)
		return; /* on the GPU already */
	if (model_parallel && c->an->q.impl.node_loader) {
		k->t.input = input_time(c->an, node, s->cpu_cores, node, (double)c->map.nodes);
		k->t.feed = 2 * node * tensor / c->an->q.impl.staging_bw;
		return;
	}
	k->t.input = input_time(c->an, own, (double)s->cpu_cores / s->gpus_per_node, node,
				(double)c->map.nodes);
}

/* The samples of one node: `per_gpu` on each of its GPUs of the job. */
static double
node_samples(const Ctx *c, double per_gpu)
{
	return per_gpu * (double)c->map.in_node;
}

/* Recomputation's time: the forward again of the layers it recomputes
 * (those before the last segment, or attention's cores), each at n
 * samples up to layer `head` (every layer when head is -1) and n_tail
 * after it, and at share 1 or 1 / ways for the layers split: the
 * convolutions and fc layers (filter; channel: but the first), the
 * spatially split head (rows). */
static void
recompute(const Ctx *c, Candidate *k, double n, double n_tail, int64_t ways, int head,
	  Work split)
{
	const Recompute *rc = &c->an->rc;
	const LayerTable *tb = layer_table(c->an, c->g);
	Times row[4]; /* [tail][part] */
	bool have[4] = { false };
	double t = 0;

	if (!rc->k)
		return;
	for (int i = 0; i < c->g->nlayer; i++) {
		/* split_layer; for channel, but those that read the input */
		bool part = split == WORK_FILTER    ? tb->split[i] & 1
			    : split == WORK_CHANNEL ? tb->split[i] & 2
						    : i <= head;
		bool tail = !(i <= head || head < 0);
		int w = 2 * tail + part;
		if (!(rc->redo ? rc->redo[i] : i < rc->first_kept))
			continue;
		if (!have[w])
			row[w] = layer_times(c->an, c->g, tail ? n_tail : n, part ? 1.0 / ways : 1,
					     split == WORK_FILTER    ? DIM_FILTER
					     : split == WORK_CHANNEL ? DIM_CHANNEL
								     : DIM_SPATIAL),
			have[w] = true;
		t += times_of(&row[w], i, false);
	}
	k->t.recompute = t;
}

/* The passes of gradient accumulation an iteration runs: --micro-batches,
 * else 1 (every strategy but the pipelines, whose micro-batches are their
 * schedule's). */
static int64_t
accumulation(const Analysis *an)
{
	return an->q.set.micro_batches > 1 ? an->q.set.micro_batches : 1;
}

/* ---- data --------------------------------------------------------------- */

static void
data(const Ctx *c, Candidate *k)
{
	int64_t p = c->map.gpus, B = batch_for(c, p);
	int64_t M = accumulation(c->an);
	double n = (double)B / p;
	Times r;

	k->grid[DIM_DATA] = p;
	k->global_batch = B;
	/* strong scaling: one sample per GPU at most; weak: no more samples
	 * per iteration than the dataset holds */
	k->max_gpus = c->an->q.set.global_batch
			      ? B
			      : c->an->q.set.dataset_size / c->an->q.set.batch_per_gpu;
	if (p > B)
		return beyond_limit(k, "more GPUs than samples in the batch");
	k->per_gpu_batch = n;
	/* gradient accumulation: M forward-backward passes of n / M samples,
	 * one exchange, overlapped with the last backward */
	if ((double)M > n)
		return beyond_limit(k, "more micro-batches than samples per GPU");
	k->micro_batches = M;
	r = layer_times(c->an, c->g, n / M, 1, DIM_DATA);
	k->t.compute = (double)M * times_span(&r, 0, c->g->nlayer - 1);
	k->t.grad = grad_time(c->an, c->g, c->map.grad, n / M, NULL, &k->t.grad_hidden);
	k->t.reducer = reducer_time(c->an, c->g, c->map.grad, 0, c->g->nlayer - 1, NULL);
	k->t.update = update_time(c->an, c->W, c->arrays);
	k->t.sync_bn = (double)M * sync_bn_time(c->an, c->g, c->map.grad, 0, c->g->nlayer - 1);
	sharded(c, k, c->W);
	recompute(c, k, n / M, n / M, 1, -1, WORK_ROWS);
	k->t.recompute *= (double)M;
	input(c, k, n, node_samples(c, n), false);
	memory(c, k, c->W, n / M, 1);
}

/* ---- filter and channel ------------------------------------------------- */

/* Per-layer collectives of a filter (or channel) split over the model-
 * parallel group, on n samples.  Returns the forward + backward
 * communication time; *split_w the split layers' parameters, *limit the
 * fewest ways a split layer allows. */

static double
layer_collectives(const Ctx *c, double n, bool channel, double *split_w, int64_t *limit)
{
	Times col = split_times(c->an, c->g, n, c->map.model, channel);
	const LayerTable *tb = layer_table(c->an, c->g);
	double t = 0;

	*split_w = 0;
	*limit = tb->most[channel];
	for (int i = 0; i < c->g->nlayer; i++) {
		if (!(tb->split[i] & (1u << channel)))
			continue;
		*split_w += (double)tb->params[i];
		t += times_of(&col, i, false);
	}
	return t;
}

/* filter or channel over the model-parallel group, inside data groups
 * (df when there are several); gradient accumulation as data's: M
 * micro-batches of m = n / M samples, one exchange */
static void
model_split(const Ctx *c, Candidate *k, bool channel)
{
	int64_t p1 = c->map.replicas, ways = c->map.q, B = batch_for(c, p1), limit;
	int64_t M = accumulation(c->an);
	double n = (double)B / p1, m = n / (double)M, split_w, local_w, *wshare;
	const LayerTable *tb;

	k->grid[channel ? DIM_CHANNEL : DIM_FILTER] = ways;
	if (p1 > 1)
		k->grid[DIM_DATA] = p1;
	k->global_batch = B;
	k->t.layer = (double)M * layer_collectives(c, m, channel, &split_w, &limit);
	k->max_gpus = limit;
	if (p1 > B)
		return beyond_limit(k, "more data groups than samples in the batch");
	if (ways > limit)
		return beyond_limit(k,
				    channel ? "more GPUs than the fewest input channels of a layer"
					    : "more GPUs than the fewest filters of a layer");
	if ((double)M > n)
		return beyond_limit(k, "more micro-batches than samples per GPU");
	k->per_gpu_batch = n;
	k->micro_batches = M;
	k->t.compute = (double)M * split_compute(c, m, ways, channel);
	local_w = c->W - split_w;
	wshare = engine_scratch(c->an->eng, SC_PHYS_WSHARE, (size_t)c->g->nlayer + 1,
				sizeof *wshare);
	tb = layer_table_full(c->an, c->g);
	for (int i = 0; i < c->g->nlayer; i++) {
		double held;
		wshare[i] = 1;
		if (!(tb->split[i] & (1u << channel)) || tb->params[i] <= 0)
			continue;
		held = split_params_of(tb->params[i], tb->kernel[i], channel, (double)ways);
		local_w += held;
		wshare[i] = held / (double)tb->params[i];
	}
	k->t.grad = grad_time(c->an, c->g, c->map.grad, m, wshare, &k->t.grad_hidden);
	k->t.reducer = reducer_time(c->an, c->g, c->map.grad, 0, c->g->nlayer - 1, wshare);
	k->t.update = update_time(c->an, local_w, c->arrays);
	sharded(c, k, local_w);
	recompute(c, k, m, m, ways, -1, channel ? WORK_CHANNEL : WORK_FILTER);
	k->t.recompute *= (double)M;
	/* each sample is loaded once per model-parallel group */
	input(c, k, n / ways, node_samples(c, n / ways), ways > 1);
	memory(c, k, local_w, m, 1);
}

/* ---- tensor ------------------------------------------------------------- */

/* The ring attention of every attention of the transformer on one
 * micro-batch of mc x C samples (model/context.c), into k->t.ring; a
 * recomputed core runs its forward's ring again. */
static void
ring(const Ctx *c, Candidate *k, const Times *whole, const Times *part, int64_t t, int64_t C,
     double mc)
{
	for (int j = 0; j < c->an->tf.layers; j++) {
		double fwd;
		bool redo;
		double all = context_attention(c->an, c->g, j, whole, part, t, c->map.context,
					       mc * (double)C, &fwd, &redo);
		k->t.ring += all + (redo ? fwd : 0);
	}
}

/* tensor, dt, context, dc and dtc: Megatron-LM's tensor parallelism over
 * t GPUs (model/tensor.c) and its context parallelism over rings of C
 * (model/context.c), inside data groups of p1, each GPU's n samples in M
 * micro-batches whose gradients accumulate before one exchange over data
 * x context (docs/model.md, "tensor, dt and dpt", "context, dc and dtc").
 * Context parallelism runs every layer on s/C of each sequence: priced
 * as 1/C of the samples, the attention's queries against the whole
 * sequence included ((s/C) x s of s x s). */
static void
tensor(const Ctx *c, Candidate *k)
{
	const Analysis *an = c->an;
	const Graph *g = c->g;
	const Recompute *rc = &an->rc;
	int64_t p1 = c->map.replicas, B = batch_for(c, p1);
	int64_t t = c->grid[DIM_TENSOR] > 0 ? c->grid[DIM_TENSOR] : 1;
	int64_t C = c->grid[DIM_CONTEXT] > 0 ? c->grid[DIM_CONTEXT] : 1;
	int64_t M = accumulation(an);
	const LayerTable *tb = layer_table_tensor(an, g);
	const TensorTable *tt = &tb->tensor;
	bool sp = an->q.set.sequence_parallel && t > 1;
	double n = (double)B / p1, m, mc, local_w = 0, *wshare;
	const char *why;
	Times whole, part, col;

	if (c->grid[DIM_TENSOR] > 0)
		k->grid[DIM_TENSOR] = t;
	if (c->grid[DIM_CONTEXT] > 0)
		k->grid[DIM_CONTEXT] = C;
	if (p1 > 1)
		k->grid[DIM_DATA] = p1;
	k->global_batch = B;
	/* the model-parallel dimensions' limits: the fewest heads or
	 * features a layer splits, half the sequence (kept at INT64_MAX
	 * where the product overflows) */
	k->max_gpus = c->grid[DIM_TENSOR] > 0 && tt->most < INT64_MAX ? tt->most : 1;
	if (c->grid[DIM_CONTEXT] > 0 && !ck_mul(k->max_gpus, context_limit(&an->tf), &k->max_gpus))
		k->max_gpus = INT64_MAX;
	if (p1 > B)
		return beyond_limit(k, "more data groups than samples in the batch");
	if (c->grid[DIM_CONTEXT] > 0 && (why = context_refusal(&an->tf, C)))
		return beyond_limit(k, why);
	if (c->grid[DIM_TENSOR] > 0 && (why = tensor_refusal(tt, t)))
		return beyond_limit(k, why);
	if ((double)M > n)
		return beyond_limit(k, "more micro-batches than samples per GPU");
	k->per_gpu_batch = n;
	k->micro_batches = M;
	m = n / (double)M;
	mc = m / (double)C; /* a GPU's s/C of m samples */
	whole = layer_times(an, g, mc, 1, DIM_DATA);
	part = layer_times(an, g, mc, 1.0 / (double)t, DIM_TENSOR); /* no table shard: the model */
	col = tensor_times(an, g, mc, c->map.tensor, sp);
	wshare = engine_scratch(an->eng, SC_PHYS_WSHARE, (size_t)g->nlayer + 1, sizeof *wshare);
	for (int i = 0; i < g->nlayer; i++) {
		double share = tensor_share(tt, i, (double)t, sp), w;
		const Times *r = share < 1 ? &part : &whole;
		k->t.compute += times_of(r, i, false) + times_of(r, i, true);
		k->t.layer += times_of(&col, i, false) + times_of(&col, i, true);
		/* recomputation runs the layer's forward again, its
		 * collectives with it (Megatron's checkpointed forward) */
		if (rc->k && (rc->redo ? rc->redo[i] : i < rc->first_kept))
			k->t.recompute += times_of(r, i, false) + times_of(&col, i, false);
		w = tensor_params(tt, tb, i, (double)t);
		wshare[i] = tb->params[i] > 0 ? w / (double)tb->params[i] : 1;
		local_w += w;
	}
	if (C > 1)
		ring(c, k, &whole, &part, t, C, mc);
	k->t.compute *= (double)M;
	k->t.layer *= (double)M;
	k->t.recompute *= (double)M;
	k->t.ring *= (double)M;
	k->t.p2p = k->t.ring;
	k->t.grad = grad_time(an, g, c->map.grad, mc, wshare, &k->t.grad_hidden);
	k->t.reducer = reducer_time(an, g, c->map.grad, 0, g->nlayer - 1, wshare);
	k->t.update = update_time(an, local_w, c->arrays);
	sharded(c, k, local_w);
	/* each sample is loaded once per tensor-parallel group, its s/C
	 * tokens by each GPU of a ring */
	input(c, k, n / (double)(t * C), node_samples(c, n / (double)(t * C)), t * C > 1);
	memory(c, k, local_w, m, tensor_kept_share(an, g, (double)t, sp) / (double)C);
}

/* ---- spatial ------------------------------------------------------------ */

/* The strips an implementation with halo rows (Implementation.halo_rows,
 * ParaDL's chainermnx) computes: a split convolution is unpadded on the
 * split axis and fed the halo rows its padding asks for (zeros on the edge
 * GPUs), a split pooling gets K/2 rows from each neighbour and covers all
 * (Chainer's cover_all), so a strip of r rows gives
 *
 *   conv  floor((r + 2 pad - K') / s) + 1      (K' the dilated kernel)
 *   pool  ceil((r + 2 floor(K/2) - K) / s) + 1
 *   other r x (its output rows / its input rows)
 *
 * from ceil(H / ways) rows of the input: more than the exact 1/ways of a
 * layer where the halos accumulate (VGG16 on 4 GPUs: 56, 29, 16, 9, 6, 4
 * rows after its pools where an exact split has 56, 28, 14, 7, 3.5).
 * share[i] is layer i's strip over its whole output, for i <= split; the
 * gathered output of layer `split` has ways x its strip rows, which the
 * first layer with weights after it reads whole (VGG16's fc6: 16 rows of
 * 512 x 7 where the model has 7).  Returns that growth of the gathered
 * rows (1 when a global pooling comes first). */
static double
strips(const Ctx *c, int64_t ways, int split, double *share, int *grown)
{
	const Graph *g = c->g;
	double *r = engine_scratch(c->an->eng, SC_PHYS_ROWS, (size_t)g->ntensor, sizeof *r), growth;
	const Shape *y;

	memset(r, 0, (size_t)g->ntensor * sizeof *r);
	*grown = -1;
	for (int i = 0; i <= split; i++) {
		const Layer *l = &g->layer[i];
		const Tensor *x = &g->tensor[l->in[0]];
		double rin = x->producer >= 0 ? r[l->in[0]]
			     : x->shape.rank >= 2 ? ceil((double)x->shape.d[1] / (double)ways)
						  : 1;
		double full = (double)g->tensor[l->out[0]].shape.d[1], rout;
		int64_t k = l->attr.kernel[0], st = l->attr.stride[0];
		OpClass c = op_info[l->op].cls;
		if (c == OPC_CONV && k > 0) {
			rout = floor((rin + 2.0 * (double)l->attr.pad[0] -
				      (double)dilated_kernel(l)) /
				     (double)(st > 0 ? st : 1)) +
			       1;
		} else if (c == OPC_POOL && k > 0) {
			rout = ceil((rin + 2.0 * (double)(k / 2) - (double)k) /
				    (double)(st > 0 ? st : k)) + 1;
		} else if (x->shape.rank >= 2 && x->shape.d[1] > 0) {
			rout = ceil(rin * full / (double)x->shape.d[1]);
		} else { /* no rows to follow */
			rout = ceil(full / (double)ways);
		}
		r[l->out[0]] = rout < 1 ? 1 : rout;
		share[i] = r[l->out[0]] / full;
	}
	y = &g->tensor[g->layer[split].out[0]].shape;
	growth = (double)ways * r[g->layer[split].out[0]] / (double)y->d[1];
	for (int i = split + 1; i < g->nlayer; i++) {
		const Shape *o = &g->tensor[g->layer[i].out[0]].shape;
		if (g->layer[i].cost.params > 0) {
			*grown = i;
			return growth;
		}
		if (o->rank >= 2 && o->d[1] == 1 && y->d[1] > 1)
			return 1; /* a global pooling: one row whatever it read */
	}
	return 1;
}

/* The samples each GPU runs the layers after the gather on: its share of
 * the group's n, or all n where the implementation replicates them. */
static double
after_gather(const Ctx *c, double n, int64_t ways)
{
	return c->an->q.impl.replicated ? n : n / ways;
}

/* The split point with the least time, in one pass: prefix sums of the
 * split layers' compute and halos, suffix sums of the data-parallel rest
 * (grad, update and input do not depend on the split). */
static int
best_split(const Ctx *c, double n, int64_t ways, int last)
{
	const Graph *g = c->g;
	int L = g->nlayer, best = 0;
	double *rest = engine_scratch(c->an->eng, SC_PHYS_REST, (size_t)L + 1, sizeof *rest),
	       head = 0, best_t = INFINITY;
	Times after = layer_times(c->an, g, after_gather(c, n, ways), 1, DIM_DATA);
	Times part = layer_times(c->an, g, n, 1.0 / ways, DIM_SPATIAL);
	Times halo = halo_times(c->an, g, n, ways, c->map.across);
	Times gather = gather_times(c->an, g, n, c->map.model);

	rest[L] = 0;
	for (int i = L - 1; i >= 0; i--)
		rest[i] = rest[i + 1] + times_span(&after, i, i);
	for (int i = 0; i <= last; i++) {
		double t;
		head += times_span(&part, i, i) + times_of(&halo, i, false);
		t = head + rest[i + 1] + times_of(&gather, i, false);
		if (t < best_t * (1 - 1e-12)) /* ties (rounding apart): the earliest */
			best_t = t, best = i;
	}
	return best;
}

/* Spatial over the model-parallel group inside data groups of p1 (ds
 * when p1 > 1), split after layer `split`; gradient accumulation as
 * data's: M passes of a group's n / M samples (their strips, halos and
 * gathers each time), one exchange.  n is the micro-batch's here. */
static void
spatial_at(const Ctx *c, Candidate *k, int split, int64_t M)
{
	const Graph *g = c->g;
	int64_t p1 = c->map.replicas, ways = c->map.q, B = batch_for(c, p1);
	double n = (double)B / p1 / (double)M, after = after_gather(c, n, ways), growth = 1,
	       W = c->W, per_gpu = n * (double)M / ways; /* a GPU's samples, all passes */
	double *wshare = NULL, act = 0, whole = 0;
	int grown = -1;
	Times rest = layer_times(c->an, g, after, 1, DIM_DATA), halo;

	k->split = split;
	k->per_gpu_batch = per_gpu;
	k->micro_batches = M;
	k->t.compute = times_span(&rest, split + 1, g->nlayer - 1);
	if (c->an->q.impl.halo_rows && ways > 1) {
		/* strips with their halo rows; the gathered tensor grows, and
		 * with it the first layer with weights after it */
		double *share =
			engine_scratch(c->an->eng, SC_PHYS_SHARE, (size_t)split + 1, sizeof *share);
		growth = strips(c, ways, split, share, &grown);
		for (int i = 0; i <= split; i++) {
			double a = kept_layer(c->an, g, i);
			k->t.compute += span_time(c->an, g, i, i, n, share[i], DIM_SPATIAL);
			act += a * share[i], whole += a;
		}
		if (grown >= 0) {
			const Layer *l = &g->layer[grown];
			double w = (double)l->cost.params, kernel = (double)layer_kernel_params(l);
			rest = layer_times(c->an, g, after, 1, DIM_DATA);
			k->t.compute += (growth - 1) * times_span(&rest, grown, grown);
			W += (growth - 1) * kernel;
			/* its gradients: the grown kernel and the bias */
			wshare = engine_scratch(c->an->eng, SC_PHYS_WSHARE, (size_t)g->nlayer,
						sizeof *wshare);
			for (int i = 0; i < g->nlayer; i++)
				wshare[i] = 1;
			wshare[grown] = (w + (growth - 1) * kernel) / w;
		}
	} else {
		Times part = layer_times(c->an, g, n, 1.0 / ways, DIM_SPATIAL);
		k->t.compute += times_span(&part, 0, split);
	}
	halo = halo_times(c->an, g, n, ways, c->map.across);
	k->t.p2p = 0;
	for (int i = 0; i <= split; i++)
		k->t.p2p += times_of(&halo, i, false);
	k->t.layer = growth * spatial_gather(c->an, g, split, n, c->map.model);
	k->t.compute *= (double)M;
	k->t.p2p *= (double)M;
	k->t.layer *= (double)M;
	k->t.grad = grad_time(c->an, g, c->map.grad, n / ways, wshare, &k->t.grad_hidden);
	k->t.reducer = reducer_time(c->an, g, c->map.grad, 0, g->nlayer - 1, wshare);
	k->t.update = update_time(c->an, W, c->arrays);
	sharded(c, k, W);
	recompute(c, k, n, after, ways, split, WORK_ROWS);
	k->t.recompute *= (double)M;
	/* each sample is loaded once per model-parallel group */
	input(c, k, per_gpu, node_samples(c, per_gpu), ways > 1);
	/* a strip keeps its rows' activations (more than 1/ways of the split
	 * layers' with halo rows), the rest 1/ways as before */
	memory(c, k, W, n,
	       whole > 0 ? (act + ((double)kept(c->an, g).act - whole) / ways) /
				  (double)kept(c->an, g).act
			: 1.0 / ways);
}

static void
predict_spatial(const Ctx *c, Candidate *k)
{
	int64_t p1 = c->map.replicas, ways = c->map.q, B = batch_for(c, p1);
	int64_t M = accumulation(c->an);
	int last = spatial_limit(c->g, ways);

	const char *why;

	k->grid[DIM_SPATIAL] = ways;
	if (p1 > 1)
		k->grid[DIM_DATA] = p1;
	k->global_batch = B;
	why = spatial_refusal(c->g, ways, &k->max_gpus);
	if (p1 > B)
		return beyond_limit(k, "more data groups than samples in the batch");
	if (why)
		return beyond_limit(k, why);
	if ((double)M > (double)B / (double)p1)
		return beyond_limit(k, "more micro-batches than samples per GPU");
	/* the split point of a micro-batch's strips */
	spatial_at(c, k,
		   c->pc->spatial_split == SPLIT_ALL
			   ? last
			   : best_split(c, (double)B / (double)p1 / (double)M, ways, last),
		   M);
}

/* ---- the model ---------------------------------------------------------- */

/* ---- per-layer splits (plan/perlayer.c) -------------------------------- */

/* The global batch of a per-layer assignment: the analysis's, or its
 * per-GPU batch on every GPU (weak scaling, as data parallelism). */
static double
assigned_batch(const PredictCtx *pc)
{
	const Analysis *an = pc->an;

	return (double)(an->q.set.global_batch ? an->q.set.global_batch
					       : an->q.set.batch_per_gpu * an->q.set.gpus);
}

/* The grid of degree d on p GPUs: p / d groups of d (data alone for d =
 * 1, the split alone for d = p), model-inner. */
static void
degree_map(const PredictCtx *pc, int64_t d, Mapping *m)
{
	int64_t p = pc->an->q.set.gpus;
	int64_t grid[DIM_COUNT] = { [DIM_DATA] = d == p ? 0 : p / d, [DIM_FILTER] = d > 1 ? d : 0 };

	grid_map(pc->an->q.sys, grid, NEST_MODEL_INNER, m);
}

/* Layer l's work, collectives and halos under split s on n samples of its
 * group; INFINITY where s cannot split it. */
static double
split_work(const PredictCtx *pc, const Layer *l, LayerSplit s, double n, const Mapping *m,
	   double *comm, double *p2p)
{
	const Analysis *an = pc->an;
	const Graph *g = pc->g;
	const Shape *out = &g->tensor[l->out[0]].shape;
	double k = (double)s.d;
	int64_t ways;
	bool part;

	*comm = *p2p = 0;
	switch (s.mode) {
	case PL_FILTER:
	case PL_CHANNEL:
		part = model_split_layer(g, l, s.mode == PL_CHANNEL, &ways);
		if (!part) /* replicated in the group */
			break;
		if (l->attr.lead > 0 || ways < s.d)
			return INFINITY;
		*comm = split_collective(an, g, l, m->model, n, s.mode == PL_CHANNEL);
		return span_time(an, g, (int)(l - g->layer), (int)(l - g->layer), n, 1 / k,
				 s.mode == PL_CHANNEL ? DIM_CHANNEL : DIM_FILTER);
	case PL_SPATIAL:
		if (l->attr.lead > 0 || out->rank < 2 || out->d[1] < s.d)
			return INFINITY;
		*p2p = halo_time(an, g, l, n, s.d, false);
		return span_time(an, g, (int)(l - g->layer), (int)(l - g->layer), n, 1 / k,
				 DIM_SPATIAL);
	default:
		break;
	}
	return span_time(an, g, (int)(l - g->layer), (int)(l - g->layer), n, 1, DIM_DATA);
}

/* The samples a GPU of split s works on: its group's B d / p (a share of
 * each under a split; data: d = 1). */
static double
split_samples(const PredictCtx *pc, LayerSplit s, double B)
{
	return B * (double)s.d / (double)pc->an->q.set.gpus;
}

static double
layer_price(const PredictCtx *pc, const Layer *l, LayerSplit s)
{
	const Analysis *an = pc->an;
	const Graph *g = pc->g;
	double B = assigned_batch(pc), W = (double)g->total.params * grad_bytes(an);
	double n = split_samples(pc, s, B), comm, p2p, t, local;
	bool whole = s.mode == PL_DATA || s.mode == PL_SPATIAL;
	Mapping m;
	Group grad;

	if (n < 1)
		return INFINITY;
	degree_map(pc, whole ? 1 : s.d, &m);
	t = split_work(pc, l, s, n, &m, &comm, &p2p);
	if (!isfinite(t))
		return INFINITY;
	local = layer_split_params(pc->g, l, s);
	/* the gradient: data and spatial hold whole weights, exchanged over
	 * all p; filter and channel a group's share, over the p / d groups
	 * (none when d = p), at the exchange's per-byte rate for the whole
	 * model (one collective the layers share), with the wrapper's copies */
	grad = m.grad;
	if (grad.size > 1 && W > 0)
		t += coll_grad_allreduce(an, grad, W) / W * local * grad_bytes(an) +
		     reducer_layer(an, g, l, local);
	return t + comm + p2p + update_time(an, local, l->nw);
}

static void
assignment(const PredictCtx *pc, const LayerSplit *split, double moves, Candidate *k)
{
	const Analysis *an = pc->an;
	const Graph *g = pc->g;
	double B = assigned_batch(pc), n = B / (double)an->q.set.gpus, local = 0, arrays = 0,
	       *wshare;
	Ctx c = { .g = g, .an = an, .pc = pc, .s = an->q.sys, .delta = elem_bytes(an),
		  .W = (double)g->total.params };

	degree_map(pc, 1, &c.map);
	k->global_batch = (int64_t)B;
	k->per_gpu_batch = n;
	k->micro_batches = 1;
	for (int i = 0; i < g->nlayer; i++) {
		const Layer *l = &g->layer[i];
		double comm, p2p;
		Mapping m;

		degree_map(pc, split[i].d, &m);
		k->t.compute += split_work(pc, l, split[i], split_samples(pc, split[i], B), &m,
					   &comm, &p2p);
		k->t.layer += comm;
		k->t.p2p += p2p;
		local += layer_split_params(pc->g, l, split[i]);
		arrays += l->nw;
	}
	k->t.layer += moves;
	/* the gradient exchange of each degree's groups: data and spatial
	 * layers over all p GPUs, a filter or channel layer's share over the
	 * p / d groups of its degree; each overlapped with the backward */
	wshare = xcalloc((size_t)g->nlayer + 1, sizeof *wshare);
	for (int i = -1; i < g->nlayer; i++) {
		int64_t d = i < 0 ? 1 : split[i].d;
		bool whole = i < 0, any = false, first = true;
		double hidden;
		Mapping m;

		if (i >= 0 && (split[i].mode == PL_DATA || split[i].mode == PL_SPATIAL))
			continue;
		for (int j = 0; j < i && first; j++) /* each degree once */
			first = !(split[j].d == d && split[j].mode != PL_DATA &&
				  split[j].mode != PL_SPATIAL);
		if (!first)
			continue;
		for (int j = 0; j < g->nlayer; j++) {
			const Layer *l = &g->layer[j];
			bool wj = split[j].mode == PL_DATA || split[j].mode == PL_SPATIAL;
			wshare[j] = 0;
			if (whole ? wj : !wj && split[j].d == d)
				wshare[j] = l->cost.params > 0
						    ? layer_split_params(pc->g, l, split[j]) /
							      (double)l->cost.params
						    : 1;
			any |= wshare[j] > 0;
		}
		if (!any)
			continue;
		degree_map(pc, d, &m);
		k->t.grad +=
			grad_time(an, g, m.grad, whole ? n : B * (double)d / (double)an->q.set.gpus,
				  wshare, &hidden);
		k->t.grad_hidden += hidden;
		k->t.reducer += reducer_time(an, g, m.grad, 0, g->nlayer - 1, wshare);
	}
	free(wshare);
	k->t.update = update_time(an, local, arrays);
	input(&c, k, n, node_samples(&c, n), false);
	{
		Lane ln = lane_times(an, g, 0, g->nlayer - 1, n);
		host_lane(an, g, 0, g->nlayer - 1, &ln, arrays, k);
	}
}

/* One strategy on one grid (its dimensions those of the strategy). */
static void
predict(const PredictCtx *pc, StrategyKind kind, const int64_t grid[DIM_COUNT], Candidate *k)
{
	Ctx c = { .g = pc->g, .an = pc->an, .pc = pc, .s = pc->an->q.sys, .grid = grid,
		  .delta = elem_bytes(pc->an), .W = (double)pc->g->total.params };

	c.arrays = layer_table(c.an, c.g)->arrays;
	grid_map(c.s, grid, k->nest, &c.map);
	switch (kind) {
	case STRAT_DATA: data(&c, k); break;
	case STRAT_FILTER:
	case STRAT_DF: model_split(&c, k, false); break;
	case STRAT_CHANNEL: model_split(&c, k, true); break;
	case STRAT_SPATIAL:
	case STRAT_DS: predict_spatial(&c, k); break;
	case STRAT_TENSOR:
	case STRAT_DT:
	case STRAT_CONTEXT:
	case STRAT_DC:
	case STRAT_DTC: tensor(&c, k); break;
	case STRAT_PIPELINE:
	case STRAT_DP:
	case STRAT_DPF:
	case STRAT_DPC:
	case STRAT_DPS:
	case STRAT_DPT:
	case STRAT_DPTC:
		pipeline(c.g, c.an, &c.map, k, pc->cut_after, grid, pc->beat, !pc->no_stages);
		return; /* its stages' processes: pipeline.c */
	case STRAT_COUNT: break;
	}
	/* --sync-bn in df and ds: every GPU runs every batch norm (filter's
	 * on its share of the channels: its messages are at most these,
	 * latency-bound either way), its statistics shared with the same
	 * shard's replicas (the data group); pipelines per stage (pipeline.c) */
	if ((kind == STRAT_DF || kind == STRAT_DS) && !k->reason)
		k->t.sync_bn = (double)(k->micro_batches > 1 ? k->micro_batches : 1) *
			       sync_bn_time(c.an, c.g, c.map.grad, 0, c.g->nlayer - 1);
	/* one process a GPU issues every layer of its iteration, at the
	 * times the strategy priced them at (a context ring's GPU: on s/C
	 * of each sample) */
	if (!k->reason) {
		double cp = (double)(grid[DIM_CONTEXT] > 1 ? grid[DIM_CONTEXT] : 1);
		Lane ln = lane_times(c.an, c.g, 0, c.g->nlayer - 1,
				     k->per_gpu_batch /
					     (double)(k->micro_batches > 1 ? k->micro_batches : 1) /
					     cp);
		host_lane(c.an, c.g, 0, c.g->nlayer - 1, &ln, c.arrays, k);
	}
}

const CostModel cost_model_physical = { "default", predict, true, true, layer_price, assignment };
