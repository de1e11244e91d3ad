/* passes.h -- analysis passes over the layer IR.  Each pass is one file
 * with one entry point; it states what it requires and provides (Graph.done
 * bits) and fills IR fields, never prints a report.  Input errors are
 * reported through diag; the return value is false when there were any.
 * The passes that annotate the IR run through analysis.h's runner, which
 * checks those bits, in the order of its table. */
#ifndef ORACLEC_PASSES_PASSES_H
#define ORACLEC_PASSES_PASSES_H

#include "ir/ir.h"
#include "passes/costmodel.h"

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

/* compute.c
 * requires: PASS_COST, the system and precision of the analysis.
 * provides: PASS_TIMING -- Layer.timed, fwd_s and bwd_s from Graph.timing: a span's
 *           measured time shared out over its layers in proportion to their
 *           roofline estimates (so one time for the whole network keeps the
 *           estimate's shape); a later timing wins for a layer two cover.
 *           Without timings every layer is left to the roofline. */
bool timing_spread(Graph *g, const Analysis *an);

/* strategy.c
 * requires: PASS_COST, PASS_MEMORY, and an Analysis with its system,
 *           precision, optimizer, GPU count, batch and dataset set.
 * provides: Analysis.cand (every strategy: its best grid, times, memory,
 *           limits, bottleneck), Analysis.best: each strategy of the mask
 *           on its grids of an->gpus GPUs (ir/strategies.def), predicted
 *           by the cost model, then ranked. */
typedef struct StrategyOpts {
	unsigned mask;       /* 1 << StrategyKind of the strategies to analyse */
	int spatial_split;   /* SPLIT_AUTO: the best split point; SPLIT_ALL: every
	                        layer with spatial extent (ParaDL's .lc masks) */
	const CostModel *model; /* --cost-model; NULL: the default */
	bool forced;         /* --grid: only `kind` on exactly `grid` */
	StrategyKind kind;
	int64_t grid[DIM_COUNT];
	const bool *cut_after; /* pipeline: stages may end only after these layers
	                          (NULL: after any); with --plan, the modules'
	                          cut points (docs/plans.md, "Blocks") */
	int nest;            /* --nesting: a Nesting fixes it; NEST_COUNT: each
	                        grid nested the better way the model sees */
	double beat;         /* an epoch to beat (0: none): a grid's data-inner
	                        nesting is skipped where its model-inner
	                        prediction shows it cannot (the search) */
	bool megatron;       /* --plan megatron: no data-inner grid with a split
	                        inside a layer (Megatron-LM has no such rank
	                        order) */
} StrategyOpts;
bool strategies_run(const Graph *g, Analysis *an, const StrategyOpts *o);

/* advice.c: warnings on the recommendation (an->warning[]); `fewer` are
 * the same analysis on fewer GPUs, fewest first (may be none). */
void advise(const Graph *g, Analysis *an, const Analysis *fewer, int nfewer);

/* strategy.c: one strategy on one given grid (validation, --grid); the
 * grid's dimensions must be those of the strategy (data for df and ds). */
bool strategy_predict(const Graph *g, Analysis *an, const StrategyOpts *o, StrategyKind kind,
		      const int64_t grid[DIM_COUNT], Candidate *k);

/* validate.c
 * requires: Validation.row[].measured, .predicted, .paradl.
 * provides: every row's accuracies and the means per strategy and overall. */
void validation_score(Validation *v);
/* The accuracy of prediction p of measured m > 0: 1 - |p - m| / m, or 0
 * when that is below 0 (p off by 100 % or more); NAN when p is (no
 * prediction). */
double validation_accuracy(double p, double m);

struct Mapping; /* model.h */
/* pipeline.c: the pipeline strategy of the default cost model over the
 * stages of the mapped grid (its pipeline dimension; a filter or channel
 * dimension splits every stage's layers), with each stage's time and
 * memory (Candidate.stage_time, stage_mem); cut_after as in StrategyOpts. */
void pipeline(const Graph *g, const Analysis *an, const struct Mapping *m, Candidate *k,
	      const bool *cut_after, const int64_t grid[DIM_COUNT], double beat);
/* The reason of a grid pipeline() did not partition because a lower
 * bound on its epoch cannot beat `beat` (an epoch; INFINITY: none). */
extern const char pipeline_bounded[];
/* Micro-batches stage i of S holds at its peak under the schedule (v
 * virtual stages when interleaved), of M. */
double pipeline_held(Schedule sched, int v, int64_t M, int S, int i);
/* An iteration's parts added, all but the input, which overlaps them
 * (strategy.c). */
double iteration_busy(const IterTime *t);
/* The pipeline's checkpointing (CKPT_*): the implementation's
 * pipe_checkpoint, none when --recompute chose its own segments. */
int pipeline_checkpoint(const Analysis *an);
/* Of the `held` micro-batches (of M) a stage holds at its peak, those it
 * keeps as their input only; *whole: those it keeps whole, the rest or,
 * with any checkpointed, at least the one recomputed in backward. */
double pipeline_checkpointed(const Analysis *an, int64_t M, double held, double *whole);
/* The optimal min-max partition of L layers with times t and memory m
 * (cap per stage) into S contiguous stages: fills end[] (room for L + 1)
 * and *n, returns the slowest stage's time, -1 when memory forbids. */
double pipeline_partition(const double *t, const double *m, int L, double cap, int S, int *end,
			  int *n);

/* search.c: the joint search over the strategies' grids, schedules,
 * ZeRO stages and recomputation that fix leaves open, on an's GPUs
 * (requires what strategies_run does): search_begin, then search_run
 * once per precision (each adds what it evaluates), then search_end
 * (why each loser lost).  search_all (analysis.h) does the three. */
void search_begin(Search *s, double budget_s); /* budget_s: 0 none */
bool search_run(const Graph *g, const Analysis *an, const StrategyOpts *o, const SearchFix *fix,
		Search *s);
void search_end(Search *s);

/* perlayer.c: each block of layers' own split of an's GPUs, by dynamic
 * programming over the chain of blocks (requires PASS_TIMING). */
bool per_layer_run(const Graph *g, const Analysis *an, PerLayer *out);
/* For tests: the least per-layer time by enumerating every assignment
 * (NAN beyond 1e7 of them); *programme, the least as the programme's
 * tables have it. */
double per_layer_exhaustive(const Graph *g, const Analysis *an, double *programme);

/* recompute.c: the segments of k layers (k = 0: the k that keeps least)
 * of g (PASS_MEMORY done) into r. */
bool recompute_plan(const Graph *g, int k, Recompute *r);
/* Selective recomputation (Korthikanti et al., MLSys'23): every
 * attention's core (graph_attention) recomputed, the rest kept. */
void recompute_selective(const Graph *g, Recompute *r);

/* calibrate.c: fit the system's physical parameters (compute efficiency,
 * network bandwidth and latency, point-to-point latency, the shared file
 * system's file rate and cache) to measured runs by least squares on
 * relative errors; s is changed in place, but for the parameters the runs
 * do not constrain.  requires: PASS_COST and PASS_MEMORY on every row's
 * graph. */
enum { CALIB_PARAMS = 7 };
extern const char *const calib_param_name[CALIB_PARAMS];
typedef struct CalibRow {
	const Graph *g;
	Analysis an;            /* batch, GPUs, dataset, precision, optimizer */
	StrategyKind kind;
	int64_t grid[DIM_COUNT];
	double measured;
	double predicted;       /* after the fit */
} CalibRow;
typedef struct Calibration {
	double factor[CALIB_PARAMS]; /* fitted / original, in calib_param_name's
	                                order */
	bool fitted[CALIB_PARAMS];      /* the system has it (a limit of 0 is none) */
	bool constrained[CALIB_PARAMS]; /* the runs see it; else left as it was */
	double rel_error[CALIB_PARAMS]; /* standard error of its logarithm (about
	                                   the relative error); NAN when unknown */
	double corr[CALIB_PARAMS][CALIB_PARAMS]; /* correlation of two fitted
	                                   parameters' errors (near -1 or 1: the runs
	                                   see them only together); NAN when unknown */
	double before, after, loo;   /* mean accuracies: before, after, leave-one-out
					(NAN for a single run) */
} Calibration;
bool calibrate_run(System *s, CalibRow *rows, int n, const StrategyOpts *o, Calibration *out);
double calibrate_predict(CalibRow *r, const System *s, const StrategyOpts *o);

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
/* The largest modules whose layers all lie in [first, last], in order of
 * their first layer; returns how many, the names in *out (arena). */
int modules_within(const Graph *g, const Modules *m, int first, int last, const char ***out);

/* placement.c
 * requires: the modules (modules_derive) and the analysis (strategies_run
 *           with o->cut_after their cut points when they restrict them)
 *           with a recommended strategy.
 * provides: the plan of that strategy: the process grid's dimensions in
 *           order, the rank table (rank -> node, GPU, coordinates), the
 *           batch split, and for pipelines the stages with the time and
 *           memory the prediction gave them.  It predicts nothing.
 *           Reports (and returns false) when nothing is feasible or the
 *           plan cannot be made. */
enum { MAX_PLAN_RANKS = 1 << 16 };

typedef struct PlaceRank {
	int64_t node;              /* index into the job's nodes */
	int gpu;                   /* GPU within the node */
	int64_t coord[DIM_COUNT];  /* along each dimension of the grid */
} PlaceRank;

typedef struct PlaceStage {
	int first, last;           /* layers */
	int ufirst, ulast;         /* units */
	double time;               /* forward + backward of one micro-batch, s */
	double mem;                /* bytes on its GPU */
	double held;               /* micro-batches whose activations it holds
	                              at its peak (pipeline_held) */
	double checkpointed;       /* of them, those kept as their input only
	                              (pipeline_checkpointed) */
	double whole;              /* and those kept whole at once */
	const char **modules;      /* the largest modules wholly inside */
	int nmodules;
	int blocks;                /* stack: blocks in the stage */
	bool pre, post;            /* stack: it holds units before / after them */
} PlaceStage;

typedef struct Placement {
	const Candidate *k;        /* the strategy planned */
	bool recut;                /* a pipeline whose stages could begin only
	                              at blocks (the blocks restrict the cuts) */
	GridDim dim[DIM_COUNT];    /* the grid's dimensions, outer to inner: the
	                              last varies fastest with the rank */
	int ndim;
	int64_t gpus, nodes;       /* ranks; nodes they take */
	int gpus_per_node;
	int per_node;              /* most ranks on one node */
	int span;                  /* network level the nodes span (system_span):
	                              -1 one node, 0 one leaf switch, ... */
	PlaceRank *rank;
	int64_t replicas;          /* data-parallel width */
	double replica_batch;      /* samples per replica and iteration */
	double micro_batch;        /* samples per micro-batch (pipeline), else
	                              replica_batch */
	int64_t micro_batches;     /* per iteration: pipeline M, gradient
	                              accumulation steps, else 1 */
	int checkpoints;           /* recomputation: the segments (of
	                              Analysis.rc.k layers), else 0 */
	Modules mod;
	PlaceStage *stage;         /* pipeline */
	int nstage;
	int split;                 /* spatial: the last split layer, else -1 */
	bool layout;               /* stages fit Megatron's layout (E.. t.. L) */
	const char *layout_why;    /* why not */
} Placement;
bool placement_run(const Graph *g, const Analysis *an, const StrategyOpts *o,
		   const Modules *mod, Placement *pl);
/* The cut points the analysis for a plan uses (StrategyOpts.cut_after):
 * the modules', or NULL when they allow a stage to end after any layer. */
const bool *plan_cuts(const Graph *g, const Modules *m);

#endif
