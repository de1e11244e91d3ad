/* recompute.c -- activation recomputation (checkpointing: Chen et al.,
 * "Training Deep Nets with Sublinear Memory Cost", 2016;
 * torch.utils.checkpoint_sequential), docs/model.md "Recomputation".
 *
 * The layers, in their order, split into segments of K.  Forward keeps
 * the input of every segment -- every tensor alive across the boundary:
 * produced before it and used after it, skip connections included -- and
 * frees the rest; backward recomputes one segment's forward at a time and
 * holds its activations while it runs back through it.  Per sample:
 *
 *   kept(K) = input + sum over boundaries b of live(b) + max over segments s of act(s)
 *
 * The last segment is not recomputed (its activations are still there
 * when backward starts), so the extra work is the forward of every layer
 * before it.  `full` takes the K with the least kept(K) (about sqrt(L)
 * for L equal layers).
 *
 * Selective recomputation (Korthikanti et al., "Reducing Activation
 * Recomputation in Large Transformer Models", MLSys'23; Megatron's
 * --recompute-granularity selective) keeps everything but each
 * attention's core -- QK^T, the softmax, dropout: large (heads x
 * sequence^2 per sample) and cheap to compute again -- and recomputes
 * that core's forward in backward.  Its inputs Q, K and V stay kept. */
#include "passes/passes.h"

#include <stdlib.h>

/* What training keeps of g at precision p: its layers' counts (as
 * autograd keeps each operator's tensors), and the bytes of an element. */
typedef struct At {
	const Graph *g;
	const Kept *layer;
	Precision p;
	double elem;
} At;

static At
at(const Graph *g, Precision p)
{
	return (At){ g, graph_keeps(g, p, false)->layer, p, precision_bytes(p) };
}

/* Layer i's kept bytes per sample. */
static double
layer_held(const At *a, int i)
{
	return (double)kept_bytes(&a->layer[i], a->p);
}

/* The graph inputs' bytes per sample. */
static double
inputs(const At *a)
{
	double b = 0;

	for (int i = 0; i < a->g->ninput; i++)
		b += (double)a->g->tensor[a->g->input[i]].elems * a->elem;
	return b;
}

/* Bytes per sample kept with segments of k; *last: the first layer of the
 * last segment; with `boundary`, each segment start's live bytes into it
 * and the largest segment's into *largest. */
static double
kept_with(const At *a, const int *last_use, int k, int *last, double *boundary, double *largest)
{
	const Graph *g = a->g;
	double input = inputs(a), live = 0, seg = 0, most = 0;

	*last = 0;
	for (int i = 0; i < g->nlayer; i++) {
		if (i > 0 && i % k == 0) { /* a boundary before layer i */
			*last = i;
			if (seg > most)
				most = seg;
			seg = 0;
			for (int t = 0; t < g->ntensor; t++)
				if (g->tensor[t].producer >= 0 && g->tensor[t].producer < i &&
				    last_use[t] >= i && g->tensor[t].root == t) {
					double b = (double)g->tensor[t].elems * a->elem;
					live += b;
					if (boundary)
						boundary[i] += b;
				}
		}
		seg += layer_held(a, i);
	}
	if (seg > most)
		most = seg;
	if (largest)
		*largest = most;
	return input + live + most;
}

void
recompute_selective(const Graph *g, Precision p, Recompute *r)
{
	bool *core = arena_array(g->arena, (size_t)g->nlayer + 1, sizeof *core);
	At a = at(g, p);
	double full = inputs(&a), freed = 0;

	graph_attention(g, core);
	for (int i = 0; i < g->nlayer; i++) {
		full += layer_held(&a, i);
		if (core[i])
			freed += layer_held(&a, i);
	}
	*r = (Recompute){ .k = RECOMPUTE_SELECTIVE, .redo = core,
			  .fraction = full > 0 ? (full - freed) / full : 1 };
}

bool
recompute_plan(const Graph *g, int k, Precision p, Recompute *r)
{
	int *last_use = xcalloc((size_t)g->ntensor + 1, sizeof *last_use);
	At a = at(g, p);
	double full = inputs(&a), best = -1, *boundary;
	int best_k = 1, last = 0;

	graph_last_use(g, last_use);
	for (int i = 0; i < g->nlayer; i++)
		full += layer_held(&a, i);
	if (k > 0) {
		best_k = k < g->nlayer ? k : g->nlayer;
	} else {
		for (int c = 1; c <= g->nlayer; c++) {
			double v = kept_with(&a, last_use, c, &last, NULL, NULL);
			if (best < 0 || v < best * (1 - 1e-12))
				best = v, best_k = c;
		}
	}
	*r = (Recompute){ .k = best_k };
	boundary = arena_array(g->arena, (size_t)g->nlayer + 1, sizeof *boundary);
	best = kept_with(&a, last_use, best_k, &r->first_kept, boundary, &r->segment);
	r->boundary = boundary;
	free(last_use);
	r->fraction = full > 0 && best < full ? best / full : 1;
	return true;
}
