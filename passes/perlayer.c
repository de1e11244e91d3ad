/* perlayer.c -- per-layer parallelization (--per-layer; docs/model.md,
 * "Per-layer splits"): each block of layers picks its own split of the p
 * GPUs, paying to redistribute the activation between blocks, chosen
 * exactly by dynamic programming.
 *
 * Blocks are the runs of layers between the points where exactly one
 * activation is alive (a residual block, an Inception module, a dense
 * block: the branches of a series-parallel graph stay inside one block),
 * so the graph is a chain of blocks and the dynamic programme over it is
 * exact.  A block runs in one of four modes, split over d GPUs (d any
 * divisor of p from 2 to p; data: d = 1) with p / d groups of them
 * sharing the samples (the hybrid of data and that split):
 *
 *   data     each GPU B/p samples, whole weights; input and output split by
 *            samples (layout B); its weights' share of the gradient
 *            all-reduce over all p
 *   filter   a group's B d/p samples on each of its d GPUs, each conv and
 *            fc computing 1/d of its output channels (outputs all-gathered,
 *            input gradients all-reduced in the group); the rest
 *            replicated; input and output whole in the group (layout R);
 *            the group's weights all-reduced over the p/d groups
 *   channel  the same with input channels (partial outputs all-reduced)
 *   spatial  each GPU 1/d of the rows of its group's samples (halos
 *            exchanged, pairwise); input and output split by rows
 *            (layout H); gradient all-reduce over all p
 *
 * and a mode needs what the uniform strategy needs (filters, channels,
 * rows at least d; a sample per group).  Between blocks of one degree (or
 * from or to data), a change of layout costs, forward and backward, in
 * the group of d and on its B d/p samples: B or H to R an all-gather each
 * way, R to B or H a slice forward and an all-gather of the gradient
 * backward, B to H (and back) an all-to-all each way; between two
 * degrees the activation goes through B.  The input arrives split by
 * samples.  The gradient all-reduce is priced per byte at its group's
 * rate for the whole model (one collective, shared by the blocks that
 * need it); each block adds the optimizer step on the weights its GPUs
 * hold.  Under the same model the uniform assignments (d = p) are the
 * four uniform strategies, so the result is never worse than the best of
 * them; both are reported.
 *
 * Memory: a GPU holds each block's weights (split layers 1/d under filter
 * and channel) with their gradients and optimizer state, and its kept
 * activations for the samples it sees (B/p under data and spatial, its
 * group's B d/p under filter and channel, whose outputs are gathered);
 * the sum must fit
 * what the GPU leaves after the reserve, workspace and backward peak.
 * When the fastest assignment does not, the programme minimises time +
 * lambda x memory instead, lambda found by bisection as the least that
 * fits (Lagrangian relaxation: the assignment fits, and is the fastest of
 * those the relaxation can reach, not always the fastest that fits). */
#include "passes/model.h"
#include "passes/passes.h"

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

/* What the GPUs of a degree share: its groups and gradient rate. */
typedef struct Degree {
	int64_t d;
	Group model;       /* the d GPUs of a group, consecutive ranks */
	double rate;       /* seconds per byte of gradient all-reduce over
	                      the p / d groups (data: over all p) */
} Degree;

typedef struct Ctx {
	const Graph *g;
	const Analysis *an;
	int64_t p;
	double B;          /* the global batch */
	Degree *deg;       /* every divisor of p, ascending: deg[0].d = 1 */
	int ndeg;
	State *st;         /* data, then each split mode at each d >= 2 */
	int nst;
	double all_rate;   /* seconds per byte of all-reduce over all p */
} Ctx;


static bool
splits(const Layer *l)
{
	OpClass c = op_info[l->op].cls;

	return c == OPC_CONV || c == OPC_FC;
}

static bool
first_layer(const Graph *g, const Layer *l)
{
	for (int i = 0; i < l->nin; i++)
		if (g->tensor[l->in[i]].producer >= 0)
			return false;
	return true;
}

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

/* Layers first..last in state s: the bytes a GPU holds for them (weights
 * and their state, kept activations). */
static double
block_memory(const Ctx *c, int first, int last, State s)
{
	const Graph *g = c->g;
	double per_w = 2 * g->elem_bytes + optimizer_bytes(c->an->opt), mem = 0;
	double n = s.mode == PL_DATA || s.mode == PL_SPATIAL ? c->B / (double)c->p
							     : group_samples(c, s);

	for (int i = first; i <= last; i++) {
		const Layer *l = &g->layer[i];
		bool part = (s.mode == PL_FILTER || s.mode == PL_CHANNEL) && splits(l) &&
			    !(s.mode == PL_CHANNEL && first_layer(g, l));
		mem += (double)l->cost.params / (part ? (double)s.d : 1) * per_w +
		       (double)l->cost.act_bytes * n;
	}
	return mem;
}

/* Forward + backward of layer l on n samples at a share. */
static double
work(const Ctx *c, const Layer *l, double n, double share)
{
	return layer_time(c->an, c->g, l, n, share, false) + layer_time(c->an, c->g, l, n, share, true);
}

/* Layers first..last in state s: time, or INFINITY when the mode cannot
 * split them d ways or a group would have no sample. */
static double
block_time(const Ctx *c, int first, int last, State s)
{
	const Graph *g = c->g;
	const Degree *dg = degree(c, s.d);
	double t = 0, w = 0, local = 0, arrays = 0, d = g->elem_bytes, n = group_samples(c, s);
	double k = (double)s.d;

	if (n < 1)
		return INFINITY;
	for (int i = first; i <= last; i++) {
		const Layer *l = &g->layer[i];
		const Shape *in = &g->tensor[l->in[0]].shape, *out = &g->tensor[l->out[0]].shape;
		double x = (double)g->tensor[l->in[0]].elems * n * d;
		double y = (double)g->tensor[l->out[0]].elems * n * d;
		bool first = first_layer(g, l);
		bool part = (s.mode == PL_FILTER || s.mode == PL_CHANNEL) && splits(l) &&
			    !(s.mode == PL_CHANNEL && first);
		w += (double)l->cost.params;
		local += (double)l->cost.params / (part ? k : 1);
		arrays += l->nw;
		switch (s.mode) {
		case PL_DATA:
			t += work(c, l, n, 1);
			break;
		case PL_FILTER:
		case PL_CHANNEL:
			if (!part) {
				t += work(c, l, n, 1); /* replicated in the group */
				break;
			}
			if (l->attr.lead > 0 ||
			    (s.mode == PL_FILTER ? l->attr.filters
						 : op_info[l->op].cls == OPC_CONV ? in->d[0]
										  : in->d[in->rank - 1]) < s.d)
				return INFINITY;
			t += work(c, l, n, 1 / k);
			if (s.mode == PL_FILTER)
				t += allgather_time(c->an->sys, dg->model, y) +
				     (first ? 0 : allreduce_time(c->an->sys, dg->model, x));
			else
				t += allreduce_time(c->an->sys, dg->model, y) +
				     allgather_time(c->an->sys, dg->model, x);
			break;
		case PL_SPATIAL:
			if (l->attr.lead > 0 || out->rank < 2 || out->d[1] < s.d)
				return INFINITY;
			t += work(c, l, n, 1 / k);
			if ((op_info[l->op].cls == OPC_CONV || op_info[l->op].cls == OPC_POOL) &&
			    l->attr.kernel[0] / 2 > 0 && in->rank >= 2) {
				double row = x / (double)in->d[1] * (double)(l->attr.kernel[0] / 2);
				double drow = y / (double)out->d[1] * (double)(l->attr.kernel[0] / 2);
				t += (s.d > 2 ? 2 : 1) * (p2p_time(c->an, row, false) +
							  p2p_time(c->an, drow, false));
			}
			break;
		case PL_MODES:
			break;
		}
	}
	/* gradients: data and spatial hold whole weights, all-reduced over
	 * all p GPUs; filter and channel hold a group's share (split layers
	 * 1/d), all-reduced over the p / d groups (none when d = p) */
	if (s.mode == PL_DATA || s.mode == PL_SPATIAL)
		t += c->all_rate * w * d;
	else
		t += dg->rate * local * d;
	/* the optimizer step on this GPU's weights (split layers: 1/d) */
	return t + update_time(c->an, local, arrays);
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
	const System *s = c->an->sys;
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
		return 2 * allgather_time(s, grp, share);
	if (la == L_R)
		return allgather_time(s, grp, share);
	return 2 * alltoall_time(s, grp, share); /* B <-> H */
}

/* The chain of nb blocks (block b ends at layer end[b]) with each state's
 * time and memory, for the dynamic programme. */
typedef struct Chain {
	int nb;
	const int *end;
	double *cost, *mem;    /* [b * nst + s] */
	double *in;            /* bytes of the activation entering block b */
} Chain;

/* The assignment minimising time + lambda x memory into pick[] (a state
 * per block); its time and memory in *time and *mem.  false when no
 * assignment can run. */
static bool
solve(const Ctx *c, const Chain *ch, double lambda, int *pick, double *time, double *mem)
{
	int nb = ch->nb, S = c->nst, m = 0;
	double *best = xcalloc((size_t)nb * S, sizeof *best);
	int *from = xcalloc((size_t)nb * S, sizeof *from);
	const State data = { PL_DATA, 1 };
	bool ok;

	for (int b = 0; b < nb; b++)
		for (int k = 0; k < S; k++) {
			double own = ch->cost[b * S + k] + lambda * ch->mem[b * S + k];
			double *v = &best[b * S + k];
			*v = INFINITY;
			from[b * S + k] = -1;
			if (!isfinite(ch->cost[b * S + k]))
				continue;
			if (b == 0) {
				*v = own + move(c, data, c->st[k], ch->in[0]);
				continue;
			}
			for (int q = 0; q < S; q++) {
				double t = best[(b - 1) * S + q] +
					   move(c, c->st[q], c->st[k], ch->in[b]) + own;
				if (t < *v * (1 - 1e-12))
					*v = t, from[b * S + k] = q;
			}
		}
	for (int q = 1; q < S; q++)
		if (best[(nb - 1) * S + q] < best[(nb - 1) * S + m])
			m = q;
	ok = isfinite(best[(nb - 1) * S + m]);
	*time = *mem = 0;
	for (int b = nb - 1; ok && b >= 0; b--) {
		pick[b] = m;
		m = b ? from[b * S + m] : m;
	}
	for (int b = 0; ok && b < nb; b++) {
		*time += ch->cost[b * S + pick[b]] +
			 move(c, b ? c->st[pick[b - 1]] : data, c->st[pick[b]], ch->in[b]);
		*mem += ch->mem[b * S + pick[b]];
	}
	free(best), free(from);
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
		double W = (double)c->g->total.params * c->g->elem_bytes;
		Degree *dg;
		Mapping map;

		if (c->p % d)
			continue;
		dg = &c->deg[c->ndeg++];
		if (d == c->p)
			grid[DIM_DATA] = 0;
		grid_map(c->an->sys, grid, NEST_MODEL_INNER, &map);
		dg->d = d;
		dg->model = map.model;
		dg->rate = W > 0 ? allreduce_time(c->an->sys, d == 1 ? (Group){ c->p, map.per_node, 1 }
								: map.grad, W) / W
				 : 0;
		if (d == 1)
			c->all_rate = dg->rate;
		else
			for (int m = PL_FILTER; m < PL_MODES; m++)
				c->st[c->nst++] = (State){ (PerLayerMode)m, d };
	}
}

bool
per_layer_run(const Graph *g, const Analysis *an, PerLayer *out)
{
	int L = g->nlayer, nb = 0, *end = xcalloc((size_t)L + 1, sizeof *end);
	int *last = xcalloc((size_t)g->ntensor + 1, sizeof *last);
	int *live = xcalloc((size_t)L + 1, sizeof *live), *pick = NULL, S;
	double time, mem, cap;
	Ctx c = { g, an, an->gpus, 0, NULL, 0, NULL, 0, 0 };
	Chain ch = { 0 };

	*out = (PerLayer){ 0 };
	if (L == 0 || an->gpus < 2)
		goto done;
	c.B = (double)(an->global_batch ? an->global_batch : an->batch_per_gpu * an->gpus);
	degrees(&c);
	S = c.nst;
	/* the blocks: end where one activation is alive */
	graph_last_use(g, last);
	for (int t = 0; t < g->ntensor; t++)
		if (g->tensor[t].producer >= 0 && g->tensor[t].root == t)
			for (int i = g->tensor[t].producer; i < last[t] && i < L; i++)
				live[i]++;
	for (int i = 0; i < L; i++)
		if (live[i] <= 1 || i == L - 1)
			end[nb++] = i;
	ch = (Chain){ nb, end, xcalloc((size_t)nb * S, sizeof *ch.cost),
		      xcalloc((size_t)nb * S, sizeof *ch.mem), xcalloc((size_t)nb, sizeof *ch.in) };
	pick = xcalloc((size_t)nb, sizeof *pick);
	for (int b = 0, first = 0; b < nb; first = end[b] + 1, b++) {
		int prev = b ? end[b - 1] : -1;
		ch.in[b] = (prev < 0 ? (g->ninput ? (double)g->tensor[g->input[0]].elems : 0)
				     : (double)g->tensor[g->layer[prev].out[0]].elems) *
			   c.B * g->elem_bytes;
		for (int k = 0; k < S; k++) {
			ch.cost[b * S + k] = block_time(&c, first, end[b], c.st[k]);
			ch.mem[b * S + k] = block_memory(&c, first, end[b], c.st[k]);
		}
	}
	/* the uniform assignments under the same model: each mode on all p
	 * GPUs (the uniform strategies) */
	for (int k = 0; k < S; k++) {
		State st = c.st[k];
		double u;
		if (st.mode != PL_DATA && st.d != c.p)
			continue;
		u = move(&c, c.st[0], st, ch.in[0]);
		for (int b = 0; b < nb && isfinite(u); b++)
			u += ch.cost[b * S + k];
		out->uniform[st.mode] = u;
	}
	/* the fastest; if it does not fit, time + lambda x memory for the
	 * least lambda whose assignment fits */
	cap = an->sys->mem - an->sys->reserved - (double)g->total.workspace_bytes -
	      (double)g->total.transient_bytes * c.B / (double)c.p;
	if (!solve(&c, &ch, 0, pick, &time, &mem))
		goto freeall;
	if (mem > cap) {
		double lo = 0, hi = 1e-12;
		bool found = false;
		for (int k = 0; k < 40 && !found; k++, hi *= 10) /* up to 1e28 s/byte */
			found = solve(&c, &ch, hi, pick, &time, &mem) && mem <= cap;
		hi /= 10;
		for (int k = 0; found && k < 60; k++) {
			double mid = (lo + hi) / 2;
			if (solve(&c, &ch, mid, pick, &time, &mem) && mem <= cap)
				hi = mid;
			else
				lo = mid;
		}
		/* the least lambda that fits; when nothing fits, the fastest,
		 * marked so */
		solve(&c, &ch, found ? hi : 0, pick, &time, &mem);
		out->limited = found;
	}
	out->time = time;
	out->memory = mem + an->sys->mem - cap;
	out->fits = mem <= cap;
	out->mode = arena_array(g->arena, L, sizeof *out->mode);
	out->degree = arena_array(g->arena, L, sizeof *out->degree);
	out->nblocks = nb;
	out->nstates = S;
	for (int b = 0, first = 0; b < nb; first = end[b] + 1, b++)
		for (int i = first; i <= end[b]; i++) {
			out->mode[i] = c.st[pick[b]].mode;
			out->degree[i] = c.st[pick[b]].d;
			out->count[out->mode[i]]++;
		}
	out->global_batch = c.B;
	out->done = true;
freeall:
	free(ch.cost), free(ch.mem), free(ch.in), free(pick);
	free(c.deg), free(c.st);
done:
	free(end), free(last), free(live);
	return true;
}

const char *const per_layer_mode_name[PL_MODES] = { "data", "filter", "channel", "spatial" };
