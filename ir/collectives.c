/* collectives.c -- the collectives' names as nccl-tests spells them. */
#include "ir/collectives.h"

const char *const coll_test_name[COLL_COUNT] = {
	[COLL_ALLREDUCE] = "all_reduce",         [COLL_ALLGATHER] = "all_gather",
	[COLL_REDUCESCATTER] = "reduce_scatter", [COLL_BROADCAST] = "broadcast",
	[COLL_ALLTOALL] = "alltoall",            [COLL_SENDRECV] = "sendrecv",
};
