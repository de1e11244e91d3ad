/* optimizer.c -- the optimizers' names, as options, reports and plans
 * spell them (the state each keeps is in passes/compute.c). */
#include <string.h>

#include "ir/analysis.h"

static const char *const name[] = {
	[OPT_SGD] = "sgd", [OPT_MOMENTUM] = "momentum", [OPT_ADAM] = "adam", [OPT_ADAMW] = "adamw",
};

const char *
optimizer_name(Optimizer o)
{
	return (unsigned)o < sizeof name / sizeof name[0] ? name[o] : "?";
}

bool
optimizer_parse(const char *s, Optimizer *o)
{
	for (unsigned i = 0; i < sizeof name / sizeof name[0]; i++)
		if (strcmp(s, name[i]) == 0) {
			*o = (Optimizer)i;
			return true;
		}
	return false;
}
