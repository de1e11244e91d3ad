/* onnxops.c -- lowering ONNX nodes that read activations to IR layers.
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
#include "frontend/onnx.h"
#include "util/checked.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static bool
finish_like(Onnx *o, Layer *l, const Val *x)
{
	return l && onnx_finish(o, l, x->rank, x->bax);
}

/* a full axis attribute, normalised; -1 after an error */
static int
full_axis(Onnx *o, int64_t axis, int rank)
{
	if (axis < -rank || axis >= rank) {
		NERR(o, "axis %" PRId64 " is out of range for rank %d", axis, rank);
		return -1;
	}
	return (int)(axis < 0 ? axis + rank : axis);
}

/* the per-sample axis of a full one that must not be the batch's */
static int
sample_axis(Onnx *o, const Val *x, int64_t axis)
{
	int a = full_axis(o, axis, x->rank);

	if (a < 0)
		return -2;
	if (a == x->bax) {
		NERR(o, "operating along the batch axis is not supported");
		return -2;
	}
	return ps_axis(x, a);
}

/* A const layer holding a constant operand, with per-sample shape s. */
static const Val *
const_layer(Onnx *o, const Shape *s)
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
	if ((n = attr_ints(o, "strides", v, MAX_SPATIAL)) >= 0)
		memcpy(a->stride, v, nsp * sizeof *v);
	if ((n = attr_ints(o, "dilations", v, MAX_SPATIAL)) >= 0)
		memcpy(a->dilation, v, nsp * sizeof *v);
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
	const char *autopad = attr_s(o->np, "auto_pad", "NOTSET");
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

	if (!w || !w->shaped || (w->act && w->bax >= 0) || (rank && w->rank != rank)) {
		NERR(o, "input %d must be a constant%s", i + 1, rank ? " matrix" : "");
		return NULL;
	}
	return w; /* a graph input of its own with --no-batch: its shape */
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
	return finish_like(o, l, x) && check_weight(o, l, 0, w) &&
	       (!b || check_weight(o, l, 1, b));
}

static bool
lower_pool(Onnx *o, const Val *x, OpKind op)
{
	int64_t k[MAX_SPATIAL];
	int nsp = attr_ints(o, "kernel_shape", k, MAX_SPATIAL), chan = x->rank - 1 - nsp, lead;
	Layer *l;

	if (nsp < 1) {
		NERR(o, "missing 'kernel_shape'");
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
	return finish_like(o, l, x);
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
	if (!finish_like(o, l, x))
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
	int ax = sample_axis(o, x, attr_i(o->np, "axis", -1));
	Layer *l;

	if (ax < -1)
		return false;
	if (x->bax > full_axis(o, attr_i(o->np, "axis", -1), x->rank)) {
		NERR(o, "normalizing over the batch axis is not supported");
		return false;
	}
	if (!(l = onnx_layer(o, OP_LAYERNORM, &x, 1)))
		return false;
	l->attr.axis = ax;
	if (!finish_like(o, l, x))
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
		if (!finish_like(o, l, x))
			return false;
	}
	return true;
}

/* ---- matrix products ---------------------------------------------------- */

/* A transpose of x by the full permutation p; *out, when given, is the
 * result, a tensor of the lowering's own. */
static bool transpose_by(Onnx *o, const Val *x, const int64_t *p, const Val **out);

/* The activation made from a constant operand of a matrix product or
 * other op: a const layer with its full shape (it holds no batch). */
static const Val *
const_operand(Onnx *o, const Val *c)
{
	Shape s = { .rank = c->rank };
	const Val *v;
	Val *full;

	if (!c->shaped || c->rank > MAX_RANK) {
		NERR(o, "the shape of a constant operand is not known");
		return NULL;
	}
	memcpy(s.d, c->d, c->rank * sizeof c->d[0]);
	if (!(v = const_layer(o, &s)))
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
	return finish_like(o, onnx_layer_out(o, OP_MATMUL, in, 2, out), &(Val){ .rank = r, .bax = bax });
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
	return finish_like(o, l, x);
}

static bool
lower_matmul(Onnx *o, const Val *a, const Val *b)
{
	if (a->act && !b->act && b->shaped && b->rank == 2 && a->rank >= 1)
		return fc(o, a, b, false, NULL);
	if (!a->act && !(a = const_operand(o, a)))
		return false;
	if (!b->act && !(b = const_operand(o, b)))
		return false;
	return matmul2(o, a, b, 0);
}

/* Gemm: A' B' + C with A' = A or its transpose, likewise B'. */
static bool
lower_gemm(Onnx *o, const Val *a, const Val *b, const Val *c)
{
	static const int64_t swap[2] = { 1, 0 };
	bool ta = attr_i(o->np, "transA", 0), tb = attr_i(o->np, "transB", 0);

	if (!a->shaped || !b->shaped || a->rank != 2 || b->rank != 2) {
		NERR(o, "Gemm's operands must be matrices");
		return false;
	}
	if (a->act && !b->act && !ta && (!c || !c->act))
		return fc(o, a, b, tb, c);
	if (!a->act && !(a = const_operand(o, a)))
		return false;
	if (!b->act && !(b = const_operand(o, b)))
		return false;
	if ((ta && !transpose_by(o, a, swap, &a)) || (tb && !transpose_by(o, b, swap, &b)))
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
		return finish_like(o, l, a);
	}
	{
		const Val *in[2] = { a, c };
		return finish_like(o, onnx_layer(o, OP_ADD, in, 2), a);
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

static bool
lower_unary(Onnx *o, const Val *x, OpKind op)
{
	Layer *l = onnx_layer(o, op, &x, 1);

	if (!l)
		return false;
	/* Dropout's mask has the output's shape */
	if (op == OP_DROPOUT && o->np->n_output > 1 && *o->np->output[1])
		layer_add_output(o->g, (int)(l - o->g->layer), arena_strdup(o->a, o->np->output[1]));
	return finish_like(o, l, x);
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
			if (!ps_const(o, in[i], ref, &cs) || !(ops[n] = const_layer(o, &cs)))
				return false;
			n++;
		} else {
			ops[n++] = in[i];
		}
	}
	return (l = onnx_layer(o, op, ops, n)) && onnx_finish(o, l, rank, bax);
}

/* ---- shapes ------------------------------------------------------------- */

/* A reshape of x to the full shape `full` (batch factor on axis bax). */
static bool
reshape_to(Onnx *o, const Val *x, const int64_t *full, int rank, int bax)
{
	Val y = { .rank = rank, .bax = bax };
	Layer *l;

	if (rank < 0 || rank > MAX_RANK + 1) {
		NERR(o, "target rank %d is not supported", rank);
		return false;
	}
	memcpy(y.d, full, rank * sizeof *full);
	if (!(l = onnx_layer(o, OP_RESHAPE, &x, 1)))
		return false;
	l->attr.target = ps_shape(&y);
	if (l->attr.target.rank > MAX_RANK) {
		NERR(o, "target rank %d is not supported", rank);
		return false;
	}
	return onnx_finish(o, l, rank, bax);
}

/* Where the batch goes in a literal target shape of a model whose file
 * fixes the batch B: the dimension on the input's batch axis when B
 * divides it, else none (a -1 takes it, or the first multiple of B). */
static int
fixed_batch_axis(Onnx *o, const Val *x, const int64_t *t, int n, bool minus)
{
	if (o->batch == BATCH || o->batch < 1)
		return -1;
	if (x->bax >= 0 && x->bax < n && t[x->bax] > 0 && t[x->bax] % o->batch == 0)
		return x->bax;
	for (int i = 0; !minus && i < n; i++)
		if (t[i] > 0 && t[i] % o->batch == 0)
			return i;
	return -1;
}

/* ONNX Reshape with the batch symbolic: 0 copies a dimension, one entry
 * may be k * N (the batch, merged with k per sample), one may be -1.
 * With no batch entry the -1 holds it: [-1, 49, C] after a window
 * partition is [N*nW, 49, C]. */
static bool
lower_reshape(Onnx *o, const Val *x, const Val *s)
{
	int64_t full[MAX_RANK + 1], prod = 1, e = 1, minus = -1, bax = -1, n;
	bool allowzero = attr_i(o->np, "allowzero", 0);

	if (!s || s->act || s->n < 0 || s->n > MAX_RANK + 1 || s->rank != 1) {
		NERR(o, "the target shape is not a known constant (shapes computed from data are not supported)");
		return false;
	}
	n = s->n;
	for (int i = 0; i < x->rank; i++)
		e *= x->d[i]; /* per-sample elements (the batch factor included) */
	for (int64_t i = 0; i < n; i++) {
		Int v = s->iv[i];
		if (v.k == 0 && !v.batch && !allowzero && i < x->rank) {
			v.k = x->d[i];
			v.batch = i == x->bax;
		}
		full[i] = v.k;
		if (v.batch) {
			if (bax >= 0) {
				NERR(o, "the target shape holds the batch twice");
				return false;
			}
			bax = i;
		} else if (v.k == -1 && minus < 0) {
			minus = i;
		} else if (v.k < 1) {
			NERR(o, "bad target dimension %" PRId64, v.k);
			return false;
		}
	}
	if (bax < 0 && !o->nobatch && x->bax >= 0 &&
	    (bax = fixed_batch_axis(o, x, full, (int)n, minus >= 0)) >= 0)
		full[bax] /= o->batch;
	if (bax < 0 && !o->nobatch && x->bax >= 0 && (bax = minus) < 0) {
		NERR(o, "the target shape leaves no dimension for the batch");
		return false;
	}
	for (int64_t i = 0; i < n; i++)
		if (i != minus && !ck_mul(prod, full[i], &prod))
			prod = INT64_MAX;
	if (minus >= 0) {
		if (e % prod) {
			NERR(o, "cannot reshape %" PRId64 " elements per sample to the target",
			     e);
			return false;
		}
		full[minus] = e / prod;
	}
	return reshape_to(o, x, full, (int)n, (int)bax);
}

static bool
lower_flatten(Onnx *o, const Val *x)
{
	int64_t axis = attr_i(o->np, "axis", 1), full[2] = { 1, 1 };
	Layer *l;
	int bax = -1;

	if (axis < 0)
		axis += x->rank;
	if (axis < 0 || axis > x->rank) {
		NERR(o, "axis %" PRId64 " is out of range", axis);
		return false;
	}
	if (x->bax == 0 && x->d[0] == 1 && axis == 1) { /* [N, ...] -> [N, rest] */
		if (!(l = onnx_layer(o, OP_FLATTEN, &x, 1)))
			return false;
		l->attr.axis = 0;
		return onnx_finish(o, l, 2, 0);
	}
	for (int i = 0; i < x->rank; i++)
		full[i >= axis] *= x->d[i];
	if (x->bax >= 0)
		bax = x->bax >= axis;
	return reshape_to(o, x, full, 2, bax);
}

/* the axes of Squeeze/Unsqueeze/Reduce*: an attribute, or (newer opsets)
 * an input; -1 when absent, -2 after an error */
static int
axes_of(Onnx *o, int64_t *ax, int max)
{
	const Val *a;
	int n = attr_ints(o, "axes", ax, max);

	if (n != -1)
		return n;
	a = o->np->n_input > 1 ? lookup(o, o->np->input[1]) : NULL;
	if (!a)
		return -1;
	if (a->act || a->n < 0 || a->n > max) {
		NERR(o, "axes are not a known constant (data-dependent axes are not supported)");
		return -2;
	}
	for (int64_t i = 0; i < a->n; i++)
		ax[i] = a->iv[i].k;
	return (int)a->n;
}

static bool
lower_squeeze(Onnx *o, const Val *x, bool un)
{
	int64_t ax[MAX_RANK + 1], full[MAX_RANK + 1];
	int n = axes_of(o, ax, MAX_RANK + 1), rank, k = 0, bax = -1;
	bool mark[MAX_RANK + 2] = { false };

	if (n == -2 || (un && n < 1))
		return n == -2 ? false : (NERR(o, "no axes"), false);
	n = n < 0 ? 0 : n;
	rank = un ? x->rank + n : x->rank;
	if (rank > MAX_RANK + 1) {
		NERR(o, "too many dimensions");
		return false;
	}
	for (int i = 0; i < n; i++) {
		int64_t a = ax[i] < 0 ? ax[i] + rank : ax[i];
		if (a < 0 || a >= rank || mark[a] || (!un && a == x->bax)) {
			NERR(o, "axis %" PRId64 " is out of range or the batch's", ax[i]);
			return false;
		}
		mark[a] = true;
	}
	for (int i = 0, j = 0; i < (un ? rank : x->rank); i++) {
		if (un) {
			if (!mark[i] && j == x->bax)
				bax = i;
			full[i] = mark[i] ? 1 : x->d[j++];
		} else if (i == x->bax) {
			bax = k, full[k++] = x->d[i];
		} else if (!(n ? mark[i] : x->d[i] == 1)) {
			full[k++] = x->d[i];
		} else if (x->d[i] != 1) {
			NERR(o, "cannot squeeze dimension %d of size %" PRId64, i, x->d[i]);
			return false;
		}
	}
	return reshape_to(o, x, full, un ? rank : k, bax);
}

static bool
transpose_by(Onnx *o, const Val *x, const int64_t *p, const Val **out)
{
	Layer *l;
	int bax = -1;
	unsigned used = 0;

	if (!(l = onnx_layer_out(o, OP_TRANSPOSE, &x, 1, out ? -1 : 0)))
		return false;
	for (int i = 0; i < x->rank; i++) {
		if (p[i] < 0 || p[i] >= x->rank || (used & (1u << p[i]))) {
			NERR(o, "bad permutation");
			return false;
		}
		used |= 1u << p[i];
		if (p[i] == x->bax) {
			bax = i;
			if (x->d[p[i]] == 1)
				continue; /* the batch alone: not in the sample */
		}
		l->attr.target.d[l->attr.target.rank++] = ps_axis(x, (int)p[i]);
	}
	if (!onnx_finish(o, l, x->rank, bax))
		return false;
	if (out)
		*out = lookup(o, o->g->tensor[l->out[0]].name);
	return true;
}

static bool
lower_transpose(Onnx *o, const Val *x)
{
	int64_t p[MAX_RANK + 1];
	int n = attr_ints(o, "perm", p, MAX_RANK + 1);

	if (n == -2)
		return false;
	if (n < 0) /* default: reverse */
		for (n = 0; n < x->rank; n++)
			p[n] = x->rank - 1 - n;
	if (n != x->rank) {
		NERR(o, "permutation has %d items for rank %d", n, x->rank);
		return false;
	}
	return transpose_by(o, x, p, NULL);
}

static bool
lower_concat(Onnx *o, const Val **in, int nin)
{
	const Val *ops[MAX_NODE_INPUTS], *x0 = NULL;
	int n = 0, ax;
	Layer *l;

	for (int i = 0; i < nin; i++)
		if (in[i] && in[i]->act && !x0)
			x0 = in[i];
	for (int i = 0; i < nin; i++) {
		if (!in[i] || (in[i]->shaped && count(in[i]) == 0))
			continue; /* empty operands add nothing */
		if (in[i]->act) {
			if (in[i]->bax != x0->bax || in[i]->rank != x0->rank ||
			    (x0->bax >= 0 && in[i]->d[x0->bax] != x0->d[x0->bax])) {
				NERR(o, "the operands' batch axes do not line up");
				return false;
			}
			ops[n++] = in[i];
		} else if (x0->bax >= 0) {
			NERR(o, "concatenating a constant with activations is not supported");
			return false;
		} else if (!(ops[n++] = const_operand(o, in[i]))) {
			return false;
		}
	}
	if ((ax = sample_axis(o, x0, attr_i(o->np, "axis", 0))) < -1)
		return false;
	if (!(l = onnx_layer(o, OP_CONCAT, ops, n)))
		return false;
	l->attr.axis = ax;
	return finish_like(o, l, x0);
}

static bool
lower_pad(Onnx *o, const Val *x)
{
	int64_t p[2 * (MAX_RANK + 1)];
	int n = attr_ints(o, "pads", p, 2 * (MAX_RANK + 1)); /* opset < 11 */
	const Val *pv;
	Layer *l;

	if (n == -1) {
		pv = o->np->n_input > 1 ? lookup(o, o->np->input[1]) : NULL;
		if (!pv || pv->act || pv->n < 0 || pv->n > 2 * (MAX_RANK + 1)) {
			NERR(o, "pads are not a known constant (data-dependent pads are not supported)");
			return false;
		}
		n = (int)pv->n;
		for (int i = 0; i < n; i++)
			p[i] = pv->iv[i].k;
	}
	if (o->np->n_input > 3 && *o->np->input[3]) {
		NERR(o, "pads on selected axes are not supported");
		return false;
	}
	if (n != 2 * x->rank || (x->bax >= 0 && (p[x->bax] || p[x->rank + x->bax]))) {
		NERR(o, "pads must have 2 values per dimension and leave the batch alone");
		return false;
	}
	/* reflect and edge modes pad to the same sizes */
	if (!(l = onnx_layer(o, OP_PAD, &x, 1)))
		return false;
	for (int i = 0; i < x->rank; i++) {
		if (p[i] < 0 || p[x->rank + i] < 0 || p[i] > MAX_DIM || p[x->rank + i] > MAX_DIM) {
			NERR(o, "negative pads (cropping) are not supported");
			return false;
		}
		if (i == x->bax && x->d[i] == 1)
			continue;
		l->attr.target.d[l->attr.target.rank++] = p[i];
		l->attr.pad_hi.d[l->attr.pad_hi.rank++] = p[x->rank + i];
	}
	return finish_like(o, l, x);
}

static bool
lower_softmax(Onnx *o, const Val *x, OpKind op)
{
	int ax = sample_axis(o, x, attr_i(o->np, "axis", o->opset >= 13 ? -1 : 1));
	Layer *l;

	if (ax < -1 || !(l = onnx_layer(o, op, &x, 1)))
		return false;
	l->attr.axis = ax;
	return finish_like(o, l, x);
}

/* DepthToSpace and SpaceToDepth move blocks of b x b between channels
 * and space: a reshape of [N, C, H, W], counted as data movement. */
static bool
lower_depth(Onnx *o, const Val *x, bool to_space)
{
	int64_t b = attr_i(o->np, "blocksize", 0), full[4];

	if (x->rank != 4 || b < 1 || b > MAX_DIM || (x->bax > 0) ||
	    (to_space ? x->d[1] % (b * b) : x->d[2] % b || x->d[3] % b)) {
		NERR(o, "blocksize %" PRId64 " does not fit the input", b);
		return false;
	}
	full[0] = x->d[0];
	full[1] = to_space ? x->d[1] / (b * b) : x->d[1] * b * b;
	full[2] = to_space ? x->d[2] * b : x->d[2] / b;
	full[3] = to_space ? x->d[3] * b : x->d[3] / b;
	return reshape_to(o, x, full, 4, x->bax);
}

/* ---- indexing ----------------------------------------------------------- */

static bool
lower_gather(Onnx *o, const Val *x, const Val *ix)
{
	Layer *l;
	int ax, rank;

	if (!x->act) { /* a table indexed by an activation (an embedding) */
		int a = full_axis(o, attr_i(o->np, "axis", 0), x->shaped ? x->rank : 1);
		const Val *in[2] = { NULL, ix };
		if (a < 0 || !(in[0] = const_operand(o, x)) || !(l = onnx_layer(o, OP_GATHER, in, 2)))
			return false;
		l->attr.axis = a;
		return onnx_finish(o, l, x->rank - 1 + ix->rank, ix->bax < 0 ? -1 : a + ix->bax);
	}
	if ((ax = sample_axis(o, x, attr_i(o->np, "axis", 0))) < -1)
		return false;
	rank = x->rank - 1 + ix->rank;
	if (ix->act) {
		const Val *in[2] = { x, ix };
		if (x->bax >= 0 || ix->bax >= 0) {
			NERR(o, "indices that are activations are not supported with a batch");
			return false;
		}
		if (!(l = onnx_layer(o, OP_GATHER, in, 2)))
			return false;
		l->attr.axis = ax;
		return onnx_finish(o, l, rank, -1);
	}
	if (!ix->shaped || !(l = onnx_layer(o, OP_GATHER, &x, 1)))
		return false;
	l->attr.axis = ax;
	l->attr.target.rank = ix->rank;
	memcpy(l->attr.target.d, ix->d, ix->rank * sizeof ix->d[0]);
	{
		int a = full_axis(o, attr_i(o->np, "axis", 0), x->rank);
		return onnx_finish(o, l, rank,
				   x->bax < 0 ? -1 : x->bax < a ? x->bax : x->bax - 1 + ix->rank);
	}
}

/* A slice of x to the full extents `len` along unchanged axes. */
static bool
slice_to(Onnx *o, const Val *x, const int64_t *len, int out)
{
	Val y = *x;
	Layer *l;

	memcpy(y.d, len, x->rank * sizeof *len);
	if (x->bax >= 0 && len[x->bax] != x->d[x->bax]) {
		NERR(o, "slicing along the batch axis is not supported");
		return false;
	}
	if (!(l = onnx_layer_out(o, OP_SLICE, &x, 1, out)))
		return false;
	l->attr.target = ps_shape(&y);
	return finish_like(o, l, x);
}

static bool
lower_slice(Onnx *o, const Val **in, int nin)
{
	Range3 r;

	if (!slice_ranges(o, in, nin, in[0], &r)) {
		NERR(o, "starts, ends, axes and steps are not known constants (data-dependent slices are not supported)");
		return false;
	}
	return slice_to(o, in[0], r.len, 0);
}

static bool
lower_split(Onnx *o, const Val *x)
{
	int64_t sz[64], len[MAX_RANK + 1], at = 0;
	int nout = (int)o->np->n_output, n = attr_ints(o, "split", sz, 64);
	int a = full_axis(o, attr_i(o->np, "axis", 0), x->rank);
	const Val *s = o->np->n_input > 1 ? lookup(o, o->np->input[1]) : NULL;

	if (a < 0 || n == -2 || nout > 64)
		return false;
	if (n < 0 && s && (s->act || s->n < 0 || s->n > 64)) {
		NERR(o, "split sizes are not known constants (data-dependent splits are not "
			"supported)");
		return false;
	}
	if (n < 0 && s)
		for (n = 0; n < s->n; n++)
			sz[n] = s->iv[n].k;
	if (n < 0) { /* equal parts, the last one smaller */
		int64_t part = (x->d[a] + nout - 1) / nout;
		for (n = 0; n < nout; n++)
			sz[n] = n < nout - 1 ? part : x->d[a] - part * (nout - 1);
	}
	if (n != nout) {
		NERR(o, "%d split sizes for %d outputs", n, nout);
		return false;
	}
	memcpy(len, x->d, x->rank * sizeof *len);
	for (int k = 0; k < nout; k++) {
		len[a] = sz[k];
		at += sz[k];
		if (sz[k] < 1 || at > x->d[a] || a == x->bax) {
			NERR(o, "split %d of size %" PRId64 " does not fit", k, sz[k]);
			return false;
		}
		if (*o->np->output[k] && !slice_to(o, x, len, k))
			return false;
	}
	return true;
}

/* Expand x to the shape in values t: NumPy broadcasting, the batch
 * (k * N on x's batch axis) passed through. */
static bool
lower_expand(Onnx *o, const Val *x, const Val *t)
{
	Val tv = { .shaped = true, .bax = -1 };
	Layer *l;
	int r, bax;

	if (!t || t->act || t->n < 0 || t->n > MAX_RANK + 1) {
		NERR(o, "the target shape is not a known constant (shapes computed from data are not supported)");
		return false;
	}
	tv.rank = (int)t->n;
	r = tv.rank > x->rank ? tv.rank : x->rank;
	bax = x->bax < 0 ? -1 : x->bax + (r - x->rank);
	for (int i = 0; i < tv.rank; i++) {
		int pos = i + (r - tv.rank);
		tv.d[i] = t->iv[i].k;
		if (t->iv[i].batch && pos != bax) {
			NERR(o, "expanding to a batch on another axis is not supported");
			return false;
		}
		if (pos == bax)
			tv.d[i] = 1; /* N, N * factor or 1: the batch stays */
	}
	if (!(l = onnx_layer(o, OP_EXPAND, &x, 1)) || !ps_const(o, &tv, x, &l->attr.target))
		return false;
	return onnx_finish(o, l, r, bax);
}

/* Resize and Upsample: sizes, or scales applied with floor. */
static bool
lower_resize(Onnx *o, const Val **in, int nin)
{
	const Val *x = in[0], *sc = NULL, *sz = NULL;
	int64_t len[MAX_RANK + 1], ax[MAX_RANK + 1];
	int nax = attr_ints(o, "axes", ax, MAX_RANK + 1);
	Val y = *x;
	Layer *l;

	if (strcmp(o->np->op_type, "Upsample") == 0 || o->opset < 11)
		sc = nin > 1 ? in[1] : NULL;
	else
		sc = nin > 2 ? in[2] : NULL, sz = nin > 3 ? in[3] : NULL;
	if (sc && sc->shaped && count(sc) == 0)
		sc = NULL;
	if (strcmp(attr_s(o->np, "keep_aspect_ratio_policy", "stretch"), "stretch") != 0) {
		NERR(o, "keep_aspect_ratio_policy is not supported");
		return false;
	}
	if (nax < 0)
		for (nax = 0; nax < x->rank; nax++)
			ax[nax] = nax;
	memcpy(len, x->d, x->rank * sizeof *len);
	for (int i = 0; i < nax; i++) {
		int a = full_axis(o, ax[i], x->rank);
		if (a < 0)
			return false;
		if (sz && !sz->act && sz->n == nax)
			len[a] = sz->iv[i].batch ? x->d[a] : sz->iv[i].k;
		else if (sc && !sc->act && sc->n == nax)
			len[a] = a == x->bax ? x->d[a] : (int64_t)floor((double)x->d[a] * sc->fv[i]);
		else {
			NERR(o, "scales or sizes are not known constants (data-dependent sizes are not supported)");
			return false;
		}
		if (a == x->bax && (sz ? !sz->iv[i].batch : sc->fv[i] != 1.0)) {
			NERR(o, "resizing the batch axis is not supported");
			return false;
		}
	}
	memcpy(y.d, len, x->rank * sizeof *len);
	if (!(l = onnx_layer(o, OP_RESIZE, &x, 1)))
		return false;
	l->attr.target = ps_shape(&y);
	return finish_like(o, l, x);
}

typedef struct Reduce {
	const char *onnx;
	OpKind op;
	bool axes_input; /* from opset 13 (ReduceSum) or 18 (the rest) */
} Reduce;

static const Reduce reduces[] = {
	{ "ReduceMean", OP_REDUCEMEAN, false },  { "ReduceSum", OP_REDUCESUM, true },
	{ "ReduceMax", OP_REDUCEMAX, false },    { "ReduceMin", OP_REDUCEMIN, false },
	{ "ReduceProd", OP_REDUCEPROD, false },  { "ReduceL1", OP_REDUCEL1, false },
	{ "ReduceL2", OP_REDUCEL2, false },      { "ReduceSumSquare", OP_REDUCESUMSQ, false },
	{ "ReduceLogSum", OP_REDUCELOGSUM, false }, { "ReduceLogSumExp", OP_REDUCELSE, false },
	{ "ArgMax", OP_ARGMAX, false },          { "ArgMin", OP_ARGMIN, false },
};

static bool
lower_reduce(Onnx *o, const Val *x, OpKind op)
{
	int64_t ax[MAX_RANK + 1];
	int n, bax = x->bax, rank = x->rank;
	bool keep = attr_i(o->np, "keepdims", 1) != 0, mark[MAX_RANK + 1] = { false };
	Layer *l;

	if (op == OP_ARGMAX || op == OP_ARGMIN)
		ax[0] = attr_i(o->np, "axis", 0), n = 1;
	else if ((n = axes_of(o, ax, MAX_RANK + 1)) == -2)
		return false;
	if (n <= 0 && attr_i(o->np, "noop_with_empty_axes", 0))
		return lower_unary(o, x, OP_IDENTITY);
	if (n <= 0) /* every axis */
		for (n = 0; n < x->rank; n++)
			ax[n] = n;
	if (!(l = onnx_layer(o, op, &x, 1)))
		return false;
	l->attr.keepdims = keep;
	for (int i = 0; i < n; i++) {
		int a = full_axis(o, ax[i], x->rank);
		if (a < 0)
			return false;
		if (a == x->bax) {
			NERR(o, "reducing over the batch axis is not supported");
			return false;
		}
		if (!mark[a]) {
			mark[a] = true;
			l->attr.target.d[l->attr.target.rank++] = ps_axis(x, a);
		}
	}
	if (!keep) {
		for (int a = 0; a < x->rank; a++)
			if (mark[a]) {
				rank--;
				bax -= bax > a;
			}
	}
	return onnx_finish(o, l, rank, x->bax < 0 ? -1 : bax);
}

/* ---- constants repeated over the batch ---------------------------------- */

bool
onnx_batch_const(Onnx *o, const Val **in, int nin, bool *done)
{
	const char *op = o->np->op_type;
	bool expand = strcmp(op, "Expand") == 0;
	const Val *t = expand ? (nin > 1 ? in[1] : NULL) : (nin > 0 ? in[0] : NULL);
	Val full = { .shaped = true, .bax = -1 };
	Layer *l;
	int r;

	*done = false;
	if ((!expand && strcmp(op, "ConstantOfShape") != 0) || !t || t->n < 0 ||
	    t->n > MAX_RANK + 1)
		return true;
	for (int64_t i = 0; i < t->n; i++)
		if (t->iv[i].batch)
			full.bax = (int)i;
	if (full.bax < 0)
		return true;
	*done = true;
	full.rank = (int)t->n;
	for (int i = 0; i < full.rank; i++)
		full.d[i] = t->iv[i].k;
	if (expand) { /* broadcast with the data's shape */
		const Val *x = in[0];
		if (!x || !x->shaped || x->rank > full.rank) {
			NERR(o, "cannot expand the data to the batch");
			return false;
		}
		for (int i = 0; i < x->rank; i++) {
			int j = i + full.rank - x->rank;
			if (j != full.bax && full.d[j] == 1)
				full.d[j] = x->d[i];
		}
	}
	r = full.rank;
	if (!(l = onnx_layer(o, OP_CONST, NULL, 0)))
		return false;
	l->attr.target = ps_shape(&full);
	return onnx_finish(o, l, r, full.bax);
}

/* ---- everything else ---------------------------------------------------- */

/* An operator with no rule: an opaque layer with the output shape the
 * file's value_info declares, or an error when it declares none. */
static bool
lower_unknown(Onnx *o, const Val *x, const Onnx__GraphProto *gp)
{
	const char *out = o->np->n_output ? o->np->output[0] : "";
	Graph *g = o->g;
	Layer *l;
	int k = 0, skip = o->nobatch ? 0 : 1;

	while (k < g->nunknown && strcmp(g->unknown[k].op, o->np->op_type) != 0)
		k++;
	if (k == g->nunknown) {
		g->unknown = arena_grow(o->a, g->unknown, k, k + 1, sizeof *g->unknown);
		g->unknown[g->nunknown++].op = arena_strdup(o->a, o->np->op_type);
	}
	g->unknown[k].count++;
	if (o->strict) {
		NERR(o, "unknown operator (--strict)");
		return false;
	}
	for (size_t i = 0; i < gp->n_value_info; i++) {
		const Onnx__ValueInfoProto *vi = gp->value_info[i];
		const Onnx__TensorShapeProto *sp;
		Shape s = { 0 };
		if (strcmp(vi->name, out) != 0 || !vi->type || !vi->type->tensor_type ||
		    !(sp = vi->type->tensor_type->shape) || sp->n_dim < (size_t)skip ||
		    sp->n_dim > (size_t)MAX_RANK + skip)
			continue;
		s.rank = (int)sp->n_dim - skip;
		for (int d = 0; d < s.rank; d++) {
			s.d[d] = sp->dim[d + skip]->dim_value;
			if (s.d[d] < 1 || s.d[d] > MAX_DIM)
				goto noshape;
		}
		if (!(l = onnx_layer(o, OP_OPAQUE, &x, 1)))
			return false;
		o->g->tensor[l->out[0]].shape = s;
		shape_elems(&s, &o->g->tensor[l->out[0]].elems);
		return onnx_finish(o, l, s.rank + skip, skip - 1);
	}
noshape:
	NERR(o, "unsupported operator, and the file declares no shape for its output '%s'", out);
	return false;
}

bool
onnx_lower(Onnx *o, const Onnx__GraphProto *gp, const Val **in, int nin)
{
	const char *op = o->np->op_type;
	const Val *x = in[0] && in[0]->act ? in[0] : NULL, *y = nin > 1 ? in[1] : NULL;
	int k;

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
	if (strcmp(op, "Gather") == 0 && in[0] && y)
		return lower_gather(o, in[0], y);
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
	if (strcmp(op, "Reshape") == 0)
		return lower_reshape(o, x, y);
	if (strcmp(op, "Flatten") == 0)
		return lower_flatten(o, x);
	if (strcmp(op, "Squeeze") == 0 || strcmp(op, "Unsqueeze") == 0)
		return lower_squeeze(o, x, op[0] == 'U');
	if (strcmp(op, "Transpose") == 0)
		return lower_transpose(o, x);
	if (strcmp(op, "Concat") == 0)
		return lower_concat(o, in, nin);
	if (strcmp(op, "Pad") == 0)
		return lower_pad(o, x);
	if (strcmp(op, "Softmax") == 0)
		return lower_softmax(o, x, OP_SOFTMAX);
	if (strcmp(op, "LogSoftmax") == 0)
		return lower_softmax(o, x, OP_LOGSOFTMAX);
	if (strcmp(op, "Hardmax") == 0)
		return lower_softmax(o, x, OP_HARDMAX);
	if (strcmp(op, "DepthToSpace") == 0 || strcmp(op, "SpaceToDepth") == 0)
		return lower_depth(o, x, op[0] == 'D');
	if (strcmp(op, "Slice") == 0)
		return lower_slice(o, in, nin);
	if (strcmp(op, "Split") == 0)
		return lower_split(o, x);
	if (strcmp(op, "Expand") == 0)
		return lower_expand(o, x, y);
	if (strcmp(op, "Resize") == 0 || strcmp(op, "Upsample") == 0)
		return lower_resize(o, in, nin);
	for (size_t i = 0; i < NELEM(reduces); i++)
		if (strcmp(op, reduces[i].onnx) == 0)
			return lower_reduce(o, x, reduces[i].op);
	if ((k = find(unary, NELEM(unary), op)) >= 0)
		return lower_unary(o, x, unary[k].op);
	return lower_unknown(o, x, gp);
}
