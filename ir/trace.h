/* trace.h -- a profiler's trace given to --profile: the time each module
 * of the model took per step, forward and backward.  frontend/trace.c
 * reads it from the Chrome trace `python3 -m oraclec.launch --trace`
 * writes (docs/plans.md, "--trace"), or from a plain torch.profiler trace
 * of the user's own script, whose operators it keys by kind and order
 * (docs/model.md, "A trace of the run"); passes/trace.c gives each
 * module's time to the layers the module made (docs/model.md, "Measured
 * layer times"). */
#ifndef ORACLEC_IR_TRACE_H
#define ORACLEC_IR_TRACE_H

#include <stdbool.h>
#include <stdint.h>

/* One module: the seconds per step of the operators it ran itself (those
 * whose innermost module range it is), and of the backward operators of
 * their autograd nodes. */
typedef struct ModTime {
	const char *module;   /* its path in the model: "layer1.0.conv1"; a
	                         plain trace's entry: its kind and ordinal,
	                         "conv #3" */
	double fwd, bwd;      /* seconds per step */
	int calls;            /* its ranges (calls) in the trace */
	bool timed;           /* an operator of the steps is its */
	int next;             /* the module called first after it under the
	                         same parent (layer1.0.conv1: layer1.0.bn1),
	                         whose time a batch norm the export folded
	                         into this one's convolution takes; -1 none */
	int op, ordinal;      /* a plain trace's entry (no module ranges):
	                         the ordinal-th forward operator of kind op
	                         (ops.def; its group, passes/tracematch.c) in
	                         a step, with its backward; op -1: a module */
} ModTime;

typedef struct TraceProfile {
	const char *file;     /* the trace as --profile named it */
	const char *model;    /* what ran ("torchvision:resnet18"); "" unknown */
	const char *device;   /* "cpu", "cuda:0"; "" unknown */
	int rank;
	bool device_time;     /* the operators' device kernels' time (a GPU's
	                         trace), else their wall time (the CPU's) */
	bool plain;           /* a plain torch.profiler trace: its entries
	                         are operators by kind and order, not modules */
	int steps;            /* the traced steps */
	int64_t batch;        /* samples each module took per step; 0: the
	                         trace does not say */
	ModTime *mod;         /* in order of first appearance */
	int nmod;
	/* passes/trace.c: what it gave the layers, said once */
	int matched;          /* layers given a module's time */
	bool reported;
} TraceProfile;

#endif
