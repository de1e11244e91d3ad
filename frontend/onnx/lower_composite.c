/* lower_composite.c -- ONNX operators lowered to the several layers that
 * compute them, with the steps the other rule files export (lower.h):
 *
 *   Einsum      as torch.einsum runs a pair of operands (PyTorch 1.13,
 *               aten/src/ATen/native/Linear.cpp, sumproduct_pair): the
 *               dimensions only one operand has and the output lacks are
 *               summed first, both operands permuted and reshaped to one
 *               batched matrix product (bmm), the result reshaped and
 *               permuted to the output; a constant operand whose
 *               dimensions are all contracted or its own is a weight, and
 *               the product a fully connected layer.  One operand: a sum
 *               and a permutation.
 *   Attention   (opset 23) as its definition computes it: Q K^T, the
 *               scale, the mask added (a causal one for is_causal), the
 *               softcap, softmax, the product with V; 3-D inputs split
 *               into heads and merged back; grouped key/value heads
 *               (kv_num_heads < q_num_heads) broadcast over their group.
 *               graph_attention (ir/graph.c) finds these layers as it
 *               finds an exported attention's.
 *
 * A node's steps are planned twice: a dry run computes every shape and
 * counts the layers, then the real run makes them, the last one writing
 * the node's output, and skips the same identities (a permutation that
 * moves nothing, a reshape to the same shape). */
#include "frontend/onnx/fold.h"
#include "frontend/onnx/lower.h"
#include "util/checked.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

typedef struct Plan {
	Onnx *o;
	bool dry;      /* shapes only, the layers counted */
	int steps;     /* layers the dry run counted */
	int made;      /* layers made so far */
} Plan;

/* The output of the next layer: the node's own for the last one. */
static int
next_out(Plan *p)
{
	return ++p->made == p->steps ? 0 : -1;
}

/* A value of the shape a step gives, for the dry run. */
static const Val *
shaped(Plan *p, int rank, const int64_t *d, int bax)
{
	Val *v = newval(p->o);

	v->act = v->shaped = true;
	v->rank = rank;
	v->bax = bax;
	memcpy(v->d, d, rank * sizeof *d);
	return v;
}

/* x permuted by perm; x itself when perm moves nothing. */
static const Val *
permute(Plan *p, const Val *x, const int64_t *perm)
{
	int64_t d[MAX_RANK + 1];
	int bax = -1;
	bool same = true;
	const Val *r;

	for (int i = 0; i < x->rank; i++) {
		same &= perm[i] == i;
		d[i] = x->d[perm[i]];
		if (perm[i] == x->bax)
			bax = i;
	}
	if (same)
		return x;
	if (p->dry)
		return p->made++, shaped(p, x->rank, d, bax);
	if (next_out(p) == 0) /* the node's output */
		return onnx_transpose(p->o, x, perm, NULL) ? lookup(p->o, p->o->np->output[0])
							   : NULL;
	return onnx_transpose(p->o, x, perm, &r) ? r : NULL;
}

/* x reshaped to the full shape d[rank], its batch factor on bax; x when
 * that is its shape. */
static const Val *
reshape(Plan *p, const Val *x, const int64_t *d, int rank, int bax)
{
	const Val *r;

	if (rank == x->rank && bax == x->bax && memcmp(d, x->d, rank * sizeof *d) == 0)
		return x;
	if (p->dry)
		return p->made++, shaped(p, rank, d, bax);
	return onnx_reshape(p->o, x, d, rank, bax, next_out(p), &r) ? r : NULL;
}

/* The product of a [.., M, K] and b [.., K, N], the leading dimensions
 * broadcast. */
static const Val *
matmul(Plan *p, const Val *a, const Val *b)
{
	int64_t d[MAX_RANK + 1];
	int r = a->rank > b->rank ? a->rank : b->rank, bax = -1;
	const Val *res;

	if (p->dry) { /* a vector operand has its dimension dropped, as infer.c's */
		int va = a->rank == 1, vb = b->rank == 1, n = 0;
		r = (a->rank > b->rank ? a->rank : b->rank) + (va || vb);
		for (int i = 0; i < r - 2; i++) {
			int ia = i - (r - a->rank), ib = i - (r - b->rank);
			int64_t da = ia >= 0 ? a->d[ia] : 1, db = ib >= 0 ? b->d[ib] : 1;
			d[n++] = da == 1 ? db : da;
			if ((ia >= 0 && ia == a->bax) || (ib >= 0 && ib == b->bax))
				bax = i;
		}
		if (!va)
			d[n++] = a->d[a->rank - 2];
		if (!vb)
			d[n++] = b->d[b->rank - 1];
		return p->made++, shaped(p, n, d, bax);
	}
	return onnx_matmul(p->o, a, b, next_out(p), &res) ? res : NULL;
}

/* x [.., K] times a constant K x f matrix. */
static const Val *
fc(Plan *p, const Val *x, int64_t f)
{
	int64_t d[MAX_RANK + 1];
	const Val *res;

	if (p->dry) {
		memcpy(d, x->d, x->rank * sizeof *d);
		d[x->rank - 1] = f;
		return p->made++, shaped(p, x->rank, d, x->bax);
	}
	return onnx_fc(p->o, x, x->d[x->rank - 1], f, next_out(p), &res) ? res : NULL;
}

/* x summed over the full axes marked in sum[], which go. */
static const Val *
sum_out(Plan *p, const Val *x, const bool *sum)
{
	int64_t d[MAX_RANK + 1];
	int rank = 0, bax = -1;
	Layer *l;
	Shape *axes;

	for (int i = 0; i < x->rank; i++)
		if (!sum[i]) {
			if (i == x->bax)
				bax = rank;
			d[rank++] = x->d[i];
		}
	if (rank == x->rank)
		return x;
	if (p->dry)
		return p->made++, shaped(p, rank, d, bax);
	if (!(l = onnx_layer_out(p->o, OP_REDUCESUM, &x, 1, next_out(p))))
		return NULL;
	axes = attr_target(p->o->g, &l->attr);
	for (int i = 0; i < x->rank; i++)
		if (sum[i])
			axes->d[axes->rank++] = ps_axis(x, i);
	return onnx_finish(p->o, l, rank, bax) ? lookup(p->o, p->o->g->tensor[l->out[0]].name)
					       : NULL;
}

/* One layer of kind op reading x (and, for a binary kind, y), shaped
 * like x; a scale's or unary's constant operand of per-sample shape c
 * (NULL: a scalar); a softmax along the last axis. */
static const Val *
layer(Plan *p, OpKind op, const Val *x, const Val *y, const Shape *c)
{
	const Val *in[2] = { x, y };
	Layer *l;

	if (p->dry)
		return p->made++, shaped(p, x->rank, x->d, x->bax);
	if (!(l = onnx_layer_out(p->o, op, in, y ? 2 : 1, next_out(p))))
		return NULL;
	if (c)
		*attr_target(p->o->g, &l->attr) = *c;
	if (op == OP_SOFTMAX)
		l->attr.axis = ps_axis(x, x->rank - 1);
	return onnx_finish_like(p->o, l, x) ? lookup(p->o, p->o->g->tensor[l->out[0]].name)
					    : NULL;
}

/* ---- Einsum ------------------------------------------------------------- */

/* The axis of x (labels lab) holding label l, -1 if none. */
static int
axis_of(const int *lab, int rank, int l)
{
	for (int i = 0; i < rank; i++)
		if (lab[i] == l)
			return i;
	return -1;
}

/* Operand x (labels lab[rank]) permuted so that its labels come in the
 * order of want[n], the labels it has. */
static const Val *
to_order(Plan *p, const Val *x, int *lab, const int *want, int n)
{
	int64_t perm[MAX_RANK + 1];
	int k = 0, old[MAX_RANK + 1];

	memcpy(old, lab, x->rank * sizeof *lab);
	for (int i = 0; i < n; i++) {
		int a = axis_of(old, x->rank, want[i]);
		if (a >= 0)
			perm[k] = a, lab[k++] = want[i];
	}
	return permute(p, x, perm);
}

/* The extent of x's dimensions labelled with each of ls[n] in a row:
 * their product (1 for none). */
static int64_t
group(const Val *x, const int *lab, const int *ls, int n)
{
	int64_t g = 1;

	for (int i = 0; i < n; i++) {
		int a = axis_of(lab, x->rank, ls[i]);
		if (a >= 0)
			g *= x->d[a];
	}
	return g;
}

/* The einsum e of a (labels la) and b (labels lb; NULL for one operand). */
static const Val *
einsum(Plan *p, const Einsum *e, const Val *a, const Val *b)
{
	int la[MAX_RANK + 1], lb[MAX_RANK + 1], batch[MAX_RANK + 1], lf[MAX_RANK + 1];
	int rf[MAX_RANK + 1], con[MAX_RANK + 1], nb = 0, nl = 0, nr = 0, nc = 0;
	int bl = a->bax >= 0 ? e->lab[0][a->bax] : -1, n, rank, bbatch = 0;
	bool sum[MAX_RANK + 1] = { false };
	int64_t d[MAX_RANK + 1];
	const int *lab_b = b ? e->lab[1] : NULL;

	memcpy(la, e->lab[0], a->rank * sizeof *la);
	if (b)
		memcpy(lb, lab_b, b->rank * sizeof *lb);
	/* each label's part: contracted (both operands, not the output);
	 * batch (both and the output, or an activation's batch), a's own or
	 * b's own, in the output's order */
	for (int l = 0; b && l < EINSUM_LABELS; l++)
		if (e->size[l] && axis_of(la, a->rank, l) >= 0 && axis_of(lb, b->rank, l) >= 0 &&
		    axis_of(e->out, e->orank, l) < 0)
			con[nc++] = l;
	for (int i = 0; i < e->orank; i++) {
		int l = e->out[i];
		bool ia = axis_of(la, a->rank, l) >= 0, ib = b && axis_of(lb, b->rank, l) >= 0;
		if (l == bl || (b && b->bax >= 0 && l == lb[b->bax]) || (ia && ib))
			batch[nb++] = l;
		else if (ia)
			lf[nl++] = l;
		else
			rf[nr++] = l;
	}
	/* summed first: what one operand has and neither the other nor the
	 * output */
	for (int i = 0; i < a->rank; i++)
		sum[i] = axis_of(e->out, e->orank, la[i]) < 0 &&
			 (!b || axis_of(lb, b->rank, la[i]) < 0);
	n = 0;
	for (int i = 0; i < a->rank; i++)
		if (!sum[i])
			la[n++] = la[i];
	if (!(a = sum_out(p, a, sum)))
		return NULL;
	if (!b) /* one operand: the output's order */
		return to_order(p, a, la, e->out, e->orank);
	memset(sum, 0, sizeof sum);
	for (int i = 0; i < b->rank; i++)
		sum[i] = axis_of(e->out, e->orank, lb[i]) < 0 && axis_of(la, a->rank, lb[i]) < 0;
	n = 0;
	for (int i = 0; i < b->rank; i++)
		if (!sum[i])
			lb[n++] = lb[i];
	if (!b->act) { /* a constant: its reduced shape is all that counts */
		Val *c = newval(p->o);
		*c = *b;
		c->rank = 0;
		for (int i = 0; i < b->rank; i++)
			if (!sum[i])
				c->d[c->rank++] = b->d[i];
		b = c;
	} else if (!(b = sum_out(p, b, sum))) {
		return NULL;
	}
	for (int i = 0; i < nb; i++)
		bbatch += axis_of(lb, b->rank, batch[i]) >= 0;
	if (!b->act && !bbatch) {
		/* a weight: a's output labels in the output's order, then the
		 * contracted ones; a fully connected layer; then b's own */
		int want[MAX_RANK + 1], k = 0;
		for (int i = 0; i < e->orank; i++)
			if (axis_of(la, a->rank, e->out[i]) >= 0)
				want[k++] = e->out[i];
		memcpy(want + k, con, nc * sizeof *con);
		if (!(a = to_order(p, a, la, want, k + nc)))
			return NULL;
		memcpy(d, a->d, k * sizeof *d);
		d[k] = group(a, la, con, nc);
		if (!(a = reshape(p, a, d, k + 1, a->bax)) || !(a = fc(p, a, group(b, lb, rf, nr))))
			return NULL;
		for (int i = 0; i < nr; i++)
			d[k + i] = b->d[axis_of(lb, b->rank, rf[i])];
		if (!(a = reshape(p, a, d, k + nr, a->bax)))
			return NULL;
		memcpy(la, want, k * sizeof *la);
		memcpy(la + k, rf, nr * sizeof *la);
		return to_order(p, a, la, e->out, e->orank);
	}
	if (!b->act) /* a constant that is not a weight: a const layer */
		b = p->dry ? shaped(p, b->rank, b->d, -1) : onnx_const_operand(p->o, b);
	if (!b)
		return NULL;
	{
		/* a: [batch.., own.., contracted..] as [batch.., L, K]; b:
		 * [batch.., contracted.., own..] as [batch.., K, R]; a batch
		 * label one operand lacks is 1 there */
		int want[MAX_RANK + 1], abax = -1, bbax = -1;
		int64_t db[MAX_RANK + 1];
		memcpy(want, batch, nb * sizeof *want);
		memcpy(want + nb, lf, nl * sizeof *want);
		memcpy(want + nb + nl, con, nc * sizeof *want);
		if (!(a = to_order(p, a, la, want, nb + nl + nc)))
			return NULL;
		memcpy(want + nb, con, nc * sizeof *want);
		memcpy(want + nb + nc, rf, nr * sizeof *want);
		if (!(b = to_order(p, b, lb, want, nb + nc + nr)))
			return NULL;
		for (int i = 0; i < nb; i++) {
			int ia = axis_of(la, a->rank, batch[i]);
			int ib = axis_of(lb, b->rank, batch[i]);
			d[i] = ia >= 0 ? a->d[ia] : 1;
			db[i] = ib >= 0 ? b->d[ib] : 1;
			if (ia >= 0 && ia == a->bax)
				abax = i;
			if (ib >= 0 && ib == b->bax)
				bbax = i;
		}
		/* without batch labels, an operand without its own labels is a
		 * vector (NumPy matmul's [K] operands): "i,i" is a scalar */
		{
			bool va = !nb && !nl, vb = !nb && !nr;
			int ra = nb, rb = nb;
			if (!va)
				d[ra++] = group(a, la, lf, nl);
			d[ra++] = group(a, la, con, nc);
			db[rb++] = group(a, la, con, nc);
			if (!vb)
				db[rb++] = group(b, lb, rf, nr);
			if (!(a = reshape(p, a, d, ra, abax)) ||
			    !(b = reshape(p, b, db, rb, bbax)) || !(a = matmul(p, a, b)))
				return NULL;
		}
		/* back to [batch.., a's own.., b's own..], then the output's order */
		rank = nb;
		memcpy(d, a->d, nb * sizeof *d);
		for (int i = 0; i < nl; i++)
			d[rank++] = e->size[lf[i]];
		for (int i = 0; i < nr; i++)
			d[rank++] = e->size[rf[i]];
		if (!(a = reshape(p, a, d, rank, a->bax)))
			return NULL;
		memcpy(la, batch, nb * sizeof *la);
		memcpy(la + nb, lf, nl * sizeof *la);
		memcpy(la + nb + nl, rf, nr * sizeof *la);
		return to_order(p, a, la, e->out, e->orank);
	}
}

/* Einsum of one or two operands, one of them at least an activation. */
bool
lower_einsum(Onnx *o, OpKind kind, const Val **in, int nin)
{
	const char *why;
	Einsum e;
	const Val *a = in[0], *b = nin > 1 ? in[1] : NULL, *r;
	Plan p = { .o = o, .dry = true };

	if (!einsum_parse(attr_s(o, "equation", ""), in, nin, &e, &why)) {
		NERR(o, "%s", why);
		return false;
	}
	for (int k = 0; k < e.n; k++)
		for (int i = 0; i < e.rank[k]; i++)
			if (axis_of(e.lab[k], i, e.lab[k][i]) >= 0) {
				NERR(o, "a diagonal (a label repeated in one operand) is not "
					"supported");
				return false;
			}
	for (int k = 0; k < e.n; k++) {
		const Val *v = in[k];
		if (v->act && v->bax >= 0 && axis_of(e.out, e.orank, e.lab[k][v->bax]) < 0) {
			NERR(o, "summing or contracting over the batch axis is not supported: the "
				"counts are per sample");
			return false;
		}
	}
	if (b && a->act && b->act && a->bax >= 0 && b->bax >= 0 &&
	    e.lab[0][a->bax] != e.lab[1][b->bax]) {
		NERR(o, "the operands' batch axes do not line up");
		return false;
	}
	if (b && !a->act) { /* the activation first */
		Einsum s = e;
		memcpy(s.lab[0], e.lab[1], sizeof s.lab[0]);
		memcpy(s.lab[1], e.lab[0], sizeof s.lab[1]);
		s.rank[0] = e.rank[1], s.rank[1] = e.rank[0];
		e = s;
		a = in[1], b = in[0];
	}
	if (!einsum(&p, &e, a, b))
		return false;
	p.dry = false;
	p.steps = p.made, p.made = 0;
	if (p.steps == 0) /* the operand as it is */
		return onnx_lower_unary(o, a, OP_IDENTITY);
	return (r = einsum(&p, &e, a, b)) != NULL;
}

/* ---- Attention (opset 23) ------------------------------------------------ */

/* q, k, v as [B, H, S, d]: a 3-D input [B, S, H*d] split into its h heads. */
static const Val *
heads(Plan *p, const Val *x, int64_t h)
{
	int64_t d[4];
	static const int64_t swap[4] = { 0, 2, 1, 3 };

	if (x->rank == 4)
		return x;
	d[0] = x->d[0], d[1] = x->d[1], d[2] = h, d[3] = x->d[2] / h;
	if (!(x = reshape(p, x, d, 4, x->bax)))
		return NULL;
	return permute(p, x, swap);
}

static const Val *
attention(Plan *p, const Val *q, const Val *k, const Val *v, const Val *mask, int64_t hq,
	  int64_t hkv)
{
	Onnx *o = p->o;
	bool three = q->rank == 3;
	int64_t g, d[6], sq, skv;
	static const int64_t kt[5] = { 0, 1, 2, 4, 3 }, kt4[4] = { 0, 1, 3, 2 };
	static const int64_t back[4] = { 0, 2, 1, 3 };
	float softcap = 0;
	const Onnx__AttributeProto *sa = attr(o->np, "softcap");
	const Val *s;

	if (sa && sa->has_f)
		softcap = sa->f;
	if (!(q = heads(p, q, hq)) || !(k = heads(p, k, hkv)) || !(v = heads(p, v, hkv)))
		return NULL;
	hq = q->d[1], hkv = k->d[1], sq = q->d[2], skv = k->d[2];
	if (hkv < 1 || hq % hkv || v->d[1] != hkv || v->d[2] != skv || k->d[3] != q->d[3]) {
		NERR(o, "the query, key and value heads do not fit together");
		return NULL;
	}
	g = hq / hkv;
	if (g > 1) { /* grouped: [B, Hkv, g, S, d] against [B, Hkv, 1, .., ..] */
		d[0] = q->d[0], d[1] = hkv, d[2] = g, d[3] = sq, d[4] = q->d[3];
		if (!(q = reshape(p, q, d, 5, q->bax)))
			return NULL;
		d[2] = 1, d[3] = skv, d[4] = k->d[3];
		if (!(k = reshape(p, k, d, 5, k->bax)))
			return NULL;
		d[4] = v->d[3];
		if (!(v = reshape(p, v, d, 5, v->bax)))
			return NULL;
	}
	if (!(k = permute(p, k, g > 1 ? kt : kt4)) || !(s = matmul(p, q, k)) ||
	    !(s = layer(p, OP_SCALE, s, NULL, NULL)))
		return NULL;
	if (softcap > 0 && (!(s = layer(p, OP_SCALE, s, NULL, NULL)) ||
			    !(s = layer(p, OP_TANH, s, NULL, NULL)) ||
			    !(s = layer(p, OP_SCALE, s, NULL, NULL))))
		return NULL;
	if (attr_i(o->np, "is_causal", 0)) { /* a constant mask added */
		Shape c = { 2, { sq, skv } };
		if (!(s = layer(p, OP_SCALE, s, NULL, &c)))
			return NULL;
	}
	if (mask) {
		Shape c;
		Val m = *mask;
		if (g > 1 && m.rank == 4) { /* [.., Hq, S, T] -> [.., Hkv, g, S, T] */
			if (m.act) {
				NERR(o, "a mask computed from data with grouped key/value heads "
					"is not supported");
				return NULL;
			}
			memmove(m.d + 2, m.d + 1, 3 * sizeof m.d[0]);
			m.d[1] = m.d[2] == 1 ? 1 : hkv;
			m.d[2] = m.d[2] == 1 ? 1 : g;
			m.rank = 5;
		}
		if (!m.act && !ps_const(o, &m, s, &c))
			return NULL;
		s = m.act ? layer(p, OP_ADD, s, mask, NULL) : layer(p, OP_SCALE, s, NULL, &c);
		if (!s)
			return NULL;
	}
	if (!(s = layer(p, OP_SOFTMAX, s, NULL, NULL)) || !(s = matmul(p, s, v)))
		return NULL;
	if (g > 1) {
		d[0] = s->d[0], d[1] = hq, d[2] = sq, d[3] = s->d[4];
		if (!(s = reshape(p, s, d, 4, s->bax)))
			return NULL;
	}
	if (!three)
		return s;
	if (!(s = permute(p, s, back)))
		return NULL;
	d[0] = s->d[0], d[1] = sq, d[2] = hq * s->d[3];
	return reshape(p, s, d, 3, s->bax);
}

/* Attention(Q, K, V, attn_mask): Y; no cache (past_key, past_value) and
 * none of the other outputs. */
bool
lower_attention(Onnx *o, OpKind kind, const Val **in, int nin)
{
	const Val *q = in[0], *k = nin > 1 ? in[1] : NULL, *v = nin > 2 ? in[2] : NULL;
	const Val *mask = nin > 3 ? in[3] : NULL;
	int64_t hq = attr_i(o->np, "q_num_heads", 0), hkv = attr_i(o->np, "kv_num_heads", 0);
	Plan p = { .o = o, .dry = true };

	if (!k || !v || q->rank != k->rank || q->rank != v->rank ||
	    (q->rank != 3 && q->rank != 4)) {
		NERR(o, "query, key and value must all be 3-D or all 4-D");
		return false;
	}
	if ((nin > 4 && in[4]) || (nin > 5 && in[5])) {
		NERR(o, "a key/value cache (past_key, past_value) is not supported: it is "
			"inference, not training");
		return false;
	}
	for (int i = 1; i < (int)o->np->n_output; i++)
		if (*o->np->output[i]) {
			NERR(o, "the outputs present_key, present_value and qk_matmul_output are "
				"not supported");
			return false;
		}
	if (q->rank == 3 && (hq < 1 || hkv < 1 || q->d[2] % hq || k->d[2] % hkv ||
			     v->d[2] % hkv)) {
		NERR(o, "3-D inputs need q_num_heads and kv_num_heads that divide their widths");
		return false;
	}
	if ((!k->act && !(k = onnx_const_operand(o, k))) ||
	    (!v->act && !(v = onnx_const_operand(o, v))))
		return false;
	if (q->bax > 0 || k->bax > 0 || v->bax > 0 || (mask && mask->act && mask->bax > 0)) {
		NERR(o, "the batch is not the first axis of the query, key and value");
		return false;
	}
	if (!attention(&p, q, k, v, mask, hq, hkv))
		return false;
	p.dry = false;
	p.steps = p.made, p.made = 0;
	return attention(&p, q, k, v, mask, hq, hkv) != NULL;
}
