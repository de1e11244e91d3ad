/* passes.h -- analysis passes over the layer IR.  Each pass is one file
 * with one entry point; it states what it requires and provides (Graph.done
 * bits) and fills IR fields, never prints a report.  Input errors are
 * reported through diag; the return value is false when there were any. */
#ifndef ORACLEC_PASSES_PASSES_H
#define ORACLEC_PASSES_PASSES_H

#include "ir/ir.h"

/* shape.c
 * requires: a Graph in topological order with graph input shapes.
 * provides: PASS_SHAPE -- every tensor's per-sample shape and element
 *           count, Attr.nspatial, every layer's weight shapes (Layer.w). */
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
 *           and Totals.act_elems / act_bytes: what training keeps from the
 *           forward pass for the backward pass, per sample. */
bool memory_annotate(Graph *g);

/* compute.c
 * requires: PASS_COST, the system and precision of the analysis.
 * provides: Layer.timed, fwd_s and bwd_s from Graph.timing: a span's
 *           measured time shared out over its layers in proportion to their
 *           roofline estimates (so one time for the whole network keeps the
 *           estimate's shape); a later timing wins for a layer two cover.
 *           Without timings every layer is left to the roofline. */
bool timing_spread(Graph *g, const System *s, Precision prec);

/* strategy.c
 * requires: PASS_COST, PASS_MEMORY, and an Analysis with its system,
 *           precision, optimizer, GPU count, batch and dataset set.
 * provides: Analysis.cand (every strategy: grid, times, memory, limits,
 *           bottleneck), Analysis.best. */
enum { SPLIT_AUTO, SPLIT_ALL };
typedef struct StrategyOpts {
	unsigned mask;       /* 1 << StrategyKind of the strategies to analyse */
	int spatial_split;   /* SPLIT_AUTO: the best split point; SPLIT_ALL: every
	                        layer with spatial extent (ParaDL's .lc masks) */
	bool paper;          /* --cost-model paper */
	bool forced;         /* --grid: only `kind` on exactly `grid` */
	StrategyKind kind;
	int64_t grid[DIM_COUNT];
} StrategyOpts;
bool strategies_run(const Graph *g, Analysis *an, const StrategyOpts *o);

/* strategy.c: one strategy on one given grid (validation, --grid); the
 * grid's dimensions must be those of the strategy (data for df and ds). */
bool strategy_predict(const Graph *g, Analysis *an, const StrategyOpts *o, StrategyKind kind,
		      const int64_t grid[DIM_COUNT], Candidate *k);

/* validate.c
 * requires: Validation.row[].measured, .predicted, .paradl.
 * provides: every row's accuracies and the means per strategy and overall. */
void validation_score(Validation *v);

/* pipeline.c: the pipeline strategy over S stages (used by strategy.c) */
void pipeline(const Graph *g, Analysis *an, Candidate *k, int64_t S);
/* The optimal min-max partition of L layers with times t and memory m
 * (cap per stage) into S contiguous stages: fills end[] (room for L + 1)
 * and *n, returns the slowest stage's time, -1 when memory forbids. */
double pipeline_partition(const double *t, const double *m, int L, double cap, int S, int *end,
			  int *n);

/* calibrate.c: fit the system's free parameters (compute efficiency,
 * network bandwidth and latency, point-to-point latency) to measured runs
 * by least squares on relative errors; s is changed in place.
 * requires: PASS_COST and PASS_MEMORY on every row's graph. */
enum { CALIB_PARAMS = 4 };
typedef struct CalibRow {
	const Graph *g;
	Analysis an;            /* batch, GPUs, dataset, precision, optimizer */
	StrategyKind kind;
	int64_t grid[DIM_COUNT];
	double measured;
	double predicted;       /* after the fit */
} CalibRow;
typedef struct Calibration {
	double factor[CALIB_PARAMS]; /* fitted / original: compute efficiency,
	                                nic_bw, nic_latency, p2p_latency */
	double before, after, loo;   /* mean accuracies: before, after, leave-one-out */
} Calibration;
bool calibrate_run(System *s, CalibRow *rows, int n, const StrategyOpts *o, Calibration *out);
double calibrate_predict(CalibRow *r, const System *s, const StrategyOpts *o);

/* paper.c: one strategy on one grid with the tech report's Table III
 * formulas exactly (--cost-model paper; docs/model.md). */
void paper_predict(const Graph *g, const Analysis *an, StrategyKind kind,
		   const int64_t grid[DIM_COUNT], Candidate *k);

#endif
