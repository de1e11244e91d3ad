/* onnx.h -- what the ONNX frontend's files share: the value table of a
 * graph being lowered.  onnx.c reads the file and walks the nodes,
 * onnxops.c lowers nodes that read activations to IR layers, fold.c
 * evaluates nodes whose inputs are all constants. */
#ifndef ORACLEC_FRONTEND_ONNX_H
#define ORACLEC_FRONTEND_ONNX_H

#include "frontend/frontend.h"
#include "frontend/onnx/onnx.pb-c.h"
#include "util/map.h"

/* constants with more values than this are not folded; inputs of one node */
enum { MAX_FOLD = 1 << 20, MAX_NODE_INPUTS = 256 };
/* Onnx.batch when the graph input's batch is symbolic */
#define BATCH INT64_MIN

/* A folded integer: k, or k times the batch N when batch is set (then
 * k >= 1).  Shapes computed at run time hold N this way. */
typedef struct Int {
	int64_t k;
	bool batch;
} Int;

/* The float initializers a constant was computed from. */
typedef struct Src {
	struct Val *init;
	struct Src *next;
} Src;

/* One ONNX value.  Shapes are full ONNX shapes.  An activation's batch
 * lives in one axis, bax: its full extent there is N * d[bax], where
 * d[bax] is the per-sample factor (1 when the axis is the batch alone,
 * more when a reshape merged the batch with other dimensions, as Swin's
 * [N*nW, 49, C] windows).  Its per-sample IR shape leaves that axis out
 * when the factor is 1 and keeps it, with the factor, otherwise
 * (ps_shape below); the IR is per sample, so element counts and MACs
 * stay exact whichever dimensions the batch is merged with. */
typedef struct Val {
	bool act;          /* an activation: tensor is its IR tensor */
	int tensor;
	int rank;          /* full rank */
	int64_t d[MAX_RANK + 1];
	int bax;           /* activation: the batch axis; -1: none (--no-batch) */
	bool shaped;       /* rank and d are known */
	bool init;         /* an initializer (weights: dims only) */
	bool counted;      /* initializer: counted already, as params or buffers */
	Src *src;          /* constant: the float initializers it depends on */
	int64_t n;         /* number of values known, -1 if none */
	Int *iv;           /* integer values */
	double *fv;        /* the same values as floats (NAN for batch multiples) */
} Val;

typedef struct Onnx {
	Arena *a;
	Graph *g;
	const char *file;
	Map vals;           /* value name -> Val* */
	Map vinfo;          /* value_info name -> its ValueInfoProto (the first) */
	Map unknown;        /* unsupported op_type -> 1 + its index in Graph.unknown */
	Map names;          /* layer name -> the next ~N suffix to try for it */
	int renamed;        /* layers whose name was taken: suffixed */
	const char *renamed_from, *renamed_to; /* the first of them */
	const char *lname;  /* the node's first layer's name */
	int64_t batch;      /* the graph input's batch, BATCH if symbolic */
	bool nobatch;       /* every graph input is one whole sample */
	int opset;
	int node;           /* index of the node being lowered */
	int first;          /* the node's first layer, when it makes several */
	const Onnx__NodeProto *np;
	bool strict;
	int folded;         /* Conv weights the exporter made (onnx::Conv_N) */
	int batchnorms;
} Onnx;

/* onnx.c */
Loc floc(Onnx *o);
void node_error(Onnx *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define NERR(o, ...) node_error(o, __VA_ARGS__)

const Onnx__AttributeProto *attr(const Onnx__NodeProto *n, const char *name);
int64_t attr_i(const Onnx__NodeProto *n, const char *name, int64_t dflt);
int attr_ints(Onnx *o, const char *name, int64_t *out, int max);
const char *attr_s(Onnx *o, const char *name, const char *dflt); /* arena copy */

Val *newval(Onnx *o);
int64_t count(const Val *v);                 /* elements; -1 on overflow */
void set_values(Onnx *o, Val *v, int64_t n); /* room for n known values */
Val *tensor_val(Onnx *o, const Onnx__TensorProto *t, const char *what);
Val *lookup(Onnx *o, const char *name);
Src *src_union(Onnx *o, Src *a, const Src *b);

Shape ps_shape(const Val *v);                /* an activation's per-sample shape */
int ps_axis(const Val *v, int axis);         /* full axis -> per sample; -1: the
                                                batch alone, not in the sample */
bool ps_const(Onnx *o, const Val *c, const Val *ref, Shape *out);
Layer *onnx_layer(Onnx *o, OpKind op, const Val **in, int nin);
Layer *onnx_layer_out(Onnx *o, OpKind op, const Val **in, int nin, int out);
bool onnx_finish(Onnx *o, Layer *l, int rank, int bax);

/* onnxops.c: lower the node o->np, which reads an activation; in[i] are
 * its inputs (NULL for one left out).  False after an error. */
bool onnx_lower(Onnx *o, const Val **in, int nin);
/* helpers onnxshape.c shares: an axis attribute normalised (-1 after an
 * error); the per-sample axis of one that must not be the batch's (-2
 * after an error); a constant operand as a const layer; a layer's outputs
 * bound with x's rank and batch axis; a one-input layer of kind op */
int onnx_full_axis(Onnx *o, int64_t axis, int rank);
int onnx_sample_axis(Onnx *o, const Val *x, int64_t axis);
const Val *onnx_const_operand(Onnx *o, const Val *c);
const Val *onnx_const_layer(Onnx *o, const Shape *per_sample);
bool onnx_finish_like(Onnx *o, Layer *l, const Val *x);
bool onnx_lower_unary(Onnx *o, const Val *x, OpKind op);

/* onnxshape.c: lower the node if it is a data-movement or reduction op
 * (*done true), as onnx_lower does; *done false for any other op. */
bool onnx_lower_shape(Onnx *o, const Val **in, int nin, bool *done);
/* Gather, whose data may be a constant table indexed by an activation */
bool onnx_lower_gather(Onnx *o, const Val *data, const Val *indices);
/* a transpose of x by the full permutation p; *out, when given, is the
 * result, a tensor of the lowering's own (else the node's output) */
bool onnx_transpose(Onnx *o, const Val *x, const int64_t *p, const Val **out);
/* Expand or ConstantOfShape to a shape that holds the batch: a const
 * layer, the tensor repeated for every sample (a class token).  False
 * when it is not such a node (*done false) or after an error. */
bool onnx_batch_const(Onnx *o, const Val **in, int nin, bool *done);

/* fold.c: evaluate a node whose inputs are all constants (in[i] NULL for
 * an input left out) into out: its shape when the rule is known, its
 * values when they are integers or small floats oraclec can compute
 * (n = -1 otherwise).  False after an error. */
bool onnx_fold(Onnx *o, const Val **in, int nin, Val *out);
/* Slice's start, step and extent per axis of a full shape. */
typedef struct Range3 {
	int64_t start[MAX_RANK + 1], step[MAX_RANK + 1], len[MAX_RANK + 1];
} Range3;
/* Reads Slice's inputs (opset >= 10) or attributes (before) for x's full
 * shape into r; false when they are not constants. */
bool slice_ranges(Onnx *o, const Val **in, int nin, const Val *x, Range3 *r);
/* x op y for op in + - * / % = < > m(in) M(ax), the batch kept
 * symbolic; false when the result is unknown (N * N, N / 7, ...). */
bool int_binary(char op, Int x, Int y, Int *r);

#endif
