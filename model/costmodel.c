/* costmodel.c -- the cost models by name (--cost-model). */
#include "model/costmodel.h"

#include <stdio.h>
#include <string.h>

static const CostModel *const models[] = { &cost_model_physical, &cost_model_paper };

const CostModel *
cost_model_find(const char *name)
{
	for (size_t i = 0; i < sizeof models / sizeof models[0]; i++)
		if (strcmp(models[i]->name, name) == 0)
			return models[i];
	return NULL;
}

char *
cost_model_list(char *buf, size_t n)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < sizeof models / sizeof models[0] && len < n; i++)
		len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? ", " : "", models[i]->name);
	return buf;
}
