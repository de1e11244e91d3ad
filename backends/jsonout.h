/* jsonout.h -- what the JSON writers share (json.c and the JSON plans):
 * setting an object's member, strings from input names, and sample counts
 * that print as integers when they are whole. */
#ifndef ORACLEC_BACKENDS_JSONOUT_H
#define ORACLEC_BACKENDS_JSONOUT_H

#include <jansson.h>
#include <math.h>
#include <stdlib.h>

#include "ir/analysis.h"
#include "util/escape.h"

/* o[key] = v; the object takes v's reference.  A key that is not valid
 * UTF-8 (a module name from a hostile file) is set with each bad byte made
 * U+FFFD, as jansson refuses it and the member would be lost. */
static inline void
set(json_t *o, const char *key, json_t *v)
{
	char *fixed;

	if (utf8_valid(key)) {
		json_object_set_new(o, key, v);
		return;
	}
	fixed = utf8_fix(key);
	json_object_set_new(o, fixed, v);
	free(fixed);
}

/* A JSON string for a name from an input: json_string() returns NULL for
 * invalid UTF-8 (the key would silently vanish), so each bad byte is made
 * U+FFFD.  jansson escapes the control characters. */
static inline json_t *
jstr(const char *s)
{
	char *fixed;
	json_t *j;

	if (utf8_valid(s))
		return json_string(s);
	fixed = utf8_fix(s);
	j = json_string(fixed);
	free(fixed);
	return j;
}

/* A sample count: an integer when whole (and exact in a double), else a
 * real (a per-GPU share of a batch that does not divide evenly). */
static inline json_t *
count(double v)
{
	return v == floor(v) && fabs(v) < 9e15 ? json_integer((json_int_t)v) : json_real(v);
}

/* Memory per GPU by part (MemUse), bytes; null members when the
 * candidate has no prediction.  `buffers` (the system's reserve) is the
 * name of the first reports, kept; `reserved` is the same value under the
 * name the memory breakdown uses; `peak` is memory_per_gpu_bytes. */
static inline json_t *
memuse_json(const MemUse *m, bool ok)
{
	json_t *o = json_object();
	const struct {
		const char *key;
		double v;
	} part[] = {
		{ "weights", m->weights },     { "gradients", m->grads },
		{ "optimizer", m->optimizer }, { "activations", m->activations },
		{ "transient", m->transient }, { "workspace", m->workspace },
		{ "reserved", m->buffers },    { "buffers", m->buffers },
		{ "peak", m->total },
	};

	for (size_t i = 0; i < sizeof part / sizeof part[0]; i++)
		set(o, part[i].key, ok ? json_real(part[i].v) : json_null());
	return o;
}

#endif
