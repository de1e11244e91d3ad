/* costmodel.h -- the cost models: what one iteration of a strategy on a
 * given grid takes in time and in memory per GPU.  Each model is one
 * implementation of CostModel, found by its --cost-model name:
 *   default  the physical model (physical.c, on compute.c, comm.c,
 *            mapping.c and pipeline.c)
 *   paper    the tech report's Table III, exactly (paper.c)
 * strategy.c enumerates the grids of each strategy (ir/strategies.def),
 * asks the model, and ranks what it says; it knows no model. */
#ifndef ORACLEC_MODEL_COSTMODEL_H
#define ORACLEC_MODEL_COSTMODEL_H

#include "ir/ir.h"

enum { SPLIT_AUTO, SPLIT_ALL }; /* PredictCtx.spatial_split */

/* What a prediction reads besides the strategy and its grid: the graph,
 * the analysis (its query: the system, the implementation -- how a
 * framework realizes a strategy: its collectives, overlap, memory -- and
 * the settings, the pipeline's schedule among them) and the options of
 * the strategies; each model reads what it understands. */
typedef struct PredictCtx {
	const Graph *g;          /* PASS_COST, PASS_MEMORY done; timings spread */
	const Analysis *an;      /* system, precision, optimizer, batch, dataset */
	int spatial_split;       /* SPLIT_AUTO: the best split point; SPLIT_ALL:
	                            every layer with spatial extent */
	const bool *cut_after;   /* pipeline: stages may end only after these
	                            layers (NULL: after any) */
	int nest;                /* StrategyOpts.nest */
	double beat;             /* StrategyOpts.beat; INFINITY: none */
	bool megatron;           /* StrategyOpts.megatron */
	bool no_stages;          /* StrategyOpts.no_stages */
} PredictCtx;

/* predict: one strategy on one grid whose dimensions are the strategy's.
 * k arrives zeroed but for kind, split (-1), analysed and nest.  It fills the
 * grid it ran (k->grid), global_batch, per_gpu_batch, max_gpus, the parts
 * of k->t but communication and total, k->mem, and for a pipeline
 * micro_batches and the stages (stage_end, and stage_time and stage_mem
 * when the model knows them: a plan needs them; not with no_stages).  A grid beyond the
 * strategy's limit: computable false, the reason and the bottleneck
 * "scaling limit".  strategy.c then adds up the parts, the epoch, the
 * bottleneck and whether it fits. */
/* A layer's place in a per-layer assignment (plan/perlayer.c): split by
 * `mode` over d GPUs (data: d = 1), the p / d groups of them sharing the
 * global batch. */
typedef struct LayerSplit {
	PerLayerMode mode;
	int64_t d;
} LayerSplit;

typedef struct CostModel {
	const char *name;
	void (*predict)(const PredictCtx *c, StrategyKind kind, const int64_t grid[DIM_COUNT],
			Candidate *k);
	bool nests;  /* prices a grid's nesting (k->nest) on the nodes; else
	                it is given model-inner grids only */
	bool lockstep; /* a step waits for the slowest of its N ranks
	                  (skew.c: the system's jitter and gpu_spread); the
	                  paper's Table III has no such term */
	/* The per-layer entry points (NULL: the model prices whole
	 * strategies only).  layer: the separable price of layer l split as
	 * s on the analysis's GPUs -- its forward and backward, its split's
	 * collectives or halos, its gradient's exchange at the group's
	 * per-byte rate and its optimizer step; INFINITY when s cannot split
	 * it or a group would have no sample.  The planner's dynamic
	 * programme adds these up.  assignment: one iteration of every layer
	 * i split as split[i], `moves` seconds of redistribution between
	 * them, priced as predict prices a strategy (the exchange overlapped,
	 * the optimizer step over all tensors at once, the host lane, the
	 * input): the times of k (global_batch, per_gpu_batch and
	 * micro_batches too), not its memory nor its sums.  The uniform
	 * data assignment is the data strategy's iteration. */
	double (*layer)(const PredictCtx *c, const Layer *l, LayerSplit s);
	void (*assignment)(const PredictCtx *c, const LayerSplit *split, double moves,
			   Candidate *k);
} CostModel;

/* memuse.c: what a report says of the model's bytes at the analysis's
 * precision (ModelBytes, LayerBytes: ir/analysis.h), as autograd keeps
 * each operator's tensors; the plan hands them to the backends
 * (analysis_report_bytes). */
ModelBytes model_bytes(const Analysis *an, const Graph *g);
LayerBytes layer_bytes(const Analysis *an, const Graph *g, int i);

extern const CostModel cost_model_physical; /* physical.c */
extern const CostModel cost_model_paper;    /* paper.c */

/* costmodel.c: the model named `name`, or NULL; the names, "default,
 * paper", for messages (into buf[n], returned). */
const CostModel *cost_model_find(const char *name);
char *cost_model_list(char *buf, size_t n);

#endif
