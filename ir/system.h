/* system.h -- the cluster: GPUs in nodes, nodes in a switched network
 * (docs/systems.md).  Frontends build it (ODL system blocks, built-ins,
 * ParaDL .plat files); the cost models read it. */
#ifndef ORACLEC_IR_SYSTEM_H
#define ORACLEC_IR_SYSTEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/collectives.h"
#include "util/diag.h"

enum { MAX_LEVELS = 4 };

/* The number formats a GPU computes in, each with its own peak rate. */
/* DT_FP8: Transformer Engine's FP8 tensor-core GEMMs (E4M3 forward, E5M2
 * backward: its "hybrid" recipe), Hopper and later */
typedef enum Dtype { DT_FP32, DT_TF32, DT_FP16, DT_BF16, DT_FP8, DT_COUNT } Dtype;

/* The training precisions: ir/precision.def. */
typedef enum Precision {
#define PRECISION(id, name, bytes, matmul, other, low) id,
#include "ir/precision.def"
#undef PRECISION
	PREC_COUNT
} Precision;

typedef struct PrecisionInfo {
	const char *name;
	int bytes;        /* weights, gradients, full-precision activations */
	Dtype matmul;     /* convolutions and matrix products */
	Dtype other;      /* the other layers */
	int low;          /* bytes of autocast's lower-precision activations;
	                     0: no autocast */
} PrecisionInfo;

extern const PrecisionInfo precision_info[PREC_COUNT];

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
	double peak[DT_COUNT];    /* FLOP/s per number format; 0 = not supported */
	double mem;               /* GPU memory, bytes */
	double mem_bw;            /* GPU memory bandwidth, bytes/s */
	int gpus_per_node;
	const char *intra;        /* "nvlink", "nvswitch", "pcie": the link in a node */
	double intra_bw;          /* bytes/s per GPU inside a node */
	double intra_lat;         /* start-up latency of a message inside a node */
	double nic_bw;            /* bytes/s a node injects into the network */
	double nic_lat;           /* start-up latency of a message between nodes */
	const char *implementation; /* the software stack the system runs by
	                             default (ir/implementation.h); NULL: pytorch.
	                             A file's path is the system file's
	                             directory's, as an include's */
	Loc implementation_at;    /* where the system file names it */
	const char *kernels;      /* a kernel table of this GPU's measured
	                             kernels (docs/kernel-table.md), from the
	                             system file's directory, or --kernels;
	                             NULL: none */
	Loc kernels_at;           /* where the system file names it */
	const struct KernelTable *table; /* that table, read with the system
	                             and never changed after (the memos key
	                             on the pointer: model/key.c); NULL: none */
	const struct Implementation *impl; /* that one, loaded with the system
	                             (frontend/system.c); NULL: the defaults */
	/* Three keys that describe the software, kept for system files that
	 * set them: -1 (the default) leaves them to the implementation, which
	 * a value given here overrides (docs/systems.md) */
	double p2p_lat;           /* the implementation's send_latency */
	double staging_bw;        /* the implementation's staging_bw (host-
	                             staged copies; oraclec calibrate fits it) */
	bool tree;                /* collectives may use trees (NCCL >= 2.4) */
	NetLevel level[MAX_LEVELS];
	int nlevels;
	double storage_bw;        /* training-data read bandwidth per node */
	double fs_file_rate;      /* training files the shared file system serves
	                             per second to the whole job; 0: no limit */
	double cache_files;       /* training files a node's page cache keeps
	                             from one epoch to the next; 0: none */
	int cpu_cores;            /* per node, for decoding input samples */
	double decode_bw;         /* the implementation's decode_bw */
	double eff_conv;          /* fraction of peak convolutions reach */
	double eff_gemm;          /* fraction of peak matrix products reach */
	double eff_conv_dt[DT_COUNT]; /* the same at one number format (tf32,
	                             fp16, bf16: the tensor cores'); -1: eff_conv */
	double eff_gemm_dt[DT_COUNT]; /* likewise; -1: eff_gemm */
	double eff_mem;           /* fraction of mem_bw element-wise kernels reach */
	double eff_norm_nchw;     /* fraction of mem_bw batch norm's kernels reach
	                             on NCHW tensors; -1: eff_mem */
	double eff_norm_nchw_dt[DT_COUNT]; /* the same for a batch norm on 16-bit
	                             tensors (fp16, bf16: autocast's); -1:
	                             eff_norm_nchw */
	double conv_1x1_scale;    /* 1x1 convolutions (pointwise: a plain product
	                             of the channels) reach eff_conv at their
	                             format times this; -1: 1 */
	double conv_grouped_scale; /* grouped and depthwise convolutions, likewise;
	                             -1: 1 */
	double kernel_lat;        /* GPU time per kernel beyond its work */
	/* one kernel as the GPU runs it (model/kernel.c, docs/model.md "One
	 * kernel"); sms 0: a plain roofline at the efficiencies above */
	int sms;                  /* streaming multiprocessors: a kernel's tiles
	                             run on them in waves */
	double tile_overhead;     /* a tile's time outside its main loop (loading
	                             its first operands, writing its result), in
	                             reduction steps (elements of K) */
	bool host_device;         /* the device is the CPU that issues the work:
	                             issuing and computing share its cores, the
	                             lanes do not overlap (a probed CPU) */
	double dispatch;          /* the implementation's dispatch */
	double reserved;          /* memory the runtime keeps (context, allocator) */
	/* the lockstep at scale (docs/model.md, "Collectives", "The slowest
	 * of N") */
	const char *collectives;  /* a table of measured collectives (nccl-tests'
	                             output, docs/systems.md), from the system
	                             file's directory; NULL: none */
	Loc collectives_at;       /* where the system file names it */
	const struct CollTable *colls; /* that table, read with the system
	                             (frontend/collectives.c); NULL: none */
	double jitter;            /* a GPU's step-to-step coefficient of
	                             variation: the spread the slowest of N
	                             ranks waits for (0: none) */
	double gpu_spread;        /* the GPU-to-GPU coefficient of variation of
	                             sustained speed among one cluster's GPUs
	                             of one model (manufacturing and power
	                             management): the same wait, for a slow
	                             chip instead of a slow step (0: none) */
	bool sharp;               /* the network's switches reduce (NCCL's
	                             CollNet, SHARP) */
	bool nvls;                /* the node's NVSwitch reduces (NVLink SHARP,
	                             NCCL's NVLS: third-generation NVSwitch) */
	double compute_capability; /* the GPU's CUDA compute capability, 7.0 for
	                             a V100: which NCCL protocols run and its
	                             per-GPU ceilings; 0: not given */
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
#define SYS_MAX_SCALE 1e6
#define SYS_MAX_OVERSUB 1e6
#define SYS_MAX_COUNT 1e15

/* system.c */
/* precision.c */
const char *precision_name(Precision p);
bool precision_parse(const char *s, Precision *p);
Dtype precision_dtype(Precision p, bool matmul);
/* Bytes of one element at precision p: a weight, a gradient, a
 * full-width activation (the table's bytes column).  Inline: the cost
 * model's loops over the layers ask. */
static inline int
precision_bytes(Precision p)
{
	return precision_info[p].bytes;
}
/* Bytes of an activation autocast computes in lower precision at p (the
 * table's low column); 0 without autocast. */
static inline int
precision_low(Precision p)
{
	return precision_info[p].low;
}
/* The widest element any precision stores, of both columns: the passes
 * check their counts against it, so that a model is refused the same way
 * at every precision (docs/limits.md). */
int precision_widest(void);
/* The lowest network level spanning `nodes` consecutive nodes (-1: one node). */
int system_span(const System *s, int64_t nodes);

/* ---- the keys of a system description (ir/syskeys.def) ------------------- */

/* The dimension of a quantity as ODL writes it (a number with a unit). */
typedef enum Unit { U_NONE, U_BYTES, U_SECONDS, U_BYTES_PER_S, U_FLOPS } Unit;

typedef enum SysKeyType { SK_REAL, SK_INT, SK_INT64, SK_BOOL, SK_STRING } SysKeyType;
/* The values a real key accepts (frontend/system.c has the bounds). */
typedef enum SysRange { SR_NONE, SR_RATE, SR_RATE0, SR_BYTES, SR_BYTES0, SR_SECS, SR_EFF,
			SR_OVERSUB, SR_COUNT, SR_SCALE, SR_FRACTION0, SR_CAPABILITY } SysRange;
typedef enum SysJson { SJ_SYSTEM, SJ_GPU } SysJson;

typedef struct SysKey {
	const char *name;   /* the ODL key */
	SysKeyType type;
	Unit unit;          /* SK_REAL: the dimension required (U_NONE: a plain number) */
	size_t off;         /* offsetof the field in System (or NetLevel) */
	bool required;
	SysRange range;     /* SK_REAL */
	const char *json;   /* the JSON report's name; NULL: not reported */
	SysJson group;      /* system keys: where JSON puts it */
} SysKey;

/* How many rows each table has. */
#define SYSKEY(...) +1
#define LEVELKEY(...)
enum { NSYS_KEYS = 0
#include "ir/syskeys.def"
};
#undef SYSKEY
#undef LEVELKEY
#define SYSKEY(...)
#define LEVELKEY(...) +1
enum { NLEVEL_KEYS = 0
#include "ir/syskeys.def"
};
#undef SYSKEY
#undef LEVELKEY

extern const SysKey sys_keys[NSYS_KEYS];
extern const SysKey level_keys[NLEVEL_KEYS];

#endif
