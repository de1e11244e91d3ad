/* jsonout.h -- what the JSON writers share (json.c and the JSON plans):
 * setting an object's member, and sample counts that print as integers
 * when they are whole. */
#ifndef ORACLEC_BACKENDS_JSONOUT_H
#define ORACLEC_BACKENDS_JSONOUT_H

#include <jansson.h>
#include <math.h>

/* o[key] = v; the object takes v's reference. */
static inline void
set(json_t *o, const char *key, json_t *v)
{
	json_object_set_new(o, key, v);
}

/* A sample count: an integer when whole (and exact in a double), else a
 * real (a per-GPU share of a batch that does not divide evenly). */
static inline json_t *
count(double v)
{
	return v == floor(v) && fabs(v) < 9e15 ? json_integer((json_int_t)v) : json_real(v);
}

#endif
