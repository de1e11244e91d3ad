/* onnxops.c -- lowering ONNX nodes that read activations to IR layers:
 * convolutions, pools, norms, matrix products, element-wise ops, and the
 * dispatch (the data-movement rules are in onnxshape.c).
 *
 * Each rule turns one node into one layer (a few into two: Gemm with a
 * transposed input, Split into one slice per output) and says where the
 * batch goes: ONNX shapes are full, the IR is per sample (onnx.h, Val).
 * An op that mixes samples -- a softmax, reduction, slice or concat along
 * the batch axis, a matrix product over it -- is refused with an error
 * naming the node: its per-sample cost would not be one sample's.
 *
 * Constant operands of element-wise ops: an add, sub, mul or div by a
 * constant is a "scale" layer whose attr.target is the constant's
 * per-sample shape; any other constant operand becomes a "const" layer,
 * so every operand is an IR tensor. */
#include "frontend/onnx/values.h"
#include "util/checked.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

bool
onnx_finish_like(Onnx *o, Layer *l, const Val *x)
{
	return l && onnx_finish(o, l, x->rank, x->bax);
}

/* a full axis attribute, normalised; -1 after an error */
int
onnx_full_axis(Onnx *o, int64_t axis, int rank)
{
	if (axis < -rank || axis >= rank) {
		NERR(o, "axis %" PRId64 " is out of range for rank %d", axis, rank);
		return -1;
	}
	return (int)(axis < 0 ? axis + rank : axis);
}

/* the per-sample axis of a full one that must not be the batch's */
int
onnx_sample_axis(Onnx *o, const Val *x, int64_t axis)
{
	int a = onnx_full_axis(o, axis, x->rank);

	if (a < 0)
		return -2;
	if (a == x->bax) {
		NERR(o, "operating along the batch axis is not supported");
		return -2;
	}
	return ps_axis(x, a);
}

/* A const layer holding a constant operand, with per-sample shape s. */
const Val *
onnx_const_layer(Onnx *o, const Shape *s)
{
	Layer *l = onnx_layer_out(o, OP_CONST, NULL, 0, -1);
	Val *v;

	if (!l)
		return NULL;
	l->attr.target = *s;
	if (!layer_infer(o->g, (int)(l - o->g->layer), NULL))
		return NULL;
	v = newval(o);
	v->act = true;
	v->tensor = l->out[0];
	return v;
}

/* ---- convolutions and pools -------------------------------------------- */

/* kernel, strides, pads, dilations of Conv and the pools; x's spatial
 * extents start at full axis sp */
static bool
window_attrs(Onnx *o, Layer *l, const Val *x, int sp, int nsp, const int64_t *wkernel)
{
	Attr *a = &l->attr;
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
		a->kernel[i] = n >= 0 ? v[i] : wkernel[i];
		a->stride[i] = a->dilation[i] = 1;
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
			memcpy(k ? a->dilation : a->stride, v, nsp * sizeof *v);
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
		a->pad[i] = v[i];
		a->pad[MAX_SPATIAL + i] = v[nsp + i];
	}
	return true;
}

/* auto_pad SAME_*: pads so the output is ceil(input / stride) (conv,
 * pools) or input * stride (transposed), or the output_shape given. */
static void
same_pads(Onnx *o, Layer *l, const Val *x, int sp, bool tr)
{
	Attr *a = &l->attr;
	const char *autopad = attr_s(o, "auto_pad", "NOTSET");
	int64_t oshape[MAX_SPATIAL];
	bool given = tr && attr_ints(o, "output_shape", oshape, MAX_SPATIAL) == a->nspatial;
	bool upper = strcmp(autopad, "SAME_UPPER") == 0;

	if (strcmp(autopad, "VALID") == 0)
		memset(a->pad, 0, sizeof a->pad);
	if (!upper && strcmp(autopad, "SAME_LOWER") != 0 && !given)
		return;
	for (int i = 0; i < a->nspatial; i++) {
		int64_t in = x->d[sp + i], eff = a->dilation[i] * (a->kernel[i] - 1) + 1, total;
		if (tr) {
			int64_t out = given ? oshape[i] : in * a->stride[i];
			total = a->stride[i] * (in - 1) + a->out_pad[i] + eff - out;
			if (total < 0) { /* a larger output: the extra is output padding */
				a->out_pad[i] -= total;
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
		a->pad[i] = upper || (tr && !given) ? total / 2 : total - total / 2;
		a->pad[MAX_SPATIAL + i] = total - a->pad[i];
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

static bool
lower_conv(Onnx *o, const Val *x)
{
	const Val *w = weight(o, 1, 0), *b;
	Layer *l;
	bool tr = strcmp(o->np->op_type, "ConvTranspose") == 0;
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
	if ((lead = lead_of(o, x, chan)) < 0 || !(l = onnx_layer(o, tr ? OP_CONVT : OP_CONV, &x, 1)))
		return false;
	/* PyTorch names weights after module parameters (layer1.0.conv1.weight);
	 * a weight it computed while exporting, as BN folding does, gets a
	 * generated name */
	if (strncmp(o->np->input[1], "onnx::Conv_", 11) == 0)
		o->folded++;
	l->attr.lead = lead;
	l->attr.groups = g;
	l->attr.filters = tr ? w->d[1] * g : w->d[0];
	b = o->np->n_input > 2 ? lookup(o, o->np->input[2]) : NULL;
	l->attr.bias = b != NULL;
	if (!window_attrs(o, l, x, chan + 1, nsp, w->d + 2))
		return false;
	if (tr && attr_ints(o, "output_padding", v, MAX_SPATIAL) == nsp)
		memcpy(l->attr.out_pad, v, nsp * sizeof *v);
	same_pads(o, l, x, chan + 1, tr);
	return onnx_finish_like(o, l, x) && check_weight(o, l, 0, w) &&
	       (!b || check_weight(o, l, 1, b));
}

static bool
lower_pool(Onnx *o, const Val *x, OpKind op)
{
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
		layer_add_output(o->g, (int)(l - o->g->layer), arena_strdup(o->a, o->np->output[1]));
	return onnx_finish_like(o, l, x);
}

/* Global pools and batch/instance norms: channels on full axis 1. */
static bool
lower_channels(Onnx *o, const Val *x, OpKind op)
{
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
		o->batchnorms++;
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

static bool
lower_layernorm(Onnx *o, const Val *x)
{
	int ax = onnx_sample_axis(o, x, attr_i(o->np, "axis", -1));
	Layer *l;

	if (ax < -1)
		return false;
	if (x->bax > onnx_full_axis(o, attr_i(o->np, "axis", -1), x->rank)) {
		NERR(o, "normalizing over the batch axis is not supported");
		return false;
	}
	if (!(l = onnx_layer(o, OP_LAYERNORM, &x, 1)))
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
		l->attr.keepdims = true;
		for (int i = ax < 0 ? 0 : ax; i < ps.rank; i++)
			l->attr.target.d[l->attr.target.rank++] = i;
		if (!onnx_finish_like(o, l, x))
			return false;
	}
	return true;
}

/* ---- matrix products ---------------------------------------------------- */

/* The activation made from a constant operand of a matrix product or
 * other op: a const layer with its full shape (it holds no batch). */
const Val *
onnx_const_operand(Onnx *o, const Val *c)
{
	Shape s = { .rank = c->rank };
	const Val *v;
	Val *full;

	if (!c->shaped || c->rank > MAX_RANK) {
		NERR(o, "the shape of a constant operand is not known");
		return NULL;
	}
	memcpy(s.d, c->d, c->rank * sizeof c->d[0]);
	if (!(v = onnx_const_layer(o, &s)))
		return NULL;
	full = (Val *)v;
	full->shaped = true;
	full->rank = c->rank;
	full->bax = -1;
	memcpy(full->d, c->d, c->rank * sizeof c->d[0]);
	return full;
}

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
	return onnx_finish_like(o, onnx_layer_out(o, OP_MATMUL, in, 2, out), &(Val){ .rank = r, .bax = bax });
}

/* x times a constant [K, F] matrix: a fully connected layer. */
static bool
fc(Onnx *o, const Val *x, const Val *w, bool tb, const Val *bias)
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
	if (!(l = onnx_layer(o, OP_FC, &x, 1)))
		return false;
	l->attr.filters = w->d[tb ? 0 : 1];
	l->attr.bias = bias != NULL;
	return onnx_finish_like(o, l, x);
}

static bool
lower_matmul(Onnx *o, const Val *a, const Val *b)
{
	if (a->act && !b->act && b->shaped && b->rank == 2 && a->rank >= 1)
		return fc(o, a, b, false, NULL);
	if (!a->act && !(a = onnx_const_operand(o, a)))
		return false;
	if (!b->act && !(b = onnx_const_operand(o, b)))
		return false;
	return matmul2(o, a, b, 0);
}

/* Gemm: A' B' + C with A' = A or its transpose, likewise B'. */
static bool
lower_gemm(Onnx *o, const Val *a, const Val *b, const Val *c)
{
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
	a = lookup(o, o->g->tensor[o->g->layer[o->g->nlayer - 1].out[0]].name);
	if (!c->act) {
		Layer *l;
		Shape cs;
		if (!ps_const(o, c, a, &cs) || !(l = onnx_layer(o, OP_SCALE, &a, 1)))
			return false;
		l->attr.target = cs;
		return onnx_finish_like(o, l, a);
	}
	{
		const Val *in[2] = { a, c };
		return onnx_finish_like(o, onnx_layer(o, OP_ADD, in, 2), a);
	}
}

/* ---- element-wise ------------------------------------------------------- */

typedef struct Simple {
	const char *onnx;
	OpKind op;
} Simple;

/* One activation in, one out, no attributes that change counts. */
static const Simple unary[] = {
	{ "Relu", OP_RELU },           { "LeakyRelu", OP_LEAKYRELU }, { "Elu", OP_ELU },
	{ "Sigmoid", OP_SIGMOID },     { "Tanh", OP_TANH },           { "HardSigmoid", OP_HARDSIGMOID },
	{ "HardSwish", OP_HARDSWISH }, { "Clip", OP_CLIP },           { "Dropout", OP_DROPOUT },
	{ "Identity", OP_IDENTITY },   { "Erf", OP_ERF },             { "Exp", OP_EXP },
	{ "Log", OP_LOG },             { "Sqrt", OP_SQRT },           { "Reciprocal", OP_RECIPROCAL },
	{ "Neg", OP_NEG },             { "Abs", OP_ABS },             { "Cast", OP_CAST },
	{ "Gelu", OP_GELU },           { "LRN", OP_LRN },             { "Floor", OP_FLOOR },
	{ "Ceil", OP_CEIL },           { "Round", OP_ROUND },         { "Sign", OP_SIGN },
	{ "Not", OP_NOT },             { "Softplus", OP_SOFTPLUS },   { "Softsign", OP_SOFTSIGN },
	{ "Selu", OP_SELU },           { "Celu", OP_CELU },           { "ThresholdedRelu", OP_THRELU },
	{ "Sin", OP_SIN },             { "Cos", OP_COS },             { "CastLike", OP_CAST },
	{ "Mish", OP_SILU },           { "ScatterND", OP_SCATTER },   { "ScatterElements", OP_SCATTER },
	{ "Tan", OP_TRIG },            { "Asin", OP_TRIG },           { "Acos", OP_TRIG },
	{ "Atan", OP_TRIG },           { "Sinh", OP_TRIG },           { "Cosh", OP_TRIG },
	{ "Asinh", OP_TRIG },          { "Acosh", OP_TRIG },          { "Atanh", OP_TRIG },
};

/* Operators whose output shape depends on input values. */
static const char *const data_shaped[] = {
	"Range", "ConstantOfShape", "NonZero", "Unique", "Compress", "TopK", "OneHot",
	"NonMaxSuppression", "StringSplit",
};

/* Two or more operands, broadcast. */
static const Simple nary[] = {
	{ "Add", OP_ADD },         { "Sub", OP_SUB },       { "Mul", OP_MUL },
	{ "Div", OP_DIV },         { "Sum", OP_ADD },       { "Mean", OP_MEAN },
	{ "Max", OP_MAX },         { "Min", OP_MIN },       { "Equal", OP_EQUAL },
	{ "Less", OP_LESS },       { "Greater", OP_GREATER }, { "LessOrEqual", OP_LESS },
	{ "GreaterOrEqual", OP_GREATER }, { "And", OP_AND }, { "Or", OP_OR },
	{ "Xor", OP_XOR },         { "Mod", OP_MOD },       { "Pow", OP_POWER },
	{ "Where", OP_WHERE },     { "PRelu", OP_PRELU },
};

static int
find(const Simple *t, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(t[i].onnx, name) == 0)
			return (int)i;
	return -1;
}

bool
onnx_lower_unary(Onnx *o, const Val *x, OpKind op)
{
	Layer *l = onnx_layer(o, op, &x, 1);

	if (!l)
		return false;
	/* Dropout's mask has the output's shape */
	if (op == OP_DROPOUT && o->np->n_output > 1 && *o->np->output[1])
		layer_add_output(o->g, (int)(l - o->g->layer), arena_strdup(o->a, o->np->output[1]));
	return onnx_finish_like(o, l, x);
}

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
		if ((*bax >= 0 && pos != *bax) || (ref->bax >= 0 && v->d[v->bax] != ref->d[ref->bax])) {
			NERR(o, "the operands' batch axes do not line up");
			return NULL;
		}
		*bax = pos;
	}
	return ref;
}

static bool
lower_elementwise(Onnx *o, const Val **in, int nin, OpKind op)
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
		l->attr.target = cs;
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

/* ---- everything else ---------------------------------------------------- */

/* An operator with no rule: an opaque layer with the output shape the
 * file's value_info declares, or an error when it declares none.  Unknown
 * operators and value_info are looked up by name (o->unknown, o->vinfo):
 * a model of many custom operators stays linear. */
static bool
lower_unknown(Onnx *o, const Val *x)
{
	const char *out = o->np->output[0]; /* node() checked it */
	const Onnx__ValueInfoProto *vi = map_get(&o->vinfo, out);
	const Onnx__TensorShapeProto *sp;
	Graph *g = o->g;
	Layer *l;
	Shape s = { 0 };
	int skip = o->nobatch ? 0 : 1;
	intptr_t k = (intptr_t)map_get(&o->unknown, o->np->op_type);

	if (!k) { /* a new one: the array doubles */
		int n = g->nunknown;
		if ((n & (n - 1)) == 0)
			g->unknown = arena_grow(o->a, g->unknown, n, n ? 2 * n : 1,
						sizeof *g->unknown);
		g->unknown[n].op = arena_strdup(o->a, o->np->op_type);
		k = ++g->nunknown;
		map_put(&o->unknown, g->unknown[n].op, (void *)k);
	}
	g->unknown[k - 1].count++;
	if (o->strict) {
		NERR(o, "unknown operator (--strict)");
		return false;
	}
	if (!vi || !vi->type || vi->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ||
	    !vi->type->tensor_type || !(sp = vi->type->tensor_type->shape) ||
	    sp->n_dim < (size_t)skip || sp->n_dim > (size_t)MAX_RANK + skip)
		goto noshape;
	s.rank = (int)sp->n_dim - skip;
	for (int d = 0; d < s.rank; d++) {
		if (sp->dim[d + skip]->value_case !=
		    ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
			goto noshape;
		s.d[d] = sp->dim[d + skip]->dim_value;
		if (s.d[d] < 1 || s.d[d] > MAX_DIM)
			goto noshape;
	}
	if (!(l = onnx_layer(o, OP_OPAQUE, &x, 1)))
		return false;
	o->g->tensor[l->out[0]].shape = s;
	if (!shape_elems(&s, &o->g->tensor[l->out[0]].elems)) {
		NERR(o, "the shape declared for output '%s' has more elements than 64 bits can "
			"count", out);
		return false;
	}
	return onnx_finish(o, l, s.rank + skip, skip - 1);
noshape:
	NERR(o, "unsupported operator, and the file declares no shape for its output '%s'", out);
	return false;
}

bool
onnx_lower(Onnx *o, const Val **in, int nin)
{
	const char *op = o->np->op_type;
	const Val *x = in[0] && in[0]->act ? in[0] : NULL, *y = nin > 1 ? in[1] : NULL;
	int k;
	bool ok, done;

	for (int i = 0; !x && i < nin; i++)
		if (in[i] && in[i]->act)
			x = in[i];
	for (size_t i = 0; i < NELEM(data_shaped); i++)
		if (strcmp(op, data_shaped[i]) == 0) {
			NERR(o, "an output shape computed from data is not supported");
			return false;
		}
	if ((k = find(nary, NELEM(nary), op)) >= 0)
		return lower_elementwise(o, in, nin, nary[k].op);
	if (strcmp(op, "MatMul") == 0 && in[0] && y)
		return lower_matmul(o, in[0], y);
	if (strcmp(op, "Gemm") == 0 && in[0] && y)
		return lower_gemm(o, in[0], y, nin > 2 ? in[2] : NULL);
	if (strcmp(op, "Concat") == 0)
		return onnx_lower_shape(o, in, nin, &done);
	if (strcmp(op, "Gather") == 0 && in[0] && y)
		return onnx_lower_gather(o, in[0], y);
	if (x != in[0]) {
		NERR(o, "a constant first input is not supported");
		return false;
	}
	if (strcmp(op, "Conv") == 0 || strcmp(op, "ConvTranspose") == 0)
		return lower_conv(o, x);
	if (strcmp(op, "MaxPool") == 0)
		return lower_pool(o, x, OP_MAXPOOL);
	if (strcmp(op, "AveragePool") == 0)
		return lower_pool(o, x, OP_AVGPOOL);
	if (strcmp(op, "GlobalAveragePool") == 0)
		return lower_channels(o, x, OP_GAVGPOOL);
	if (strcmp(op, "GlobalMaxPool") == 0)
		return lower_channels(o, x, OP_GMAXPOOL);
	if (strcmp(op, "BatchNormalization") == 0)
		return lower_channels(o, x, OP_BATCHNORM);
	if (strcmp(op, "InstanceNormalization") == 0)
		return lower_channels(o, x, OP_INSTNORM);
	if (strcmp(op, "LayerNormalization") == 0)
		return lower_layernorm(o, x);
	if ((ok = onnx_lower_shape(o, in, nin, &done)) || done)
		return ok;
	if ((k = find(unary, NELEM(unary), op)) >= 0)
		return onnx_lower_unary(o, x, unary[k].op);
	return lower_unknown(o, x);
}
