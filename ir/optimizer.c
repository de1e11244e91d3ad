/* optimizer.c -- the optimizers', pipeline schedules' and data kinds' names, as
 * options, reports and plans spell them (the state each optimizer keeps is
 * in model/compute.c, what a schedule holds in model/pipeline.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/analysis.h"

static const char *const name[] = {
	[OPT_SGD] = "sgd", [OPT_MOMENTUM] = "momentum", [OPT_ADAM] = "adam", [OPT_ADAMW] = "adamw",
	[OPT_RMSPROP] = "rmsprop",
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

static const char *const sched[] = { [SCHED_GPIPE] = "gpipe", [SCHED_1F1B] = "1f1b",
				     [SCHED_INTERLEAVED] = "interleaved" };

const char *
schedule_name(Schedule s)
{
	return (unsigned)s < SCHED_COUNT ? sched[s] : "?";
}

bool
schedule_parse(const char *s, Schedule *out, int *v)
{
	char *end;
	long n;

	*v = 1;
	if (strncmp(s, "interleaved:", 12) == 0) {
		n = strtol(s + 12, &end, 10);
		if (end == s + 12 || *end || n < 2 || n > MAX_VIRTUAL_STAGES)
			return false;
		*out = SCHED_INTERLEAVED;
		*v = (int)n;
		return true;
	}
	for (int i = 0; i < SCHED_COUNT; i++)
		if (i != SCHED_INTERLEAVED && strcmp(s, sched[i]) == 0) {
			*out = (Schedule)i;
			return true;
		}
	return false;
}

const char *
schedule_label(Schedule s, int v, char *buf, size_t n)
{
	if (s == SCHED_INTERLEAVED)
		snprintf(buf, n, "interleaved:%d", v);
	else
		snprintf(buf, n, "%s", schedule_name(s));
	return buf;
}

const char *
recompute_label(int k, char *buf, size_t n)
{
	if (k == RECOMPUTE_SELECTIVE)
		snprintf(buf, n, "selective");
	else if (k)
		snprintf(buf, n, "every:%d", k);
	else
		snprintf(buf, n, "none");
	return buf;
}

static const char *const kind[] = { [DATA_AUTO] = "auto", [DATA_JPEG] = "jpeg",
				    [DATA_RAW] = "raw", [DATA_STORED] = "stored",
				    [DATA_SYNTHETIC] = "synthetic" };

const char *
data_kind_name(DataKind k)
{
	return (unsigned)k < DATA_COUNT ? kind[k] : "?";
}

bool
data_kind_parse(const char *s, DataKind *out)
{
	for (int i = 0; i < DATA_COUNT; i++)
		if (strcmp(s, kind[i]) == 0) {
			*out = (DataKind)i;
			return true;
		}
	return false;
}
