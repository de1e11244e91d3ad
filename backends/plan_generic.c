/* plan_generic.c -- the generic plan: JSON, schema in docs/plans.md.
 * Everything the framework plans are made of: the grid, the rank table,
 * the batch split, the pipeline stages and the prediction. */
#include "backends/backends.h"
#include "backends/jsonout.h"

#include <jansson.h>

static json_t *
ranks_json(const Placement *pl)
{
	json_t *a = json_array();

	for (int64_t r = 0; r < pl->gpus; r++) {
		const PlaceRank *k = &pl->rank[r];
		json_t *o = json_object(), *c = json_object();
		set(o, "rank", json_integer(r));
		set(o, "node", json_integer(k->node));
		set(o, "gpu", json_integer(k->gpu));
		for (int d = 0; d < pl->ndim; d++)
			set(c, grid_dim_name[pl->dim[d]], json_integer(k->coord[pl->dim[d]]));
		set(o, "coord", c);
		json_array_append_new(a, o);
	}
	return a;
}

static json_t *
stage_json(const Graph *g, const Placement *pl, int i)
{
	const PlaceStage *st = &pl->stage[i];
	const ModUnit *u = &pl->mod.unit[st->ufirst];
	json_t *o = json_object(), *mods = json_array();

	set(o, "stage", json_integer(i));
	set(o, "first", jstr(g->layer[st->first].name));
	set(o, "last", jstr(g->layer[st->last].name));
	set(o, "first_index", json_integer(st->first));
	set(o, "last_index", json_integer(st->last));
	set(o, "begins_at", i ? jstr(u->name) : json_null());
	for (int m = 0; m < st->nmodules; m++)
		json_array_append_new(mods, jstr(st->modules[m]));
	set(o, "modules", mods);
	set(o, "time_s", json_real(st->time));
	set(o, "memory_bytes", json_integer((json_int_t)st->mem));
	set(o, "micro_batches_held", json_real(st->held));
	set(o, "micro_batches_checkpointed", json_real(st->checkpointed));
	set(o, "micro_batches_whole", json_real(st->whole));
	return o;
}

static json_t *
pipeline_json(const Graph *g, const Analysis *an, const Placement *pl)
{
	json_t *o = json_object(), *st = json_array();

	set(o, "schedule", jstr(schedule_name(an->q.set.schedule)));
	if (an->q.set.schedule == SCHED_INTERLEAVED)
		set(o, "virtual_stages", json_integer(an->q.set.virtual_stages));
	set(o, "micro_batches", json_integer(pl->micro_batches));
	set(o, "micro_batch", count(pl->micro_batch));
	set(o, "boundaries", jstr(pl->recut ? "blocks" : "report"));
	set(o, "names", jstr(pl->mod.names));
	for (int i = 0; i < pl->nstage; i++)
		json_array_append_new(st, stage_json(g, pl, i));
	set(o, "stages", st);
	return o;
}

static json_t *
predicted_json(const Candidate *k)
{
	json_t *o = json_object();

	set(o, "iteration_s", json_real(k->t.total));
	set(o, "epoch_s", json_real(k->epoch));
	set(o, "memory_per_gpu_bytes", json_integer((json_int_t)k->mem.total));
	set(o, "memory", memuse_json(&k->mem, true));
	set(o, "bottleneck", jstr(k->bottleneck));
	return o;
}

bool
plan_generic_emit(const Graph *g, const Analysis *an, const Placement *pl, FILE *f)
{
	const Candidate *k = pl->k;
	json_t *root = json_object(), *model = json_object(), *sys = json_object();
	json_t *grid = json_array(), *batch = json_object();

	const char *other = plan_other(g, an, pl, PLAN_STATES_PER_LAYER | PLAN_STATES_ZERO3 |
					       PLAN_STATES_TF32);

	set(root, "plan", jstr("generic"));
	set(root, "schema", json_integer(1));
	set(root, "other_configuration", other ? jstr(other) : json_null());
	set(model, "name", jstr(g->name));
	set(model, "source", jstr(g->source));
	set(model, "format", jstr(g->format));
	set(model, "layers", json_integer(g->nlayer));
	set(root, "model", model);
	set(sys, "name", jstr(an->q.sys->name));
	set(sys, "gpu", jstr(an->q.sys->gpu));
	set(sys, "gpus_per_node", json_integer(pl->gpus_per_node));
	set(root, "system", sys);
	set(root, "precision", jstr(precision_name(an->q.set.prec)));
	set(root, "optimizer", jstr(optimizer_name(an->q.set.opt)));
	set(root, "implementation", jstr(pl->implementation));
	set(root, "strategy", jstr(strategy_name[k->kind]));
	for (int d = 0; d < pl->ndim; d++) {
		json_t *o = json_object();
		set(o, "name", jstr(grid_dim_name[pl->dim[d]]));
		set(o, "size", json_integer(k->grid[pl->dim[d]]));
		json_array_append_new(grid, o);
	}
	set(root, "grid", grid);
	set(root, "nesting", jstr(nesting_name[k->nest]));
	set(root, "gpus", json_integer(pl->gpus));
	set(root, "nodes", json_integer(pl->nodes));
	set(root, "ranks_per_node", json_integer(pl->per_node));
	set(root, "ranks", ranks_json(pl));
	set(batch, "global", json_integer(k->global_batch));
	set(batch, "replicas", json_integer(pl->replicas));
	set(batch, "per_replica", count(pl->replica_batch));
	set(batch, "per_gpu", count(k->per_gpu_batch));
	set(batch, "micro_batch", count(pl->micro_batch));
	set(batch, "micro_batches", json_integer(pl->micro_batches));
	set(root, "batch", batch);
	set(root, "zero", json_integer(an->q.set.zero));
	set(root, "fsdp", an->q.set.zero < 3 ? json_null()
					    : jstr(an->q.set.zero_node ? "hybrid" : "full"));
	set(root, "recompute_segments", pl->checkpoints ? json_integer(pl->checkpoints)
							: json_null());
	set(root, "pipeline", pl->nstage ? pipeline_json(g, an, pl) : json_null());
	if (pl->split >= 0) {
		json_t *sp = json_object();
		set(sp, "layer", jstr(g->layer[pl->split].name));
		set(sp, "module", *pl->mod.fqn[pl->split] ? jstr(pl->mod.fqn[pl->split])
							    : json_null());
		set(root, "split_after", sp);
	} else {
		set(root, "split_after", json_null());
	}
	set(root, "predicted", predicted_json(k));
	set(root, "per_layer", plan_per_layer(g, an, pl));
	return plan_dump(root, f);
}
