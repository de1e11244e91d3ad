/* placement.c -- where the recommended strategy's ranks run, and what
 * each one does: the plan that --plan writes (docs/plans.md).
 *
 * The grid's dimensions are ordered outer to inner: data, pipeline, then
 * the split inside a layer (spatial, channel, filter).  Ranks number the
 * grid row-major, so the inner, chattier dimension varies fastest, and
 * consecutive ranks fill a node's GPUs: a model-parallel group of q GPUs
 * sits inside one node when q fits (g / q groups to a node, the rest of
 * its GPUs idle when q does not divide g), else on ceil(q / g) nodes of
 * its own -- the placement the cost model assumed (docs/model.md,
 * "Placement").
 *
 * A pipeline's stages must begin at a block (modules.c): when the
 * report's optimal stages split one, the pipeline is predicted again with
 * cuts at block boundaries only, and the plan gives that prediction. */
#include "passes/model.h"
#include "passes/passes.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

static const GridDim order[] = { DIM_DATA, DIM_PIPELINE, DIM_SPATIAL, DIM_CHANNEL, DIM_FILTER };

static void
grid(Placement *pl)
{
	for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
		if (pl->k->grid[order[i]] > 0)
			pl->dim[pl->ndim++] = order[i];
}

/* Rank r's node, GPU and coordinates. */
static void
ranks(const Graph *g, const System *s, Placement *pl)
{
	const int64_t *grid = pl->k->grid;
	int64_t p1 = grid[DIM_DATA] > 0 ? grid[DIM_DATA] : 1, q = 1, gpn = s->gpus_per_node;
	int64_t per = 0, span = 0;

	for (int d = 0; d < pl->ndim; d++)
		if (pl->dim[d] != DIM_DATA)
			q *= grid[pl->dim[d]];
	pl->gpus = p1 * q;
	pl->gpus_per_node = s->gpus_per_node;
	if (q <= gpn) {
		per = gpn / q; /* groups to a node */
		pl->nodes = (p1 + per - 1) / per;
		pl->per_node = (int)((p1 < per ? p1 : per) * q);
	} else {
		span = (q + gpn - 1) / gpn; /* nodes to a group */
		pl->nodes = p1 * span;
		pl->per_node = (int)gpn;
	}
	pl->span = system_span(s, pl->nodes);
	pl->rank = arena_array(g->arena, (size_t)pl->gpus, sizeof *pl->rank);
	for (int64_t r = 0; r < pl->gpus; r++) {
		PlaceRank *k = &pl->rank[r];
		int64_t o = r / q, i = r % q, rest = r;
		k->node = q <= gpn ? o / per : o * span + i / gpn;
		k->gpu = (int)(q <= gpn ? (o % per) * q + i : i % gpn);
		for (int d = pl->ndim - 1; d >= 0; d--) {
			k->coord[pl->dim[d]] = rest % grid[pl->dim[d]];
			rest /= grid[pl->dim[d]];
		}
	}
}

/* The batch split: samples per replica and per micro-batch.  Frameworks
 * take whole samples only, so a split that leaves a fraction is refused,
 * naming the global batches around this one that split evenly. */
static bool
batch(const Graph *g, Placement *pl)
{
	const Candidate *k = pl->k;
	int64_t B = k->global_batch, parts, below, above;
	Loc at = { g->source, 0, 0 };

	pl->replicas = k->grid[DIM_DATA] > 0 ? k->grid[DIM_DATA] : 1;
	pl->replica_batch = (double)B / (double)pl->replicas;
	pl->micro_batches = k->kind == STRAT_PIPELINE ? k->micro_batches : 1;
	pl->micro_batch = pl->replica_batch / (double)pl->micro_batches;
	parts = pl->replicas * pl->micro_batches; /* a pipeline has one replica */
	if (B % parts == 0)
		return true;
	below = B / parts * parts;
	above = below + parts;
	if (pl->micro_batches > 1)
		diag_error(at, "the plan's micro-batch of %g samples is not whole: the global "
			   "batch of %" PRId64 " does not split into %" PRId64 " micro-batches; "
			   "a multiple of %" PRId64 " does (such as %s%" PRId64 "); no plan written",
			   pl->micro_batch, B, parts, parts,
			   below > 0 ? arena_printf(g->arena, "%" PRId64 " or ", below) : "", above);
	else
		diag_error(at, "the plan's batch per replica of %g samples is not whole: the "
			   "global batch of %" PRId64 " does not split over %" PRId64 " replicas; "
			   "a multiple of %" PRId64 " does (such as %s%" PRId64 "); no plan written",
			   pl->replica_batch, B, parts, parts,
			   below > 0 ? arena_printf(g->arena, "%" PRId64 " or ", below) : "", above);
	return false;
}

/* The report's stages, or stages at block boundaries. */
static bool
cut_at_blocks(const Graph *g, const Analysis *an, const StrategyOpts *o, Placement *pl)
{
	const Candidate *k = pl->k;
	Loc at = { g->source, 0, 0 };
	Analysis tmp = *an;
	StrategyOpts co = *o;
	bool ok = true;

	if (o->paper) {
		diag_error(at, "a pipeline plan needs the default cost model: the paper's "
			   "formulas give no stage times (--cost-model default)");
		return false;
	}
	for (int i = 0; i + 1 < k->stages; i++)
		ok = ok && pl->mod.cut_after[k->stage_end[i]];
	if (ok)
		return true;
	co.cut_after = pl->mod.cut_after;
	strategy_predict(g, &tmp, &co, STRAT_PIPELINE, k->grid, &pl->cut);
	if (!pl->cut.computable) {
		diag_error(at, "pipeline=%" PRId64 " with stages at block boundaries: %s (at most "
			   "%" PRId64 "); no plan written", k->grid[DIM_PIPELINE], pl->cut.reason,
			   pl->cut.max_gpus);
		return false;
	}
	if (!pl->cut.feasible) {
		diag_error(at, "pipeline=%" PRId64 " with stages at block boundaries: %s; no plan "
			   "written", k->grid[DIM_PIPELINE], pl->cut.reason);
		return false;
	}
	diag_note(at, "the report's pipeline stages split blocks; the plan's stages begin at "
		  "blocks: %.4f s per iteration instead of %.4f s", pl->cut.t.total, k->t.total);
	pl->k = &pl->cut;
	pl->recut = true;
	return true;
}

static void
stages(const Graph *g, const Analysis *an, Placement *pl)
{
	const Candidate *k = pl->k;
	const Modules *m = &pl->mod;
	double *time = xcalloc((size_t)k->stages, sizeof *time);
	double *mem = xcalloc((size_t)k->stages, sizeof *mem);

	pipeline_stage_costs(g, an, k, time, mem);
	pl->nstage = k->stages;
	pl->stage = arena_array(g->arena, (size_t)k->stages, sizeof *pl->stage);
	pl->layout = m->stack;
	pl->layout_why = m->stack_why;
	for (int i = 0; i < k->stages; i++) {
		PlaceStage *st = &pl->stage[i];
		st->first = i ? k->stage_end[i - 1] + 1 : 0;
		st->last = k->stage_end[i];
		st->ufirst = m->unit_of[st->first];
		st->ulast = m->unit_of[st->last];
		st->time = time[i];
		st->mem = mem[i];
		st->nmodules = modules_within(g, m, st->first, st->last, &st->modules);
		for (int u = st->ufirst; m->stack && u <= st->ulast; u++) {
			st->pre |= m->unit[u].role == 'E';
			st->post |= m->unit[u].role == 'L';
			st->blocks += m->unit[u].role == 't';
		}
		if (pl->layout && ((st->pre && i > 0) || (st->post && i + 1 < k->stages))) {
			pl->layout = false;
			pl->layout_why = st->pre ? "the layers before the blocks span more than "
						   "the first stage"
						 : "the layers after the blocks span more than "
						   "the last stage";
		}
	}
	free(time);
	free(mem);
}

bool
placement_run(const Graph *g, const Analysis *an, const StrategyOpts *o, Placement *pl)
{
	Loc at = { g->source, 0, 0 };

	*pl = (Placement){ .split = -1 };
	if (an->best < 0) {
		diag_error(at, "no strategy fits on %" PRId64 " GPU%s of %s: no plan written",
			   an->gpus, an->gpus == 1 ? "" : "s", an->sys->name);
		return false;
	}
	pl->k = &an->cand[an->best];
	if (an->gpus > MAX_PLAN_RANKS) {
		diag_error(at, "a plan lists every rank: %" PRId64 " GPUs are more than %d",
			   an->gpus, MAX_PLAN_RANKS);
		return false;
	}
	modules_derive(g, &pl->mod);
	if (pl->k->kind == STRAT_PIPELINE) {
		if (!cut_at_blocks(g, an, o, pl))
			return false;
		stages(g, an, pl);
	}
	if (pl->k->split >= 0)
		pl->split = pl->k->split;
	grid(pl);
	if (!batch(g, pl))
		return false;
	ranks(g, an->sys, pl);
	return true;
}
