/* plan.c -- what the kinds of plan share: the grid's text, --per-layer's
 * assignment as JSON, and the JSON writer. */
#include "backends/backends.h"
#include "backends/jsonout.h"

#include <jansson.h>
#include <string.h>

const char *
plan_grid(const Graph *g, const Placement *pl)
{
	char s[GRID_TEXT_MAX];

	return arena_strdup(g->arena, grid_format(pl->k->grid, pl->dim, pl->ndim, s, sizeof s));
}

const char *
plan_other(const Graph *g, const Analysis *an, const Placement *pl, unsigned states)
{
	const Decision *d = &an->decision;
	const PerLayer *p = an->per_layer;
	Arena *A = g->arena;
	char c[CONFIG_TEXT_MAX];

	config_text(&d->c, c, sizeof c);
	if (d->from == DECIDED_PER_LAYER && !(states & PLAN_STATES_PER_LAYER))
		return arena_printf(A, "the recommendation is the per-layer splits (%.4g s per "
				       "iteration), which this kind of plan cannot state: it is "
				       "the plan of the best strategy, %s, at %.4g s",
				    p->time, c, d->c.iteration);
	if (d->from != DECIDED_PER_LAYER && p && p->done && (states & PLAN_STATES_PER_LAYER))
		return arena_printf(A, "per_layer holds the splits --per-layer found (%.4g s per "
				       "iteration), which are not the recommendation, %s at "
				       "%.4g s: a run that follows them runs another configuration",
				    p->time, c, d->c.iteration);
	if (an->q.set.zero == 3 && !(states & PLAN_STATES_ZERO3))
		return arena_printf(A, "the recommendation, %s, shards the parameters, which this "
				       "kind of plan cannot state: it shards the optimizer state "
				       "and gradients only", c);
	if (pl->matmul_tf32 && !(states & PLAN_STATES_TF32))
		return arena_printf(A, "the recommendation, %s, runs its matrix products in TF32 "
				       "(torch.backends.cuda.matmul.allow_tf32 = True), which this "
				       "kind of plan cannot state: PyTorch's default leaves them "
				       "in fp32", c);
	return NULL;
}

json_t *
plan_per_layer(const Graph *g, const Analysis *an, const Placement *pl)
{
	const PerLayer *p = an->per_layer;
	json_t *o, *mods;
	const char *last = NULL;
	PerLayerMode mode = PL_DATA;
	int64_t d = 1;

	if (!p || !p->done)
		return json_null();
	o = json_object();
	mods = json_array();
	set(o, "world_size", json_integer(an->q.set.gpus));
	set(o, "iteration_s", json_real(p->time));
	for (int i = 0; i < g->nlayer; i++) {
		const char *m = pl->mod.fqn[i];
		json_t *e;
		if (!*m ||
		    (last && strcmp(last, m) == 0 && mode == p->mode[i] && d == p->degree[i]))
			continue; /* root code, or the module's split again */
		last = m;
		mode = p->mode[i];
		d = p->degree[i];
		e = json_object();
		set(e, "module", jstr(m));
		set(e, "first_layer", jstr(g->layer[i].name));
		set(e, "split", jstr(per_layer_mode_name[mode]));
		/* the GPUs that split it; world_size / degree groups of them
		 * share the samples */
		set(e, "degree", json_integer(d));
		json_array_append_new(mods, e);
	}
	set(o, "modules", mods);
	return o;
}

bool
plan_dump(json_t *root, FILE *f)
{
	int rc =
		json_dumpf(root, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));

	json_decref(root);
	fputc('\n', f);
	return rc == 0 && !ferror(f);
}
