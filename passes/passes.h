/* passes.h -- the passes that annotate the layer IR: shape, the training
 * graph, cost, memory, recomputation's segments, the modules behind the
 * layers and the times a profiler's trace gives them.  Each pass is one file
 * with one entry point; it states what it requires and provides (Graph.done
 * bits) and fills IR fields, never prints a report and never prices
 * anything (model/ does).  Input errors are reported through diag; the
 * return value is false when there were any.  The passes run through
 * plan/analysis.h's runner, which checks those bits, in the order of its
 * table. */
#ifndef ORACLEC_PASSES_PASSES_H
#define ORACLEC_PASSES_PASSES_H

#include "ir/ir.h"

/* shape.c
 * requires: a Graph in topological order with graph input shapes.
 * provides: PASS_SHAPE -- every tensor's per-sample shape and element
 *           count, Attr.nspatial, every layer's weight shapes (Layer.w). */
/* training.c: puts back the BatchNormalization an eval-mode export
 * folded into its convolutions (unless Graph.as_exported). */
bool training_graph(Graph *g);

bool shape_infer(Graph *g);

/* cost.c
 * requires: PASS_SHAPE.
 * provides: PASS_COST -- Layer.cost except act_elems (MACs, FLOPs forward,
 *           backward-data and backward-weight, params, buffers, bytes) and
 *           the model totals.  Rules per op kind: docs/counting.md. */
bool cost_annotate(Graph *g);

/* memory.c
 * requires: PASS_SHAPE.
 * provides: PASS_MEMORY -- Tensor.root, Tensor.saved, Layer.cost.act_elems
 *           and act_bytes, Totals.act_elems, act_bytes, saved_bytes and
 *           saved_fixed_bytes: what training keeps from the forward pass
 *           for the backward pass, as PyTorch's autograd saves it.  Rules
 *           per op kind: ir/ops.def, docs/counting.md. */
bool memory_annotate(Graph *g);


/* recompute.c: the segments of k layers (k = 0: the k that keeps least)
 * of g (PASS_MEMORY done) into r. */
bool recompute_plan(const Graph *g, int k, Recompute *r);
/* Selective recomputation (Korthikanti et al., MLSys'23): every
 * attention's core (graph_attention) recomputed, the rest kept. */
void recompute_selective(const Graph *g, Recompute *r);


/* modules.c
 * requires: layer names: ONNX as PyTorch's exporter writes them
 *           ("/layer2/layer2.0/conv1/Conv"), ODL as the frontend makes them
 *           ("layer1/y/conv1").
 * provides: each layer's module (fully-qualified name), the units a
 *           pipeline may be cut between, and whether the model is a stack
 *           of alike blocks (Megatron's layout).  docs/plans.md. */
typedef struct ModUnit {
	const char *name;  /* module FQN ("layer2.0"); root code: the layer's name */
	int first, last;   /* its layers */
	bool module;       /* a module's call (false: code of the root forward) */
	bool cut;          /* a pipeline stage may begin here */
	bool block;        /* an element of a repeated container ("layer2.0") */
	char role;         /* stack: 'E' before the blocks, 't' a block, 'L' after */
} ModUnit;

typedef struct Modules {
	const char *names;      /* "pytorch-scopes" or "layer-names" */
	const char **fqn;       /* per layer; "" for code of the root forward */
	int *unit_of;           /* per layer: its unit */
	ModUnit *unit;
	int nunit;
	bool *cut_after;        /* per layer: a stage may end after it */
	bool stack;             /* pre units, blocks alike in one container, post units */
	const char *stack_why;  /* why not */
	void *priv;             /* modules.c's own: each module's span of layers */
} Modules;
void modules_derive(const Graph *g, Modules *m);

/* trace.c
 * requires: PASS_COST; Graph.trace (none: nothing to do); the measured
 *           times of timing_spread (model/compute.c), which it overrides.
 * provides: Layer.timed, fwd_s and bwd_s of every layer whose module (as
 *           modules_derive names it) the trace timed: the module's seconds
 *           per step, shared over its layers by FLOPs and bytes at s's peak
 *           and bandwidth, per sample of the trace's batch (`samples`
 *           where the trace does not say); TraceProfile.matched; says once
 *           on the diagnostics stream how many layers it timed. */
bool trace_times(Graph *g, const System *s, int64_t samples);

/* The largest modules whose layers all lie in [first, last], in order of
 * their first layer; returns how many, the names in *out (arena). */
int modules_within(const Graph *g, const Modules *m, int first, int last, const char ***out);


#endif
