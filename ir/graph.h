/* graph.h -- the layer IR: Graph, Layer, Tensor, Shape.
 *
 * A Graph is a DAG of layers kept in topological order (a layer only reads
 * tensors made by earlier layers or graph inputs).  Objects refer to each
 * other by int index into the Graph's arrays, never by pointer.  Shapes are
 * per sample: the batch dimension is symbolic and never stored.
 *
 * Who fills what: the frontend makes tensors, layers, attributes and the
 * input shapes; passes/ fill everything marked "pass" below; backends only
 * read.  Everything lives in the Graph's arena.
 *
 * The IR's headers, and who may include them: graph.h (this file),
 * system.h (the cluster), grid.h (strategies and process grids) and
 * measured.h (measured runs) are what frontends build; analysis.h (the
 * results of the passes: candidates, times, memory, validation) is for
 * passes/ and backends/ only, and refuses to compile in a frontend
 * (ORACLEC_FRONTEND, set by frontend/frontend.h).  ir.h includes them
 * all. */
#ifndef ORACLEC_IR_GRAPH_H
#define ORACLEC_IR_GRAPH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ir/system.h"
#include "util/arena.h"
#include "util/diag.h"

/* Resource limits: inputs beyond them get a diagnostic (docs/limits.md). */
enum {
	MAX_RANK = 8,           /* per-sample dimensions of a tensor */
	MAX_SPATIAL = 3,        /* conv / pool are 1-, 2- or 3-D */
	MAX_LAYERS = 1 << 20,   /* layers in one graph (a Layer is 336 bytes,
	                           a Tensor 104; docs/internals.md) */
	MAX_INPUTS = 1 << 16,   /* inputs of one layer (concat) */
};
#define MAX_DIM ((int64_t)1 << 40) /* one dimension */

typedef enum OpClass {
	OPC_CONV, OPC_FC, OPC_MATMUL, OPC_POOL, OPC_GPOOL, OPC_ADAPTPOOL,
	OPC_NORM, OPC_UNARY, OPC_SOFTMAX, OPC_BINARY, OPC_CONCAT,
	OPC_FLATTEN, OPC_RESHAPE, OPC_TRANSPOSE, OPC_PAD, OPC_OPAQUE,
	OPC_CONST, OPC_REDUCE, OPC_GATHER, OPC_SLICE, OPC_EXPAND, OPC_RESIZE,
} OpClass;

/* OpInfo.save: what a layer's backward needs kept (ops.def, passes/memory.c) */
enum {
	S_IN = 1,      /* its activation inputs */
	S_OUT = 2,     /* its output */
	S_VIEW = 4,    /* its output aliases its first input (no memory) */
	S_IDX = 8,     /* int64 indices, one per output element (max pooling) */
	S_MASK = 16,   /* a 1-byte mask, one per output element (dropout) */
	S_CSTAT = 32,  /* 2 fp32 per channel, independent of the batch (batch norm) */
	S_RSTAT = 64,  /* 2 fp32 per normalized row or instance, per sample */
	S_PIN = 128,   /* its input, when a trained operand multiplies it (scale) */
};

typedef enum OpKind {
#define OP(id, name, cls, f, bd, bw, save) id,
#include "ir/ops.def"
#undef OP
	OP_COUNT
} OpKind;

typedef struct OpInfo {
	const char *name;
	OpClass cls;
	int fwd, bwd_data, bwd_weight; /* FLOPs per element, see ops.def */
	int save;                      /* S_* flags above */
} OpInfo;

extern const OpInfo op_info[OP_COUNT];

typedef struct Shape {
	int rank;
	int64_t d[MAX_RANK];
} Shape;

typedef struct Tensor {
	const char *name;
	Shape shape;      /* per sample: frontend for graph inputs, else pass shape */
	int64_t elems;    /* product of shape; pass shape */
	int producer;     /* layer index, or -1 for a graph input */
	int root;         /* the tensor whose memory this one views; pass memory */
	bool saved;       /* kept for backward, every activation at the
	                     precision's width (KEEP_PLAIN); pass memory */
	bool output;      /* a graph output; frontend */
	bool konst;       /* made from constants only (the model's own
	                     tensors): no gradient, kept nowhere; pass memory */
	bool seq;         /* a graph input that is a sequence of tokens, its
	                     first per-sample dimension the length (ONNX:
	                     integer token ids [batch, s]; ODL: `as tokens`);
	                     frontend */
} Tensor;

/* A convolution's or pooling's window, kept apart from its layer (most
 * layers have none; a chain's convolutions share one): Attr points into
 * it. */
typedef struct Window {
	int64_t kernel[MAX_SPATIAL];  /* conv: 0 = unset */
	int64_t stride[MAX_SPATIAL];  /* 0 = default 1 (pool: kernel) */
	int64_t dilation[MAX_SPATIAL];/* 0 = default 1 */
	int64_t pad[2 * MAX_SPATIAL]; /* begins then ends */
	int64_t out_pad[MAX_SPATIAL]; /* convtranspose */
} Window;

/* Attributes.  One struct for every kind (chibicc's fat node): each kind
 * uses a few fields, the comment says which.  The window and the shapes
 * are read-only views: of zeros until a frontend sets them through
 * attr_window, attr_target and attr_pad_hi (graph.c), which give the
 * layer its own to write.  A layer made by hand starts with attr_init. */
typedef struct Attr {
	int nspatial;                 /* conv, pool: 1..3; pass shape */
	int lead;                     /* conv, pool, global pool, batchnorm,
	                                 instancenorm: dimensions before the
	                                 channels, each an independent image
	                                 (ONNX: the batch merged with frames or
	                                 windows); 0 for ODL; frontend */
	int axis;                     /* concat, softmax, flatten, gather;
	                                 layernorm: first normalized axis;
	                                 per sample */
	bool bias;                    /* conv, fc */
	bool ceil_mode;               /* pool */
	bool no_halo[2];              /* conv, pool split by rows: the model as
	                                 implemented exchanges no halo before
	                                 the forward [0] or of the output
	                                 gradient [1] (ParaDL's hand-called
	                                 exchanges; ODL halo_forward=false) */
	bool keepdims;                /* reduce: reduced axes stay, as 1 */
	/* conv, pool: the window (Window's fields) */
	const int64_t *kernel, *stride, *dilation, *pad, *out_pad;
	int64_t filters;              /* conv: output channels; fc: out features */
	int64_t groups;               /* conv; 0 = default 1 */
	const Shape *target;          /* reshape: shape (-1 allowed);
	                                 adaptiveavgpool: output size;
	                                 transpose: permutation;
	                                 pad: begins (ends in pad_hi);
	                                 unary: shape of the constant operand
	                                 (scale's bias or factor, rank 0 for a
	                                 scalar), broadcast with the input;
	                                 const, slice, resize, tile,
	                                 gatherelements: output shape;
	                                 expand: shape to broadcast to;
	                                 gather: shape of constant indices;
	                                 reduce: the reduced axes, rank 0 = all */
	const Shape *pad_hi;          /* pad: ends */
} Attr;

typedef enum WeightRole { W_WEIGHT, W_BIAS, W_SCALE, W_SHIFT } WeightRole;

typedef struct Weight {
	WeightRole role;
	Shape shape;
	int64_t elems;
} Weight;

/* Per-sample costs of one layer; pass cost unless noted. */
typedef struct Cost {
	int64_t macs;             /* conv, fc, matmul multiply-accumulates */
	int64_t flops_fwd;
	int64_t flops_bwd_data;   /* gradient w.r.t. the inputs */
	int64_t flops_bwd_weight; /* gradient w.r.t. the weights */
	int64_t flops_bwd;        /* the two added */
	int64_t params;           /* trained elements: weights, biases, scale, shift */
	int64_t buffers;          /* untrained state elements (running statistics) */
	int64_t elems_fwd;        /* elements forward reads and writes: the
	                             activations (batch norm reads its input
	                             twice) and the weights once; bytes at a
	                             precision: model/compute.c */
	int64_t elems_bwd;        /* activation elements the backward pass's
	                             kernels read and write for the layer,
	                             autograd's formulas, and the accumulation
	                             of its output's gradients; pass cost */
	int64_t act_elems;        /* elements kept for backward that this layer
	                             made, every activation at the precision's
	                             width (KEEP_PLAIN): its outputs kept, its
	                             indices, masks and per-sample statistics;
	                             pass memory (in bytes: Graph.keep) */
	/* autocast's casts (pass memory, for every graph; an analysis reads
	 * them only at a precision with autocast, ir/precision.def's low
	 * column): each a kernel reading one width and writing the other,
	 * forward, and its gradient's the other way in backward */
	int64_t cast_w;           /* trained elements of a 16-bit op, cast
	                             once an iteration (cached), in cast_wn
	                             tensors */
	int64_t cast_in;          /* activation elements per sample cast on the
	                             way in (a 16-bit op's fp32 input, an fp32
	                             op's 16-bit one), in cast_inn tensors */
	int64_t cast_grad;        /* of those, the elements whose gradient is
	                             cast back (not a graph input's), in
	                             cast_gradn tensors */
	int cast_wn, cast_inn, cast_gradn;
} Cost;

/* The fields are in an order that leaves no holes: a graph of a million
 * layers holds a million of them. */
typedef struct Layer {
	OpKind op;
	int srcidx;        /* ONNX: the node's index in the graph */
	const char *name;  /* unique in the graph */
	Loc loc;           /* the statement (ODL) or file (ONNX) that made it */
	Loc site;          /* outermost call site when made inside a block */
	const char *srcop; /* ONNX: the node's op_type; NULL for ODL */
	int *in, *out;     /* tensor indices */
	int nin, nout;
	Attr attr;
	const Weight *w;   /* nw of them; pass shape (read-only: layers with
	                      the same weights may share the array) */
	int nw;
	bool low;          /* autocast: its output is 16-bit (read only at a
	                      precision with autocast); pass memory */
	unsigned char pattern; /* an ONNX decomposition of one PyTorch
	                      operator (LayerNorm, GELU, SiLU, Hardswish):
	                      PAT_* the operator at its first layer (which
	                      reads its input), PAT_PART the rest; pass
	                      memory */
	unsigned char attn; /* its part in an attention a fused kernel
	                      (scaled_dot_product_attention) can run: ATTN_*;
	                      pass memory */
	bool folded_bn;    /* ONNX: a Conv whose weights the exporter made by
	                      folding a BatchNormalization in; frontend */
	bool timed;        /* measured: Graph.measured replaces the roofline;
	                      pass timing_spread */
	uint16_t fuse;     /* its part in a pattern a stack may run as one
	                      kernel (FUSE_* bits; the implementation says
	                      which it fuses, model/compute.c); pass memory */
	int64_t fparams;   /* ONNX: elements of the file's trained tensors
	                      (float initializers) this layer is the first
	                      to read, counted as its params instead of w;
	                      -1 (ODL): the weights w count; frontend */
	int64_t fbuffers;  /* ONNX: elements of the file's untrained float
	                      tensors (buffers: a causal mask, rotary
	                      inv_freq; docs/counting.md) this layer is the
	                      first to read, added to its buffers; frontend */
	Cost cost;
} Layer;

/* Layer.pattern: the operator a decomposition spells, at its first layer,
 * and the layers that are its parts. */
enum { PAT_NONE, PAT_LAYERNORM, PAT_GELU, PAT_GATED, PAT_PART };

/* Layer.fuse: a batch norm whose one reader is a ReLU, and that ReLU; a
 * batch norm whose one reader is a residual add (its first input such)
 * whose one reader is a ReLU, that add and that ReLU; a convolution
 * whose one reader is a batch norm, and that batch norm; such a batch
 * norm whose ReLU's readers are all convolutions, and that ReLU (the next
 * convolution can apply the norm and the ReLU as it reads its input). */
enum {
	FUSE_BN_RELU = 1, FUSE_RELU_OF_BN = 2, FUSE_BN_ADD = 4, FUSE_ADD_OF_BN = 8,
	FUSE_RELU_OF_ADD = 16, FUSE_CONV_BN = 32, FUSE_BN_OF_CONV = 64, FUSE_BN_INTO_CONV = 128,
	FUSE_RELU_INTO_CONV = 256
};

/* Layer.attn: the product QK^T, the layers between it and the product
 * with V (scaling, softmax, dropout, casts), the product with V. */
enum { ATTN_NONE, ATTN_QK, ATTN_CORE, ATTN_PV };

/* A measured time: the seconds per sample that layers [first, last] took
 * together on the profiled GPU.  Frontends fill it from a ParaDL table's
 * time column (one row, or a row and the rows after it that give 0) and
 * from --profile (one layer each); model/compute.c shares a span's time
 * out over its layers. */
typedef struct Timing {
	int first, last;      /* layer indices, first <= last */
	double fwd, bwd;      /* seconds per sample */
	bool split;           /* fwd and bwd were measured apart; false: only
	                         their total was, and fwd:bwd is taken as 1:2 */
	Loc loc;              /* where the time was given */
} Timing;

/* Whole-model sums; pass cost, but workspace and cast_weights pass
 * memory.  Elements all: bytes at a precision are the analysis's
 * (model/memuse.c). */
typedef struct Totals {
	int64_t params, buffers, macs, flops_fwd, flops_bwd_data, flops_bwd_weight;
	int64_t flops_bwd;             /* flops_bwd_data + flops_bwd_weight */
	int64_t elems_fwd, elems_bwd;
	int64_t workspace;             /* per sample: elements of the largest
	                                  convolution's im2col buffer (cuDNN's
	                                  GEMM algorithm), at the width the
	                                  convolution computes in */
	int64_t cast_weights;          /* autocast: elements of the convolution
	                                  and linear weights it caches 16-bit
	                                  copies of for the step */
} Totals;

/* What training keeps of one layer for backward, per sample, under one
 * regime of KeepRegime: wide elements at the precision's bytes per
 * element, narrow ones at autocast's low width, and fixed bytes
 * (kept_bytes, ir/precision.c).  pass memory. */
typedef struct Kept {
	int64_t wide;     /* elements at the precision's width: every kept
	                     activation (plain), the fp32 ones (autocast) */
	int64_t narrow;   /* autocast: elements at its low width, its 16-bit
	                     activations and a lowering op's cast copies; 0
	                     under the plain regime */
	int64_t fixed;    /* bytes whose width what is stored fixes, the same
	                     at every precision: int64 indices (8 bytes an
	                     element), 1-byte masks, fp32 statistics and a
	                     widening op's fp32 cast copies (4) */
} Kept;

/* The two ways training keeps activations, both counted for every graph:
 * every activation at the precision's width, or as torch.autocast runs
 * (some 16-bit, casts saved: ir/precision.def's low column). */
typedef enum KeepRegime { KEEP_PLAIN, KEEP_AUTOCAST, KEEP_REGIMES } KeepRegime;

/* One count of what training keeps for backward, per sample; pass
 * memory. */
typedef struct Keeps {
	Kept *layer;          /* each layer's (nlayer); NULL: not counted */
	Kept layers;          /* their sum: autograd's figure (graph inputs
	                         excluded) */
	int64_t input;        /* elements of the graph inputs kept, at the
	                         precision's width (autocast keeps them as
	                         given) */
	int64_t saved_fixed;  /* bytes saved whatever the batch: batch norm's
	                         per-channel mean and inverse std, fp32 */
} Keeps;

enum { PASS_SHAPE = 1, PASS_COST = 2, PASS_MEMORY = 4, PASS_TIMING = 8 }; /* Graph.done */

/* An operator the frontend had no rule for, and how many nodes used it. */
typedef struct OpCount {
	const char *op;
	int count;
} OpCount;

typedef struct Graph {
	Arena *arena;
	const char *name;     /* model name */
	const char *source;   /* the file as the user named it */
	const char *format;   /* "odl", "onnx", "paradl" */
	Loc loc;              /* where the model was declared */
	Layer *layer;
	int nlayer, caplayer;
	Tensor *tensor;
	int ntensor, captensor;
	int *input, ninput;   /* graph input tensors */
	int64_t dataset_size; /* samples per epoch; 0 = not given */
	int64_t seq_len;      /* a sequence model's tokens per sample: the
	                         length of its sequence input (Tensor.seq);
	                         0 = not a sequence model; frontend */
	int64_t batch;        /* ONNX: the batch the file fixes; 0 = symbolic or ODL */
	OpCount *unknown;     /* ONNX: unsupported operators kept as opaque layers */
	int nunknown;
	bool bn_folded;       /* ONNX: BatchNormalization looks folded into Conv */
	bool as_exported;     /* --as-exported: keep the file's graph as it is */
	bool conv_bias;       /* --conv-bias: a folded convolution had its own
	                         bias before the batch norm (training keeps it) */
	const char *dropout_after; /* --dropout: comma-separated layer names after
	                         which the export removed a dropout; NULL none */
	int bn_restored;      /* batchnorm layers put back; pass training */
	int merged_inits;     /* ONNX: initializers of equal elements read by
	                         several modules, counted once per module (the
	                         exporter's merges) */
	int64_t merged_params; /* the parameters that added */
	Timing *timing;       /* measured times in the order given; a later one
	                         wins for a layer two cover; frontend, --profile */
	int ntiming;
	struct TraceProfile *trace; /* --profile with a profiler's trace: each
	                         module's times (ir/trace.h); frontend */
	/* each timed layer's (Layer.timed) measured seconds per sample,
	 * forward [0] and backward [1], at each precision: a span's time
	 * shared out over its layers by their rooflines there
	 * (layer_measured); 0 at a precision the system has no peak for,
	 * NULL where no layer is timed; pass timing */
	double (*measured)[PREC_COUNT][2];
	Totals total;
	/* what training keeps for backward under each regime (KeepRegime):
	 * keep[0][] as autograd keeps each operator's tensors, keep[1][]
	 * where a fused kernel runs the attentions (Layer.attn; layer NULL
	 * and all zero for a graph without one); pass memory */
	Keeps keep[2][KEEP_REGIMES];
	unsigned done;        /* PASS_* bits of the passes that ran */
	uint64_t version;     /* new for every graph and after every pass that
	                         ran on it (graph_touch): what model/reuse.c
	                         keeps of its figures is keyed by it */
} Graph;

/* graph.c */
Graph *graph_new(Arena *a, const char *name, const char *source, const char *format);
int graph_add_tensor(Graph *g, const char *name, int producer);
int graph_add_input(Graph *g, const char *name, const Shape *s);
int graph_add_layer(Graph *g, OpKind op, const char *name, Loc loc);
/* Gives g a version no graph had: after a pass (or a test) changed what
 * its layers cost. */
void graph_touch(Graph *g);
/* A layer's attributes as a new one has them: no window, empty shapes. */
void attr_init(Attr *a);
/* The layer's own window (or target, pad_hi) to write, holding what a had
 * (a new copy in g's arena each call: a frontend takes it once a layer);
 * a's view now reads it. */
Window *attr_window(Graph *g, Attr *a);
Shape *attr_target(Graph *g, Attr *a);
Shape *attr_pad_hi(Graph *g, Attr *a);
/* a's window read from w (which must outlive the graph, or be copied by
 * attr_window first). */
void attr_view(Attr *a, const Window *w);
/* The window a reads (of zeros where it has none). */
const Window *attr_window_of(const Attr *a);
/* The weights w[0..n) kept in g's arena, shared with a layer made just
 * before that has the same ones. */
const Weight *graph_weights(Graph *g, const Weight *w, int n);
/* Each tensor's last reader into last[0..ntensor): a layer index, nlayer
 * for a graph output, -1 for a tensor no layer reads. */
void graph_last_use(const Graph *g, int *last);
/* The attentions in g: softmax layers over the product of two activations
 * (reached back through element-wise layers: a scaling, a mask added), as
 * a transformer's self-attention computes softmax(QK^T/sqrt(d)).
 * Megatron's plan needs one.  With core (nlayer flags), marks each
 * attention's core: the product QK^T, the layers to the softmax, the
 * softmax, and the element-wise layers after it (dropout) up to the
 * product with V -- what selective recomputation recomputes. */
int graph_attention(const Graph *g, bool *core);
/* Those a fused kernel can run (PyTorch's scaled_dot_product_attention:
 * no trained term, such as Swin's relative-position bias, added to the
 * product before the softmax), each layer's part (ATTN_*) into attn
 * (nlayer); how many. */
int graph_fusable_attention(const Graph *g, unsigned char *attn);
/* The attentions of graph_attention in layer order, each one's product
 * QK^T into at[k][0] and its product with V into at[k][1] (-1 where none
 * follows the softmax); at has room for one per softmax layer.  How
 * many. */
int graph_attention_parts(const Graph *g, int (*at)[2]);
/* Layer l's trained elements but a conv's or fc's bias: the weight
 * tensor C x F x K x K (all of them for any other kind). */
int64_t layer_kernel_params(const Layer *l);
void layer_set_inputs(Graph *g, int l, const int *in, int nin);
int layer_add_output(Graph *g, int l, const char *tensor_name);
int op_lookup(const char *name); /* -1 if unknown */
const char *op_name(OpKind op);
void layer_error(const Graph *g, const Layer *l, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* transformer.c: a transformer's dimensions as Megatron-LM names them
 * (its --num-layers, --hidden-size, ...), read from the graph's layers
 * (docs/model.md, "Transformers"); PASS_MEMORY done (the patterns). */
typedef struct Transformer {
	int layers;           /* l: the attentions */
	int64_t heads;        /* a: query heads (the QK product's per-sample
	                         elements over its s x s) */
	int64_t head_dim;     /* d: the QK product's contracted dimension */
	int64_t hidden;       /* h = a d */
	int64_t kv_groups;    /* key and value heads (the K projection's
	                         width over d); a without grouped queries */
	int64_t ffn;          /* the MLP's width: its first fc's output */
	int64_t vocab;        /* V: the embedding table's rows, else the last
	                         fc's output; 0 when neither */
	int64_t seq;          /* s: Graph.seq_len, else the QK product's rows */
	int64_t positions;    /* the learned position table's rows, else s */
	bool rmsnorm;         /* RMSNorm, not LayerNorm */
	bool swiglu;          /* a gated MLP: two fc of its width, one gated */
	bool rope;            /* rotary positions (rotate_half: neg, concat) */
	bool learned;         /* a learned position table */
	bool untied;          /* the output layer has its own weights beside an
	                         embedding table */
	int output;           /* the output layer (the last fc), -1: none */
	int table;            /* the embedding table (a trained constant read
	                         by a gather), -1: none */
	const int (*parts)[2]; /* the attentions' products QK^T and with V,
	                         layer order (graph_attention_parts; layers
	                         of them; in the graph's arena) */
} Transformer;
/* False (t zeroed) for a model without attention. */
bool graph_transformer(const Graph *g, Transformer *t);
/* The standard FLOPs of one sample's forward and backward (Narayanan et
 * al., SC'21, eq. 3, as Megatron-LM counts them with grouped queries and
 * gated MLPs; docs/model.md, "Transformers"), and what recomputation
 * adds: TF_REDO_FULL every layer's forward again, TF_REDO_CORE the
 * attention cores' (selective); 0 for t->layers 0. */
enum { TF_REDO_NONE, TF_REDO_FULL, TF_REDO_CORE };
double transformer_flops(const Transformer *t, int redo);

/* dims.c: shape helpers */
bool shape_elems(const Shape *s, int64_t *out); /* false on overflow */
char *shape_str(const Shape *s, char *buf, size_t n); /* "3x224x224" */
bool shape_eq(const Shape *a, const Shape *b);

/* infer.c: one layer's output and weight shapes from its inputs'.  Skips
 * (false, silently) a layer reading a tensor marked in `bad` (may be NULL);
 * reports and returns false when the shapes do not fit. */
bool layer_infer(Graph *g, int l, const bool *bad);

/* verify.c */
int ir_verify(const Graph *g); /* number of broken invariants, each reported */

/* print.c */
void ir_print(const Graph *g, FILE *f);

#endif
