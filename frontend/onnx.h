/* onnx.h -- what onnx.c (reading, lowering) and fold.c (constant folding)
 * share: the value table of an ONNX graph being lowered. */
#ifndef ORACLEC_FRONTEND_ONNX_H
#define ORACLEC_FRONTEND_ONNX_H

#include "frontend/frontend.h"
#include "frontend/onnx.pb-c.h"
#include "util/map.h"

/* constants with more values than this are not folded */
enum { MAX_FOLD = 1 << 20 };
/* the symbolic batch size in folded integer values */
#define BATCH INT64_MIN

typedef struct Val {
	bool act;          /* an activation: tensor is its IR tensor */
	int tensor;
	int rank;          /* full rank; for activations d[0] is the batch */
	int64_t d[MAX_RANK + 1];
	bool shaped;       /* rank and d are known */
	bool init;         /* an initializer (weights: dims only) */
	int64_t n;         /* number of values known, -1 if none */
	int64_t *iv;       /* integer values (BATCH for the symbolic batch) */
	double *fv;        /* the same values as floats */
} Val;

typedef struct Onnx {
	Arena *a;
	Graph *g;
	const char *file;
	Map vals;           /* value name -> Val* */
	Map vinfo;          /* value_info name -> its ValueInfoProto (the first) */
	Map unknown;        /* unsupported op_type -> 1 + its index in Graph.unknown */
	int64_t batch;      /* the graph input's batch, BATCH if symbolic */
	int opset;
	int node;           /* index of the node being lowered */
	const Onnx__NodeProto *np;
	bool strict;
	int folded;         /* Conv weights the exporter made (onnx::Conv_N) */
	int batchnorms;
} Onnx;

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

/* fold.c: evaluate a node whose inputs are all constants (in[i] NULL for
 * an input left out) into out; out keeps n = -1 when the node is not an
 * integer shape computation oraclec evaluates.  False after an error. */
bool onnx_fold(Onnx *o, const Val **in, int nin, Val *out);

#endif
