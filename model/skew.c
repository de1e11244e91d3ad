/* skew.c -- the slowest of N (docs/model.md, "The slowest of N").
 *
 * A synchronous step ends when its slowest rank ends: every rank waits at
 * the gradient exchange for the last one's gradients.  A rank's own work
 * in a step (its kernels, its host's issuing, its update) varies from step
 * to step with a coefficient of variation, the system's `jitter`; a step
 * is hundreds of kernels, each a little early or late, so its time is
 * near normal (the central limit theorem), and the N ranks' times are
 * independent draws.  The step then takes the mean plus sigma times the
 * expected largest of N standard normals,
 *
 *   E[max_N] = integral over x >= 0 of (1 - Phi(x)^N - Phi(-x)^N) dx,
 *
 * which grows like sqrt(2 ln N) (1.42 for 8, 3.25 for 1,024, 3.63 for
 * 4,096).  The integral is taken numerically (Simpson's rule, steps of
 * 1/32 to x = 16, where Phi(-x)^N and 1 - Phi(x)^N are below 1e-50 for
 * every N up to 2^40; steps of 1/256 move E[max] by under 1e-11 there),
 * kept in the engine a slot by N's hash: a calibration's runs cycle
 * through their GPU counts on every pass.
 *
 * The ranks also run on different chips: one cluster's GPUs of one model
 * sustain different speeds (manufacturing and power management), a
 * spread across GPUs, the system's `gpu_spread`.  A rank's step is then
 * its chip's speed times its step's draw, two independent normal parts,
 * so one normal of sigma sqrt(jitter^2 + gpu_spread^2), and the slowest
 * of N is taken over that. */
#include "model/model.h"

#include <math.h>

enum { SLOWEST_KEPT = sizeof ((Engine *)0)->slowest / sizeof ((Engine *)0)->slowest[0] };

/* 1 - Phi(x)^n - Phi(-x)^n for x >= 0, in logs: Phi(x) = 1 - Q(x). */
static double
tail(double x, double n)
{
	double q = 0.5 * erfc(x / M_SQRT2);

	return -expm1(n * log1p(-q)) - exp(n * log(q));
}

double
normal_max(int64_t n)
{
	const double h = 1.0 / 32;
	const int steps = 16 * 32;
	double sum;

	if (n <= 1)
		return 0;
	sum = tail(0, (double)n) + tail(steps * h, (double)n);
	for (int i = 1; i < steps; i++)
		sum += (i & 1 ? 4 : 2) * tail(i * h, (double)n);
	return sum * h / 3;
}

double
skew_time(const Analysis *an, const IterTime *t)
{
	Engine *e = an->eng;
	double own = t->compute + t->bubble + t->reducer + t->update + t->recompute +
		     t->dispatch + t->feed + t->sync_bn;
	int64_t n = an->q.set.gpus;
	size_t slot;
	double m, sigma = hypot(an->q.sys->jitter, an->q.sys->gpu_spread);

	if (sigma <= 0 || n <= 1 || !(own > 0))
		return 0;
	slot = (size_t)(((uint64_t)n * 0x9E3779B97F4A7C15u) >> 58) % SLOWEST_KEPT;
	if (e && e->reuse && e->slowest[slot].n == n)
		return sigma * own * e->slowest[slot].v;
	m = normal_max(n);
	if (e && e->reuse) {
		e->slowest[slot].n = n;
		e->slowest[slot].v = m;
	}
	return sigma * own * m;
}
