/* collectives.h -- a table of measured collectives: nccl-tests' output
 * (all_reduce_perf and kin) as a system's `collectives` key names it
 * (docs/systems.md, "Measured collectives").  frontend/collectives.c
 * reads it; model/comm.c looks a collective up in it. */
#ifndef ORACLEC_IR_COLLECTIVES_H
#define ORACLEC_IR_COLLECTIVES_H

#include <stdint.h>

/* The collectives oraclec prices; the first COLL_NCCL are those NCCL's
 * tuning model prices (model/nccl.c). */
typedef enum Coll {
	COLL_ALLREDUCE, COLL_ALLGATHER, COLL_REDUCESCATTER, COLL_BROADCAST, COLL_NCCL,
	COLL_ALLTOALL = COLL_NCCL, COLL_SENDRECV, COLL_COUNT
} Coll;

/* nccl-tests' names: all_reduce, all_gather, ... (the program without
 * "_perf"), by Coll. */
extern const char *const coll_test_name[COLL_COUNT];

/* One run: a collective over `ranks` ranks, its sizes ascending, each
 * with its seconds (nccl-tests' time, in place where measured).  A size
 * is nccl-tests' `size` column: the message of an all-reduce or a
 * broadcast, the whole gathered result of an all-gather, the whole input
 * of a reduce-scatter, a rank's buffer of an all-to-all, a rank's send of
 * a send/receive. */
typedef struct CollRun {
	Coll coll;
	int64_t ranks;
	int n;
	const double *bytes, *seconds;
	const char *path;     /* where the run starts, for messages */
	int line;
} CollRun;

/* The runs, sorted by collective, then ranks; at most one run of a
 * collective and rank count (a second is an error where read). */
typedef struct CollTable {
	const char *path;
	const CollRun *run;
	int nrun;
} CollTable;

#endif
