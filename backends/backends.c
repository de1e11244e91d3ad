/* backends.c -- the tables of report formats (--format) and of plan kinds
 * (--plan). */
#include "backends/backends.h"

#include <string.h>

static const Backend backends[] = {
	{ "text", text_emit },
	{ "json", json_emit },
	{ "csv", csv_emit },
	{ "html", html_emit },
	{ "svg", svg_emit },
};

const Backend *
backend_find(const char *name)
{
	for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++)
		if (strcmp(backends[i].name, name) == 0)
			return &backends[i];
	return NULL;
}

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
