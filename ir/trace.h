/* trace.h -- a profiler's trace given to --profile: the time each module
 * of the model took per step, forward and backward.  frontend/trace.c
 * reads it from the Chrome trace `python3 -m oraclec.launch --trace`
 * writes (docs/plans.md, "--trace"); passes/trace.c gives each module's
 * time to the layers the module made (docs/model.md, "Measured layer
 * times"). */
#ifndef ORACLEC_IR_TRACE_H
#define ORACLEC_IR_TRACE_H

#include <stdbool.h>
#include <stdint.h>

/* One module: the seconds per step of the operators it ran itself (those
 * whose innermost module range it is), and of the backward operators of
 * their autograd nodes. */
typedef struct ModTime {
	const char *module;   /* its path in the model: "layer1.0.conv1" */
	double fwd, bwd;      /* seconds per step */
	int calls;            /* its ranges (calls) in the trace */
	bool timed;           /* an operator of the steps is its */
} ModTime;

typedef struct TraceProfile {
	const char *file;     /* the trace as --profile named it */
	const char *model;    /* what ran ("torchvision:resnet18"); "" unknown */
	const char *device;   /* "cpu", "cuda:0"; "" unknown */
	int rank;
	bool device_time;     /* the operators' device kernels' time (a GPU's
	                         trace), else their wall time (the CPU's) */
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
