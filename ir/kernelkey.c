/* kernelkey.c -- a layer's kernel key, and keys written and compared
 * (ir/kernels.h; docs/kernel-table.md says what each item is and which
 * layers have none).  Pure: a layer, a precision and a layout in, a key
 * out. */
#include "ir/kernels.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static const char *const class_name[KC_COUNT] = {
	[KC_CONV] = "conv", [KC_GEMM] = "gemm", [KC_ATTENTION] = "attention",
	[KC_ELEMENTWISE] = "elementwise", [KC_NORM] = "norm", [KC_POOL] = "pool",
};
static const char *const layout_name[KL_COUNT] = {
	[KL_ANY] = "-", [KL_NCHW] = "NCHW", [KL_NHWC] = "NHWC",
};
static const char *const dtype_name[DT_COUNT] = {
	[DT_FP32] = "fp32", [DT_TF32] = "tf32", [DT_FP16] = "fp16", [DT_BF16] = "bf16",
	[DT_FP8] = "fp8",
};

static bool
parse_name(const char *s, const char *const *names, int n, int *out)
{
	for (int i = 0; i < n; i++)
		if (strcmp(s, names[i]) == 0) {
			*out = i;
			return true;
		}
	return false;
}

const char *
kernel_class_name(KernelClass c)
{
	return (unsigned)c < KC_COUNT ? class_name[c] : "?";
}

bool
kernel_class_parse(const char *s, KernelClass *c)
{
	int i;

	return parse_name(s, class_name, KC_COUNT, &i) && (*c = (KernelClass)i, true);
}

const char *
kernel_layout_name(KernelLayout l)
{
	return (unsigned)l < KL_COUNT ? layout_name[l] : "?";
}

bool
kernel_layout_parse(const char *s, KernelLayout *l)
{
	int i;

	return parse_name(s, layout_name, KL_COUNT, &i) && (*l = (KernelLayout)i, true);
}

const char *
kernel_dtype_name(Dtype dt)
{
	return (unsigned)dt < DT_COUNT ? dtype_name[dt] : "?";
}

bool
kernel_dtype_parse(const char *s, Dtype *dt)
{
	int i;

	return parse_name(s, dtype_name, DT_COUNT, &i) && (*dt = (Dtype)i, true);
}

/* ---- the schema ----------------------------------------------------------- */

#define N(a) ((int)(sizeof a / sizeof a[0]))
static const KernelItem conv_items[] = {
	{ "c", 1 }, { "h", 1 }, { "w", 1 }, { "k", 1 }, { "r", 1 }, { "s", 1 },
	{ "stride", 2 }, { "pad", 4 }, { "groups", 1 }, { "dilation", 2 },
};
static const KernelItem gemm_items[] = { { "m", 1 }, { "n", 1 }, { "k", 1 }, { "batch", 1 } };
static const KernelItem attention_items[] = {
	{ "heads", 1 }, { "s", 1 }, { "kv", 1 }, { "d", 1 },
};
static const KernelItem unary_items[] = { { "elements", 1 } };
static const KernelItem binary_items[] = { { "elements", 1 }, { "other", 1 } };
static const KernelItem norm_items[] = { { "c", 1 }, { "elements", 1 } };
static const KernelItem window_items[] = {
	{ "c", 1 }, { "h", 1 }, { "w", 1 }, { "r", 1 }, { "s", 1 }, { "stride", 2 },
	{ "pad", 4 }, { "ceil", 1 },
};
static const KernelItem global_items[] = { { "c", 1 }, { "h", 1 }, { "w", 1 } };
static const KernelItem adaptive_items[] = {
	{ "c", 1 }, { "h", 1 }, { "w", 1 }, { "oh", 1 }, { "ow", 1 },
};

/* The operators with an elementwise key: every unary and binary one that
 * computes (not a cast, a view, a scatter or a lookup). */
static bool
elementwise_op(int op)
{
	OpClass c = op_info[op].cls;

	if (op == OP_CAST || op == OP_IDENTITY || op == OP_SCATTER)
		return false;
	return c == OPC_UNARY || c == OPC_BINARY;
}

int
kernel_op_class(int op)
{
	if (op < 0 || op >= OP_COUNT)
		return -1;
	switch (op_info[op].cls) {
	case OPC_NORM:
	case OPC_SOFTMAX:
		return op == OP_HARDMAX ? KC_ELEMENTWISE : KC_NORM;
	case OPC_POOL:
	case OPC_GPOOL:
	case OPC_ADAPTPOOL:
		return KC_POOL;
	default:
		return elementwise_op(op) ? KC_ELEMENTWISE : -1;
	}
}

const KernelItem *
kernel_schema(KernelClass c, int op, int *n)
{
	switch (c) {
	case KC_CONV: *n = N(conv_items); return conv_items;
	case KC_GEMM: *n = N(gemm_items); return gemm_items;
	case KC_ATTENTION: *n = N(attention_items); return attention_items;
	default: break;
	}
	if (kernel_op_class(op) != (int)c)
		return NULL;
	switch (op_info[op].cls) {
	case OPC_BINARY: *n = N(binary_items); return binary_items;
	case OPC_NORM: case OPC_SOFTMAX: *n = N(norm_items); return norm_items;
	case OPC_POOL: *n = N(window_items); return window_items;
	case OPC_GPOOL: *n = N(global_items); return global_items;
	case OPC_ADAPTPOOL: *n = N(adaptive_items); return adaptive_items;
	default: *n = N(unary_items); return unary_items;
	}
}

/* ---- a layer's key ------------------------------------------------------ */

static int64_t
elems_from(const Shape *s, int from)
{
	int64_t e = 1;

	for (int i = from; i < s->rank; i++)
		e *= s->d[i];
	return e;
}

static int64_t
or1(int64_t v)
{
	return v > 0 ? v : 1;
}

/* A 1- or 2-D window's numbers as a 2-D one's (h, w, r, s, stride,
 * pad, dilation): a 1-D window is one row.  False for 3-D. */
static bool
window2(const Layer *l, const Shape *x, bool pool, int64_t *hw, int64_t *rs, int64_t *st,
	int64_t *pad, int64_t *dil)
{
	int ns = l->attr.nspatial, ch = l->attr.lead;

	if (ns < 1 || ns > 2 || x->rank != ch + 1 + ns)
		return false;
	for (int j = 0; j < 2; j++) {
		int i = ns == 2 ? j : 0;
		bool real = ns == 2 || j == 1; /* a 1-D window is the row's */
		hw[j] = real ? x->d[ch + 1 + i] : 1;
		rs[j] = real ? or1(l->attr.kernel[i]) : 1;
		st[j] = real ? (l->attr.stride[i] > 0 ? l->attr.stride[i] : pool ? rs[j] : 1) : 1;
		pad[j] = real ? l->attr.pad[i] : 0;            /* begins: top, left */
		pad[2 + j] = real ? l->attr.pad[MAX_SPATIAL + i] : 0; /* ends */
		dil[j] = real && l->attr.dilation ? or1(l->attr.dilation[i]) : 1;
	}
	return true;
}

/* Images one sample holds: its leading dimensions (ONNX merges frames or
 * windows with the batch there). */
static int64_t
images(const Shape *x, int lead)
{
	int64_t n = 1;

	for (int i = 0; i < lead && i < x->rank; i++)
		n *= x->d[i];
	return n;
}

static bool
conv_key(const Graph *g, const Layer *l, KernelKey *k, int64_t *per_sample)
{
	const Shape *x = &g->tensor[l->in[0]].shape, *y = &g->tensor[l->out[0]].shape;
	int64_t hw[2], rs[2], st[2], pad[4], dil[2];

	if (l->op != OP_CONV || !window2(l, x, false, hw, rs, st, pad, dil) ||
	    y->rank <= l->attr.lead)
		return false;
	*per_sample = images(x, l->attr.lead);
	k->d[0] = x->d[l->attr.lead];
	k->d[1] = hw[0], k->d[2] = hw[1];
	k->d[3] = y->d[l->attr.lead];
	k->d[4] = rs[0], k->d[5] = rs[1];
	k->d[6] = st[0], k->d[7] = st[1];
	memcpy(&k->d[8], pad, sizeof pad);
	k->d[12] = or1(l->attr.groups);
	k->d[13] = dil[0], k->d[14] = dil[1];
	return true;
}

static bool
pool_key(const Graph *g, const Layer *l, KernelKey *k, int64_t *per_sample)
{
	const Shape *x = &g->tensor[l->in[0]].shape, *y = &g->tensor[l->out[0]].shape;
	int ch = l->attr.lead, ns = x->rank - ch - 1;
	int64_t hw[2], rs[2], st[2], pad[4], dil[2];

	if (ns < 1 || ns > 2 || y->rank != x->rank)
		return false;
	*per_sample = images(x, ch);
	k->d[0] = x->d[ch];
	k->d[1] = ns == 2 ? x->d[ch + 1] : 1;
	k->d[2] = x->d[ch + ns];
	switch (op_info[l->op].cls) {
	case OPC_GPOOL:
		return true;
	case OPC_ADAPTPOOL:
		k->d[3] = ns == 2 ? y->d[ch + 1] : 1;
		k->d[4] = y->d[ch + ns];
		return true;
	default:
		if (!window2(l, x, true, hw, rs, st, pad, dil))
			return false;
		k->d[3] = rs[0], k->d[4] = rs[1];
		k->d[5] = st[0], k->d[6] = st[1];
		memcpy(&k->d[7], pad, sizeof pad);
		k->d[11] = l->attr.ceil_mode;
		return true;
	}
}

int
layer_operator(const Layer *l)
{
	switch (l->pattern) {
	case PAT_LAYERNORM: return OP_LAYERNORM;
	case PAT_GELU: return OP_GELU;
	case PAT_GATED: return l->op == OP_HARDSIGMOID ? OP_HARDSWISH : OP_SILU;
	default: return l->op;
	}
}

static bool
other_key(const Graph *g, const Layer *l, KernelKey *k, int64_t *per_sample)
{
	const Shape *x = &g->tensor[l->in[0]].shape;
	const Tensor *y = &g->tensor[l->out[0]];
	int op = layer_operator(l), c = kernel_op_class(op);

	if (c < 0)
		return false;
	k->cls = (KernelClass)c;
	k->op = op;
	switch (c) {
	case KC_POOL:
		return pool_key(g, l, k, per_sample);
	case KC_NORM: {
		int64_t in = elems_from(x, 0);
		if (op == OP_LAYERNORM && l->pattern == PAT_LAYERNORM) {
			/* the reduction's first layer: the rows it averages */
			k->d[0] = y->elems > 0 ? in / y->elems : 1;
		} else if (op == OP_LAYERNORM) {
			k->d[0] = elems_from(x, l->attr.axis < 0 ? 0 : l->attr.axis);
		} else if (op_info[op].cls == OPC_SOFTMAX) {
			int ax = l->attr.axis < 0 ? x->rank + l->attr.axis : l->attr.axis;
			k->d[0] = ax >= 0 && ax < x->rank ? x->d[ax] : 1;
		} else { /* batch and instance norm: the channels */
			*per_sample = images(x, l->attr.lead);
			k->d[0] = x->rank > l->attr.lead ? x->d[l->attr.lead] : 1;
			in = elems_from(x, l->attr.lead);
		}
		k->d[1] = in;
		return true;
	}
	default: /* elementwise: the output's elements, the second operand's */
		k->d[0] = y->elems;
		if (op_info[op].cls == OPC_BINARY)
			k->d[1] = l->nin > 1 ? g->tensor[l->in[1]].elems : y->elems;
		return true;
	}
}

/* Two activations multiplied ([..., m, k] x [..., k, n]); the product
 * QK^T of an attention keys the whole attention (its softmax and its
 * product with V have no key of their own). */
static bool
matmul_key(const Graph *g, const Layer *l, KernelKey *k)
{
	const Shape *a = &g->tensor[l->in[0]].shape, *y = &g->tensor[l->out[0]].shape;
	const Shape *b = l->nin > 1 ? &g->tensor[l->in[1]].shape : NULL;
	int64_t m, kk, n;

	if (!b || a->rank < 2 || b->rank < 2 || y->rank < 2)
		return false;
	m = a->d[a->rank - 2], kk = a->d[a->rank - 1], n = b->d[b->rank - 1];
	if (m < 1 || n < 1)
		return false;
	if (l->attn == ATTN_QK) {
		k->cls = KC_ATTENTION;
		k->d[0] = elems_from(y, 0) / (m * n);  /* heads */
		k->d[1] = m, k->d[2] = n, k->d[3] = kk;
		return true;
	}
	k->cls = KC_GEMM;
	k->d[0] = m, k->d[1] = n, k->d[2] = kk;
	k->d[3] = elems_from(y, 0) / (m * n);
	return true;
}

bool
kernel_key(const Graph *g, int i, Precision prec, bool channels_last, KernelKey *k,
	   int64_t *per_sample)
{
	const Layer *l = &g->layer[i];
	OpClass c = op_info[l->op].cls;
	const KernelItem *items;
	bool ok, matmul = c == OPC_CONV || c == OPC_FC || c == OPC_MATMUL;
	int n;

	memset(k, 0, sizeof *k);
	k->op = -1;
	*per_sample = 1;
	if (l->nin < 1 || l->nout < 1 || l->pattern == PAT_PART ||
	    l->attn == ATTN_CORE || l->attn == ATTN_PV)
		return false;
	if (c == OPC_CONV) {
		k->cls = KC_CONV;
		ok = conv_key(g, l, k, per_sample);
	} else if (c == OPC_FC) {
		const Shape *x = &g->tensor[l->in[0]].shape, *y = &g->tensor[l->out[0]].shape;
		k->cls = KC_GEMM;
		k->d[1] = y->d[y->rank - 1], k->d[2] = x->d[x->rank - 1];
		k->d[0] = k->d[2] > 0 ? elems_from(x, 0) / k->d[2] : 0;
		k->d[3] = 1;
		ok = x->rank >= 1 && y->rank >= 1 && k->d[0] > 0;
	} else if (c == OPC_MATMUL) {
		ok = matmul_key(g, l, k);
	} else {
		ok = other_key(g, l, k, per_sample);
	}
	if (!ok || !(items = kernel_schema(k->cls, k->op, &n)))
		return false;
	k->nd = 0;
	for (int j = 0; j < n; j++)
		k->nd += items[j].arity;
	for (int j = 0; j < k->nd; j++)
		if (k->d[j] < 0)
			return false;
	/* the number format: products at the precision's; the others at its
	 * other format, or autocast's 16 bits where their output is low */
	k->dt = precision_dtype(prec, matmul);
	if (!matmul && l->low && precision_info[prec].low)
		k->dt = precision_dtype(prec, true) == DT_BF16 ? DT_BF16 : DT_FP16;
	k->layout = k->cls == KC_CONV || k->cls == KC_POOL ||
			    (k->cls == KC_NORM && (k->op == OP_BATCHNORM || k->op == OP_INSTNORM))
			    ? (channels_last ? KL_NHWC : KL_NCHW)
			    : KL_ANY;
	return true;
}

static int64_t
ceil_div(int64_t a, int64_t b)
{
	return (a + b - 1) / b;
}

bool
kernel_key_shard(const KernelKey *k, GridDim how, int64_t ways, KernelKey *part)
{
	KernelKey p = *k;

	if (ways < 1)
		return false;
	if (ways == 1) {
		*part = p;
		return true;
	}
	switch (how) {
	case DIM_FILTER:
	case DIM_CHANNEL:
		if (k->cls == KC_CONV && k->d[12] > 1) { /* whole groups on a GPU */
			if (k->d[12] % ways)
				return false;
			p.d[0] = k->d[0] / ways, p.d[3] = k->d[3] / ways, p.d[12] = k->d[12] / ways;
		} else if (k->cls == KC_CONV) {
			int at = how == DIM_FILTER ? 3 : 0; /* k, or c */
			p.d[at] = ceil_div(k->d[at], ways);
		} else if (k->cls == KC_GEMM && k->d[3] == 1) { /* a linear layer */
			int at = how == DIM_FILTER ? 1 : 2; /* n, or k */
			p.d[at] = ceil_div(k->d[at], ways);
		} else {
			return false;
		}
		break;
	case DIM_SPATIAL:
		if (k->cls == KC_CONV || k->cls == KC_POOL) {
			if (k->d[1] < ways)
				return false;
			p.d[1] = ceil_div(k->d[1], ways);
		} else if (k->cls == KC_ELEMENTWISE) {
			if (k->nd > 1 && k->d[1] == k->d[0])
				p.d[1] = ceil_div(k->d[0], ways);
			p.d[0] = ceil_div(k->d[0], ways);
		} else if (k->cls == KC_NORM) {
			p.d[1] = ceil_div(k->d[1], ways);
		} else {
			return false;
		}
		break;
	default:
		return false;
	}
	for (int i = 0; i < p.nd; i++)
		if (p.d[i] < 0 || (p.d[i] == 0 && k->d[i] > 0))
			return false;
	*part = p;
	return true;
}

int
kernel_key_cmp(const KernelKey *a, const KernelKey *b)
{
	if (a->cls != b->cls)
		return a->cls < b->cls ? -1 : 1;
	if (a->dt != b->dt)
		return a->dt < b->dt ? -1 : 1;
	if (a->layout != b->layout)
		return a->layout < b->layout ? -1 : 1;
	if (a->op != b->op)
		return a->op < b->op ? -1 : 1;
	for (int i = 0; i < KEY_DIMS; i++)
		if (a->d[i] != b->d[i])
			return a->d[i] < b->d[i] ? -1 : 1;
	return 0;
}

void
kernel_key_text(const KernelKey *k, char *buf, size_t size)
{
	int n, at = 0;
	const KernelItem *items = kernel_schema(k->cls, k->op, &n);
	size_t len = 0;

	buf[0] = '\0';
	if (!items)
		return;
	if (k->op >= 0)
		len += (size_t)snprintf(buf, size, "op=%s", op_name((OpKind)k->op));
	for (int j = 0; j < n && len < size; j++) {
		len += (size_t)snprintf(buf + len, size - len, "%s%s=", len ? " " : "",
					items[j].name);
		for (int v = 0; v < items[j].arity && len < size; v++)
			len += (size_t)snprintf(buf + len, size - len, "%s%" PRId64, v ? "x" : "",
						k->d[at++]);
	}
}
