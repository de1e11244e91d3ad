/* colltable.c -- a table of measured collectives looked up
 * (model/colltable.h). */
#include "model/colltable.h"

#include <math.h>
#include <stddef.h>

void
colltable_runs(const CollTable *t, Coll c, int64_t ranks, const CollRun **lo,
	       const CollRun **hi)
{
	*lo = *hi = NULL;
	for (int i = 0; t && i < t->nrun; i++) {
		const CollRun *r = &t->run[i];
		if (r->coll != c)
			continue;
		if (r->ranks <= ranks)
			*lo = r; /* sorted by ranks: the last one up to it */
		else if (!*hi)
			*hi = r;
	}
}

bool
colltable_time(const CollRun *r, double bytes, double *seconds)
{
	int lo = 0, hi = r->n;
	double a0, a1, f;

	if (!(bytes > 0) || !isfinite(bytes) || r->n == 0 || bytes < r->bytes[0] ||
	    bytes > r->bytes[r->n - 1])
		return false;
	while (lo < hi) { /* the first size at or above bytes */
		int mid = lo + (hi - lo) / 2;
		if (r->bytes[mid] < bytes)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (r->bytes[lo] == bytes) {
		*seconds = r->seconds[lo];
		return true;
	}
	a0 = r->bytes[lo - 1] / r->seconds[lo - 1];
	a1 = r->bytes[lo] / r->seconds[lo];
	f = log(bytes / r->bytes[lo - 1]) / log(r->bytes[lo] / r->bytes[lo - 1]);
	*seconds = bytes / (a0 + (a1 - a0) * f);
	return true;
}

const CollRun *
colltable_send(const CollTable *t, int64_t gpus_per_node, bool across)
{
	for (int i = 0; t && i < t->nrun; i++) {
		const CollRun *r = &t->run[i];
		if (r->coll == COLL_SENDRECV && r->ranks >= 2 &&
		    (across ? r->ranks > gpus_per_node : r->ranks <= gpus_per_node))
			return r;
	}
	return NULL;
}
