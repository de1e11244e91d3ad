/* clock.h -- milliseconds on a monotonic clock: for -v's timings and the
 * search's time budget, never for what a report prints. */
#ifndef ORACLEC_UTIL_CLOCK_H
#define ORACLEC_UTIL_CLOCK_H

#include <time.h>

static inline double
clock_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

#endif
