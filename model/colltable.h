/* colltable.h -- a table of measured collectives looked up
 * (model/colltable.c): a run by collective and ranks, a size's seconds
 * in a run (docs/systems.md, "Measured collectives").  Pure: it reads
 * the table frontend/collectives.c made and nothing else. */
#ifndef ORACLEC_MODEL_COLLTABLE_H
#define ORACLEC_MODEL_COLLTABLE_H

#include "ir/collectives.h"

#include <stdbool.h>

/* The runs of c around `ranks`: *lo the one of the most ranks up to
 * `ranks`, *hi the one of the fewest above it; NULL where none. */
void colltable_runs(const CollTable *t, Coll c, int64_t ranks, const CollRun **lo,
		    const CollRun **hi);
/* The seconds of `bytes` in run r: a size measured, else the algorithm
 * bandwidth (size over time) between the two sizes around it, linear in
 * log size, the time that size over it; false outside the sizes
 * measured (no extrapolation). */
bool colltable_time(const CollRun *r, double bytes, double *seconds);
/* The run of sends (sendrecv_perf) for a send inside a node (the fewest
 * ranks of at least 2 that fit in one of `gpus_per_node`) or across
 * nodes (the fewest above it); NULL when none. */
const CollRun *colltable_send(const CollTable *t, int64_t gpus_per_node, bool across);

#endif
