/* memory.c -- what training keeps from forward for backward, per sample,
 * as PyTorch 1.13's autograd saves it (docs/counting.md, "Activation
 * memory kept for backward").
 *
 * Each layer kind has one rule, the `save` column of ir/ops.def: its
 * inputs (S_IN), its output (S_OUT), int64 indices (S_IDX: max pooling),
 * a 1-byte mask (S_MASK: dropout, as CUDA saves it), per-channel (S_CSTAT:
 * batch norm, batch-independent) or per-row statistics (S_RSTAT: layer and
 * instance norm), or its input when a trained operand multiplies it
 * (S_PIN).  Views (S_VIEW) share their input's memory: keeping a view
 * keeps its root.  A kept tensor is counted once, however many layers
 * need it, on the layer that made it; the indices, masks and statistics
 * count on the layer that saves them.  Kept graph inputs count in act_*
 * but not in saved_bytes (autograd's figure leaves the input batch out);
 * tensors made from constants only (the model's own tensors) count
 * nowhere.
 *
 * ONNX decompositions are counted as the operator they spell, because that
 * is what PyTorch runs: LayerNorm written as ReduceMean, Sub, Pow,
 * ReduceMean, Add, Sqrt, Div (opset < 17), which saves its input and two
 * statistics per row; the exact GELU x * (1 + erf(x / sqrt 2)) / 2, SiLU
 * x * sigmoid(x) and Hardswish x * hardsigmoid(x), which save their input.
 * A pattern whose inner tensors have readers outside it is counted node by
 * node.
 *
 * An attention a fused kernel can run (Layer.attn; PyTorch 2's
 * scaled_dot_product_attention, flash or memory-efficient) keeps neither
 * its scores nor its probabilities: only Q, K and V and, per query row,
 * the softmax's log-sum-exp in fp32, which its backward uses to compute
 * them again.  Both counts are kept (Graph.keep[1]); the implementation
 * says which applies (model/memuse.c).
 *
 * The pass knows no precision: it counts elements, under both regimes
 * (KeepRegime) in one walk -- every activation at the precision's width,
 * and as torch.autocast runs (mark_low: which tensors are 16-bit, and the
 * casts each layer saves instead of a tensor of the other width) -- with
 * the bytes whose width what is stored fixes (indices, masks, fp32
 * statistics) as bytes.  The analysis prices them at its precision
 * (kept_bytes; model/memuse.c, which also finds the backward pass's peak
 * of gradients in flight, as its argmax moves with the widths).  Every
 * count is checked at the widest element any precision stores, so that a
 * model is refused the same way at every precision (docs/limits.md). */
#include <stdlib.h>
#include <string.h>

#include "passes/passes.h"
#include "util/checked.h"

typedef struct Mem {
	Graph *g;
	size_t *first;       /* layers reading tensor t: users[first[t]..first[t+1]) */
	int *users;
	bool *fused;         /* the layer's rule is replaced by its pattern's */
	int64_t *idx;        /* per layer: int64 indices saved */
	int64_t *mask;       /* per layer: 1-byte mask elements saved */
	int64_t *stat;       /* per layer: fp32 statistics saved per sample */
	int64_t fixed;       /* fp32 statistics saved whatever the batch */
	bool sdpa;           /* count the attentions as one kernel (Layer.attn) */
	bool *low;           /* autocast: the tensor is 16-bit */
	bool *asaved;        /* autocast: the tensor is kept (Tensor.saved is
	                        the plain regime's) */
	int64_t *cast;       /* per layer, autocast: elements of the input
	                        copies it casts and saves instead of an input
	                        of the other width (16-bit for a lowering op,
	                        fp32 for a widening one) */
	bool ok;             /* no count overflowed */
} Mem;

/* acc += a * b, noting an overflow. */
static void
add(Mem *m, int64_t *acc, int64_t a, int64_t b)
{
	if (!ck_muladd(acc, a, b))
		m->ok = false;
}

/* Who reads each tensor, and which tensors only constants make. */
static void
index_uses(Mem *m)
{
	Graph *g = m->g;
	size_t *fill = xcalloc((size_t)g->ntensor + 1, sizeof *fill);

	for (int i = 0; i < g->nlayer; i++)
		for (int k = 0; k < g->layer[i].nin; k++)
			m->first[g->layer[i].in[k] + 1]++;
	for (int t = 0; t < g->ntensor; t++)
		m->first[t + 1] += m->first[t];
	for (int i = 0; i < g->nlayer; i++) {
		const Layer *l = &g->layer[i];
		bool k = true; /* a const layer reads nothing */
		for (int j = 0; j < l->nin; j++) {
			int t = l->in[j];
			m->users[m->first[t] + fill[t]++] = i;
			k = k && g->tensor[t].konst;
		}
		for (int j = 0; j < l->nout; j++)
			g->tensor[l->out[j]].konst = k;
	}
	free(fill);
}

/* The one layer reading tensor t when it is of kind op, else -1. */
static int
sole_user(const Mem *m, int t, OpKind op)
{
	int u;

	if (m->first[t + 1] - m->first[t] != 1)
		return -1;
	u = m->users[m->first[t]];
	return m->g->layer[u].op == op ? u : -1;
}

/* The layer that made tensor t when it is of kind op, else -1. */
static int
producer(const Mem *m, int t, OpKind op)
{
	int p = m->g->tensor[t].producer;

	return p >= 0 && m->g->layer[p].op == op ? p : -1;
}

/* Layer.fuse: the patterns a stack may fuse (ir/graph.h), by who reads
 * what. */
static void
mark_fusable(Mem *m)
{
	Graph *g = m->g;

	for (int i = 0; i < g->nlayer; i++)
		g->layer[i].fuse = 0;
	for (int i = 0; i < g->nlayer; i++) {
		Layer *l = &g->layer[i];
		int r, a, c;
		if (l->op == OP_CONV && l->nout == 1 &&
		    (c = sole_user(m, l->out[0], OP_BATCHNORM)) >= 0 &&
		    g->layer[c].in[0] == l->out[0])
			l->fuse |= FUSE_CONV_BN, g->layer[c].fuse |= FUSE_BN_OF_CONV;
		if (l->op != OP_BATCHNORM || l->nout != 1)
			continue;
		if ((r = sole_user(m, l->out[0], OP_RELU)) >= 0) {
			int y = g->layer[r].out[0];
			bool convs = m->first[y + 1] > m->first[y];
			l->fuse |= FUSE_BN_RELU, g->layer[r].fuse |= FUSE_RELU_OF_BN;
			for (size_t u = m->first[y]; u < m->first[y + 1]; u++)
				convs = convs && g->layer[m->users[u]].op == OP_CONV &&
					g->layer[m->users[u]].in[0] == y;
			if (convs && (l->fuse & FUSE_BN_OF_CONV)) {
				l->fuse |= FUSE_BN_INTO_CONV;
				g->layer[r].fuse |= FUSE_RELU_INTO_CONV;
			}
		} else if ((a = sole_user(m, l->out[0], OP_ADD)) >= 0 && g->layer[a].nin == 2 &&
			   !(g->layer[a].fuse & FUSE_ADD_OF_BN) &&
			   (r = sole_user(m, g->layer[a].out[0], OP_RELU)) >= 0 &&
			   g->tensor[g->layer[a].in[0]].elems ==
				   g->tensor[g->layer[a].in[1]].elems) {
			/* the add's first input a batch norm's where both are */
			int other = g->layer[a].in[g->layer[a].in[0] == l->out[0]];
			int p = g->tensor[other].producer;
			if (g->layer[a].in[0] != l->out[0] && p >= 0 &&
			    g->layer[p].op == OP_BATCHNORM && sole_user(m, other, OP_ADD) == a)
				continue; /* the other batch norm takes it */
			l->fuse |= FUSE_BN_ADD;
			g->layer[a].fuse |= FUSE_ADD_OF_BN, g->layer[r].fuse |= FUSE_RELU_OF_ADD;
		}
	}
}

/* True when layer l picks a part of its input as a PyTorch view would:
 * a slice (narrow, chunk) or a gather of one constant index (select). */
static bool
selects(const Layer *l)
{
	return l->nin == 1 &&
	       (l->op == OP_SLICE || (l->op == OP_GATHER && l->attr.target->rank == 0));
}

/* Autocast's op lists for CUDA (PyTorch's aten/src/ATen/autocast_mode.h:
 * AT_FORALL_LOWER_PRECISION_FP, AT_FORALL_FP32, AT_FORALL_FP32_SET_OPT_DTYPE):
 * convolutions (transposed too), matrix products and prelu run in 16
 * bits; exp, log, pow, reciprocal, softplus, layer and group norm,
 * softmax, log_softmax, sum and prod in fp32; every other op in the type
 * its inputs promote to.  (CPU autocast, which tests/data/autograd
 * measured, keeps softmax and layer_norm off its fp32 list: transformers
 * differ there, docs/counting.md.) */
static bool
lowers(OpKind op)
{
	return op == OP_CONV || op == OP_CONVT || op == OP_FC || op == OP_MATMUL || op == OP_PRELU;
}

static bool
widens(OpKind op)
{
	switch (op) {
	case OP_SOFTMAX: case OP_LOGSOFTMAX: case OP_LAYERNORM: case OP_INSTNORM:
	case OP_EXP: case OP_LOG: case OP_POW: case OP_POWER: case OP_RECIPROCAL:
	case OP_SOFTPLUS: case OP_REDUCESUM: case OP_REDUCEPROD: case OP_REDUCELSE:
	case OP_REDUCEL1: case OP_REDUCEL2: case OP_REDUCESUMSQ: case OP_REDUCELOGSUM:
		return true;
	default:
		return false;
	}
}

/* Whether layer `by` reads tensor t in the other width: a lowering op an
 * fp32 activation, a widening one a 16-bit activation. */
static bool
other_width(const Mem *m, int t, const Layer *by)
{
	return !m->g->tensor[t].konst &&
	       ((lowers(by->op) && !m->low[t]) || (widens(by->op) && m->low[t]));
}

/* The casts autocast makes for layer l, whose inputs' widths are known:
 * the trained tensors of a 16-bit op (cast once an iteration: autocast
 * caches the copy) and each activation input of the other width; a graph
 * input's gradient is not cast back, it has none.  tools/autocast_casts.py
 * counts them in a real autocast iteration. */
static void
cast_on_the_way_in(Mem *m, Layer *l)
{
	const Graph *g = m->g;
	Cost *c = &l->cost;

	if (lowers(l->op) && c->params > 0)
		c->cast_w = c->params, c->cast_wn = l->nw;
	for (int k = 0; k < l->nin; k++) {
		int t = l->in[k];
		if (!other_width(m, t, l))
			continue;
		c->cast_in += g->tensor[t].elems, c->cast_inn++;
		if (g->tensor[t].producer >= 0)
			c->cast_grad += g->tensor[t].elems, c->cast_gradn++;
	}
}

/* Which tensors autocast makes 16-bit, in topological order: the
 * outputs of lowering ops; not those of widening ops; otherwise 16-bit
 * when every activation input is (type promotion: one fp32 input, or a
 * trained tensor of more than one element, makes the result fp32; a
 * scalar constant does not).  Graph inputs are fp32. */
static void
mark_low(Mem *m)
{
	Graph *g = m->g;

	for (int i = 0; i < g->nlayer; i++) {
		Layer *l = &g->layer[i];
		bool low = false;
		if (lowers(l->op))
			low = true;
		else if (!widens(l->op)) {
			int acts = 0;
			low = true;
			for (int k = 0; k < l->nin; k++) {
				int t = l->in[k];
				if (m->g->tensor[t].konst) {
					if (g->tensor[t].elems > 1)
						low = false;
				} else {
					acts++;
					low = low && m->low[t];
				}
			}
			low = low && acts > 0;
		}
		l->low = low;
		for (int k = 0; k < l->nout; k++)
			m->low[l->out[k]] = low;
		cast_on_the_way_in(m, l);
	}
}

/* Tensor r's memory kept: under the plain regime, and under autocast
 * too unless `cast` (the layer keeping it saves a cast copy instead). */
static void
mark(Mem *m, int r, bool cast)
{
	m->g->tensor[r].saved = true;
	if (!cast)
		m->asaved[r] = true;
}

/* Tensor t kept for the backward of layer `by`.  A kept view keeps the
 * whole storage it views: its root, and through a slice or select the
 * tensor sliced (ViT's head saves x[:, 0], ShuffleNet's branch half a
 * chunk: both keep all of it), except for matmul, which copies such a
 * non-contiguous operand into a tensor of its own (Swin's qkv[2]).
 * Under autocast, a layer reading t in the other width casts it and
 * saves the copy, of its own, instead. */
static void
keep_for(Mem *m, int t, const Layer *by)
{
	const Graph *g = m->g;
	int r = g->tensor[t].root, p;
	bool cast = other_width(m, t, by);

	if (cast)
		add(m, &m->cast[by - g->layer], 1, g->tensor[t].elems);
	while ((p = g->tensor[r].producer) >= 0 && selects(&g->layer[p]) && by->op != OP_MATMUL &&
	       !g->tensor[g->layer[p].in[0]].konst)
		r = g->tensor[g->layer[p].in[0]].root;
	if (!g->tensor[r].konst)
		mark(m, r, cast);
}

/* Tensor t kept by a fused pattern (a pointwise operator). */
static void
keep(Mem *m, int t)
{
	if (!m->g->tensor[t].konst)
		mark(m, m->g->tensor[t].root, false);
}

/* The layers of a decomposition: `head` spells operator `pat`, the
 * others of parts[] (-1: none) are its parts. */
static void
pattern(Mem *m, int head, int pat, const int *parts, int n)
{
	m->g->layer[head].pattern = (unsigned char)pat;
	for (int i = 0; i < n; i++)
		if (parts[i] >= 0 && parts[i] != head)
			m->g->layer[parts[i]].pattern = PAT_PART;
}

/* The layer that scales tensor t by a constant and is its only reader
 * (GELU's trailing / 2, LayerNorm's beta), or -1. */
static int
scaled_by(const Mem *m, int t)
{
	return sole_user(m, t, OP_SCALE);
}

/* The exact GELU as ONNX writes it, from its Erf layer e:
 * Erf(x / c) -> + 1 -> * x (or * x/2) [-> / 2].  Saves x only. */
static void
fuse_gelu(Mem *m, int e)
{
	const Layer *l = m->g->layer;
	int p, a, mul, x, o, h = -1;

	if ((p = producer(m, l[e].in[0], OP_SCALE)) < 0 || sole_user(m, l[e].in[0], OP_ERF) != e ||
	    (a = sole_user(m, l[e].out[0], OP_SCALE)) < 0 ||
	    (mul = sole_user(m, l[a].out[0], OP_MUL)) < 0 || l[mul].nin != 2)
		return;
	x = l[p].in[0];
	o = l[mul].in[0] == l[a].out[0] ? l[mul].in[1] : l[mul].in[0];
	if (o != x) {
		h = producer(m, o, OP_SCALE);
		if (h < 0 || l[h].in[0] != x || sole_user(m, o, OP_MUL) != mul)
			return;
		m->fused[h] = true;
	}
	m->fused[p] = m->fused[e] = m->fused[a] = m->fused[mul] = true;
	keep(m, x);
	pattern(m, h >= 0 && h < p ? h : p, PAT_GELU,
		(int[]){ p, e, a, mul, h, scaled_by(m, l[mul].out[0]) }, 6);
}

/* SiLU and Hardswish as ONNX opset 13 writes them, from the gate layer f
 * (Sigmoid or HardSigmoid): x * f(x).  PyTorch's silu and hardswish save
 * x only. */
static void
fuse_gated(Mem *m, int f)
{
	const Layer *l = m->g->layer;
	int x = l[f].in[0], mul;

	if ((mul = sole_user(m, l[f].out[0], OP_MUL)) < 0 || l[mul].nin != 2 ||
	    (l[mul].in[0] != x && l[mul].in[1] != x))
		return;
	m->fused[f] = m->fused[mul] = true;
	keep(m, x);
	pattern(m, f, PAT_GATED, (int[]){ mul }, 1);
}

/* The layer among t's readers of kind op (reading t as input k), or -1. */
static int
user_of(const Mem *m, int t, OpKind op, int k)
{
	for (size_t u = m->first[t]; u < m->first[t + 1]; u++) {
		const Layer *l = &m->g->layer[m->users[u]];
		if (l->op == op && l->nin > k && l->in[k] == t)
			return m->users[u];
	}
	return -1;
}

/* LayerNorm as ONNX opset < 17 writes it, from its first ReduceMean r:
 * d = x - mean(x); d / sqrt(mean(d^2) + eps) [* gamma].  Saves x and
 * the mean and rstd of every row (2 fp32 per element of mean(x)). */
static void
fuse_layernorm(Mem *m, int r)
{
	const Layer *l = m->g->layer;
	int x = l[r].in[0], mu = l[r].out[0], s, d, pw, r2, eps, sq, dv, gm;

	if ((s = sole_user(m, mu, OP_SUB)) < 0 || l[s].nin != 2 || l[s].in[0] != x ||
	    l[s].in[1] != mu)
		return;
	d = l[s].out[0];
	if (m->first[d + 1] - m->first[d] != 2 || (pw = user_of(m, d, OP_POW, 0)) < 0 ||
	    (dv = user_of(m, d, OP_DIV, 0)) < 0 || l[dv].nin != 2 ||
	    (r2 = sole_user(m, l[pw].out[0], OP_REDUCEMEAN)) < 0 ||
	    (eps = sole_user(m, l[r2].out[0], OP_SCALE)) < 0 ||
	    (sq = sole_user(m, l[eps].out[0], OP_SQRT)) < 0 ||
	    sole_user(m, l[sq].out[0], OP_DIV) != dv || l[dv].in[1] != l[sq].out[0])
		return;
	m->fused[r] = m->fused[s] = m->fused[pw] = m->fused[r2] = true;
	m->fused[eps] = m->fused[sq] = m->fused[dv] = true;
	if ((gm = sole_user(m, l[dv].out[0], OP_SCALE)) >= 0)
		m->fused[gm] = true; /* gamma: LayerNorm recomputes what it multiplies */
	pattern(m, r, PAT_LAYERNORM,
		(int[]){ s, pw, r2, eps, sq, dv, gm, gm >= 0 ? scaled_by(m, l[gm].out[0]) : -1 },
		8);
	if (m->low[x]) /* layer_norm: autocast's fp32 list */
		add(m, &m->cast[r], 1, m->g->tensor[x].elems);
	if (!m->g->tensor[x].konst)
		mark(m, m->g->tensor[x].root, m->low[x]);
	add(m, &m->stat[r], 2, m->g->tensor[mu].elems);
}

/* Layer i and its readers counted as the operator they spell, if they
 * spell one PyTorch runs as a single operator. */
static void
fuse(Mem *m, int i)
{
	const Layer *l = &m->g->layer[i];

	if (m->fused[i] || l->nin < 1 || l->nout < 1)
		return;
	if (l->op == OP_ERF)
		fuse_gelu(m, i);
	else if (l->op == OP_REDUCEMEAN)
		fuse_layernorm(m, i);
	else if (l->op == OP_SIGMOID || l->op == OP_HARDSIGMOID)
		fuse_gated(m, i);
}

/* Elements of x's dimensions before axis k (per sample). */
static int64_t
prefix(const Shape *x, int k)
{
	int64_t n = 1;

	for (int i = 0; i < k && i < x->rank; i++)
		n *= x->d[i]; /* at most the checked element count */
	return n;
}

/* Statistics a norm saves: per channel for the batch (batch norm), per
 * normalized row or per instance and channel for each sample. */
static void
norm_stats(Mem *m, int i)
{
	const Layer *l = &m->g->layer[i];
	const Shape *x = &m->g->tensor[l->in[0]].shape;
	int ax = l->attr.axis < 0 ? l->attr.axis + x->rank : l->attr.axis;

	if (op_info[l->op].save & S_CSTAT)
		add(m, &m->fixed, 2, l->attr.lead < x->rank ? x->d[l->attr.lead] : 1);
	else if (l->op == OP_LAYERNORM || l->op == OP_RMSNORM) /* RMSNorm: rstd alone */
		add(m, &m->stat[i], l->op == OP_RMSNORM ? 1 : 2, prefix(x, ax));
	else
		add(m, &m->stat[i], 2, prefix(x, l->attr.lead + 1));
}

/* True for an ONNX Mul or Div scale whose constant is a trained tensor
 * and whose input is not a norm's output: GroupNorm exported as
 * InstanceNormalization, Reshape, Mul by gamma is one PyTorch operator,
 * which recomputes what gamma multiplies. */
static bool
trained_factor(const Mem *m, const Layer *l)
{
	const Graph *g = m->g;
	int p = g->tensor[g->tensor[l->in[0]].root].producer;

	return l->srcop && l->fparams > 0 &&
	       (strcmp(l->srcop, "Mul") == 0 || strcmp(l->srcop, "Div") == 0) &&
	       !(p >= 0 && op_info[g->layer[p].op].cls == OPC_NORM);
}

/* True when layer l's output is its input's memory: a view, or an ONNX
 * Dropout, whose ratio oraclec does not read: the Dropout nodes an
 * eval-mode export keeps are F.dropout calls with p = 0 (Swin's), which
 * return their input. */
static bool
aliases(const Layer *l)
{
	return l->nin && l->nout &&
	       ((op_info[l->op].save & S_VIEW) || (l->op == OP_DROPOUT && l->srcop));
}

/* True when pad layer p only feeds an average pool: the exporter's
 * spelling of avg_pool2d(padding=k), which pads inside and saves its
 * unpadded input. */
static bool
pads_a_pool(const Mem *m, int p)
{
	const Layer *l = &m->g->layer[p];

	return l->op == OP_PAD && l->nin >= 1 && l->nout >= 1 &&
	       sole_user(m, l->out[0], OP_AVGPOOL) >= 0;
}

/* Layer i's part in a fused attention: the products keep Q and K, and V
 * (the product with V's operand from outside the attention); the softmax
 * its log-sum-exp, one fp32 per row; the rest nothing. */
static void
fused_rule(Mem *m, int i)
{
	const Graph *g = m->g;
	const Layer *l = &g->layer[i];

	if (l->attn == ATTN_QK) {
		for (int k = 0; k < l->nin; k++)
			keep_for(m, l->in[k], l);
	} else if (l->attn == ATTN_PV) {
		for (int k = 0; k < l->nin; k++) {
			int p = g->tensor[l->in[k]].producer;
			if (p < 0 || !g->layer[p].attn)
				keep_for(m, l->in[k], l);
		}
	} else if (l->op == OP_SOFTMAX && l->nin && l->nout) {
		const Shape *y = &g->tensor[l->out[0]].shape;
		if (y->rank > 0 && y->d[y->rank - 1] > 0)
			add(m, &m->stat[i], 1, g->tensor[l->out[0]].elems / y->d[y->rank - 1]);
	}
}

/* Layer i's own rule (ops.def's save column). */
static void
apply_rule(Mem *m, int i)
{
	const Layer *l = &m->g->layer[i];
	int save = op_info[l->op].save;
	int64_t out = l->nout ? m->g->tensor[l->out[0]].elems : 0;

	if (m->sdpa && l->attn)
		return fused_rule(m, i);
	for (int k = 0; k < l->nin && (save & S_IN); k++)
		keep_for(m, l->in[k], l);
	for (int k = 0; k < l->nout && (save & S_OUT); k++)
		keep(m, l->out[k]);
	if ((save & S_PIN) && l->nin && trained_factor(m, l))
		keep_for(m, l->in[0], l);
	if (save & S_IDX)
		add(m, &m->idx[i], 1, out);
	if ((save & S_MASK) && !aliases(l))
		add(m, &m->mask[i], 1, out);
	if ((save & (S_CSTAT | S_RSTAT)) && l->nin)
		norm_stats(m, i);
}

/* The widths of what is stored whatever the precision (Kept.fixed). */
enum {
	IDX_BYTES = 8,   /* max pooling's indices: int64 */
	MASK_BYTES = 1,  /* dropout's mask: a byte an element, as CUDA saves it */
	FP32_BYTES = 4,  /* statistics, and a widening op's casts: fp32 */
};

/* Bytes an element of tensor t takes while the backward runs: `narrow`
 * where autocast made it 16-bit and narrow is not 0, else `wide`. */
static int
width(const Graph *g, int t, int wide, int narrow)
{
	int p = g->tensor[t].producer;

	return narrow && p >= 0 && g->layer[p].low ? narrow : wide;
}

/* The gradients alive while layer l's backward runs, in bytes at those
 * widths: its outputs' and its activation inputs' (graph inputs get
 * none, nor tensors made from constants); *ok false on an overflow. */
static int64_t
grads(const Graph *g, const Layer *l, int wide, int narrow, bool *ok)
{
	int64_t sum = 0;

	for (int k = 0; k < l->nout; k++) {
		int t = l->out[k];
		if (!g->tensor[t].konst &&
		    !ck_muladd(&sum, g->tensor[t].elems, width(g, t, wide, narrow)))
			*ok = false;
	}
	for (int k = 0; k < l->nin; k++) {
		int t = l->in[k];
		if (!g->tensor[t].konst && g->tensor[t].producer >= 0 &&
		    !ck_muladd(&sum, g->tensor[t].elems, width(g, t, wide, narrow)))
			*ok = false;
	}
	return sum;
}

/* The backward pass's peak over what each of the n counts k[] keeps, in
 * one walk (the gradients are the same for all), into peak[], and all
 * each keeps into held[]. */
static void
peaks(const Graph *g, const Keeps *const *k, int n, int wide, int narrow, int64_t *held,
      int64_t *peak, bool *ok)
{
	int64_t h[KEEP_REGIMES];

	for (int r = 0; r < n; r++) {
		h[r] = kept_at(&k[r]->layers, wide, narrow);
		if (!ck_muladd(&h[r], k[r]->input, wide))
			*ok = false;
		held[r] = peak[r] = h[r];
	}
	for (int i = g->nlayer - 1; i >= 0; i--) {
		int64_t gr = grads(g, &g->layer[i], wide, narrow, ok);
		for (int r = 0; r < n; r++) {
			int64_t at;
			if (!ck_add(h[r], gr, &at))
				*ok = false;
			else if (at > peak[r])
				peak[r] = at;
			h[r] -= kept_at(&k[r]->layer[i], wide, narrow);
		}
	}
}

int64_t
memory_transient(const Graph *g, const Keeps *k, int wide, int narrow)
{
	bool ok = true; /* memory_annotate checked it at the widest */
	int64_t held, peak;

	peaks(g, &k, 1, wide, narrow, &held, &peak, &ok);
	return peak - held;
}

/* Layer i's counts under the two regimes into k[], its elements kept
 * (the plain regime's) into its act_elems. */
static void
layer_counts(Mem *m, int i, Kept k[KEEP_REGIMES])
{
	Graph *g = m->g;
	Layer *l = &g->layer[i];
	Kept *p = &k[KEEP_PLAIN], *a = &k[KEEP_AUTOCAST];
	int64_t fixed = 0, e = 0;

	*p = *a = (Kept){ 0 };
	for (int j = 0; j < l->nout; j++) {
		int t = l->out[j];
		if (g->tensor[t].root != t)
			continue;
		if (g->tensor[t].saved)
			add(m, &p->wide, 1, g->tensor[t].elems);
		if (m->asaved[t])
			add(m, m->low[t] ? &a->narrow : &a->wide, 1, g->tensor[t].elems);
	}
	add(m, &fixed, m->idx[i], IDX_BYTES);
	add(m, &fixed, m->mask[i], MASK_BYTES);
	add(m, &fixed, m->stat[i], FP32_BYTES);
	p->fixed = a->fixed = fixed;
	/* autocast's copies: at its low width for a lowering op, fp32 for a
	 * widening one */
	if (lowers(l->op))
		add(m, &a->narrow, 1, m->cast[i]);
	else
		add(m, &a->fixed, m->cast[i], FP32_BYTES);
	add(m, &e, 1, p->wide), add(m, &e, 1, m->idx[i]);
	add(m, &e, 1, m->mask[i]), add(m, &e, 1, m->stat[i]);
	l->cost.act_elems = e;
}

/* Kept b added into *a, noting an overflow. */
static void
kept_add(Mem *m, Kept *a, const Kept *b)
{
	add(m, &a->wide, 1, b->wide);
	add(m, &a->narrow, 1, b->narrow);
	add(m, &a->fixed, 1, b->fixed);
}

/* Every layer's counts and the totals into keep[] (regimes), the
 * workspace and autocast's weight copies into the graph's totals; each
 * checked at the widest element any precision stores, the backward
 * pass's peak too. */
static void
sum_up(Mem *m, Keeps keep[KEEP_REGIMES])
{
	Graph *g = m->g;
	int w = precision_widest();
	int64_t ws = 0, cw = 0;

	for (int r = 0; r < KEEP_REGIMES; r++)
		keep[r] = (Keeps){ .layer = arena_array(g->arena, (size_t)g->nlayer + 1,
							sizeof(Kept)) };
	for (int i = 0; i < g->nlayer; i++) {
		Layer *l = &g->layer[i];
		Kept k[KEEP_REGIMES];
		layer_counts(m, i, k);
		for (int r = 0; r < KEEP_REGIMES; r++) {
			keep[r].layer[i] = k[r];
			kept_add(m, &keep[r].layers, &k[r]);
		}
		if (op_info[l->op].cls == OPC_CONV && l->attr.filters > 0 &&
		    l->cost.macs / l->attr.filters * (l->attr.groups ? l->attr.groups : 1) > ws)
			ws = l->cost.macs / l->attr.filters * (l->attr.groups ? l->attr.groups : 1);
		if (lowers(l->op) && l->cost.params > 0)
			add(m, &cw, 1,
			    l->cost.params -
				    (l->attr.bias && l->op != OP_MATMUL ? l->attr.filters : 0));
	}
	for (int t = 0; t < g->ntensor; t++)
		if (g->tensor[t].producer < 0) {
			if (g->tensor[t].saved)
				add(m, &keep[KEEP_PLAIN].input, 1, g->tensor[t].elems);
			if (m->asaved[t]) /* else cast by every layer keeping it */
				add(m, &keep[KEEP_AUTOCAST].input, 1, g->tensor[t].elems);
		}
	for (int r = 0; r < KEEP_REGIMES; r++) {
		int64_t held = keep[r].layers.fixed;
		add(m, &keep[r].saved_fixed, m->fixed, FP32_BYTES);
		add(m, &held, keep[r].layers.wide, w);
		add(m, &held, keep[r].layers.narrow, w);
		add(m, &held, keep[r].input, w);
	}
	if (m->ok) { /* the peak at any precision is at most these */
		const Keeps *k[KEEP_REGIMES] = { &keep[KEEP_PLAIN], &keep[KEEP_AUTOCAST] };
		int64_t held[KEEP_REGIMES], peak[KEEP_REGIMES];
		peaks(g, k, KEEP_REGIMES, w, w, held, peak, &m->ok);
	}
	g->total.workspace = ws;
	g->total.cast_weights = cw;
	add(m, &(int64_t){ 0 }, ws, w);
	add(m, &(int64_t){ 0 }, cw, w);
}

/* One count under both regimes, the attentions fused or not, into
 * keep[]; false when a count overflowed. */
static bool
count(Graph *g, bool fused, Keeps keep[KEEP_REGIMES])
{
	size_t nt = (size_t)g->ntensor + 1, nl = (size_t)g->nlayer + 1, reads = 1;
	Mem m = { .g = g, .ok = true, .sdpa = fused };

	for (int i = 0; i < g->nlayer; i++)
		reads += (size_t)g->layer[i].nin;
	m.first = xcalloc(nt, sizeof *m.first);
	m.users = xcalloc(reads, sizeof *m.users);
	m.low = xcalloc(nt, sizeof *m.low);
	m.asaved = xcalloc(nt, sizeof *m.asaved);
	m.fused = xcalloc(nl, sizeof *m.fused);
	m.idx = xcalloc(nl, sizeof *m.idx);
	m.mask = xcalloc(nl, sizeof *m.mask);
	m.stat = xcalloc(nl, sizeof *m.stat);
	m.cast = xcalloc(nl, sizeof *m.cast);
	for (int t = 0; t < g->ntensor; t++) {
		g->tensor[t].root = t;
		g->tensor[t].saved = false;
		g->tensor[t].konst = false;
	}
	index_uses(&m);
	for (int i = 0; i < g->nlayer; i++) {
		Cost *c = &g->layer[i].cost;
		g->layer[i].low = false;
		g->layer[i].pattern = PAT_NONE;
		c->cast_w = c->cast_in = c->cast_grad = 0;
		c->cast_wn = c->cast_inn = c->cast_gradn = 0;
	}
	mark_low(&m);
	mark_fusable(&m);
	for (int i = 0; i < g->nlayer; i++)
		if (aliases(&g->layer[i]) || pads_a_pool(&m, i))
			g->tensor[g->layer[i].out[0]].root = g->tensor[g->layer[i].in[0]].root;
	for (int i = 0; i < g->nlayer; i++)
		if (!(fused && g->layer[i].attn))
			fuse(&m, i);
	for (int i = 0; i < g->nlayer; i++)
		if (!m.fused[i])
			apply_rule(&m, i);
	sum_up(&m, keep);
	free(m.first), free(m.users), free(m.low), free(m.asaved), free(m.fused);
	free(m.idx), free(m.mask), free(m.stat), free(m.cast);
	return m.ok;
}

/* The counts with the attentions a fused kernel can run as one
 * (Graph.keep[1]); none for a graph without one.  The plain count runs
 * after it. */
static bool
fused_count(Graph *g)
{
	unsigned char *attn = xcalloc((size_t)g->nlayer + 1, 1);
	bool ok = true;

	for (int r = 0; r < KEEP_REGIMES; r++)
		g->keep[1][r] = (Keeps){ 0 };
	if (graph_fusable_attention(g, attn) > 0) {
		for (int i = 0; i < g->nlayer; i++)
			g->layer[i].attn = attn[i];
		ok = count(g, true, g->keep[1]);
	} else {
		for (int i = 0; i < g->nlayer; i++)
			g->layer[i].attn = ATTN_NONE;
	}
	free(attn);
	return ok;
}

bool
memory_annotate(Graph *g)
{
	if (!fused_count(g) || !count(g, false, g->keep[0])) {
		diag_error(g->loc, "activation memory overflows 64 bits");
		return false;
	}
	g->done |= PASS_MEMORY;
	return true;
}
