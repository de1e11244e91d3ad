/* decision.c -- the run's one answer (docs/model.md, "The
 * recommendation"): the search's first configuration under --search, else
 * the ranking's best strategy, and then the per-layer splits where they
 * are recommended over it.  Everything a run says it recommends -- the
 * text's recommendation line, JSON recommendation, best and each
 * strategy's rank, the HTML and every --plan -- reads this one object, so
 * no two of them can name different configurations (issue 38: the line
 * said fp32 at 0.0206 s where the search's table recommended amp-bf16 at
 * 0.0154 s, and --plan wrote the fp32 configuration).
 *
 * The decision carries a configuration as the search describes one
 * (SearchConfig), whatever dimensions it has, and the analysis of it: the
 * search's first is set up again under the settings it was evaluated
 * with (search_settings) and predicted again in full, its pipeline's
 * stages kept for the plan, which must give the figures the search gave. */
#include "model/model.h"
#include "plan/analysis.h"
#include "plan/plan.h"

#include <math.h>

/* The next best's epoch over the first's among the search's best: 0 where
 * a faster one lost to the first's simplicity, or where none is
 * feasible. */
static double
runner_up(const Search *s)
{
	double next = INFINITY;

	for (int i = 1; i < s->ntop; i++) {
		const SearchConfig *c = &s->top[i];
		if (!c->feasible)
			continue;
		if (c->epoch < s->top[0].epoch)
			return 0;
		if (c->epoch < next)
			next = c->epoch;
	}
	return isfinite(next) && s->top[0].epoch > 0 ? next / s->top[0].epoch : 0;
}

/* The search's first as its own analysis (in a), an's decision: that
 * analysis, or an where nothing the search evaluated is feasible (it
 * stopped at --search-time before one was: the ranking's stands); NULL
 * after an input error. */
static Analysis *
searched(const Graph *g, Analysis *an, const StrategyOpts *so, const Settings *set,
	 const SearchFix *fix, Arena *a)
{
	const Search *s = an->search;
	const SearchConfig *c = &s->top[0];
	Settings at;
	StrategyOpts o = *so;
	Analysis *d;
	Candidate *k;

	if (!s->ntop || !c->feasible)
		return an;
	at = search_settings(set, fix, c);
	d = arena_alloc(a, sizeof *d);
	if (!analysis_setup(d, an->eng, &at, g, an->q.sys))
		return NULL;
	d->best = d->fastest = c->kind;
	d->search = s;
	d->per_layer = an->per_layer;
	k = &d->cand[c->kind];
	/* on the nesting the search found, every stage kept */
	o.nest = c->nest;
	o.beat = 0;
	o.no_stages = false;
	strategy_predict(g, d, &o, c->kind, c->grid, k);
	/* the engine's figures are bit for bit what computing them again
	 * gives: a difference is a configuration the search cannot describe
	 * again, which would make the plan another configuration's */
	if (!k->computable || k->t.total != c->iteration || k->epoch != c->epoch ||
	    k->mem.total != c->memory)
		die("the search's first predicted again gives %.17g s and %.17g bytes, "
		    "not %.17g s and %.17g bytes", k->t.total, k->mem.total, c->iteration,
		    c->memory);
	k->rank = 1;
	an->decision = (Decision){ .from = DECIDED_SEARCH, .c = *c, .at = d, .k = k,
				   .runner_up = runner_up(s) };
	return d;
}

bool
decide(const Graph *g, Analysis *an, const StrategyOpts *so, const Settings *set,
       const SearchFix *fix, Arena *a)
{
	PerLayer *pl = an->per_layer;
	Analysis *at = an->search ? searched(g, an, so, set, fix, a) : an;

	if (!at)
		return false;
	if (pl && pl->done) {
		double beat = an->decision.from != DECIDED_NONE ? an->decision.c.epoch : 0;
		per_layer_recommend(an, beat, pl);
		if (pl->recommended)
			an->decision.from = DECIDED_PER_LAYER;
	}
	/* the table's recommended row: the decision's strategy */
	if (an->decision.k)
		an->best = an->decision.c.kind;
	strategy_ranks(an);
	/* the plans read it in the configuration's analysis */
	if (at != an)
		at->decision = an->decision;
	return true;
}
