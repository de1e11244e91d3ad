/* values.h -- the bottom layer of the ONNX frontend: the state of a graph
 * being read (Onnx), its values (Val), and what every rule reads of the
 * node at hand: its attributes, its errors (values.c).  It knows nothing
 * of folding, lowering or the operator table (read.c lists the files). */
#ifndef ORACLEC_FRONTEND_ONNX_VALUES_H
#define ORACLEC_FRONTEND_ONNX_VALUES_H

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

/* The float initializers a constant was computed from: as they are
 * (through views and copies: a transpose, a slice, a concat), or derived
 * by arithmetic, a comparison, a trigonometric function or as indices
 * (a mask made from a buffer, positions times inv_freq): docs/counting.md,
 * "Parameters and buffers". */
typedef struct Src {
	struct Val *init;
	bool derived;
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
	bool untrained;    /* float initializer holding an infinity or a NaN
	                      (its values read): never trained */
	const char *name;  /* initializer: its name */
	const char *fingerprint; /* float matrix: its elements' multiset
	                      (pbstrip.c), NULL when not known */
	int buf_layer;     /* initializer counted as a buffer: the layer that
	                      counted it (Layer.fbuffers), -1 otherwise */
	bool uniform;      /* float initializer of 2 or more elements, all equal
	                      (its values kept): what torch.onnx.export merges */
	const char **mods; /* uniform: the modules that counted it, by node name
	                      prefix; nmods of them */
	int nmods;
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
	int64_t seq_len;    /* --seq-len: fills a token input's symbolic axis */
	int opset;
	int node;           /* index of the node being lowered */
	int first;          /* the node's first layer, when it makes several */
	const Onnx__NodeProto *np;
	bool strict;
	int folded;         /* Conv weights the exporter made (onnx::Conv_N) */
	int merged;         /* uniform initializers counted once per module */
	int tied;           /* initializers that are another's copy (tied) */
	int64_t merged_params; /* the elements that added */
	const char *merged_first; /* the first of them, for the note */
} Onnx;

/* The file, as a place for diagnostics; an error about the node o->np,
 * which names it. */
Loc floc(Onnx *o);
void node_error(Onnx *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define NERR(o, ...) node_error(o, __VA_ARGS__)

/* A node's attributes: the one named, NULL if absent; an integer's value
 * or dflt; the node o->np's ints into out[max] (their number, -1 when
 * absent, -2 after an error); a string's value as an arena copy, or dflt. */
const Onnx__AttributeProto *attr(const Onnx__NodeProto *n, const char *name);
int64_t attr_i(const Onnx__NodeProto *n, const char *name, int64_t dflt);
int attr_ints(Onnx *o, const char *name, int64_t *out, int max);
const char *attr_s(Onnx *o, const char *name, const char *dflt);

Val *newval(Onnx *o);
int64_t count(const Val *v);                 /* elements; -1 on overflow */
void set_values(Onnx *o, Val *v, int64_t n); /* room for n known values */
Val *tensor_val(Onnx *o, const Onnx__TensorProto *t, const char *what);
Val *lookup(Onnx *o, const char *name);
/* a's sources then b's, b's marked derived when `derive` is set */
Src *src_union(Onnx *o, Src *a, const Src *b, bool derive);

Shape ps_shape(const Val *v);                /* an activation's per-sample shape */
int ps_axis(const Val *v, int axis);         /* full axis -> per sample; -1: the
                                                batch alone, not in the sample */
bool ps_const(Onnx *o, const Val *c, const Val *ref, Shape *out);

#endif
