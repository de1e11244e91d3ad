/* lower_shape.c -- lowering ONNX's data-movement and reduction nodes:
 * Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Concat, Pad, Softmax,
 * DepthToSpace, Gather, Slice, Split, Expand, Resize, the Reduce family,
 * and constants expanded to the batch (optable.c picks the rule).
 *
 * These are the nodes that move the batch: a reshape may merge it with
 * other dimensions ([N, H, W, C] -> [N*nW, 49, C]) or split it off again,
 * a transpose may move it to another axis.  Each rule computes the full
 * output shape with the batch symbolic, says on which axis the batch
 * ends up, and gives the IR layer the per-sample shape (values.h, Val). */
#include "frontend/onnx/fold.h"
#include "frontend/onnx/lower.h"
#include "util/checked.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

/* ---- shapes ------------------------------------------------------------- */

/* A reshape of x to the full shape `full` (batch factor on axis bax). */
bool
onnx_reshape(Onnx *o, const Val *x, const int64_t *full, int rank, int bax, int out,
	     const Val **res)
{
	Val y = { .rank = rank, .bax = bax };
	Layer *l;

	if (rank < 0 || rank > MAX_RANK + 1) {
		NERR(o, "target rank %d is not supported", rank);
		return false;
	}
	memcpy(y.d, full, rank * sizeof *full);
	if (!(l = onnx_layer_out(o, OP_RESHAPE, &x, 1, out)))
		return false;
	*attr_target(o->g, &l->attr) = ps_shape(&y);
	if (l->attr.target->rank > MAX_RANK) {
		NERR(o, "target rank %d is not supported", rank);
		return false;
	}
	if (!onnx_finish(o, l, rank, bax))
		return false;
	if (res)
		*res = lookup(o, o->g->tensor[l->out[0]].name);
	return true;
}

static bool
reshape_to(Onnx *o, const Val *x, const int64_t *full, int rank, int bax)
{
	return onnx_reshape(o, x, full, rank, bax, 0, NULL);
}

/* Where the batch goes in a literal target shape t of a model whose file
 * fixes the batch B.  Row-major order puts the batch, which follows the
 * input dimensions before it (Pb elements), in the first target
 * dimension whose running product reaches Pb * B: [197, B, 768] ->
 * [197 * B, 768] puts it on axis 0.  A -1 is resolved first, from the
 * B * e elements.  When the input merged the batch with others (its order
 * there is not kept), a dimension of exactly B, or else the first multiple
 * of B, takes it.  Divides that dimension by B; -1 when none fits. */
static int
fixed_batch_axis(Onnx *o, const Val *x, int64_t *t, int n, int64_t *minus, int64_t e)
{
	int64_t pb = 1, run = 1, prod = 1, total;

	if (o->batch == BATCH || o->batch < 1 || !ck_mul(e, o->batch, &total))
		return -1;
	for (int i = 0; i < n; i++)
		if (i != *minus && !ck_mul(prod, t[i], &prod))
			return -1;
	if (*minus >= 0) {
		if (total % prod)
			return -1;
		t[*minus] = total / prod;
		*minus = -1;
	}
	for (int i = 0; i < x->bax; i++)
		pb *= x->d[i];
	/* A batch of 1 fits several places of a literal target: a dimension
	 * of 1 at or after the first Pb elements (the exporter wrote the
	 * batch there: MHA's .view(L, N, E) is [197, 1, 768]); else both ends
	 * of the dimensions that meet where Pb elements end.  A batch on an
	 * axis of its own (MHA's [197, 1, 768] -> [197, 1 * 12, 64]) starts
	 * the next dimension, merging with what follows; one already merged
	 * with per-sample elements (the heads of [197, 1 * 12, 64] ->
	 * [197 * 1, 768]) stays at the end of the previous, as a larger batch
	 * would (the rule below). */
	if (o->batch == 1) {
		for (int i = 0; i < n && ck_mul(run, t[i], &run); i++)
			if (t[i] == 1 && run / t[i] >= pb)
				return i;
		run = 1;
		if (x->d[x->bax] == 1)
			for (int i = 0; i < n && run <= pb; run *= t[i], i++)
				if (run == pb)
					return i;
	}
	run = 1;
	for (int i = 0; i < n && run <= pb && ck_mul(run, t[i], &run); i++)
		if (run >= pb * o->batch) {
			if (t[i] % o->batch || pb % (run / t[i]))
				break;
			t[i] /= o->batch;
			return i;
		}
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < n; i++)
			if (pass ? t[i] % o->batch == 0 : t[i] == o->batch) {
				t[i] /= o->batch;
				return i;
			}
	return -1;
}

/* ONNX Reshape with the batch symbolic: 0 copies a dimension, one entry
 * may be k * N (the batch, merged with k per sample), one may be -1.
 * With no batch entry the -1 holds it: [-1, 49, C] after a window
 * partition is [N*nW, 49, C]. */
bool
lower_reshape(Onnx *o, OpKind kind, const Val **in, int nin)
{
	const Val *x = in[0], *s = nin > 1 ? in[1] : NULL;
	int64_t full[MAX_RANK + 1], prod = 1, e = 1, minus = -1, bax = -1, n;
	bool allowzero = attr_i(o->np, "allowzero", 0);

	if (!s) {
		NERR(o, "the target shape is not a known constant");
		return false;
	}
	if (s->act || s->n < 0 || s->n > MAX_RANK + 1 || s->rank != 1) {
		NERR(o,
		     "the target shape is not a known constant (shapes computed from data are "
		     "not supported)");
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
	if (bax < 0 && !o->nobatch && x->bax >= 0)
		bax = fixed_batch_axis(o, x, full, (int)n, &minus, e);
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

/* Flatten: a flatten layer when it keeps the batch alone first, else a
 * reshape. */
bool
lower_flatten(Onnx *o, OpKind kind, const Val **in, int nin)
{
	const Val *x = in[0];
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

/* Squeeze or (un) Unsqueeze of x: a reshape. */
static bool
squeeze(Onnx *o, const Val *x, bool un)
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

/* Squeeze: the axes given, or every axis of extent 1. */
bool
lower_squeeze(Onnx *o, OpKind kind, const Val **in, int nin)
{
	return squeeze(o, in[0], false);
}

/* Unsqueeze: axes of extent 1 inserted. */
bool
lower_unsqueeze(Onnx *o, OpKind kind, const Val **in, int nin)
{
	return squeeze(o, in[0], true);
}

/* Transpose by the attribute perm, by default reversing the axes. */
bool
lower_transpose(Onnx *o, OpKind kind, const Val **in, int nin)
{
	const Val *x = in[0];
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
	return onnx_transpose(o, x, p, NULL);
}

/* Concat of activations and constants, along a per-sample axis. */
bool
lower_concat(Onnx *o, OpKind kind, const Val **in, int nin)
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
			/* B copies of a constant in a file that fixes the batch B */
			Shape ps;
			if (in[i]->rank != x0->rank || !ps_const(o, in[i], x0, &ps) ||
			    !(ops[n++] = onnx_const_layer(o, &ps)))
				return false;
		} else if (!(ops[n++] = onnx_const_operand(o, in[i]))) {
			return false;
		}
	}
	if ((ax = onnx_sample_axis(o, x0, attr_i(o->np, "axis", 0))) < -1)
		return false;
	if (!(l = onnx_layer(o, OP_CONCAT, ops, n)))
		return false;
	l->attr.axis = ax;
	return onnx_finish_like(o, l, x0);
}

/* Pad by the attribute (opset < 11) or the input pads, the batch left
 * alone. */
bool
lower_pad(Onnx *o, OpKind kind, const Val **in, int nin)
{
	const Val *x = in[0];
	int64_t p[2 * (MAX_RANK + 1)];
	int n = attr_ints(o, "pads", p, 2 * (MAX_RANK + 1)); /* opset < 11 */
	const Val *pv;
	Layer *l;
	Shape *lo, *hi;

	if (n == -1) {
		pv = o->np->n_input > 1 ? lookup(o, o->np->input[1]) : NULL;
		if (!pv || pv->act || pv->n < 0 || pv->n > 2 * (MAX_RANK + 1)) {
			NERR(o,
			     "pads are not a known constant (data-dependent pads are not "
			     "supported)");
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
	lo = attr_target(o->g, &l->attr);
	hi = attr_pad_hi(o->g, &l->attr);
	for (int i = 0; i < x->rank; i++) {
		if (p[i] < 0 || p[x->rank + i] < 0 || p[i] > MAX_DIM || p[x->rank + i] > MAX_DIM) {
			NERR(o, "negative pads (cropping) are not supported");
			return false;
		}
		if (i == x->bax && x->d[i] == 1)
			continue;
		lo->d[lo->rank++] = p[i];
		hi->d[hi->rank++] = p[x->rank + i];
	}
	return onnx_finish_like(o, l, x);
}

/* Softmax, LogSoftmax and Hardmax (kind op) along a per-sample axis. */
bool
lower_softmax(Onnx *o, OpKind op, const Val **in, int nin)
{
	const Val *x = in[0];
	int ax = onnx_sample_axis(o, x, attr_i(o->np, "axis", o->opset >= 13 ? -1 : 1));
	Layer *l;

	if (ax < -1 || !(l = onnx_layer(o, op, &x, 1)))
		return false;
	l->attr.axis = ax;
	return onnx_finish_like(o, l, x);
}

/* DepthToSpace and SpaceToDepth move blocks of b x b between channels
 * and space: a reshape of [N, C, H, W], counted as data movement. */
static bool
depth(Onnx *o, const Val *x, bool to_space)
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

/* DepthToSpace: channels to space. */
bool
lower_depth_to_space(Onnx *o, OpKind kind, const Val **in, int nin)
{
	return depth(o, in[0], true);
}

/* SpaceToDepth: space to channels. */
bool
lower_space_to_depth(Onnx *o, OpKind kind, const Val **in, int nin)
{
	return depth(o, in[0], false);
}

/* ---- indexing ----------------------------------------------------------- */

/* Gather of x (in[0]) at the indices ix (in[1]); x may be a constant
 * table indexed by an activation. */
bool
lower_gather(Onnx *o, OpKind kind, const Val **in, int nin)
{
	const Val *x = in[0], *ix = in[1];
	Layer *l;
	int ax, rank;

	if (!x->act) { /* a table indexed by an activation (an embedding) */
		int a = onnx_full_axis(o, attr_i(o->np, "axis", 0), x->shaped ? x->rank : 1);
		const Val *ops[2] = { NULL, ix };
		if (a < 0 || !(ops[0] = onnx_const_operand(o, x)) ||
		    !(l = onnx_layer(o, OP_GATHER, ops, 2)))
			return false;
		l->attr.axis = a;
		return onnx_finish(o, l, x->rank - 1 + ix->rank, ix->bax < 0 ? -1 : a + ix->bax);
	}
	if ((ax = onnx_sample_axis(o, x, attr_i(o->np, "axis", 0))) < -1)
		return false;
	rank = x->rank - 1 + ix->rank;
	if (ix->act) {
		const Val *ops[2] = { x, ix };
		if (x->bax >= 0 || ix->bax >= 0) {
			NERR(o, "indices that are activations are not supported with a batch");
			return false;
		}
		if (!(l = onnx_layer(o, OP_GATHER, ops, 2)))
			return false;
		l->attr.axis = ax;
		return onnx_finish(o, l, rank, -1);
	}
	if (!ix->shaped) {
		NERR(o, "the shape of the indices is not known");
		return false;
	}
	if (!(l = onnx_layer(o, OP_GATHER, &x, 1)))
		return false;
	l->attr.axis = ax;
	{
		Shape *t = attr_target(o->g, &l->attr);
		t->rank = ix->rank;
		memcpy(t->d, ix->d, ix->rank * sizeof ix->d[0]);
	}
	{
		int a = onnx_full_axis(o, attr_i(o->np, "axis", 0), x->rank);
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
	*attr_target(o->g, &l->attr) = ps_shape(&y);
	return onnx_finish_like(o, l, x);
}

/* Slice by constant starts, ends, axes and steps. */
bool
lower_slice(Onnx *o, OpKind kind, const Val **in, int nin)
{
	const Val *x = in[0];
	Range3 r;

	if (!slice_ranges(o, in, nin, in[0], &r)) {
		NERR(o,
		     "starts, ends, axes and steps are not known constants (data-dependent "
		     "slices are not supported)");
		return false;
	}
	/* the batch axis whole (x[0:], x[:N]) keeps every sample; any other
	 * range takes some of them, and the counts are per sample */
	if (x->bax >= 0) {
		if (r.len[x->bax] != slice_extent(o, x, x->bax) || r.step[x->bax] != 1) {
			NERR(o, "slicing along the batch axis (axis %d) is not supported: it takes "
				"some of the samples, and the counts are per sample", x->bax);
			return false;
		}
		r.len[x->bax] = x->d[x->bax];
	}
	return slice_to(o, x, r.len, 0);
}

/* Split: one slice layer per output. */
bool
lower_split(Onnx *o, OpKind kind, const Val **in, int nin)
{
	const Val *x = in[0];
	int64_t sz[64], len[MAX_RANK + 1], at = 0;
	int nout = (int)o->np->n_output, n = attr_ints(o, "split", sz, 64);
	int a = onnx_full_axis(o, attr_i(o->np, "axis", 0), x->rank);
	const Val *s = o->np->n_input > 1 ? lookup(o, o->np->input[1]) : NULL;

	if (a < 0 || n == -2)
		return false;
	if (nout > 64) {
		NERR(o, "%d outputs are not supported (at most 64)", nout);
		return false;
	}
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
bool
lower_expand(Onnx *o, OpKind kind, const Val **in, int nin)
{
	const Val *x = in[0], *t = nin > 1 ? in[1] : NULL;
	Val tv = { .shaped = true, .bax = -1 };
	Layer *l;
	int r, bax;

	if (!t || t->act || t->n < 0 || t->n > MAX_RANK + 1) {
		NERR(o,
		     "the target shape is not a known constant (shapes computed from data are "
		     "not supported)");
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
		/* on the batch axis: 1 (broadcast), or the extent it has (N times
		 * its factor, or the file's batch times it) keeps the samples;
		 * anything else makes or drops some */
		if (pos == bax && !(t->iv[i].batch ? t->iv[i].k == x->d[x->bax]
				    : t->iv[i].k == 1 ||
					      (o->batch != BATCH &&
					       t->iv[i].k == slice_extent(o, x, x->bax)))) {
			NERR(o,
			     "expanding the batch axis (axis %d) to %" PRId64 " is not supported: "
			     "it changes the number of samples, and the counts are per sample",
			     bax, t->iv[i].k);
			return false;
		}
		if (pos == bax)
			tv.d[i] = 1; /* the batch stays */
	}
	if (!(l = onnx_layer(o, OP_EXPAND, &x, 1)) ||
	    !ps_const(o, &tv, x, attr_target(o->g, &l->attr)))
		return false;
	return onnx_finish(o, l, r, bax);
}

/* Resize and Upsample: sizes, or scales applied with floor. */
static bool
resize(Onnx *o, const Val **in, int nin, bool upsample)
{
	const Val *x = in[0], *sc = NULL, *sz = NULL;
	int64_t len[MAX_RANK + 1], ax[MAX_RANK + 1];
	int nax = attr_ints(o, "axes", ax, MAX_RANK + 1);
	Val y = *x;
	Layer *l;

	if (upsample || o->opset < 11)
		sc = nin > 1 ? in[1] : NULL;
	else
		sc = nin > 2 ? in[2] : NULL, sz = nin > 3 ? in[3] : NULL;
	if (sc && sc->shaped && count(sc) == 0)
		sc = NULL;
	if (strcmp(attr_s(o, "keep_aspect_ratio_policy", "stretch"), "stretch") != 0) {
		NERR(o, "keep_aspect_ratio_policy is not supported");
		return false;
	}
	if (nax == -2)
		return false;
	if (nax < 0)
		for (nax = 0; nax < x->rank; nax++)
			ax[nax] = nax;
	memcpy(len, x->d, x->rank * sizeof *len);
	for (int i = 0; i < nax; i++) {
		int a = onnx_full_axis(o, ax[i], x->rank);
		/* sizes when known, else scales (sz may be given and unknown) */
		bool sizes = sz && !sz->act && sz->n == nax;
		double f;
		if (a < 0)
			return false;
		if (!sizes && !(sc && !sc->act && sc->n == nax)) {
			NERR(o,
			     "scales or sizes are not known constants (data-dependent sizes "
			     "are not supported)");
			return false;
		}
		if (a == x->bax && (sizes ? !sz->iv[i].batch : sc->fv[i] != 1.0)) {
			NERR(o, "resizing the batch axis is not supported");
			return false;
		}
		/* a scaled extent that is NaN or past 2^40 becomes 0, which the
		 * layer's inference rejects (converting it is undefined) */
		f = sizes ? 0 : floor((double)x->d[a] * sc->fv[i]);
		if (a == x->bax || (sizes && sz->iv[i].batch))
			len[a] = x->d[a];
		else
			len[a] = sizes ? sz->iv[i].k : f >= 1 && f <= MAX_DIM ? (int64_t)f : 0;
	}
	memcpy(y.d, len, x->rank * sizeof *len);
	if (!(l = onnx_layer(o, OP_RESIZE, &x, 1)))
		return false;
	*attr_target(o->g, &l->attr) = ps_shape(&y);
	return onnx_finish_like(o, l, x);
}

/* Resize: scales (in[2]) or sizes (in[3]); before opset 11, scales (in[1]). */
bool
lower_resize(Onnx *o, OpKind kind, const Val **in, int nin)
{
	return resize(o, in, nin, false);
}

/* Upsample: scales (in[1]). */
bool
lower_upsample(Onnx *o, OpKind kind, const Val **in, int nin)
{
	return resize(o, in, nin, true);
}

/* The Reduce family, ArgMax and ArgMin (kind op), over per-sample axes. */
bool
lower_reduce(Onnx *o, OpKind op, const Val **in, int nin)
{
	const Val *x = in[0];
	int64_t ax[MAX_RANK + 1];
	int n, bax = x->bax, rank = x->rank;
	bool keep = attr_i(o->np, "keepdims", 1) != 0, mark[MAX_RANK + 1] = { false };
	Layer *l;
	Shape *axes;

	if (op == OP_ARGMAX || op == OP_ARGMIN)
		ax[0] = attr_i(o->np, "axis", 0), n = 1;
	else if ((n = axes_of(o, ax, MAX_RANK + 1)) == -2)
		return false;
	if (n <= 0 && attr_i(o->np, "noop_with_empty_axes", 0))
		return onnx_lower_unary(o, x, OP_IDENTITY);
	if (n <= 0) /* every axis */
		for (n = 0; n < x->rank; n++)
			ax[n] = n;
	if (!(l = onnx_layer(o, op, &x, 1)))
		return false;
	l->attr.keepdims = keep;
	axes = attr_target(o->g, &l->attr);
	for (int i = 0; i < n; i++) {
		int a = onnx_full_axis(o, ax[i], x->rank);
		if (a < 0)
			return false;
		if (a == x->bax) {
			NERR(o, "reducing over the batch axis is not supported");
			return false;
		}
		if (!mark[a]) {
			mark[a] = true;
			axes->d[axes->rank++] = ps_axis(x, a);
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
onnx_batch_const(Onnx *o, OpKind kind, const Val **in, int nin, bool *done)
{
	bool expand = kind == OP_EXPAND;
	const Val *t = expand ? (nin > 1 ? in[1] : NULL) : (nin > 0 ? in[0] : NULL);
	Val full = { .shaped = true, .bax = -1 };
	Layer *l;
	int r;

	*done = false;
	if (!t || t->n < 0 || t->n > MAX_RANK + 1)
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
	*attr_target(o->g, &l->attr) = ps_shape(&full);
	return onnx_finish(o, l, r, full.bax);
}

/* ---- decoders: running sums, tiles, gathers of elements ----------------- */

/* CumSum along a per-sample axis (in[1]): a constant one, unless no
 * axis is the batch's (--no-batch); the output is shaped as x. */
bool
lower_cumsum(Onnx *o, OpKind kind, const Val **in, int nin)
{
	const Val *x = in[0], *a = nin > 1 ? in[1] : NULL;

	if (x->bax >= 0 && (!a || a->act || a->n != 1 || a->iv[0].batch)) {
		NERR(o, "the axis is not a known constant (a data-dependent axis is not "
			"supported)");
		return false;
	}
	if (x->bax >= 0 && onnx_sample_axis(o, x, a->iv[0].k) < -1)
		return false;
	return onnx_lower_unary(o, x, kind);
}

/* Tile by constant repeats (in[1]), the batch axis repeated once. */
bool
lower_tile(Onnx *o, OpKind kind, const Val **in, int nin)
{
	const Val *x = in[0], *r = nin > 1 ? in[1] : NULL;
	Val y = *x;
	Layer *l;

	if (!r || r->act || r->n != x->rank) {
		NERR(o, "the repeats are not a known constant of one value per dimension "
			"(data-dependent repeats are not supported)");
		return false;
	}
	for (int i = 0; i < x->rank; i++) {
		if (r->iv[i].batch || r->iv[i].k < 1 || !ck_mul(y.d[i], r->iv[i].k, &y.d[i]) ||
		    y.d[i] > MAX_DIM) {
			NERR(o, "repeat %" PRId64 " of dimension %d is not supported",
			     r->iv[i].k, i);
			return false;
		}
		if (i == x->bax && r->iv[i].k != 1) {
			NERR(o, "tiling the batch axis (axis %d) is not supported: it changes the "
				"number of samples, and the counts are per sample", i);
			return false;
		}
	}
	if (!(l = onnx_layer(o, kind, &x, 1)))
		return false;
	*attr_target(o->g, &l->attr) = ps_shape(&y);
	return onnx_finish_like(o, l, x);
}

/* GatherElements: the indices' shape; the activation holding the batch
 * first among the layer's inputs, a constant one a const layer. */
bool
lower_gather_elements(Onnx *o, OpKind kind, const Val **in, int nin)
{
	const Val *x = in[0], *ix = nin > 1 ? in[1] : NULL, *ops[2];
	int a;
	Layer *l;

	if (!x || !ix || !x->shaped || !ix->shaped || x->rank != ix->rank) {
		NERR(o, "the data and the indices must have the same rank");
		return false;
	}
	if ((a = onnx_full_axis(o, attr_i(o->np, "axis", 0), x->rank)) < 0)
		return false;
	if ((x->act && a == x->bax) || (!ix->act && x->bax >= 0)) {
		NERR(o, "gathering along the batch axis, or by constant indices from a batch, is "
			"not supported");
		return false;
	}
	ops[0] = ix->act ? ix : x;
	ops[1] = ix->act ? x : ix;
	if (!ops[1]->act && !(ops[1] = onnx_const_operand(o, ops[1])))
		return false;
	if (!(l = onnx_layer(o, kind, ops, 2)))
		return false;
	*attr_target(o->g, &l->attr) = ps_shape(ix); /* a constant's bax is -1 */
	return onnx_finish_like(o, l, ix->act ? ix : x);
}
