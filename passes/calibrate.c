/* calibrate.c -- fit a system's free parameters to measured runs.
 *
 * Four parameters, each a mechanism of the model rather than a per-point
 * correction (docs/model.md, "Calibration"):
 *   compute   a factor on eff_conv and eff_gemm (capped so neither passes 1)
 *   nic_bw    the effective network bandwidth per node
 *   nic_lat   the start-up latency of a ring step between nodes
 *   p2p_lat   the latency of the framework's point-to-point sends (the
 *             implementation's send_latency, which the written system's
 *             p2p_latency overrides)
 * The fit minimises the sum of squared relative errors (p - m) / m plus a
 * weak pull of each parameter's logarithm towards the system's value
 * (weight 0.01), so a parameter the runs do not exercise stays where the
 * system put it.  The search is Nelder-Mead over the logarithms.
 * Leave-one-out accuracy refits without each run in turn and predicts it. */
#include "passes/passes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { NP = CALIB_PARAMS, MAX_EVALS = 400 };
#define PRIOR 0.01

typedef struct Fit {
	System *sys;
	const System base;
	CalibRow *rows;
	int n;
	int skip;              /* row left out, or -1 */
	const StrategyOpts *o;
} Fit;

/* v held within [lo, hi]. */
static double
clamp(double v, double lo, double hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* A latency scaled by f, kept within a system's range (0 stays 0). */
static double
scaled_latency(double base, double f)
{
	return base > 0 ? clamp(base * f, SYS_MIN_SECONDS, SYS_MAX_SECONDS) : 0;
}

/* The send latency s runs with: its own p2p_latency, else its
 * implementation's. */
static double
send_latency(const System *s)
{
	Implementation im;

	if (s->p2p_lat >= 0)
		return s->p2p_lat;
	if (s->impl)
		return s->impl->send_latency;
	implementation_defaults(&im);
	return im.send_latency;
}

/* Sets the parameters of s to base's scaled by exp(lp[]), every one kept
 * within a system's ranges (ir.h), so --system reads the fit back. */
static void
apply(System *s, const System *base, const double *lp)
{
	double k = exp(lp[0]), top = base->eff_conv > base->eff_gemm ? base->eff_conv
								  : base->eff_gemm;

	if (k * top > 1)
		k = 1 / top;
	s->eff_conv = clamp(base->eff_conv * k, SYS_MIN_EFF, 1);
	s->eff_gemm = clamp(base->eff_gemm * k, SYS_MIN_EFF, 1);
	s->nic_bw = clamp(base->nic_bw * exp(lp[1]), SYS_MIN_RATE, SYS_MAX_RATE);
	s->nic_lat = scaled_latency(base->nic_lat, exp(lp[2]));
	s->p2p_lat = scaled_latency(send_latency(base), exp(lp[3]));
}

double
calibrate_predict(CalibRow *r, const System *s, const StrategyOpts *o)
{
	Candidate k;

	r->an.sys = s;
	r->an.impl.send_latency = send_latency(s);
	strategy_predict(r->g, &r->an, o, r->kind, r->grid, &k);
	return k.computable ? k.t.total : NAN;
}

static double
objective(Fit *f, const double *lp)
{
	double sum = 0;

	apply(f->sys, &f->base, lp);
	for (int i = 0; i < f->n; i++) {
		double p, e;
		if (i == f->skip)
			continue;
		p = calibrate_predict(&f->rows[i], f->sys, f->o);
		e = isnan(p) ? 1 : (p - f->rows[i].measured) / f->rows[i].measured;
		sum += e * e;
	}
	for (int j = 0; j < NP; j++)
		sum += PRIOR * lp[j] * lp[j];
	return sum;
}

/* Nelder-Mead on NP log-parameters starting at 0 (the system's values). */
static void
minimise(Fit *f, double *best)
{
	double x[NP + 1][NP], v[NP + 1];
	int evals = 0;

	for (int i = 0; i <= NP; i++) {
		for (int j = 0; j < NP; j++)
			x[i][j] = i == j + 1 ? 0.5 : 0;
		v[i] = objective(f, x[i]);
		evals++;
	}
	while (evals < MAX_EVALS) {
		int hi = 0, lo = 0;
		double c[NP] = { 0 }, r[NP], e[NP], vr;
		for (int i = 1; i <= NP; i++) {
			if (v[i] > v[hi])
				hi = i;
			if (v[i] < v[lo])
				lo = i;
		}
		if (v[hi] - v[lo] < 1e-10)
			break;
		for (int i = 0; i <= NP; i++)
			for (int j = 0; j < NP && i != hi; j++)
				c[j] += x[i][j] / NP;
		for (int j = 0; j < NP; j++)
			r[j] = c[j] + (c[j] - x[hi][j]);
		vr = objective(f, r), evals++;
		if (vr < v[lo]) {
			for (int j = 0; j < NP; j++)
				e[j] = c[j] + 2 * (c[j] - x[hi][j]);
			double ve = objective(f, e);
			evals++;
			if (ve < vr)
				memcpy(x[hi], e, sizeof e), v[hi] = ve;
			else
				memcpy(x[hi], r, sizeof r), v[hi] = vr;
		} else {
			int second = lo;
			for (int i = 0; i <= NP; i++)
				if (i != hi && v[i] > v[second])
					second = i;
			if (vr < v[second]) {
				memcpy(x[hi], r, sizeof r), v[hi] = vr;
			} else {
				for (int j = 0; j < NP; j++)
					r[j] = c[j] + 0.5 * (x[hi][j] - c[j]);
				vr = objective(f, r), evals++;
				if (vr < v[hi]) {
					memcpy(x[hi], r, sizeof r), v[hi] = vr;
				} else { /* shrink towards the best */
					for (int i = 0; i <= NP; i++) {
						if (i == lo)
							continue;
						for (int j = 0; j < NP; j++)
							x[i][j] = x[lo][j] + 0.5 * (x[i][j] - x[lo][j]);
						v[i] = objective(f, x[i]), evals++;
					}
				}
			}
		}
	}
	int lo = 0;
	for (int i = 1; i <= NP; i++)
		if (v[i] < v[lo])
			lo = i;
	memcpy(best, x[lo], sizeof x[lo]);
}

/* A run's accuracy for the means of the fit: a run that could not be
 * predicted counts as 0. */
static double
fit_accuracy(double p, double m)
{
	double a = validation_accuracy(p, m);

	return isnan(a) ? 0 : a;
}

bool
calibrate_run(System *s, CalibRow *rows, int n, const StrategyOpts *o, Calibration *out)
{
	Fit f = { s, *s, rows, n, -1, o };
	double lp[NP];

	out->before = out->after = out->loo = 0;
	for (int i = 0; i < n; i++)
		out->before += fit_accuracy(calibrate_predict(&rows[i], s, o), rows[i].measured) /
			       n;
	/* leave one out: fit without row i, then predict it */
	for (int i = 0; i < n && n > 1; i++) {
		f.skip = i;
		minimise(&f, lp);
		apply(s, &f.base, lp);
		out->loo += fit_accuracy(calibrate_predict(&rows[i], s, o), rows[i].measured) /
			    n;
	}
	f.skip = -1;
	minimise(&f, lp);
	apply(s, &f.base, lp);
	for (int i = 0; i < n; i++) {
		rows[i].predicted = calibrate_predict(&rows[i], s, o);
		out->after += fit_accuracy(rows[i].predicted, rows[i].measured) / n;
	}
	/* the factors as applied (capped, kept in range); a latency of 0
	 * stays 0 whatever its factor */
	out->factor[0] = s->eff_conv / f.base.eff_conv;
	out->factor[1] = s->nic_bw / f.base.nic_bw;
	out->factor[2] = f.base.nic_lat > 0 ? s->nic_lat / f.base.nic_lat : exp(lp[2]);
	out->factor[3] = send_latency(&f.base) > 0 ? s->p2p_lat / send_latency(&f.base) : exp(lp[3]);
	if (n < 2)
		out->loo = NAN; /* nothing is left to fit without the one run */
	return true;
}
