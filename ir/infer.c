/* infer.c -- the shape rules of every op class: a layer's per-sample output
 * shape and weight shapes from its inputs' shapes and its attributes.
 *
 * passes/shape.c applies it to a whole graph; the ONNX frontend applies it
 * layer by layer while it folds shape computations.  A layer whose shapes
 * do not fit gets a diagnostic at its statement (ODL) or node (ONNX).
 * Conventions follow PyTorch and ONNX: channels first (C x H x W per
 * sample), pads as begins then ends, floor division unless ceil_mode. */
#include "ir/ir.h"
#include "util/checked.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

typedef struct Ctx {
	Graph *g;
	Layer *l;
	Weight w[4];    /* the layer's weights as inferred, then kept */
	int nw;
} Ctx;

#define ERR(c, ...) layer_error((c)->g, (c)->l, __VA_ARGS__)

static const Shape *
in(Ctx *c, int i)
{
	return &c->g->tensor[c->l->in[i]].shape;
}

static void
add_weight(Ctx *c, WeightRole role, int rank, const int64_t *d)
{
	Weight *w = &c->w[c->nw++];

	w->role = role;
	w->shape.rank = rank;
	memcpy(w->shape.d, d, rank * sizeof *d);
}

static void
add_vector(Ctx *c, WeightRole role, int64_t n)
{
	add_weight(c, role, 1, &n);
}

static const char *
fmt(const Shape *s, char *buf)
{
	return shape_str(s, buf, 96);
}

/* The spatial rank of a conv or pool: the input's rank minus channels
 * and the leading dimensions (attr.lead). */
static bool
spatial_dims(Ctx *c, const Shape *x, int *n)
{
	char b[96];
	int lead = c->l->attr.lead;

	*n = x->rank - 1 - lead;
	if (lead < 0 || *n < 1 || *n > MAX_SPATIAL) {
		ERR(c, "input %s must be channels plus 1 to %d spatial dimensions", fmt(x, b),
		    MAX_SPATIAL);
		return false;
	}
	if (c->l->attr.nspatial && c->l->attr.nspatial != *n) {
		ERR(c, "arguments give %d spatial dimensions but the input %s has %d",
		    c->l->attr.nspatial, fmt(x, b), *n);
		return false;
	}
	c->l->attr.nspatial = *n;
	return true;
}

/* Output extent of a sliding window; false when the window does not fit. */
static bool
window(Ctx *c, int i, int64_t len, bool ceil_mode, int64_t *out)
{
	const Attr *a = &c->l->attr;
	int64_t padded = len + a->pad[i] + a->pad[MAX_SPATIAL + i]; /* each <= 2^40 */
	int64_t eff, span;

	/* the dilated extent; over 2^62 it cannot fit any input either */
	if (!ck_mul(a->dilation[i], a->kernel[i] - 1, &eff) || eff > MAX_DIM * 4)
		eff = INT64_MAX;
	else
		eff += 1;
	if (eff > padded) {
		if (eff == INT64_MAX) {
			ERR(c, "kernel %" PRId64 " with dilation %" PRId64 " is larger than the "
			       "padded input %" PRId64 " in spatial dimension %d",
			    a->kernel[i], a->dilation[i], padded, i + 1);
			return false;
		}
		ERR(c, "kernel %" PRId64 " (%" PRId64 " with dilation) is larger than the "
		       "padded input %" PRId64 " in spatial dimension %d",
		    a->kernel[i], eff, padded, i + 1);
		return false;
	}
	span = padded - eff;
	*out = (ceil_mode ? (span + a->stride[i] - 1) / a->stride[i] : span / a->stride[i]) + 1;
	/* PyTorch and ONNX: the last window must start inside the input or
	 * the left padding, not in the right padding */
	if (ceil_mode && (*out - 1) * a->stride[i] >= len + a->pad[i])
		(*out)--;
	return true;
}

static bool
conv(Ctx *c, Shape *y)
{
	const Shape *x = in(c, 0);
	Attr *a = &c->l->attr;
	int64_t cin, f = a->filters, g = a->groups ? a->groups : 1;
	int64_t wd[2 + MAX_SPATIAL];
	int n, k = a->lead;

	if (!spatial_dims(c, x, &n))
		return false;
	cin = x->d[k];
	if (cin % g || f % g) {
		ERR(c, "groups %" PRId64 " must divide the input channels %" PRId64
		       " and the filters %" PRId64, g, cin, f);
		return false;
	}
	*y = *x;
	y->d[k] = f;
	for (int i = 0; i < n; i++) {
		if (c->l->op == OP_CONVT) {
			/* (in - 1) s - pads + d (k - 1) + out_pad + 1, every term <= 2^40 */
			int64_t o, grow;
			bool ok = ck_mul(x->d[k + i + 1] - 1, a->stride[i], &o) &&
				  ck_mul(a->dilation[i], a->kernel[i] - 1, &grow) &&
				  ck_add(o, grow, &o) && o <= 4 * MAX_DIM;
			if (ok)
				o = o - a->pad[i] - a->pad[MAX_SPATIAL + i] + a->out_pad[i] + 1;
			if (!ok || o < 1 || o > MAX_DIM) {
				ERR(c, "output extent in spatial dimension %d is out of range "
				       "(1 to 2^40)", i + 1);
				return false;
			}
			y->d[k + i + 1] = o;
		} else if (!window(c, i, x->d[k + i + 1], false, &y->d[k + i + 1])) {
			return false;
		}
		wd[2 + i] = a->kernel[i];
	}
	/* conv: F x C/g x k...; transposed: C x F/g x k... (PyTorch layout) */
	wd[0] = c->l->op == OP_CONVT ? cin : f;
	wd[1] = c->l->op == OP_CONVT ? f / g : cin / g;
	add_weight(c, W_WEIGHT, 2 + n, wd);
	if (a->bias)
		add_vector(c, W_BIAS, f);
	return true;
}

static bool
pool(Ctx *c, Shape *y)
{
	const Shape *x = in(c, 0);
	int n;

	if (!spatial_dims(c, x, &n))
		return false;
	*y = *x;
	for (int i = 0, k = c->l->attr.lead + 1; i < n; i++)
		if (!window(c, i, x->d[k + i], c->l->attr.ceil_mode, &y->d[k + i]))
			return false;
	return true;
}

static bool
global_pool(Ctx *c, Shape *y)
{
	const Shape *x = in(c, 0);
	char b[96];

	if (x->rank < 2 + c->l->attr.lead) {
		ERR(c, "input %s has no spatial dimensions", fmt(x, b));
		return false;
	}
	*y = *x;
	for (int i = c->l->attr.lead + 1; i < y->rank; i++)
		y->d[i] = 1;
	return true;
}

static bool
adaptive_pool(Ctx *c, Shape *y)
{
	const Shape *x = in(c, 0), *t = c->l->attr.target;
	char b[96];

	if (x->rank < 2) {
		ERR(c, "input %s has no spatial dimensions", fmt(x, b));
		return false;
	}
	if (t->rank == 0) { /* one size for every spatial dimension */
		*y = *x;
		for (int i = 1; i < y->rank; i++)
			y->d[i] = t->d[0];
		return true;
	}
	if (x->rank != t->rank + 1) {
		ERR(c, "output size has %d dimensions but the input %s has %d spatial ones",
		    t->rank, fmt(x, b), x->rank - 1);
		return false;
	}
	y->rank = x->rank;
	y->d[0] = x->d[0];
	memcpy(y->d + 1, t->d, t->rank * sizeof t->d[0]);
	return true;
}

/* Normalizes a per-sample axis (negative counts from the end). */
static bool
axis(Ctx *c, int ax, int rank, int *out)
{
	if (ax < -rank || ax >= rank) {
		ERR(c, "axis %d is out of range for a rank-%d tensor", ax, rank);
		return false;
	}
	*out = ax < 0 ? ax + rank : ax;
	return true;
}

static bool
norm(Ctx *c, Shape *y)
{
	const Shape *x = in(c, 0);
	Layer *l = c->l;
	int ax;

	*y = *x;
	if (l->op != OP_LAYERNORM && l->op != OP_RMSNORM) {
		if (l->attr.lead < 0 || l->attr.lead >= x->rank) {
			ERR(c, "input has no channel dimension %d", l->attr.lead);
			return false;
		}
		add_vector(c, W_SCALE, x->d[l->attr.lead]);
		add_vector(c, W_SHIFT, x->d[l->attr.lead]);
		return true;
	}
	if (!axis(c, l->attr.axis, x->rank, &ax))
		return false;
	add_weight(c, W_SCALE, x->rank - ax, x->d + ax);
	if (l->op == OP_LAYERNORM) /* RMSNorm has a scale only */
		add_weight(c, W_SHIFT, x->rank - ax, x->d + ax);
	return true;
}

/* NumPy broadcasting of two shapes, right-aligned; false if they clash. */
static bool
bcast2(const Shape *a, const Shape *b, Shape *r)
{
	Shape t = { .rank = a->rank > b->rank ? a->rank : b->rank };

	for (int i = 0; i < t.rank; i++) {
		int ia = i - (t.rank - a->rank), ib = i - (t.rank - b->rank);
		int64_t da = ia >= 0 ? a->d[ia] : 1, db = ib >= 0 ? b->d[ib] : 1;
		if (da != db && da != 1 && db != 1)
			return false;
		t.d[i] = da == 1 ? db : da;
	}
	*r = t;
	return true;
}

static bool
broadcast(Ctx *c, Shape *y)
{
	char b1[96], b2[96];

	*y = *in(c, 0);
	for (int k = 1; k < c->l->nin; k++)
		if (!bcast2(y, in(c, k), y)) {
			ERR(c, "shapes %s and %s do not broadcast", fmt(y, b1), fmt(in(c, k), b2));
			return false;
		}
	return true;
}

static bool
concat(Ctx *c, Shape *y)
{
	const Shape *x0 = in(c, 0);
	char b1[96], b2[96];
	int ax;

	if (!axis(c, c->l->attr.axis, x0->rank, &ax))
		return false;
	*y = *x0;
	for (int k = 1; k < c->l->nin; k++) {
		const Shape *x = in(c, k);
		bool same = x->rank == x0->rank;
		for (int i = 0; same && i < x->rank; i++)
			same = i == ax || x->d[i] == x0->d[i];
		if (!same) {
			ERR(c, "cannot concatenate %s and %s along axis %d", fmt(x0, b1),
			    fmt(x, b2), ax);
			return false;
		}
		if (!ck_add(y->d[ax], x->d[ax], &y->d[ax]) || y->d[ax] > MAX_DIM) {
			ERR(c, "concatenated dimension is too large");
			return false;
		}
	}
	return true;
}

static bool
flatten(Ctx *c, Shape *y)
{
	const Shape *x = in(c, 0);
	int ax = c->l->attr.axis;
	int64_t lead = 1, rest = 1;

	if (ax < 0)
		ax += x->rank;
	if (ax < 0 || ax > x->rank) {
		ERR(c, "axis %d is out of range for a rank-%d tensor", c->l->attr.axis, x->rank);
		return false;
	}
	for (int i = 0; i < x->rank; i++)
		*(i < ax ? &lead : &rest) *= x->d[i]; /* bounded by the checked count */
	y->rank = ax ? 2 : 1;
	y->d[0] = ax ? lead : rest;
	y->d[1] = rest;
	return true;
}

/* ONNX Reshape rules: 0 copies the input's dimension, one -1 is inferred. */
static bool
reshape(Ctx *c, Shape *y)
{
	const Shape *x = in(c, 0), *t = c->l->attr.target;
	int64_t have = c->g->tensor[c->l->in[0]].elems, known = 1;
	int infer = -1;
	char b1[96], b2[96];

	*y = *t;
	for (int i = 0; i < t->rank; i++) {
		if (t->d[i] == 0 && i < x->rank)
			y->d[i] = x->d[i];
		if (t->d[i] == -1 && infer < 0) {
			infer = i;
			continue;
		}
		if (y->d[i] < 1 || !ck_mul(known, y->d[i], &known)) {
			ERR(c, "bad target shape [%s]", fmt(t, b2));
			return false;
		}
	}
	if (infer >= 0 && have % known == 0)
		y->d[infer] = have / known;
	if ((infer >= 0 && have % known) || (infer < 0 && known != have) ||
	    y->d[infer < 0 ? 0 : infer] < 1) {
		ERR(c, "cannot reshape %s (%" PRId64 " elements) to [%s]", fmt(x, b1), have,
		    fmt(t, b2));
		return false;
	}
	return true;
}

static bool
transpose(Ctx *c, Shape *y)
{
	const Shape *x = in(c, 0), *p = c->l->attr.target;
	unsigned used = 0;

	if (p->rank != x->rank) {
		ERR(c, "permutation has %d items for a rank-%d tensor", p->rank, x->rank);
		return false;
	}
	y->rank = x->rank;
	for (int i = 0; i < p->rank; i++) {
		if (p->d[i] < 0 || p->d[i] >= x->rank || (used & (1u << p->d[i]))) {
			ERR(c, "bad permutation");
			return false;
		}
		used |= 1u << p->d[i];
		y->d[i] = x->d[p->d[i]];
	}
	return true;
}

/* Constant padding: begins in attr.target, ends in attr.pad_hi. */
static bool
pad(Ctx *c, Shape *y)
{
	const Shape *x = in(c, 0), *lo = c->l->attr.target, *hi = c->l->attr.pad_hi;
	char b[96];

	if (lo->rank != x->rank || hi->rank != x->rank) {
		ERR(c, "pads give %d dimensions for the input %s", lo->rank, fmt(x, b));
		return false;
	}
	y->rank = x->rank;
	for (int i = 0; i < x->rank; i++)
		if (!ck_add(x->d[i], lo->d[i], &y->d[i]) || !ck_add(y->d[i], hi->d[i], &y->d[i])) {
			ERR(c, "padded dimension overflows");
			return false;
		}
	return true;
}

/* Linear layer on the last dimension: [..., K] -> [..., F], W is F x K. */
static bool
fc(Ctx *c, Shape *y)
{
	const Shape *x = in(c, 0);
	int64_t wd[2];

	if (x->rank < 1) {
		ERR(c, "input is a scalar");
		return false;
	}
	wd[0] = c->l->attr.filters;
	wd[1] = x->d[x->rank - 1];
	*y = *x;
	y->d[y->rank - 1] = c->l->attr.filters;
	add_weight(c, W_WEIGHT, 2, wd);
	if (c->l->attr.bias)
		add_vector(c, W_BIAS, c->l->attr.filters);
	return true;
}

/* Batched matrix product of two activations, NumPy matmul rules. */
static bool
matmul(Ctx *c, Shape *y)
{
	Shape a = *in(c, 0), b = *in(c, 1), ba, bb;
	char b1[96], b2[96];
	bool va = a.rank == 1, vb = b.rank == 1;

	if (va) /* [K] -> [1, K] */
		a = (Shape){ 2, { 1, a.d[0] } };
	if (vb) /* [K] -> [K, 1] */
		b = (Shape){ 2, { b.d[0], 1 } };
	if (a.d[a.rank - 1] != b.d[b.rank - 2]) {
		ERR(c, "inner dimensions of %s and %s differ", fmt(in(c, 0), b1),
		    fmt(in(c, 1), b2));
		return false;
	}
	ba = a, bb = b;
	ba.rank -= 2, bb.rank -= 2;
	if (!bcast2(&ba, &bb, y)) {
		ERR(c, "batch dimensions of %s and %s do not broadcast", fmt(in(c, 0), b1),
		    fmt(in(c, 1), b2));
		return false;
	}
	if (!va)
		y->d[y->rank++] = a.d[a.rank - 2];
	if (!vb)
		y->d[y->rank++] = b.d[b.rank - 1];
	return true;
}

/* Element-wise with one activation: the input broadcast with the
 * constant operand's shape (attr.target; rank 0, a scalar, for ODL). */
static bool
unary(Ctx *c, Shape *y)
{
	char b1[96], b2[96];

	if (!bcast2(in(c, 0), c->l->attr.target, y)) {
		ERR(c, "shapes %s and %s do not broadcast", fmt(in(c, 0), b1),
		    fmt(c->l->attr.target, b2));
		return false;
	}
	return true;
}

/* Reductions: attr.target lists the reduced axes (rank 0: all). */
static bool
reduce(Ctx *c, Shape *y)
{
	const Shape *x = in(c, 0), *ax = c->l->attr.target;
	bool red[MAX_RANK] = { false };

	for (int i = 0; i < ax->rank; i++) {
		if (ax->d[i] < 0 || ax->d[i] >= x->rank) {
			ERR(c, "axis %" PRId64 " is out of range for a rank-%d tensor", ax->d[i],
			    x->rank);
			return false;
		}
		red[ax->d[i]] = true;
	}
	y->rank = 0;
	for (int i = 0; i < x->rank; i++) {
		bool r = ax->rank == 0 || red[i];
		if (!r)
			y->d[y->rank++] = x->d[i];
		else if (c->l->attr.keepdims)
			y->d[y->rank++] = 1;
	}
	return true;
}

/* Gather along attr.axis: the indices' shape (a second input, or
 * attr.target for constant indices) replaces that dimension. */
static bool
gather(Ctx *c, Shape *y)
{
	const Shape *x = in(c, 0), *ix = c->l->nin > 1 ? in(c, 1) : c->l->attr.target;
	int ax;

	if (!axis(c, c->l->attr.axis, x->rank, &ax))
		return false;
	if (x->rank - 1 + ix->rank > MAX_RANK) {
		ERR(c, "the result has more than %d dimensions", MAX_RANK);
		return false;
	}
	y->rank = 0;
	for (int i = 0; i < ax; i++)
		y->d[y->rank++] = x->d[i];
	for (int i = 0; i < ix->rank; i++)
		y->d[y->rank++] = ix->d[i];
	for (int i = ax + 1; i < x->rank; i++)
		y->d[y->rank++] = x->d[i];
	return true;
}

/* Slice: the frontend computed the extents (attr.target); each fits. */
static bool
slice(Ctx *c, Shape *y)
{
	const Shape *x = in(c, 0), *t = c->l->attr.target;
	char b1[96], b2[96];

	for (int i = 0; i < t->rank && t->rank == x->rank; i++)
		if (t->d[i] > x->d[i])
			goto bad;
	if (t->rank != x->rank)
		goto bad;
	*y = *t;
	return true;
bad:
	ERR(c, "slice %s does not fit in the input %s", fmt(t, b2), fmt(x, b1));
	return false;
}

static bool
expand(Ctx *c, Shape *y)
{
	char b1[96], b2[96];

	if (!bcast2(in(c, 0), c->l->attr.target, y)) {
		ERR(c, "cannot expand %s to %s", fmt(in(c, 0), b1), fmt(c->l->attr.target, b2));
		return false;
	}
	return true;
}

/* Resize, tile, gatherelements: the frontend computed the output
 * extents; the rank stays. */
static bool
resize(Ctx *c, Shape *y)
{
	char b1[96], b2[96];

	if (c->l->attr.target->rank != in(c, 0)->rank) {
		ERR(c, "output size %s does not match the input %s", fmt(c->l->attr.target, b2),
		    fmt(in(c, 0), b1));
		return false;
	}
	*y = *c->l->attr.target;
	return true;
}

static bool
infer(Ctx *c, Shape *y)
{
	switch (op_info[c->l->op].cls) {
	case OPC_CONV: return conv(c, y);
	case OPC_FC: return fc(c, y);
	case OPC_MATMUL: return matmul(c, y);
	case OPC_POOL: return pool(c, y);
	case OPC_GPOOL: return global_pool(c, y);
	case OPC_ADAPTPOOL: return adaptive_pool(c, y);
	case OPC_NORM: return norm(c, y);
	case OPC_UNARY: return unary(c, y);
	case OPC_SOFTMAX: {
		int ax;
		*y = *in(c, 0);
		return axis(c, c->l->attr.axis, y->rank, &ax);
	}
	case OPC_BINARY: return broadcast(c, y);
	case OPC_CONCAT: return concat(c, y);
	case OPC_FLATTEN: return flatten(c, y);
	case OPC_RESHAPE: return reshape(c, y);
	case OPC_TRANSPOSE: return transpose(c, y);
	case OPC_PAD: return pad(c, y);
	case OPC_CONST: *y = *c->l->attr.target; return true;
	case OPC_REDUCE: return reduce(c, y);
	case OPC_GATHER: return gather(c, y);
	case OPC_SLICE: return slice(c, y);
	case OPC_EXPAND: return expand(c, y);
	case OPC_RESIZE: return resize(c, y);
	case OPC_OPAQUE:
		break; /* layer_infer does not get here */
	}
	die("bad op class");
}

/* Checks a freshly inferred shape: no empty or absurd dimension, and an
 * element count that fits 64 bits. */
static bool
settle(Ctx *c, Shape *s, int64_t *elems, const char *what)
{
	char b[96];

	for (int i = 0; i < s->rank; i++)
		if (s->d[i] < 1 || s->d[i] > MAX_DIM) {
			ERR(c, "%s %s has a dimension out of range (1 to 2^40)", what, fmt(s, b));
			return false;
		}
	if (!shape_elems(s, elems)) {
		ERR(c, "%s %s has more elements than 64 bits can count", what, fmt(s, b));
		return false;
	}
	return true;
}

bool
layer_infer(Graph *g, int l, const bool *bad)
{
	Ctx c = { .g = g, .l = &g->layer[l] };
	Layer *ly = c.l;
	Shape y = { 0 };
	int64_t n;
	bool ok;

	for (int i = 0; i < ly->nin; i++)
		if (bad && bad[ly->in[i]])
			return false;
	if (ly->op == OP_OPAQUE)
		return true; /* the frontend set the output shapes */
	memset(c.w, 0, sizeof c.w); /* compared whole by graph_weights */
	ok = infer(&c, &y) && settle(&c, &y, &n, "output");
	for (int i = 0; ok && i < c.nw; i++)
		ok = settle(&c, &c.w[i].shape, &c.w[i].elems, "weight");
	ly->w = graph_weights(g, c.w, c.nw);
	ly->nw = c.nw;
	if (!ok)
		return false;
	for (int i = 0; i < ly->nout; i++) {
		g->tensor[ly->out[i]].shape = y;
		g->tensor[ly->out[i]].elems = n;
	}
	return true;
}
