/* tensor.c -- Megatron-LM's tensor parallelism on the layers of any graph
 * (docs/model.md, "tensor, dt and dpt"): which layers a tensor-parallel group of t
 * GPUs splits, which it runs whole, and the collectives between them.
 *
 * Megatron (Shoeybi et al. 2019, section 3; Narayanan et al., SC'21,
 * section 2.3; megatron/core/tensor_parallel/layers.py) splits a
 * transformer layer's linear layers in pairs: the first column-parallel
 * (its output features, the heads of Q, K and V, the MLP's ffn), the
 * second row-parallel (its input features), so that everything between
 * them -- the attention core over its heads, GELU or SwiGLU -- runs on
 * 1/t of the features with nothing exchanged, and each pair costs one
 * all-reduce forward (the row-parallel layer's partial output: its "g")
 * and one backward (the gradient of the column-parallel layer's input:
 * its "f").  The embedding table and the output layer split the
 * vocabulary (VocabParallelEmbedding: the lookup's partial rows
 * all-reduced; the logits' cross-entropy over the split vocabulary:
 * three all-reduces of a row per token, cross_entropy.py).  Layer norms,
 * dropouts and the residual adds run whole on every GPU of the group.
 *
 * That is found here from the layers, not from names: each tensor is
 * either whole on every GPU or split along one axis, and each layer's
 * rule follows from its op --
 *
 *   fc        whole input: column-parallel (its output split along its
 *             last axis), but one reading only graph inputs (a learned
 *             position table's lookup) stays whole; input split along the
 *             features it contracts: row-parallel, the output all-reduced
 *             and whole
 *   matmul    of two activations: split along a batch axis (the heads)
 *             or a free one stays split; both split along the axis they
 *             contract: partial, all-reduced
 *   views, transposes, slices, expansions, element-wise layers,
 *   concatenations, softmax and norms over other axes: the split follows
 *             the axis (a reshape keeps it where the dimensions before it
 *             hold as many elements)
 *   softmax   over the split axis: the vocabulary-parallel cross-entropy
 *   gather    from a trained table by token ids: the vocabulary-parallel
 *             embedding
 *   anything else reading a split tensor: all-gathered first, run whole.
 *
 * A whole tensor that a splitting layer reads has a gradient that is the
 * sum of the group's parts: one all-reduce in backward, once per tensor
 * however many layers read it (Q, K and V read one layer norm).  Sequence
 * parallelism (Korthikanti et al. 2022, section 4.2.2) runs the whole
 * layers on 1/t of the sequence and turns each all-reduce into a
 * reduce-scatter and an all-gather of the same bytes. */
#include "model/reuse.h"

#include <stdlib.h>
#include <string.h>

enum { WHOLE = -1 };

/* The axis of a shape of rank r, negative counting from the end. */
static int
norm_axis(int a, int r)
{
	return a < 0 ? a + r : a;
}

/* Where split axis ax of a tensor of shape x lies in its reshape y: the
 * axis of y with as many elements before it as ax has in x, not of one
 * (an added axis of 1 is skipped), whose extent the split one divides or
 * is divided by; WHOLE when there is none. */
static int
reshaped_axis(const Shape *x, int ax, const Shape *y)
{
	int64_t before = 1, at = 1;

	for (int i = 0; i < ax; i++)
		before *= x->d[i];
	for (int j = 0; j < y->rank; j++) {
		if (at == before && y->d[j] > 1 &&
		    (y->d[j] % x->d[ax] == 0 || x->d[ax] % y->d[j] == 0))
			return j;
		at *= y->d[j];
		if (at > before)
			break;
	}
	return WHOLE;
}

/* The table being built: each tensor's axis, and the layers'. */
typedef struct Build {
	const Graph *g;
	const Transformer *tf;
	signed char *ax;      /* per tensor: its split axis, WHOLE */
	unsigned char *tp;    /* per layer: TP_* */
	int *bwd;             /* per layer: the tensor whose gradient it reduces */
	int64_t *gather;      /* per layer: elements all-gathered before it */
	int64_t *rows;        /* per layer: a cross-entropy's rows */
	bool *reduced;        /* per tensor: its gradient's all-reduce placed */
	int64_t div;          /* t must divide it (0: nothing split yet) */
	int64_t most;         /* the fewest elements along a split axis */
} Build;

static int64_t
gcd64(int64_t a, int64_t b)
{
	while (b) {
		int64_t r = a % b;
		a = b, b = r;
	}
	return a;
}

/* Tensor t split along axis `axis`: its extent bounds t, and divides it
 * unless it is the vocabulary (Megatron pads that to a multiple of 128 t:
 * --make-vocab-size-divisible-by). */
static void
split_at(Build *b, int t, int axis)
{
	int64_t e = b->g->tensor[t].shape.d[axis];

	b->ax[t] = (signed char)axis;
	if (e < b->most)
		b->most = e;
	if (e != b->tf->vocab)
		b->div = b->div ? gcd64(b->div, e) : e;
}

/* Whether tensor t is an activation with a gradient (not a graph input
 * nor made of constants). */
static bool
has_grad(const Graph *g, int t)
{
	return g->tensor[t].producer >= 0 && !g->tensor[t].konst;
}

/* Layer i reads whole tensor t into split work: the gradient of t is the
 * sum of the group's parts, all-reduced once (at its first such reader). */
static void
reduce_grad(Build *b, int i, int t)
{
	if (b->ax[t] != WHOLE || !has_grad(b->g, t) || b->reduced[t])
		return;
	b->reduced[t] = true;
	if (b->bwd[i] < 0)
		b->bwd[i] = t;
}

/* Layer i reads its split inputs whole: each all-gathered first. */
static void
gather_all(Build *b, int i)
{
	const Layer *l = &b->g->layer[i];

	for (int j = 0; j < l->nin; j++)
		if (b->ax[l->in[j]] != WHOLE)
			b->gather[i] += b->g->tensor[l->in[j]].elems;
}

/* The output of layer i split along `axis` (its work split), every whole
 * activation input's gradient then a partial sum. */
static void
split_out(Build *b, int i, int axis)
{
	const Layer *l = &b->g->layer[i];

	b->tp[i] |= TP_SPLIT;
	split_at(b, l->out[0], axis);
	for (int j = 0; j < l->nin; j++)
		reduce_grad(b, i, l->in[j]);
}

static void
fc(Build *b, int i)
{
	const Layer *l = &b->g->layer[i];
	const Shape *x = &b->g->tensor[l->in[0]].shape, *y = &b->g->tensor[l->out[0]].shape;
	int a = b->ax[l->in[0]];

	if (a == WHOLE) {
		/* a layer of graph inputs only (ODL's fc(pos, h): a learned
		 * position table) stays whole, as Megatron's position
		 * embedding does */
		if (!reads_input(b->g, l))
			split_out(b, i, y->rank - 1);
	} else if (a == x->rank - 1) { /* row-parallel: partial sums */
		b->tp[i] |= TP_SPLIT | TP_REDUCE | TP_ROWPAR;
	} else { /* rows split: each GPU its rows, the weights whole */
		b->tp[i] |= TP_SPLIT | TP_WHOLE_W;
		b->ax[l->out[0]] = (signed char)a;
	}
}

static void
matmul(Build *b, int i)
{
	const Graph *g = b->g;
	const Layer *l = &g->layer[i];
	const Shape *A = &g->tensor[l->in[0]].shape, *B = &g->tensor[l->in[1]].shape;
	int ro = g->tensor[l->out[0]].shape.rank, a = b->ax[l->in[0]], c = b->ax[l->in[1]];
	int oa = WHOLE, oc = WHOLE;

	if (a == WHOLE && c == WHOLE)
		return;
	/* where each input's split axis lies in the output: A's batch axes
	 * and rows, B's batch axes and columns; what they contract, -2 */
	if (a != WHOLE)
		oa = a == A->rank - 1 ? -2 : a + (ro - A->rank);
	if (c != WHOLE)
		oc = c == B->rank - 2 ? -2 : c == B->rank - 1 ? ro - 1 : c + (ro - B->rank);
	if (oa == -2 && oc == -2) { /* both contract their parts: partial */
		b->tp[i] |= TP_SPLIT | TP_REDUCE;
		return;
	}
	if (oa >= 0 && (c == WHOLE || oc == oa || (oc >= 0 && oc < ro - 2 && oa == oc))) {
		split_out(b, i, oa);
		return;
	}
	if (oc >= 0 && a == WHOLE && (oc == ro - 1 || oc < ro - 2)) {
		split_out(b, i, oc);
		return;
	}
	gather_all(b, i);
}

/* A layer whose output keeps its one split input's axis, mapped through
 * its op (views, transposes, element-wise, slices, expansions,
 * concatenations, norms, softmax, reductions). */
static void
follow(Build *b, int i)
{
	const Graph *g = b->g;
	const Layer *l = &g->layer[i];
	const Shape *y = &g->tensor[l->out[0]].shape;
	int a = WHOLE, src = -1, out;
	bool clash = false;

	for (int j = 0; j < l->nin; j++) {
		const Shape *x = &g->tensor[l->in[j]].shape;
		int k = b->ax[l->in[j]], m;
		if (k == WHOLE)
			continue;
		/* broadcasting aligns the shapes on the right */
		m = op_info[l->op].cls == OPC_BINARY ? k + (y->rank - x->rank) : k;
		if (a != WHOLE && m != a)
			clash = true;
		a = m, src = l->in[j];
	}
	if (a == WHOLE)
		return;
	if (clash)
		return gather_all(b, i);
	out = a;
	switch (op_info[l->op].cls) {
	case OPC_RESHAPE:
	case OPC_FLATTEN:
		out = reshaped_axis(&g->tensor[src].shape, a, y);
		break;
	case OPC_TRANSPOSE:
		out = WHOLE;
		for (int j = 0; j < y->rank; j++)
			if (l->attr.target->d[j] == a)
				out = j;
		break;
	case OPC_NORM:
		if (l->op == OP_LAYERNORM || l->op == OP_RMSNORM)
			out = a < norm_axis(l->attr.axis, y->rank) ? a : WHOLE;
		else
			out = WHOLE;
		break;
	case OPC_SOFTMAX:
		if (a == norm_axis(l->attr.axis, y->rank)) {
			/* the cross-entropy over the split vocabulary */
			b->tp[i] |= TP_SPLIT | TP_CE;
			b->rows[i] = g->tensor[l->out[0]].elems / y->d[a];
			b->ax[l->out[0]] = (signed char)a;
			return;
		}
		break;
	case OPC_REDUCE: {
		const Shape *r = l->attr.target;
		int gone = 0;
		for (int k = 0; k < (r->rank ? r->rank : 1); k++) {
			int ra = r->rank ? norm_axis((int)r->d[k], g->tensor[src].shape.rank) : a;
			if (ra == a)
				out = WHOLE;
			else if (ra < a)
				gone++;
		}
		if (out != WHOLE && !l->attr.keepdims)
			out -= gone;
		break;
	}
	case OPC_SLICE:
	case OPC_EXPAND:
		out = y->rank >= g->tensor[src].shape.rank
			      ? a + (y->rank - g->tensor[src].shape.rank)
			      : WHOLE;
		break;
	case OPC_UNARY:
	case OPC_BINARY:
	case OPC_CONCAT:
		break;
	default:
		out = WHOLE;
		break;
	}
	if (out == WHOLE || out >= y->rank || y->d[out] < 2)
		return gather_all(b, i);
	b->tp[i] |= TP_SPLIT;
	split_at(b, l->out[0], out);
	for (int j = 1; j < l->nout; j++) /* dropout's mask */
		if (g->tensor[l->out[j]].shape.rank == y->rank)
			b->ax[l->out[j]] = (signed char)out;
	for (int j = 0; j < l->nin; j++)
		reduce_grad(b, i, l->in[j]);
}

/* A gather of rows of a trained table by token ids: the vocabulary-
 * parallel embedding (each GPU looks up its rows, the partial rows
 * all-reduced), its table split. */
static bool
embedding(Build *b, int i)
{
	const Layer *l = &b->g->layer[i];
	int p;

	if (l->op != OP_GATHER || l->nin < 2 || b->ax[l->in[0]] != WHOLE ||
	    (p = b->g->tensor[l->in[0]].producer) < 0 || b->g->layer[p].op != OP_CONST ||
	    b->g->layer[p].cost.params <= 0)
		return false;
	b->tp[p] |= TP_TABLE;
	b->tp[i] |= TP_REDUCE;
	return true;
}

void
tensor_table(const Graph *g, const Transformer *tf, TensorTable *t)
{
	Build b = { .g = g, .tf = tf };
	size_t nl = g->nlayer > 0 ? (size_t)g->nlayer : 1;
	size_t nt = g->ntensor > 0 ? (size_t)g->ntensor : 1;

	t->tp = xcalloc(nl, sizeof *t->tp);
	t->bwd = xcalloc(nl, sizeof *t->bwd);
	t->gather = xcalloc(nl, sizeof *t->gather);
	t->rows = xcalloc(nl, sizeof *t->rows);
	b.tp = t->tp, b.bwd = t->bwd, b.gather = t->gather, b.rows = t->rows;
	b.ax = xcalloc(nt, sizeof *b.ax);
	b.reduced = xcalloc(nt, sizeof *b.reduced);
	b.most = INT64_MAX;
	memset(b.ax, WHOLE, nt);
	for (int i = 0; i < g->nlayer; i++)
		b.bwd[i] = -1;
	for (int i = 0; i < g->nlayer && tf->layers > 0; i++) {
		const Layer *l = &g->layer[i];
		switch (op_info[l->op].cls) {
		case OPC_FC: fc(&b, i); break;
		case OPC_MATMUL:
			if (l->nin == 2)
				matmul(&b, i);
			else
				gather_all(&b, i);
			break;
		case OPC_CONST: break;
		case OPC_GATHER:
			if (!embedding(&b, i))
				gather_all(&b, i);
			break;
		case OPC_RESHAPE:
		case OPC_FLATTEN:
		case OPC_TRANSPOSE:
		case OPC_NORM:
		case OPC_SOFTMAX:
		case OPC_REDUCE:
		case OPC_SLICE:
		case OPC_EXPAND:
		case OPC_UNARY:
		case OPC_BINARY:
		case OPC_CONCAT: follow(&b, i); break;
		default: gather_all(&b, i); break;
		}
		t->nsplit += (t->tp[i] & TP_SPLIT) != 0;
	}
	t->div = b.div;
	t->most = b.most;
	free(b.ax);
	free(b.reduced);
}

void
tensor_table_free(TensorTable *t)
{
	free(t->tp);
	free(t->bwd);
	free(t->gather);
	free(t->rows);
	*t = (TensorTable){ 0 };
}

const char *
tensor_refusal(const TensorTable *t, int64_t ways)
{
	if (t->nsplit == 0)
		return "no layer that Megatron's tensor parallelism splits (no attention with its "
		       "projections)";
	if (ways > t->most)
		return "more GPUs than the fewest heads or features a layer splits";
	if (t->div && t->div % ways != 0)
		return "the heads and the layers' widths do not divide evenly over the tensor-"
		       "parallel GPUs (Megatron-LM divides them evenly)";
	return NULL;
}

double
tensor_params(const TensorTable *t, const LayerTable *tb, int i, double ways)
{
	unsigned r = t->tp[i];

	if (r & TP_ROWPAR) /* the weight's input rows; the bias added whole */
		return split_params_of(tb->params[i], tb->kernel[i], true, ways);
	if ((r & TP_TABLE) || ((r & TP_SPLIT) && !(r & TP_WHOLE_W)))
		return (double)tb->params[i] / ways;
	return (double)tb->params[i];
}

double
tensor_share(const TensorTable *t, int i, double ways, bool sp)
{
	return (t->tp[i] & TP_SPLIT) || sp ? 1 / ways : 1;
}

/* Bytes per element of tensor k as training holds it at the analysis's
 * precision: a 16-bit op's output under autocast at the low width. */
static double
width(const Analysis *an, const Graph *g, int k)
{
	Precision p = an->q.set.prec;
	int q = g->tensor[k].producer;

	return precision_low(p) && q >= 0 && g->layer[q].low ? precision_low(p)
							      : precision_bytes(p);
}

/* One all-reduce (or, with sequence parallelism, its reduce-scatter)
 * and its conjugate all-gather. */
double
tensor_collective(const Analysis *an, const Graph *g, const TensorTable *t, int i, Group grp,
		  double n, bool sp, bool bwd)
{
	const Layer *l = &g->layer[i];
	unsigned r = t->tp[i];
	double out = (double)g->tensor[l->out[0]].elems * n * width(an, g, l->out[0]);
	int k = t->bwd[i];
	double in = k >= 0 ? (double)g->tensor[k].elems * n * width(an, g, k) : 0;
	double v = 0;

	if (grp.size <= 1)
		return 0;
	if (!bwd) {
		/* the row-parallel output (Megatron's g), or its reduce-scatter;
		 * sequence parallel: the column-parallel input's all-gather
		 * (its f) */
		if (r & TP_REDUCE)
			v += sp ? coll_reduce_scatter(an, grp, out)
				: coll_allreduce(an, grp, out);
		if (sp && in > 0)
			v += coll_allgather(an, grp, in);
		if (t->gather[i] > 0)
			v += coll_allgather(an, grp, (double)t->gather[i] * n *
							     precision_bytes(an->q.set.prec));
		/* cross_entropy.py: the rows' maximum, the target's logit and
		 * the sum of exponentials, fp32, each all-reduced */
		if (r & TP_CE)
			v += 3 * coll_allreduce(an, grp, (double)t->rows[i] * n * 4);
		return v;
	}
	if (an->q.set.forward_only)
		return 0;
	if (in > 0) /* the gradient of the whole input (f), or its reduce-scatter */
		v += sp ? coll_reduce_scatter(an, grp, in) : coll_allreduce(an, grp, in);
	if (sp && (r & TP_REDUCE)) /* g's backward: the output gradient gathered */
		v += coll_allgather(an, grp, out);
	return v;
}
