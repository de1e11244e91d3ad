/* values.c -- the values of an ONNX graph being read: the value table,
 * tensors and their small integer or float contents, the float
 * initializers a constant comes from, and per-sample shapes; and what
 * every rule reads of the node at hand, its attributes and its errors. */
#include "frontend/onnx/values.h"
#include "util/checked.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

/* ---- diagnostics -------------------------------------------------------- */

Loc
floc(Onnx *o)
{
	return (Loc){ o->file, 0, 0 };
}

void
node_error(Onnx *o, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	diag_error(floc(o), "node %d '%s' (%s): %s", o->node,
		   o->np->name && *o->np->name ? o->np->name : "", o->np->op_type, msg);
}

/* ---- attributes --------------------------------------------------------- */

const Onnx__AttributeProto *
attr(const Onnx__NodeProto *n, const char *name)
{
	for (size_t i = 0; i < n->n_attribute; i++)
		if (n->attribute[i]->name && strcmp(n->attribute[i]->name, name) == 0)
			return n->attribute[i];
	return NULL;
}

int64_t
attr_i(const Onnx__NodeProto *n, const char *name, int64_t dflt)
{
	const Onnx__AttributeProto *a = attr(n, name);

	return a && a->has_i ? a->i : dflt;
}

/* an ints attribute into out[max]; returns its length, -1 if absent */
int
attr_ints(Onnx *o, const char *name, int64_t *out, int max)
{
	const Onnx__AttributeProto *a = attr(o->np, name);

	if (!a)
		return -1;
	if (a->n_ints > (size_t)max) {
		NERR(o, "attribute '%s' has %zu values, at most %d are supported", name,
		     a->n_ints, max);
		return -2;
	}
	if (a->n_ints) /* ints is NULL when empty */
		memcpy(out, a->ints, a->n_ints * sizeof *out);
	return (int)a->n_ints;
}

/* a string attribute, copied: protobuf bytes are not NUL-terminated */
const char *
attr_s(Onnx *o, const char *name, const char *dflt)
{
	const Onnx__AttributeProto *a = attr(o->np, name);

	if (!a || !a->has_s)
		return dflt;
	return a->s.len ? arena_strndup(o->a, (const char *)a->s.data, a->s.len) : "";
}

/* ---- values ------------------------------------------------------------- */

Val *
newval(Onnx *o)
{
	Val *v = arena_alloc(o->a, sizeof *v);

	v->tensor = -1;
	v->bax = -1;
	v->n = -1;
	v->buf_layer = -1;
	return v;
}

int64_t
count(const Val *v)
{
	int64_t n = 1;

	for (int i = 0; i < v->rank; i++)
		if (!ck_mul(n, v->d[i] < 0 ? 0 : v->d[i], &n))
			return -1;
	return n;
}

void
set_values(Onnx *o, Val *v, int64_t n)
{
	v->n = n;
	v->iv = arena_array(o->a, n ? n : 1, sizeof *v->iv);
	v->fv = arena_array(o->a, n ? n : 1, sizeof *v->fv);
}

static bool
little_endian(void)
{
	const uint16_t one = 1;

	return *(const uint8_t *)&one == 1;
}

static void
set_int(Val *v, int64_t i, int64_t x)
{
	v->iv[i] = (Int){ x, false };
	v->fv[i] = (double)x;
}

static void
set_float(Val *v, int64_t i, double x)
{
	v->fv[i] = x;
	v->iv[i] = (Int){ isfinite(x) && fabs(x) < 9e18 ? (int64_t)x : 0, false };
}

/* Copies a small tensor's values (int or float types) when present. */
static void
tensor_values(Onnx *o, Val *v, const Onnx__TensorProto *t)
{
	int64_t n = count(v);
	int dt = t->data_type;
	size_t esz = dt == ONNX__TENSOR_PROTO__DATA_TYPE__INT64 ||
				     dt == ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE
			     ? 8
		     : dt == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT ||
				     dt == ONNX__TENSOR_PROTO__DATA_TYPE__INT32
			     ? 4
		     : dt == ONNX__TENSOR_PROTO__DATA_TYPE__BOOL ||
				     dt == ONNX__TENSOR_PROTO__DATA_TYPE__UINT8 ||
				     dt == ONNX__TENSOR_PROTO__DATA_TYPE__INT8
			     ? 1
			     : 0;

	if (n < 0 || n > MAX_FOLD || !esz)
		return;
	if (t->has_raw_data && t->raw_data.len == (size_t)n * esz && little_endian()) {
		set_values(o, v, n);
		for (int64_t i = 0; i < n; i++) {
			const uint8_t *p = t->raw_data.data + i * esz;
			if (dt == ONNX__TENSOR_PROTO__DATA_TYPE__INT64) {
				int64_t x;
				memcpy(&x, p, 8);
				set_int(v, i, x);
			} else if (dt == ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE) {
				double x;
				memcpy(&x, p, 8);
				set_float(v, i, x);
			} else if (dt == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT) {
				float x;
				memcpy(&x, p, 4);
				set_float(v, i, x);
			} else if (dt == ONNX__TENSOR_PROTO__DATA_TYPE__INT32) {
				int32_t x;
				memcpy(&x, p, 4);
				set_int(v, i, x);
			} else {
				set_int(v, i,
					dt == ONNX__TENSOR_PROTO__DATA_TYPE__INT8 ? (int8_t)*p
										  : *p);
			}
		}
	} else if (t->n_int64_data == (size_t)n) {
		set_values(o, v, n);
		for (int64_t i = 0; i < n; i++)
			set_int(v, i, t->int64_data[i]);
	} else if (t->n_int32_data == (size_t)n) {
		set_values(o, v, n);
		for (int64_t i = 0; i < n; i++)
			set_int(v, i, t->int32_data[i]);
	} else if (t->n_float_data == (size_t)n) {
		set_values(o, v, n);
		for (int64_t i = 0; i < n; i++)
			set_float(v, i, t->float_data[i]);
	} else if (t->n_double_data == (size_t)n) {
		set_values(o, v, n);
		for (int64_t i = 0; i < n; i++)
			set_float(v, i, t->double_data[i]);
	}
}

/* an error about a tensor: in a node's attribute (Constant), or not */
#define TERR(o, fmt, ...)                                                        \
	((o)->np ? node_error(o, fmt, __VA_ARGS__)                               \
		 : diag_error(floc(o), fmt, __VA_ARGS__))

Val *
tensor_val(Onnx *o, const Onnx__TensorProto *t, const char *what)
{
	Val *v = newval(o);

	if (t->n_dims > MAX_RANK + 1) {
		TERR(o, "%s '%s' has %zu dimensions; at most %d are supported", what,
		     t->name ? t->name : "", t->n_dims, MAX_RANK + 1);
		return NULL;
	}
	v->rank = (int)t->n_dims;
	v->shaped = true;
	for (size_t i = 0; i < t->n_dims; i++) {
		if (t->dims[i] < 0 || t->dims[i] > MAX_DIM) {
			TERR(o, "%s '%s' has dimension %" PRId64 " out of range", what,
			     t->name ? t->name : "", t->dims[i]);
			return NULL;
		}
		v->d[i] = t->dims[i];
	}
	if (count(v) < 0) {
		TERR(o, "%s '%s' has more elements than 64 bits can count", what,
		     t->name ? t->name : "");
		return NULL;
	}
	tensor_values(o, v, t);
	return v;
}

Val *
lookup(Onnx *o, const char *name)
{
	return name && *name ? map_get(&o->vals, name) : NULL;
}

/* a's sources then b's; shares a's list when b adds nothing (an
 * initializer both as it is and derived is listed once each way) */
Src *
src_union(Onnx *o, Src *a, const Src *b, bool derive)
{
	for (; b; b = b->next) {
		const Src *s = a;
		bool d = b->derived || derive;
		while (s && (s->init != b->init || s->derived != d))
			s = s->next;
		if (!s) {
			Src *n = arena_alloc(o->a, sizeof *n);
			n->init = b->init;
			n->derived = d;
			n->next = a;
			a = n;
		}
	}
	return a;
}

/* ---- per-sample shapes ------------------------------------------------- */

Shape
ps_shape(const Val *v)
{
	Shape s = { 0 };

	for (int i = 0; i < v->rank; i++)
		if (i != v->bax || v->d[i] != 1)
			s.d[s.rank++] = v->d[i];
	return s;
}

int
ps_axis(const Val *v, int axis)
{
	if (v->bax < 0 || axis < v->bax || v->d[v->bax] != 1)
		return axis;
	return axis == v->bax ? -1 : axis - 1;
}

/* The per-sample shape of a constant operand of an element-wise op whose
 * activation operand is ref: broadcasting aligns the full shapes on the
 * right, so the constant's dimension on ref's batch axis must be 1, and
 * is left out with the batch. */
bool
ps_const(Onnx *o, const Val *c, const Val *ref, Shape *out)
{
	int r = c->rank > ref->rank ? c->rank : ref->rank;
	int j = ref->bax < 0 ? -1 : ref->bax + (r - ref->rank) - (r - c->rank);
	char b[96];

	if (!c->shaped) {
		NERR(o, "the shape of a constant operand is not known");
		return false;
	}
	out->rank = 0;
	for (int i = 0; i < c->rank; i++) {
		/* a file that fixes the batch B may hold B copies of a constant */
		bool batch = i == j && o->batch != BATCH && o->batch > 1 &&
			     c->d[i] == o->batch * ref->d[ref->bax];
		if (batch) {
			if (ref->d[ref->bax] != 1)
				out->d[out->rank++] = ref->d[ref->bax];
			continue;
		}
		if (i == j && c->d[i] != 1) {
			NERR(o, "a constant operand spans the batch axis (dimension %d is %" PRId64
				")", i, c->d[i]);
			return false;
		}
		if (i != j || ref->d[ref->bax] != 1)
			out->d[out->rank++] = c->d[i];
	}
	if (out->rank > MAX_RANK) {
		NERR(o, "constant operand %s has too many dimensions", shape_str(out, b, sizeof b));
		return false;
	}
	return true;
}
