/* transformer.c -- a transformer's dimensions read from its layers, as
 * Megatron-LM's arguments name them (megatron/training/arguments.py:
 * --num-layers, --hidden-size, --num-attention-heads, --kv-channels,
 * --num-query-groups, --ffn-hidden-size, --seq-length,
 * --max-position-embeddings, the vocabulary), whatever the frontend: an
 * ODL model and an ONNX export lower to the same layers
 * (docs/model.md, "Transformers").
 *
 * Everything starts from the attentions graph_attention finds (a softmax
 * over the product of two activations): their count is l; the first
 * one's product QK^T gives the heads (its per-sample elements over its
 * s x s rows and columns), the head size (its contracted dimension) and
 * the projections behind Q and K (through views, slices, rotations and
 * the repeat of grouped keys); the fc layers after its product with V
 * give the projection and the MLP; the layers before the first attention
 * the embedding and the positions. */
#include "ir/graph.h"

#include <string.h>

/* Whether l's output is its input's values rearranged or rescaled: a
 * view, a transpose, a slice or an expansion, an element-wise layer, a
 * concatenation.  The way from a projection to the product QK^T. */
static bool
passes_through(const Layer *l)
{
	switch (op_info[l->op].cls) {
	case OPC_RESHAPE:
	case OPC_TRANSPOSE:
	case OPC_FLATTEN:
	case OPC_SLICE:
	case OPC_EXPAND:
	case OPC_UNARY:
	case OPC_BINARY:
	case OPC_CONCAT:
		return true;
	default:
		return false;
	}
}

/* The fc layer behind tensor t through at most `steps` layers that pass
 * it through (the first input a layer makes, at each), or -1. */
static int
fc_behind(const Graph *g, int t, int steps)
{
	while (steps-- > 0) {
		int p = g->tensor[t].producer, next = -1;
		const Layer *l;

		if (p < 0)
			return -1;
		l = &g->layer[p];
		if (op_info[l->op].cls == OPC_FC)
			return p;
		if (!passes_through(l))
			return -1;
		for (int j = 0; j < l->nin && next < 0; j++) {
			int q = g->tensor[l->in[j]].producer;
			if (q >= 0 && g->layer[q].op != OP_CONST)
				next = l->in[j];
		}
		if (next < 0)
			return -1;
		t = next;
	}
	return -1;
}

/* The rotation (rotate_half: a negation and a concatenation) on the way
 * from tensor t back to its projection, through at most `depth` layers
 * that pass it through, every activation input followed: *seen gets
 * NEG_SEEN and CAT_SEEN for what it met. */
enum { NEG_SEEN = 1, CAT_SEEN = 2 };

static void
rotation(const Graph *g, int t, int depth, unsigned *seen)
{
	int p = g->tensor[t].producer;
	const Layer *l;

	if (p < 0 || depth == 0 || *seen == (NEG_SEEN | CAT_SEEN))
		return;
	l = &g->layer[p];
	if (!passes_through(l))
		return;
	*seen |= (l->op == OP_NEG ? NEG_SEEN : 0) | (l->op == OP_CONCAT ? CAT_SEEN : 0);
	for (int j = 0; j < l->nin; j++) {
		int q = g->tensor[l->in[j]].producer;
		if (q >= 0 && g->layer[q].op != OP_CONST)
			rotation(g, l->in[j], depth - 1, seen);
	}
}

static bool
rotated(const Graph *g, int t)
{
	unsigned seen = 0;

	rotation(g, t, 8, &seen);
	return seen == (NEG_SEEN | CAT_SEEN);
}

/* The embedding table: a trained constant that a gather reads as its
 * data (the token ids its indices), or -1. */
static int
embedding_table(const Graph *g, int before)
{
	for (int i = 0; i < before; i++) {
		const Layer *l = &g->layer[i];
		int p;
		if (l->op != OP_GATHER || l->nin < 2 ||
		    (p = g->tensor[l->in[0]].producer) < 0 || g->layer[p].op != OP_CONST ||
		    g->layer[p].cost.params <= 0)
			continue;
		return p;
	}
	return -1;
}

bool
graph_transformer(const Graph *g, Transformer *t)
{
	int (*at)[2], n = 0, qk, q, k, pv, fc[3], nfc = 0, end;
	const Layer *l;
	const Shape *y;

	memset(t, 0, sizeof *t);
	t->output = t->table = -1;
	for (int i = 0; i < g->nlayer; i++)
		n += g->layer[i].op == OP_SOFTMAX;
	if (n == 0)
		return false;
	at = arena_array(g->arena, (size_t)n, sizeof *at);
	if ((t->layers = graph_attention_parts(g, at)) == 0)
		return false;
	t->parts = (const int(*)[2])at;
	qk = at[0][0];
	pv = at[0][1];
	l = &g->layer[qk];
	y = &g->tensor[l->out[0]].shape;
	if (y->rank < 2 || l->nin < 2)
		return false;
	/* heads: the product's elements over its rows and columns; the head
	 * size: what it contracts, the last dimension of Q */
	t->heads = g->tensor[l->out[0]].elems / (y->d[y->rank - 1] * y->d[y->rank - 2]);
	t->head_dim = g->tensor[l->in[0]].shape.d[g->tensor[l->in[0]].shape.rank - 1];
	t->hidden = t->heads * t->head_dim;
	t->seq = g->seq_len ? g->seq_len : y->d[y->rank - 2];
	t->kv_groups = t->heads;
	q = fc_behind(g, l->in[0], 64);
	k = fc_behind(g, l->in[1], 64);
	if (k >= 0 && t->head_dim > 0) {
		int64_t w = g->layer[k].attr.filters / t->head_dim;
		if (k == q && w > t->heads) /* one fused QKV projection */
			w = (w - t->heads) / 2;
		if (w > 0 && w <= t->heads)
			t->kv_groups = w;
	}
	t->rope = rotated(g, l->in[0]);
	/* the fc layers after the first attention's product with V, up to the
	 * second's QK^T: the projection, then the MLP's first (and, gated,
	 * the second of its width reading the same input) */
	end = t->layers > 1 ? at[1][0] : g->nlayer;
	for (int i = pv >= 0 ? pv + 1 : qk + 1; i < end && nfc < 3; i++)
		if (op_info[g->layer[i].op].cls == OPC_FC)
			fc[nfc++] = i;
	if (nfc >= 2) {
		const Layer *a = &g->layer[fc[1]];
		t->ffn = a->attr.filters;
		if (nfc == 3 && g->layer[fc[2]].attr.filters == a->attr.filters &&
		    g->layer[fc[2]].in[0] == a->in[0])
			t->swiglu = true;
	}
	for (int i = qk; i < end && !t->swiglu; i++)
		t->swiglu = g->layer[i].pattern == PAT_GATED;
	/* the norms: LayerNorm (or its decomposition) or RMSNorm (or its
	 * decomposition: a mean of squares without the mean taken away) */
	for (int i = 0; i < end; i++) {
		const Layer *m = &g->layer[i];
		if (m->op == OP_LAYERNORM || m->pattern == PAT_LAYERNORM || m->op == OP_SUB)
			break;
		if (m->op == OP_RMSNORM || (m->op == OP_REDUCEMEAN &&
					    g->tensor[m->in[0]].producer >= 0 &&
					    g->layer[g->tensor[m->in[0]].producer].op == OP_POW)) {
			t->rmsnorm = true;
			break;
		}
	}
	/* the vocabulary: the embedding table's rows, else the output layer's
	 * width; the output layer: the last fc after the last attention, of
	 * the vocabulary's width where there is a table */
	t->table = embedding_table(g, qk);
	if (t->table >= 0)
		t->vocab = g->tensor[g->layer[t->table].out[0]].shape.d[0];
	for (int i = g->nlayer - 1; i > at[t->layers - 1][0]; i--) {
		if (op_info[g->layer[i].op].cls != OPC_FC)
			continue;
		if (t->table < 0 || g->layer[i].attr.filters == t->vocab)
			t->output = i;
		break;
	}
	if (t->output >= 0 && t->table < 0)
		t->vocab = g->layer[t->output].attr.filters;
	t->untied = t->table >= 0 && t->output >= 0 && g->layer[t->output].cost.params > 0;
	/* learned positions: the first trained tensor of two or more rows of
	 * the hidden width added before the first attention (the table not
	 * counted, nor the norms' scales) */
	t->positions = t->seq;
	for (int i = 0; i < qk && t->hidden > 0; i++) {
		const Layer *m = &g->layer[i];
		int64_t p = m->cost.params;
		if (i == t->table || p <= 0 || op_info[m->op].cls == OPC_NORM ||
		    m->pattern == PAT_LAYERNORM)
			continue;
		if (op_info[m->op].cls == OPC_FC && m->attr.filters == t->hidden && !m->attr.bias &&
		    g->tensor[m->in[0]].producer < 0) {
			t->positions = g->tensor[m->in[0]].elems; /* ODL: fc(pos, h) */
			t->learned = true;
			break;
		}
		if (m->op == OP_SCALE && p % t->hidden == 0 && p / t->hidden >= 2) {
			t->positions = p / t->hidden;
			t->learned = true;
			break;
		}
	}
	return t->heads > 0 && t->head_dim > 0;
}

double
transformer_flops(const Transformer *t, int redo)
{
	double s = (double)t->seq, l = (double)t->layers, h = (double)t->hidden;
	double a = (double)t->heads, g = (double)t->kv_groups, q = a * (double)t->head_dim;
	double attn, mlp, logit, layers;

	if (t->layers <= 0 || h <= 0 || a <= 0)
		return 0;
	/* Megatron-LM@2bfe9beaae, megatron/training/training.py:65-100,
	 * num_floating_point_operations: per token 12 l h^2 times the
	 * attention's (1 + g/a + s/h) (a d / h), the MLP's (ffn / h) (3/2
	 * gated) and the logits' V / (2 l h); for a GPT of 4h, a d = h and g =
	 * a, 72 s l h^2 (1 + s/6h + V/12lh), Narayanan et al.'s eq. 3 without
	 * recomputation */
	attn = (1 + g / a + s / h) * (q / h);
	mlp = (double)t->ffn / h * (t->swiglu ? 1.5 : 1);
	logit = (double)t->vocab / (2 * l * h);
	layers = 12 * s * l * h * h * (attn + mlp);
	switch (redo) {
	case TF_REDO_FULL: /* every layer's forward again, not the logits':
	                      96 s l h^2 (1 + s/6h + V/16lh), eq. 3 */
		layers *= 4.0 / 3.0;
		break;
	case TF_REDO_CORE: /* the attention core's forward again (Korthikanti
	                      et al., MLSys'23, selective recomputation: QK^T,
	                      the softmax, its dropout, the product with V),
	                      its two products' 4 s^2 a d a layer */
		layers += 4 * s * s * l * q;
		break;
	default:
		break;
	}
	return layers + 12 * s * l * h * h * logit;
}
