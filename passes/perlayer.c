/* perlayer.c -- per-layer parallelization (--per-layer; docs/model.md,
 * "Per-layer splits"): each block of layers picks its own split of the p
 * GPUs, paying to redistribute the activation between blocks, chosen
 * exactly by dynamic programming.
 *
 * Blocks are the runs of layers between the points where exactly one
 * activation is alive (a residual block, an Inception module, a dense
 * block: the branches of a series-parallel graph stay inside one block),
 * so the graph is a chain of blocks and the dynamic programme over it is
 * exact.  A block runs in one of four modes on all p GPUs:
 *
 *   data     each GPU B/p samples, whole weights; input and output split by
 *            samples (layout B); its weights' share of the gradient
 *            all-reduce
 *   filter   each conv and fc computes 1/p of its output channels on all B
 *            samples (outputs all-gathered, input gradients all-reduced);
 *            the rest replicated; input and output whole (layout R)
 *   channel  the same with input channels (partial outputs all-reduced)
 *   spatial  each GPU 1/p of the rows (halos exchanged, pairwise); input
 *            and output split by rows (layout H); gradient all-reduce
 *
 * and a mode needs what the uniform strategy needs (filters, channels,
 * rows at least p).  Between blocks, a change of layout costs, forward and
 * backward: B or H to R an all-gather each way, R to B or H a slice
 * forward and an all-gather of the gradient backward, B to H (and back)
 * an all-to-all each way.  The input arrives split by samples.  The
 * gradient all-reduce is priced per byte at the whole model's rate
 * (one collective, shared by the blocks that need it); each block adds
 * the optimizer step on the weights its GPUs hold.  Under the same
 * model the uniform assignments are the four uniform strategies, so the
 * result is never worse than the best of them; both are reported.
 *
 * Memory: a GPU holds each block's weights (split layers 1/p under filter
 * and channel) with their gradients and optimizer state, and its kept
 * activations for the samples it sees (B/p under data and spatial, all B
 * under filter and channel, whose outputs are gathered); the sum must fit
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

typedef struct Ctx {
	const Graph *g;
	const Analysis *an;
	int64_t p;
	double B;          /* the global batch */
	Group grp;         /* all p GPUs as one model-parallel group */
	double rate;       /* seconds per byte of gradient all-reduce */
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

/* Layers first..last in mode m: the bytes a GPU holds for them (weights
 * and their state, kept activations). */
static double
block_memory(const Ctx *c, int first, int last, PerLayerMode m)
{
	const Graph *g = c->g;
	double per_w = 2 * g->elem_bytes + optimizer_bytes(c->an->opt), mem = 0;
	double n = m == PL_DATA || m == PL_SPATIAL ? c->B / (double)c->p : c->B;

	for (int i = first; i <= last; i++) {
		const Layer *l = &g->layer[i];
		bool part = (m == PL_FILTER || m == PL_CHANNEL) && splits(l) &&
			    !(m == PL_CHANNEL && first_layer(g, l));
		mem += (double)l->cost.params / (part ? (double)c->p : 1) * per_w +
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

/* Layers first..last in mode m: time, or INFINITY when the mode cannot
 * split them p ways. */
static double
block_time(const Ctx *c, int first, int last, PerLayerMode m)
{
	const Graph *g = c->g;
	double t = 0, w = 0, local = 0, arrays = 0, d = g->elem_bytes, n = c->B;

	for (int i = first; i <= last; i++) {
		const Layer *l = &g->layer[i];
		const Shape *in = &g->tensor[l->in[0]].shape, *out = &g->tensor[l->out[0]].shape;
		double x = (double)g->tensor[l->in[0]].elems * n * d;
		double y = (double)g->tensor[l->out[0]].elems * n * d;
		bool first = first_layer(g, l);
		bool part = (m == PL_FILTER || m == PL_CHANNEL) && splits(l) &&
			    !(m == PL_CHANNEL && first);
		w += (double)l->cost.params;
		local += (double)l->cost.params / (part ? (double)c->p : 1);
		arrays += l->nw;
		switch (m) {
		case PL_DATA:
			t += work(c, l, n / c->p, 1);
			break;
		case PL_FILTER:
		case PL_CHANNEL:
			if (!splits(l) || (m == PL_CHANNEL && first)) {
				t += work(c, l, n, 1); /* replicated */
				break;
			}
			if (l->attr.lead > 0 ||
			    (m == PL_FILTER ? l->attr.filters
					    : op_info[l->op].cls == OPC_CONV ? in->d[0]
									     : in->d[in->rank - 1]) < c->p)
				return INFINITY;
			t += work(c, l, n, 1.0 / c->p);
			if (m == PL_FILTER)
				t += allgather_time(c->an->sys, c->grp, y) +
				     (first ? 0 : allreduce_time(c->an->sys, c->grp, x));
			else
				t += allreduce_time(c->an->sys, c->grp, y) +
				     allgather_time(c->an->sys, c->grp, x);
			break;
		case PL_SPATIAL:
			if (l->attr.lead > 0 || out->rank < 2 || out->d[1] < c->p)
				return INFINITY;
			t += work(c, l, n, 1.0 / c->p);
			if ((op_info[l->op].cls == OPC_CONV || op_info[l->op].cls == OPC_POOL) &&
			    l->attr.kernel[0] / 2 > 0 && in->rank >= 2) {
				double row = x / (double)in->d[1] * (double)(l->attr.kernel[0] / 2);
				double drow = y / (double)out->d[1] * (double)(l->attr.kernel[0] / 2);
				t += (c->p > 2 ? 2 : 1) * (p2p_time(c->an, row, false) +
							   p2p_time(c->an, drow, false));
			}
			break;
		case PL_MODES:
			break;
		}
	}
	/* replicated weights: their gradients all-reduced (data, spatial);
	 * filter and channel see every sample on every GPU */
	if (m == PL_DATA || m == PL_SPATIAL)
		t += c->rate * w * d;
	/* the optimizer step on this GPU's weights (split layers: 1/p) */
	return t + update_time(c->an, local, arrays);
}

/* Redistributing `bytes` (the whole activation) from layout a to b,
 * forward and backward. */
static double
move(const Ctx *c, int a, int b, double bytes)
{
	const System *s = c->an->sys;

	if (a == b)
		return 0;
	if (b == L_R) /* gather forward, reduce-scatter the gradient backward */
		return 2 * allgather_time(s, c->grp, bytes);
	if (a == L_R) /* slice forward, gather the gradient backward */
		return allgather_time(s, c->grp, bytes);
	return 2 * alltoall_time(s, c->grp, bytes); /* B <-> H */
}

/* The chain of nb blocks (block b ends at layer end[b]) with each mode's
 * time and memory, for the dynamic programme. */
typedef struct Chain {
	int nb;
	const int *end;
	double (*cost)[PL_MODES], (*mem)[PL_MODES];
	double *in;            /* bytes of the activation entering block b */
} Chain;

/* The assignment minimising time + lambda x memory into pick[] (a mode
 * per block); its time and memory in *time and *mem.  false when no
 * assignment can run. */
static bool
solve(const Ctx *c, const Chain *ch, double lambda, int *pick, double *time, double *mem)
{
	int nb = ch->nb;
	double (*best)[PL_MODES] = xcalloc((size_t)nb, sizeof *best);
	int (*from)[PL_MODES] = xcalloc((size_t)nb, sizeof *from);
	int m = 0;
	bool ok;

	for (int b = 0; b < nb; b++)
		for (int k = 0; k < PL_MODES; k++) {
			double own = ch->cost[b][k] + lambda * ch->mem[b][k];
			best[b][k] = INFINITY;
			from[b][k] = -1;
			if (!isfinite(ch->cost[b][k]))
				continue;
			if (b == 0) {
				best[b][k] = own + move(c, L_B, layout_of[k], ch->in[0]);
				continue;
			}
			for (int q = 0; q < PL_MODES; q++) {
				double v = best[b - 1][q] + move(c, layout_of[q], layout_of[k], ch->in[b]) +
					   own;
				if (v < best[b][k] * (1 - 1e-12))
					best[b][k] = v, from[b][k] = q;
			}
		}
	for (int q = 1; q < PL_MODES; q++)
		if (best[nb - 1][q] < best[nb - 1][m])
			m = q;
	ok = isfinite(best[nb - 1][m]);
	*time = *mem = 0;
	for (int b = nb - 1; ok && b >= 0; b--) {
		pick[b] = m;
		m = b ? from[b][m] : m;
	}
	for (int b = 0; ok && b < nb; b++) {
		*time += ch->cost[b][pick[b]] +
			 move(c, b ? layout_of[pick[b - 1]] : L_B, layout_of[pick[b]], ch->in[b]);
		*mem += ch->mem[b][pick[b]];
	}
	free(best), free(from);
	return ok;
}

bool
per_layer_run(const Graph *g, const Analysis *an, PerLayer *out)
{
	int L = g->nlayer, nb = 0, *end = xcalloc((size_t)L + 1, sizeof *end);
	int *last = xcalloc((size_t)g->ntensor + 1, sizeof *last);
	int *live = xcalloc((size_t)L + 1, sizeof *live), *pick = NULL;
	double W = (double)g->total.params * g->elem_bytes, time, mem, cap;
	int64_t grid[DIM_COUNT] = { [DIM_FILTER] = an->gpus };
	Mapping map;
	Ctx c = { g, an, an->gpus, 0, { 0 }, 0 };
	Chain ch = { 0 };

	*out = (PerLayer){ 0 };
	if (L == 0 || an->gpus < 2)
		goto done;
	grid_map(an->sys, grid, NEST_MODEL_INNER, &map);
	c.grp = map.model;
	c.B = (double)(an->global_batch ? an->global_batch : an->batch_per_gpu * an->gpus);
	c.rate = W > 0 ? allreduce_time(an->sys, (Group){ an->gpus, map.per_node, 1 }, W) / W : 0;
	/* the blocks: end where one activation is alive */
	graph_last_use(g, last);
	for (int t = 0; t < g->ntensor; t++)
		if (g->tensor[t].producer >= 0 && g->tensor[t].root == t)
			for (int i = g->tensor[t].producer; i < last[t] && i < L; i++)
				live[i]++;
	for (int i = 0; i < L; i++)
		if (live[i] <= 1 || i == L - 1)
			end[nb++] = i;
	ch = (Chain){ nb, end, xcalloc((size_t)nb, sizeof *ch.cost),
		      xcalloc((size_t)nb, sizeof *ch.mem), xcalloc((size_t)nb, sizeof *ch.in) };
	pick = xcalloc((size_t)nb, sizeof *pick);
	for (int b = 0, first = 0; b < nb; first = end[b] + 1, b++) {
		int prev = b ? end[b - 1] : -1;
		ch.in[b] = (prev < 0 ? (g->ninput ? (double)g->tensor[g->input[0]].elems : 0)
				     : (double)g->tensor[g->layer[prev].out[0]].elems) *
			   c.B * g->elem_bytes;
		for (int m = 0; m < PL_MODES; m++) {
			ch.cost[b][m] = block_time(&c, first, end[b], (PerLayerMode)m);
			ch.mem[b][m] = block_memory(&c, first, end[b], (PerLayerMode)m);
		}
	}
	/* the uniform assignments under the same model */
	for (int m = 0; m < PL_MODES; m++) {
		double u = move(&c, L_B, layout_of[m], ch.in[0]);
		for (int b = 0; b < nb && isfinite(u); b++)
			u += ch.cost[b][m];
		out->uniform[m] = u;
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
	out->nblocks = nb;
	for (int b = 0, first = 0; b < nb; first = end[b] + 1, b++)
		for (int i = first; i <= end[b]; i++) {
			out->mode[i] = (PerLayerMode)pick[b];
			out->count[pick[b]]++;
		}
	out->global_batch = c.B;
	out->done = true;
freeall:
	free(ch.cost), free(ch.mem), free(ch.in), free(pick);
done:
	free(end), free(last), free(live);
	return true;
}

const char *const per_layer_mode_name[PL_MODES] = { "data", "filter", "channel", "spatial" };
