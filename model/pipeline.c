/* pipeline.c -- layer (pipeline) parallelism: contiguous stages, under
 * GPipe, 1F1B or interleaved 1F1B, alone or replicated (dp).
 *
 * The layers, in topological order, are cut into S contiguous stages, one
 * per GPU.  With M micro-batches of B/M samples, GPipe runs M + S - 1
 * steps, each as long as the slowest stage (forward and backward of one
 * micro-batch), and keeps every micro-batch's activations until its
 * backward pass, or only the input of those the implementation
 * checkpoints (pipe_checkpoint: torchgpipe's Pipe runs their forward
 * again in backward); one process issuing every stage (pipe_driver
 * "threads") adds what its CPU takes beyond the GPUs' path.  For each M
 * (powers of two up to B) the partition that minimises the slowest stage
 * under the per-GPU memory limit is found exactly: the least bound T for
 * which packing layers greedily into stages of time <= T and memory <=
 * the limit needs at most S stages (greedy packing is optimal for
 * contiguous partitions under additive limits, so bisection on T finds the
 * optimum).  The best M is kept.
 *
 * A plan (--plan) may allow cuts only after some layers, at the
 * boundaries of the blocks a framework can split at: the layers between
 * two allowed cuts are then packed as one item.  The candidate keeps each
 * stage's time and memory, which the plan lists.
 *
 * dp (data x pipeline): p1 replicas of an S-stage pipeline, each on B / p1
 * samples; each stage's gradients are all-reduced over its p1 copies. */
#include "model/model.h"
#include "util/checked.h"

#include <math.h>
#include <stdlib.h>

typedef struct Stages {
	int n;
	int *end;      /* last layer of each stage */
} Stages;

/* The memory of a stage: its layers' fixed bytes (weights and their
 * state) plus the activations of one micro-batch times the micro-batches
 * the schedule makes stage i hold whole (held[i]; NULL: none are added),
 * and the input of those it checkpoints (in[first], ins[i] of them; in
 * NULL: none).  pf and pa are prefix sums. */
typedef struct Held {
	const double *pf, *pa, *held, *in, *ins;
} Held;

static double
stage_bytes(const Held *h, int i, int first, int last)
{
	return h->pf[last + 1] - h->pf[first] +
	       (h->held ? h->held[i] * (h->pa[last + 1] - h->pa[first]) : 0) +
	       (h->in ? h->ins[i] * h->in[first] : 0);
}

/* Greedy packing under time bound T and memory cap; false if more than
 * S stages would be needed (or a single layer breaks a limit).  pt is a
 * prefix sum (pt[i] = t[0] + ... + t[i-1]): each stage's last layer is
 * found by binary search, so a check costs O(S log L), not O(L).  Greedy
 * stays optimal when later stages hold fewer micro-batches (1F1B): a
 * stage that ends later leaves a suffix the later, looser stages take. */
static bool
pack(const double *pt, const Held *h, int L, double T, double cap, int S, Stages *st)
{
	int first = 0;

	st->n = 0;
	while (first < L) {
		int lo = first, hi = L - 1, i = st->n;
		if (st->n == S)
			return false;
		/* the last layer e with both sums of [first, e] within the limits */
		if (pt[first + 1] - pt[first] > T || stage_bytes(h, i, first, first) > cap)
			return false;
		while (lo < hi) {
			int mid = lo + (hi - lo + 1) / 2;
			if (pt[mid + 1] - pt[first] <= T && stage_bytes(h, i, first, mid) <= cap)
				lo = mid;
			else
				hi = mid - 1;
		}
		st->end[st->n++] = lo;
		first = lo + 1;
	}
	return true;
}

/* Splits stages until there are S (or every stage holds one layer):
 * more stages never make the slowest one slower. */
static void
spread(Stages *st, int S)
{
	while (st->n < S) {
		int k = -1;
		for (int i = 0; i < st->n; i++) {
			int first = i ? st->end[i - 1] + 1 : 0;
			if (st->end[i] > first) {
				k = i;
				break;
			}
		}
		if (k < 0)
			return;
		for (int i = st->n; i > k; i--)
			st->end[i] = st->end[i - 1];
		st->end[k] = (k ? st->end[k - 1] + 1 : 0);
		st->n++;
	}
}

static double
stage_max(const double *v, const Stages *st)
{
	double worst = 0;

	for (int i = 0, first = 0; i < st->n; first = st->end[i] + 1, i++) {
		double sum = 0;
		for (int j = first; j <= st->end[i]; j++)
			sum += v[j];
		if (sum > worst)
			worst = sum;
	}
	return worst;
}

/* The optimal bound for S stages, or -1 when memory makes it impossible:
 * stage i needs f (fixed bytes) plus held[i] times a (activation bytes
 * per micro-batch) of its layers, plus ins[i] times in[] of its first
 * layer; a, held and in may be NULL (f alone). */
static double
partition(const double *t, const double *f, const double *a, const double *held,
	  const double *in, const double *ins, int L, double cap, int S, Stages *st)
{
	double lo = 0, hi, T = -1;
	double *pt = xcalloc(L + 1, sizeof *pt), *pf = xcalloc(L + 1, sizeof *pf);
	double *pa = xcalloc(L + 1, sizeof *pa);
	Held h = { pf, pa, a ? held : NULL, in, ins };

	for (int i = 0; i < L; i++) {
		pt[i + 1] = pt[i] + t[i];
		pf[i + 1] = pf[i] + f[i];
		pa[i + 1] = pa[i] + (a ? a[i] : 0);
		if (t[i] > lo)
			lo = t[i];
	}
	hi = pt[L];
	if (pack(pt, &h, L, hi * (1 + 1e-12), cap, S, st)) {
		for (int it = 0; it < 64 && hi - lo > 1e-12 * hi; it++) {
			double mid = (lo + hi) / 2;
			if (pack(pt, &h, L, mid, cap, S, st))
				hi = mid;
			else
				lo = mid;
		}
		pack(pt, &h, L, hi, cap, S, st);
		spread(st, S);
		T = stage_max(t, st);
	}
	free(pt);
	free(pf);
	free(pa);
	return T;
}

/* The per-layer arrays of one micro-batch count (layer_costs) and the
 * micro-batches each stage holds (schedule_held); dpf splits each stage's
 * layers by filter over `ways` GPUs of group `grp` (Megatron's tensor
 * parallelism inside a pipeline stage, its column-parallel layers), dpc
 * by input channel (its row-parallel layers), dps by rows up to the
 * spatial split's last layer `last`. */
typedef struct Costs {
	double *t, *f, *a, *w, *held;
	double *in;     /* bytes per micro-batch entering a stage that begins
	                   at the layer (what a checkpoint keeps) */
	double *ins;    /* per stage: the micro-batches it keeps only the
	                   input of (pipe_checkpoint) */
	double ck;      /* of the M micro-batches, the share checkpointed */
	double *col;    /* of t: the split's collectives (dps: and halos) */
	double *halo;   /* of col: dps's halo exchanges */
	double *redo;   /* of t: the forward recomputed */
	int64_t ways;   /* 1: no split inside the stages */
	GridDim inner;  /* DIM_FILTER (dpf), DIM_CHANNEL (dpc), DIM_SPATIAL (dps) */
	int last;       /* dps: the last layer split by rows */
	Group grp;
	double nd;      /* ZeRO-1: the data-parallel copies sharing the
	                   optimizer state (1 without) */
} Costs;

/* Bytes a GPU holds per parameter it trains: weights, gradients and the
 * optimizer state, this last sharded over nd copies under ZeRO-1 (as
 * zero.c lays the states out). */
static MemUse
per_parameter(const Analysis *an, const Graph *g, double nd)
{
	MemUse m = { .weights = g->elem_bytes, .grads = g->elem_bytes,
		     .optimizer = optimizer_bytes(an->opt) };

	if (an->zero)
		zero_memory(an, g, 1, nd, &m);
	return m;
}

/* Per layer: the time of forward and backward of one micro-batch of n
 * samples (t; with a split inside the stage, the layer's share of the work
 * and its collectives, col: a filter or channel split's, or a spatial
 * split's halos and, at its last layer, the gather), the parameters a GPU
 * holds (w), the bytes a stage holds for them whatever the schedule (f:
 * weights, gradients, optimizer state) and the activations it keeps per
 * micro-batch in flight (a: whole, as the filter and channel splits gather
 * their outputs; a strip's under the spatial split, and after it where the
 * implementation does not replicate the layers after the gather). */
static void
layer_costs(const Graph *g, const Analysis *an, double n, const Costs *c)
{
	MemUse pp = per_parameter(an, g, c->nd);
	double per_w = pp.weights + pp.grads + pp.optimizer;
	double in_act = (double)kept(an, g)->act_bytes;
	const Recompute *rc = &an->rc;

	bool rows = c->ways > 1 && c->inner == DIM_SPATIAL;

	for (int i = 0; i < g->nlayer; i++) {
		const Layer *l = &g->layer[i];
		int64_t most;
		double share = rows ? (i <= c->last || !an->impl.replicated ? 1.0 / (double)c->ways : 1)
			       : c->ways > 1 && model_split_layer(g, l, c->inner == DIM_CHANNEL, &most)
				       ? 1.0 / (double)c->ways
				       : 1;
		double fwd = layer_time(an, g, l, n, share, false);
		/* recomputation: selective drops the attention cores' tensors
		 * and runs their forward again; segments keep only what enters
		 * each segment, and a stage runs its whole forward again */
		bool redo = rc->k == RECOMPUTE_SELECTIVE ? rc->redo[i] : rc->k > 0;
		c->halo[i] = rows && i <= c->last
				     ? halo_time(an, g, l, n, c->ways, c->grp.size > c->grp.per_node)
				     : 0;
		if (rows)
			c->col[i] = c->halo[i] +
				    (i == c->last ? spatial_gather(an, g, i, n, c->grp) : 0);
		else
			c->col[i] = share < 1 ? split_collective(an, g, l, c->grp, n,
								 c->inner == DIM_CHANNEL)
					      : 0;
		/* pipe_checkpoint: a share ck of the micro-batches runs it again */
		c->redo[i] = redo ? fwd : fwd * c->ck;
		c->t[i] = fwd + layer_time(an, g, l, n, share, true) + c->col[i] + c->redo[i];
		c->w[i] = rows || share >= 1 ? (double)l->cost.params
					     : split_params(l, c->inner == DIM_CHANNEL, (double)c->ways);
		c->f[i] = c->w[i] * per_w;
		c->a[i] = (rc->k > 0 ? rc->boundary[i] : redo ? 0 : kept_layer(an, g, i)) * n *
			  (rows ? share : 1);
		c->in[i] = (double)g->tensor[i ? g->layer[i - 1].out[0] : l->in[0]].elems * n *
			   g->elem_bytes * (rows ? share : 1);
		in_act -= kept_layer(an, g, i);
	}
	c->a[0] += in_act * n; /* the kept graph input lives on the first stage */
}

/* Micro-batches whose activations stage i of S holds at its peak: GPipe
 * runs every forward before any backward (all M); 1F1B (PipeDream-Flush,
 * Narayanan et al., SC'21) starts backward as soon as the last stage can,
 * so stage i holds at most S - i. */
double
pipeline_held(Schedule sched, int v, int64_t M, int S, int i)
{
	double held = sched != SCHED_GPIPE && S - i < M ? S - i : (double)M;

	/* interleaved: the warm-up runs ahead on the V chunks, so the first
	 * stage holds p (1 + (p - 1) / (p V)) micro-batches (Korthikanti et
	 * al., MLSys'23, section 4.2.3) */
	if (sched == SCHED_INTERLEAVED) {
		held *= 1 + (double)(S - 1) / ((double)S * v);
		if (held > (double)M)
			held = (double)M;
	}
	return held;
}

static void
schedule_held(Schedule sched, int v, int64_t M, int S, double *held)
{
	for (int i = 0; i < S; i++)
		held[i] = pipeline_held(sched, v, M, S, i);
}

/* Where the layers may be cut: G items, item j ending at layer end[j]
 * (NULL: every layer is an item). */
typedef struct Items {
	const int *end;
	int n;
	double *t, *f, *a;  /* the items' sums */
	double *in;         /* the input of each item's first layer */
} Items;

/* The optimal partition of the layers (c->t, c->f, c->a, c->held and the
 * checkpointed inputs) or of the items; st->end[] are layer indices. */
static double
partition_items(const Costs *c, int L, const Items *it, double cap, int S, Stages *st)
{
	double T;

	if (!it->end)
		return partition(c->t, c->f, c->a, c->held, c->in, c->ins, L, cap, S, st);
	for (int j = 0, i = 0; j < it->n; j++) {
		it->t[j] = it->f[j] = it->a[j] = 0;
		it->in[j] = c->in[i];
		for (; i <= it->end[j]; i++)
			it->t[j] += c->t[i], it->f[j] += c->f[i], it->a[j] += c->a[i];
	}
	if ((T = partition(it->t, it->f, it->a, c->held, it->in, c->ins, it->n, cap, S, st)) < 0)
		return T;
	for (int i = 0; i < st->n; i++)
		st->end[i] = it->end[st->end[i]];
	return stage_max(c->t, st);
}

/* Per GPU, beyond a stage's own layers (m[]): the backward peak's
 * gradients in flight and the workspace for one micro-batch of n samples
 * (the whole model's figures, an upper bound for a stage) and the
 * system's reserve. */
static double
stage_extra(const Graph *g, const Analysis *an, double n)
{
	/* segments: the one being recomputed, during its backward */
	double seg = an->rc.k > 0 ? an->rc.segment * n : 0;

	return (double)kept(an, g)->transient_bytes * n + (double)g->total.workspace_bytes +
	       an->sys->reserved + seg;
}

/* Stage i's own bytes: fixed ones plus the micro-batches it holds, whole
 * or (checkpointed) their input. */
static double
stage_own(const Stages *st, int i, const Costs *c, double *acts)
{
	double sf = 0, sa = 0;
	int first = i ? st->end[i - 1] + 1 : 0;

	for (int j = first; j <= st->end[i]; j++)
		sf += c->f[j], sa += c->a[j];
	*acts = sa * c->held[i] + c->ins[i] * c->in[first];
	return sf + *acts;
}

/* The breakdown of the stage that needs the most memory: its weights,
 * gradients and optimizer state, the kept activations of the micro-batches
 * the schedule makes it hold, then the parts stage_extra() adds, as
 * memuse.c sums them. */
static void
stage_memory(const Graph *g, const Analysis *an, const Stages *st, const Costs *c, double n,
	     MemUse *mem)
{
	const double *w = c->w;
	MemUse pp = per_parameter(an, g, c->nd);
	double wb = 0, most = -1, acts = 0;

	for (int i = 0, first = 0; i < st->n; first = st->end[i] + 1, i++) {
		double sw = 0, sa, sm = stage_own(st, i, c, &sa);
		for (int j = first; j <= st->end[i]; j++)
			sw += w[j];
		if (sm > most)
			most = sm, wb = sw, acts = sa;
	}
	mem->weights = wb * pp.weights + (an->zero ? 0 : mem_cast_weights(&g->total, wb));
	mem->grads = wb * pp.grads;
	mem->optimizer = wb * pp.optimizer;
	mem->activations = acts + (an->rc.k > 0 ? an->rc.segment * n : 0);
	mem->transient = (double)kept(an, g)->transient_bytes * n;
	mem->workspace = (double)g->total.workspace_bytes;
	mem_total(mem, an->sys);
}

int
pipeline_checkpoint(const Analysis *an)
{
	return an->rc.k != 0 ? CKPT_NEVER : (int)an->impl.ckpt;
}

/* Of M micro-batches, those whose stage forward is checkpointed. */
static int64_t
checkpointed(const Analysis *an, int64_t M)
{
	int mode = pipeline_checkpoint(an);

	return mode == CKPT_ALWAYS ? M : mode == CKPT_EXCEPT_LAST ? M - 1 : 0;
}

double
pipeline_checkpointed(const Analysis *an, int64_t M, double held, double *whole)
{
	double nc = (double)checkpointed(an, M), kept = nc < held ? nc : held;

	/* GPipe runs the backwards last to first: the last micro-batch,
	 * whole, is done before the first recomputation.  1F1B runs them
	 * first to last: the stage recomputes its oldest while the last one,
	 * whole, is in flight too. */
	if (an->schedule != SCHED_GPIPE && nc == (double)M - 1 && held >= 2) {
		*whole = 2;
		return held - 1;
	}
	*whole = nc > 0 && held - kept < 1 ? 1 : held - kept;
	return kept;
}

/* Evaluates M micro-batches; fills k and returns false when no partition
 * fits in memory. */
static bool
with_micro(const Graph *g, const Analysis *an, const Mapping *map, Candidate *k, int64_t B,
	   int64_t M, double cap, Costs *c, const Items *it, Stages *st)
{
	int64_t S = map->q / c->ways;
	const System *s = an->sys;
	double n = (double)B / M, delta = g->elem_bytes;
	double T, edge = 0, upd = 0, slow = -1, halos = 0, host = 0, fwd_host = 0, step = 0,
	       *w = c->w;
	int L = g->nlayer, v = an->virtual_stages > 1 ? an->virtual_stages : 1;

	int64_t nc = checkpointed(an, M);

	c->ck = (double)nc / (double)M;
	layer_costs(g, an, n, c);
	schedule_held(an->schedule, v, M, (int)S, c->held);
	for (int i = 0; i < S; i++)
		c->ins[i] = pipeline_checkpointed(an, M, c->held[i], &c->held[i]);
	if ((T = partition_items(c, L, it, cap - stage_extra(g, an, n), (int)S, st)) < 0)
		return false;
	/* the largest activation crossing a stage boundary, each way */
	for (int i = 0; i + 1 < st->n; i++) {
		double y = (double)g->tensor[g->layer[st->end[i]].out[0]].elems * n * delta;
		if (y > edge)
			edge = y;
	}
	k->t.layer = k->t.recompute = 0;
	for (int i = 0, first = 0; i < st->n; first = st->end[i] + 1, i++) {
		double ww = 0, arrays = 0, time = 0, col = 0, redo = 0, hal = 0, h = 0, t;
		for (int j = first; j <= st->end[i]; j++) {
			double f = layer_host(an, g, &g->layer[j], false);
			ww += w[j], arrays += g->layer[j].nw, time += c->t[j];
			col += c->col[j], redo += c->redo[j], hal += c->halo[j];
			/* the stage's process issues each layer, and the forward
			 * again of a checkpointed micro-batch */
			h += f * (1 + c->ck) + layer_host(an, g, &g->layer[j], true);
			fwd_host += f;
		}
		if (h > host)
			host = h, step = step_host(an, arrays);
		/* ZeRO-1: each copy steps its share of the stage's weights, as
		 * data parallelism's does (zero_step_arrays) */
		if ((t = update_time(an, ww / c->nd, zero_step_arrays(an, arrays, c->nd))) > upd)
			upd = t;
		if (time > slow) /* the slowest stage's collectives, halos and
				    recomputation, apart */
			slow = time, k->t.layer = M * (col - hal), halos = M * hal,
			k->t.recompute = M * redo;
	}
	k->micro_batches = M;
	k->per_gpu_batch = n;
	/* interleaved: each GPU's stage is V chunks, so the fill and drain
	 * take chunks of T / V (Megatron's bubble (p - 1) / (V M)), and a
	 * micro-batch crosses V times as many stage boundaries */
	k->t.compute = M * T - k->t.layer - halos - k->t.recompute;
	k->t.bubble = (S - 1) * T / v;
	k->t.p2p = st->n > 1 ? (M * v + S - 2) * (an->forward_only ? 1 : 2) *
				       p2p_time(an, edge, map->across)
			     : 0;
	k->t.p2p += halos;
	k->t.update = upd;
	/* the host lane (host.c): a stage's process issues its layers for
	 * each micro-batch; where that takes longer than the slowest stage's
	 * GPU time, every step of the schedule, fill and drain too, takes it.
	 * One process driving every stage (pipe_driver "threads"): its one
	 * interpreter issues the forward of every layer of every micro-batch,
	 * and again of those recomputed, one operator call after another; the
	 * iteration waits for what that takes beyond the GPUs' path */
	k->t.dispatch = s->host_device ? ((double)M + (double)(S - 1) / v) * host
			: host > T  ? ((double)M + (double)(S - 1) / v) * (host - T)
				    : 0;
	k->t.host = (double)M * host + step;
	/* the input of the first stage is loaded alongside */
	k->t.input = input_time(an, (double)B, (double)s->cpu_cores / s->gpus_per_node, (double)B,
				1);
	if (st->n == 1) { /* one stage: one process's iteration, as data's */
		double arrays = 0;
		for (int i = 0; i < L; i++)
			arrays += g->layer[i].nw;
		host_lane(an, g, 0, L - 1, n, zero_step_arrays(an, arrays, c->nd), k);
	} else if (an->impl.pipe_threads) {
		double cpu = (double)(M + nc) * fwd_host;
		double gpu = k->t.compute + k->t.bubble + k->t.recompute + k->t.layer;
		k->t.host = cpu;
		k->t.dispatch = cpu > gpu ? cpu - gpu : 0;
	}
	stage_memory(g, an, st, c, n, &k->mem);
	return true;
}

/* Keeps the stages of st, and each one's time and memory from the
 * layers' t and m, in the candidate (arena arrays). */
static void
keep_stages(const Graph *g, const Analysis *an, const Stages *st, const Costs *c, Candidate *k)
{
	double acts;

	k->stages = st->n;
	k->stage_end = arena_array(g->arena, st->n, sizeof(int));
	k->stage_time = arena_array(g->arena, st->n, sizeof(double));
	k->stage_mem = arena_array(g->arena, st->n, sizeof(double));
	for (int i = 0, first = 0; i < st->n; first = st->end[i] + 1, i++) {
		k->stage_end[i] = st->end[i];
		k->stage_time[i] = 0;
		for (int j = first; j <= st->end[i]; j++)
			k->stage_time[i] += c->t[j];
		k->stage_mem[i] = stage_own(st, i, c, &acts) +
				  stage_extra(g, an, k->per_gpu_batch); /* as mem.total */
	}
}

/* dp: each stage's gradients all-reduced over the p1 replicas of that
 * stage once its last micro-batch's backward is done, every stage at
 * once on its own group, with its wrapper's copies (reducer_time); the
 * iteration waits for the largest.  Not overlapped: the first stage's
 * backward ends last, and the others' slack (a few micro-batch backwards)
 * is left out, which is conservative. */
static void
stage_exchange(const Graph *g, const Analysis *an, const Mapping *map, Candidate *k,
	       const double *held_w)
{
	double *share = xcalloc((size_t)g->nlayer, sizeof *share);

	for (int j = 0; j < g->nlayer; j++)
		share[j] = g->layer[j].cost.params > 0 ? held_w[j] / (double)g->layer[j].cost.params : 1;
	for (int i = 0, first = 0; i < k->stages; first = k->stage_end[i] + 1, i++) {
		double w = 0, t, r;
		for (int j = first; j <= k->stage_end[i]; j++)
			w += held_w[j];
		t = allreduce_time(an->sys, map->grad, w * g->elem_bytes);
		r = reducer_time(an, g, map->grad, first, k->stage_end[i], share);
		if (t + r > k->t.grad + k->t.reducer)
			k->t.grad = t, k->t.reducer = r;
	}
	free(share);
}

const char pipeline_bounded[] = "cannot beat the best found (a lower bound on its stages' work)";

void
pipeline(const Graph *g, const Analysis *an, const Mapping *map, Candidate *k,
	 const bool *cut_after, const int64_t grid[DIM_COUNT], double beat)
{
	int L = g->nlayer;
	/* the split inside the stages: dpf's filters, dpc's channels or
	 * dps's rows */
	GridDim inner = grid[DIM_CHANNEL] > 0   ? DIM_CHANNEL
			: grid[DIM_SPATIAL] > 0 ? DIM_SPATIAL
						: DIM_FILTER;
	bool channel = inner == DIM_CHANNEL, rows = inner == DIM_SPATIAL;
	int64_t ways = grid[inner] > 0 ? grid[inner] : 1;
	int64_t S = map->q / ways, p1 = map->replicas, limit = INT64_MAX, most;
	const char *why;
	/* dp: p1 replicas of the pipeline, each on its share of the batch */
	int64_t Bg = an->global_batch ? an->global_batch : an->batch_per_gpu * p1;
	int64_t B = Bg / p1;
	Costs c = { xcalloc(L, sizeof(double)), xcalloc(L, sizeof(double)),
		    xcalloc(L, sizeof(double)), xcalloc(L, sizeof(double)),
		    xcalloc(L + 1, sizeof(double)), /* held: S <= L below */
		    xcalloc(L, sizeof(double)), xcalloc(L + 1, sizeof(double)), 0,
		    xcalloc(L, sizeof(double)), xcalloc(L, sizeof(double)),
		    xcalloc(L, sizeof(double)), ways, inner,
		    rows ? spatial_limit(g, ways) : -1, map->split,
		    an->zero && map->grad.size > 1 ? (double)map->grad.size : 1 };
	Stages st = { 0, xcalloc(L + 1, sizeof(int)) };
	Items it = { NULL, L, NULL, NULL, NULL, NULL };
	int *ends = NULL;
	Candidate best = *k, tmp;
	bool any = false;
	double cap = an->sys->mem;

	if (cut_after) {
		ends = xcalloc(L, sizeof *ends);
		it = (Items){ ends, 0, xcalloc(L, sizeof(double)), xcalloc(L, sizeof(double)),
			      xcalloc(L, sizeof(double)), xcalloc(L, sizeof(double)) };
		for (int i = 0; i < L; i++)
			if (cut_after[i] || i == L - 1)
				ends[it.n++] = i;
	}
	for (int i = 0; ways > 1 && !rows && i < L; i++)
		if (model_split_layer(g, &g->layer[i], channel, &most) && most < limit)
			limit = most;
	why = rows ? spatial_refusal(g, ways, &limit) : NULL;
	k->grid[DIM_PIPELINE] = S;
	if (p1 > 1)
		k->grid[DIM_DATA] = p1;
	if (ways > 1)
		k->grid[inner] = ways;
	k->global_batch = Bg;
	/* the stages' limit, times the filter split's and the data's (kept
	 * at INT64_MAX where the product overflows: no limit that matters) */
	if (!ck_mul(it.n, ways > 1 ? limit : 1, &k->max_gpus) ||
	    !ck_mul(k->max_gpus,
		    p1 > 1 ? (an->global_batch ? Bg : an->dataset_size / an->batch_per_gpu) : 1,
		    &k->max_gpus))
		k->max_gpus = INT64_MAX;
	if (p1 > Bg)
		beyond_limit(k, "more data groups than samples in the batch");
	else if (S > it.n)
		beyond_limit(k, cut_after ? "more stages than blocks to cut between"
				    : "more stages than layers");
	else if (why)
		beyond_limit(k, why);
	else if (ways > limit)
		beyond_limit(k, channel ? "more GPUs than the fewest input channels of a layer"
					: "more GPUs than the fewest filters of a layer");
	else if (an->micro_batches > B)
		beyond_limit(k, "more micro-batches than samples in the batch");
	else if (an->zero >= 2) /* DeepSpeed's pipeline engine refuses them */
		beyond_limit(k, "ZeRO stages 2 and 3 do not combine with pipeline parallelism");
	if (k->reason)
		goto out;
	/* A bound: with any M micro-batches the slowest stage takes at least
	 * the average, sum_i t_i(B / M) / S, and M of them at least
	 * sum_i t_i(B) / S (a layer's time, its collectives and halos are
	 * affine in the samples with fixed costs >= 0); the rest of the
	 * iteration adds to it.  A grid whose epoch at that bound cannot beat
	 * `beat` is not partitioned. */
	if (beat < INFINITY) {
		double lb = 0;
		layer_costs(g, an, (double)B, &c);
		for (int i = 0; i < L; i++)
			lb += c.t[i];
		if (lb / (double)S * ceil((double)an->dataset_size / (double)Bg) >= beat) {
			beyond_limit(k, pipeline_bounded);
			goto out;
		}
	}
again:
	for (int64_t M = an->micro_batches ? an->micro_batches : 1; M <= B;
	     M = an->micro_batches ? B + 1 : M * 2 > B && M != B ? B : M * 2) {
		tmp = *k;
		if (with_micro(g, an, map, &tmp, B, M, cap, &c, &it, &st)) {
			if (!any || iteration_busy(&tmp.t) < iteration_busy(&best.t)) {
				best = tmp;
				keep_stages(g, an, &st, &c, &best);
				any = true;
			}
		}
		if (M == B || an->micro_batches)
			break;
	}
	if (!any && isfinite(cap)) {
		/* no partition fits: predict without the limit; iteration_finish() then
		 * marks it infeasible by its memory */
		cap = INFINITY;
		goto again;
	}
	*k = best;
	if (any && p1 > 1)
		stage_exchange(g, an, map, k, c.w);
out:
	free(c.t), free(c.f), free(c.a), free(c.w), free(c.held), free(c.in), free(c.ins),
		free(c.col), free(c.redo), free(c.halo);
	free(st.end);
	free(ends);
	free(it.t), free(it.f), free(it.a), free(it.in);
}

double
pipeline_partition(const double *t, const double *m, int L, double cap, int S, int *end, int *n)
{
	Stages st = { 0, end };
	double T = partition(t, m, NULL, NULL, NULL, NULL, L, cap, S, &st);

	*n = st.n;
	return T;
}
