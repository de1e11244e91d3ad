/* fold.c -- constant folding of ONNX shape computations.
 *
 * Exporters compute shapes at run time when the batch is dynamic: PyTorch
 * writes Shape -> Gather -> Unsqueeze -> Concat -> Reshape for x.view(N, -1)
 * and similar chains for attention heads and window partitions.  oraclec
 * evaluates them here, on small integer tensors, with the batch kept as the
 * symbolic value BATCH: N * 1, N + 0, N / 1 stay N; N against a number
 * <= 0 compares as a positive number; any other use of N makes the value
 * unknown, which is only an error if a layer needs it (the node that
 * needs it says so).  Float constants are carried for Clip, Pow and the
 * like.  Tensors over MAX_FOLD elements are never materialised. */
#include "frontend/onnx.h"
#include "util/checked.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

static bool
sym(int64_t v)
{
	return v == BATCH;
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

/* a value with the given shape and room for its elements; false if large */
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
put(Val *v, int64_t i, int64_t x, double f)
{
	v->iv[i] = x;
	v->fv[i] = sym(x) ? NAN : f;
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

/* one binary integer op with the symbolic batch; *ok false: unknown */
static int64_t
iop(char op, int64_t x, int64_t y, bool *ok)
{
	int64_t r = 0;

	if (sym(x) || sym(y)) {
		int64_t c = sym(x) ? y : x;
		if (sym(x) && sym(y))
			*ok = op == '=' ;
		else if (op == '*' && c == 1)
			return BATCH;
		else if (op == '/' && sym(x) && c == 1)
			return BATCH;
		else if ((op == '+' || op == '-') && c == 0 && (op == '+' || sym(x)))
			return BATCH;
		else if (op == '=' && c <= 0)
			return 0; /* the batch is positive */
		else
			*ok = false;
		return op == '=' ? 1 : 0;
	}
	switch (op) {
	case '+': *ok &= ck_add(x, y, &r); break;
	case '-': *ok &= !__builtin_sub_overflow(x, y, &r); break;
	case '*': *ok &= ck_mul(x, y, &r); break;
	case '/':
		if (y == 0 || (x == INT64_MIN && y == -1))
			*ok = false;
		else /* ONNX integer Div truncates toward zero, as C does */
			r = x / y;
		break;
	case '%':
		if (y == 0 || (x == INT64_MIN && y == -1))
			*ok = false;
		else
			r = ((x % y) + y) % y; /* Mod with fmod=0: the divisor's sign */
		break;
	case '=': r = x == y; break;
	case '<': r = x < y; break;
	case '>': r = x > y; break;
	case 'm': r = x < y ? x : y; break;
	case 'M': r = x > y ? x : y; break;
	}
	return r;
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
	default: return fmax(x, y);
	}
}

static void
binary(Onnx *o, char op, const Val *a, const Val *b, Val *out)
{
	int rank;
	int64_t d[MAX_RANK + 1];

	if (!known(a) || !known(b) || !bshape(a, b, &rank, d) || !alloc(o, out, rank, d))
		return;
	for (int64_t i = 0; i < out->n; i++) {
		int64_t ia = bindex(a, out, i), ib = bindex(b, out, i);
		bool ok = true;
		int64_t r = iop(op, a->iv[ia], b->iv[ib], &ok);
		if (!ok) {
			out->n = -1; /* depends on the batch in a way not modelled */
			return;
		}
		put(out, i, r, fop(op, a->fv[ia], b->fv[ib]));
	}
}

/* ---- shape operations --------------------------------------------------- */

static void
fold_shape(Onnx *o, const Val *x, Val *out)
{
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
		if (x->act && start + i == 0)
			v = o->batch; /* BATCH, or the batch the file fixes */
		put(out, i, v, (double)v);
	}
}

static void
fold_gather(Onnx *o, const Val *data, const Val *idx, Val *out)
{
	int64_t axis = attr_i(o->np, "axis", 0), d[MAX_RANK + 1], outer = 1, inner = 1;
	int rank = 0;

	if (!known(data) || !known(idx) || data->rank < 1)
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
	/* an empty result is done: with a zero among the dims, the others
	 * are not bounded by MAX_FOLD, nor their products by 64 bits */
	if (!alloc(o, out, rank, d) || out->n == 0)
		return;
	for (int i = 0; i < axis; i++)
		outer *= data->d[i];
	for (int i = (int)axis + 1; i < data->rank; i++)
		inner *= data->d[i];
	for (int64_t a = 0, k = 0; a < outer; a++)
		for (int64_t j = 0; j < idx->n; j++) {
			int64_t ix = idx->iv[j];
			if (ix < 0)
				ix += data->d[axis];
			if (ix < 0 || ix >= data->d[axis]) {
				NERR(o, "index %" PRId64 " is out of range", idx->iv[j]);
				out->n = -1;
				return;
			}
			for (int64_t b = 0; b < inner; b++, k++) {
				int64_t src = (a * data->d[axis] + ix) * inner + b;
				put(out, k, data->iv[src], data->fv[src]);
			}
		}
}

/* Unsqueeze, Squeeze, Reshape, Flatten, Identity, Cast: same values. */
static void
same_values(Onnx *o, const Val *x, int rank, const int64_t *d, Val *out)
{
	if (!known(x) || !alloc(o, out, rank, d) || out->n != x->n) {
		out->n = -1;
		return;
	}
	memcpy(out->iv, x->iv, x->n * sizeof *x->iv);
	memcpy(out->fv, x->fv, x->n * sizeof *x->fv);
}

static void
fold_unsqueeze(Onnx *o, const Val **in, int nin, Val *out, bool un)
{
	int64_t ax[MAX_RANK + 1], d[MAX_RANK + 1];
	int n = attr_ints(o, "axes", ax, MAX_RANK + 1), rank, k = 0;
	bool mark[MAX_RANK + 2] = { false };
	const Val *x = in[0];

	if (n == -1 && nin > 1 && known(in[1]) && in[1]->n <= MAX_RANK + 1) {
		n = (int)in[1]->n;
		memcpy(ax, in[1]->iv, n * sizeof *ax);
	}
	if (!known(x) || n < 0 || (un && n == 0))
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

static void
fold_concat(Onnx *o, const Val **in, int nin, Val *out)
{
	int64_t n = 0, at = 0;

	/* shape vectors: 1-D (or scalars), joined along axis 0 */
	for (int i = 0; i < nin; i++) {
		if (!in[i])
			continue;
		if (!known(in[i]) || in[i]->rank > 1)
			return;
		n += in[i]->n;
	}
	if (!alloc(o, out, 1, &n))
		return;
	for (int i = 0; i < nin; i++)
		for (int64_t j = 0; in[i] && j < in[i]->n; j++, at++)
			put(out, at, in[i]->iv[j], in[i]->fv[j]);
}

static void
fold_slice(Onnx *o, const Val **in, int nin, Val *out)
{
	const Val *x = in[0];
	int64_t start, end, step = 1, len, n = 0;

	/* 1-D data, one axis (what shape computations use) */
	if (!known(x) || x->rank != 1 || nin < 3 || !known(in[1]) || !known(in[2]) ||
	    in[1]->n != 1 || in[2]->n != 1)
		return;
	if (nin > 3 && in[3] && (!known(in[3]) || in[3]->n != 1 || (in[3]->iv[0] != 0 &&
								  in[3]->iv[0] != -1)))
		return;
	if (nin > 4 && in[4]) {
		if (!known(in[4]) || in[4]->n != 1 || in[4]->iv[0] == 0)
			return;
		step = in[4]->iv[0];
	}
	len = x->d[0];
	if (step > len + 1 || step < -len - 1) /* at most one element: same result */
		step = step > 0 ? len + 1 : -len - 1;
	start = in[1]->iv[0], end = in[2]->iv[0];
	start = start < 0 ? start + len : start;
	end = end < 0 && end > INT64_MIN + len ? end + len : end;
	if (step > 0) {
		start = start < 0 ? 0 : start > len ? len : start;
		end = end < 0 ? 0 : end > len ? len : end;
		n = end > start ? (end - start + step - 1) / step : 0;
	} else {
		start = start < 0 ? -1 : start >= len ? len - 1 : start;
		end = end < -1 ? -1 : end >= len ? len - 1 : end;
		n = start > end ? (start - end - step - 1) / -step : 0;
	}
	if (!alloc(o, out, 1, &n))
		return;
	for (int64_t i = 0; i < n; i++)
		put(out, i, x->iv[start + i * step], x->fv[start + i * step]);
}

static void
fold_range(Onnx *o, const Val **in, int nin, Val *out)
{
	int64_t n;

	if (nin < 3 || !known(in[0]) || !known(in[1]) || !known(in[2]) || in[2]->iv[0] == 0 ||
	    sym(in[0]->iv[0]) || sym(in[1]->iv[0]) || sym(in[2]->iv[0]))
		return;
	/* n = ceil((limit - start) / delta), or 0; unknown if it overflows */
	if (__builtin_sub_overflow(in[1]->iv[0], in[0]->iv[0], &n) ||
	    __builtin_add_overflow(n, in[2]->iv[0] - (in[2]->iv[0] > 0 ? 1 : -1), &n) ||
	    (n == INT64_MIN && in[2]->iv[0] == -1))
		return;
	n /= in[2]->iv[0];
	if (n < 0)
		n = 0;
	if (!alloc(o, out, 1, &n))
		return;
	for (int64_t i = 0; i < n; i++) {
		int64_t v = in[0]->iv[0] + i * in[2]->iv[0];
		put(out, i, v, (double)v);
	}
}

static void
fold_constant_of_shape(Onnx *o, const Val *shape, Val *out)
{
	const Onnx__AttributeProto *a = attr(o->np, "value");
	const Val *fill = a && a->t ? tensor_val(o, a->t, "value") : NULL;
	int64_t d[MAX_RANK + 1];

	if (!known(shape) || shape->n > MAX_RANK + 1)
		return;
	for (int64_t i = 0; i < shape->n; i++) {
		if (sym(shape->iv[i]) || shape->iv[i] < 0)
			return;
		d[i] = shape->iv[i];
	}
	if (!alloc(o, out, (int)shape->n, d))
		return;
	for (int64_t i = 0; i < out->n; i++)
		put(out, i, known(fill) && fill->n ? fill->iv[0] : 0,
		    known(fill) && fill->n ? fill->fv[0] : 0);
}

static void
fold_where(Onnx *o, const Val **in, int nin, Val *out)
{
	Val tmp = { 0 };
	int rank;
	int64_t d[MAX_RANK + 1];

	if (nin < 3 || !known(in[0]) || !known(in[1]) || !known(in[2]) ||
	    !bshape(in[1], in[2], &rank, d))
		return;
	shape_of(&tmp, rank, d);
	if (!bshape(in[0], &tmp, &rank, d) || !alloc(o, out, rank, d))
		return;
	for (int64_t i = 0; i < out->n; i++) {
		const Val *pick = in[0]->iv[bindex(in[0], out, i)] ? in[1] : in[2];
		int64_t j = bindex(pick, out, i);
		put(out, i, pick->iv[j], pick->fv[j]);
	}
}

static void
fold_unary(Onnx *o, const Val *x, char op, Val *out)
{
	if (!known(x) || !alloc(o, out, x->rank, x->d))
		return;
	for (int64_t i = 0; i < x->n; i++) {
		int64_t v = x->iv[i];
		if (sym(v) && op != 'i') {
			out->n = -1;
			return;
		}
		switch (op) {
		case 'n': put(out, i, -v, -x->fv[i]); break;
		case 'a': put(out, i, v < 0 ? -v : v, fabs(x->fv[i])); break;
		case '!': put(out, i, !v, !v); break;
		case 's': put(out, i, (int64_t)sqrt(x->fv[i]), sqrt(x->fv[i])); break;
		default: put(out, i, v, x->fv[i]); break;
		}
	}
}

typedef struct Bin {
	const char *op;
	char code;
} Bin;

static const Bin bins[] = {
	{ "Add", '+' }, { "Sub", '-' },     { "Mul", '*' },     { "Div", '/' },
	{ "Mod", '%' }, { "Equal", '=' },   { "Less", '<' },    { "Greater", '>' },
	{ "Min", 'm' }, { "Max", 'M' },
};

bool
onnx_fold(Onnx *o, const Val **in, int nin, Val *out)
{
	const char *op = o->np->op_type;
	const Onnx__AttributeProto *a;
	const Val *x = nin > 0 ? in[0] : NULL;

	for (size_t i = 0; i < sizeof bins / sizeof bins[0]; i++)
		if (strcmp(op, bins[i].op) == 0) {
			if (nin >= 2)
				binary(o, bins[i].code, in[0], in[1], out);
			return true;
		}
	if (strcmp(op, "Constant") == 0) {
		if ((a = attr(o->np, "value")) && a->t) {
			Val *v = tensor_val(o, a->t, "constant");
			if (!v)
				return false;
			*out = *v;
		} else if ((a = attr(o->np, "value_ints"))) {
			int64_t n = (int64_t)a->n_ints;
			if (alloc(o, out, 1, &n))
				for (int64_t i = 0; i < n; i++)
					put(out, i, a->ints[i], (double)a->ints[i]);
		} else if ((a = attr(o->np, "value_int")) && alloc(o, out, 0, NULL)) {
			put(out, 0, a->i, (double)a->i);
		} else if ((a = attr(o->np, "value_float")) && alloc(o, out, 0, NULL)) {
			put(out, 0, (int64_t)a->f, a->f);
		}
		return true;
	}
	if (!x)
		return true;
	if (strcmp(op, "Shape") == 0)
		fold_shape(o, x, out);
	else if (strcmp(op, "Size") == 0 && x->shaped && alloc(o, out, 0, NULL))
		put(out, 0, x->act && o->batch == BATCH ? BATCH : count(x), (double)count(x));
	else if (strcmp(op, "Gather") == 0 && nin > 1)
		fold_gather(o, x, in[1], out);
	else if (strcmp(op, "Unsqueeze") == 0 || strcmp(op, "Squeeze") == 0)
		fold_unsqueeze(o, in, nin, out, op[0] == 'U');
	else if (strcmp(op, "Concat") == 0)
		fold_concat(o, in, nin, out);
	else if (strcmp(op, "Slice") == 0)
		fold_slice(o, in, nin, out);
	else if (strcmp(op, "Range") == 0)
		fold_range(o, in, nin, out);
	else if (strcmp(op, "ConstantOfShape") == 0)
		fold_constant_of_shape(o, x, out);
	else if (strcmp(op, "Where") == 0)
		fold_where(o, in, nin, out);
	else if (strcmp(op, "Neg") == 0)
		fold_unary(o, x, 'n', out);
	else if (strcmp(op, "Abs") == 0)
		fold_unary(o, x, 'a', out);
	else if (strcmp(op, "Not") == 0)
		fold_unary(o, x, '!', out);
	else if (strcmp(op, "Sqrt") == 0)
		fold_unary(o, x, 's', out);
	else if (strcmp(op, "Identity") == 0 || strcmp(op, "Cast") == 0 ||
		 strcmp(op, "Floor") == 0 || strcmp(op, "Ceil") == 0)
		fold_unary(o, x, 'i', out);
	else if (strcmp(op, "Reshape") == 0 && x->shaped && known(x) && nin > 1 &&
		 known(in[1]) && in[1]->n <= MAX_RANK + 1) {
		int64_t d[MAX_RANK + 1], infer = -1, prod = 1;
		for (int64_t i = 0; i < in[1]->n; i++) {
			d[i] = in[1]->iv[i] == 0 && i < x->rank ? x->d[i] : in[1]->iv[i];
			if (d[i] == -1)
				infer = i;
			else if (d[i] > 0)
				prod *= d[i];
		}
		if (infer >= 0 && prod > 0)
			d[infer] = x->n / prod;
		same_values(o, x, (int)in[1]->n, d, out);
	}
	return true;
}
