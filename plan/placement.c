/* placement.c -- where the recommended strategy's ranks run, and what
 * each one does: the plan that --plan writes (docs/plans.md).
 *
 * The ranks sit as mapping.c maps the grid, the placement the cost model
 * priced (docs/model.md, "Placement"): the dimensions outer to inner
 * (data, pipeline, then the split inside a layer: spatial, channel,
 * filter), ranks numbering the grid row-major, so the inner, chattier
 * dimension varies fastest and consecutive ranks fill a node's GPUs.
 *
 * A pipeline's stages must begin at a block (modules.c).  With --plan the
 * analysis already cut only there (main.c hands it the modules' cut
 * points), so the plan lists the stages, times and memory the prediction
 * gave; nothing is predicted here. */
#include "model/model.h"
#include "plan/plan.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

/* The grid's place on the nodes, and each rank's node, GPU and
 * coordinates. */
static void
ranks(const Graph *g, const System *s, Placement *pl)
{
	const int64_t *grid = pl->k->grid;
	Mapping m;

	grid_map(s, grid, pl->k->nest, &m);
	pl->ndim = m.ndim;
	for (int d = 0; d < m.ndim; d++)
		pl->dim[d] = m.dim[d];
	pl->gpus = m.gpus;
	pl->gpus_per_node = s->gpus_per_node;
	pl->nodes = m.nodes;
	pl->per_node = (int)m.per_node;
	pl->span = system_span(s, pl->nodes);
	pl->rank = arena_array(g->arena, (size_t)pl->gpus, sizeof *pl->rank);
	for (int64_t r = 0; r < pl->gpus; r++) {
		PlaceRank *k = &pl->rank[r];
		int64_t rest = r;
		grid_rank(&m, r, &k->node, &k->gpu);
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
	pl->micro_batches = k->micro_batches > 1 ? k->micro_batches : 1;
	pl->micro_batch = pl->replica_batch / (double)pl->micro_batches;
	parts = pl->replicas * pl->micro_batches; /* a pipeline has one replica */
	if (B % parts == 0)
		return true;
	below = B / parts * parts;
	above = below + parts;
	if (pl->micro_batches > 1)
		diag_error(
			at,
			"the plan's micro-batch of %g samples is not whole: the global "
			"batch of %" PRId64 " does not split into %" PRId64 " micro-batches; "
			"a multiple of %" PRId64 " does (such as %s%" PRId64 "); no plan written",
			pl->micro_batch, B, parts, parts,
			below > 0 ? arena_printf(g->arena, "%" PRId64 " or ", below) : "", above);
	else
		diag_error(
			at,
			"the plan's batch per replica of %g samples is not whole: the "
			"global batch of %" PRId64 " does not split over %" PRId64 " replicas; "
			"a multiple of %" PRId64 " does (such as %s%" PRId64 "); no plan written",
			pl->replica_batch, B, parts, parts,
			below > 0 ? arena_printf(g->arena, "%" PRId64 " or ", below) : "", above);
	return false;
}

/* Why the forced grid has no plan when its pipeline could begin stages
 * only at blocks: the blocks, where the grid would have run with stages
 * ending after any layer (the stages the blocks allow, "at most"), else
 * the grid's own reason, blocks unsaid (ZeRO 2 with a pipeline). */
static bool
blocked(const Graph *g, const Analysis *an, const StrategyOpts *o, const Candidate *k)
{
	Loc at = { g->source, 0, 0 };
	char grid[GRID_TEXT_MAX];
	Analysis a = *an;
	StrategyOpts free = *o;
	Candidate any;

	free.cut_after = NULL;
	strategy_predict(g, &a, &free, o->kind, o->grid, &any);
	if (!any.feasible)
		return false;
	grid_format(o->grid, grid_order, DIM_COUNT, grid, sizeof grid);
	if (!k->computable)
		diag_error(at, "%s with stages at block boundaries: %s (at most %" PRId64 "); no "
			   "plan written", grid, k->reason, k->max_gpus);
	else
		diag_error(at, "%s with stages at block boundaries: %s; no plan written", grid,
			   k->reason);
	return true;
}

/* The pipeline's stages as predicted, with their modules and the
 * micro-batches each holds; false when the model gave no stage times. */
static bool
stages(const Graph *g, const Analysis *an, Placement *pl)
{
	const Candidate *k = pl->k;
	const Modules *m = &pl->mod;
	int64_t M = k->micro_batches > 1 ? k->micro_batches : 1;

	if (!k->stage_time) {
		diag_error((Loc){ g->source, 0, 0 }, "a pipeline plan needs the default cost "
			   "model: the paper's formulas give no stage times (--cost-model "
			   "default)");
		return false;
	}
	pl->nstage = k->stages;
	pl->checkpoint = pipeline_checkpoint(an);
	pl->stage = arena_array(g->arena, (size_t)k->stages, sizeof *pl->stage);
	pl->layout = m->stack;
	pl->layout_why = m->stack_why;
	for (int i = 0; i < k->stages; i++) {
		PlaceStage *st = &pl->stage[i];
		st->first = i ? k->stage_end[i - 1] + 1 : 0;
		st->last = k->stage_end[i];
		st->ufirst = m->unit_of[st->first];
		st->ulast = m->unit_of[st->last];
		st->time = k->stage_time[i];
		st->mem = k->stage_mem[i];
		st->held =
			pipeline_held(an->q.set.schedule,
				      an->q.set.virtual_stages > 1 ? an->q.set.virtual_stages : 1,
				      M, k->stages, i);
		st->checkpointed = pipeline_checkpointed(an, M, st->held, &st->whole);
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
	return true;
}

/* The model chunks each pipeline rank runs: the interleaved schedule's V
 * on a pipeline, else 1 (a grid without one has no schedule).  Megatron-LM
 * (megatron/training/arguments.py, transformer_block.py) reads a
 * --pipeline-model-parallel-layout of pipeline x V stages as V chunks per
 * rank and refuses it beside --num-virtual-stages-per-pipeline-rank; its
 * even split gives each rank's layers to its V chunks in equal parts.  The
 * interleaved cost model prices V equal chunks (a bubble of (S - 1) T / V),
 * so the plan's layout splits each stage's blocks evenly, and a V that
 * does not divide them is refused: Megatron's rule, and the prediction's. */
static bool
chunks(const Graph *g, const Analysis *an, const StrategyOpts *o, Placement *pl)
{
	int64_t v = an->q.set.virtual_stages, common = 0;
	int bad = -1;
	char *held;
	size_t n = 0;

	if (pl->nstage < 2 || an->q.set.schedule != SCHED_INTERLEAVED || v < 2)
		return true;
	pl->chunks = (int)v;
	if (!o->megatron || !pl->layout)
		return true;
	for (int i = 0; i < pl->nstage; i++) {
		int64_t a = common, b = pl->stage[i].blocks;
		while (b) { /* the blocks' greatest common divisor */
			int64_t t = a % b;
			a = b;
			b = t;
		}
		common = a;
		if (bad < 0 && pl->stage[i].blocks % v)
			bad = i;
	}
	if (bad < 0)
		return true;
	held = arena_alloc(g->arena, (size_t)pl->nstage * 24 + 1);
	for (int i = 0; i < pl->nstage; i++)
		n += (size_t)sprintf(held + n, "%s%d", i ? ", " : "", pl->stage[i].blocks);
	diag_error(
		(Loc){ g->source, 0, 0 },
		"--schedule interleaved:%" PRId64 " with --plan megatron: Megatron-LM gives each "
		"pipeline rank's blocks to its %" PRId64 " model chunks in equal parts, and stage "
		"%d holds %d block%s (the stages hold %s); %s; no plan written",
		v, v, bad, pl->stage[bad].blocks, pl->stage[bad].blocks == 1 ? "" : "s", held,
		common > 1 ? arena_printf(g->arena, "V must divide %" PRId64, common)
			   : "no V above 1 divides them all");
	return false;
}

/* The prediction's recomputation of segments of k layers as segments of
 * the model's blocks (its transformer layers: Megatron-LM's
 * --recompute-num-layers under --recompute-method uniform, 1 = every
 * layer checkpointed), the nearest whole count from 1 to the blocks; 0
 * without recomputation or blocks.  ViT-B/16 under --recompute full
 * checkpoints segments of 72 IR layers, about 3 of its 12 encoder
 * layers, not 72 of them (issue 38). */
static int
recompute_blocks(const Modules *m, int k)
{
	int blocks = 0, layers = 0;
	long n;

	for (int u = 0; u < m->nunit; u++)
		if (m->unit[u].block)
			blocks++, layers += m->unit[u].last - m->unit[u].first + 1;
	if (k <= 0 || !blocks)
		return 0;
	n = lround((double)k * blocks / layers);
	return n < 1 ? 1 : n > blocks ? blocks : (int)n;
}

const bool *
plan_cuts(const Graph *g, const Modules *m)
{
	for (int i = 0; i + 1 < g->nlayer; i++)
		if (!m->cut_after[i])
			return m->cut_after;
	return NULL;
}

bool
placement_run(const Graph *g, const Analysis *an, const StrategyOpts *o, const Modules *mod,
	      Placement *pl)
{
	Loc at = { g->source, 0, 0 };

	*pl = (Placement){ .split = -1, .mod = *mod, .chunks = 1, .an = an };
	if (an->best < 0 && o->forced && o->cut_after && o->grid[DIM_PIPELINE] > 0 &&
	    blocked(g, an, o, &an->cand[o->kind]))
		return false;
	if (an->best < 0 && o->forced) { /* the grid asked for, and why not */
		char grid[GRID_TEXT_MAX];
		const Candidate *k = &an->cand[o->kind];
		grid_format(o->grid, grid_order, DIM_COUNT, grid, sizeof grid);
		diag_error(at, "%s on %s: %s; no plan written", grid, an->q.sys->name,
			   k->reason ? k->reason : "does not fit");
		return false;
	}
	if (!an->decision.k) {
		diag_error(at, "no strategy fits on %" PRId64 " GPU%s of %s: no plan written",
			   an->q.set.gpus, an->q.set.gpus == 1 ? "" : "s", an->q.sys->name);
		return false;
	}
	/* the decision's configuration, in its own analysis's settings */
	pl->k = an->decision.k;
	pl->an = an->decision.at;
	/* a plan of what the implementation does not run: said, not refused
	 * (the options asked for it; oraclec never proposes it) */
	for (int i = 0; i < an->nwarning; i++)
		if (strcmp(an->warning[i].code, "unsupported-by-implementation") == 0)
			diag_warn(at, "%s", an->warning[i].message);
	an = pl->an;
	tf32_switches(an, &pl->cudnn_tf32, &pl->matmul_tf32);
	pl->implementation = an->q.impl.name;
	pl->checkpoints = an->rc.k > 0 ? (g->nlayer + an->rc.k - 1) / an->rc.k : 0;
	pl->recompute_blocks = recompute_blocks(&pl->mod, an->rc.k);
	if (an->q.set.gpus > MAX_PLAN_RANKS) {
		diag_error(at, "a plan lists every rank: %" PRId64 " GPUs are more than %d",
			   an->q.set.gpus, MAX_PLAN_RANKS);
		return false;
	}
	if (pl->k->grid[DIM_PIPELINE] > 0) {
		if (!stages(g, an, pl) || !chunks(g, an, o, pl))
			return false;
		pl->recut = o->cut_after != NULL;
		if (pl->recut)
			diag_note(at,
				  "the plan's pipeline stages begin at blocks; a report without "
				  "--plan may cut inside them (docs/plans.md)");
	}
	if (pl->k->split >= 0)
		pl->split = pl->k->split;
	if (!batch(g, pl))
		return false;
	/* --sync-bn K: groups of K consecutive data-parallel ranks, as the
	 * model prices them (a grid whose data dimension K does not cut
	 * evenly is not feasible: sync_bn_refusal, so never the decision) */
	pl->sync_bn = sync_bn_group(an, pl->replicas);
	if (pl->sync_bn <= 1)
		pl->sync_bn = 0;
	ranks(g, an->q.sys, pl);
	return true;
}
