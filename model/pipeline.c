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
 * samples; each stage's gradients are all-reduced over its p1 copies.
 * dptc (docs/model.md, "dptc"): dpt's stages with context parallelism's
 * rings of C inside them; every GPU of a stage runs s/C of each sequence
 * (its work, kept activations and sends those of n/C samples), each
 * attention's ring priced with the layer that begins it, the gradients
 * all-reduced over data x context. */
#include "model/reuse.h"
#include "util/checked.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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
	bool grows;     /* no figure below 0 nor undefined: a stage's sums
	                   never shrink as it takes more layers (pack) */
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
		/* sums that only grow: the same layer found from the first
		 * outwards, in steps that double, where stages are short */
		for (int step = 1; h->grows && lo + step <= hi; step *= 2) {
			int e = lo + step;
			if (pt[e + 1] - pt[first] <= T && stage_bytes(h, i, first, e) <= cap) {
				lo = e;
			} else {
				hi = e - 1;
				break;
			}
		}
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
 * layer; a, held and in may be NULL (f alone).  pre: room for 3 (L + 1)
 * prefix sums. */
static double
partition(const double *t, const double *f, const double *a, const double *held,
	  const double *in, const double *ins, int L, double cap, int S, Stages *st, double *pre)
{
	double lo = 0, hi, T = -1;
	double *pt = pre, *pf = pre + L + 1, *pa = pre + 2 * ((size_t)L + 1);
	Held h = { pf, pa, a ? held : NULL, in, ins, true };

	pt[0] = pf[0] = pa[0] = 0;
	for (int i = 0; i < L; i++) {
		pt[i + 1] = pt[i] + t[i];
		pf[i + 1] = pf[i] + f[i];
		pa[i + 1] = pa[i] + (a ? a[i] : 0);
		if (t[i] > lo)
			lo = t[i];
		if (!(t[i] >= 0 && f[i] >= 0 && (!a || a[i] >= 0) && (!in || in[i] >= 0)))
			h.grows = false;
	}
	for (int i = 0; i < S && h.grows; i++)
		if (!((!h.held || h.held[i] >= 0) && (!in || ins[i] >= 0)))
			h.grows = false;
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
	return T;
}

/* The per-layer arrays of one micro-batch count (layer_costs) and the
 * micro-batches each stage holds (schedule_held); dpf splits each stage's
 * layers by filter over `ways` GPUs of group `grp` (Megatron's tensor
 * parallelism inside a pipeline stage, its column-parallel layers), dpc
 * by input channel (its row-parallel layers), dps by rows up to the
 * spatial split's last layer `last`. */
typedef struct Costs {
	double *t, *f, *a, *held;
	double *in;     /* bytes per micro-batch entering a stage that begins
	                   at the layer (what a checkpoint keeps) */
	double *ins;    /* per stage: the micro-batches it keeps only the
	                   input of (pipe_checkpoint) */
	double ck;      /* of the M micro-batches, the share checkpointed */
	double *col;    /* of t: the split's collectives (dps: and halos) */
	double *halo;   /* of col: dps's halo exchanges */
	double *redo;   /* of t: the forward recomputed (redo_kept) */
	double *pre;    /* partition's prefix sums: 3 (L + 1) */
	bool redo_kept; /* redo holds it; false: every layer's was 0 */
	int64_t ways;   /* 1: no split inside the stages */
	GridDim inner;  /* DIM_FILTER (dpf), DIM_CHANNEL (dpc), DIM_SPATIAL (dps),
	                   DIM_TENSOR (dpt: Megatron's, model/tensor.c) */
	bool sp;        /* dpt: sequence parallelism */
	int64_t cp;     /* dptc: the context-parallel ring's C GPUs, each on
	                   s/C of every sequence (1: none) */
	Group ring;     /* dptc: the ring's placement */
	double tied;    /* the parameters of the tied embedding table's copy
	                   the output layer's stage holds (Megatron: the
	                   first and the last stage each hold the table;
	                   tied_copy), 0 for none */
	int last;       /* dps: the last layer split by rows */
	Group grp;
	double nd;      /* ZeRO-1: the data-parallel copies sharing the
	                   optimizer state (1 without) */
	double keep;    /* dpt: the share of the kept bytes a GPU of the
	                   tensor group keeps, which its transients follow
	                   as dt's do (1 elsewhere) */
} Costs;

/* Bytes a GPU holds per parameter it trains: weights (and autocast's
 * 16-bit copy of them, where ZeRO's layout does not hold it), gradients
 * and the optimizer state, this last sharded over nd copies under ZeRO-1
 * (as zero.c lays the states out). */
static MemUse
per_parameter(const Analysis *an, const Graph *g, double nd)
{
	MemUse m = { .weights = elem_bytes(an), .grads = elem_bytes(an),
		     .optimizer = optimizer_bytes(an->q.set.opt) };

	if (an->q.set.zero || master_weights(an))
		zero_memory(an, g, 1, nd, &m);
	if (!an->q.set.zero)
		m.weights += mem_cast_weights(an, g, 1);
	return m;
}

/* Per class of layers (layer_classes), figures that follow from the
 * class alone (a layer's weights held, the wrapper's kernels around its
 * exchange): made once a call, for the first layer of each class met.
 * NULL classes: every layer's own. */
typedef struct ClassMemo {
	const int *cls;
	double *v;      /* CM_* per class, NaN: not yet */
} ClassMemo;
enum { CM_W, CM_RED, CM_BUF, CM_COUNT };

static ClassMemo
class_values(const Analysis *an, const Graph *g)
{
	const LayerTable *tb = layer_classes(an, g);
	ClassMemo m = { tb->ncls > 0 ? tb->cls : NULL, NULL };
	size_t n = (size_t)tb->ncls * CM_COUNT;

	if (m.cls) {
		m.v = engine_scratch(an->eng, SC_PIPE_CLASS_W, n, sizeof *m.v);
		for (size_t i = 0; i < n; i++)
			m.v[i] = NAN;
	}
	return m;
}

/* g's layer table as held_w reads it: a channel split's shares need each
 * layer's weight tensor. */
static const LayerTable *
table_for(const Analysis *an, const Graph *g, const Costs *c)
{
	if (c->inner == DIM_TENSOR)
		return layer_table_tensor(an, g);
	return c->ways > 1 && c->inner == DIM_CHANNEL ? layer_table_full(an, g)
						      : layer_table(an, g);
}

/* The parameters a GPU holds of layer i: all, or under a filter or
 * channel split inside the stages (dpf, dpc) its share of a layer the
 * split divides (split_params). */
static double held_w(const LayerTable *tb, const Costs *c, int i);

/* held_w through m's classes. */
static double
class_w(ClassMemo *m, const LayerTable *tb, const Costs *c, int i)
{
	double *v;

	if (!m->cls)
		return held_w(tb, c, i);
	v = &m->v[m->cls[i] * CM_COUNT + CM_W];
	if (*v != *v)
		*v = held_w(tb, c, i);
	return *v;
}

static double
held_w(const LayerTable *tb, const Costs *c, int i)
{
	bool rows = c->inner == DIM_SPATIAL, channel = c->inner == DIM_CHANNEL;

	if (c->inner == DIM_TENSOR)
		return tensor_params(&tb->tensor, tb, i, (double)c->ways);
	if (c->ways > 1 && !rows && (tb->split[i] & (1u << channel)))
		return split_params_of(tb->params[i], channel ? tb->kernel[i] : 0, channel,
				       (double)c->ways);
	return (double)tb->params[i];
}

/* Per layer: the time of forward and backward of one micro-batch of n
 * samples (t; with a split inside the stage, the layer's share of the work
 * and its collectives, col: a filter or channel split's, or a spatial
 * split's halos and, at its last layer, the gather), the parameters a GPU
 * holds (w), the bytes a stage holds for them whatever the schedule (f:
 * weights, gradients, optimizer state) and the activations it keeps per
 * micro-batch in flight (a: whole, as the filter and channel splits gather
 * their outputs; a strip's under the spatial split, and after it where the
 * implementation does not replicate the layers after the gather).  What
 * layer_cost reads, set up once for the micro-batch: */
typedef struct Pass {
	const Graph *g;
	const Analysis *an;
	const Costs *c;
	const LayerTable *tb;
	const double *act;      /* kept bytes per layer (kept_layers) */
	int wide;               /* the precision's bytes an element */
	double n, per_w;
	double in_act;          /* the kept graph input, on the first stage */
	bool rows;              /* dps */
	bool tensor;            /* dpt */
	unsigned split;         /* the table's bit of the layers a filter or
	                           channel split divides; 0 for none */
	Times whole, part, halo, col;
	const int *cls;         /* layers alike (layer_classes) whose figures
	                           are alike here too: each class's figures
	                           made once (per_class); NULL where not */
} Pass;

/* One layer's figures; a's of the first layer with the graph input. */
typedef struct LayerCost {
	double t, f, a, in, col, halo, redo;
} LayerCost;

static void
pass_begin(Pass *p, const Graph *g, const Analysis *an, double n, const Costs *c)
{
	MemUse pp = per_parameter(an, g, c->nd);
	bool channel = c->inner == DIM_CHANNEL;

	p->g = g, p->an = an, p->c = c, p->n = n;
	p->tb = table_for(an, g, c);
	p->per_w = pp.weights + pp.grads + pp.optimizer;
	p->act = kept_layers(an, g);
	p->wide = precision_bytes(an->q.set.prec);
	p->rows = c->ways > 1 && c->inner == DIM_SPATIAL;
	p->tensor = c->inner == DIM_TENSOR;
	p->split = c->ways > 1 && !p->rows && !p->tensor ? 1u << channel : 0;
	p->in_act = (double)kept(an, g).input;
	p->cls = layer_classes(an, g)->ncls > 0 ? layer_classes(an, g)->cls : NULL;
	p->whole = layer_times(an, g, n, 1, DIM_DATA);
	p->part = layer_times(an, g, n, c->ways > 1 ? 1.0 / (double)c->ways : 1, c->inner);
	p->halo = p->rows ? halo_times(an, g, n, c->ways, c->grp.size > c->grp.per_node) : p->whole;
	p->col = p->tensor			 ? tensor_times(an, g, n, c->grp, c->sp)
		 : !p->rows && c->ways > 1 ? split_times(an, g, n, c->grp, channel)
					   : p->whole;
}

/* Layer i's share of the work on a GPU: a strip's rows (dps), Megatron's
 * tensor parallelism's (dpt), 1/ways of a layer a filter or channel
 * split divides (dpf, dpc), else all of it. */
static double
layer_share(const Pass *p, int i)
{
	const Costs *c = p->c;
	double w = (double)c->ways;

	if (p->rows)
		return i <= c->last || !p->an->q.impl.replicated ? 1.0 / w : 1;
	if (p->tensor)
		return tensor_share(&p->tb->tensor, i, w, c->sp);
	return p->tb->split[i] & p->split ? 1.0 / w : 1;
}

/* dptc: the exposed ring (model/context.c) of the attention whose
 * layers begin at layer i, on the micro-batch of whole sequences whose
 * s/C a GPU runs, with its forward again where the core is recomputed
 * (redo: as the layer's forward is) or checkpointed (a share ck); 0
 * where no attention begins at i. */
static double
ring_at(const Pass *p, int i, bool redo)
{
	const Transformer *tf = &p->an->tf;
	const Costs *c = p->c;
	int lo = 0, hi = tf->layers - 1;
	double all, fwd;
	bool again;

	while (lo < hi) { /* the attentions in layer order */
		int mid = lo + (hi - lo) / 2;
		if (tf->parts[mid][0] < i)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (tf->layers == 0 || tf->parts[lo][0] != i)
		return 0;
	all = context_attention(p->an, p->g, lo, &p->whole, &p->part, c->ways, c->ring,
				p->n * (double)c->cp, &fwd, &again);
	return all + (redo ? fwd : fwd * c->ck);
}

static LayerCost
layer_cost(const Pass *p, int i)
{
	const Costs *c = p->c;
	const Recompute *rc = &p->an->rc;
	double n = p->n, share = layer_share(p, i), colf = 0;
	const Times *r = share < 1 ? &p->part : &p->whole;
	double fwd = times_of(r, i, false);
	/* recomputation: selective drops the attention cores' tensors and
	 * runs their forward again; segments keep only what enters each
	 * segment, and a stage runs its whole forward again */
	bool redo = rc->k == RECOMPUTE_SELECTIVE ? rc->redo[i] : rc->k > 0;
	LayerCost lc;

	lc.halo = p->rows && i <= c->last ? times_of(&p->halo, i, false) : 0;
	if (p->rows) {
		lc.col = lc.halo + (i == c->last ? spatial_gather(p->an, p->g, i, n, c->grp) : 0);
	} else if (p->tensor) { /* forward and backward; the forward's run again */
		colf = times_of(&p->col, i, false);
		lc.col = colf + times_of(&p->col, i, true);
	} else {
		lc.col = share < 1 ? times_of(&p->col, i, false) : 0;
	}
	if (c->cp > 1) /* dptc: the ring of an attention beginning here */
		lc.halo = ring_at(p, i, redo);
	lc.col += p->rows ? 0 : lc.halo;
	/* pipe_checkpoint: a share ck of the micro-batches runs it again */
	lc.redo = redo ? fwd + colf : (fwd + colf) * c->ck;
	lc.t = fwd + times_of(r, i, true) + lc.col + lc.redo;
	lc.f = (held_w(p->tb, c, i) + (i == p->an->tf.output ? c->tied : 0)) * p->per_w;
	/* what a split keeps: a strip's rows; Megatron's tensor parallelism
	 * the split layers' 1/t (and with sequence parallelism every layer's:
	 * Korthikanti et al.'s divisions), the filter and channel splits
	 * everything, gathered */
	lc.a = (rc->k > 0 ? rc->boundary[i] : redo ? 0 : p->act[i]) * n *
	       (p->rows || p->tensor ? share : 1);
	if (i == 0) /* the kept graph input lives on the first stage */
		lc.a += p->in_act * n;
	lc.in = (double)p->tb->in[i] * n * p->wide *
		(p->rows ? share : p->tensor && c->sp ? 1.0 / (double)c->ways : 1);
	return lc;
}

/* Layer i's figures, through those of a layer alike where p has classes:
 * a layer's time, collectives, recomputation and weights follow from its
 * class (layer_classes), whether recomputation redoes it (selective) and,
 * under a spatial split, whether it is split and exchanges halos, each
 * made once into *memo (*have); its kept bytes (per layer: recomputation's
 * boundaries, the fused attentions' Graph.keep[1]) and what a stage
 * beginning at it receives (the layer before's output) follow from the
 * layer itself.  The first layer (the graph input is kept with it) and
 * the spatial split's last (its gather) go their own way. */
static LayerCost
per_class(const Pass *p, int i, LayerCost *memo, bool *have)
{
	const Costs *c = p->c;
	const Recompute *rc = &p->an->rc;
	bool redo, below, strip;
	double share;
	LayerCost lc;
	int k;

	if (!p->cls || i == 0 || (p->rows && i == c->last) || p->tensor ||
	    (c->tied > 0 && i == p->an->tf.output))
		return layer_cost(p, i); /* dpt: a layer's place in the pairs is its own */
	redo = rc->k == RECOMPUTE_SELECTIVE ? rc->redo[i] : rc->k > 0;
	below = p->rows && i <= c->last;
	strip = p->rows && (below || !p->an->q.impl.replicated);
	k = ((p->cls[i] * 2 + (rc->k == RECOMPUTE_SELECTIVE && rc->redo[i])) * 2 + below) * 2 +
	    strip;
	if (!have[k])
		memo[k] = layer_cost(p, i), have[k] = true;
	lc = memo[k];
	share = strip ? 1.0 / (double)c->ways : 1;
	lc.a = (rc->k > 0 ? rc->boundary[i] : redo ? 0 : p->act[i]) * p->n *
	       (p->rows ? share : 1);
	lc.in = (double)p->tb->in[i] * p->n * p->wide * (p->rows ? share : 1);
	return lc;
}

/* The scratch of per_class for p. */
static void
class_memo(const Pass *p, LayerCost **memo, bool **have)
{
	size_t n = p->cls ? 8 * (size_t)layer_classes(p->an, p->g)->ncls : 0;

	*memo = engine_scratch(p->an->eng, SC_PIPE_CLASS_COST, n + 1, sizeof **memo);
	*have = engine_scratch(p->an->eng, SC_PIPE_CLASS_HAVE, n + 1, sizeof **have);
	memset(*have, 0, (n + 1) * sizeof **have);
}

/* Every layer's figures into c's arrays.  col and halo are 0 without a
 * split inside the stages, redo without recomputation or checkpoints
 * (c->redo_kept false; where one is not, it is kept after all): those
 * arrays are then neither written nor read (plan_for). */
static void
layer_costs(const Graph *g, const Analysis *an, double n, Costs *c)
{
	static const double zero = 0;
	LayerCost *memo;
	bool *have;
	Pass p;

	pass_begin(&p, g, an, n, c);
	class_memo(&p, &memo, &have);
	for (int i = 0; i < g->nlayer; i++) {
		LayerCost lc = per_class(&p, i, memo, have);
		if (c->ways > 1 || c->cp > 1)
			c->halo[i] = lc.halo, c->col[i] = lc.col;
		if (c->redo_kept) {
			c->redo[i] = lc.redo;
		} else if (memcmp(&lc.redo, &zero, sizeof lc.redo) != 0) {
			c->redo_kept = true; /* not all 0: kept after all */
			layer_costs(g, an, n, c);
			return;
		}
		c->t[i] = lc.t, c->f[i] = lc.f, c->a[i] = lc.a, c->in[i] = lc.in;
	}
}

/* layer_costs; the recomputed forwards kept only where they may not all
 * be 0 (recomputation, checkpoints), else found so. */
static void
costs(const Graph *g, const Analysis *an, double n, Costs *c)
{
	c->redo_kept = an->rc.k != 0 || c->ck != 0;
	layer_costs(g, an, n, c);
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
		return partition(c->t, c->f, c->a, c->held, c->in, c->ins, L, cap, S, st, c->pre);
	for (int j = 0, i = 0; j < it->n; j++) {
		it->t[j] = it->f[j] = it->a[j] = 0;
		it->in[j] = c->in[i];
		for (; i <= it->end[j]; i++)
			it->t[j] += c->t[i], it->f[j] += c->f[i], it->a[j] += c->a[i];
	}
	if ((T = partition(it->t, it->f, it->a, c->held, it->in, c->ins, it->n, cap, S, st,
			   c->pre)) < 0)
		return T;
	for (int i = 0; i < st->n; i++)
		st->end[i] = it->end[st->end[i]];
	return stage_max(c->t, st);
}

double
tensor_kept_share(const Analysis *an, const Graph *g, double ways, bool sp)
{
	const TensorTable *tt = &layer_table_tensor(an, g)->tensor;
	const double *kept = kept_layers(an, g);
	double act = 0, all = 0;

	for (int i = 0; i < g->nlayer; i++) {
		act += kept[i] * tensor_share(tt, i, ways, sp);
		all += kept[i];
	}
	return all > 0 ? act / all : 1;
}

/* What autograd saves once a batch whatever its samples (batch norm's
 * statistics): the whole model's, a bound for a stage, at the share a GPU
 * keeps, as data's and dt's memory counts it (mem_activations). */
static double
fixed_saved(const Analysis *an, const Graph *g, const Costs *c)
{
	return (double)kept(an, g).saved_fixed * c->keep / (double)c->cp;
}

/* Per GPU, beyond a stage's own layers (m[]): what is saved once a batch,
 * the backward peak's gradients in flight and the workspace for one
 * micro-batch of n samples (the whole model's figures, an upper bound for
 * a stage) and the system's reserve. */
static double
stage_extra(const Graph *g, const Analysis *an, const Costs *c, double n)
{
	/* segments: the one being recomputed, during its backward */
	double seg = an->rc.k > 0 ? an->rc.segment * n : 0;

	KeptBytes k = kept(an, g);

	return fixed_saved(an, g, c) + (double)k.transient * n * c->keep + (double)k.workspace +
	       an->q.sys->reserved + seg;
}

/* ---- partitions kept ---------------------------------------------------- */

/* What with_micro, the memory and the exchange read of a partition, per
 * stage: the sums over its layers of c's arrays (t, col, redo, halo, w,
 * f, a), of their parameter tensors and issue times (the forward again
 * for the checkpointed share), the input of its first layer (in), and the
 * data-parallel wrapper's kernels around its exchange (reducer_sum). */
enum {
	PS_TIME, PS_COL, PS_REDO, PS_HALO, PS_W, PS_ARRAYS, PS_HOST, PS_F, PS_A, PS_IN, PS_RED,
	PS_BUF, PS_COUNT
};

/* A partition is a function of the analysis (analysis_stamp: its system,
 * graph, implementation, precision, optimizer, schedule, ZeRO and
 * recomputation), the micro-batch's samples n, the micro-batch count M,
 * the stages S, the split inside them (ways, inner, and the group of its
 * collectives), the copies nd sharing the optimizer state, and the
 * memory a stage may hold: the key.  The grids of one strategy, their
 * nestings, the advice's smaller GPU counts and the search's
 * configurations ask for the same ones again.  M = 0: the bound's sum
 * (pipeline()), in T. */
typedef struct PlanKey {
	uint64_t an;
	double n, nd, cap;
	int64_t M, S, ways, grp[3], cp, ring[3];
	int inner;
} PlanKey;

typedef struct Plan {
	PlanKey key;
	bool fits;         /* a partition within the memory */
	double T;          /* its slowest stage; M = 0: the sum of every t */
	double fwd_host;   /* every layer's forward issue time, added */
	int n;             /* stages */
	int *end;          /* each stage's last layer */
	double *sum;       /* [stage * PS_COUNT + PS_*] */
	bool red;          /* PS_RED and PS_BUF summed (plan_reducer) */
	int next;          /* the bucket's chain, -1 at its end */
	int gen;           /* the generation it lives in */
} Plan;

/* Plans live in two generations of PLANS / 2 plans and POOL / 2 doubles
 * each: when the current one is full, the other's plans go and it becomes
 * the current one.  No allocation after the first; a plan stays valid
 * until PLANS / 2 more have been made.  An engine's (engine.h). */
enum { PLANS = 8192, PLAN_BUCKETS = 16384 };
#define POOL ((size_t)4 << 20) /* doubles: 32 MB */
typedef struct Plans {
	Plan plan[PLANS];
	int head[PLAN_BUCKETS], gen_plans[2], cur;
	double *pool;
	size_t gen_used[2];
} Plans;

static unsigned
plan_bucket(const PlanKey *k)
{
	const unsigned char *b = (const unsigned char *)k;
	uint64_t h = 1469598103934665603u;

	for (size_t i = 0; i < sizeof *k; i++)
		h = (h ^ b[i]) * 1099511628211u;
	return (unsigned)((h ^ h >> 29) & (PLAN_BUCKETS - 1));
}

static Plan *
plan_lookup(const Analysis *an, const PlanKey *k)
{
	Plans *ps = an->eng->plans;

	if (!ps || !an->eng->reuse)
		return NULL;
	for (int i = ps->head[plan_bucket(k)]; i >= 0; i = ps->plan[i].next)
		if (memcmp(&ps->plan[i].key, k, sizeof *k) == 0)
			return &ps->plan[i];
	return NULL;
}

/* Drops generation g's plans and makes it the current one. */
static void
plan_switch(Plans *ps, int gen)
{
	for (int b = 0; b < PLAN_BUCKETS; b++)
		for (int *p = &ps->head[b]; *p >= 0;)
			if (ps->plan[*p].gen == gen)
				*p = ps->plan[*p].next;
			else
				p = &ps->plan[*p].next;
	ps->gen_plans[gen] = 0;
	ps->gen_used[gen] = 0;
	ps->cur = gen;
}

/* A new plan of key k with room for `stages` stages. */
static Plan *
plan_new(const Analysis *an, const PlanKey *k, int stages)
{
	size_t need = (size_t)stages * PS_COUNT + ((size_t)stages + 1) / 2;
	Plans *ps = an->eng->plans;
	Plan *p;
	unsigned b;

	if (!ps) {
		ps = an->eng->plans = xcalloc(1, sizeof *ps);
		ps->pool = xcalloc(POOL, sizeof *ps->pool);
		for (int i = 0; i < PLAN_BUCKETS; i++)
			ps->head[i] = -1;
		plan_switch(ps, 0);
	}
	if (need > POOL / 2)
		return NULL; /* too big to keep */
	if (ps->gen_plans[ps->cur] == PLANS / 2 || ps->gen_used[ps->cur] + need > POOL / 2)
		plan_switch(ps, !ps->cur);
	p = &ps->plan[ps->cur * (PLANS / 2) + ps->gen_plans[ps->cur]++];
	b = plan_bucket(k);
	*p = (Plan){ .key = *k, .gen = ps->cur, .next = ps->head[b] };
	p->sum = ps->pool + (size_t)ps->cur * (POOL / 2) + ps->gen_used[ps->cur];
	p->end = (int *)(p->sum + (size_t)stages * PS_COUNT);
	ps->gen_used[ps->cur] += need;
	ps->head[b] = (int)(p - ps->plan);
	return p;
}

void
plans_free(Plans *ps)
{
	if (!ps)
		return;
	free(ps->pool);
	free(ps);
}

static PlanKey
plan_key(const Graph *g, const Analysis *an, const Costs *c, double n, int64_t M, int64_t S,
	 double cap)
{
	PlanKey k;

	memset(&k, 0, sizeof k);
	k.an = analysis_stamp(an, g);
	k.n = n;
	k.nd = c->nd;
	k.cap = cap;
	k.M = M;
	k.S = S;
	k.ways = c->ways;
	k.inner = c->inner;
	if (c->ways > 1) /* the collectives' group */
		k.grp[0] = c->grp.size, k.grp[1] = c->grp.per_node, k.grp[2] = c->grp.sharing;
	k.cp = c->cp;
	if (c->cp > 1) /* the ring's */
		k.ring[0] = c->ring.size, k.ring[1] = c->ring.per_node, k.ring[2] = c->ring.sharing;
	return k;
}

/* The partition of one stage (plan_for) without the per-layer arrays:
 * every layer in it where it fits in memory, its time theirs added in
 * order, each sum of the stage added as it is made.  That is what the
 * bisection finds (pack with S = 1 takes the first layer and then every
 * layer whose sums stay within the bounds; the sums grow with each layer,
 * times and bytes being at least 0); NULL for anything else (a negative
 * or undefined figure), which goes the whole way. */
static Plan *
plan_one(const Graph *g, const Analysis *an, const Costs *c, double n, double cap,
	 const PlanKey *key, Plan *local)
{
	double t = 0, f = 0, a = 0, in = 0, ww = 0, arrays = 0, col = 0, hal = 0, redo = 0, h = 0,
	       fwd_host = 0, bytes;
	Times issue;
	Plan *p;
	Pass ps;
	LayerCost *memo;
	bool fits, *have;
	ClassMemo wm = class_values(an, g);

	pass_begin(&ps, g, an, n, c);
	class_memo(&ps, &memo, &have);
	issue = host_times(an, g);
	for (int i = 0; i < g->nlayer; i++) {
		LayerCost lc = per_class(&ps, i, memo, have);
		double hf = times_of(&issue, i, false);
		if (!(lc.t >= 0 && lc.f >= 0 && lc.a >= 0))
			return NULL;
		t += lc.t, f += lc.f, a += lc.a;
		ww += class_w(&wm, ps.tb, c, i), arrays += ps.tb->nw[i];
		if (c->ways > 1 || c->cp > 1)
			col += lc.col, hal += lc.halo;
		redo += lc.redo;
		/* the stage's process issues each layer, and the forward
		 * again of a checkpointed micro-batch */
		h += hf * (1 + c->ck) + times_of(&issue, i, true);
		fwd_host += hf;
		if (i == 0)
			in = lc.in;
	}
	/* stage_bytes of the whole, as pack sums it from the prefixes */
	bytes = f - 0.0 + c->held[0] * (a - 0.0) + c->ins[0] * in;
	if (bytes != bytes || t != t)
		return NULL;
	fits = !(bytes > cap);
	if (!(p = plan_new(an, key, fits))) {
		p = local;
		*p = (Plan){ .key = *key };
		p->sum = engine_scratch(an->eng, SC_PIPE_PLAN_SUM, PS_COUNT, sizeof(double));
		p->end = engine_scratch(an->eng, SC_PIPE_PLAN_END, 1, sizeof(int));
	}
	p->fits = fits;
	p->T = fits ? t : -1;
	p->red = false;
	if (!fits)
		return p;
	p->n = 1;
	p->end[0] = g->nlayer - 1;
	p->sum[PS_TIME] = t, p->sum[PS_COL] = col, p->sum[PS_REDO] = redo, p->sum[PS_HALO] = hal;
	p->sum[PS_W] = ww, p->sum[PS_ARRAYS] = arrays, p->sum[PS_HOST] = h, p->sum[PS_F] = f;
	p->sum[PS_A] = a, p->sum[PS_IN] = in;
	p->fwd_host = fwd_host;
	return p;
}

/* The partition of M micro-batches of n samples into S stages under the
 * memory cap (c's held and ins set for M), kept or found and kept; a
 * partition under cut points (it->end) is not kept: *local holds it. */
static const Plan *
plan_for(const Graph *g, const Analysis *an, Costs *c, const Items *it, double n, int64_t M,
	 int64_t S, double cap, Stages *st, Plan *local)
{
	PlanKey key = plan_key(g, an, c, n, M, S, cap);
	Plan *p = it->end ? NULL : plan_lookup(an, &key);
	const LayerTable *tb;
	double T, fwd_host = 0;
	Times issue;
	ClassMemo wm;

	if (p)
		return p;
	if (S == 1 && !it->end && (p = plan_one(g, an, c, n, cap, &key, local)))
		return p;
	costs(g, an, n, c);
	T = partition_items(c, g->nlayer, it, cap, (int)S, st);
	if (it->end || !(p = plan_new(an, &key, T < 0 ? 0 : st->n))) {
		p = local;
		*p = (Plan){ .key = key };
		p->sum = engine_scratch(an->eng, SC_PIPE_PLAN_SUM, (size_t)st->n * PS_COUNT + 1,
					sizeof(double));
		p->end = engine_scratch(an->eng, SC_PIPE_PLAN_END, (size_t)st->n + 1, sizeof(int));
	}
	p->fits = T >= 0;
	p->T = T;
	if (!p->fits)
		return p;
	p->n = st->n;
	tb = table_for(an, g, c);
	issue = host_times(an, g);
	wm = class_values(an, g);
	for (int i = 0, first = 0; i < st->n; first = st->end[i] + 1, i++) {
		double *sum = &p->sum[i * PS_COUNT];
		double ww = 0, arrays = 0, time = 0, col = 0, redo = 0, hal = 0, h = 0, sf = 0,
		       sa = 0;
		for (int j = first; j <= st->end[i]; j++) {
			double f = times_of(&issue, j, false);
			double w = class_w(&wm, tb, c, j) + (j == an->tf.output ? c->tied : 0);
			ww += w, arrays += tb->nw[j], time += c->t[j];
			if (c->ways > 1 || c->cp > 1) /* else both 0 (layer_costs) */
				col += c->col[j], hal += c->halo[j];
			if (c->redo_kept) /* else all 0 */
				redo += c->redo[j];
			/* the stage's process issues each layer, and the forward
			 * again of a checkpointed micro-batch */
			h += f * (1 + c->ck) + times_of(&issue, j, true);
			fwd_host += f;
			sf += c->f[j], sa += c->a[j];
		}
		p->end[i] = st->end[i];
		sum[PS_TIME] = time, sum[PS_COL] = col, sum[PS_REDO] = redo, sum[PS_HALO] = hal;
		sum[PS_W] = ww, sum[PS_ARRAYS] = arrays, sum[PS_HOST] = h, sum[PS_F] = sf;
		sum[PS_A] = sa, sum[PS_IN] = c->in[first];
	}
	p->fwd_host = fwd_host;
	p->red = false;
	return p;
}

/* PS_RED and PS_BUF of p's stages, where the exchange reads them (data
 * replicas: dp, dpf, dpc, dps): the data-parallel wrapper's kernels,
 * reducer_time's sum, each layer's gradients its share of its
 * parameters (c's split inside the stages). */
static void
plan_reducer(const Graph *g, const Analysis *an, const Costs *c, Plan *p)
{
	const LayerTable *tb = layer_table_full(an, g);
	ClassMemo m = class_values(an, g);

	for (int i = 0, first = 0; i < p->n; first = p->end[i] + 1, i++) {
		double red = 0, buf = 0;
		for (int j = first; j <= p->end[i]; j++) {
			double *v = m.cls ? &m.v[m.cls[j] * CM_COUNT] : NULL;
			if (!v || v[CM_RED] != v[CM_RED]) {
				double params = (double)tb->params[j];
				double share = tb->params[j] > 0 ? held_w(tb, c, j) / params : 1;
				double r = reducer_kernels(an, g, tb->nw[j], tb->buffers[j],
							   params * share);
				double b = buffer_bytes(an, tb->buffers[j]);
				if (!v) {
					red += r, buf += b;
					continue;
				}
				v[CM_RED] = r, v[CM_BUF] = b;
			}
			red += v[CM_RED], buf += v[CM_BUF];
		}
		p->sum[i * PS_COUNT + PS_RED] = red;
		p->sum[i * PS_COUNT + PS_BUF] = buf;
	}
	p->red = true;
}

/* Stage i's own bytes: fixed ones plus the micro-batches it holds, whole
 * (held) or (checkpointed) their input (ins of them); *acts the latter
 * two. */
static double
stage_own(const double *sum, double held, double ins, double *acts)
{
	*acts = sum[PS_A] * held + ins * sum[PS_IN];
	return sum[PS_F] + *acts;
}

/* The breakdown of the stage that needs the most memory: its weights,
 * gradients and optimizer state, the kept activations of the micro-batches
 * the schedule makes it hold, then the parts stage_extra() adds, as
 * memuse.c sums them. */
static void
stage_memory(const Graph *g, const Analysis *an, const Plan *p, const Costs *c, double n,
	     MemUse *mem)
{
	MemUse pp = per_parameter(an, g, c->nd);
	double wb = 0, most = -1, acts = 0;

	for (int i = 0; i < p->n; i++) {
		const double *sum = &p->sum[i * PS_COUNT];
		double sa, sm = stage_own(sum, c->held[i], c->ins[i], &sa);
		if (sm > most)
			most = sm, wb = sum[PS_W], acts = sa;
	}
	mem->weights = wb * pp.weights;
	mem->grads = wb * pp.grads;
	mem->optimizer = wb * pp.optimizer;
	mem->activations = acts + (an->rc.k > 0 ? an->rc.segment * n : 0) + fixed_saved(an, g, c);
	mem->transient = (double)kept(an, g).transient * n * c->keep;
	mem->workspace = (double)kept(an, g).workspace;
	mem_total(mem, an->q.sys);
}

int
pipeline_checkpoint(const Analysis *an)
{
	return an->rc.k != 0 ? CKPT_NEVER : (int)an->q.impl.ckpt;
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
	if (an->q.set.schedule != SCHED_GPIPE && nc == (double)M - 1 && held >= 2) {
		*whole = 2;
		return held - 1;
	}
	*whole = nc > 0 && held - kept < 1 ? 1 : held - kept;
	return kept;
}

/* Evaluates M micro-batches; fills k and returns false when no partition
 * fits in memory; *out: the partition. */
static bool
with_micro(const Graph *g, const Analysis *an, const Mapping *map, Candidate *k, int64_t B,
	   int64_t M, double cap, Costs *c, const Items *it, Stages *st, const Plan **out,
	   Plan *local)
{
	int64_t S = map->q / (c->ways * c->cp);
	const System *s = an->q.sys;
	/* a micro-batch's samples, and a GPU's share of them: s/C of each
	 * sequence under context parallelism (dptc), its activations, its
	 * work and a stage boundary's sends each 1/C */
	double n = (double)B / M, ns = n / (double)c->cp, delta = elem_bytes(an);
	double T, edge = 0, upd = 0, slow = -1, halos = 0, host = 0, step = 0, hop;
	int L = g->nlayer, v = an->q.set.virtual_stages > 1 ? an->q.set.virtual_stages : 1;
	int64_t nc = checkpointed(an, M);
	const Plan *p;

	c->ck = (double)nc / (double)M;
	schedule_held(an->q.set.schedule, v, M, (int)S, c->held);
	for (int i = 0; i < S; i++)
		c->ins[i] = pipeline_checkpointed(an, M, c->held[i], &c->held[i]);
	*out = p = plan_for(g, an, c, it, ns, M, S, cap - stage_extra(g, an, c, ns), st, local);
	if (!p->fits)
		return false;
	if ((map->replicas > 1 || c->cp > 1) && !p->red) /* the exchange reads them
							      (stage_exchange) */
		plan_reducer(g, an, c, (Plan *)p);
	T = p->T;
	/* the largest activation crossing a stage boundary, each way */
	for (int i = 0; i + 1 < p->n; i++) {
		double y = (double)g->tensor[g->layer[p->end[i]].out[0]].elems * ns * delta;
		if (y > edge)
			edge = y;
	}
	k->t.layer = k->t.recompute = 0;
	for (int i = 0; i < p->n; i++) {
		const double *sum = &p->sum[i * PS_COUNT];
		double t;
		if (sum[PS_HOST] > host)
			host = sum[PS_HOST], step = step_host(an, sum[PS_ARRAYS]);
		/* ZeRO-1: each copy steps its share of the stage's weights, as
		 * data parallelism's does (zero_step_arrays) */
		if ((t = update_time(an, sum[PS_W] / c->nd,
				     zero_step_arrays(an, sum[PS_ARRAYS], c->nd))) > upd)
			upd = t;
		if (sum[PS_TIME] > slow) /* the slowest stage's collectives, halos
					    and recomputation, apart */
			slow = sum[PS_TIME], k->t.layer = M * (sum[PS_COL] - sum[PS_HALO]),
			halos = M * sum[PS_HALO], k->t.recompute = M * sum[PS_REDO];
	}
	k->micro_batches = M;
	k->per_gpu_batch = n;
	/* interleaved: each GPU's stage is V chunks, so the fill and drain
	 * take chunks of T / V (Megatron's bubble (p - 1) / (V M)), and a
	 * micro-batch crosses V times as many stage boundaries */
	k->t.compute = M * T - k->t.layer - halos - k->t.recompute;
	k->t.bubble = (S - 1) * T / v;
	/* Megatron's scatter-gather across a tensor-parallel group (SC'21,
	 * section 4.1): each of its t GPUs sends 1/t of the activation, and
	 * the receiving group all-gathers it over its own links */
	if (c->inner == DIM_TENSOR && c->ways > 1 && p->n > 1)
		hop = p2p_time(an, edge / (double)c->ways, map->across) +
		      coll_allgather(an, c->grp, edge);
	else
		hop = p2p_time(an, edge, map->across);
	k->t.p2p = p->n > 1 ? (M * v + S - 2) * (an->q.set.forward_only ? 1 : 2) * hop : 0;
	k->t.p2p += halos;
	if (c->cp > 1) /* dptc: the halos are the rings' */
		k->t.ring = halos;
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
	if (p->n == 1) { /* one stage: one process's iteration, as data's */
		Lane ln = lane_times(an, g, 0, L - 1, ns);
		host_lane(an, g, 0, L - 1, &ln, zero_step_arrays(an, p->sum[PS_ARRAYS], c->nd), k);
	} else if (an->q.impl.pipe_threads) {
		double cpu = (double)(M + nc) * p->fwd_host;
		double gpu = k->t.compute + k->t.bubble + k->t.recompute + k->t.layer;
		k->t.host = cpu;
		k->t.dispatch = cpu > gpu ? cpu - gpu : 0;
	}
	stage_memory(g, an, p, c, ns, &k->mem);
	return true;
}

/* The best micro-batch count's stages so far: each one's last layer, time
 * and memory (scratch), and the sums the exchange reads. */
typedef struct Best {
	int n;
	int *end;
	double *time, *mem, *w, *red, *buf;
} Best;

/* Keeps p's stages, and each one's time and memory, in *b (the memory as
 * mem.total: the stage's own bytes and stage_extra()). */
static void
keep_stages(const Graph *g, const Analysis *an, const Plan *p, const Costs *c, double n,
	    Best *b)
{
	double acts;

	b->n = p->n;
	for (int i = 0; i < p->n; i++) {
		const double *sum = &p->sum[i * PS_COUNT];
		b->end[i] = p->end[i];
		b->time[i] = sum[PS_TIME];
		b->mem[i] = stage_own(sum, c->held[i], c->ins[i], &acts) + stage_extra(g, an, c, n);
		b->w[i] = sum[PS_W];
		b->red[i] = sum[PS_RED];
		b->buf[i] = sum[PS_BUF];
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
	       const Best *b)
{
	for (int i = 0; i < b->n; i++) {
		double t = coll_grad_allreduce(an, map->grad, b->w[i] * grad_bytes(an));
		double r = reducer_total(an, map->grad, b->red[i], b->buf[i]);
		if (t + r > k->t.grad + k->t.reducer)
			k->t.grad = t, k->t.reducer = r;
	}
}

/* One stage (dpc's pipeline=1: --grid names the others' grids without
 * the pipeline): no pipeline runs, and the replicas' exchange is data's,
 * bucketed and overlapped with the last micro-batch's backward as the
 * implementation does (grad_time on n samples, each layer's share of its
 * parameters a GPU holds). */
static void
one_stage_exchange(const Graph *g, const Analysis *an, const Mapping *map, const Costs *c,
		   Candidate *k, double n)
{
	const LayerTable *tb = table_for(an, g, c);
	double *wshare = engine_scratch(an->eng, SC_PIPE_WSHARE, (size_t)g->nlayer + 1,
					sizeof *wshare);

	for (int i = 0; i < g->nlayer; i++)
		wshare[i] = tb->params[i] > 0 ? held_w(tb, c, i) / (double)tb->params[i] : 1;
	k->t.grad = grad_time(an, g, map->grad, n, wshare, &k->t.grad_hidden);
	k->t.reducer = reducer_time(an, g, map->grad, 0, g->nlayer - 1, wshare);
}

/* --sync-bn in dp, dpf, dpc and dps: each stage's batch norms share their
 * statistics with the same stage's replicas (the data group), for every
 * micro-batch, forward and backward (sync_bn_time on the stage's layers;
 * in dpf and dpc a GPU's share of the channels: the whole count bounds
 * it, as df's).  The exchanges lengthen a stage's every micro-batch, so
 * every step of the schedule, fill and drain too, takes the largest
 * stage's (as dispatch does in with_micro): M + (S - 1) / V steps. */
static void
stage_sync_bn(const Graph *g, const Analysis *an, const Mapping *map, Candidate *k,
	      const Best *b, int64_t S)
{
	int v = an->q.set.virtual_stages > 1 ? an->q.set.virtual_stages : 1;
	double most = 0;

	for (int i = 0, first = 0; i < b->n; first = b->end[i] + 1, i++)
		most = fmax(most, sync_bn_time(an, g, map->grad, first, b->end[i]));
	k->t.sync_bn = ((double)k->micro_batches + (double)(S - 1) / v) * most;
}

/* Megatron-LM's tied embedding in a pipeline: the output layer's stage
 * holds its own copy of the table (of its 1/t under tensor parallelism),
 * the first stage the table (megatron/core/models/common/
 * language_module/language_module.py, setup_embeddings_and_output_layer
 * at d98e8a64).  Its parameters; 0 where the transformer's output layer
 * has weights of its own (untied), where the graph holds no table (an ODL
 * model whose input is the looked-up embeddings) or one stage. */
static double
tied_copy(const Graph *g, const Analysis *an, const Costs *c, int64_t S)
{
	const Transformer *tf = &an->tf;

	if (S < 2 || tf->layers == 0 || tf->untied || tf->table < 0 || tf->output < 0)
		return 0;
	return held_w(table_for(an, g, c), c, tf->table);
}

/* Where Megatron-LM may cut a transformer's pipeline: between its layers,
 * never inside one (a stage holds whole TransformerLayers, the embedding
 * with the first, the final norm and the output layer with the last:
 * megatron/core/transformer/transformer_block.py, get_num_layers_to_build
 * at d98e8a64).  Found on the layers: a cut may follow layer i where the
 * fewest activations cross it (the residual stream, and what every layer
 * reads; inside attention Q, K, V and the residual cross together), and
 * of those the last before each attention's QK^T product but the first --
 * between a layer's attention and its MLP as few cross, but no attention
 * follows before the next.  NULL where the graph holds no transformer or no such
 * cut (the partition then cuts anywhere). */
static const bool *
transformer_cuts(const Graph *g, const Analysis *an)
{
	Engine *e = an->eng;
	int L = g->nlayer, cand = -1, n = 0, live = 0, fewest = INT_MAX, k = 0;
	size_t len = (size_t)L + 1, nt = g->ntensor > 0 ? (size_t)g->ntensor : 1;
	const int(*at)[2] = an->tf.parts;
	bool *cut;
	int *last, *cross;

	if (an->tf.layers < 2 || !at)
		return NULL;
	cut = engine_scratch(e, SC_PIPE_CUT, len, sizeof *cut);
	last = engine_scratch(e, SC_PIPE_LAST, nt, sizeof *last);
	cross = engine_scratch(e, SC_PIPE_CROSS, len, sizeof *cross);
	for (size_t t = 0; t < nt; t++)
		last[t] = -1;
	for (int i = 0; i < L; i++) {
		cut[i] = false, cross[i] = 0;
		for (int j = 0; j < g->layer[i].nin; j++)
			last[g->layer[i].in[j]] = i;
	}
	/* an activation made by layer p and last read by layer c crosses the
	 * cuts after p .. c - 1 */
	for (int t = 0; t < g->ntensor; t++) {
		int p = g->tensor[t].producer;
		if (p < 0 || g->tensor[t].konst || last[t] <= p)
			continue;
		cross[p]++, cross[last[t]]--;
	}
	/* the fewest activations crossing a cut from the first attention to
	 * the last: the residual stream, with what every layer reads (an
	 * ONNX export's attention mask) */
	for (int i = 0; i < L; i++) {
		live += cross[i], cross[i] = live;
		if (i >= at[0][0] && i < at[an->tf.layers - 1][0] && live < fewest)
			fewest = live;
	}
	for (int i = 0; i < L && k < an->tf.layers; i++) {
		if (i == at[k][0]) { /* an attention's QK^T: cut before it */
			if (k > 0 && cand >= 0 && !cut[cand])
				cut[cand] = true, n++;
			k++;
		}
		if (cross[i] == fewest)
			cand = i;
	}
	return n > 0 ? cut : NULL;
}

const char pipeline_bounded[] = "cannot beat the best found (a lower bound on its stages' work)";

void
pipeline(const Graph *g, const Analysis *an, const Mapping *map, Candidate *k,
	 const bool *cut_after, const int64_t grid[DIM_COUNT], double beat, bool keep)
{
	int L = g->nlayer;
	size_t len = (size_t)L + 1;
	/* the split inside the stages: dpf's filters, dpc's channels or
	 * dps's rows */
	GridDim inner = grid[DIM_CHANNEL] > 0   ? DIM_CHANNEL
			: grid[DIM_SPATIAL] > 0 ? DIM_SPATIAL
			: grid[DIM_TENSOR] > 0  ? DIM_TENSOR
						: DIM_FILTER;
	bool channel = inner == DIM_CHANNEL, rows = inner == DIM_SPATIAL;
	int64_t ways = grid[inner] > 0 ? grid[inner] : 1;
	/* dptc: rings of C inside the stages, beside the tensor split */
	int64_t cp = grid[DIM_CONTEXT] > 0 ? grid[DIM_CONTEXT] : 1;
	int64_t S = map->q / (ways * cp), p1 = map->replicas, limit = INT64_MAX;
	const char *why;
	/* dp: p1 replicas of the pipeline, each on its share of the batch */
	int64_t Bg = an->q.set.global_batch ? an->q.set.global_batch : an->q.set.batch_per_gpu * p1;
	int64_t B = Bg / p1;
	/* the per-layer arrays, made on a partition not kept */
	Engine *e = an->eng;
	Costs c = { .t = engine_scratch(e, SC_PIPE_T, len, sizeof(double)),
		    .f = engine_scratch(e, SC_PIPE_F, len, sizeof(double)),
		    .a = engine_scratch(e, SC_PIPE_A, len, sizeof(double)),
		    .held = engine_scratch(e, SC_PIPE_HELD, len, sizeof(double)), /* S <= L below */
		    .in = engine_scratch(e, SC_PIPE_IN, len, sizeof(double)),
		    .ins = engine_scratch(e, SC_PIPE_INS, len, sizeof(double)),
		    .col = engine_scratch(e, SC_PIPE_COL, len, sizeof(double)),
		    .halo = engine_scratch(e, SC_PIPE_HALO, len, sizeof(double)),
		    .redo = engine_scratch(e, SC_PIPE_REDO, len, sizeof(double)),
		    .pre = engine_scratch(e, SC_PIPE_PRE, 3 * (len + 1), sizeof(double)),
		    .ways = ways, .inner = inner,
		    .sp = inner == DIM_TENSOR && ways > 1 && an->q.set.sequence_parallel,
		    .cp = cp, .ring = map->context,
		    .last = rows ? spatial_limit(g, ways) : -1,
		    .grp = inner == DIM_TENSOR ? map->tensor : map->split,
		    .nd = an->q.set.zero && map->grad.size > 1 ? (double)map->grad.size : 1,
		    .keep = 1 };
	Stages st = { 0, engine_scratch(e, SC_PIPE_END, len, sizeof(int)) };
	Items it = { NULL, L, NULL, NULL, NULL, NULL };
	double *bs = engine_scratch(e, SC_PIPE_BEST_TIME, 6 * len, sizeof(double));
	Best best_st = { 0, engine_scratch(e, SC_PIPE_BEST_END, len, sizeof(int)), bs, bs + len,
			 bs + 2 * len, bs + 3 * len, bs + 4 * len };
	Candidate best = *k, tmp;
	bool any = false;
	double cap = an->q.sys->mem;
	Plan local;
	const Plan *p;

	if (!cut_after) /* a transformer: between its layers, as Megatron */
		cut_after = transformer_cuts(g, an);
	c.tied = tied_copy(g, an, &c, S);
	if (cut_after) {
		int *ends = engine_scratch(e, SC_PIPE_ITEMS, len, sizeof *ends);
		it = (Items){ ends, 0, engine_scratch(e, SC_PIPE_IT_T, len, sizeof(double)),
			      engine_scratch(e, SC_PIPE_IT_F, len, sizeof(double)),
			      engine_scratch(e, SC_PIPE_IT_A, len, sizeof(double)),
			      engine_scratch(e, SC_PIPE_IT_IN, len, sizeof(double)) };
		for (int i = 0; i < L; i++)
			if (cut_after[i] || i == L - 1)
				ends[it.n++] = i;
	}
	if (inner == DIM_TENSOR) { /* the fewest heads or features a layer splits */
		const TensorTable *tt = &layer_table_tensor(an, g)->tensor;
		limit = tt->most;
		why = tensor_refusal(tt, ways);
		if (!why && grid[DIM_CONTEXT] > 0)
			why = context_refusal(&an->tf, cp);
		if (grid[DIM_CONTEXT] > 0 && !ck_mul(limit, context_limit(&an->tf), &limit))
			limit = INT64_MAX;
		if (!why && ways > 1)
			c.keep = tensor_kept_share(an, g, (double)ways, c.sp);
	} else {
		if (ways > 1 && !rows) /* the fewest filters or channels of a split layer */
			limit = layer_table(an, g)->most[channel];
		why = rows ? spatial_refusal(g, ways, &limit) : NULL;
	}
	k->grid[DIM_PIPELINE] = S;
	if (p1 > 1)
		k->grid[DIM_DATA] = p1;
	if (ways > 1 || grid[DIM_CONTEXT] > 0) /* dptc: its four sizes, 1s too */
		k->grid[inner] = ways;
	if (grid[DIM_CONTEXT] > 0)
		k->grid[DIM_CONTEXT] = cp;
	k->global_batch = Bg;
	/* the stages' limit, times the model split's (filter, tensor and
	 * context) and the data's (kept at INT64_MAX where the product
	 * overflows: no limit that matters) */
	if (!ck_mul(it.n, ways > 1 || grid[DIM_CONTEXT] > 0 ? limit : 1, &k->max_gpus) ||
	    !ck_mul(k->max_gpus,
		    p1 > 1 ? (an->q.set.global_batch
				      ? Bg
				      : an->q.set.dataset_size / an->q.set.batch_per_gpu)
			   : 1,
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
	else if (an->q.set.micro_batches > B)
		beyond_limit(k, "more micro-batches than samples in the batch");
	else if (an->q.set.zero >= 2) /* DeepSpeed's pipeline engine refuses them */
		beyond_limit(k, "ZeRO stages 2 and 3 do not combine with pipeline parallelism");
	if (k->reason)
		return;
	/* A bound: with any M micro-batches the slowest stage takes at least
	 * the average, sum_i t_i(B / M) / S, and M of them at least
	 * sum_i t_i(B) / S (a layer's time, its collectives and halos are
	 * affine in the samples with fixed costs >= 0); the rest of the
	 * iteration adds to it.  A grid whose epoch at that bound cannot beat
	 * `beat` is not partitioned. */
	if (beat < INFINITY) {
		PlanKey key = plan_key(g, an, &c, (double)B / (double)cp, 0, 0, 0);
		Plan *b = plan_lookup(an, &key);
		double lb = 0;
		if (b) {
			lb = b->T;
		} else {
			costs(g, an, (double)B / (double)cp, &c);
			for (int i = 0; i < L; i++)
				lb += c.t[i];
			if ((b = plan_new(an, &key, 0)))
				b->T = lb;
		}
		if (lb / (double)S * ceil((double)an->q.set.dataset_size / (double)Bg) >= beat) {
			beyond_limit(k, pipeline_bounded);
			return;
		}
	}
again:
	for (int64_t M = an->q.set.micro_batches ? an->q.set.micro_batches : 1; M <= B;
	     M = an->q.set.micro_batches ? B + 1 : M * 2 > B && M != B ? B : M * 2) {
		tmp = *k;
		if (with_micro(g, an, map, &tmp, B, M, cap, &c, &it, &st, &p, &local)) {
			if (!any || iteration_busy(&tmp.t) < iteration_busy(&best.t)) {
				best = tmp;
				keep_stages(g, an, p, &c, best.per_gpu_batch / (double)cp,
					    &best_st);
				any = true;
			}
		}
		if (M == B || an->q.set.micro_batches)
			break;
	}
	if (!any && isfinite(cap)) {
		/* no partition fits: predict without the limit; iteration_finish() then
		 * marks it infeasible by its memory */
		cap = INFINITY;
		goto again;
	}
	*k = best;
	if (!any)
		return;
	k->stages = best_st.n;
	if (keep) { /* the plan's and the report's */
		k->stage_end = arena_array(g->arena, best_st.n, sizeof(int));
		k->stage_time = arena_array(g->arena, best_st.n, sizeof(double));
		k->stage_mem = arena_array(g->arena, best_st.n, sizeof(double));
		memcpy(k->stage_end, best_st.end, best_st.n * sizeof(int));
		memcpy(k->stage_time, best_st.time, best_st.n * sizeof(double));
		memcpy(k->stage_mem, best_st.mem, best_st.n * sizeof(double));
	}
	if (best_st.n == 1)
		one_stage_exchange(g, an, map, &c, k,
				   best.per_gpu_batch / (double)(best.micro_batches * cp));
	else if (p1 > 1 || cp > 1) /* dptc: over data x context, a ring's GPUs
				      each holding the stage's weights */
		stage_exchange(g, an, map, k, &best_st);
	if (p1 > 1)
		stage_sync_bn(g, an, map, k, &best_st, S);
	/* the two copies' gradients summed once a step, the first stage's
	 * with the last's (finalize_model_grads.py, _allreduce_word_embedding_
	 * grads at Megatron-LM d98e8a64), after the backward: exposed; across
	 * nodes a node's t tensor-parallel GPUs do theirs at once */
	if (c.tied > 0 && best_st.n > 1 && !an->q.set.forward_only) {
		Group pair = map->across ? (Group){ 2, 1, c.ways } : (Group){ 2, 2, 1 };
		k->t.grad += coll_allreduce(an, pair, c.tied * grad_bytes(an));
	}
}


double
pipeline_partition(const double *t, const double *m, int L, double cap, int S, int *end, int *n)
{
	Stages st = { 0, end };
	double *pre = xcalloc(3 * ((size_t)L + 1), sizeof *pre);
	double T = partition(t, m, NULL, NULL, NULL, NULL, L, cap, S, &st, pre);

	free(pre);
	*n = st.n;
	return T;
}
