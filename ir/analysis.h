/* analysis.h -- what the passes find: each strategy's candidate (grid,
 * times, memory, limits), the analysis over GPUs, validation scores.
 * Passes fill it, backends format it; a frontend never sees it, and the
 * compiler checks that (docs/internals.md). */
#ifndef ORACLEC_IR_ANALYSIS_H
#define ORACLEC_IR_ANALYSIS_H

#ifdef ORACLEC_FRONTEND
#error "ir/analysis.h: a frontend knows nothing of the analysis (graph.h, system.h, grid.h, \
measured.h)"
#endif

#include "ir/graph.h"
#include "ir/grid.h"
#include "ir/implementation.h"
#include "ir/measured.h"
#include "ir/system.h"

/* The strategies and the dimensions of their process grids: ir/grid.h,
 * from the table ir/strategies.def. */

/* AdamW keeps Adam's two moments; its weight decay is applied to the
 * weights directly (Loshchilov and Hutter, ICLR'19), at no extra state. */
typedef enum Optimizer { OPT_SGD, OPT_MOMENTUM, OPT_ADAM, OPT_ADAMW, OPT_RMSPROP } Optimizer;

/* Pipeline schedules (model/pipeline.c): GPipe, all forwards then all
 * backwards; 1F1B (PipeDream-Flush), one forward one backward;
 * interleaved 1F1B (Megatron-LM), V model chunks per GPU. */
typedef enum Schedule { SCHED_GPIPE, SCHED_1F1B, SCHED_INTERLEAVED, SCHED_COUNT } Schedule;
/* The most model chunks interleaved:V gives a GPU: a bound on the input
 * (docs/limits.md), far above what a schedule gains from (Megatron's runs
 * take 2 to 8). */
#define MAX_VIRTUAL_STAGES 1024

/* optimizer.c: the optimizers' and schedules' names.  schedule_parse
 * reads "gpipe", "1f1b" or "interleaved:V" (V >= 2 into *v; 1 for the
 * others). */
const char *schedule_name(Schedule s);
bool schedule_parse(const char *s, Schedule *out, int *v);
/* As --schedule and --recompute spell them, into buf[n]: "gpipe", "1f1b",
 * "interleaved:V"; "none", "every:K" (k = 0: none). */
const char *schedule_label(Schedule s, int v, char *buf, size_t n);
const char *recompute_label(int k, char *buf, size_t n);

/* optimizer.c */
const char *optimizer_name(Optimizer o);
bool optimizer_parse(const char *s, Optimizer *o);

/* What one training sample is as stored, for the CPU cost of loading it
 * (docs/model.md, "Input pipeline"): a JPEG to decode and augment, a small
 * uncompressed image to augment, data used as stored, or synthetic data
 * already on the GPU (benchmarks: no loader, no copy to the GPU). */
typedef enum DataKind {
	DATA_AUTO, DATA_JPEG, DATA_RAW, DATA_STORED, DATA_SYNTHETIC, DATA_COUNT
} DataKind;

/* optimizer.c */
const char *data_kind_name(DataKind k);
bool data_kind_parse(const char *s, DataKind *k);

/* Activation recomputation (passes/recompute.c): segments of k layers;
 * k = 0: none; RECOMPUTE_SELECTIVE: attention's core only. */
enum { RECOMPUTE_SELECTIVE = -1 };
typedef struct Recompute {
	int k;
	int first_kept;     /* the first layer of the last segment, which is
	                       not recomputed */
	const bool *redo;   /* selective: the layers recomputed (else those
	                       before first_kept) */
	double fraction;    /* the activations kept, of those without it */
	const double *boundary; /* segments: per layer, the bytes per sample
	                       alive across the boundary before it when a
	                       segment begins there, else 0 (pipelines) */
	double segment;     /* segments: the largest one's activations, bytes
	                       per sample */
} Recompute;

/* Time of one training iteration, seconds, by part. */
typedef struct IterTime {
	double compute;     /* forward + backward on the slowest GPU (pipeline:
	                       the useful steps only) */
	double bubble;      /* pipeline fill and drain */
	double grad;        /* gradient all-reduce across data replicas, the
	                       part not hidden behind backward */
	double grad_hidden; /* the part that overlaps backward (buckets) */
	double reducer;     /* the data-parallel wrapper's own kernels around
	                       the exchange: its gradient copies and its
	                       forward's buffer broadcast */
	double layer;       /* per-layer collectives (filter, channel, spatial gather) */
	double p2p;         /* halo exchange, pipeline sends, ring attention */
	double ring;        /* context parallelism's K/V sends round the ring
	                       not hidden behind the attention (part of p2p) */
	double update;      /* optimizer step */
	double recompute;   /* forward again of the recomputed segments */
	double dispatch;    /* the GPU waiting for the CPU that issues its
	                       kernels (the host lane, model/host.c; a pipeline
	                       under one process: every stage's forward) */
	double host;        /* the CPU's issue time of one iteration (not a
	                       part: it overlaps the GPU's) */
	double input;       /* reading and decoding the node's samples (overlapped) */
	double feed;        /* a node loader's batch broadcast to and copied by
	                       every GPU, in the iteration (not overlapped) */
	double communication; /* grad + layer + p2p */
	double sync_bn;     /* synchronised batch norm's statistics exchanged
	                       in forward and backward (--sync-bn) */
	double skew;        /* the slowest of N ranks past the mean of their
	                       own work (the system's jitter and gpu_spread) */
	double total;       /* max(input, everything else added) */
} IterTime;

/* Memory per GPU, bytes, by part (docs/model.md, "Memory per GPU"). */
typedef struct MemUse {
	double weights, grads, optimizer;
	double activations;   /* kept from forward for backward, all held at
	                         the end of the forward pass */
	double transient;     /* added at the backward pass's peak: gradients in
	                         flight over what backward has freed */
	double workspace;     /* convolution workspace */
	double buffers;       /* the system's reserve: CUDA context, allocator */
	double total;         /* the peak: every part added */
} MemUse;

typedef struct Candidate {
	StrategyKind kind;
	bool analysed;            /* asked for (--strategies) */
	int64_t grid[DIM_COUNT];  /* 0 = dimension not used */
	Nesting nest;             /* how the grid nests on the nodes */
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
	double *stage_time;       /* pipeline, per stage: forward + backward of one
	                             micro-batch, s (NULL: the model gives none) */
	double *stage_mem;        /* pipeline, per stage: bytes on its GPU (the
	                             largest is mem.total) */
	int split;                /* spatial: last spatially split layer */
	IterTime t;
	double epoch;             /* seconds per epoch */
	MemUse mem;
	bool not_run;             /* the implementation does not run the
	                             strategy: not feasible, times kept (where
	                             it has them) */
	double throughput;        /* samples per second: global_batch / t.total */
	double tokens;            /* a sequence model's tokens per second:
	                             throughput x Graph.seq_len; 0 otherwise */
	double mfu_std;           /* a sequence transformer's MFU by the standard
	                             count (transformer_flops: Narayanan et al.'s
	                             eq. 3) over mfu's peak; 0 otherwise */
	double mfu;               /* model FLOPs utilization: the model's forward
	                             and backward FLOPs per second per GPU
	                             (recomputation not counted) over the dense
	                             peak its matrix products run at */
	double mfu_peak;          /* that peak, FLOP/s per GPU (matmul_peak) */
	int64_t max_batch;        /* --max-batch: the largest batch per GPU that
	                             fits on this grid (0: not even 1) */
	const char *max_batch_why; /* why 0, or why not more than the dataset
	                             allows; NULL when memory stops it */
	int rank;                 /* 1 = recommended, then feasible by epoch,
	                             the rest by epoch, the uncomputed last; 0
	                             when not analysed */
} Candidate;

/* Advice on the recommendation (pass advice): a stable code scripts can
 * match and a sentence (docs/model.md, "Warnings"). */
enum { MAX_WARNINGS = 8 };
typedef struct Warning {
	const char *code;
	char message[480];
} Warning;

/* The joint search (plan/search.c): one configuration evaluated. */
enum { SEARCH_TOP = 10 };
typedef struct SearchConfig {
	StrategyKind kind;
	int64_t grid[DIM_COUNT];
	Nesting nest;
	Schedule schedule;
	int virtual_stages;
	int zero;
	bool zero_node;           /* FSDP hybrid */
	Precision prec;
	int recompute;            /* segments of k layers; 0 none;
	                             RECOMPUTE_SELECTIVE */
	bool sequence_parallel;   /* Megatron's, with a tensor dimension */
	int64_t micro_batches;
	double iteration, epoch, memory;
	double throughput, mfu, mfu_peak; /* as Candidate's */
	bool feasible;
	const char *reason, *bottleneck;
	char why[96];             /* why it lost to the best; "" for the best */
} SearchConfig;

/* The run's one answer (plan/decision.c): the search's first under
 * --search, else the ranking's best, or the per-layer splits where they
 * are recommended.  The text's recommendation line, JSON recommendation,
 * best and each strategy's rank, the HTML and every --plan say it. */
typedef enum DecisionFrom {
	DECIDED_NONE,             /* nothing fits (Analysis.why_none says why) */
	DECIDED_RANKING,          /* the ranking's best (strategies_run) */
	DECIDED_SEARCH,           /* the search's first (--search) */
	DECIDED_PER_LAYER,        /* the per-layer splits (--per-layer) */
} DecisionFrom;
struct Analysis;
typedef struct Decision {
	DecisionFrom from;
	SearchConfig c;           /* the configuration, as the search describes
	                             one, with its figures; the per-layer splits:
	                             the best strategy's (a plan's rest) */
	const struct Analysis *at; /* the analysis of c: its query's settings
	                             are c's (the run's own analysis where they
	                             are the run's); valid while the analysis
	                             decided is */
	const Candidate *k;       /* c's prediction in full: the parts, the
	                             memory by part, a pipeline's stages */
	double runner_up;         /* the next best's epoch over c's; 0: none (or
	                             only faster ones, c being simpler) */
} Decision;

/* Per-layer parallelization (plan/perlayer.c): each layer's mode; the
 * names in ir/grid.c. */
typedef enum PerLayerMode { PL_DATA, PL_FILTER, PL_CHANNEL, PL_SPATIAL, PL_MODES } PerLayerMode;
extern const char *const per_layer_mode_name[PL_MODES];
typedef struct PerLayer {
	bool done;                /* false: no assignment (one GPU, or none fits) */
	PerLayerMode *mode;       /* per layer */
	int64_t *degree;          /* per layer: the GPUs that split it (1 for
	                             data); gpus / degree groups of them share
	                             the samples */
	int nblocks;              /* the chain of blocks it chose over */
	int nwhole;               /* blocks that are not series-parallel: one
	                             state for all their layers */
	int nstates;              /* the choices per block: data, and each
	                             split mode at each divisor d >= 2 of p */
	int count[PL_MODES];      /* layers in each mode */
	double time;              /* per iteration, as the cost model prices
	                             the assignment's iteration */
	double separable;         /* the assignment's time under the separable
	                             per-layer prices the programme minimises */
	double memory;            /* per GPU at the peak, bytes */
	bool fits;                /* memory within the GPU's */
	bool limited;             /* the fastest did not fit: chosen under the
	                             memory limit (time + lambda x memory) */
	double uniform[PL_MODES]; /* each uniform assignment's iteration, priced
	                             as `time`; INFINITY where it cannot split */
	double global_batch;
	double epoch;             /* seconds per epoch at `time` */
	bool recommended;         /* more than SIMPLER_WITHIN faster than the
	                             best uniform assignment under the same
	                             model, and than the recommended strategy:
	                             the recommendation (per_layer_recommend) */
} PerLayer;

/* Settings.recompute; > 0: every K */
enum { RECOMPUTE_NONE = 0, RECOMPUTE_FULL = -1, RECOMPUTE_ATTENTION = -2 };

/* What an analysis is asked for: oraclec's options, else the defaults of
 * settings_default (plan/analysis.h, documented in oraclec(1)).  One
 * field a row of ir/settings.def, which says what each is, its default
 * and how the engine's memos key on it.  An Analysis embeds them as
 * analysis_setup resolved them (Query.set). */
typedef struct Settings {
#define SETTING(type, name, dflt, shown, layer, plan) type name;
#include "ir/settings.def"
#undef SETTING
} Settings;

/* What --search leaves fixed: the options given. */
typedef struct SearchFix {
	bool schedule, zero, recompute, precision, sequence_parallel;
} SearchFix;

typedef struct Search {
	int evaluated, pruned;
	double deadline;          /* --search-time: clock_ms() to stop at; 0 none */
	bool stopped;             /* stopped at the deadline, some untried */
	double best;              /* the best feasible epoch found */
	SearchConfig top[SEARCH_TOP];
	int ntop;
	/* the fastest feasible configuration of each simplicity: ZeRO stage
	 * (FSDP's hybrid as 3) x grid dimensions used less one (dptc uses
	 * four) x recomputation (none, some); the first of top is the
	 * simplest within SIMPLER_WITHIN of the fastest (search_end) */
	SearchConfig simplest[4][DIM_COUNT][2];
	bool has_simplest[4][DIM_COUNT][2];
	char simpler[192];        /* why the first is not the fastest; "" when
	                             it is */
} Search;

/* What the user asked, as analysis_setup resolved it: the system, the
 * software stack and the settings (ir/settings.def).  With the model (the
 * graph, by its identity and version) it is the query every memo of the
 * engine keys on, through the key its table states (model/key.c). */
typedef struct Query {
	const System *sys;
	Implementation impl;      /* the software stack, with what the system
	                             file overrides (analysis_setup) */
	Settings set;             /* what was asked, resolved by analysis_setup:
	                             the GPUs; the batch per GPU (weak scaling;
	                             0 when the global batch is fixed) or the
	                             global batch (strong; 0 when weak); the
	                             dataset's samples and a sample's stored
	                             bytes filled in; the data kind never AUTO;
	                             virtual_stages at least 1; micro_batches 0
	                             when the model chooses; the loader's
	                             workers within its cores; zero_node: the
	                             shards a node's part of the data-parallel
	                             group (FSDP's HYBRID_SHARD, DeepSpeed's
	                             ZeRO++ hpZ); forward_only: no backward (the
	                             ParaDL CosmoFlow runs), gradients still
	                             exchanged, weights still updated */
} Query;

/* What a report says of the model's bytes at the query's precision, as
 * autograd keeps each operator's tensors: the memory and cost passes'
 * elements priced there (model_bytes, model/memuse.c). */
typedef struct ModelBytes {
	int item;             /* bytes an element: weights, full-width activations */
	int low;              /* autocast's low width; 0 without autocast */
	int64_t weights;      /* the parameters' */
	int64_t buffers;      /* the untrained state's: a module cast to 16 bits
	                         casts its float buffers too */
	int64_t act;          /* kept for backward per sample, the graph inputs'
	                         included */
	int64_t saved;        /* what autograd saves per sample in fp32, graph
	                         inputs excluded, whatever the precision */
	int64_t saved_fixed;  /* saved whatever the batch */
	int64_t saved_low;    /* autocast: what autograd saves per sample, 16-bit
	                         where autocast computes so, with the casts it
	                         saves; 0 without autocast */
	int64_t cast_weights; /* autocast's 16-bit copies of the convolution
	                         and linear weights for the step */
} ModelBytes;

/* Where a layer's time comes from (--layers' time_source): the size-aware
 * model, a kernel table's row at the batch, two rows around it, or a
 * profile (a trace, a CSV, a ParaDL table's times). */
typedef enum TimeSource { TS_MODEL, TS_TABLE, TS_INTERPOLATED, TS_PROFILE, TS_COUNT } TimeSource;
/* "model", "table", "interpolated", "profile" (ir/grid.c) */
extern const char *const time_source_name[TS_COUNT];

/* A layer's time as --layers reports it: forward + backward at the
 * analysis's samples a GPU, whole, where it comes from; and where a
 * profile gave it, what the table or the model predicts instead
 * (predicted_s, predicted_src; NAN and TS_MODEL where none). */
typedef struct LayerTime {
	double time_s, predicted_s;
	TimeSource src, predicted_src;
} LayerTime;

/* A layer's bytes at the query's precision (layer_bytes): kept for
 * backward (as autograd keeps them), moved forward and backward per
 * sample. */
typedef struct LayerBytes {
	int64_t act, fwd, bwd;
} LayerBytes;

/* An analysis: its query, and what the passes, the cost models and the
 * planning found for it. */
struct Engine;

typedef struct Analysis {
	Query q;                  /* what was asked */
	struct Engine *eng;       /* where its figures are kept, shared by the
	                             analyses of one run (model/engine.h) */
	Recompute rc;             /* activation recomputation, from set.recompute */
	Transformer tf;           /* the model's dimensions as a transformer
	                             (graph_transformer; layers 0: not one) */
	double tf_flops[2];       /* a sequence transformer's standard FLOPs per
	                             sample (transformer_flops): [0] forward and
	                             backward, [1] with the recomputation rc
	                             runs; 0 for another model */
	Candidate cand[STRAT_COUNT];
	int best;                 /* index into cand of the recommended strategy
	                             (the decision's), -1 when none is */
	Warning warning[MAX_WARNINGS]; /* pass advice */
	int nwarning;
	Decision decision;        /* the one answer (strategies_run: the
	                             ranking's; decide: the search's or the
	                             per-layer splits') */
	const Search *search;     /* --search: the joint search; NULL without */
	PerLayer *per_layer;      /* --per-layer; NULL without */
	struct Analysis *sweep;   /* --sweep: the same analysis on 1, 2, 4, ...
	                             GPUs up to gpus (and gpus itself); main.c */
	int nsweep;
	double node_scaling;      /* in a sweep's analysis: its best strategy's
	                             throughput a GPU over that of the sweep's
	                             one node (the most GPUs up to a node);
	                             0: none fits, at either (plan/sweep.c) */
	int64_t node_gpus;        /* --sweep: the GPUs of that one node's point */
	bool max_batch;           /* --max-batch: cand[].max_batch are set */
	/* what the recommendation line says besides the warnings (advise):
	 * why nothing is recommended, else why the recommendation is not the
	 * fastest (the simpler within SIMPLER_WITHIN, or per-layer splits) */
	char why_none[480];       /* "" when a strategy is recommended */
	char note[2][480];
	int nnote;
	int fastest;              /* index into cand of the shortest feasible
	                             epoch (best is the simplest within
	                             SIMPLER_WITHIN of it); -1 when none */
	/* what the report prints of the model's bytes, which the backends do
	 * not compute (analysis_report_bytes) */
	ModelBytes bytes;
	const LayerBytes *layer_bytes; /* each layer's; NULL where the report
	                             prints none */
	const LayerTime *layer_times; /* each layer's time, likewise */
} Analysis;

/* precision.c: what training keeps (Graph.keep, counted in elements by
 * the memory pass) in bytes.  k at `wide` bytes an element and autocast's
 * `narrow` (fixed bytes as they are); the passes check every count at
 * precision_widest, so these do not overflow at any precision's widths. */
static inline int64_t
kept_at(const Kept *k, int wide, int narrow)
{
	return k->wide * wide + k->narrow * narrow + k->fixed;
}
/* k at precision p's widths. */
static inline int64_t
kept_bytes(const Kept *k, Precision p)
{
	return kept_at(k, precision_bytes(p), precision_low(p));
}
/* How training keeps activations at p: under autocast where p has a low
 * width, else every one at its width. */
KeepRegime precision_regime(Precision p);
/* g's count (PASS_MEMORY done) at p: its attentions fused where `fused`
 * and g has attentions a fused kernel runs. */
const Keeps *graph_keeps(const Graph *g, Precision p, bool fused);
/* Whether s has the peak precision p's matrix products run at (TF32
 * runs at fp32's where a GPU lacks it, as PyTorch does). */
bool system_runs(const System *s, Precision p);
/* Timed layer i's measured seconds per sample at p (Graph.measured),
 * backward or forward. */
double layer_measured(const Graph *g, int i, Precision p, bool bwd);

/* Mean accuracies over a set of rows (pass validate). */
typedef struct Accuracy {
	int n, n_paradl;
	double oraclec, paradl;   /* means; NAN when n (n_paradl) is 0 */
} Accuracy;

/* Kendall's tau between measured and predicted times over the pairs of
 * rows whose measured times differ (pass validate). */
typedef struct Ranking {
	int64_t pairs;
	double tau;               /* NAN when no pair */
} Ranking;

typedef struct Validation {
	Measured *row;
	int nrow;
	Accuracy per[STRAT_COUNT];
	Accuracy all;
	Accuracy mem;             /* peak memory, over the rows that measured
	                             it (oraclec's only) */
	Ranking rank, rank_paradl; /* oraclec's predictions, ParaDL's */
} Validation;

#endif
