/* perlayer.c -- per-layer parallelization (--per-layer; docs/model.md,
 * "Per-layer splits"): each layer picks its own split of the p GPUs,
 * paying to redistribute the activations between layers, chosen exactly
 * by dynamic programming over series-parallel blocks.
 *
 * A layer runs in one of four modes, split over d GPUs (d any divisor of
 * p from 2 to p; data: d = 1) with p / d groups of them sharing the
 * samples (the hybrid of data and that split):
 *
 *   data     each GPU B/p samples, whole weights; input and output split by
 *            samples (layout B); its weights' share of the gradient
 *            all-reduce over all p
 *   filter   a group's B d/p samples on each of its d GPUs, a conv or fc
 *            computing 1/d of its output channels (outputs all-gathered,
 *            input gradients all-reduced in the group); other layers
 *            replicated; input and output whole in the group (layout R);
 *            the group's weights all-reduced over the p/d groups
 *   channel  the same with input channels (partial outputs all-reduced)
 *   spatial  each GPU 1/d of the rows of its group's samples (halos
 *            exchanged, pairwise); input and output split by rows
 *            (layout H); gradient all-reduce over all p
 *
 * and a mode needs what the uniform strategy needs (filters, channels,
 * rows at least d; a sample per group).  On every edge (a tensor from its
 * producer to a consumer) a change of layout costs, forward and backward,
 * in the group of d and on its B d/p samples: B or H to R an all-gather
 * each way, R to B or H a slice forward and an all-gather of the gradient
 * backward, B to H (and back) an all-to-all each way; between two degrees
 * the activation goes through B.  The input arrives split by samples.
 * The gradient all-reduce is priced per byte at its group's rate for the
 * whole model (one collective, shared by the layers that need it); each
 * layer adds the optimizer step on the weights its GPUs hold.  Under the
 * same model the uniform assignments (d = p) are the four uniform
 * strategies, so the result is never worse than the best of them; both
 * are reported.
 *
 * The graph is a chain of blocks, cut where exactly one activation is
 * alive; a block (a residual block, an Inception module) is reduced by
 * the series and parallel rules to one table from its source's state to
 * its last layer's (a block that is not series-parallel takes one state
 * for all its layers), and a dynamic programme runs over the chain.
 *
 * Memory: a GPU holds each layer's weights (split layers 1/d under filter
 * and channel) with their gradients and optimizer state, and its kept
 * activations for the samples it sees (B/p under data and spatial, its
 * group's B d/p under filter and channel, whose outputs are gathered);
 * the sum must fit what the GPU leaves after the reserve, workspace and
 * backward peak.  When the fastest assignment does not, the programme
 * minimises time + lambda x memory instead, lambda found by bisection as
 * the least that fits (Lagrangian relaxation: the assignment fits, and is
 * the fastest of those the relaxation can reach, not always the fastest
 * that fits). */
#include "model/model.h"
#include "plan/plan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { L_B, L_R, L_H };                   /* layouts of an activation */
static const int layout_of[PL_MODES] = { [PL_DATA] = L_B, [PL_FILTER] = L_R,
					 [PL_CHANNEL] = L_R, [PL_SPATIAL] = L_H };

/* A block's choice: a mode and its degree d (d GPUs split the block's
 * layers, p / d groups of them share the samples; data has d = 1). */
typedef struct State {
	PerLayerMode mode;
	int64_t d;
} State;

/* What the GPUs of a degree share: its groups. */
typedef struct Degree {
	int64_t d;
	Group model;       /* the d GPUs of a group, consecutive ranks */
} Degree;

typedef struct Ctx {
	const Graph *g;
	const Analysis *an;
	const CostModel *m; /* prices the layers and the assignments */
	PredictCtx pc;
	int64_t p;
	double B;          /* the global batch */
	Degree *deg;       /* every divisor of p, ascending: deg[0].d = 1 */
	int ndeg;
	State *st;         /* data, then each split mode at each d >= 2 */
	int nst;
} Ctx;


static const Degree *
degree(const Ctx *c, int64_t d)
{
	for (int i = 0; i < c->ndeg; i++)
		if (c->deg[i].d == d)
			return &c->deg[i];
	return &c->deg[0];
}

/* The samples one group of state s works on. */
static double
group_samples(const Ctx *c, State s)
{
	return c->B * (double)s.d / (double)c->p;
}

/* Whether the implementation runs split mode m: a layer split that way
 * over d GPUs in groups that share the samples is the strategy of that
 * split, or its hybrid with data (filter: filter or df; spatial: spatial
 * or ds; channel: channel). */
static bool
mode_runs(const Implementation *im, PerLayerMode m)
{
	switch (m) {
	case PL_FILTER:
		return impl_runs_strategy(im, STRAT_FILTER) || impl_runs_strategy(im, STRAT_DF);
	case PL_CHANNEL: return impl_runs_strategy(im, STRAT_CHANNEL);
	case PL_SPATIAL:
		return impl_runs_strategy(im, STRAT_SPATIAL) || impl_runs_strategy(im, STRAT_DS);
	default: return true;
	}
}

/* Layer l in state s: the bytes a GPU holds for it (weights and their
 * state, kept activations). */
static double
layer_memory(const Ctx *c, const Layer *l, State s)
{
	const Graph *g = c->g;
	double per_w = 2 * elem_bytes(c->an) + optimizer_bytes(c->an->q.set.opt);
	double n = s.mode == PL_DATA || s.mode == PL_SPATIAL ? c->B / (double)c->p
							     : group_samples(c, s);

	return layer_split_params(g, l, (LayerSplit){ s.mode, s.d }) * per_w +
	       kept_layer(c->an, g, (int)(l - g->layer)) * n;
}

/* Layer l in state s, as the cost model prices one layer: INFINITY when
 * the mode cannot split it d ways or a group would have no sample. */
static double
layer_cost(const Ctx *c, const Layer *l, State s)
{
	return c->m->layer(&c->pc, l, (LayerSplit){ s.mode, s.d });
}

/* Redistributing an activation of `bytes` (the whole batch's) from state
 * a to state b, forward and backward.  Between layouts of one degree (or
 * from or to data's) the d GPUs of a group move their group's bytes x d /
 * p: to whole (R) a gather forward and a reduce-scatter of the gradient
 * backward; from whole a slice forward and a gather of the gradient
 * backward; samples (B) to rows (H) and back an all-to-all each way.
 * Between two degrees the activation goes through the samples layout. */
static double
move(const Ctx *c, State a, State b, double bytes)
{
	const Analysis *an = c->an;
	int la = layout_of[a.mode], lb = layout_of[b.mode];
	int64_t d = a.d > b.d ? a.d : b.d;
	Group grp;
	double share;

	if (la == lb && a.d == b.d)
		return 0;
	if (la != L_B && lb != L_B && a.d != b.d)
		return move(c, a, (State){ PL_DATA, 1 }, bytes) +
		       move(c, (State){ PL_DATA, 1 }, b, bytes);
	grp = degree(c, d)->model;
	share = bytes * (double)d / (double)c->p;
	if (lb == L_R)
		return coll_allgather(an, grp, share) + coll_reduce_scatter(an, grp, share);
	if (la == L_R)
		return coll_allgather(an, grp, share);
	return 2 * coll_alltoall(an, grp, share); /* B <-> H */
}

/* An edge of a block's graph: a tensor from its producer to a consumer.
 * A tensor made before the block comes from the block's source: the
 * previous block's last layer (the one activation alive between them), or
 * the input, split by samples, for the first block. */
typedef struct Edge {
	int from, to;      /* layer indices; from = -1: the source */
	double bytes;      /* the whole batch's activation */
} Edge;

enum { MOVE_MEMO = 64 };

/* Everything the programme reads: the chain of blocks (block b is layers
 * first[b]..end[b], its edges edge[e0[b]..e0[b + 1]]), and each layer's
 * time and memory in each state ([i * S + s]). */
typedef struct Chain {
	int nb, *first, *end, *e0;
	Edge *edge;
	double *cost, *mem;
	double lambda;     /* the weight of memory: time + lambda x memory */
	int whole;         /* blocks of several layers that did not reduce
	                      (one state for all their layers), last solve */
	/* move()'s table for an activation size, kept for the first
	 * MOVE_MEMO sizes (a network repeats a few): [S * S] each */
	double memo_bytes[MOVE_MEMO], *memo[MOVE_MEMO];
	int nmemo;
} Chain;

/* move(a, b, bytes) for every pair of states, into t[a * S + b]. */
static void
moves(const Ctx *c, Chain *ch, double bytes, double *t)
{
	int S = c->nst, k = 0;

	while (k < ch->nmemo && ch->memo_bytes[k] != bytes)
		k++;
	if (k < ch->nmemo) {
		memcpy(t, ch->memo[k], (size_t)S * S * sizeof *t);
		return;
	}
	for (int x = 0; x < S; x++)
		for (int y = 0; y < S; y++)
			t[x * S + y] = move(c, c->st[x], c->st[y], bytes);
	if (ch->nmemo < MOVE_MEMO) {
		ch->memo_bytes[ch->nmemo] = bytes;
		ch->memo[ch->nmemo] = xcalloc((size_t)S * S, sizeof *t);
		memcpy(ch->memo[ch->nmemo++], t, (size_t)S * S * sizeof *t);
	}
}

static double
weight(const Ctx *c, const Chain *ch, int i, int s)
{
	return ch->cost[i * c->nst + s] + ch->lambda * ch->mem[i * c->nst + s];
}

/* A series-parallel reduction of one block's graph (Valdes, Tarjan and
 * Lawler's reductions): nodes 0 (the source) and 1..n (the block's layers;
 * n, the last, is the sink); each live arc carries a table t[a * S + b],
 * the least cost of what it stands for with its ends in states a and b. */
typedef struct Arc {
	int from, to;
	double *t;
	int kind;          /* A_EDGE, A_SERIES through `node`, A_PARALLEL */
	int x, y, node;    /* the arcs it merged */
	int *arg;          /* A_SERIES: the node's best state per (a, b) */
	bool live;
} Arc;

enum { A_EDGE, A_SERIES, A_PARALLEL };

typedef struct Reduction {
	Arc *arc;
	int narc, root;    /* root: the one arc left, source to sink; -1 when
	                      the block is not series-parallel */
} Reduction;

static void
reduction_free(Reduction *r)
{
	for (int i = 0; i < r->narc; i++)
		free(r->arc[i].t), free(r->arc[i].arg);
	free(r->arc);
}

/* Reduces block b; r->root < 0 when a step is left with no reduction (a
 * graph that is not series-parallel, or a layer whose output leaves the
 * block unused). */
static void
reduce(const Ctx *c, Chain *ch, int b, Reduction *r)
{
	int S = c->nst, f = ch->first[b], n = ch->end[b] - f + 1, ne = ch->e0[b + 1] - ch->e0[b];
	int *in = xcalloc((size_t)n + 1, sizeof *in), *out = xcalloc((size_t)n + 1, sizeof *out);
	double *wv = xcalloc((size_t)S, sizeof *wv);
	bool progress = true;

	*r = (Reduction){ xcalloc((size_t)2 * ne + 1, sizeof *r->arc), 0, -1 };
	for (int e = ch->e0[b]; e < ch->e0[b + 1]; e++) {
		const Edge *ed = &ch->edge[e];
		Arc *a = &r->arc[r->narc++];
		*a = (Arc){ ed->from < 0 ? 0 : ed->from - f + 1, ed->to - f + 1,
			    xcalloc((size_t)S * S, sizeof *a->t), A_EDGE, -1, -1, -1, NULL, true };
		moves(c, ch, ed->bytes, a->t);
	}
	while (progress) {
		int live = 0, last = -1;
		progress = false;
		memset(in, 0, (size_t)(n + 1) * sizeof *in);
		memset(out, 0, (size_t)(n + 1) * sizeof *out);
		for (int i = 0; i < r->narc; i++)
			if (r->arc[i].live)
				in[r->arc[i].to]++, out[r->arc[i].from]++, live++, last = i;
		if (live == 1 && r->arc[last].from == 0 && r->arc[last].to == n) {
			r->root = last;
			break;
		}
		/* parallel: two arcs between the same nodes become their sum */
		for (int i = 0; i < r->narc && !progress; i++)
			for (int j = i + 1; j < r->narc && !progress && r->arc[i].live; j++) {
				Arc *x = &r->arc[i], *y = &r->arc[j], *m;
				if (!y->live || x->from != y->from || x->to != y->to)
					continue;
				m = &r->arc[r->narc++];
				*m = (Arc){ x->from, x->to, xcalloc((size_t)S * S, sizeof *m->t),
					    A_PARALLEL, i, j, -1, NULL, true };
				for (int k = 0; k < S * S; k++)
					m->t[k] = x->t[k] + y->t[k];
				x->live = y->live = false;
				progress = true;
			}
		/* series: a layer with one arc in and one out becomes an arc
		 * through it, its state the best for each pair of ends */
		for (int v = 1; v < n && !progress; v++) {
			int i = -1, j = -1;
			Arc *x, *y, *m;
			if (in[v] != 1 || out[v] != 1)
				continue;
			for (int k = 0; k < r->narc; k++)
				if (r->arc[k].live && r->arc[k].to == v)
					i = k;
				else if (r->arc[k].live && r->arc[k].from == v)
					j = k;
			x = &r->arc[i], y = &r->arc[j];
			m = &r->arc[r->narc++];
			*m = (Arc){
				x->from, y->to, xcalloc((size_t)S * S, sizeof *m->t),   A_SERIES, i,
				j,       v,     xcalloc((size_t)S * S, sizeof *m->arg), true
			};
			for (int s = 0; s < S; s++)
				wv[s] = weight(c, ch, f + v - 1, s);
			for (int k = 0; k < S * S; k++)
				m->t[k] = INFINITY;
			for (int a = 0; a < S; a++)
				for (int s = 0; s < S; s++) {
					double base = x->t[a * S + s] + wv[s];
					double *row = &m->t[a * S];
					const double *ys = &y->t[s * S];
					for (int z = 0; z < S; z++)
						if (base + ys[z] < row[z])
							row[z] = base + ys[z],
							m->arg[a * S + z] = s;
				}
			x->live = y->live = false;
			progress = true;
		}
		if (r->narc + 1 > 2 * ne) /* every step removes an arc */
			break;
	}
	free(in), free(out), free(wv);
}

/* The states of the layers an arc stands for, its ends in a and z. */
static void
recover(const Ctx *c, const Reduction *r, int i, int a, int z, int f, int *state)
{
	const Arc *x = &r->arc[i];

	if (x->kind == A_PARALLEL) {
		recover(c, r, x->x, a, z, f, state);
		recover(c, r, x->y, a, z, f, state);
	} else if (x->kind == A_SERIES) {
		int s = x->arg[a * c->nst + z];
		state[f + x->node - 1] = s;
		recover(c, r, x->x, a, s, f, state);
		recover(c, r, x->y, s, z, f, state);
	}
}

/* Block b's table T[a * S + z]: its least cost from a source in state a
 * to its last layer in state z.  Not series-parallel: every layer of the
 * block in z (one choice for the block).  With `state`, the layers' states
 * for the ends a and z instead.  A block of one layer needs no reduction:
 * its edges all come from the source. */
static void
block_table(const Ctx *c, Chain *ch, int b, double *T, int a0, int z0, int *state)
{
	int S = c->nst, f = ch->first[b], l = ch->end[b];
	Reduction r = { NULL, 0, -1 };

	if (f < l)
		reduce(c, ch, b, &r);
	if (state && r.root >= 0) {
		recover(c, &r, r.root, a0, z0, f, state);
		state[l] = z0;
	} else if (state) {
		for (int i = f; i <= l; i++)
			state[i] = z0;
	} else if (r.root >= 0) {
		for (int k = 0; k < S * S; k++)
			T[k] = r.arc[r.root].t[k] + weight(c, ch, l, k % S);
	} else {
		ch->whole += f < l;
		double *mv = xcalloc((size_t)S * S, sizeof *mv);
		for (int z = 0; z < S; z++) {
			double w = 0;
			for (int i = f; i <= l; i++)
				w += weight(c, ch, i, z);
			for (int a = 0; a < S; a++)
				T[a * S + z] = w;
		}
		for (int e = ch->e0[b]; e < ch->e0[b + 1]; e++)
			if (ch->edge[e].from < 0) {
				moves(c, ch, ch->edge[e].bytes, mv);
				for (int k = 0; k < S * S; k++)
					T[k] += mv[k];
			}
		free(mv);
	}
	reduction_free(&r);
}

/* The redistribution time of an assignment (a state per layer): every
 * edge's move. */
static double
moved(const Ctx *c, const Chain *ch, const int *state)
{
	double t = 0;

	for (int b = 0; b < ch->nb; b++) {
		int src = b ? state[ch->end[b - 1]] : 0;
		for (int e = ch->e0[b]; e < ch->e0[b + 1]; e++) {
			const Edge *ed = &ch->edge[e];
			t += move(c, c->st[ed->from < 0 ? src : state[ed->from]],
				  c->st[state[ed->to]], ed->bytes);
		}
	}
	return t;
}

/* The time and memory of an assignment under the separable prices the
 * programme adds up. */
static void
evaluate(const Ctx *c, const Chain *ch, const int *state, double *time, double *mem)
{
	*time = moved(c, ch, state);
	*mem = 0;
	for (int i = 0; i < c->g->nlayer; i++) {
		*time += ch->cost[i * c->nst + state[i]];
		*mem += ch->mem[i * c->nst + state[i]];
	}
}

/* An assignment's iteration as the cost model prices a strategy's (the
 * exchange overlapped with the backward, the optimizer step over all
 * tensors at once, the host lane, the input): its total; split[] the
 * layers' splits, filled. */
static double
iteration(const Ctx *c, const Chain *ch, const int *state, LayerSplit *split)
{
	Candidate k = { .split = -1 };

	for (int i = 0; i < c->g->nlayer; i++)
		split[i] = (LayerSplit){ c->st[state[i]].mode, c->st[state[i]].d };
	c->m->assignment(&c->pc, split, moved(c, ch, state), &k);
	iteration_finish(c->an, c->m, &k);
	return k.t.total;
}

/* The assignment minimising time + lambda x memory into state[] (a state
 * per layer); its time and memory in *time and *mem (evaluated), and the
 * least time + lambda x memory as the tables found it in *objective (the
 * two agree: tests).  false when no assignment can run.  Over the chain
 * of blocks, each block's table. */
static bool
solve(const Ctx *c, Chain *ch, double lambda, int *state, double *time, double *mem,
      double *objective)
{
	int nb = ch->nb, S = c->nst, m = 0;
	double *best = xcalloc((size_t)nb * S, sizeof *best),
	       *T = xcalloc((size_t)S * S, sizeof *T);
	int *from = xcalloc((size_t)nb * S, sizeof *from), *src = xcalloc((size_t)nb, sizeof *src);
	bool ok;

	ch->lambda = lambda;
	ch->whole = 0;
	for (int b = 0; b < nb; b++) {
		block_table(c, ch, b, T, 0, 0, NULL);
		for (int k = 0; k < S; k++) {
			double *v = &best[b * S + k];
			*v = INFINITY;
			from[b * S + k] = 0;
			for (int q = 0; q < (b ? S : 1); q++) { /* the input: data */
				double t = (b ? best[(b - 1) * S + q] : 0) + T[q * S + k];
				if (t < *v * (1 - 1e-12))
					*v = t, from[b * S + k] = q;
			}
		}
	}
	for (int q = 1; q < S; q++)
		if (best[(nb - 1) * S + q] < best[(nb - 1) * S + m])
			m = q;
	ok = isfinite(best[(nb - 1) * S + m]);
	*objective = best[(nb - 1) * S + m];
	for (int b = nb - 1; ok && b >= 0; b--) {
		state[ch->end[b]] = m;
		src[b] = from[b * S + m];
		m = src[b];
	}
	for (int b = 0; ok && b < nb; b++)
		block_table(c, ch, b, NULL, src[b], state[ch->end[b]], state);
	if (ok)
		evaluate(c, ch, state, time, mem);
	free(best), free(T), free(from), free(src);
	return ok;
}

/* The degrees (every divisor of p, with its groups) and the states. */
static void
degrees(Ctx *c)
{
	int n = 0;

	for (int64_t d = 1; d <= c->p; d++)
		n += c->p % d == 0;
	c->deg = xcalloc((size_t)n, sizeof *c->deg);
	c->st = xcalloc((size_t)(1 + 3 * (n - 1)), sizeof *c->st);
	c->st[c->nst++] = (State){ PL_DATA, 1 };
	for (int64_t d = 1; d <= c->p; d++) {
		int64_t grid[DIM_COUNT] = { [DIM_DATA] = c->p / d, [DIM_FILTER] = d };
		Degree *dg;
		Mapping map;

		if (c->p % d)
			continue;
		dg = &c->deg[c->ndeg++];
		if (d == c->p)
			grid[DIM_DATA] = 0;
		grid_map(c->an->q.sys, grid, NEST_MODEL_INNER, &map);
		dg->d = d;
		dg->model = map.model;
		if (d > 1)
			for (int m = PL_FILTER; m < PL_MODES; m++)
				if (mode_runs(&c->an->q.impl, (PerLayerMode)m))
					c->st[c->nst++] = (State){ (PerLayerMode)m, d };
	}
}

/* The chain of blocks with its edges and each layer's time and memory in
 * every state; false when there is nothing to split (one GPU, no layer). */
static bool
chain_build(const Graph *g, const Analysis *an, const CostModel *m, Ctx *c, Chain *ch)
{
	int L = g->nlayer, nb = 0, ne = 0, S, *last, *live;

	*c = (Ctx){ .g = g, .an = an, .m = m, .p = an->q.set.gpus,
		    .pc = { .g = g, .an = an, .spatial_split = SPLIT_AUTO, .beat = INFINITY } };
	*ch = (Chain){ 0 };
	if (L == 0 || an->q.set.gpus < 2)
		return false;
	c->B = (double)(an->q.set.global_batch ? an->q.set.global_batch
					       : an->q.set.batch_per_gpu * an->q.set.gpus);
	degrees(c);
	S = c->nst;
	last = xcalloc((size_t)g->ntensor + 1, sizeof *last);
	live = xcalloc((size_t)L + 1, sizeof *live);
	ch->first = xcalloc((size_t)L + 1, sizeof *ch->first);
	ch->end = xcalloc((size_t)L + 1, sizeof *ch->end);
	ch->e0 = xcalloc((size_t)L + 2, sizeof *ch->e0);
	/* the blocks: end where one activation is alive */
	graph_last_use(g, last);
	for (int t = 0; t < g->ntensor; t++)
		if (g->tensor[t].producer >= 0 && g->tensor[t].root == t)
			for (int i = g->tensor[t].producer; i < last[t] && i < L; i++)
				live[i]++;
	for (int i = 0; i < L; i++)
		if (live[i] <= 1 || i == L - 1) {
			ch->first[nb] = nb ? ch->end[nb - 1] + 1 : 0;
			ch->end[nb++] = i;
		}
	ch->nb = nb;
	free(last), free(live);
	/* their edges: every input of a layer, from its producer in the
	 * block or from the block's source */
	for (int i = 0; i < L; i++)
		ne += g->layer[i].nin + 1;
	ch->edge = xcalloc((size_t)ne + 1, sizeof *ch->edge);
	ne = 0;
	for (int b = 0; b < nb; b++) {
		ch->e0[b] = ne;
		for (int i = ch->first[b]; i <= ch->end[b]; i++) {
			/* a layer that reads nothing (a constant) hangs from the
			 * source by an edge that moves nothing */
			if (g->layer[i].nin == 0)
				ch->edge[ne++] = (Edge){ -1, i, 0 };
			for (int k = 0; k < g->layer[i].nin; k++) {
				const Tensor *t = &g->tensor[g->layer[i].in[k]];
				int p = t->producer;
				ch->edge[ne++] = (Edge){ p >= ch->first[b] && p < i ? p : -1, i,
							 (double)t->elems * c->B *
								 elem_bytes(c->an) };
			}
		}
	}
	ch->e0[nb] = ne;
	ch->cost = xcalloc((size_t)L * S, sizeof *ch->cost);
	ch->mem = xcalloc((size_t)L * S, sizeof *ch->mem);
	for (int i = 0; i < L; i++)
		for (int k = 0; k < S; k++) {
			ch->cost[i * S + k] = layer_cost(c, &g->layer[i], c->st[k]);
			ch->mem[i * S + k] = layer_memory(c, &g->layer[i], c->st[k]);
		}
	return true;
}

static void
chain_free(Ctx *c, Chain *ch)
{
	for (int k = 0; k < ch->nmemo; k++)
		free(ch->memo[k]);
	free(ch->first), free(ch->end), free(ch->e0), free(ch->edge), free(ch->cost), free(ch->mem);
	free(c->deg), free(c->st);
}

bool
per_layer_run(const Graph *g, const Analysis *an, const CostModel *m, PerLayer *out)
{
	int L = g->nlayer, *state, *uni, S, best = -1;
	double time, mem, cap, obj, umem[PL_MODES];
	LayerSplit *split;
	Ctx c;
	Chain ch;

	*out = (PerLayer){ 0 };
	if (!m->layer || !chain_build(g, an, m, &c, &ch))
		return true;
	S = c.nst;
	for (int k = 0; k < PL_MODES; k++) /* a mode the implementation lacks: none */
		out->uniform[k] = umem[k] = INFINITY;
	state = xcalloc((size_t)L, sizeof *state);
	uni = xcalloc((size_t)L, sizeof *uni);
	split = xcalloc((size_t)L, sizeof *split);
	cap = an->q.sys->mem - an->q.sys->reserved - (double)kept(an, g).workspace -
	      (double)kept(an, g).transient * c.B / (double)c.p;
	/* the uniform assignments: each mode on all p GPUs (the uniform
	 * strategies), priced as the cost model prices an iteration */
	for (int k = 0; k < S; k++) {
		State st = c.st[k];
		if (st.mode != PL_DATA && st.d != c.p)
			continue;
		for (int i = 0; i < L; i++)
			uni[i] = k;
		evaluate(&c, &ch, uni, &time, &umem[st.mode]);
		if (isfinite(time))
			out->uniform[st.mode] = iteration(&c, &ch, uni, split);
	}
	/* the fastest; if it does not fit, time + lambda x memory for the
	 * least lambda whose assignment fits */
	cap = an->q.sys->mem - an->q.sys->reserved - (double)kept(an, g).workspace -
	      (double)kept(an, g).transient * c.B / (double)c.p;
	if (!solve(&c, &ch, 0, state, &time, &mem, &obj))
		goto freeall;
	if (mem > cap) {
		double lo = 0, hi = 1e-12;
		bool found = false;
		for (int k = 0; k < 40 && !found; k++, hi *= 10) /* up to 1e28 s/byte */
			found = solve(&c, &ch, hi, state, &time, &mem, &obj) && mem <= cap;
		hi /= 10;
		for (int k = 0; found && k < 60; k++) {
			double mid = (lo + hi) / 2;
			if (solve(&c, &ch, mid, state, &time, &mem, &obj) && mem <= cap)
				hi = mid;
			else
				lo = mid;
		}
		/* the least lambda that fits; when nothing fits, the fastest,
		 * marked so */
		solve(&c, &ch, found ? hi : 0, state, &time, &mem, &obj);
		out->limited = found;
	}
	/* the programme chose under its separable prices; the iteration, as
	 * the cost model prices it, is the time, and where a uniform
	 * assignment that fits as well is faster so priced, that one */
	time = iteration(&c, &ch, state, split);
	for (int k = 0; k < PL_MODES; k++)
		if (out->uniform[k] < time && (umem[k] <= cap || mem > cap) &&
		    (best < 0 || out->uniform[k] < out->uniform[best]))
			best = k;
	if (best >= 0) {
		for (int k = 0; k < S; k++)
			if (c.st[k].mode == (PerLayerMode)best &&
			    (best == PL_DATA || c.st[k].d == c.p))
				for (int i = 0; i < L; i++)
					state[i] = k;
		time = out->uniform[best];
		mem = umem[best];
	}
	evaluate(&c, &ch, state, &out->separable, &obj);
	out->time = time;
	out->memory = mem + an->q.sys->mem - cap;
	out->fits = mem <= cap;
	out->mode = arena_array(g->arena, L, sizeof *out->mode);
	out->degree = arena_array(g->arena, L, sizeof *out->degree);
	out->nblocks = ch.nb;
	out->nwhole = ch.whole;
	out->nstates = S;
	for (int i = 0; i < L; i++) {
		out->mode[i] = c.st[state[i]].mode;
		out->degree[i] = c.st[state[i]].d;
		out->count[out->mode[i]]++;
	}
	out->global_batch = c.B;
	out->done = true;
freeall:
	free(state), free(uni), free(split);
	chain_free(&c, &ch);
	return true;
}

/* Every assignment of a state to each layer, for tests of the programme
 * (tests/test_strategy.c): the least time (memory not limited), by
 * enumeration with each edge's moves tabled; INFINITY when none runs, NAN
 * when there are more than 1e7 assignments.  *programme: the least time
 * as the programme's tables have it. */
static double
enumerate(const Ctx *c, const Chain *ch, const double *mv, int *state, int i)
{
	int S = c->nst, L = c->g->nlayer;
	double best = INFINITY;

	if (i == L) {
		double t = 0;
		for (int k = 0; k < L; k++)
			t += ch->cost[k * S + state[k]];
		for (int b = 0; b < ch->nb; b++)
			for (int e = ch->e0[b]; e < ch->e0[b + 1]; e++) {
				int src = b ? state[ch->end[b - 1]] : 0, from = ch->edge[e].from;
				t += mv[(size_t)e * S * S + (from < 0 ? src : state[from]) * S +
					state[ch->edge[e].to]];
			}
		return t;
	}
	for (int s = 0; s < S; s++) {
		double t;
		state[i] = s;
		t = enumerate(c, ch, mv, state, i + 1);
		if (t < best)
			best = t;
	}
	return best;
}

double
per_layer_exhaustive(const Graph *g, const Analysis *an, double *programme)
{
	int ne, *state;
	double *mv, t, n = 1, time, mem;
	Ctx c;
	Chain ch;

	*programme = INFINITY;
	if (!chain_build(g, an, &cost_model_physical, &c, &ch))
		return INFINITY;
	state = xcalloc((size_t)g->nlayer, sizeof *state);
	solve(&c, &ch, 0, state, &time, &mem, programme);
	for (int i = 0; i < g->nlayer; i++)
		n *= c.nst;
	if (n > 1e7) {
		free(state);
		chain_free(&c, &ch);
		return NAN;
	}
	ne = ch.e0[ch.nb];
	mv = xcalloc((size_t)ne * c.nst * c.nst + 1, sizeof *mv);
	for (int e = 0; e < ne; e++)
		moves(&c, &ch, ch.edge[e].bytes, mv + (size_t)e * c.nst * c.nst);
	t = enumerate(&c, &ch, mv, state, 0);
	free(mv), free(state);
	chain_free(&c, &ch);
	return t;
}

void
per_layer_recommend(const Analysis *an, double beat, PerLayer *pl)
{
	double uniform = INFINITY;

	pl->recommended = false;
	if (!pl->done)
		return;
	pl->epoch = pl->global_batch > 0
			    ? pl->time * ceil((double)an->q.set.dataset_size / pl->global_batch)
			    : INFINITY;
	for (int m = 0; m < PL_MODES; m++)
		if (pl->uniform[m] < uniform)
			uniform = pl->uniform[m];
	/* under its own model, more than SIMPLER_WITHIN faster than every
	 * uniform assignment; and so much faster than the strategy
	 * recommended, which may be one the per-layer model has not (a
	 * pipeline), or priced apart (the table's own model, the search's
	 * other settings) */
	pl->recommended = pl->fits && isfinite(uniform) &&
			  pl->time * (1 + SIMPLER_WITHIN) < uniform &&
			  (!(beat > 0) || pl->epoch * (1 + SIMPLER_WITHIN) < beat);
}
