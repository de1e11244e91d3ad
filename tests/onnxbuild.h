/* onnxbuild.h -- ONNX models built in memory with protobuf-c's generated
 * API (frontend/onnx/onnx.pb-c.h), for tests/test_onnx.c and the CLI cases'
 * generator tests/onnx-bad-gen.c, so no binary model is committed.
 *
 * Every message, array and string lives in an arena and is never freed on
 * its own.  A model is assembled bottom-up:
 *
 *     Onnx__GraphProto *g = ob_graph(a);
 *     ob_input(a, g, ob_vinfo(a, "x", DIMS(SYM, 3, 8, 8)));
 *     ob_init(a, g, ob_tensor(a, "w", FLOAT, DIMS(4, 3, 3, 3)));
 *     ob_add(a, g, ob_node(a, "Conv", "c", "x,w", "y"));
 *     len = ob_pack(a, ob_model(a, g), &buf);
 *
 * Arrays grow by doubling, so a graph of a million nodes is linear to
 * build.  Every helper is static inline: each user takes what it needs. */
#ifndef ORACLEC_TESTS_ONNXBUILD_H
#define ORACLEC_TESTS_ONNXBUILD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "frontend/onnx/onnx.pb-c.h"
#include "util/arena.h"

/* a symbolic dimension: dim_param "N" */
#define SYM INT64_MIN
/* a dims list as two arguments, its length and its values */
#define DIMS(...)                                                                     \
	(int)(sizeof((int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t)), (int64_t[]){ __VA_ARGS__ }
/* a value_info without a shape */
#define NOSHAPE -1, NULL

#define FLOAT ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT
#define INT64 ONNX__TENSOR_PROTO__DATA_TYPE__INT64
#define BOOLEAN ONNX__TENSOR_PROTO__DATA_TYPE__BOOL

/* a new message of type T, set to INIT */
#define OB_NEW(a, T, INIT) ((T *)ob_copy((a), &(T)INIT, sizeof(T)))
/* appends x to the array arr of n elements */
#define OB_PUSH(a, arr, n, x) ((arr) = ob_grow((a), (arr), (n), sizeof *(arr)), (arr)[(n)++] = (x))

static inline void *
ob_copy(Arena *a, const void *p, size_t n)
{
	void *q = arena_alloc(a, n ? n : 1);

	return n ? memcpy(q, p, n) : q;
}

/* room for element n: the capacity doubles when n is 0 or a power of two */
static inline void *
ob_grow(Arena *a, void *arr, size_t n, size_t size)
{
	return n & (n - 1) ? arr : arena_grow(a, arr, n, n ? 2 * n : 1, size);
}

/* A tensor value_info: element type float, dims as given (SYM: "N"), or no
 * shape at all when ndims < 0. */
static inline Onnx__ValueInfoProto *
ob_vinfo(Arena *a, const char *name, int ndims, const int64_t *dims)
{
	Onnx__ValueInfoProto *vi = OB_NEW(a, Onnx__ValueInfoProto, ONNX__VALUE_INFO_PROTO__INIT);
	Onnx__TypeProto *tp = OB_NEW(a, Onnx__TypeProto, ONNX__TYPE_PROTO__INIT);
	Onnx__TypeProto__Tensor *tt =
		OB_NEW(a, Onnx__TypeProto__Tensor, ONNX__TYPE_PROTO__TENSOR__INIT);

	vi->name = name ? arena_strdup(a, name) : NULL;
	vi->type = tp;
	tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	tp->tensor_type = tt;
	tt->has_elem_type = true;
	tt->elem_type = FLOAT;
	if (ndims < 0)
		return vi;
	tt->shape = OB_NEW(a, Onnx__TensorShapeProto, ONNX__TENSOR_SHAPE_PROTO__INIT);
	for (int i = 0; i < ndims; i++) {
		Onnx__TensorShapeProto__Dimension *d =
			OB_NEW(a, Onnx__TensorShapeProto__Dimension,
			       ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT);
		if (dims[i] == SYM) {
			d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
			d->dim_param = arena_strdup(a, "N");
		} else {
			d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
			d->dim_value = dims[i];
		}
		OB_PUSH(a, tt->shape->dim, tt->shape->n_dim, d);
	}
	return vi;
}

/* A tensor with dims and no data (as a model whose weights are elsewhere). */
static inline Onnx__TensorProto *
ob_tensor(Arena *a, const char *name, int dtype, int ndims, const int64_t *dims)
{
	Onnx__TensorProto *t = OB_NEW(a, Onnx__TensorProto, ONNX__TENSOR_PROTO__INIT);

	t->name = name ? arena_strdup(a, name) : NULL;
	t->has_data_type = true;
	t->data_type = dtype;
	t->n_dims = (size_t)ndims;
	t->dims = ob_copy(a, dims, ndims * sizeof *dims);
	return t;
}

/* An int64 tensor of rank 1 holding vals[n]. */
static inline Onnx__TensorProto *
ob_ints(Arena *a, const char *name, int n, const int64_t *vals)
{
	Onnx__TensorProto *t = ob_tensor(a, name, INT64, 1, (int64_t[]){ n });

	t->n_int64_data = (size_t)n;
	t->int64_data = ob_copy(a, vals, n * sizeof *vals);
	return t;
}

/* "a,b,,c" -> {"a", "b", "", "c"}; "" -> no names */
static inline size_t
ob_names(Arena *a, const char *list, char ***out)
{
	size_t n = 0;

	*out = NULL;
	if (!*list)
		return 0;
	for (const char *p = list;; p++) {
		const char *q = strchr(p, ',');
		size_t len = q ? (size_t)(q - p) : strlen(p);
		OB_PUSH(a, *out, n, arena_strndup(a, p, len));
		if (!q)
			return n;
		p = q;
	}
}

/* A node; inputs and outputs as comma-separated names ("" for none, an
 * empty item for an input left out). */
static inline Onnx__NodeProto *
ob_node(Arena *a, const char *op, const char *name, const char *in, const char *out)
{
	Onnx__NodeProto *n = OB_NEW(a, Onnx__NodeProto, ONNX__NODE_PROTO__INIT);

	n->op_type = op ? arena_strdup(a, op) : NULL;
	n->name = name ? arena_strdup(a, name) : NULL;
	n->n_input = ob_names(a, in, &n->input);
	n->n_output = ob_names(a, out, &n->output);
	return n;
}

static inline Onnx__AttributeProto *
ob_attr(Arena *a, Onnx__NodeProto *n, const char *name, Onnx__AttributeProto__AttributeType type)
{
	Onnx__AttributeProto *at = OB_NEW(a, Onnx__AttributeProto, ONNX__ATTRIBUTE_PROTO__INIT);

	at->name = arena_strdup(a, name);
	at->has_type = true;
	at->type = type;
	OB_PUSH(a, n->attribute, n->n_attribute, at);
	return at;
}

static inline void
ob_attr_i(Arena *a, Onnx__NodeProto *n, const char *name, int64_t v)
{
	Onnx__AttributeProto *at = ob_attr(a, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);

	at->has_i = true;
	at->i = v;
}

static inline void
ob_attr_ints(Arena *a, Onnx__NodeProto *n, const char *name, int cnt, const int64_t *v)
{
	Onnx__AttributeProto *at = ob_attr(a, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);

	at->n_ints = (size_t)cnt;
	at->ints = ob_copy(a, v, cnt * sizeof *v);
}

/* a string attribute: protobuf bytes, stored without a NUL */
static inline void
ob_attr_s(Arena *a, Onnx__NodeProto *n, const char *name, const char *s)
{
	Onnx__AttributeProto *at =
		ob_attr(a, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);

	at->has_s = true;
	at->s.len = strlen(s);
	at->s.data = (uint8_t *)arena_strdup(a, s);
}

static inline void
ob_attr_t(Arena *a, Onnx__NodeProto *n, const char *name, Onnx__TensorProto *t)
{
	ob_attr(a, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR)->t = t;
}

static inline void
ob_attr_g(Arena *a, Onnx__NodeProto *n, const char *name, Onnx__GraphProto *g)
{
	ob_attr(a, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH)->g = g;
}

static inline Onnx__GraphProto *
ob_graph(Arena *a)
{
	Onnx__GraphProto *g = OB_NEW(a, Onnx__GraphProto, ONNX__GRAPH_PROTO__INIT);

	g->name = arena_strdup(a, "g");
	return g;
}

static inline Onnx__NodeProto *
ob_add(Arena *a, Onnx__GraphProto *g, Onnx__NodeProto *n)
{
	OB_PUSH(a, g->node, g->n_node, n);
	return n;
}

static inline void
ob_input(Arena *a, Onnx__GraphProto *g, Onnx__ValueInfoProto *vi)
{
	OB_PUSH(a, g->input, g->n_input, vi);
}

static inline void
ob_output(Arena *a, Onnx__GraphProto *g, Onnx__ValueInfoProto *vi)
{
	OB_PUSH(a, g->output, g->n_output, vi);
}

static inline void
ob_value_info(Arena *a, Onnx__GraphProto *g, Onnx__ValueInfoProto *vi)
{
	OB_PUSH(a, g->value_info, g->n_value_info, vi);
}

static inline Onnx__TensorProto *
ob_init(Arena *a, Onnx__GraphProto *g, Onnx__TensorProto *t)
{
	OB_PUSH(a, g->initializer, g->n_initializer, t);
	return t;
}

/* A model of IR version 8 and the default opset 13 holding g (may be NULL). */
static inline Onnx__ModelProto *
ob_model(Arena *a, Onnx__GraphProto *g)
{
	Onnx__ModelProto *m = OB_NEW(a, Onnx__ModelProto, ONNX__MODEL_PROTO__INIT);
	Onnx__OperatorSetIdProto *os =
		OB_NEW(a, Onnx__OperatorSetIdProto, ONNX__OPERATOR_SET_ID_PROTO__INIT);

	m->has_ir_version = true;
	m->ir_version = 8;
	m->graph = g;
	os->has_version = true;
	os->version = 13;
	OB_PUSH(a, m->opset_import, m->n_opset_import, os);
	return m;
}

/* m packed into *buf (arena); returns its length */
static inline size_t
ob_pack(Arena *a, const Onnx__ModelProto *m, uint8_t **buf)
{
	size_t n = onnx__model_proto__get_packed_size(m);

	*buf = arena_alloc(a, n + 1);
	return onnx__model_proto__pack(m, *buf);
}

/* Writes len bytes of buf to path; 0, or 1 after perror. */
static inline int
ob_write(const char *path, const uint8_t *buf, size_t len)
{
	FILE *f = fopen(path, "wb");
	int status = !f || fwrite(buf, 1, len, f) != len;

	if (f && fclose(f) != 0)
		status = 1;
	if (status)
		perror(path);
	return status;
}

/* ---- raw wire format, for what the generated API cannot write ----------- */

/* Writes varint v ending just before *end (the wire built back to front). */
static inline void
ob_varint_before(uint8_t **end, uint64_t v)
{
	uint8_t tmp[10];
	int n = 0;

	do {
		tmp[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	*end -= n;
	memcpy(*end, tmp, n);
}

/* A model whose one graph input 'x' has a TypeProto of `depth` nested
 * sequence types (sequence of sequence of ... of a tensor without shape),
 * in *buf (arena).  Built back to front in one pass: a million levels are
 * linear to write, where protobuf-c would recurse that deep to pack them. */
static inline size_t
ob_nested_types(Arena *a, long depth, uint8_t **buf)
{
	size_t cap = 64 + (size_t)depth * 12;
	uint8_t *start = arena_alloc(a, cap), *end = start + cap, *p = end;
	/* TypeProto { tensor_type { elem_type: FLOAT } } */
	static const uint8_t tensor[] = { 0x0a, 0x02, 0x08, 0x01 };

	p -= sizeof tensor;
	memcpy(p, tensor, sizeof tensor);
	for (long i = 0; i < depth; i++) {
		ob_varint_before(&p, (uint64_t)(end - p)); /* Sequence.elem_type = 1 */
		ob_varint_before(&p, 1 << 3 | 2);
		ob_varint_before(&p, (uint64_t)(end - p)); /* TypeProto.sequence_type = 4 */
		ob_varint_before(&p, 4 << 3 | 2);
	}
	ob_varint_before(&p, (uint64_t)(end - p)); /* ValueInfoProto.type = 2 */
	ob_varint_before(&p, 2 << 3 | 2);
	p -= 3;
	memcpy(p, "\x0a\x01x", 3);                 /* ValueInfoProto.name = 1 */
	ob_varint_before(&p, (uint64_t)(end - p)); /* GraphProto.input = 11 */
	ob_varint_before(&p, 11 << 3 | 2);
	ob_varint_before(&p, (uint64_t)(end - p)); /* ModelProto.graph = 7 */
	ob_varint_before(&p, 7 << 3 | 2);
	p -= 2;
	memcpy(p, "\x08\x08", 2);                  /* ModelProto.ir_version = 8 */
	*buf = p;
	return (size_t)(end - p);
}


/* A parameter-free self-attention over a per-sample vector of width
 * tokens * dim, as PyTorch's exporter writes one under module `prefix`:
 * the vector as `tokens` tokens of `dim`, the scores x x^T, a softmax
 * over the last axis and the scores times x, flattened back (prefix/
 * Reshape, Transpose, MatMul, Softmax, MatMul_1, Reshape_1).  x -> y;
 * prefix and y hold no comma. */
static inline void
ob_attention(Arena *a, Onnx__GraphProto *g, const char *prefix, const char *x, const char *y,
	     int64_t tokens, int64_t dim)
{
	const char *shape = arena_printf(a, "%s/shape", prefix);
	const char *flat = arena_printf(a, "%s/shape_1", prefix);
	const char *r = arena_printf(a, "%s/r", prefix), *rt = arena_printf(a, "%s/rt", prefix);
	const char *s = arena_printf(a, "%s/s", prefix), *p = arena_printf(a, "%s/p", prefix);
	const char *o = arena_printf(a, "%s/o", prefix);
	Onnx__NodeProto *n;

	ob_init(a, g, ob_ints(a, shape, 3, (int64_t[]){ -1, tokens, dim }));
	ob_init(a, g, ob_ints(a, flat, 2, (int64_t[]){ -1, tokens * dim }));
	n = ob_node(a, "Reshape", arena_printf(a, "%s/Reshape", prefix), "x,s", r);
	n->input[0] = arena_strdup(a, x); /* names may hold a comma */
	n->input[1] = (char *)shape;
	ob_add(a, g, n);
	n = ob_node(a, "Transpose", arena_printf(a, "%s/Transpose", prefix), r, rt);
	ob_attr_ints(a, n, "perm", 3, (int64_t[]){ 0, 2, 1 });
	ob_add(a, g, n);
	ob_add(a, g, ob_node(a, "MatMul", arena_printf(a, "%s/MatMul", prefix),
			     arena_printf(a, "%s,%s", r, rt), s));
	n = ob_node(a, "Softmax", arena_printf(a, "%s/Softmax", prefix), s, p);
	ob_attr_i(a, n, "axis", -1);
	ob_add(a, g, n);
	ob_add(a, g, ob_node(a, "MatMul", arena_printf(a, "%s/MatMul_1", prefix),
			     arena_printf(a, "%s,%s", p, r), o));
	n = ob_node(a, "Reshape", arena_printf(a, "%s/Reshape_1", prefix), "o,s", y);
	n->input[0] = (char *)o;
	n->input[1] = (char *)flat;
	ob_add(a, g, n);
}

#endif
