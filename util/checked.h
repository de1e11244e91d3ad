/* checked.h -- 64-bit arithmetic that reports overflow instead of wrapping.
 *
 * Every product of dimensions, FLOP or byte count goes through these; a
 * false return means the caller must diagnose and reject the model. */
#ifndef ORACLEC_UTIL_CHECKED_H
#define ORACLEC_UTIL_CHECKED_H

#include <stdbool.h>
#include <stdint.h>

static inline bool
ck_mul(int64_t a, int64_t b, int64_t *r)
{
	return !__builtin_mul_overflow(a, b, r);
}

static inline bool
ck_add(int64_t a, int64_t b, int64_t *r)
{
	return !__builtin_add_overflow(a, b, r);
}

/* *acc += a * b; false (and *acc unchanged) on overflow. */
static inline bool
ck_muladd(int64_t *acc, int64_t a, int64_t b)
{
	int64_t p, s;

	if (!ck_mul(a, b, &p) || !ck_add(*acc, p, &s))
		return false;
	*acc = s;
	return true;
}

#endif
