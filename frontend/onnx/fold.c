/* fold.c -- constant folding of ONNX shape computations.
 *
 * Exporters compute shapes at run time when the batch is dynamic: PyTorch
 * writes Shape -> Gather -> Unsqueeze -> Concat -> Reshape for x.view(N, -1)
 * and long chains for attention heads, window partitions and Swin's
 * attention masks.  oraclec evaluates them here with the batch N kept
 * symbolic: an integer is k or k * N (Int), so N * 49, (N * 49) / 49 and
 * Shape of a [N*nW, 49, C] tensor are exact, and anything else that
 * depends on N (N * N, N / 7, N == 5) is unknown, which is only an error
 * if a layer needs it (the node that needs it says so).
 *
 * Every rule computes the output's shape first, from the inputs' shapes,
 * and then its values when the inputs' values are known: float tensors
 * whose data stayed in the deleted weight file still get a shape, which
 * is all a constant operand of a layer needs.  Tensors over MAX_FOLD
 * elements are never materialised. */
#include "frontend/onnx/fold.h"
#include "util/checked.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

static Int
plain(int64_t k)
{
	return (Int){ k, false };
}

/* a float as an integer, 0 when it has none (C's conversion of NaN or
 * of a value out of int64_t's range is undefined) */
static int64_t
trunc_int(double f)
{
	return isfinite(f) && fabs(f) < 9e18 ? (int64_t)f : 0;
}

static void
shape_of(Val *out, int rank, const int64_t *d)
{
	out->shaped = true;
	out->rank = rank;
	if (rank) /* d may be NULL for a scalar */
		memcpy(out->d, d, rank * sizeof *d);
}

static bool
known(const Val *v)
{
	return v && v->n >= 0 && v->shaped;
}

/* Sets the shape; makes room for the values when small.  False when the
 * values cannot be kept (the shape stays). */
static bool
alloc(Onnx *o, Val *out, int rank, const int64_t *d)
{
	int64_t n;

	shape_of(out, rank, d);
	n = count(out);
	if (n < 0 || n > MAX_FOLD)
		return false;
	set_values(o, out, n);
	return true;
}

static void
put(Val *v, int64_t i, Int x, double f)
{
	v->iv[i] = x;
	v->fv[i] = x.batch ? NAN : f;
}

static void
copy(Val *out, int64_t i, const Val *in, int64_t j)
{
	out->iv[i] = in->iv[j];
	out->fv[i] = in->fv[j];
}

/* ---- integers with a symbolic batch ------------------------------------ */

static bool
plain_op(char op, int64_t x, int64_t y, int64_t *r)
{
	switch (op) {
	case '+': return ck_add(x, y, r);
	case '-': return !__builtin_sub_overflow(x, y, r);
	case '*': return ck_mul(x, y, r);
	case '/': /* ONNX integer Div truncates toward zero, as C does */
		if (y == 0 || (x == INT64_MIN && y == -1))
			return false;
		*r = x / y;
		return true;
	case '%': /* Mod with fmod=0: the result takes the divisor's sign */
		if (y == 0)
			return false;
		*r = y == -1 ? 0 : x % y; /* INT64_MIN % -1 overflows */
		if (*r && (*r < 0) != (y < 0))
			*r += y; /* |*r| < |y|: no overflow, as (x % y) + y had */
		return true;
	case '=': *r = x == y; return true;
	case '<': *r = x < y; return true;
	case '>': *r = x > y; return true;
	case 'm': *r = x < y ? x : y; return true;
	case 'M': *r = x > y ? x : y; return true;
	}
	return false;
}

/* k * N against a plain c, N >= 1: what is known without N */
static bool
mixed(char op, int64_t k, int64_t c, bool batch_left, Int *r)
{
	bool small = c < k; /* then c < k * N for every N */

	switch (op) {
	case '=':
		*r = plain(0);
		return small;
	case '<':
	case '>':
		if ((op == '<') == batch_left) /* kN < c or c > kN */
			*r = plain(0);
		else
			*r = plain(1);
		return small || (c == k && (op == '<') == batch_left);
	case 'm':
		*r = plain(c);
		return c <= k;
	case 'M':
		*r = (Int){ k, true };
		return c <= k;
	}
	return false;
}

bool
int_binary(char op, Int x, Int y, Int *r)
{
	int64_t k;

	if (!x.batch && !y.batch) {
		r->batch = false;
		return plain_op(op, x.k, y.k, &r->k);
	}
	if (x.batch && y.batch) {
		if (op == '+' || op == '-') {
			if (!plain_op(op, x.k, y.k, &k) || k < 0)
				return false;
			*r = k ? (Int){ k, true } : plain(0);
			return true;
		}
		if (op == '/' || op == '=' || op == '<' || op == '>') {
			*r = plain(0);
			return plain_op(op, x.k, y.k, &r->k);
		}
		if (op == 'm' || op == 'M') {
			*r = (op == 'm') == (x.k < y.k) ? x : y;
			return true;
		}
		return false;
	}
	if (op == '*') {
		Int b = x.batch ? x : y, c = x.batch ? y : x;
		if (c.k == 0) {
			*r = plain(0);
			return true;
		}
		return c.k > 0 && ck_mul(b.k, c.k, &r->k) && (r->batch = true);
	}
	if ((op == '+' || (op == '-' && x.batch)) && (x.batch ? y : x).k == 0) {
		*r = x.batch ? x : y;
		return true;
	}
	if (op == '/' && x.batch && y.k > 0 && x.k % y.k == 0) {
		*r = (Int){ x.k / y.k, true };
		return true;
	}
	if (op == '/' && y.batch && x.k == 0) {
		*r = plain(0);
		return true;
	}
	if (op == '%' && x.batch && y.k > 0 && x.k % y.k == 0) {
		*r = plain(0);
		return true;
	}
	return mixed(op, x.batch ? x.k : y.k, x.batch ? y.k : x.k, x.batch, r);
}

static double
fop(char op, double x, double y)
{
	switch (op) {
	case '+': return x + y;
	case '-': return x - y;
	case '*': return x * y;
	case '/': return x / y;
	case '%': return fmod(x, y);
	case '=': return x == y;
	case '<': return x < y;
	case '>': return x > y;
	case 'm': return fmin(x, y);
	case 'M': return fmax(x, y);
	case '&': return x && y;
	case '|': return x || y;
	case 'p': return pow(x, y);
	}
	return NAN;
}

/* ---- element-wise with broadcasting ------------------------------------- */

/* Index into an input broadcast to the output's shape. */
static int64_t
bindex(const Val *in, const Val *out, int64_t flat)
{
	int64_t idx = 0, stride = 1;

	for (int k = out->rank - 1, j = in->rank - 1; k >= 0; k--, j--) {
		int64_t c = flat % out->d[k];
		flat /= out->d[k];
		if (j >= 0) {
			if (in->d[j] != 1)
				idx += c * stride;
			stride *= in->d[j];
		}
	}
	return idx;
}

static bool
bshape(const Val *a, const Val *b, int *rank, int64_t *d)
{
	*rank = a->rank > b->rank ? a->rank : b->rank;
	for (int i = 0; i < *rank; i++) {
		int ia = i - (*rank - a->rank), ib = i - (*rank - b->rank);
		int64_t da = ia >= 0 ? a->d[ia] : 1, db = ib >= 0 ? b->d[ib] : 1;
		if (da != db && da != 1 && db != 1)
			return false;
		d[i] = da == 1 ? db : da;
	}
	return true;
}

/* The broadcast shape of every input given; false if one is unshaped. */
static bool
bshape_all(const Val **in, int nin, Val *out)
{
	Val acc = { .shaped = true };

	for (int i = 0; i < nin; i++) {
		int rank;
		int64_t d[MAX_RANK + 1];
		if (!in[i] || !in[i]->shaped || !bshape(&acc, in[i], &rank, d))
			return false;
		shape_of(&acc, rank, d);
	}
	shape_of(out, acc.rank, acc.d);
	return true;
}

static void
binary(Onnx *o, char op, const Val *a, const Val *b, Val *out)
{
	const Val *in[2] = { a, b };

	if (!bshape_all(in, 2, out) || !known(a) || !known(b) ||
	    !alloc(o, out, out->rank, out->d))
		return;
	for (int64_t i = 0; i < out->n; i++) {
		int64_t ia = bindex(a, out, i), ib = bindex(b, out, i);
		Int r = plain(0);
		bool integral = op != 'p' && op != '&' && op != '|';
		if (integral && !int_binary(op, a->iv[ia], b->iv[ib], &r)) {
			out->n = -1; /* depends on the batch in a way not modelled */
			return;
		}
		double f = fop(op, a->fv[ia], b->fv[ib]);
		if (!integral)
			r = plain(trunc_int(f));
		put(out, i, r, f);
	}
}

/* ---- shape operations --------------------------------------------------- */

/* Shape: an activation's full shape, N * factor on its batch axis. */
void
fold_shape(Onnx *o, char code, const Val **in, int nin, Val *out)
{
	const Val *x = in[0];
	int64_t start = attr_i(o->np, "start", 0), end = attr_i(o->np, "end", x->rank);
	int64_t n;

	if (!x->shaped)
		return;
	start = start < 0 ? start + x->rank : start;
	end = end < 0 ? end + x->rank : end;
	start = start < 0 ? 0 : start > x->rank ? x->rank : start;
	end = end < start ? start : end > x->rank ? x->rank : end;
	n = end - start;
	if (!alloc(o, out, 1, &n))
		return;
	for (int64_t i = 0; i < n; i++) {
		int64_t v = x->d[start + i];
		bool b = x->act && start + i == x->bax;
		put(out, i, (Int){ v, b }, (double)v); /* N * factor on the batch axis */
	}
}

/* Gather of data (in[0]) at the indices idx (in[1]). */
void
fold_gather(Onnx *o, char code, const Val **in, int nin, Val *out)
{
	const Val *data = in[0], *idx = nin > 1 ? in[1] : NULL;
	int64_t axis = attr_i(o->np, "axis", 0), d[MAX_RANK + 1], outer = 1, inner = 1;
	int rank = 0;

	if (!idx || !data->shaped || !idx->shaped || data->rank < 1)
		return;
	if (axis < 0)
		axis += data->rank;
	if (axis < 0 || axis >= data->rank || data->rank + idx->rank - 1 > MAX_RANK + 1)
		return;
	for (int i = 0; i < axis; i++)
		d[rank++] = data->d[i];
	for (int i = 0; i < idx->rank; i++)
		d[rank++] = idx->d[i];
	for (int i = (int)axis + 1; i < data->rank; i++)
		d[rank++] = data->d[i];
	if (!alloc(o, out, rank, d) || !known(data) || !known(idx)) {
		out->n = -1;
		return;
	}
	/* an empty result is done: with a zero among the dims, the others
	 * are not bounded by MAX_FOLD (2^40 empty rows would loop) */
	if (out->n == 0)
		return;
	for (int i = 0; i < axis; i++)
		outer *= data->d[i];
	for (int i = (int)axis + 1; i < data->rank; i++)
		inner *= data->d[i];
	for (int64_t a = 0, k = 0; a < outer; a++)
		for (int64_t j = 0; j < idx->n; j++) {
			int64_t ix = idx->iv[j].k;
			if (idx->iv[j].batch) { /* k * N: not known */
				out->n = -1;
				return;
			}
			if (ix < 0)
				ix += data->d[axis];
			if (ix < 0 || ix >= data->d[axis]) {
				NERR(o, "index %" PRId64 " is out of range", idx->iv[j].k);
				out->n = -1;
				return;
			}
			for (int64_t b = 0; b < inner; b++, k++)
				copy(out, k, data, (a * data->d[axis] + ix) * inner + b);
		}
}

/* Unsqueeze, Squeeze, Reshape, Flatten, Identity: the same values. */
static void
same_values(Onnx *o, const Val *x, int rank, const int64_t *d, Val *out)
{
	if (!alloc(o, out, rank, d) || !known(x) || out->n != x->n) {
		out->n = -1;
		return;
	}
	memcpy(out->iv, x->iv, x->n * sizeof *x->iv);
	memcpy(out->fv, x->fv, x->n * sizeof *x->fv);
}

/* Squeeze or (un) Unsqueeze: the same values in another shape. */
static void
squeeze(Onnx *o, const Val **in, int nin, Val *out, bool un)
{
	int64_t ax[MAX_RANK + 1], d[MAX_RANK + 1];
	int n = attr_ints(o, "axes", ax, MAX_RANK + 1), rank, k = 0;
	bool mark[MAX_RANK + 2] = { false };
	const Val *x = in[0];

	if (n == -1 && nin > 1 && known(in[1]) && in[1]->n <= MAX_RANK + 1) {
		n = (int)in[1]->n;
		for (int i = 0; i < n; i++)
			ax[i] = in[1]->iv[i].k;
	}
	if (!x->shaped || n < 0 || (un && n == 0))
		return;
	rank = un ? x->rank + n : x->rank;
	if (rank > MAX_RANK + 1)
		return;
	for (int i = 0; i < n; i++) {
		int64_t a = ax[i] < 0 ? ax[i] + rank : ax[i];
		if (a < 0 || a >= rank)
			return;
		mark[a] = true;
	}
	for (int i = 0, j = 0; i < (un ? rank : x->rank); i++) {
		if (un)
			d[k++] = mark[i] ? 1 : x->d[j++];
		else if (!(n ? mark[i] : x->d[i] == 1))
			d[k++] = x->d[i];
	}
	same_values(o, x, k, d, out);
}

/* Squeeze: the axes given, or every axis of extent 1, taken out. */
void
fold_squeeze(Onnx *o, char code, const Val **in, int nin, Val *out)
{
	squeeze(o, in, nin, out, false);
}

/* Unsqueeze: axes of extent 1 inserted. */
void
fold_unsqueeze(Onnx *o, char code, const Val **in, int nin, Val *out)
{
	squeeze(o, in, nin, out, true);
}

/* Reshape of x (in[0]) to the shape s (in[1]). */
void
fold_reshape(Onnx *o, char code, const Val **in, int nin, Val *out)
{
	const Val *x = in[0], *s = nin > 1 ? in[1] : NULL;
	int64_t d[MAX_RANK + 1], infer = -1, prod = 1, n = count(x);

	if (!x->shaped || !known(s) || s->rank != 1 || s->n > MAX_RANK + 1)
		return;
	for (int64_t i = 0; i < s->n; i++) {
		if (s->iv[i].batch)
			return;
		d[i] = s->iv[i].k == 0 && i < x->rank && !attr_i(o->np, "allowzero", 0)
			       ? x->d[i] : s->iv[i].k;
		if (d[i] == -1 && infer < 0)
			infer = i;
		else if (d[i] < 0 || !ck_mul(prod, d[i], &prod))
			return;
	}
	if (infer >= 0) {
		if (prod == 0 || n % prod)
			return;
		d[infer] = n / prod;
	} else if (prod != n) {
		return;
	}
	same_values(o, x, (int)s->n, d, out);
}

/* Flatten: [before axis, from axis on]. */
void
fold_flatten(Onnx *o, char code, const Val **in, int nin, Val *out)
{
	const Val *x = in[0];
	int64_t axis = attr_i(o->np, "axis", 1), d[2] = { 1, 1 };

	if (!x->shaped)
		return;
	if (axis < 0)
		axis += x->rank;
	if (axis < 0 || axis > x->rank)
		return;
	for (int i = 0; i < x->rank; i++) /* [0, 2^40, 2^40] has 0 elements */
		if (!ck_mul(d[i >= axis], x->d[i], &d[i >= axis]))
			return;
	same_values(o, x, 2, d, out);
}

/* Transpose by perm, by default reversing the axes. */
void
fold_transpose(Onnx *o, char code, const Val **in, int nin, Val *out)
{
	const Val *x = in[0];
	int64_t p[MAX_RANK + 1], d[MAX_RANK + 1], st[MAX_RANK + 1], idx[MAX_RANK + 1] = { 0 };
	int n = attr_ints(o, "perm", p, MAX_RANK + 1);
	unsigned used = 0;

	if (!x->shaped || n == -2)
		return;
	if (n == -1)
		for (n = 0; n < x->rank; n++)
			p[n] = x->rank - 1 - n;
	if (n != x->rank)
		return;
	for (int i = 0; i < n; i++) {
		/* a repeated axis read past the values */
		if (p[i] < 0 || p[i] >= n || (used & (1u << p[i]))) {
			NERR(o, "bad permutation");
			return;
		}
		used |= 1u << p[i];
		d[i] = x->d[p[i]];
	}
	if (!alloc(o, out, n, d) || !known(x)) {
		out->n = -1;
		return;
	}
	if (out->n == 0) /* the strides below are bounded by a nonzero count */
		return;
	for (int i = n - 1, s = 1; i >= 0; i--)
		st[i] = s, s *= (int)x->d[i];
	for (int64_t k = 0; k < out->n; k++) {
		int64_t src = 0;
		for (int i = 0; i < n; i++)
			src += idx[i] * st[p[i]];
		copy(out, k, x, src);
		for (int i = n - 1; i >= 0 && ++idx[i] == d[i]; i--)
			idx[i] = 0;
	}
}

/* Concat along axis. */
void
fold_concat(Onnx *o, char code, const Val **in, int nin, Val *out)
{
	int64_t axis = attr_i(o->np, "axis", 0), d[MAX_RANK + 1], outer = 1;
	const Val *x0 = NULL;
	bool vals = true;

	for (int i = 0; i < nin; i++) {
		if (!in[i])
			continue;
		if (!in[i]->shaped || (x0 && in[i]->rank != x0->rank))
			return;
		for (int k = 0; x0 && k < x0->rank; k++)
			if (k != axis && in[i]->d[k] != x0->d[k]) { /* the copy relies on it */
				NERR(o, "input %d has dimension %" PRId64 " on axis %d, input 1 %"
					PRId64, i + 1, in[i]->d[k], k, x0->d[k]);
				return;
			}
		if (!x0) {
			x0 = in[i];
			memcpy(d, x0->d, x0->rank * sizeof *d);
			if (axis < 0)
				axis += x0->rank;
			if (axis < 0 || axis >= x0->rank)
				return;
			d[axis] = 0;
		}
		d[axis] += in[i]->d[axis];
		vals &= known(in[i]);
	}
	if (!x0 || !alloc(o, out, x0->rank, d) || !vals) {
		out->n = -1;
		return;
	}
	for (int i = 0; i < axis; i++)
		outer *= d[i];
	for (int64_t a = 0, k = 0; a < outer; a++)
		for (int i = 0; i < nin; i++) {
			int64_t chunk = in[i] ? in[i]->n / (outer ? outer : 1) : 0;
			for (int64_t j = 0; j < chunk; j++)
				copy(out, k++, in[i], a * chunk + j);
		}
}

static int64_t
clampi(int64_t v, int64_t lo, int64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* ONNX Slice semantics for one axis of extent dim. */
static void
slice_axis(int64_t dim, int64_t start, int64_t end, int64_t step, Range3 *r, int ax)
{
	int64_t n;

	/* a step past the extent takes at most one element, as one of
	 * dim + 1 does: (end - start + step - 1) stays in 64 bits */
	if (step > dim + 1 || step < -dim - 1)
		step = step > 0 ? dim + 1 : -dim - 1;
	if (start < 0)
		start += dim;
	if (end < 0)
		end += dim;
	if (dim == 0) { /* nothing to take, whichever the direction */
		n = 0, start = 0;
	} else if (step > 0) {
		start = clampi(start, 0, dim);
		end = clampi(end, 0, dim);
		n = end > start ? (end - start + step - 1) / step : 0;
	} else {
		start = clampi(start, 0, dim - 1);
		end = clampi(end, -1, dim - 1);
		n = start > end ? (start - end - step - 1) / -step : 0;
	}
	r->start[ax] = start;
	r->step[ax] = step;
	r->len[ax] = n;
}

int64_t
slice_extent(const Onnx *o, const Val *x, int a)
{
	if (!x->act || a != x->bax)
		return x->d[a];
	if (o->batch == BATCH || x->d[a] > ((int64_t)1 << 62) / o->batch)
		return (int64_t)1 << 62;
	return o->batch * x->d[a];
}

bool
slice_ranges(Onnx *o, const Val **in, int nin, const Val *x, Range3 *r)
{
	int64_t st[MAX_RANK + 1], en[MAX_RANK + 1], ax[MAX_RANK + 1], sp[MAX_RANK + 1];
	int n = attr_ints(o, "starts", st, MAX_RANK + 1), na;

	for (int i = 0; i < x->rank; i++)
		r->start[i] = 0, r->step[i] = 1, r->len[i] = slice_extent(o, x, i);
	if (n >= 0) { /* opset < 10 */
		if (attr_ints(o, "ends", en, MAX_RANK + 1) != n)
			return false;
		na = attr_ints(o, "axes", ax, MAX_RANK + 1);
		for (int i = 0; i < n; i++)
			sp[i] = 1;
	} else {
		const Val *v[4] = { nin > 1 ? in[1] : NULL, nin > 2 ? in[2] : NULL,
				    nin > 3 ? in[3] : NULL, nin > 4 ? in[4] : NULL };
		if (!known(v[0]) || !known(v[1]) || v[0]->n != v[1]->n || v[0]->n > MAX_RANK + 1)
			return false;
		n = (int)v[0]->n;
		na = v[2] ? (known(v[2]) && v[2]->n == n ? n : -2) : -1;
		if (na == -2 || (v[3] && (!known(v[3]) || v[3]->n != n)))
			return false;
		for (int i = 0; i < n; i++) {
			/* a batch multiple as a bound: past the end (x[:, :N]) */
			st[i] = v[0]->iv[i].batch ? INT64_MAX : v[0]->iv[i].k;
			en[i] = v[1]->iv[i].batch ? INT64_MAX : v[1]->iv[i].k;
			ax[i] = na > 0 ? v[2]->iv[i].k : i;
			sp[i] = v[3] ? v[3]->iv[i].k : 1;
		}
	}
	for (int i = 0; i < n; i++) {
		int64_t a = na >= 0 ? ax[i] : i;
		if (a < 0)
			a += x->rank;
		if (a < 0 || a >= x->rank || sp[i] == 0)
			return false;
		slice_axis(slice_extent(o, x, (int)a), st[i], en[i], sp[i], r, (int)a);
	}
	return true;
}

/* Slice: ONNX semantics, by slice_ranges. */
void
fold_slice(Onnx *o, char code, const Val **in, int nin, Val *out)
{
	const Val *x = in[0];
	Range3 r;
	int64_t idx[MAX_RANK + 1] = { 0 }, st[MAX_RANK + 1];

	if (!x->shaped || !slice_ranges(o, in, nin, x, &r))
		return;
	if (!alloc(o, out, x->rank, r.len) || !known(x)) {
		out->n = -1;
		return;
	}
	for (int i = x->rank - 1, s = 1; i >= 0; i--)
		st[i] = s, s *= (int)x->d[i];
	for (int64_t k = 0; k < out->n; k++) {
		int64_t src = 0;
		for (int i = 0; i < x->rank; i++)
			src += (r.start[i] + idx[i] * r.step[i]) * st[i];
		copy(out, k, x, src);
		for (int i = x->rank - 1; i >= 0 && ++idx[i] == r.len[i]; i--)
			idx[i] = 0;
	}
}

/* Range(start, limit, delta) of plain integers. */
void
fold_range(Onnx *o, char code, const Val **in, int nin, Val *out)
{
	int64_t n;
	const Val *s = in[0], *l = nin > 1 ? in[1] : NULL, *d = nin > 2 ? in[2] : NULL;

	if (!known(s) || !known(l) || !known(d) || !s->n || !l->n || !d->n ||
	    d->iv[0].k == 0 || s->iv[0].batch || l->iv[0].batch || d->iv[0].batch)
		return;
	/* n = ceil((limit - start) / delta), or 0; unknown if it overflows */
	if (__builtin_sub_overflow(l->iv[0].k, s->iv[0].k, &n) ||
	    __builtin_add_overflow(n, d->iv[0].k - (d->iv[0].k > 0 ? 1 : -1), &n) ||
	    (n == INT64_MIN && d->iv[0].k == -1))
		return;
	n /= d->iv[0].k;
	if (n < 0)
		n = 0;
	if (!alloc(o, out, 1, &n))
		return;
	for (int64_t i = 0; i < n; i++) {
		int64_t v = s->iv[0].k + i * d->iv[0].k;
		put(out, i, plain(v), s->fv[0] + (double)i * d->fv[0]);
	}
}

/* a shape tensor's values as dims; false if unknown or symbolic */
static bool
dims_of(const Val *s, int64_t *d, int max)
{
	if (!known(s) || s->n > max)
		return false;
	for (int64_t i = 0; i < s->n; i++) {
		if (s->iv[i].batch || s->iv[i].k < 0)
			return false;
		d[i] = s->iv[i].k;
	}
	return true;
}

/* ConstantOfShape: the shape in[0] filled with the attribute value. */
void
fold_constant_of_shape(Onnx *o, char code, const Val **in, int nin, Val *out)
{
	const Val *shape = in[0];
	const Onnx__AttributeProto *a = attr(o->np, "value");
	const Val *fill = a && a->t ? tensor_val(o, a->t, "value") : NULL;
	int64_t d[MAX_RANK + 1];

	if (!dims_of(shape, d, MAX_RANK + 1) || !alloc(o, out, (int)shape->n, d))
		return;
	for (int64_t i = 0; i < out->n; i++)
		put(out, i, known(fill) && fill->n ? fill->iv[0] : plain(0),
		    known(fill) && fill->n ? fill->fv[0] : 0);
}

/* Expand of x (in[0]) to the shape in[1], broadcast. */
void
fold_expand(Onnx *o, char code, const Val **in, int nin, Val *out)
{
	const Val *x = in[0], *shape = nin > 1 ? in[1] : NULL;
	Val t = { 0 };
	int rank;
	int64_t d[MAX_RANK + 1];

	if (!x->shaped || !dims_of(shape, t.d, MAX_RANK + 1))
		return;
	t.rank = (int)shape->n;
	if (!bshape(x, &t, &rank, d) || !alloc(o, out, rank, d) || !known(x)) {
		out->n = -1;
		return;
	}
	for (int64_t i = 0; i < out->n; i++)
		copy(out, i, x, bindex(x, out, i));
}

/* Where(condition, x, y), broadcast. */
void
fold_where(Onnx *o, char code, const Val **in, int nin, Val *out)
{
	if (nin < 3 || !bshape_all(in, 3, out) || !alloc(o, out, out->rank, out->d) ||
	    !known(in[0]) || !known(in[1]) || !known(in[2])) {
		out->n = -1;
		return;
	}
	for (int64_t i = 0; i < out->n; i++) {
		const Int c = in[0]->iv[bindex(in[0], out, i)];
		const Val *pick = c.k || c.batch ? in[1] : in[2];
		copy(out, i, pick, bindex(pick, out, i));
	}
}

/* ScatterND: data with updates written at indices (both constants). */
void
fold_scatternd(Onnx *o, char code, const Val **in, int nin, Val *out)
{
	const Val *x = in[0], *ix = nin > 1 ? in[1] : NULL, *up = nin > 2 ? in[2] : NULL;
	int64_t q, inner = 1, slices;

	if (!x->shaped || !alloc(o, out, x->rank, x->d) || !known(x) || !known(ix) ||
	    !known(up) || ix->rank < 1 || (q = ix->d[ix->rank - 1]) > x->rank) {
		out->n = -1;
		return;
	}
	if (x->n == 0) /* empty: the product below is not bounded */
		return;
	memcpy(out->iv, x->iv, x->n * sizeof *x->iv);
	memcpy(out->fv, x->fv, x->n * sizeof *x->fv);
	for (int i = (int)q; i < x->rank; i++)
		inner *= x->d[i];
	slices = q ? ix->n / q : 0;
	if (slices * inner != up->n) {
		out->n = -1;
		return;
	}
	for (int64_t s = 0; s < slices; s++) {
		int64_t off = 0;
		for (int64_t j = 0; j < q; j++) {
			int64_t v = ix->iv[s * q + j].k;
			v = v < 0 ? v + x->d[j] : v;
			if (v < 0 || v >= x->d[j]) {
				out->n = -1;
				return;
			}
			off = off * x->d[j] + v;
		}
		for (int64_t b = 0; b < inner; b++)
			copy(out, off * inner + b, up, s * inner + b);
	}
}

/* x's values through the unary operator op (fold.h, fold_unary). */
static void
unary(Onnx *o, const Val *x, char op, Val *out)
{
	if (!x->shaped || !alloc(o, out, x->rank, x->d) || !known(x)) {
		out->n = -1;
		return;
	}
	for (int64_t i = 0; i < x->n; i++) {
		Int v = x->iv[i];
		double f = x->fv[i];
		if ((v.batch && op != 'i' && op != 'a') || (isnan(f) && (op == 'S' || op == 'C')) ||
		    (v.k == INT64_MIN && (op == 'n' || op == 'a'))) { /* -v.k overflows */
			out->n = -1;
			return;
		}
		switch (op) {
		case 'n': put(out, i, plain(-v.k), -f); break;
		case '!': put(out, i, plain(!v.k), !v.k); break;
		case 's': put(out, i, plain(trunc_int(sqrt(f))), sqrt(f)); break;
		case 'r': put(out, i, plain(v.k > 0 ? v.k : 0), f > 0 ? f : 0); break;
		case 'f': put(out, i, plain(trunc_int(floor(f))), floor(f)); break;
		case 'c': put(out, i, plain(trunc_int(ceil(f))), ceil(f)); break;
		case 'S': put(out, i, plain(trunc_int(sin(f))), sin(f)); break;
		case 'C': put(out, i, plain(trunc_int(cos(f))), cos(f)); break;
		case 'a': put(out, i, v.batch ? v : plain(v.k < 0 ? -v.k : v.k), fabs(f)); break;
		default: put(out, i, v, f); break;
		}
	}
}

/* Unary operators of code n a ! s r f c S C i (fold.h). */
void
fold_unary(Onnx *o, char code, const Val **in, int nin, Val *out)
{
	unary(o, in[0], code, out);
}

/* Operators whose values oraclec does not compute: the input's shape. */
void
fold_same_shape(Onnx *o, char code, const Val **in, int nin, Val *out)
{
	if (in[0]->shaped)
		shape_of(out, in[0]->rank, in[0]->d);
}

/* Cast: integer types truncate the float values. */
void
fold_cast(Onnx *o, char code, const Val **in, int nin, Val *out)
{
	const Val *x = in[0];
	int64_t to = attr_i(o->np, "to", 0);
	bool integral = to != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT &&
			to != ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE &&
			to != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16 &&
			to != ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16;

	unary(o, x, 'i', out);
	for (int64_t i = 0; integral && i < out->n; i++)
		if (!out->iv[i].batch) {
			double f = out->fv[i];
			out->iv[i].k = trunc_int(f);
			out->fv[i] = (double)out->iv[i].k;
		}
}

/* Constant: the value, value_ints, value_floats, value_int or
 * value_float attribute. */
void
fold_constant(Onnx *o, char code, const Val **in, int nin, Val *out)
{
	const Onnx__AttributeProto *a;

	if ((a = attr(o->np, "value")) && a->t) {
		Val *v = tensor_val(o, a->t, "constant");
		if (v)
			*out = *v;
	} else if ((a = attr(o->np, "value_ints"))) {
		int64_t n = (int64_t)a->n_ints;
		if (alloc(o, out, 1, &n))
			for (int64_t i = 0; i < n; i++)
				put(out, i, plain(a->ints[i]), (double)a->ints[i]);
	} else if ((a = attr(o->np, "value_floats"))) {
		int64_t n = (int64_t)a->n_floats;
		if (alloc(o, out, 1, &n))
			for (int64_t i = 0; i < n; i++)
				put(out, i, plain(trunc_int(a->floats[i])), a->floats[i]);
	} else if ((a = attr(o->np, "value_int")) && alloc(o, out, 0, NULL)) {
		put(out, 0, plain(a->i), (double)a->i);
	} else if ((a = attr(o->np, "value_float")) && alloc(o, out, 0, NULL)) {
		put(out, 0, plain(trunc_int(a->f)), a->f);
	}
}

/* Reductions of constants: the shape only. */
void
fold_reduce(Onnx *o, char code, const Val **in, int nin, Val *out)
{
	int64_t ax[MAX_RANK + 1], d[MAX_RANK + 1];
	int n = attr_ints(o, "axes", ax, MAX_RANK + 1), k = 0;
	bool keep = attr_i(o->np, "keepdims", 1), mark[MAX_RANK + 1] = { false };
	const Val *x = in[0];

	if (n == -1 && nin > 1 && known(in[1]) && in[1]->n <= MAX_RANK + 1)
		for (n = 0; n < in[1]->n; n++)
			ax[n] = in[1]->iv[n].k;
	if (!x->shaped || n < -1)
		return;
	for (int i = 0; i < n; i++) {
		int64_t a = ax[i] < 0 ? ax[i] + x->rank : ax[i];
		if (a < 0 || a >= x->rank)
			return;
		mark[a] = true;
	}
	for (int i = 0; i < x->rank; i++)
		if (n > 0 && !mark[i])
			d[k++] = x->d[i];
		else if (keep)
			d[k++] = 1;
	shape_of(out, k, d);
}

/* Binary operators of code + - * / % = < > m M & | p (fold.h), broadcast. */
void
fold_binary(Onnx *o, char code, const Val **in, int nin, Val *out)
{
	if (nin >= 2 && in[0] && in[1])
		binary(o, code, in[0], in[1], out);
}

/* Size: an activation's count is N times its per-sample one. */
void
fold_size(Onnx *o, char code, const Val **in, int nin, Val *out)
{
	const Val *x = in[0];

	if (x->shaped && alloc(o, out, 0, NULL))
		put(out, 0, x->act && x->bax >= 0 ? (Int){ count(x), true } : plain(count(x)),
		    (double)count(x));
}

/* ---- decoders' constants: masks, positions ----------------------------- */

/* An integer input given as a scalar or a 1-element tensor (Trilu's k,
 * CumSum's axis); dflt when left out, false when not known. */
static bool
scalar_int(const Val *v, int64_t dflt, int64_t *out)
{
	if (!v) {
		*out = dflt;
		return true;
	}
	if (!known(v) || v->n != 1 || v->iv[0].batch)
		return false;
	*out = v->iv[0].k;
	return true;
}

/* Trilu: the upper (attribute upper, default 1) or lower triangle of the
 * last two dimensions from diagonal k (in[1]), the rest zero. */
void
fold_trilu(Onnx *o, char code, const Val **in, int nin, Val *out)
{
	const Val *x = in[0];
	int64_t k, rows, cols;
	bool upper = attr_i(o->np, "upper", 1) != 0;

	if (!x->shaped || x->rank < 2)
		return;
	if (!alloc(o, out, x->rank, x->d) || !known(x) ||
	    !scalar_int(nin > 1 ? in[1] : NULL, 0, &k)) {
		out->n = -1;
		return;
	}
	rows = x->d[x->rank - 2], cols = x->d[x->rank - 1];
	for (int64_t i = 0; i < out->n; i++) {
		int64_t r = i / cols % rows, c = i % cols;
		/* c - r >= k keeps the upper triangle, c - r <= k the lower */
		bool keep = upper ? c - r >= k : c - r <= k;
		if (keep)
			copy(out, i, x, i);
		else
			put(out, i, plain(0), 0);
	}
}

/* CumSum along axis in[1]; exclusive and reverse attributes. */
void
fold_cumsum(Onnx *o, char code, const Val **in, int nin, Val *out)
{
	const Val *x = in[0];
	int64_t axis, inner = 1, n;
	bool excl = attr_i(o->np, "exclusive", 0), rev = attr_i(o->np, "reverse", 0);

	if (!x->shaped)
		return;
	if (!alloc(o, out, x->rank, x->d) || !known(x) || x->rank < 1 ||
	    !scalar_int(nin > 1 ? in[1] : NULL, 0, &axis) || axis < -x->rank ||
	    axis >= x->rank) {
		out->n = -1;
		return;
	}
	axis += axis < 0 ? x->rank : 0;
	n = x->d[axis];
	for (int i = (int)axis + 1; i < x->rank; i++)
		inner *= x->d[i];
	for (int64_t line = 0; n && line < out->n / n; line++) {
		int64_t base = line / inner * n * inner + line % inner;
		Int acc = plain(0);
		double f = 0;
		for (int64_t j = 0; j < n; j++) {
			int64_t at = base + (rev ? n - 1 - j : j) * inner;
			Int v = x->iv[at];
			double fv = x->fv[at];
			if (excl)
				put(out, at, acc, f);
			if (!int_binary('+', acc, v, &acc)) {
				out->n = -1;
				return;
			}
			f += fv;
			if (!excl)
				put(out, at, acc, f);
		}
	}
}

/* Tile: x repeated repeats[i] times along each axis (in[1]). */
void
fold_tile(Onnx *o, char code, const Val **in, int nin, Val *out)
{
	const Val *x = in[0], *r = nin > 1 ? in[1] : NULL;
	int64_t d[MAX_RANK + 1], idx[MAX_RANK + 1] = { 0 };

	if (!x->shaped || !dims_of(r, d, MAX_RANK + 1) || r->n != x->rank)
		return;
	for (int i = 0; i < x->rank; i++)
		if (!ck_mul(d[i], x->d[i], &d[i]))
			return;
	if (!alloc(o, out, x->rank, d) || !known(x)) {
		out->n = -1;
		return;
	}
	for (int64_t k = 0; k < out->n; k++) {
		int64_t src = 0;
		for (int i = 0; i < x->rank; i++)
			src = src * x->d[i] + idx[i] % x->d[i];
		copy(out, k, x, src);
		for (int i = x->rank - 1; i >= 0 && ++idx[i] == d[i]; i--)
			idx[i] = 0;
	}
}

/* GatherElements: out[i] = data[i with axis a replaced by indices[i]]. */
void
fold_gather_elements(Onnx *o, char code, const Val **in, int nin, Val *out)
{
	const Val *x = in[0], *ix = nin > 1 ? in[1] : NULL;
	int64_t a = attr_i(o->np, "axis", 0), idx[MAX_RANK + 1] = { 0 };

	if (!x->shaped || !ix || !ix->shaped || ix->rank != x->rank)
		return;
	a += a < 0 ? x->rank : 0;
	if (a < 0 || a >= x->rank)
		return;
	if (!alloc(o, out, ix->rank, ix->d) || !known(x) || !known(ix)) {
		out->n = -1;
		return;
	}
	for (int64_t k = 0; k < out->n; k++) {
		int64_t src = 0, j = ix->iv[k].k;
		j += j < 0 ? x->d[a] : 0;
		if (ix->iv[k].batch || j < 0 || j >= x->d[a]) {
			out->n = -1;
			return;
		}
		for (int i = 0; i < x->rank; i++) {
			int64_t c = i == a ? j : idx[i];
			if (c >= x->d[i]) { /* indices wider than the data */
				out->n = -1;
				return;
			}
			src = src * x->d[i] + c;
		}
		copy(out, k, x, src);
		for (int i = x->rank - 1; i >= 0 && ++idx[i] == ix->d[i]; i--)
			idx[i] = 0;
	}
}

/* ---- Einsum ------------------------------------------------------------- */

/* A letter's label: a-z 0-25, A-Z 26-51; -1 for anything else. */
static int
letter(char c)
{
	return c >= 'a' && c <= 'z' ? c - 'a' : c >= 'A' && c <= 'Z' ? 26 + c - 'A' : -1;
}

/* One term of an equation, [p, end) without spaces: its letters into
 * lab (the ellipsis as -1), their number into *n; false if malformed. */
static bool
einsum_term(const char *p, const char *end, int *lab, int *n, bool *ell)
{
	*n = 0, *ell = false;
	while (p < end) {
		if (*p == ' ') {
			p++;
		} else if (end - p >= 3 && strncmp(p, "...", 3) == 0 && !*ell) {
			*ell = true;
			if (*n > MAX_RANK)
				return false;
			lab[(*n)++] = -1;
			p += 3;
		} else if (letter(*p) >= 0 && *n <= MAX_RANK) {
			lab[(*n)++] = letter(*p++);
		} else {
			return false;
		}
	}
	return true;
}

bool
einsum_parse(const char *eq, const Val **in, int nin, Einsum *e, const char **why)
{
	const char *arrow = strstr(eq, "->"), *p = eq, *end = arrow ? arrow : eq + strlen(eq);
	int raw[2][MAX_RANK + 1], nraw[2], ell = 0, seen[52] = { 0 };
	bool has[2];

	memset(e, 0, sizeof *e);
	for (e->n = 0; p <= end; e->n++) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		const char *stop = comma ? comma : end;
		if (e->n == 2) {
			*why = "an equation of more than two operands is not supported";
			return false;
		}
		if (!einsum_term(p, stop, raw[e->n], &nraw[e->n], &has[e->n])) {
			*why = "the equation is malformed";
			return false;
		}
		p = stop + 1;
	}
	if (e->n != nin) {
		*why = "the equation's operands do not match the inputs";
		return false;
	}
	for (int k = 0; k < e->n; k++) { /* the dimensions each ellipsis stands for */
		int letters = nraw[k] - has[k], dims;
		if (!in[k] || !in[k]->shaped) {
			*why = "an operand's shape is not known";
			return false;
		}
		dims = in[k]->rank - letters;
		if (dims < 0 || (!has[k] && dims)) {
			*why = "the equation does not fit the operands' ranks";
			return false;
		}
		ell = dims > ell ? dims : ell;
	}
	for (int k = 0; k < e->n; k++) {
		int dims = in[k]->rank - (nraw[k] - has[k]);
		e->rank[k] = in[k]->rank;
		for (int i = 0, a = 0; i < nraw[k]; i++) {
			if (raw[k][i] >= 0) {
				seen[raw[k][i]]++;
				e->lab[k][a++] = raw[k][i];
				continue;
			}
			for (int j = 0; j < dims; j++)
				e->lab[k][a++] = 52 + ell - dims + j;
		}
		for (int a = 0; a < e->rank[k]; a++) {
			int64_t d = in[k]->d[a], *sz = &e->size[e->lab[k][a]];
			if (*sz == 0 || (*sz == 1 && e->lab[k][a] >= 52))
				*sz = d;
			else if (d != *sz && !(d == 1 && e->lab[k][a] >= 52)) {
				*why = "a label's dimensions differ between the operands";
				return false;
			}
		}
	}
	if (arrow) {
		int out[MAX_RANK + 1], n;
		bool oell;
		if (!einsum_term(arrow + 2, arrow + strlen(arrow), out, &n, &oell)) {
			*why = "the equation's output is malformed";
			return false;
		}
		for (int i = 0; i < n; i++) {
			if (out[i] >= 0) {
				if (!seen[out[i]] || e->orank > MAX_RANK) {
					*why = "the output names a label no operand has";
					return false;
				}
				for (int j = 0; j < e->orank; j++)
					if (e->out[j] == out[i]) {
						*why = "the output repeats a label";
						return false;
					}
				e->out[e->orank++] = out[i];
				continue;
			}
			for (int j = 0; j < ell && e->orank <= MAX_RANK; j++)
				e->out[e->orank++] = 52 + j;
		}
	} else { /* the ellipsis, then the labels seen once, in ASCII order */
		for (int j = 0; j < ell; j++)
			e->out[e->orank++] = 52 + j;
		for (int c = 26; c < 52 + 26 && e->orank <= MAX_RANK; c++)
			if (seen[c % 52] == 1)
				e->out[e->orank++] = c % 52;
	}
	if (e->orank > MAX_RANK + 1) {
		*why = "the output has too many dimensions";
		return false;
	}
	return true;
}

/* Einsum of constants: the output's shape, and its values when the sum
 * runs over at most MAX_FOLD terms. */
void
fold_einsum(Onnx *o, char code, const Val **in, int nin, Val *out)
{
	const char *eq = attr_s(o, "equation", ""), *why;
	Einsum e;
	int64_t d[MAX_RANK + 1], terms = 1, at[EINSUM_LABELS] = { 0 };
	int used[EINSUM_LABELS], nused = 0;

	if (!einsum_parse(eq, in, nin, &e, &why))
		return;
	for (int i = 0; i < e.orank; i++)
		d[i] = e.size[e.out[i]];
	for (int l = 0; l < EINSUM_LABELS; l++)
		if (e.size[l]) {
			used[nused++] = l;
			if (!ck_mul(terms, e.size[l], &terms))
				terms = INT64_MAX;
		}
	if (!alloc(o, out, e.orank, d) || terms > MAX_FOLD || !known(in[0]) ||
	    (e.n > 1 && !known(in[1]))) {
		out->n = -1;
		return;
	}
	for (int64_t i = 0; i < out->n; i++)
		put(out, i, plain(0), 0);
	for (int64_t t = 0; t < terms; t++) {
		double f = 1;
		int64_t oi = 0;
		for (int k = 0; k < e.n; k++) {
			int64_t ii = 0;
			for (int a = 0; a < e.rank[k]; a++) /* 1 under a broadcast ellipsis */
				ii = ii * in[k]->d[a] + (in[k]->d[a] == 1 ? 0 : at[e.lab[k][a]]);
			if (in[k]->iv[ii].batch) {
				out->n = -1;
				return;
			}
			f *= in[k]->fv[ii];
		}
		for (int a = 0; a < e.orank; a++)
			oi = oi * d[a] + at[e.out[a]];
		f += out->fv[oi];
		put(out, oi, plain(trunc_int(f)), f);
		for (int u = nused - 1; u >= 0 && ++at[used[u]] == e.size[used[u]]; u--)
			at[used[u]] = 0;
	}
}
