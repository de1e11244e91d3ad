/* implementation.h -- the software stack that realizes the strategies on a
 * system: how a framework sends, exchanges halos, loads input and overlaps
 * its gradient exchange (docs/systems.md, "Implementations"; the cost model
 * in docs/model.md reads it).  A System says what the hardware is; an
 * Implementation says what the software does with it.  Frontends build it
 * (ODL `implementation` blocks, built-in or from a file); the keys are the
 * table ir/implkeys.def. */
#ifndef ORACLEC_IR_IMPLEMENTATION_H
#define ORACLEC_IR_IMPLEMENTATION_H

#include "ir/grid.h"
#include "ir/system.h"

/* The most workers of one loading process, in an implementation file and
 * on the command line (--loader-workers) alike. */
enum { MAX_LOADER_WORKERS = 1 << 20 };

typedef struct Implementation {
	const char *name;
	const char *source;        /* "built-in" or the file */
	const char *base;          /* the built-in whose values the keys a
	                              description leaves out take ("": the
	                              generic defaults) */
	const char *framework;     /* for reports: "Chainer 7 + ChainerMN", ... */
	/* the host that issues the kernels (docs/model.md, "The host lane") */
	double dispatch;           /* CPU seconds to issue one operator: from
	                              the framework's call through its
	                              dispatcher (and autograd's record, or its
	                              engine's node in backward) to the
	                              kernel's launch */
	double library_call;       /* CPU seconds a call into cuDNN adds to it
	                              (a convolution's fprop, dgrad or wgrad, a
	                              batch norm's forward or backward): the
	                              library's plan lookup and launch */
	double step_tensor;        /* CPU seconds a foreach optimizer step (and
	                              a loss scaler's unscale) spends in Python
	                              per parameter tensor, gathering its
	                              gradient and state */
	/* point-to-point sends (halos, pipeline activations) and the
	 * layer-wise collectives of the model-parallel strategies */
	const char *transport;     /* "device": NCCL between GPU buffers;
	                              "host": staged through host memory */
	double send_latency;       /* software cost of one send, seconds */
	double staging_bw;         /* transport "host": bytes/s of each copy
	                              between a GPU and host memory */
	const char *halo;          /* "pairwise": every strip sends to both
	                              neighbours at once; "chain": blocking
	                              sends rank to rank, one after another */
	const char *strips;        /* spatial: "exact" (each GPU computes 1/p of
	                              a layer's rows) or "halo-rows" (a strip is
	                              padded by its exchanged halo rows, so it
	                              keeps rows an exact split drops, and its
	                              pooling covers all: ParaDL's chainermnx) */
	const char *after_gather;  /* spatial: the layers after the gather run
	                              "split" (data parallel on the group's
	                              samples) or "replicated" (every GPU on all
	                              of them) */
	const char *model_loader;  /* input of a model-parallel group: "process"
	                              (each GPU's process loads its share) or
	                              "node" (one loader per node; every GPU
	                              copies the whole node batch) */
	int loader_workers;        /* CPU workers per loading process, 1 to
	                              MAX_LOADER_WORKERS */
	double decode_bw;          /* compressed (JPEG) bytes one worker decodes
	                              and augments per second */
	double raw_sample;         /* worker CPU seconds per uncompressed sample
	                              (crop, flip, to tensor) */
	bool overlap_grad;         /* gradient all-reduce in buckets, started as
	                              backward produces them */
	double bucket;             /* bytes per gradient bucket */
	int grad_copies;           /* copy kernels per parameter tensor around
	                              the exchange: 2 for DDP's reducer (each
	                              gradient into its bucket, and back), 1
	                              for a copy back from a flattened buffer,
	                              0 where gradients are views of the
	                              buckets or copied in batches */
	bool broadcast_buffers;    /* every forward broadcasts the buffers
	                              (batch norm's running statistics) from
	                              one rank and copies them back one by one
	                              (DDP's broadcast_buffers) */
	const char *depthwise;     /* 2-D depthwise convolutions: "cudnn", or
	                              "aten" as PyTorch selects: cuDNN for
	                              channels-last or fp16 tensors, its own
	                              CUDA kernels otherwise, whose weight
	                              gradient re-reads its operands once per
	                              filter tap (docs/model.md) */
	bool conv_tf32;            /* fp32 convolutions run in TF32 where the GPU
	                              has it (cuDNN's default in PyTorch) */
	const char *nchw_transposes; /* the layout transposes around a tensor-core
	                              convolution on NCHW tensors: "each-pass"
	                              (cuDNN 8: every pass's input and output,
	                              forward and backward), "once" (cuDNN 9:
	                              forward's input and output, backward's
	                              output gradient) */
	const char *conv_search;   /* how cuDNN's convolution algorithm is chosen:
	                              "benchmark" (every algorithm timed, the
	                              fastest kept: Winograd where it wins;
	                              cudnn.benchmark = True) or "heuristic"
	                              (the library's guess: implicit GEMM) */
	const char *attention;     /* "eager": an attention's operators one by
	                              one, as autograd records them; "fused":
	                              one kernel (scaled_dot_product_attention)
	                              where the model lets it (Layer.attn) */
	/* the optimizer step (docs/model.md, "Optimizer update") */
	const char *optimizer_step; /* "fused": one kernel per parameter tensor;
	                              "per-op": torch.optim's loop, each of the
	                              optimizer's tensor operations a kernel;
	                              "foreach": each operation one call over
	                              every tensor, a kernel per chunk of them
	                              (torch.optim's default since 2.0) */
	const char *master_weights; /* "none": the weights as the precision
	                              holds them (fp16 and bf16: a model cast
	                              whole); "fp32": Megatron-LM's --fp16 and
	                              --bf16, a 16-bit module whose optimizer
	                              keeps fp32 main weights (and for bf16
	                              fp32 main gradients) -- model/zero.c */
	bool zero_grad;            /* a kernel per gradient tensor clears it
	                              every iteration */
	const char *step_sync;     /* when the CPU waits for the GPU before the
	                              step, then issues it to an idle GPU:
	                              "never" (the CPU runs iterations ahead),
	                              "amp" (fp16 loss scaling reads its inf
	                              check first), "always" (a loss read, a
	                              communicator's stream sync) */
	const char *zero_partition; /* how ZeRO stage 1 shares the optimizer
	                              state out: "tensors", whole parameters to
	                              each rank (ZeroRedundancyOptimizer), or
	                              "flat", one slice of the flattened
	                              parameters (DeepSpeed); stages 2 and 3 are
	                              flat in both (FSDP's FlatParameter) */
	const char *pipe_checkpoint; /* the micro-batches whose stage forward a
	                              pipeline keeps only the input of and runs
	                              again in backward: "never", "except-last"
	                              (torchgpipe's Pipe: all but the last) or
	                              "always"; --recompute replaces it */
	const char *pipe_driver;   /* who issues a pipeline's stages: "process",
	                              a process per stage; "threads", one
	                              process whose worker thread per GPU runs
	                              the Python forward under one interpreter
	                              lock (torchgpipe's Pipe) */
	/* what it can run (docs/systems.md, "What an implementation runs"):
	 * comma lists of words; the search tries only these, a strategy
	 * outside them is not recommended, and an option outside them is
	 * warned of */
	const char *precisions;    /* --precision's words: "fp32,tf32,..." */
	const char *zero_stages;   /* "0", "1", "2", "3" and "hybrid" (FSDP's
	                              HYBRID_SHARD, ZeRO++'s hpZ) */
	const char *schedules;     /* "gpipe", "1f1b", "interleaved"; "" where
	                              no pipelined strategy is listed */
	const char *strategies;    /* ir/strategies.def's names */
	const char *recompute;     /* "none", "segments" (checkpoints every K
	                              layers), "selective" (attention's core) */
	/* the lockstep at scale and fused kernels (docs/model.md,
	 * "Collectives", "Fused kernels") */
	bool fuse_bn_relu;         /* a batch norm and the ReLU after it run as
	                              one kernel each way */
	bool fuse_bn_add_relu;     /* a batch norm, the residual add after it and
	                              the ReLU after that as one kernel */
	bool conv_bn_stats;        /* a convolution's epilogue sums its output
	                              for the batch norm after it and the next
	                              convolution applies that norm and its
	                              ReLU as it reads its input (NVIDIA's
	                              NormalizedConvolution): neither writes a
	                              tensor of its own in forward */
	int grad_groups;           /* the gradients all-reduced in this many
	                              groups of equal tensor counts, each once
	                              all its gradients are ready (MXNet
	                              Horovod's num_groups); 0: by bucket only */
	int grad_group_tensors;    /* the gradients all-reduced in groups
	                              counted from the output's end, group o
	                              (from 0) the tensors U o^p to
	                              U (o+1)^p - 1, U this, p by
	                              grad_group_growth (Fujitsu's Horovod:
	                              HOROVOD_MULTIPLE_TRANSFER_MODE with
	                              HOROVOD_FIXED_TRANSFERSIZE); 0: none */
	const char *grad_group_growth; /* p: "fixed" 1, "quadratic" 2,
	                              "cubic" 3 (HOROVOD_QUADRATIC_, _CUBIC_
	                              TRANSFER_MODE) */
	const char *allreduce;     /* the data-parallel gradients' all-reduce:
	                              "flat", one collective over every rank
	                              (NCCL's rings and trees run through the
	                              nodes); "hierarchical", a reduce-scatter
	                              inside each node, an all-reduce of each
	                              GPU's 1/k across the nodes, an all-gather
	                              inside (NVIDIA's Horovod,
	                              HOROVOD_ALLREDUCE_MODE=1) */
	bool cuda_graphs;          /* the step replayed as CUDA graphs: no
	                              operator's CPU cost, one launch a graph */
	const char *nccl_version;  /* the NCCL the collectives run on, "2.3.7"
	                              ("2.3": rings only), or "none": the
	                              alpha-beta model of rings and trees */
	/* derived from the strings above by implementation_check */
	int nccl;                  /* nccl_version as 2.3.7 = 20307; 0: none */
	int grad_group_power;      /* grad_group_growth's p */
	bool staged, chain, halo_rows, replicated, node_loader, aten_depthwise, flat_zero,
	     pipe_threads, fused_attention, transposes_once, conv_benchmark, master_fp32,
	     hier_allreduce;
	enum { STEP_FUSED, STEP_PER_OP, STEP_FOREACH } step;
	enum { SYNC_NEVER, SYNC_AMP, SYNC_ALWAYS } sync;
	enum { CKPT_NEVER, CKPT_EXCEPT_LAST, CKPT_ALWAYS } ckpt;
	/* what it does not run, a bit per word of the lists above (0: it
	 * runs everything, so an Implementation left zero restricts nothing):
	 * precisions by Precision, ZeRO stages 0-3 and bit 4 for hybrid,
	 * schedules by Schedule, strategies by StrategyKind, recomputation
	 * bit 0 segments and bit 1 selective */
	unsigned no_prec, no_zero, no_sched, no_strat, no_rc;
} Implementation;

/* implementation.c */

/* The generic implementation: an eager framework on NCCL, the values of
 * the built-in `pytorch` (frontend/builtin_impl.c, which states their
 * sources), for the keys a description leaves out. */
void implementation_defaults(Implementation *im);
/* Derives the flags from the string keys; NULL, or the first key whose
 * value is not one of its words (*want: those words, for a message). */
const char *implementation_check(Implementation *im, const char **want);
/* An NCCL version as implementation_check reads nccl_version: "2.3.7" is
 * 20307, "2.4" 20400, "none" 0; -1 when it is neither. */
int nccl_version_parse(const char *s);
/* The implementation as a user names it: a built-in's name, else the
 * file it was read from. */
const char *implementation_named(const Implementation *im);
/* Whether im runs precision p, ZeRO stage `zero` (hybrid: FSDP's
 * hybrid shard), pipeline schedule `sched` (a Schedule), strategy k,
 * recomputation k_rc (Recompute.k: 0 none, > 0 segments, < 0 selective). */
bool impl_runs_precision(const Implementation *im, Precision p);
bool impl_runs_zero(const Implementation *im, int zero, bool hybrid);
bool impl_runs_schedule(const Implementation *im, int sched);
bool impl_runs_strategy(const Implementation *im, StrategyKind k);
bool impl_runs_recompute(const Implementation *im, int k_rc);
/* What a system file still sets of the software's keys (dispatch,
 * p2p_latency, staging_bw, decode_bw; oraclec calibrate writes two of
 * them) overrides the implementation's. */
void implementation_override(Implementation *im, const System *s);
/* The implementation an analysis on system s runs, resolved here for
 * every caller (the analysis, so each run of validate and calibrate, and
 * calibrate's parameters through them): `chosen` (--implementation, a
 * measured run's implementation column) where given, else the one s
 * names, else the defaults (named "default"); then implementation_override
 * with s. */
Implementation implementation_resolve(const System *s, const Implementation *chosen);
/* implementation_resolve(s, NULL): the one s names. */
Implementation implementation_for(const System *s);

#define IMPLKEY(...) +1
enum { NIMPL_KEYS = 0
#include "ir/implkeys.def"
};
#undef IMPLKEY

extern const SysKey impl_keys[NIMPL_KEYS];

#endif
