/* split.c -- the primitives of a layer split over GPUs, shared by the
 * strategies' pricing (physical.c) and the pipeline's stages (pipeline.c):
 * which layers a filter or channel split divides and into how many ways,
 * the parameters a GPU keeps of one, the collectives of a split layer,
 * and a spatial split's limit, halo exchange and gather; docs/model.md,
 * "The strategies". */
#include "model/model.h"

#include <stdlib.h>

bool
split_layer(const Layer *l)
{
	OpClass c = op_info[l->op].cls;

	return c == OPC_CONV || c == OPC_FC;
}

bool
reads_input(const Graph *g, const Layer *l)
{
	for (int i = 0; i < l->nin; i++)
		if (g->tensor[l->in[i]].producer >= 0)
			return false;
	return true;
}

void
beyond_limit(Candidate *k, const char *reason)
{
	k->computable = false;
	k->feasible = false;
	k->reason = reason;
	k->bottleneck = "scaling limit";
}

bool
model_split_layer(const Graph *g, const Layer *l, bool channel, int64_t *ways)
{
	const Shape *in = &g->tensor[l->in[0]].shape;

	if (!split_layer(l) || (channel && reads_input(g, l)))
		return false;
	/* a convolution's channels follow its leading dimensions (ONNX:
	 * frames or windows merged with the batch) */
	*ways = channel ? (op_info[l->op].cls == OPC_CONV ? in->d[l->attr.lead]
							  : in->d[in->rank - 1])
			: l->attr.filters;
	return true;
}

double
split_params(const Layer *l, bool channel, double ways)
{
	return split_params_of(l->cost.params, layer_kernel_params(l), channel, ways);
}

double
layer_split_params(const Graph *g, const Layer *l, LayerSplit s)
{
	int64_t ways;
	bool channel = s.mode == PL_CHANNEL;

	if ((s.mode == PL_FILTER || channel) && model_split_layer(g, l, channel, &ways) &&
	    ways >= s.d)
		return split_params(l, channel, (double)s.d);
	return (double)l->cost.params;
}

double
split_params_of(int64_t params, int64_t kernel, bool channel, double ways)
{
	double k = channel ? (double)kernel : (double)params;

	return k / ways + ((double)params - k);
}

double
split_collective(const Analysis *an, const Graph *g, const Layer *l, Group grp, double n,
		 bool channel)
{
	return split_collective_of(an, g, grp, n, channel, g->tensor[l->in[0]].elems,
				   g->tensor[l->out[0]].elems, reads_input(g, l));
}

double
split_collective_of(const Analysis *an, const Graph *g, Group grp, double n, bool channel,
		    int64_t in, int64_t out, bool reads)
{
	double y = (double)out * n * elem_bytes(an);
	double x = (double)in * n * elem_bytes(an);
	bool first = reads || an->q.set.forward_only; /* no backward collective */

	if (an->q.impl.staged) /* all-gather forward, all-to-all backward */
		return gather_time(an, grp, channel ? x : y) +
		       (first ? 0 : gather_time(an, grp, channel ? y : x));
	if (channel) /* partial outputs summed; input gradients gathered */
		return coll_allreduce(an, grp, y) + (first ? 0 : coll_allgather(an, grp, x));
	/* outputs gathered; input-gradient partial sums reduced */
	return coll_allgather(an, grp, y) + (first ? 0 : coll_allreduce(an, grp, x));
}

/* What spatial_refusal and spatial_limit read of g, kept for its
 * version: whether a layer has dimensions before the channels, and for
 * each layer the fewest rows of the outputs up to it (0 for an output
 * without rows), so that a limit is a binary search, not a walk. */
static struct {
	const Graph *g;
	uint64_t version;
	bool lead;
	int64_t *rows;
	int n;
} spatial;

static void
spatial_rows(const Graph *g)
{
	int64_t fewest = INT64_MAX;

	if (spatial.g == g && spatial.version == g->version)
		return;
	free(spatial.rows);
	spatial.g = g;
	spatial.version = g->version;
	spatial.n = g->nlayer;
	spatial.lead = false;
	spatial.rows = xcalloc(g->nlayer > 0 ? (size_t)g->nlayer : 1, sizeof *spatial.rows);
	for (int i = 0; i < g->nlayer; i++) {
		const Shape *y = &g->tensor[g->layer[i].out[0]].shape;
		int64_t r = y->rank < 2 ? 0 : y->d[1];
		if (r < fewest)
			fewest = r;
		spatial.rows[i] = fewest;
		if (g->layer[i].attr.lead > 0)
			spatial.lead = true;
	}
}

const char *
spatial_refusal(const Graph *g, int64_t ways, int64_t *most)
{
	*most = g->nlayer ? g->tensor[g->layer[0].out[0]].shape.d[1] : 1;
	spatial_rows(g);
	/* rows are the second dimension of [C, H, W]: a model whose layers
	 * have dimensions before the channels (an ONNX file that merges
	 * frames or windows with the batch) has them elsewhere */
	if (spatial.lead) {
		*most = 1;
		return "layers with dimensions before the channels are not split spatially";
	}
	return spatial_limit(g, ways) < 0 ? "more GPUs than rows in the first layer's output"
					  : NULL;
}

int
spatial_limit(const Graph *g, int64_t ways)
{
	int lo = 0, hi;

	spatial_rows(g);
	/* the last layer up to which every output has at least `ways` rows */
	if (g->nlayer == 0 || spatial.rows[0] < ways)
		return -1;
	hi = g->nlayer - 1;
	while (lo < hi) {
		int mid = lo + (hi - lo + 1) / 2;
		if (spatial.rows[mid] >= ways)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* The rows a strip of layer l (a conv or pooling split by rows) needs from
 * the neighbour above and the one below: forward, of its input; backward,
 * of its output gradient (docs/model.md, "spatial").  Exact strips (a
 * strip of outputs [a, b) owning inputs [aS, bS)): forward P rows above
 * and K' - S - P below, K' the dilated kernel; backward the output rows
 * whose windows reach its inputs, floor((K' - 1 - P) / S) above and
 * floor((P - 1) / S) + 1 below (none without padding).  A 3x3 stride-1
 * conv: 1 and 1 each way; a 2x2 stride-2 pooling: none.  chainermnx
 * (Implementation.halo_rows) exchanges floor(K/2) rows each way before
 * every split conv and pooling, and the output gradient's of its convs
 * only (its pooling exchange crops the gradient: pooling_halo_exchange.py).
 * A layer whose implemented model calls no exchange (Attr.no_halo: ODL
 * halo_forward=false, halo_backward=false) exchanges nothing in that pass.
 * false when nothing is exchanged. */
/* Layer l's kernel on the split axis, dilated. */
int64_t
dilated_kernel(const Layer *l)
{
	return (l->attr.dilation[0] > 0 ? l->attr.dilation[0] : 1) * (l->attr.kernel[0] - 1) + 1;
}

static bool
halo_rows(const Analysis *an, const Layer *l, bool bwd, int64_t *up, int64_t *down)
{
	OpClass c = op_info[l->op].cls;
	int64_t K = dilated_kernel(l), S = l->attr.stride[0], P = l->attr.pad[0];
	bool transposed = c == OPC_CONV && l->op != OP_CONV;

	if ((c != OPC_CONV && c != OPC_POOL) || l->attr.no_halo[bwd])
		return false;
	if (S < 1)
		S = c == OPC_POOL ? l->attr.kernel[0] : 1;
	if (an->q.impl.halo_rows || transposed) {
		/* chainermnx, and transposed convolutions: floor(K/2) a side */
		*up = *down = bwd && c == OPC_POOL && an->q.impl.halo_rows ? 0 : K / 2;
	} else if (!bwd) {
		*up = P;
		*down = K - S - P > 0 ? K - S - P : 0;
	} else {
		*up = K - 1 - P > 0 ? (K - 1 - P) / S : 0;
		*down = P > 0 ? (P - 1) / S + 1 : 0;
	}
	return *up + *down > 0;
}

/* One row (the split axis's) of layer l's input, or of its output
 * (gradient), for n samples, in bytes; 0 without rows. */
static double
row_bytes(const Analysis *an, const Graph *g, const Layer *l, double n, bool out)
{
	const Shape *s = &g->tensor[out ? l->out[0] : l->in[0]].shape;
	double row = 1;

	if (s->rank < 2)
		return 0;
	for (int i = 0; i < s->rank; i++)
		if (i != 1)
			row *= (double)s->d[i];
	return row * n * elem_bytes(an);
}

/* Halo exchange of one layer, forward and backward.  Pairwise: a strip
 * with neighbours on both sides sends to each, one after the other, while
 * the others do the same (the paper's 2 alpha per layer and pass); two
 * strips send to each other at once.  Chain (blocking sends r -> r+1,
 * then r -> r-1): the ways - 1 sends of each direction wait for one
 * another. */
double
halo_time(const Analysis *an, const Graph *g, const Layer *l, double n, int64_t ways,
	  bool across)
{
	double t = 0;

	if (ways <= 1)
		return 0;
	for (int bwd = 0; bwd < (an->q.set.forward_only ? 1 : 2); bwd++) {
		int64_t up, down;
		double row = row_bytes(an, g, l, n, bwd), tu, td;
		if (row <= 0 || !halo_rows(an, l, bwd, &up, &down))
			continue;
		tu = up ? p2p_time(an, (double)up * row, across) : 0;
		td = down ? p2p_time(an, (double)down * row, across) : 0;
		t += an->q.impl.chain ? (double)(ways - 1) * (tu + td)
		     : ways > 2	    ? tu + td
				    : (tu > td ? tu : td);
	}
	return t;
}

double
spatial_gather(const Analysis *an, const Graph *g, int split, double n, Group grp)
{
	return (an->q.set.forward_only ? 1 : 2) *
	       gather_time(an, grp, (double)g->tensor[g->layer[split].out[0]].elems * n *
					    elem_bytes(an));
}
