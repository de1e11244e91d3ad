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

/* Bytes per sample kept with segments of k; *last: the first layer of the
 * last segment; with `boundary`, each segment start's live bytes into it
 * and the largest segment's into *largest. */
static double
kept_with(const Graph *g, const int *last_use, int k, int *last, double *boundary, double *largest)
{
	double input = 0, live = 0, seg = 0, most = 0;

	for (int i = 0; i < g->ninput; i++)
		input += (double)g->tensor[g->input[i]].elems * g->elem_bytes;
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
					double b = (double)g->tensor[t].elems * g->elem_bytes;
					live += b;
					if (boundary)
						boundary[i] += b;
				}
		}
		seg += (double)g->layer[i].cost.act_bytes;
	}
	if (seg > most)
		most = seg;
	if (largest)
		*largest = most;
	return input + live + most;
}

void
recompute_selective(const Graph *g, Recompute *r)
{
	bool *core = arena_array(g->arena, (size_t)g->nlayer + 1, sizeof *core);
	double full = 0, freed = 0;

	graph_attention(g, core);
	for (int i = 0; i < g->ninput; i++)
		full += (double)g->tensor[g->input[i]].elems * g->elem_bytes;
	for (int i = 0; i < g->nlayer; i++) {
		full += (double)g->layer[i].cost.act_bytes;
		if (core[i])
			freed += (double)g->layer[i].cost.act_bytes;
	}
	*r = (Recompute){ .k = RECOMPUTE_SELECTIVE, .redo = core,
			  .fraction = full > 0 ? (full - freed) / full : 1 };
}

bool
recompute_plan(const Graph *g, int k, Recompute *r)
{
	int *last_use = xcalloc((size_t)g->ntensor + 1, sizeof *last_use);
	double full = 0, best = -1, *boundary;
	int best_k = 1, last = 0;

	graph_last_use(g, last_use);
	for (int i = 0; i < g->ninput; i++)
		full += (double)g->tensor[g->input[i]].elems * g->elem_bytes;
	for (int i = 0; i < g->nlayer; i++)
		full += (double)g->layer[i].cost.act_bytes;
	if (k > 0) {
		best_k = k < g->nlayer ? k : g->nlayer;
	} else {
		for (int c = 1; c <= g->nlayer; c++) {
			double v = kept_with(g, last_use, c, &last, NULL, NULL);
			if (best < 0 || v < best * (1 - 1e-12))
				best = v, best_k = c;
		}
	}
	*r = (Recompute){ .k = best_k };
	boundary = arena_array(g->arena, (size_t)g->nlayer + 1, sizeof *boundary);
	best = kept_with(g, last_use, best_k, &r->first_kept, boundary, &r->segment);
	r->boundary = boundary;
	free(last_use);
	r->fraction = full > 0 && best < full ? best / full : 1;
	return true;
}
