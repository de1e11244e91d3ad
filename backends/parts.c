/* parts.c -- the columns of the reports' "iteration by part"
 * (backends.h). */
#include "backends/backends.h"

const IterColumn iter_column[ITER_COLUMNS] = {
	{ "compute", "compute", "compute", false },
	{ "bubble", "bubble", "bubble", false },
	{ "exchange", "exchange", "exchange", false },
	{ "reducer", "reducer", "reducer", false },
	{ "collect.", "collectives", "collectives", false },
	{ "p2p/halo", "p2p/halo", "p2p/halo", false },
	{ "update", "update", "update", false },
	{ "recompute", "recompute", "recompute", false },
	{ "copies", "copies", "copies", false },
	{ "host wait", "host wait", "host wait", false },
	{ "sync BN", "sync BN", "sync BN", true },
	{ "skew", "skew", "skew", true },
	{ "iteration", "iteration", "iteration", false },
	{ "input", "input", "input", false },
};

double
iter_column_value(const IterTime *t, int j)
{
	const double v[ITER_COLUMNS] = { t->compute, t->bubble,    t->grad,    t->reducer,
					 t->layer,   t->p2p,       t->update,  t->recompute,
					 t->feed,    t->dispatch,  t->sync_bn, t->skew,
					 t->total,   t->input };
	return v[j];
}

bool
iter_column_shown(const Analysis *an, int j)
{
	if (!iter_column[j].optional)
		return true;
	for (int k = 0; k < STRAT_COUNT; k++)
		if (an->cand[k].analysed && an->cand[k].computable &&
		    iter_column_value(&an->cand[k].t, j) > 0)
			return true;
	return false;
}
