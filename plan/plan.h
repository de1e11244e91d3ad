/* plan.h -- what decides: the strategies on their grids, ranked
 * (strategy.c), the joint search (search.c), each layer's own split
 * (perlayer.c), the warnings on the recommendation (advice.c), the
 * sweep over GPU counts and the advice's fewer GPUs (sweep.c), the
 * placement a plan follows (placement.c), and measured runs scored
 * (validate.c) and fitted (calibrate.c).  Everything here prices through
 * the cost models of model/ and reads what the passes of passes/ put in
 * the IR; nothing below calls up into it. */
#ifndef ORACLEC_PLAN_PLAN_H
#define ORACLEC_PLAN_PLAN_H

#include "ir/ir.h"
#include "model/costmodel.h"
#include "passes/passes.h"

/* strategy.c
 * requires: PASS_COST, PASS_MEMORY, and an Analysis with its system,
 *           precision, optimizer, GPU count, batch and dataset set.
 * provides: Analysis.cand (every strategy: its best grid, times, memory,
 *           limits, bottleneck), Analysis.best: each strategy of the mask
 *           on its grids of an->set.gpus GPUs (ir/strategies.def), predicted
 *           by the cost model, then ranked. */
typedef struct StrategyOpts {
	unsigned mask;       /* 1 << StrategyKind of the strategies to analyse */
	bool listed;         /* --strategies gave the mask: Megatron's tensor
	                        parallelism is analysed even for a model without
	                        attention (strategy_asked) */
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
	bool no_stages;      /* a pipeline's stages are not kept in the
	                        candidate (the search: it reads none, and
	                        allocates nothing per configuration) */
} StrategyOpts;
bool strategies_run(const Graph *g, Analysis *an, const StrategyOpts *o);
/* Whether strategy k is analysed: in o's mask, and a strategy of
 * Megatron's tensor dimension only for a transformer (an->tf) unless
 * --strategies names it. */
bool strategy_asked(const Analysis *an, const StrategyOpts *o, StrategyKind k);
/* The cost model o names (--cost-model), else the default (physical). */
const CostModel *strategy_cost_model(const StrategyOpts *o);

/* Configurations whose epochs are within this fraction of the fastest
 * are as fast: the simpler is recommended (docs/model.md, "Iteration,
 * epoch and ranking"). */
#define SIMPLER_WITHIN 0.03
/* strategy.c: the dimensions a grid uses (data=8,pipeline=2: 2); a list
 * key of an implementation as text ("data,ds" -> "data, ds"). */
int grid_dimensions(const int64_t grid[DIM_COUNT]);
/* strategy.c: a predicted candidate's throughput (global batch over the
 * iteration) and MFU (the model's forward and backward FLOPs per second
 * per GPU, recomputation not counted, over matmul_peak, model/model.h); 0
 * when it has no
 * times.  Every prediction of strategy.c has them. */
void candidate_rates(const Graph *g, const Analysis *an, Candidate *k);
/* strategy.c: candidate k of analysis an as a configuration of the
 * search (its settings and figures). */
void candidate_config(const Analysis *an, const Candidate *k, SearchConfig *c);
/* strategy.c: each analysed candidate's rank (Candidate.rank): an->best
 * first, then the feasible by epoch, those with times by epoch, the rest
 * in the table's order. */
void strategy_ranks(Analysis *an);
const char *impl_list_text(Arena *a, const char *list);

/* advice.c: warnings on the recommendation (an->warning[]); `fewer` are
 * the same analysis on fewer GPUs, fewest first (may be none). */
void advise(const Graph *g, Analysis *an, const Analysis *fewer, int nfewer);

/* sweep.c: the strategies again on other GPU counts.  sweep_run: on 1,
 * 2, 4, ... GPUs up to an->set.gpus, and on an->set.gpus itself when it is not a
 * power of two (provides an->sweep, an->nsweep), telling progress (when
 * not NULL) how many counts are done of how many, and how many grids
 * they hold (sweep_grids: every strategy's grids on 1, 2, 4, ... GPUs).
 * advice_run: advise() against the sweep's counts when there is one,
 * else gpus/64, ..., gpus/4, gpus/2 (fewest first); none under --grid,
 * whose grid is of all the GPUs. */
typedef void SweepProgress(int done, int total, int64_t grids);
int64_t sweep_grids(int counts);
bool sweep_run(const Graph *g, Analysis *an, const StrategyOpts *so, Arena *a,
	       SweepProgress *progress);
bool advice_run(const Graph *g, Analysis *an, const StrategyOpts *so, Arena *a);

/* strategy.c: one strategy on one given grid (validation, --grid); the
 * grid's dimensions must be those of the strategy (data for df and ds). */
bool strategy_predict(const Graph *g, Analysis *an, const StrategyOpts *o, StrategyKind kind,
		      const int64_t grid[DIM_COUNT], Candidate *k);

/* maxbatch.c: --max-batch, each analysed strategy's largest batch per GPU
 * that fits on its grid and nesting with the other settings, its
 * micro-batches dividing a replica's batch (requires strategies_run under
 * weak scaling; provides cand[].max_batch, .max_batch_why and
 * an->max_batch). */
bool max_batch_run(const Graph *g, Analysis *an, const StrategyOpts *o);

/* validate.c
 * requires: Validation.row[].measured, .predicted, .paradl; .peak and
 *           .predicted_peak where measured.
 * provides: every row's accuracies and the means per strategy and
 *           overall; memory's (Validation.mem) over the rows that measured
 *           it. */
void validation_score(Validation *v);
/* What a run's measured peak memory is compared with, of the prediction m
 * on s: on a GPU the peak less the system's reserve (the context and the
 * allocator's slack, which torch.cuda.max_memory_allocated does not
 * count); on a host device (System.host_device: the runner measures the
 * resident set's growth over one step) also less the weights and the
 * optimizer state, which stay between steps. */
double validation_memory(const MemUse *m, const System *s);
/* The accuracy of prediction p of measured m > 0: 1 - |p - m| / m, or 0
 * when that is below 0 (p off by 100 % or more); NAN when p is (no
 * prediction). */
double validation_accuracy(double p, double m);


/* search.c: the joint search over the strategies' grids, schedules,
 * ZeRO stages and recomputation that fix leaves open, on an's GPUs
 * (requires what strategies_run does): search_begin, then search_run
 * once per precision (each adds what it evaluates), then search_end
 * (why each loser lost).  search_all (analysis.h) does the three. */
void search_begin(Search *s, double budget_s); /* budget_s: 0 none */
bool search_run(const Graph *g, const Analysis *an, const StrategyOpts *o, const SearchFix *fix,
		Search *s);
void search_end(Search *s);
/* search.c: the settings a configuration c of the search was evaluated
 * under, of the run's set with fix (analysis_setup of them is c's
 * analysis). */
Settings search_settings(const Settings *set, const SearchFix *fix, const SearchConfig *c);

/* decision.c
 * requires: strategies_run (the ranking's decision), and the search
 *           (an->search) and the per-layer splits (an->per_layer) where
 *           the run has them.
 * provides: an->decision: the search's first where there is a search (its
 *           analysis set up under search_settings and its prediction made
 *           again in full, in a), else the ranking's; then the per-layer
 *           splits where they are recommended over it
 *           (per_layer_recommend); an->best its strategy and the ranks
 *           from it.  false after an input error (reported). */
bool decide(const Graph *g, Analysis *an, const StrategyOpts *so, const Settings *set,
	    const SearchFix *fix, Arena *a);

/* perlayer.c: each block of layers' own split of an's GPUs, by dynamic
 * programming over the chain of blocks under model m's separable layer
 * prices, the assignment it finds and the uniform ones then priced as m
 * prices an iteration (requires PASS_TIMING; a model without per-layer
 * entry points: pl->done false). */
bool per_layer_run(const Graph *g, const Analysis *an, const CostModel *m, PerLayer *out);
/* perlayer.c: whether the assignment is recommended over the strategies:
 * it fits, is more than SIMPLER_WITHIN faster than every uniform
 * assignment under its own model (within it the uniform strategy is
 * simpler), and than the epoch `beat` (the decision's; 0: none);
 * provides pl->epoch and pl->recommended. */
void per_layer_recommend(const Analysis *an, double beat, PerLayer *pl);
/* For tests: the least per-layer time by enumerating every assignment
 * (NAN beyond 1e7 of them); *programme, the least as the programme's
 * tables have it. */
double per_layer_exhaustive(const Graph *g, const Analysis *an, double *programme);


/* calibrate.c: fit the system's physical parameters (compute efficiency,
 * network bandwidth and latency, point-to-point latency, the shared file
 * system's file rate and cache) to measured runs by least squares on
 * relative errors; s is changed in place, but for the parameters the runs
 * do not constrain.  requires: PASS_COST and PASS_MEMORY on every row's
 * graph. */
/* The parameters calibrate fits (calibrate.c): a factor per class of
 * kernels, then the network's, the file system's and the sends'. */
enum {
	CAL_CONV, CAL_CONV_1X1, CAL_CONV_GROUPED, CAL_GEMM, CAL_MEMORY, CAL_HOST, CAL_NIC_BW,
	CAL_NIC_LAT, CAL_P2P_LAT, CAL_FS_RATE, CAL_CACHE, CAL_STAGING, CALIB_PARAMS
};
extern const char *const calib_param_name[CALIB_PARAMS];
typedef struct CalibRow {
	const Graph *g;
	Analysis *an;           /* batch, GPUs, dataset, precision, optimizer;
	                           shared by the runs that have them alike */
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
	bool too_few[CALIB_PARAMS];     /* seen, but left as it was: fewer runs than
	                                   parameters seen (it was the least seen) */
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
	const Candidate *k;        /* the strategy planned: the decision's */
	const Analysis *an;        /* the analysis of it (Decision.at): the
	                              settings the plan states */
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
	int checkpoint;            /* pipeline: its checkpointing, CKPT_*
	                              (pipeline_checkpoint) */
	int split;                 /* spatial: the last split layer, else -1 */
	bool layout;               /* stages fit Megatron's layout (E.. t.. L) */
	const char *layout_why;    /* why not */
	int64_t sync_bn;           /* synchronised batch norm's groups: so many
	                              consecutive data-parallel ranks; 0: none */
	int chunks;                /* pipeline: the model chunks each rank runs
	                              (interleaved:V's V), else 1; with a
	                              Megatron layout each stage's blocks split
	                              into them evenly */
	int recompute_blocks;      /* recomputation: its segments in the model's
	                              blocks (transformer layers), at least 1;
	                              0 without recomputation or blocks */
	bool cudnn_tf32, matmul_tf32; /* PyTorch's TF32 switches as the
	                              prediction assumed them (tf32_switches) */
	const char *implementation; /* the software stack as the plan names it:
	                              a built-in's name, or its file as a path
	                              from the plan's folder (main.c) */
} Placement;
bool placement_run(const Graph *g, const Analysis *an, const StrategyOpts *o,
		   const Modules *mod, Placement *pl);
/* The cut points the analysis for a plan uses (StrategyOpts.cut_after):
 * the modules', or NULL when they allow a stage to end after any layer. */
const bool *plan_cuts(const Graph *g, const Modules *m);


#endif
