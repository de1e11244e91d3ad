/* onnx.c -- the ONNX frontend: a ModelProto becomes a layer graph.
 *
 * The file is mmap'd, copied without its bulk weight data (pbstrip.c),
 * unpacked by protobuf-c, walked once, and freed; the IR keeps copies in
 * the arena.  Weights are never read: initializers give their dims only, so
 * a model whose external weight file is gone analyses normally.
 *
 * Every ONNX value is either an activation (it depends on a graph input;
 * its first dimension is the batch) or a constant (initializers, Constant
 * nodes, and what can be computed from them and from shapes).  Nodes whose
 * inputs are all constant are folded: integer shape arithmetic such as
 * Shape -> Gather -> Unsqueeze -> Concat is evaluated here, with the batch
 * kept symbolic (the value BATCH below).  Nodes that read an activation
 * become IR layers, with per-sample shapes inferred at once (ir/infer.c)
 * so later shape computations can read them.  Layers keep the node's name
 * (PyTorch writes module paths such as /layer1/layer1.0/conv1/Conv);
 * nameless nodes are named "<op_type>_<index>". */
#include "frontend/onnx.h"
#include "util/checked.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_ONNX_BYTES ((size_t)8 << 30)

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
	v->n = -1;
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
				v->iv[i] = x, v->fv[i] = (double)x;
			} else if (dt == ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE) {
				double x;
				memcpy(&x, p, 8);
				v->fv[i] = x, v->iv[i] = isfinite(x) ? (int64_t)x : 0;
			} else if (dt == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT) {
				float x;
				memcpy(&x, p, 4);
				v->fv[i] = x, v->iv[i] = isfinite(x) && fabs(x) < 9e18 ? (int64_t)x : 0;
			} else if (dt == ONNX__TENSOR_PROTO__DATA_TYPE__INT32) {
				int32_t x;
				memcpy(&x, p, 4);
				v->iv[i] = x, v->fv[i] = x;
			} else {
				v->iv[i] = dt == ONNX__TENSOR_PROTO__DATA_TYPE__INT8 ? (int8_t)*p : *p;
				v->fv[i] = (double)v->iv[i];
			}
		}
	} else if (t->n_int64_data == (size_t)n) {
		set_values(o, v, n);
		for (int64_t i = 0; i < n; i++)
			v->iv[i] = t->int64_data[i], v->fv[i] = (double)t->int64_data[i];
	} else if (t->n_int32_data == (size_t)n) {
		set_values(o, v, n);
		for (int64_t i = 0; i < n; i++)
			v->iv[i] = t->int32_data[i], v->fv[i] = t->int32_data[i];
	} else if (t->n_float_data == (size_t)n) {
		set_values(o, v, n);
		for (int64_t i = 0; i < n; i++) {
			float x = t->float_data[i];
			v->fv[i] = x, v->iv[i] = isfinite(x) && fabs(x) < 9e18 ? (int64_t)x : 0;
		}
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

/* ---- inputs and initializers ------------------------------------------- */

static bool
add_initializers(Onnx *o, const Onnx__GraphProto *gp)
{
	for (size_t i = 0; i < gp->n_initializer; i++) {
		const Onnx__TensorProto *t = gp->initializer[i];
		Val *v;
		if (!t->name || !*t->name) {
			diag_error(floc(o), "initializer %zu has no name", i);
			return false;
		}
		if (!(v = tensor_val(o, t, "initializer")))
			return false;
		v->init = true;
		map_put(&o->vals, arena_strdup(o->a, t->name), v);
	}
	return true;
}

/* The graph inputs that are not initializers (IR <= 3 lists both). */
static bool
add_inputs(Onnx *o, const Onnx__GraphProto *gp, const Shape *override)
{
	for (size_t i = 0; i < gp->n_input; i++) {
		const Onnx__ValueInfoProto *vi = gp->input[i];
		const Onnx__TypeProto__Tensor *tt;
		Shape s = { 0 };
		Val *v;

		if (!vi->name || map_get(&o->vals, vi->name))
			continue;
		if (!vi->type || vi->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ||
		    !(tt = vi->type->tensor_type) || !tt->shape) {
			diag_error(floc(o), "graph input '%s' has no tensor shape", vi->name);
			return false;
		}
		if (tt->shape->n_dim < 1 || tt->shape->n_dim > MAX_RANK + 1) {
			diag_error(floc(o), "graph input '%s' has %zu dimensions (1 to %d supported)",
				   vi->name, tt->shape->n_dim, MAX_RANK + 1);
			return false;
		}
		/* the first dimension is the batch, symbolic or fixed (a value
		 * below 1, as some exporters write for "dynamic", is symbolic) */
		const Onnx__TensorShapeProto__Dimension *b = tt->shape->dim[0];
		bool fixed = b->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
		int64_t batch = fixed && b->dim_value > 0 ? b->dim_value : BATCH;
		if (batch != BATCH && batch > MAX_DIM) {
			diag_error(floc(o), "graph input '%s': batch dimension %" PRId64
				   " is out of range (1 to 2^40)", vi->name, batch);
			return false;
		}
		if (o->g->ninput == 0)
			o->batch = batch;
		s.rank = (int)tt->shape->n_dim - 1;
		for (int k = 0; k < s.rank; k++) {
			const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[k + 1];
			s.d[k] = d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE
					 ? d->dim_value
					 : BATCH;
		}
		if (override && o->g->ninput == 0)
			s = *override;
		for (int k = 0; k < s.rank; k++)
			if (s.d[k] == BATCH) {
				diag_error(floc(o), "graph input '%s': dimension %d is symbolic; "
					   "give the per-sample shape with --input-shape",
					   vi->name, k + 1);
				return false;
			} else if (s.d[k] < 1 || s.d[k] > MAX_DIM) {
				diag_error(floc(o), "graph input '%s': dimension %d is %" PRId64
					   ", out of range (1 to 2^40)", vi->name, k + 1, s.d[k]);
				return false;
			}
		if (!shape_elems(&s, &(int64_t){ 0 })) {
			diag_error(floc(o), "graph input '%s' has more elements than 64 bits can "
				   "count", vi->name);
			return false;
		}
		v = newval(o);
		v->act = true;
		v->shaped = true;
		v->rank = s.rank + 1;
		v->d[0] = 1;
		memcpy(v->d + 1, s.d, s.rank * sizeof s.d[0]);
		v->tensor = graph_add_input(o->g, arena_strdup(o->a, vi->name), &s);
		map_put(&o->vals, o->g->tensor[v->tensor].name, v);
	}
	if (o->g->ninput == 0) {
		diag_error(floc(o), "the graph has no input besides its initializers");
		return false;
	}
	return true;
}

/* ---- layers ------------------------------------------------------------- */

static const char *
node_name(Onnx *o)
{
	if (o->np->name && *o->np->name)
		return arena_strdup(o->a, o->np->name);
	return arena_printf(o->a, "%s_%d", o->np->op_type, o->node);
}

/* Adds a layer reading the activations `in`; its output is the node's
 * first output.  The layer's shapes are inferred at once. */
static Layer *
layer(Onnx *o, OpKind op, const Val **in, int nin)
{
	int ins[8], l;
	Graph *g = o->g;

	if (g->nlayer >= MAX_LAYERS) {
		diag_error(floc(o), "model has more than %d layers", MAX_LAYERS);
		return NULL;
	}
	for (int i = 0; i < nin; i++)
		ins[i] = in[i]->tensor;
	l = graph_add_layer(g, op, node_name(o), floc(o));
	g->layer[l].srcop = arena_strdup(o->a, o->np->op_type);
	g->layer[l].srcidx = o->node;
	layer_set_inputs(g, l, ins, nin);
	layer_add_output(g, l, arena_strdup(o->a, o->np->output[0]));
	return &g->layer[l];
}

/* Infers the new layer's shapes and binds the node's first output. */
static bool
finish(Onnx *o, Layer *ly)
{
	Graph *g = o->g;
	int l = (int)(ly - g->layer);
	const Tensor *t;
	Val *v;

	if (!layer_infer(g, l, NULL))
		return false;
	t = &g->tensor[ly->out[0]];
	v = newval(o);
	v->act = true;
	v->shaped = true;
	v->tensor = ly->out[0];
	v->rank = t->shape.rank + 1;
	v->d[0] = 1;
	memcpy(v->d + 1, t->shape.d, t->shape.rank * sizeof t->shape.d[0]);
	map_put(&o->vals, t->name, v);
	return true;
}

static int
per_sample_axis(Onnx *o, int64_t axis, int rank)
{
	if (axis < -rank || axis >= rank) {
		NERR(o, "axis %" PRId64 " is out of range for rank %d", axis, rank);
		return -2;
	}
	if (axis < 0)
		axis += rank;
	if (axis == 0) {
		NERR(o, "operating along the batch axis is not supported");
		return -2;
	}
	return (int)axis - 1;
}

/* kernel, strides, pads, dilations of Conv and the pools */
static bool
window_attrs(Onnx *o, Layer *l, int nsp, const int64_t *wkernel)
{
	Attr *a = &l->attr;
	int64_t v[2 * MAX_SPATIAL + 2];
	int n;
	const char *autopad = attr_s(o, "auto_pad", "NOTSET");

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
	for (int k = 0; k < 2; k++) { /* one value per spatial dimension, if any */
		const char *name = k ? "dilations" : "strides";
		if ((n = attr_ints(o, name, v, MAX_SPATIAL)) == -2)
			return false;
		if (n >= 0 && n != nsp) {
			NERR(o, "'%s' has %d values for %d spatial dimensions", name, n, nsp);
			return false;
		}
		if (n >= 0)
			memcpy(k ? a->dilation : a->stride, v, nsp * sizeof *v);
	}
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
	if (strcmp(autopad, "SAME_UPPER") == 0 || strcmp(autopad, "SAME_LOWER") == 0) {
		/* output = ceil(input / stride): pad the difference */
		const Shape *x = &o->g->tensor[l->in[0]].shape;
		for (int i = 0; i < nsp; i++) {
			int64_t in = x->d[i + 1], out = (in + a->stride[i] - 1) / a->stride[i];
			int64_t eff = a->dilation[i] * (a->kernel[i] - 1) + 1;
			int64_t total = (out - 1) * a->stride[i] + eff - in;
			if (total < 0)
				total = 0;
			a->pad[i] = autopad[5] == 'U' ? total / 2 : total - total / 2;
			a->pad[MAX_SPATIAL + i] = total - a->pad[i];
		}
	} else if (strcmp(autopad, "VALID") == 0) {
		memset(a->pad, 0, sizeof a->pad);
	}
	return true;
}

static const Val *
weight(Onnx *o, int i, int rank)
{
	const Val *w = i < (int)o->np->n_input ? lookup(o, o->np->input[i]) : NULL;

	if (!w)
		NERR(o, "input %d (the weight) is missing", i + 1);
	else if (w->act || !w->shaped)
		NERR(o, "input %d (the weight) must be a constant, not an activation", i + 1);
	else if (rank && w->rank != rank)
		NERR(o, "input %d (the weight) has rank %d, expected %d", i + 1, w->rank, rank);
	else
		return w;
	return NULL;
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

static bool
lower_conv(Onnx *o, const Val *x)
{
	const Val *w = weight(o, 1, 0), *b;
	Layer *l;
	bool tr = strcmp(o->np->op_type, "ConvTranspose") == 0;
	int64_t g = attr_i(o->np, "group", 1), v[MAX_SPATIAL];

	if (!w)
		return false;
	if (w->rank != x->rank || w->rank < 3) {
		NERR(o, "weight rank %d does not match input rank %d", w->rank, x->rank);
		return false;
	}
	if (g < 1 || g > MAX_DIM) {
		NERR(o, "bad group %" PRId64, g);
		return false;
	}
	if (!(l = layer(o, tr ? OP_CONVT : OP_CONV, &x, 1)))
		return false;
	/* PyTorch names weights after module parameters (layer1.0.conv1.weight);
	 * a weight it computed while exporting, as BN folding does, gets a
	 * generated name */
	if (strncmp(o->np->input[1], "onnx::Conv_", 11) == 0)
		o->folded++;
	l->attr.groups = g;
	l->attr.filters = tr ? w->d[1] * g : w->d[0];
	b = o->np->n_input > 2 ? lookup(o, o->np->input[2]) : NULL;
	l->attr.bias = b != NULL;
	if (!window_attrs(o, l, x->rank - 2, w->d + 2))
		return false;
	if (tr && attr_ints(o, "output_padding", v, MAX_SPATIAL) == x->rank - 2)
		memcpy(l->attr.out_pad, v, (x->rank - 2) * sizeof *v);
	return finish(o, l) && check_weight(o, l, 0, w) &&
	       (!b || check_weight(o, l, 1, b));
}

static bool
lower_pool(Onnx *o, const Val *x, OpKind op)
{
	Layer *l = layer(o, op, &x, 1);

	if (!l || !window_attrs(o, l, x->rank - 2, NULL))
		return false;
	l->attr.ceil_mode = attr_i(o->np, "ceil_mode", 0) != 0;
	return finish(o, l);
}

/* Gemm with a constant B: a fully connected layer. */
static bool
lower_gemm(Onnx *o, const Val *x)
{
	const Val *w = weight(o, 1, 2), *c;
	Layer *l;
	bool tb = attr_i(o->np, "transB", 0) != 0;

	if (!w)
		return false;
	if (attr_i(o->np, "transA", 0) || x->rank != 2) {
		NERR(o, "only Gemm of a [batch, features] input without transA is supported");
		return false;
	}
	if (!(l = layer(o, OP_FC, &x, 1)))
		return false;
	l->attr.filters = tb ? w->d[0] : w->d[1];
	c = o->np->n_input > 2 ? lookup(o, o->np->input[2]) : NULL;
	l->attr.bias = c != NULL;
	if (!finish(o, l))
		return false;
	if (w->d[tb ? 1 : 0] != x->d[1]) {
		NERR(o, "weight has %" PRId64 " input features, the input %" PRId64,
		     w->d[tb ? 1 : 0], x->d[1]);
		return false;
	}
	return true;
}

static bool
lower_matmul(Onnx *o, const Val *a, const Val *b)
{
	Layer *l;

	if (b && b->act) {
		const Val *in[2] = { a, b };
		return (l = layer(o, OP_MATMUL, in, 2)) && finish(o, l);
	}
	b = weight(o, 1, 2);
	if (!b || !(l = layer(o, OP_FC, &a, 1)))
		return false;
	l->attr.filters = b->d[1];
	if (!finish(o, l))
		return false;
	if (b->d[0] != a->d[a->rank - 1]) {
		NERR(o, "weight has %" PRId64 " rows, the input %" PRId64 " features", b->d[0],
		     a->d[a->rank - 1]);
		return false;
	}
	return true;
}

/* Element-wise binary op: two activations broadcast, or one activation
 * and a constant (a "scale" layer). */
static bool
lower_binary(Onnx *o, const Val *x, const Val *y, OpKind op)
{
	Layer *l;

	if (x->act && y && y->act) {
		const Val *in[2] = { x, y };
		return (l = layer(o, op, in, 2)) && finish(o, l);
	}
	if (!x->act)
		x = y;
	return (l = layer(o, OP_SCALE, &x, 1)) && finish(o, l);
}

/* A reshape to a known full shape [batch, ...]. */
static bool
reshape_to(Onnx *o, const Val *x, const int64_t *full, int rank)
{
	Layer *l;

	if (rank < 1 || rank > MAX_RANK + 1) {
		NERR(o, "target rank %d is not supported", rank);
		return false;
	}
	if (!(l = layer(o, OP_RESHAPE, &x, 1)))
		return false;
	l->attr.target.rank = rank - 1;
	memcpy(l->attr.target.d, full + 1, (rank - 1) * sizeof *full);
	return finish(o, l);
}

static bool
lower_reshape(Onnx *o, const Val *x)
{
	const Val *s = o->np->n_input > 1 ? lookup(o, o->np->input[1]) : NULL;
	int64_t full[MAX_RANK + 1];

	if (!s || s->act || s->n < 1 || s->n > MAX_RANK + 1) {
		NERR(o, "the target shape is not a known constant");
		return false;
	}
	for (int64_t i = 0; i < s->n; i++) {
		int64_t v = s->iv[i];
		if (i == 0 && (v == 0 || v == BATCH || v == -1 || (o->batch != BATCH && v == o->batch)))
			v = 1; /* the batch stays first */
		else if (v == BATCH) {
			NERR(o, "the batch moves out of the first dimension");
			return false;
		} else if (i == 0) {
			NERR(o, "the first dimension %" PRId64 " is not the batch", v);
			return false;
		}
		full[i] = v == 0 && i < x->rank ? x->d[i] : v;
	}
	return reshape_to(o, x, full, (int)s->n);
}

static bool
lower_flatten(Onnx *o, const Val *x)
{
	int64_t axis = attr_i(o->np, "axis", 1);
	Layer *l;

	if (axis < 0)
		axis += x->rank;
	if (axis < 1 || axis > x->rank) {
		NERR(o, "flattening into the batch axis is not supported");
		return false;
	}
	if (!(l = layer(o, OP_FLATTEN, &x, 1)))
		return false;
	l->attr.axis = (int)axis - 1;
	return finish(o, l);
}

/* the axes of Squeeze/Unsqueeze: an attribute before opset 13, an input after */
static int
axes_of(Onnx *o, int64_t *ax, int max)
{
	const Val *a;
	int n = attr_ints(o, "axes", ax, max);

	if (n != -1)
		return n;
	a = o->np->n_input > 1 ? lookup(o, o->np->input[1]) : NULL;
	if (!a)
		return 0;
	if (a->act || a->n < 0 || a->n > max) {
		NERR(o, "axes are not a known constant");
		return -2;
	}
	memcpy(ax, a->iv, a->n * sizeof *ax);
	return (int)a->n;
}

static bool
lower_squeeze(Onnx *o, const Val *x, bool un)
{
	int64_t ax[MAX_RANK + 1], full[MAX_RANK + 1];
	int n = axes_of(o, ax, MAX_RANK + 1), rank = un ? x->rank + n : x->rank, k = 0;
	bool mark[MAX_RANK + 2] = { false };

	if (n < 0 || rank > MAX_RANK + 1)
		return n == -2 ? false : (NERR(o, "bad axes"), false);
	for (int i = 0; i < n; i++) {
		int64_t a = ax[i] < 0 ? ax[i] + rank : ax[i];
		if (a <= 0 || a >= rank || mark[a]) {
			NERR(o, "axis %" PRId64 " is out of range or touches the batch", ax[i]);
			return false;
		}
		mark[a] = true;
	}
	if (un) {
		for (int i = 0, j = 0; i < rank; i++)
			full[i] = mark[i] ? 1 : x->d[j++];
	} else {
		for (int i = 0; i < x->rank; i++)
			if (!(n ? mark[i] : (i > 0 && x->d[i] == 1)))
				full[k++] = x->d[i];
			else if (x->d[i] != 1) {
				NERR(o, "cannot squeeze dimension %d of size %" PRId64, i, x->d[i]);
				return false;
			}
		rank = k;
	}
	return reshape_to(o, x, full, rank);
}

static bool
lower_transpose(Onnx *o, const Val *x)
{
	int64_t p[MAX_RANK + 1];
	int n = attr_ints(o, "perm", p, MAX_RANK + 1);
	Layer *l;

	if (n == -2)
		return false;
	if (n < 0) /* default: reverse, which moves the batch */
		n = 0;
	if (n != x->rank || p[0] != 0) {
		NERR(o, "only permutations that keep the batch first are supported");
		return false;
	}
	if (!(l = layer(o, OP_TRANSPOSE, &x, 1)))
		return false;
	l->attr.target.rank = n - 1;
	for (int i = 1; i < n; i++)
		l->attr.target.d[i - 1] = p[i] - 1;
	return finish(o, l);
}

static bool
lower_concat(Onnx *o)
{
	const Val *in[8];
	int n = 0, ax;
	Layer *l;
	const Val *x0 = NULL;

	for (size_t i = 0; i < o->np->n_input; i++) {
		const Val *v = lookup(o, o->np->input[i]);
		if (!v)
			continue;
		if (!v->act) {
			NERR(o, "concatenating a constant with activations is not supported");
			return false;
		}
		if (n == 8) {
			NERR(o, "more than 8 inputs are not supported");
			return false;
		}
		in[n++] = x0 = v;
	}
	if ((ax = per_sample_axis(o, attr_i(o->np, "axis", 0), x0->rank)) < -1)
		return false;
	if (!(l = layer(o, OP_CONCAT, in, n)))
		return false;
	l->attr.axis = ax;
	return finish(o, l);
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
			NERR(o, "pads are not a known constant");
			return false;
		}
		n = (int)pv->n;
		memcpy(p, pv->iv, n * sizeof *p);
	}
	if (n != 2 * x->rank || p[0] || p[x->rank]) {
		NERR(o, "pads must have 2 values per dimension and leave the batch alone");
		return false;
	}
	/* reflect and edge modes pad to the same sizes */
	if (!(l = layer(o, OP_PAD, &x, 1)))
		return false;
	l->attr.target.rank = l->attr.pad_hi.rank = x->rank - 1;
	for (int i = 1; i < x->rank; i++) {
		if (p[i] < 0 || p[x->rank + i] < 0 || p[i] > MAX_DIM || p[x->rank + i] > MAX_DIM) {
			NERR(o, "negative pads (cropping) are not supported");
			return false;
		}
		l->attr.target.d[i - 1] = p[i];
		l->attr.pad_hi.d[i - 1] = p[x->rank + i];
	}
	return finish(o, l);
}

static bool
lower_norm(Onnx *o, const Val *x, OpKind op)
{
	Layer *l = layer(o, op, &x, 1);
	int ax;

	if (!l)
		return false;
	if (op == OP_LAYERNORM) {
		if ((ax = per_sample_axis(o, attr_i(o->np, "axis", -1), x->rank)) < -1)
			return false;
		l->attr.axis = ax;
	}
	if (!finish(o, l))
		return false;
	/* scale and shift as the file declares them */
	for (int i = 1; i < 3 && i < (int)o->np->n_input; i++) {
		const Val *w = lookup(o, o->np->input[i]);
		if (w && !w->act && count(w) != l->w[i - 1].elems) {
			NERR(o, "input %d has %" PRId64 " elements, expected %" PRId64, i + 1,
			     count(w), l->w[i - 1].elems);
			return false;
		}
	}
	return true;
}

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
	{ "Gelu", OP_GELU },           { "Pow", OP_POW },             { "LRN", OP_LRN },
};

static const Simple binary[] = {
	{ "Add", OP_ADD }, { "Sub", OP_SUB }, { "Mul", OP_MUL }, { "Div", OP_DIV },
};

static int
find(const Simple *t, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(t[i].onnx, name) == 0)
			return (int)i;
	return -1;
}

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* An operator with no rule: an opaque layer with the output shape the
 * file's value_info declares, or an error when it declares none.  Unknown
 * operators and value_info are looked up by name (o->unknown, o->vinfo):
 * a model of many custom operators stays linear. */
static bool
lower_unknown(Onnx *o, const Val *x)
{
	const char *out = o->np->output[0]; /* node() checked it */
	const Onnx__ValueInfoProto *vi = map_get(&o->vinfo, out);
	const Onnx__TensorShapeProto *sp;
	Graph *g = o->g;
	Layer *l;
	Shape s = { 0 };
	intptr_t k = (intptr_t)map_get(&o->unknown, o->np->op_type);

	if (!k) { /* a new one: the array doubles */
		int n = g->nunknown;
		if ((n & (n - 1)) == 0)
			g->unknown = arena_grow(o->a, g->unknown, n, n ? 2 * n : 1,
						sizeof *g->unknown);
		g->unknown[n].op = arena_strdup(o->a, o->np->op_type);
		k = ++g->nunknown;
		map_put(&o->unknown, g->unknown[n].op, (void *)k);
	}
	g->unknown[k - 1].count++;
	if (o->strict) {
		NERR(o, "unknown operator (--strict)");
		return false;
	}
	if (!vi || !vi->type || vi->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ||
	    !vi->type->tensor_type || !(sp = vi->type->tensor_type->shape) || sp->n_dim < 1 ||
	    sp->n_dim > MAX_RANK + 1)
		goto noshape;
	s.rank = (int)sp->n_dim - 1;
	for (int d = 0; d < s.rank; d++) {
		if (sp->dim[d + 1]->value_case !=
		    ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
			goto noshape;
		s.d[d] = sp->dim[d + 1]->dim_value;
		if (s.d[d] < 1 || s.d[d] > MAX_DIM)
			goto noshape;
	}
	if (!(l = layer(o, OP_OPAQUE, &x, 1)))
		return false;
	o->g->tensor[l->out[0]].shape = s;
	if (!shape_elems(&s, &o->g->tensor[l->out[0]].elems)) {
		NERR(o, "the shape declared for output '%s' has more elements than 64 bits can "
			"count", out);
		return false;
	}
	return finish(o, l);
noshape:
	NERR(o, "unsupported operator, and the file declares no shape for its output '%s'", out);
	return false;
}

static bool
lower(Onnx *o, const Onnx__GraphProto *gp, const Val *x)
{
	const char *op = o->np->op_type;
	const Val *y = o->np->n_input > 1 ? lookup(o, o->np->input[1]) : NULL;
	int k;
	Layer *l;

	/* x is the activation node() picked; y the other operand of a binary
	 * op, also when x is the second input (2 * x) */
	if (y == x && !(o->np->n_input > 0 && lookup(o, o->np->input[0]) == x))
		y = lookup(o, o->np->input[0]);
	if (strcmp(op, "Conv") == 0 || strcmp(op, "ConvTranspose") == 0)
		return lower_conv(o, x);
	if (strcmp(op, "MaxPool") == 0)
		return lower_pool(o, x, OP_MAXPOOL);
	if (strcmp(op, "AveragePool") == 0)
		return lower_pool(o, x, OP_AVGPOOL);
	if (strcmp(op, "GlobalAveragePool") == 0)
		return (l = layer(o, OP_GAVGPOOL, &x, 1)) && finish(o, l);
	if (strcmp(op, "GlobalMaxPool") == 0)
		return (l = layer(o, OP_GMAXPOOL, &x, 1)) && finish(o, l);
	if (strcmp(op, "BatchNormalization") == 0)
		return o->batchnorms++, lower_norm(o, x, OP_BATCHNORM);
	if (strcmp(op, "InstanceNormalization") == 0)
		return lower_norm(o, x, OP_INSTNORM);
	if (strcmp(op, "LayerNormalization") == 0)
		return lower_norm(o, x, OP_LAYERNORM);
	if (strcmp(op, "Gemm") == 0)
		return lower_gemm(o, x);
	if (strcmp(op, "MatMul") == 0)
		return lower_matmul(o, x, y);
	if (strcmp(op, "Reshape") == 0)
		return lower_reshape(o, x);
	if (strcmp(op, "Flatten") == 0)
		return lower_flatten(o, x);
	if (strcmp(op, "Squeeze") == 0 || strcmp(op, "Unsqueeze") == 0)
		return lower_squeeze(o, x, op[0] == 'U');
	if (strcmp(op, "Transpose") == 0)
		return lower_transpose(o, x);
	if (strcmp(op, "Concat") == 0)
		return lower_concat(o);
	if (strcmp(op, "Pad") == 0)
		return lower_pad(o, x);
	if (strcmp(op, "Softmax") == 0) {
		int ax = per_sample_axis(o, attr_i(o->np, "axis", o->opset >= 13 ? -1 : 1), x->rank);
		if (ax < -1 || !(l = layer(o, OP_SOFTMAX, &x, 1)))
			return false;
		l->attr.axis = ax;
		return finish(o, l);
	}
	if ((k = find(binary, NELEM(binary), op)) >= 0)
		return lower_binary(o, x, y, binary[k].op);
	if ((k = find(unary, NELEM(unary), op)) >= 0)
		return (l = layer(o, unary[k].op, &x, 1)) && finish(o, l);
	return lower_unknown(o, x);
}

/* ---- nodes -------------------------------------------------------------- */

/* The node listing `name` as an output (its *slot), -1 if none; only
 * looked for when an input is missing, to say why. */
static int
producer(const Onnx__GraphProto *gp, const char *name, size_t *slot)
{
	for (size_t i = 0; i < gp->n_node; i++)
		for (size_t k = 0; k < gp->node[i]->n_output; k++)
			if (strcmp(gp->node[i]->output[k], name) == 0)
				return *slot = k, (int)i;
	return -1;
}

static void
missing_input(Onnx *o, const Onnx__GraphProto *gp, const char *name)
{
	size_t slot = 0;
	int p = producer(gp, name, &slot);

	if (p < 0)
		NERR(o, "input '%s' is not produced by any node, nor a graph input or initializer",
		     name);
	else if (p >= o->node)
		NERR(o, "input '%s' is produced by node %d, which does not come before it "
			"(a cycle, or nodes out of topological order)", name, p);
	else
		NERR(o, "input '%s' is output %zu of node %d, which oraclec does not model", name,
		     slot + 1, p);
}

static bool
node(Onnx *o, const Onnx__GraphProto *gp)
{
	const Onnx__NodeProto *n = o->np;
	const Val *in[16] = { 0 }, *act = NULL;
	int nin = 0;

	if (!n->op_type || !*n->op_type) {
		diag_error(floc(o), "node %d has no op_type", o->node);
		return false;
	}
	if (n->domain && *n->domain && strcmp(n->domain, "ai.onnx") != 0) {
		NERR(o, "operator domain '%s' is not supported", n->domain);
		return false;
	}
	if (n->n_output < 1 || !n->output[0] || !*n->output[0]) {
		NERR(o, "node has no output");
		return false;
	}
	for (size_t i = 0; i < n->n_attribute; i++)
		if (n->attribute[i]->g || n->attribute[i]->n_graphs) {
			NERR(o, "subgraphs (attribute '%s') are not supported",
			     n->attribute[i]->name ? n->attribute[i]->name : "");
			return false;
		}
	for (size_t i = 0; i < n->n_output; i++)
		if (n->output[i] && *n->output[i] && map_get(&o->vals, n->output[i])) {
			NERR(o, "output '%s' is already defined (duplicate name or cycle)",
			     n->output[i]);
			return false;
		}
	for (size_t i = 0; i < n->n_input; i++) {
		const Val *v;
		if (!n->input[i] || !*n->input[i])
			continue; /* an optional input left out */
		if (!(v = lookup(o, n->input[i]))) {
			missing_input(o, gp, n->input[i]);
			return false;
		}
		if (i < NELEM(in))
			in[i] = v, nin = (int)i + 1;
		if (v->act && !act)
			act = v;
	}
	/* Shape and Size read only an activation's shape: they fold */
	if (act && strcmp(n->op_type, "Shape") != 0 && strcmp(n->op_type, "Size") != 0)
		return lower(o, gp, in[0] && in[0]->act ? in[0] : act);
	for (size_t i = 0; i < n->n_output; i++) {
		Val *v = newval(o);
		if (i == 0 && !onnx_fold(o, in, nin, v))
			return false;
		if (n->output[i] && *n->output[i])
			map_put(&o->vals, arena_strdup(o->a, n->output[i]), v);
	}
	return true;
}

/* ---- the model ---------------------------------------------------------- */

static int
opset_of(const Onnx__ModelProto *m)
{
	for (size_t i = 0; i < m->n_opset_import; i++) {
		const Onnx__OperatorSetIdProto *os = m->opset_import[i];
		if (!os->domain || !*os->domain || strcmp(os->domain, "ai.onnx") == 0)
			return (int)os->version;
	}
	return 1;
}

static void
mark_outputs(Onnx *o, const Onnx__GraphProto *gp)
{
	for (size_t i = 0; i < gp->n_output; i++) {
		const Val *v = lookup(o, gp->output[i]->name);
		if (v && v->act && v->tensor >= 0)
			o->g->tensor[v->tensor].output = true;
	}
}

static Graph *
build(Onnx *o, const Onnx__ModelProto *m, const char *path, const Shape *override)
{
	const Onnx__GraphProto *gp = m->graph;
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	const char *dot = strrchr(base, '.');
	const char *name;

	if (!gp) {
		diag_error(floc(o), "the model has no graph");
		return NULL;
	}
	/* exporters name graphs generically (torch_jit, main_graph): the
	 * file's name says more */
	name = arena_strndup(o->a, base, dot && dot != base ? (size_t)(dot - base) : strlen(base));
	o->g = graph_new(o->a, arena_strdup(o->a, name), path, "onnx");
	o->g->loc = floc(o);
	o->opset = opset_of(m);
	for (size_t i = 0; i < gp->n_value_info; i++) /* the first of a name counts */
		if (gp->value_info[i]->name && !map_get(&o->vinfo, gp->value_info[i]->name))
			map_put(&o->vinfo, gp->value_info[i]->name, gp->value_info[i]);
	if (!add_initializers(o, gp) || !add_inputs(o, gp, override))
		return NULL;
	for (size_t i = 0; i < gp->n_node; i++) {
		o->node = (int)i;
		o->np = gp->node[i];
		if (!node(o, gp))
			return NULL;
	}
	mark_outputs(o, gp);
	o->g->bn_folded = o->folded > 0 && o->batchnorms == 0;
	o->g->batch = o->batch == BATCH ? 0 : o->batch;
	return o->g;
}

Graph *
onnx_load(const char *path, Arena *a, FileList *files, const OnnxOptions *opt)
{
	Onnx o = { .a = a, .file = path, .batch = BATCH, .strict = opt && opt->strict };
	struct stat st;
	int fd = open(path, O_RDONLY | O_NONBLOCK); /* a FIFO must not block */
	void *map;
	uint8_t *small;
	size_t len;
	const char *err;
	Onnx__ModelProto *m;
	Graph *g;
	int errors;

	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		diag_error((Loc){ path, 0, 0 }, "cannot read file: %s",
			   fd < 0 ? strerror(errno) : "not a regular file");
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	files_add(files, path);
	if (st.st_size == 0 || (uint64_t)st.st_size > MAX_ONNX_BYTES) {
		if (st.st_size)
			diag_error((Loc){ path, 0, 0 }, "file is larger than %zu bytes",
				   MAX_ONNX_BYTES);
		else
			diag_error((Loc){ path, 0, 0 }, "empty file");
		close(fd);
		return NULL;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED) {
		diag_error((Loc){ path, 0, 0 }, "cannot map file: %s", strerror(errno));
		return NULL;
	}
	small = onnx_strip(map, (size_t)st.st_size, &len, &err);
	munmap(map, (size_t)st.st_size);
	if (!small) {
		diag_error((Loc){ path, 0, 0 }, "not a valid ONNX model (%s)", err);
		return NULL;
	}
	m = onnx__model_proto__unpack(NULL, len, small);
	free(small);
	if (!m) {
		diag_error((Loc){ path, 0, 0 }, "not a valid ONNX model (protobuf decode failed)");
		return NULL;
	}
	map_init(&o.vals, a);
	map_init(&o.vinfo, a);
	map_init(&o.unknown, a);
	errors = diag_errors();
	g = build(&o, m, path, opt ? opt->input_shape : NULL);
	onnx__model_proto__free_unpacked(m, NULL);
	/* some checks report and go on (fold.c's index checks): any error
	 * fails the model */
	return diag_errors() > errors ? NULL : g;
}
