/* ir.h -- the layer IR: Graph, Layer, Tensor, Shape.
 *
 * A Graph is a DAG of layers kept in topological order (a layer only reads
 * tensors made by earlier layers or graph inputs).  Objects refer to each
 * other by int index into the Graph's arrays, never by pointer.  Shapes are
 * per sample: the batch dimension is symbolic and never stored.
 *
 * Who fills what: the frontend makes tensors, layers, attributes and the
 * input shapes; passes/ fill everything marked "pass" below; backends only
 * read.  Everything lives in the Graph's arena. */
#ifndef ORACLEC_IR_IR_H
#define ORACLEC_IR_IR_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "util/arena.h"
#include "util/diag.h"

/* Resource limits: inputs beyond them get a diagnostic (docs/limits.md). */
enum {
	MAX_RANK = 8,           /* per-sample dimensions of a tensor */
	MAX_SPATIAL = 3,        /* conv / pool are 1-, 2- or 3-D */
	MAX_LAYERS = 1 << 20,   /* layers in one graph (about 1 KB each) */
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
	bool saved;       /* kept for backward; pass memory */
	bool output;      /* a graph output; frontend */
} Tensor;

/* Attributes.  One struct for every kind (chibicc's fat node): each kind
 * uses a few fields, the comment says which. */
typedef struct Attr {
	int nspatial;                 /* conv, pool: 1..3; pass shape */
	int lead;                     /* conv, pool, global pool, batchnorm,
	                                 instancenorm: dimensions before the
	                                 channels, each an independent image
	                                 (ONNX: the batch merged with frames or
	                                 windows); 0 for ODL; frontend */
	int64_t kernel[MAX_SPATIAL];  /* conv, pool; conv: 0 = unset */
	int64_t stride[MAX_SPATIAL];  /* conv, pool; 0 = default 1 (pool: kernel) */
	int64_t dilation[MAX_SPATIAL];/* conv, pool; 0 = default 1 */
	int64_t pad[2 * MAX_SPATIAL]; /* conv, pool: begins then ends */
	int64_t out_pad[MAX_SPATIAL]; /* convtranspose */
	int64_t filters;              /* conv: output channels; fc: out features */
	int64_t groups;               /* conv; 0 = default 1 */
	bool bias;                    /* conv, fc */
	bool ceil_mode;               /* pool */
	bool keepdims;                /* reduce: reduced axes stay, as 1 */
	int axis;                     /* concat, softmax, flatten, gather;
	                                 layernorm: first normalized axis;
	                                 per sample */
	Shape target;                 /* reshape: shape (-1 allowed);
	                                 adaptiveavgpool: output size;
	                                 transpose: permutation;
	                                 pad: begins (ends in pad_hi);
	                                 unary: shape of the constant operand
	                                 (scale's bias or factor, rank 0 for a
	                                 scalar), broadcast with the input;
	                                 const, slice, resize: output shape;
	                                 expand: shape to broadcast to;
	                                 gather: shape of constant indices;
	                                 reduce: the reduced axes, rank 0 = all */
	Shape pad_hi;                 /* pad: ends */
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
	int64_t bytes_fwd;        /* activation bytes read + written in forward */
	int64_t act_elems;        /* elements kept for backward that this layer
	                             made: its outputs kept, its indices, masks
	                             and per-sample statistics; pass memory */
	int64_t act_bytes;        /* the same in bytes (activations at
	                             Graph.elem_bytes, indices 8, masks 1,
	                             statistics 4); pass memory */
} Cost;

typedef struct Layer {
	OpKind op;
	const char *name;  /* unique in the graph */
	Loc loc;           /* the statement (ODL) or file (ONNX) that made it */
	Loc site;          /* outermost call site when made inside a block */
	const char *srcop; /* ONNX: the node's op_type; NULL for ODL */
	int srcidx;        /* ONNX: the node's index in the graph */
	int *in, nin;      /* tensor indices */
	int *out, nout;
	Attr attr;
	Weight w[4];       /* pass shape */
	int nw;
	int64_t fparams;   /* ONNX: elements of the file's trained tensors
	                      (float initializers) this layer is the first
	                      to read, counted as its params instead of w;
	                      -1 (ODL): the weights w count; frontend */
	Cost cost;
	bool timed;        /* measured: fwd_s and bwd_s replace the roofline;
	                      pass timing_spread */
	double fwd_s, bwd_s; /* measured seconds per sample, forward and
	                      backward; pass timing_spread */
} Layer;

/* A measured time: the seconds per sample that layers [first, last] took
 * together on the profiled GPU.  Frontends fill it from a ParaDL table's
 * time column (one row, or a row and the rows after it that give 0) and
 * from --profile (one layer each); passes/compute.c shares a span's time
 * out over its layers. */
typedef struct Timing {
	int first, last;      /* layer indices, first <= last */
	double fwd, bwd;      /* seconds per sample */
	bool split;           /* fwd and bwd were measured apart; false: only
	                         their total was, and fwd:bwd is taken as 1:2 */
	Loc loc;              /* where the time was given */
} Timing;

/* Whole-model sums; pass cost, act_* pass memory. */
typedef struct Totals {
	int64_t params, buffers, macs, flops_fwd, flops_bwd_data, flops_bwd_weight;
	int64_t flops_bwd;             /* flops_bwd_data + flops_bwd_weight */
	int64_t bytes_fwd;
	int64_t act_elems, act_bytes;  /* kept for backward, per sample: the
	                                  layers' act_* plus the graph inputs
	                                  kept (at Graph.elem_bytes) */
	int64_t saved_bytes;           /* what autograd saves per sample, fp32
	                                  activations, graph inputs excluded */
	int64_t saved_fixed_bytes;     /* saved whatever the batch: batch norm's
	                                  per-channel mean and inverse std */
	int64_t weight_bytes;
} Totals;

enum { PASS_SHAPE = 1, PASS_COST = 2, PASS_MEMORY = 4 }; /* Graph.done */

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
	int elem_bytes;       /* bytes per activation/weight item (precision) */
	int64_t batch;        /* ONNX: the batch the file fixes; 0 = symbolic or ODL */
	OpCount *unknown;     /* ONNX: unsupported operators kept as opaque layers */
	int nunknown;
	bool bn_folded;       /* ONNX: BatchNormalization looks folded into Conv */
	Timing *timing;       /* measured times in the order given; a later one
	                         wins for a layer two cover; frontend, --profile */
	int ntiming;
	Totals total;
	unsigned done;        /* PASS_* bits of the passes that ran */
} Graph;

/* ---- the cluster -------------------------------------------------------- */

enum { MAX_LEVELS = 4 };

typedef enum Precision { PREC_FP32, PREC_FP16, PREC_BF16, PREC_COUNT } Precision;

/* One level of the network above the nodes, from the leaf switches up.
 * Level 0 groups `fanout` nodes under a leaf switch; level i groups
 * `fanout` groups of level i-1.  The top level's fanout may be 0: as many
 * as needed. */
typedef struct NetLevel {
	const char *name;
	int64_t fanout;
	double latency;   /* seconds added per crossing of this level's switch */
	double oversub;   /* over-subscription of the links above this level
	                     (3 = 1:3); 1 = full bisection */
} NetLevel;

/* A cluster: GPUs in nodes, nodes in a switched network.  Every figure is
 * in SI base units (bytes, seconds, bytes/s, FLOP/s).  Built-in systems and
 * user files are written in ODL (`system NAME { ... }`, docs/systems.md);
 * each built-in states the source of every constant. */
typedef struct System {
	const char *name;
	const char *source;       /* "built-in" or the file */
	const char *gpu;          /* the GPU's name, for reports */
	double peak[PREC_COUNT];  /* FLOP/s per precision; 0 = not supported */
	double mem;               /* GPU memory, bytes */
	double mem_bw;            /* GPU memory bandwidth, bytes/s */
	int gpus_per_node;
	const char *intra;        /* "nvlink", "nvswitch", "pcie": the link in a node */
	double intra_bw;          /* bytes/s per GPU inside a node */
	double intra_lat;         /* start-up latency of a message inside a node */
	double nic_bw;            /* bytes/s a node injects into the network */
	double nic_lat;           /* start-up latency of a message between nodes */
	double p2p_lat;           /* latency of the framework's point-to-point
	                             sends (halo, pipeline) */
	bool tree;                /* collectives may use trees (NCCL >= 2.4) */
	NetLevel level[MAX_LEVELS];
	int nlevels;
	double storage_bw;        /* training-data read bandwidth per node */
	int cpu_cores;            /* per node, for decoding input samples */
	double decode_bw;         /* compressed input bytes one core decodes per s */
	double eff_conv;          /* fraction of peak convolutions reach */
	double eff_gemm;          /* fraction of peak matrix products reach */
	double eff_mem;           /* fraction of mem_bw element-wise kernels reach */
	double kernel_lat;        /* GPU time per kernel beyond its work */
	double dispatch;          /* CPU time the framework spends per layer call */
	double reserved;          /* memory the runtime keeps (context, allocator) */
} System;

/* The ranges a System's constants lie in (frontend/system.c and paradl.c
 * refuse others, calibrate.c keeps its fit inside; docs/limits.md,
 * "Numbers"): rates in FLOP/s or bytes/s, times in seconds (0 is allowed
 * too), efficiencies, over-subscription. */
#define SYS_MIN_RATE 1.0
#define SYS_MAX_RATE 1e21
#define SYS_MIN_SECONDS 1e-12
#define SYS_MAX_SECONDS 1e3
#define SYS_MIN_EFF 1e-6
#define SYS_MAX_OVERSUB 1e6

/* ---- the analysis: strategies over GPUs ---------------------------------- */

typedef enum StrategyKind {
	STRAT_DATA, STRAT_SPATIAL, STRAT_PIPELINE, STRAT_FILTER, STRAT_CHANNEL,
	STRAT_DF, STRAT_DS, STRAT_COUNT
} StrategyKind;

/* The dimensions of a process grid. */
typedef enum GridDim { DIM_DATA, DIM_SPATIAL, DIM_PIPELINE, DIM_FILTER, DIM_CHANNEL,
		       DIM_COUNT } GridDim;

typedef enum Optimizer { OPT_SGD, OPT_MOMENTUM, OPT_ADAM } Optimizer;

/* Time of one training iteration, seconds, by part. */
typedef struct IterTime {
	double compute;     /* forward + backward on the slowest GPU (pipeline:
	                       the useful steps only) */
	double bubble;      /* pipeline fill and drain */
	double grad;        /* gradient all-reduce across data replicas */
	double layer;       /* per-layer collectives (filter, channel, spatial gather) */
	double p2p;         /* halo exchange, pipeline sends */
	double update;      /* optimizer step */
	double input;       /* reading and decoding the node's samples (overlapped) */
	double communication; /* grad + layer + p2p */
	double total;       /* max(input, everything else added) */
} IterTime;

/* Memory per GPU, bytes, by part. */
typedef struct MemUse {
	double weights, grads, optimizer, activations, buffers, total;
} MemUse;

typedef struct Candidate {
	StrategyKind kind;
	bool analysed;            /* asked for (--strategies) */
	int64_t grid[DIM_COUNT];  /* 0 = dimension not used */
	bool computable;          /* times and memory were predicted */
	bool feasible;            /* within its limits and GPU memory */
	const char *reason;       /* why not feasible */
	const char *bottleneck;   /* the limiting factor, in the paper's terms */
	int64_t max_gpus;         /* the strategy's scaling limit for this model */
	int64_t global_batch;
	double per_gpu_batch;     /* samples a GPU works on per iteration */
	int64_t micro_batches;    /* pipeline */
	int *stage_end;           /* pipeline: last layer index of each stage */
	int stages;
	int split;                /* spatial: last spatially split layer */
	IterTime t;
	double epoch;             /* seconds per epoch */
	MemUse mem;
} Candidate;

typedef struct Analysis {
	const System *sys;
	Precision prec;
	Optimizer opt;
	int64_t gpus;
	int64_t batch_per_gpu;    /* weak scaling; 0 when the global batch is fixed */
	int64_t global_batch;     /* strong scaling; 0 when weak */
	int64_t dataset_size;
	double sample_bytes;      /* stored bytes of one training sample */
	bool decode;              /* samples are compressed images to decode */
	Candidate cand[STRAT_COUNT];
	int best;                 /* index into cand, -1 when none is feasible */
	double runner_up_ratio;   /* second best / best epoch time */
	struct Analysis *sweep;   /* --sweep: the same analysis on 1, 2, 4, ...
	                             GPUs up to gpus (and gpus itself); main.c */
	int nsweep;
} Analysis;

/* One measured run (oraclec validate), and what oraclec predicts for it. */
typedef struct Measured {
	Loc loc;                  /* its line in the CSV */
	const char *model;        /* model name: MODELS/<model>.odl or .onnx */
	StrategyKind kind;
	int64_t grid[DIM_COUNT];
	const char *grid_text;
	int64_t gpus, global_batch, dataset_size;
	double measured;          /* seconds per iteration */
	double paradl;            /* ParaDL's projection; NAN when absent */
	double predicted;         /* oraclec; NAN when it could not predict */
	const char *note;         /* why not, or the limiting factor */
	double acc, acc_paradl;   /* 1 - |p - m| / m; NAN when no prediction */
} Measured;

/* Mean accuracies over a set of rows (pass validate). */
typedef struct Accuracy {
	int n, n_paradl;
	double oraclec, paradl;   /* means; NAN when n (n_paradl) is 0 */
} Accuracy;

typedef struct Validation {
	Measured *row;
	int nrow;
	Accuracy per[STRAT_COUNT];
	Accuracy all;
} Validation;

extern const char *const strategy_name[STRAT_COUNT];
extern const char *const grid_dim_name[DIM_COUNT];

/* system.c */
const char *precision_name(Precision p);
/* The lowest network level spanning `nodes` consecutive nodes (-1: one node). */
int system_span(const System *s, int64_t nodes);

/* graph.c */
Graph *graph_new(Arena *a, const char *name, const char *source, const char *format);
int graph_add_tensor(Graph *g, const char *name, int producer);
int graph_add_input(Graph *g, const char *name, const Shape *s);
int graph_add_layer(Graph *g, OpKind op, const char *name, Loc loc);
void layer_set_inputs(Graph *g, int l, const int *in, int nin);
int layer_add_output(Graph *g, int l, const char *tensor_name);
int op_lookup(const char *name); /* -1 if unknown */
const char *op_name(OpKind op);
void layer_error(const Graph *g, const Layer *l, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

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
