/* plan.c -- the kinds of plan, chosen by --plan, and what they share. */
#include "backends/backends.h"

#include <jansson.h>
#include <string.h>

static const PlanKind kinds[] = {
	{ "generic", false, plan_generic_emit },
	{ "pytorch", false, plan_pytorch_emit },
	{ "deepspeed", false, plan_deepspeed_emit },
	{ "megatron", true, plan_megatron_emit }, /* Megatron-LM: GPT, BERT, T5 */
	{ "slurm", false, plan_slurm_emit },
};

const PlanKind *
plan_find(const char *name)
{
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
		if (strcmp(kinds[i].name, name) == 0)
			return &kinds[i];
	return NULL;
}

const char *
plan_grid(const Graph *g, const Placement *pl)
{
	char s[GRID_TEXT_MAX];

	return arena_strdup(g->arena, grid_format(pl->k->grid, pl->dim, pl->ndim, s, sizeof s));
}

bool
plan_dump(json_t *root, FILE *f)
{
	int rc = json_dumpf(root, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));

	json_decref(root);
	fputc('\n', f);
	return rc == 0 && !ferror(f);
}
