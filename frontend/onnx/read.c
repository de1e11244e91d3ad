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
 * nameless nodes are named "<op_type>_<index>".  ONNX does not require
 * node names to be unique: a name already taken (by an earlier node or a
 * generated name) gets a "~N" suffix, with a note.  The lowering rules of
 * the operators are in onnxops.c, the folding rules in fold.c.
 *
 * The batch is the first dimension of the graph inputs.  With --no-batch
 * (a hidden option for ONNX's single-operator conformance models, whose
 * inputs are plain tensors) every graph input is one whole sample: an
 * implicit batch of 1 sits outside it, so per-sample shapes are the full
 * ONNX shapes and no axis is the batch.
 *
 * Parameters: every float initializer, and every float tensor of a
 * Constant node but scalars, counts once, on the first layer that reads it
 * directly or through folded constants (Layer.fparams), except
 * BatchNormalization's running mean and variance (buffers). */
#include "frontend/onnx/values.h"
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
	v->bax = -1;
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
				set_int(v, i, dt == ONNX__TENSOR_PROTO__DATA_TYPE__INT8 ? (int8_t)*p : *p);
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

/* a's sources then b's; shares a's list when b adds nothing */
Src *
src_union(Onnx *o, Src *a, const Src *b)
{
	for (; b; b = b->next) {
		const Src *s = a;
		while (s && s->init != b->init)
			s = s->next;
		if (!s) {
			Src *n = arena_alloc(o->a, sizeof *n);
			n->init = b->init;
			n->next = a;
			a = n;
		}
	}
	return a;
}

static bool
is_float(int dt)
{
	return dt == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT ||
	       dt == ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE ||
	       dt == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16 ||
	       dt == ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16;
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
		if (is_float(t->data_type)) { /* a trained tensor: its own source */
			v->src = arena_alloc(o->a, sizeof *v->src);
			v->src->init = v;
		}
		map_put(&o->vals, arena_strdup(o->a, t->name), v);
	}
	return true;
}

/* One graph input's per-sample shape (the full shape with --no-batch);
 * its batch into *batch. */
static bool
input_shape(Onnx *o, const Onnx__ValueInfoProto *vi, const Shape *override, Shape *s,
	    int64_t *batch)
{
	const Onnx__TypeProto__Tensor *tt;
	int skip = o->nobatch ? 0 : 1;

	if (!vi->type || vi->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE) {
		diag_error(floc(o), "graph input '%s' is not a tensor (sequences, maps and "
			   "optionals are not supported)", vi->name);
		return false;
	}
	if (!(tt = vi->type->tensor_type) || !tt->shape) {
		diag_error(floc(o), "graph input '%s' has no tensor shape", vi->name);
		return false;
	}
	if (tt->shape->n_dim < (size_t)skip || tt->shape->n_dim > (size_t)MAX_RANK + skip) {
		diag_error(floc(o), "graph input '%s' has %zu dimensions (%d to %d supported)",
			   vi->name, tt->shape->n_dim, skip, MAX_RANK + skip);
		return false;
	}
	/* the first dimension is the batch, symbolic or fixed (a value below
	 * 1, as some exporters write for "dynamic", is symbolic) */
	*batch = BATCH;
	if (skip && tt->shape->dim[0]->value_case ==
			    ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
	    tt->shape->dim[0]->dim_value > 0)
		*batch = tt->shape->dim[0]->dim_value;
	if (*batch != BATCH && *batch > MAX_DIM) {
		diag_error(floc(o), "graph input '%s': batch dimension %" PRId64
			   " is out of range (1 to 2^40)", vi->name, *batch);
		return false;
	}
	s->rank = (int)tt->shape->n_dim - skip;
	for (int k = 0; k < s->rank; k++) {
		const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[k + skip];
		s->d[k] = d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE
				  ? d->dim_value
				  : BATCH; /* symbolic: any value a file may hold is a dim */
	}
	if (override && o->g->ninput == 0)
		*s = *override;
	for (int k = 0; k < s->rank; k++) {
		if (s->d[k] == BATCH) {
			diag_error(floc(o), "graph input '%s': dimension %d is symbolic; give the "
				   "per-sample shape with --input-shape", vi->name, k + skip);
			return false;
		}
		if (s->d[k] == 0) {
			diag_error(floc(o), "graph input '%s': dimension %d is 0 (empty tensors "
				   "are not supported)", vi->name, k + skip);
			return false;
		}
		if (s->d[k] < 1 || s->d[k] > MAX_DIM) {
			diag_error(floc(o), "graph input '%s': dimension %d is %" PRId64 ", out of "
				   "range (1 to 2^40)", vi->name, k + skip, s->d[k]);
			return false;
		}
	}
	if (!shape_elems(s, &(int64_t){ 0 })) {
		diag_error(floc(o), "graph input '%s' has more elements than 64 bits can count",
			   vi->name);
		return false;
	}
	return true;
}

/* The graph inputs that are not initializers (IR <= 3 lists both). */
static bool
add_inputs(Onnx *o, const Onnx__GraphProto *gp, const Shape *override)
{
	for (size_t i = 0; i < gp->n_input; i++) {
		const Onnx__ValueInfoProto *vi = gp->input[i];
		Shape s = { 0 };
		int64_t batch;
		Val *v;

		if (!vi->name || map_get(&o->vals, vi->name))
			continue;
		if (!input_shape(o, vi, override, &s, &batch))
			return false;
		if (o->g->ninput == 0)
			o->batch = batch;
		v = newval(o);
		v->act = true;
		v->shaped = true;
		v->rank = s.rank + !o->nobatch;
		v->bax = o->nobatch ? -1 : 0;
		v->d[0] = 1;
		memcpy(v->d + !o->nobatch, s.d, s.rank * sizeof s.d[0]);
		v->tensor = graph_add_input(o->g, arena_strdup(o->a, vi->name), &s);
		shape_elems(&s, &o->g->tensor[v->tensor].elems); /* input_shape checked it */
		map_put(&o->vals, o->g->tensor[v->tensor].name, v);
	}
	if (o->g->ninput == 0 && !o->nobatch) {
		diag_error(floc(o), "the graph has no input besides its initializers");
		return false;
	}
	return true;
}

/* ---- per-sample shapes and layers --------------------------------------- */

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

/* A layer name no layer has yet: base itself, else base~2, base~3, ...
 * (the first of these not taken either); every layer name, the node's own
 * or a generated one, is made here.  base must live in the arena. */
static const char *
unique_name(Onnx *o, const char *base)
{
	uintptr_t k = (uintptr_t)map_get(&o->names, base);
	const char *name = base;

	if (k) {
		do {
			name = arena_printf(o->a, "%s~%ju", base, (uintmax_t)k++);
		} while (map_get(&o->names, name));
		map_put(&o->names, base, (void *)k);
		if (!o->renamed++) {
			o->renamed_from = base;
			o->renamed_to = name;
		}
	}
	map_put(&o->names, name, (void *)(uintptr_t)2);
	return name;
}

/* The name of the node's first layer: the node's name, or
 * "<op_type>_<index>" for a nameless node, made unique. */
static const char *
node_name(Onnx *o)
{
	if (o->np->name && *o->np->name)
		return unique_name(o, arena_strdup(o->a, o->np->name));
	return unique_name(o, arena_printf(o->a, "%s_%d", o->np->op_type, o->node));
}

/* After the last node: one note for the layers that were renamed. */
static void
note_renamed(Onnx *o)
{
	if (o->renamed == 1)
		diag_note(floc(o), "the layer name '%s' was used before: this layer is "
			  "named '%s'", o->renamed_from, o->renamed_to);
	else if (o->renamed > 1)
		diag_note(floc(o), "%d layer names were used before and got a '~N' suffix "
			  "(the first: '%s' is named '%s')", o->renamed, o->renamed_from,
			  o->renamed_to);
}

/* The float initializers the node reads, directly or through folded
 * constants, that no earlier layer counted: they are the layer's. */
static int64_t
new_params(Onnx *o)
{
	int64_t n = 0;

	for (size_t i = 0; i < o->np->n_input; i++) {
		const Val *v = lookup(o, o->np->input[i]);
		for (const Src *s = v && !v->act ? v->src : NULL; s; s = s->next)
			if (!s->init->counted) {
				s->init->counted = true;
				n += count(s->init);
			}
	}
	return n;
}

/* Adds a layer reading the activations `in`; its output is the node's
 * output `out`, or for out = -1 a tensor of the lowering's own named
 * "<layer>:out".  A node lowered to several layers gives them its name
 * with a ":k" suffix after the first. */
Layer *
onnx_layer_out(Onnx *o, OpKind op, const Val **in, int nin, int out)
{
	int *ins = arena_array(o->a, nin ? nin : 1, sizeof *ins), l;
	Graph *g = o->g;
	const char *name;

	if (g->nlayer >= MAX_LAYERS) {
		diag_error(floc(o), "model has more than %d layers", MAX_LAYERS);
		return NULL;
	}
	for (int i = 0; i < nin; i++)
		ins[i] = in[i]->tensor;
	if (g->nlayer && g->layer[g->nlayer - 1].srcidx == o->node &&
	    g->layer[g->nlayer - 1].srcop) {
		name = unique_name(o, arena_printf(o->a, "%s:%d", o->lname, g->nlayer - o->first));
	} else {
		o->first = g->nlayer;
		name = o->lname = node_name(o);
	}
	l = graph_add_layer(g, op, name, floc(o));
	g->layer[l].srcop = arena_strdup(o->a, o->np->op_type);
	g->layer[l].srcidx = o->node;
	g->layer[l].fparams = new_params(o);
	layer_set_inputs(g, l, ins, nin);
	layer_add_output(g, l, out < 0 ? arena_printf(o->a, "%s:out", name)
					: arena_strdup(o->a, o->np->output[out]));
	return &g->layer[l];
}

Layer *
onnx_layer(Onnx *o, OpKind op, const Val **in, int nin)
{
	return onnx_layer_out(o, op, in, nin, 0);
}

/* The full shape of an activation from its per-sample shape: the batch
 * axis comes back, as 1 when the per-sample shape left it out. */
static bool
full_shape(Onnx *o, const Shape *ps, int rank, int bax, Val *v)
{
	char b[96];

	v->rank = rank;
	v->bax = bax;
	if (bax < 0 && ps->rank == rank) {
		memcpy(v->d, ps->d, rank * sizeof ps->d[0]);
	} else if (bax >= 0 && bax < rank && ps->rank == rank && ps->d[bax] > 1) {
		memcpy(v->d, ps->d, rank * sizeof ps->d[0]);
	} else if (bax >= 0 && bax < rank && ps->rank == rank - 1) {
		memcpy(v->d, ps->d, bax * sizeof ps->d[0]);
		v->d[bax] = 1;
		memcpy(v->d + bax + 1, ps->d + bax, (rank - 1 - bax) * sizeof ps->d[0]);
	} else {
		NERR(o, "internal: per-sample shape %s does not fit rank %d with the batch "
			"on axis %d", shape_str(ps, b, sizeof b), rank, bax);
		return false;
	}
	return true;
}

/* Infers the new layer's shapes and binds its outputs (the node's first
 * ones) as activations of full rank `rank`, batch on axis `bax`. */
bool
onnx_finish(Onnx *o, Layer *ly, int rank, int bax)
{
	Graph *g = o->g;

	if (!layer_infer(g, (int)(ly - g->layer), NULL))
		return false;
	for (int k = 0; k < ly->nout; k++) {
		const Tensor *t = &g->tensor[ly->out[k]];
		Val *v = newval(o);
		v->act = true;
		v->shaped = true;
		v->tensor = ly->out[k];
		if (!full_shape(o, &t->shape, rank, bax, v))
			return false;
		map_put(&o->vals, t->name, v);
	}
	return true;
}

/* ---- nodes -------------------------------------------------------------- */

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* A node whose inputs are all constants: folded. */
static bool
fold_node(Onnx *o, const Val **in, int nin)
{
	const Onnx__NodeProto *n = o->np;
	Val *v = newval(o);
	Src *src = NULL;
	const Onnx__AttributeProto *a;
	int errors = diag_errors();

	for (int i = 0; i < nin; i++)
		if (in[i])
			src = src_union(o, src, in[i]->src);
	/* folding reports some errors (an index out of range) and goes on */
	if (!onnx_fold(o, in, nin, v) || diag_errors() > errors)
		return false;
	if (strcmp(n->op_type, "Constant") == 0 && v->shaped && v->rank > 0 &&
	    (a = attr(n, "value")) && a->t && is_float(a->t->data_type)) {
		/* a trained tensor, as a float initializer is (some exporters
		 * write weights as Constant nodes); a scalar (an epsilon, a
		 * factor) is not */
		src = arena_alloc(o->a, sizeof *src);
		src->init = v;
	}
	v->src = src;
	map_put(&o->vals, arena_strdup(o->a, n->output[0]), v);
	for (size_t i = 1; i < n->n_output; i++)
		if (n->output[i] && *n->output[i]) {
			Val *w = newval(o);
			w->src = src;
			map_put(&o->vals, arena_strdup(o->a, n->output[i]), w);
		}
	return true;
}

/* The node listing `name` as an output (its *slot), -1 if none; only
 * looked for when an input is missing, to say why. */
static int
producer(const Onnx__GraphProto *gp, const char *name, size_t *slot)
{
	for (size_t i = 0; i < gp->n_node; i++)
		for (size_t k = 0; k < gp->node[i]->n_output; k++)
			if (gp->node[i]->output[k] && strcmp(gp->node[i]->output[k], name) == 0)
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
	const Val *in[MAX_NODE_INPUTS] = { 0 }, *act = NULL;
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
		bool any = false;
		for (size_t i = 1; i < n->n_output; i++)
			any |= n->output[i] && *n->output[i];
		/* only optional outputs, as recurrent layers may have */
		NERR(o, any ? "a node without its first output is not supported"
			    : "node has no output");
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
		if (i >= NELEM(in)) {
			NERR(o, "more than %zu inputs are not supported", NELEM(in));
			return false;
		}
		in[i] = v, nin = (int)i + 1;
		if (v->act && !act)
			act = v;
	}
	/* Shape and Size read only an activation's shape: they fold */
	if (act && strcmp(n->op_type, "Shape") != 0 && strcmp(n->op_type, "Size") != 0)
		return onnx_lower(o, in, nin);
	if (!act) {
		bool done = false;
		if (!onnx_batch_const(o, in, nin, &done))
			return false;
		if (done)
			return true;
	}
	return fold_node(o, in, nin);
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
		int errors = diag_errors();
		o->node = (int)i;
		o->np = gp->node[i];
		if (!node(o, gp)) {
			/* every failure must say why: a rule that gives up without
			 * a message is reported here rather than exiting silently */
			if (diag_errors() == errors)
				NERR(o, "this use of the operator is not supported");
			return NULL;
		}
	}
	mark_outputs(o, gp);
	note_renamed(o);
	o->g->bn_folded = o->folded > 0 && o->batchnorms == 0;
	o->g->batch = o->batch == BATCH ? 0 : o->batch;
	return o->g;
}

/* Maps a regular file of 1 byte to MAX_ONNX_BYTES; NULL after an error. */
static void *
map_file(const char *path, FileList *files, size_t *size)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_NONBLOCK); /* a FIFO must not block */
	void *map;

	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		diag_error((Loc){ path, 0, 0 }, "cannot read file: %s",
			   fd < 0 ? strerror(errno) : "not a regular file");
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	if (files)
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
	*size = (size_t)st.st_size;
	return map;
}

static void
print_dims(FILE *f, const char *name, const int64_t *d, int rank, int bax)
{
	fprintf(f, "%s [", name);
	for (int i = 0; i < rank; i++) {
		if (i == bax)
			fprintf(f, d[i] == 1 ? "%sN" : "%sN*%" PRId64, i ? "," : "", d[i]);
		else
			fprintf(f, "%s%" PRId64, i ? "," : "", d[i]);
	}
	fprintf(f, "]\n");
}

/* --print-outputs: each graph output's full shape, "?" when unknown. */
static void
print_outputs(Onnx *o, const Onnx__GraphProto *gp, FILE *f)
{
	for (size_t i = 0; i < gp->n_output; i++) {
		const char *name = gp->output[i]->name ? gp->output[i]->name : "";
		const Val *v = lookup(o, name);
		if (!v || !v->shaped)
			fprintf(f, "%s ?\n", name);
		else
			print_dims(f, name, v->d, v->rank, v->act ? v->bax : -1);
	}
}

bool
onnx_print_tensor_dims(const char *path, FILE *f)
{
	size_t size;
	void *map = map_file(path, NULL, &size);
	Onnx__TensorProto *t;
	int64_t d[64];

	if (!map)
		return false;
	t = onnx__tensor_proto__unpack(NULL, size, map);
	munmap(map, size);
	if (!t || t->n_dims > 64) {
		diag_error((Loc){ path, 0, 0 }, "not a TensorProto with at most 64 dimensions");
		if (t)
			onnx__tensor_proto__free_unpacked(t, NULL);
		return false;
	}
	for (size_t i = 0; i < t->n_dims; i++)
		d[i] = t->dims[i];
	print_dims(f, t->name && *t->name ? t->name : "tensor", d, (int)t->n_dims, -1);
	onnx__tensor_proto__free_unpacked(t, NULL);
	return true;
}

Graph *
onnx_load(const char *path, Arena *a, FileList *files, const OnnxOptions *opt)
{
	Onnx o = { .a = a, .file = path, .batch = BATCH, .strict = opt && opt->strict,
		   .nobatch = opt && opt->nobatch };
	void *map;
	uint8_t *small;
	size_t len, size;
	const char *err;
	Onnx__ModelProto *m;
	Graph *g;
	int errors;

	if (!(map = map_file(path, files, &size)))
		return NULL;
	small = onnx_strip(map, size, &len, &err);
	munmap(map, size);
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
	map_init(&o.names, a);
	errors = diag_errors();
	g = build(&o, m, path, opt ? opt->input_shape : NULL);
	/* some checks report and go on (fold.c's index checks): any error
	 * fails the model */
	if (diag_errors() > errors)
		g = NULL;
	if (g && opt && opt->print_outputs)
		print_outputs(&o, m->graph, opt->print_outputs);
	onnx__model_proto__free_unpacked(m, NULL);
	return g;
}
