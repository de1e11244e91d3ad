/* lower_compute.c -- lowering ONNX nodes that compute: convolutions,
 * pools, norms, matrix products, element-wise and unary operators (the
 * data-movement rules are in lower_shape.c, the table that picks a rule
 * in optable.c).
 *
 * Each rule turns one node into one layer (a few into two: Gemm with a
 * transposed input) and says where the batch goes: ONNX shapes are full,
 * the IR is per sample (values.h, Val).  An op that mixes samples -- a
 * softmax, reduction, slice or concat along the batch axis, a matrix
 * product over it -- is refused with an error naming the node: its
 * per-sample cost would not be one sample's.
 *
 * Constant operands of element-wise ops: an add, sub, mul or div by a
 * constant is a "scale" layer whose attr.target is the constant's
 * per-sample shape; any other constant operand becomes a "const" layer,
 * so every operand is an IR tensor. */
#include "frontend/onnx/lower.h"

#include <inttypes.h>
#include <string.h>

/* ---- convolutions and pools -------------------------------------------- */

/* kernel, strides, pads, dilations of Conv and the pools; x's spatial
 * extents start at full axis sp */
static bool
window_attrs(Onnx *o, Layer *l, const Val *x, int sp, int nsp, const int64_t *wkernel)
{
	Attr *a = &l->attr;
	Window *w = attr_window(o->g, a); /* the layer's own, from here on */
	int64_t v[2 * MAX_SPATIAL + 2];
	int n;

	if (nsp < 1 || nsp > MAX_SPATIAL) {
		NERR(o, "%d spatial dimensions (1 to %d supported)", nsp, MAX_SPATIAL);
		return false;
	}
	a->nspatial = nsp;
	n = attr_ints(o, "kernel_shape", v, MAX_SPATIAL);
	if (n == -2 || (n < 0 && !wkernel) || (n >= 0 && n != nsp)) {
		if (n != -2)
			NERR(o, "missing or wrong 'kernel_shape'");
		return false;
	}
	for (int i = 0; i < nsp; i++) {
		w->kernel[i] = n >= 0 ? v[i] : wkernel[i];
		w->stride[i] = w->dilation[i] = 1;
	}
	for (int k = 0; k < 2; k++) { /* one value per spatial dimension, if any */
		const char *name = k ? "dilations" : "strides";
		if ((n = attr_ints(o, name, v, MAX_SPATIAL)) == -2)
			return false;
		if (n >= 0 && n != nsp) {
			NERR(o, "'%s' has %d values for %d spatial dimensions", name, n, nsp);
			return false;
		}
		if (n >= 0)
			memcpy(k ? w->dilation : w->stride, v, nsp * sizeof *v);
	}
	for (int i = 0; i < nsp; i++)
		if (a->kernel[i] < 1 || a->kernel[i] > MAX_DIM || a->stride[i] < 1 ||
		    a->stride[i] > MAX_DIM || a->dilation[i] < 1 || a->dilation[i] > MAX_DIM) {
			NERR(o, "kernel, stride and dilation must be positive");
			return false;
		}
	n = attr_ints(o, "pads", v, 2 * MAX_SPATIAL);
	if (n == -2 || (n >= 0 && n != 2 * nsp)) {
		if (n != -2)
			NERR(o, "'pads' has %d values for %d spatial dimensions", n, nsp);
		return false;
	}
	for (int i = 0; n > 0 && i < nsp; i++) {
		if (v[i] < 0 || v[nsp + i] < 0 || v[i] > MAX_DIM || v[nsp + i] > MAX_DIM) {
			NERR(o, "negative or huge pads");
			return false;
		}
		w->pad[i] = v[i];
		w->pad[MAX_SPATIAL + i] = v[nsp + i];
	}
	return true;
}

/* The window of layer l, its own since window_attrs: to write. */
static Window *
own_window(Layer *l)
{
	return (Window *)attr_window_of(&l->attr);
}

/* auto_pad SAME_*: pads so the output is ceil(input / stride) (conv,
 * pools) or input * stride (transposed), or the output_shape given. */
static void
same_pads(Onnx *o, Layer *l, const Val *x, int sp, bool tr)
{
	Attr *a = &l->attr;
	Window *w = own_window(l);
	const char *autopad = attr_s(o, "auto_pad", "NOTSET");
	int64_t oshape[MAX_SPATIAL];
	bool given = tr && attr_ints(o, "output_shape", oshape, MAX_SPATIAL) == a->nspatial;
	bool upper = strcmp(autopad, "SAME_UPPER") == 0;

	if (strcmp(autopad, "VALID") == 0)
		memset(w->pad, 0, sizeof w->pad);
	if (!upper && strcmp(autopad, "SAME_LOWER") != 0 && !given)
		return;
	for (int i = 0; i < a->nspatial; i++) {
		int64_t in = x->d[sp + i], eff = a->dilation[i] * (a->kernel[i] - 1) + 1, total;
		if (tr) {
			int64_t out = given ? oshape[i] : in * a->stride[i];
			total = a->stride[i] * (in - 1) + a->out_pad[i] + eff - out;
			if (total < 0) { /* a larger output: the extra is output padding */
				w->out_pad[i] -= total;
				total = 0;
			}
		} else {
			int64_t out = (in + a->stride[i] - 1) / a->stride[i];
			total = (out - 1) * a->stride[i] + eff - in;
			if (total < 0)
				total = 0;
		}
		/* ONNX: SAME_UPPER puts the odd pad at the end (for transposed
		 * convolutions with output_shape, NOTSET does the opposite) */
		w->pad[i] = upper || (tr && !given) ? total / 2 : total - total / 2;
		w->pad[MAX_SPATIAL + i] = total - w->pad[i];
	}
}

static const Val *
weight(Onnx *o, int i, int rank)
{
	const Val *w = i < (int)o->np->n_input ? lookup(o, o->np->input[i]) : NULL;

	/* with --no-batch, a graph input of its own: its shape */
	if (!w)
		NERR(o, "input %d (the weight) is missing", i + 1);
	else if (w->act && w->bax >= 0)
		NERR(o, "input %d (the weight) must be a constant, not an activation", i + 1);
	else if (!w->shaped)
		NERR(o, "input %d (the weight) has no known shape", i + 1);
	else if (rank && w->rank != rank)
		NERR(o, "input %d (the weight) has rank %d, expected %d", i + 1, w->rank, rank);
	else
		return w;
	return NULL;
}

/* Checks that a weight the file declares has the shape the layer implies. */
static bool
check_weight(Onnx *o, const Layer *l, int k, const Val *w)
{
	const Shape *s = &l->w[k].shape;
	bool same = w->rank == s->rank;

	for (int i = 0; same && i < s->rank; i++)
		same = w->d[i] == s->d[i];
	if (!same) {
		char b[96];
		NERR(o, "weight %d does not have the expected shape %s", k + 1,
		     shape_str(s, b, sizeof b));
	}
	return same;
}

/* The leading per-sample dimensions before full axis `chan` (channels),
 * which the batch must not follow. */
static int
lead_of(Onnx *o, const Val *x, int chan)
{
	if (chan < 0 || (x->bax >= chan)) {
		NERR(o, "the batch is not before the channels");
		return -1;
	}
	return ps_axis(x, chan);
}

/* Conv and ConvTranspose (kind OP_CONVT). */
bool
lower_conv(Onnx *o, OpKind kind, const Val **in, int nin)
{
	const Val *x = in[0], *w = weight(o, 1, 0), *b;
	Layer *l;
	bool tr = kind == OP_CONVT;
	int64_t g = attr_i(o->np, "group", 1), v[MAX_SPATIAL];
	int nsp, chan, lead;

	if (!w)
		return false;
	nsp = w->rank - 2, chan = x->rank - 1 - nsp;
	if (w->rank < 3 || chan < 0) {
		NERR(o, "weight rank %d does not fit input rank %d", w->rank, x->rank);
		return false;
	}
	if (g < 1 || g > MAX_DIM) {
		NERR(o, "bad group %" PRId64, g);
		return false;
	}
	if ((lead = lead_of(o, x, chan)) < 0 ||
	    !(l = onnx_layer(o, tr ? OP_CONVT : OP_CONV, &x, 1)))
		return false;
	/* PyTorch names weights after module parameters (layer1.0.conv1.weight);
	 * a weight it computed while exporting, as BN folding does, gets a
	 * generated name */
	if (strncmp(o->np->input[1], "onnx::Conv_", 11) == 0) {
		o->folded++;
		l->folded_bn = true;
	}
	l->attr.lead = lead;
	l->attr.groups = g;
	l->attr.filters = tr ? w->d[1] * g : w->d[0];
	b = o->np->n_input > 2 ? lookup(o, o->np->input[2]) : NULL;
	l->attr.bias = b != NULL;
	if (!window_attrs(o, l, x, chan + 1, nsp, w->d + 2))
		return false;
	if (tr && attr_ints(o, "output_padding", v, MAX_SPATIAL) == nsp)
		memcpy(own_window(l)->out_pad, v, nsp * sizeof *v);
	same_pads(o, l, x, chan + 1, tr);
	return onnx_finish_like(o, l, x) && check_weight(o, l, 0, w) &&
	       (!b || check_weight(o, l, 1, b));
}

/* MaxPool and AveragePool (kind op). */
bool
lower_pool(Onnx *o, OpKind op, const Val **in, int nin)
{
	const Val *x = in[0];
	int64_t k[MAX_SPATIAL];
	int nsp = attr_ints(o, "kernel_shape", k, MAX_SPATIAL), chan = x->rank - 1 - nsp, lead;
	Layer *l;

	if (nsp == -2)
		return false;
	/* a kernel that leaves no room for the channels (and the batch) */
	if (nsp < 1 || chan < (x->bax >= 0 ? 1 : 0)) {
		NERR(o, "missing or wrong 'kernel_shape'");
		return false;
	}
	if ((lead = lead_of(o, x, chan)) < 0 || !(l = onnx_layer(o, op, &x, 1)))
		return false;
	l->attr.lead = lead;
	if (!window_attrs(o, l, x, chan + 1, nsp, NULL))
		return false;
	same_pads(o, l, x, chan + 1, false);
	l->attr.ceil_mode = attr_i(o->np, "ceil_mode", 0) != 0;
	if (o->np->n_output > 1 && *o->np->output[1]) /* MaxPool's indices */
		layer_add_output(o->g, (int)(l - o->g->layer),
				 arena_strdup(o->a, o->np->output[1]));
	return onnx_finish_like(o, l, x);
}

/* Global pools and batch/instance norms: channels on full axis 1. */
bool
lower_channels(Onnx *o, OpKind op, const Val **in, int nin)
{
	const Val *x = in[0];
	int lead = lead_of(o, x, 1);
	Layer *l;

	if (lead < 0)
		return false;
	if (op == OP_BATCHNORM) {
		/* running mean and variance are buffers, not parameters */
		for (int i = 3; i < 5 && i < (int)o->np->n_input; i++) {
			Val *s = lookup(o, o->np->input[i]);
			for (const Src *p = s && !s->act ? s->src : NULL; p; p = p->next)
				p->init->counted = true;
		}
		if (o->np->n_output > 1) {
			NERR(o, "training-mode outputs (running statistics) are not supported");
			return false;
		}
	}
	if (!(l = onnx_layer(o, op, &x, 1)))
		return false;
	l->attr.lead = lead;
	if (!onnx_finish_like(o, l, x))
		return false;
	/* scale and shift as the file declares them */
	for (int i = 1; i < 3 && op != OP_GAVGPOOL && op != OP_GMAXPOOL &&
			i < (int)o->np->n_input; i++) {
		const Val *w = lookup(o, o->np->input[i]);
		if (w && !w->act && w->shaped && count(w) != l->w[i - 1].elems) {
			NERR(o, "input %d has %" PRId64 " elements, expected %" PRId64, i + 1,
			     count(w), l->w[i - 1].elems);
			return false;
		}
	}
	return true;
}

/* LayerNormalization (its mean and inverse deviation too, in training)
 * and RMSNormalization (kind OP_RMSNORM, opset 23): normalized from the
 * attribute axis on. */
bool
lower_layernorm(Onnx *o, OpKind kind, const Val **in, int nin)
{
	const Val *x = in[0];
	int ax = onnx_sample_axis(o, x, attr_i(o->np, "axis", -1));
	Layer *l;

	if (ax < -1)
		return false;
	if (x->bax > onnx_full_axis(o, attr_i(o->np, "axis", -1), x->rank)) {
		NERR(o, "normalizing over the batch axis is not supported");
		return false;
	}
	if (!(l = onnx_layer(o, kind, &x, 1)))
		return false;
	l->attr.axis = ax;
	if (!onnx_finish_like(o, l, x))
		return false;
	/* the mean and inverse deviation (training): the normalized axes
	 * reduced, kept as 1, as a reduction each */
	for (int k = 1; k < 3 && k < (int)o->np->n_output; k++) {
		Shape ps = ps_shape(x);
		if (!*o->np->output[k])
			continue;
		if (!(l = onnx_layer_out(o, OP_REDUCEMEAN, &x, 1, k)))
			return false;
		Shape *axes;
		l->attr.keepdims = true;
		axes = attr_target(o->g, &l->attr);
		for (int i = ax < 0 ? 0 : ax; i < ps.rank; i++)
			axes->d[axes->rank++] = i;
		if (!onnx_finish_like(o, l, x))
			return false;
	}
	return true;
}

/* ---- matrix products ---------------------------------------------------- */

/* Two activations: NumPy matmul, batch dimensions aligned on the right.
 * The batch may sit in the broadcast dimensions, never in the matrices. */
static bool
matmul2(Onnx *o, const Val *a, const Val *b, int out)
{
	const Val *in[2] = { a, b };
	int r = a->rank > b->rank ? a->rank : b->rank, bax = -1;

	for (int i = 0; i < 2; i++) {
		const Val *v = in[i];
		int pos;
		if (v->bax < 0)
			continue;
		if (v->bax >= v->rank - 2) {
			NERR(o, "a matrix product over the batch axis is not supported");
			return false;
		}
		pos = v->bax + (r - v->rank);
		if (bax >= 0 && pos != bax) {
			NERR(o, "the operands' batch axes do not line up");
			return false;
		}
		bax = pos;
	}
	if (a->bax >= 0 && b->bax >= 0 && a->d[a->bax] != b->d[b->bax]) {
		NERR(o, "the operands merge the batch with different dimensions");
		return false;
	}
	if (a->rank == 1 || b->rank == 1)
		r = a->rank == 1 && b->rank == 1 ? 0 : r - 1;
	return onnx_finish_like(o, onnx_layer_out(o, OP_MATMUL, in, 2, out),
				&(Val){ .rank = r, .bax = bax });
}

/* The last layer's output, as a value. */
static const Val *
last_out(Onnx *o)
{
	return lookup(o, o->g->tensor[o->g->layer[o->g->nlayer - 1].out[0]].name);
}

bool
onnx_matmul(Onnx *o, const Val *a, const Val *b, int out, const Val **res)
{
	if (!matmul2(o, a, b, out))
		return false;
	if (res)
		*res = last_out(o);
	return true;
}

/* x times a constant [K, F] matrix (its transpose [F, K] with tb): a
 * fully connected layer; its output the node's output `out`, or (-1) a
 * tensor of its own. */
static bool
fc_out(Onnx *o, const Val *x, const Val *w, bool tb, const Val *bias, int out)
{
	Layer *l;

	if (x->bax == x->rank - 1) {
		NERR(o, "a matrix product over the batch axis is not supported");
		return false;
	}
	if (w->d[tb ? 1 : 0] != x->d[x->rank - 1]) {
		NERR(o, "weight has %" PRId64 " input features, the input %" PRId64,
		     w->d[tb ? 1 : 0], x->d[x->rank - 1]);
		return false;
	}
	if (!(l = onnx_layer_out(o, OP_FC, &x, 1, out)))
		return false;
	l->attr.filters = w->d[tb ? 0 : 1];
	l->attr.bias = bias != NULL;
	return onnx_finish_like(o, l, x);
}

static bool
fc(Onnx *o, const Val *x, const Val *w, bool tb, const Val *bias)
{
	return fc_out(o, x, w, tb, bias, 0);
}

bool
onnx_fc(Onnx *o, const Val *x, int64_t k, int64_t f, int out, const Val **res)
{
	Val w = { .shaped = true, .rank = 2, .bax = -1, .d = { k, f } };

	if (!fc_out(o, x, &w, false, NULL, out))
		return false;
	if (res)
		*res = last_out(o);
	return true;
}

/* MatMul of a and b (in[0], in[1]): a fully connected layer when b is a
 * constant matrix. */
bool
lower_matmul(Onnx *o, OpKind kind, const Val **in, int nin)
{
	const Val *a = in[0], *b = in[1];

	if (a->act && !b->act && b->shaped && b->rank == 2 && a->rank >= 1)
		return fc(o, a, b, false, NULL);
	if (!a->act && !(a = onnx_const_operand(o, a)))
		return false;
	if (!b->act && !(b = onnx_const_operand(o, b)))
		return false;
	return matmul2(o, a, b, 0);
}

/* Gemm: A' B' + C with A' = A or its transpose, likewise B' (in[0] to
 * in[2]). */
bool
lower_gemm(Onnx *o, OpKind kind, const Val **in, int nin)
{
	const Val *a = in[0], *b = in[1], *c = nin > 2 ? in[2] : NULL;
	static const int64_t swap[2] = { 1, 0 };
	bool ta = attr_i(o->np, "transA", 0), tb = attr_i(o->np, "transB", 0);

	if (a->act && !b->act && b->shaped && b->rank != 2) { /* a fully connected layer */
		NERR(o, "input 2 (the weight) has rank %d, expected 2", b->rank);
		return false;
	}
	if (!a->shaped || !b->shaped || a->rank != 2 || b->rank != 2) {
		NERR(o, "Gemm's operands must be matrices");
		return false;
	}
	if (a->act && !b->act && !ta && (!c || !c->act))
		return fc(o, a, b, tb, c);
	if (!a->act && !(a = onnx_const_operand(o, a)))
		return false;
	if (!b->act && !(b = onnx_const_operand(o, b)))
		return false;
	if ((ta && !onnx_transpose(o, a, swap, &a)) || (tb && !onnx_transpose(o, b, swap, &b)))
		return false;
	if (!c)
		return matmul2(o, a, b, 0);
	/* the product, then the bias added: a scale layer, or an add */
	if (!matmul2(o, a, b, -1))
		return false;
	a = last_out(o);
	if (!c->act) {
		Layer *l;
		Shape cs;
		if (!ps_const(o, c, a, &cs) || !(l = onnx_layer(o, OP_SCALE, &a, 1)))
			return false;
		*attr_target(o->g, &l->attr) = cs;
		return onnx_finish_like(o, l, a);
	}
	{
		const Val *sum[2] = { a, c };
		return onnx_finish_like(o, onnx_layer(o, OP_ADD, sum, 2), a);
	}
}

/* ---- element-wise ------------------------------------------------------- */

/* The reference activation of an element-wise node (the highest rank),
 * and the full rank and batch axis of its output. */
static const Val *
ew_ref(Onnx *o, const Val **in, int nin, int *rank, int *bax)
{
	const Val *ref = NULL;

	*rank = 0, *bax = -1;
	for (int i = 0; i < nin; i++)
		if (in[i] && in[i]->shaped && in[i]->rank > *rank)
			*rank = in[i]->rank;
	for (int i = 0; i < nin; i++) {
		const Val *v = in[i];
		int pos;
		if (!v || !v->act)
			continue;
		if (!ref || v->rank > ref->rank)
			ref = v;
		if (v->bax < 0)
			continue;
		pos = v->bax + (*rank - v->rank);
		if ((*bax >= 0 && pos != *bax) ||
		    (ref->bax >= 0 && v->d[v->bax] != ref->d[ref->bax])) {
			NERR(o, "the operands' batch axes do not line up");
			return NULL;
		}
		*bax = pos;
	}
	return ref;
}

/* Two or more operands of kind op, broadcast, any of them a constant. */
bool
lower_elementwise(Onnx *o, OpKind op, const Val **in, int nin)
{
	const Val *ops[MAX_NODE_INPUTS], *ref;
	int n = 0, rank, bax, nact = 0, k = -1;
	Layer *l;
	Shape cs;

	if (!(ref = ew_ref(o, in, nin, &rank, &bax)))
		return false;
	for (int i = 0; i < nin; i++)
		if (in[i] && in[i]->act)
			nact++;
		else if (in[i])
			k = i;
	/* one activation and one constant: scale, pow and prelu keep the
	 * constant as an operand shape, not a tensor */
	if (nact == 1 && k >= 0 && nin == 2 &&
	    (op == OP_ADD || op == OP_SUB || op == OP_MUL || op == OP_DIV || op == OP_PRELU ||
	     (op == OP_POWER && k == 1))) {
		if (!ps_const(o, in[k], ref, &cs))
			return false;
		op = op == OP_PRELU ? OP_PRELU : op == OP_POWER ? OP_POW : OP_SCALE;
		if (!(l = onnx_layer(o, op, &ref, 1)))
			return false;
		*attr_target(o->g, &l->attr) = cs;
		return onnx_finish(o, l, rank, bax);
	}
	for (int i = 0; i < nin; i++) {
		if (!in[i])
			continue;
		if (!in[i]->act) {
			if (!ps_const(o, in[i], ref, &cs) || !(ops[n] = onnx_const_layer(o, &cs)))
				return false;
			n++;
		} else {
			ops[n++] = in[i];
		}
	}
	return (l = onnx_layer(o, op, ops, n)) && onnx_finish(o, l, rank, bax);
}

/* One activation in, one out, no attributes that change counts. */
bool
lower_unary(Onnx *o, OpKind kind, const Val **in, int nin)
{
	return onnx_lower_unary(o, in[0], kind);
}
