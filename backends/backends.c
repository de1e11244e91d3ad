/* backends.c -- the tables of report formats (--format) and of plan kinds
 * (--plan). */
#include "backends/backends.h"

#include <string.h>

static const Backend backends[] = {
	/* name   plots  sweeps command  report     measured runs */
	{ "text", false, false, false, text_emit, validation_text },
	{ "json", false, false, false, json_emit, validation_json },
	{ "csv", false, false, false, csv_emit, validation_csv },
	{ "html", false, true, true, html_emit, NULL },  /* a page with every chart */
	{ "svg", true, false, false, svg_emit, NULL },   /* one chart: sweeps for scaling's */
};
enum { NBACKENDS = sizeof backends / sizeof backends[0] };

const Backend *
backend_find(const char *name)
{
	for (size_t i = 0; i < NBACKENDS; i++)
		if (strcmp(backends[i].name, name) == 0)
			return &backends[i];
	return NULL;
}

const char *
backend_name(int i)
{
	return i >= 0 && i < NBACKENDS ? backends[i].name : NULL;
}

static const PlanKind kinds[] = {
	{ "generic", false, plan_generic_emit, NULL, NULL },
	{ "pytorch", false, plan_pytorch_emit, NULL, NULL },
	{ "deepspeed", false, plan_deepspeed_emit, NULL, NULL },
	/* Megatron-LM: GPT, BERT, T5 */
	{ "megatron", true, plan_megatron_emit, plan_megatron_model, plan_megatron_placed },
	{ "slurm", false, plan_slurm_emit, NULL, NULL },
};
enum { NKINDS = sizeof kinds / sizeof kinds[0] };

const PlanKind *
plan_find(const char *name)
{
	for (size_t i = 0; i < NKINDS; i++)
		if (strcmp(kinds[i].name, name) == 0)
			return &kinds[i];
	return NULL;
}

const char *
plan_kind_name(int i)
{
	return i >= 0 && i < NKINDS ? kinds[i].name : NULL;
}

/* "generic, pytorch, deepspeed and slurm": the kinds for any model */
static char *
kinds_any(char *buf, size_t n)
{
	size_t len = 0;
	int left = 0;

	for (size_t i = 0; i < NKINDS; i++)
		left += !kinds[i].fits_model;
	buf[0] = '\0';
	for (size_t i = 0; i < NKINDS && len < n; i++)
		if (!kinds[i].fits_model)
			left--, len += (size_t)snprintf(buf + len, n - len, "%s%s",
							len ? left ? ", " : " and " : "",
							kinds[i].name);
	return buf;
}

bool
plan_fits_model(const PlanKind *k, const Graph *g)
{
	char any[256];

	return !k->fits_model || k->fits_model(g, kinds_any(any, sizeof any));
}
