/* calibrate.c -- fit a system's physical parameters to measured runs.
 *
 * Twelve parameters, each a mechanism of the model rather than a per-point
 * correction (docs/model.md, "Calibration"); the first six a factor per
 * class of kernels, fitted where the runs' layers of that class are
 * priced by the model (a layer a kernel table or a profile prices is
 * none of them):
 *   conv          eff_conv and its formats' (the k x k convolutions)
 *   conv 1x1      conv_1x1_scale (pointwise convolutions)
 *   conv grouped  conv_grouped_scale (grouped and depthwise ones)
 *   gemm          eff_gemm and its formats' (linear layers, products)
 *   memory-bound  eff_memory, eff_norm_nchw and its formats' (element-
 *                 wise, norm and pooling kernels, the casts, the update)
 *   host          the dispatch of the implementation the runs were
 *                 predicted with (the CPU's time per operator), which the
 *                 written system's dispatch overrides
 * every efficiency kept at most 1; then
 *   nic_bw        the effective network bandwidth per node
 *   nic_latency   the start-up latency of a ring step between nodes
 *   p2p_latency   the latency of the framework's point-to-point sends (the
 *                 send_latency of the implementation the runs were
 *                 predicted with, which the written system's p2p_latency
 *                 overrides)
 *   fs_file_rate  the shared file system's files per second
 *   cache_files   the files a node keeps between epochs
 *   staging_bw    the bandwidth of each copy of a host-staged transfer
 *                 (the implementation's, which the written system's
 *                 staging_bw overrides; seen only where the implementation
 *                 stages sends through the host)
 * A parameter the system leaves at 0 (no such limit) is not fitted.  The
 * three software parameters are those of the implementation the runs'
 * analyses resolved (implementation_resolve: --implementation, a run's
 * implementation column, else the system's), so a factor is on what the
 * runs were predicted with; runs predicted with implementations that
 * differ in one of them do not fit it (one system key would set both).
 *
 * The fit is least squares on the relative errors (p - m) / m, plus a weak
 * pull of each parameter's logarithm towards the system's value (weight
 * 0.01), over the logarithms: GSL's trust-region solver
 * (gsl_multifit_nlinear) with a finite-difference Jacobian, from several
 * starts, keeping the best.  Then each parameter's sensitivity: how much
 * the runs' residuals move when it changes by 10 % either way.  One the
 * runs do not see (the mechanism never binds on them) is put back to the
 * system's value and the rest refitted: the data cannot move it.  The
 * others get a standard error from the covariance of the fit, (J^T J)^-1
 * times the residual variance.  Leave-one-out comes from the same fit's
 * influence terms: a run's residual e_i grows to e_i / (1 - h_ii) when the
 * fit no longer sees it, h_ii the diagonal of the hat matrix J A^-1 J^T
 * (A the normal matrix of the fit, the pull included).  Refitting without
 * each run in turn cost n fits of n runs: 44 s for 100 runs.
 *
 * Runs that share an analysis (main.c gives one to the runs of a model
 * with the same GPUs, batch and dataset), a strategy and a grid share a
 * prediction: each residual evaluation predicts each such configuration
 * once, however many times it was measured. */
#include "plan/plan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_multifit_nlinear.h>

enum { NP = CALIB_PARAMS, MAX_ITER = 200, STARTS = 5 };
#define PRIOR 0.01
/* A parameter that moves the runs' residuals by less than this per unit
 * of its logarithm (a factor e) is not seen by them. */
#define SEEN 0.01
/* The step of the sensitivity's central difference, in the logarithm. */
#define STEP 0.1
/* A fit of this many configurations or more says how it goes on stderr
 * (each costs about 6 ms: 1,000 take 6 s). */
enum { PROGRESS_CONFS = 1000 };

const char *const calib_param_name[CALIB_PARAMS] = {
	[CAL_CONV] = "conv", [CAL_CONV_1X1] = "conv 1x1", [CAL_CONV_GROUPED] = "conv grouped",
	[CAL_GEMM] = "gemm", [CAL_MEMORY] = "memory-bound", [CAL_HOST] = "host",
	[CAL_NIC_BW] = "nic_bw", [CAL_NIC_LAT] = "nic_latency", [CAL_P2P_LAT] = "p2p_latency",
	[CAL_FS_RATE] = "fs_file_rate", [CAL_CACHE] = "cache_files", [CAL_STAGING] = "staging_bw",
};

typedef struct Fit {
	System *sys;
	const System base;
	double send0, stage0;  /* the runs' send latency and staging bandwidth
	                          (0: none, or the runs' differ) */
	double dispatch0;      /* the runs' dispatch (0: none, or the runs'
	                          differ) */
	CalibRow *rows;
	int n;
	const StrategyOpts *o;
	bool free[NP];         /* the parameters being fitted */
	int k;                 /* how many */
	int *uniq, nuniq;      /* a row of each configuration */
	int *conf;             /* each row's configuration (index into uniq) */
	double *pred;          /* each configuration's prediction */
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

/* The software parameters the runs were predicted with on s, as their
 * analyses resolved the implementation: the send latency, the staging
 * bandwidth (0 where it neither stages nor s sets one) or the dispatch;
 * 0 where runs differ.  Read before any prediction moves them. */
typedef enum Soft { SOFT_SEND, SOFT_STAGE, SOFT_DISPATCH } Soft;

static double
software(const System *s, const CalibRow *rows, int n, Soft which)
{
	double v = -1;

	for (int i = 0; i < n; i++) {
		const Implementation *im = &rows[i].an->q.impl;
		double x = which == SOFT_SEND	 ? im->send_latency
			   : which == SOFT_DISPATCH ? im->dispatch
			   : s->staging_bw >= 0 || im->staged ? im->staging_bw
							      : 0;
		if (v >= 0 && x != v)
			return 0;
		v = x;
	}
	return v > 0 ? v : 0;
}

/* The largest of an efficiency and its formats' (those the system sets). */
static double
top(double e, const double *dt)
{
	for (int i = 0; dt && i < DT_COUNT; i++)
		if (dt[i] > e)
			e = dt[i];
	return e;
}

/* A factor on an efficiency class: f, less where it would take the
 * largest of them (top) past 1. */
static double
capped(double f, double top)
{
	return top > 0 && f * top > 1 ? 1 / top : f;
}

/* e and its formats' (dt, those set) scaled by f, kept within range. */
static void
scale_eff(double *e, double *dt, const double *e0, const double *dt0, double f)
{
	*e = clamp(*e0 * f, SYS_MIN_EFF, 1);
	for (int i = 0; dt && i < DT_COUNT; i++)
		if (dt0[i] > 0)
			dt[i] = clamp(dt0[i] * f, SYS_MIN_EFF, 1);
}

/* A class's scale (conv_1x1_scale, ...; -1: 1) times f, written only
 * where the system set it or the fit moves it. */
static double
scaled_class(double base, double f, double lp)
{
	if (base <= 0 && lp == 0)
		return base;
	return clamp((base > 0 ? base : 1) * f, SYS_MIN_EFF, SYS_MAX_SCALE);
}

/* Sets the parameters of s to base's scaled by exp(lp[]), every one kept
 * within a system's ranges (ir.h), so --system reads the fit back. */
static void
apply(const Fit *fit, const double *lp)
{
	System *s = fit->sys;
	const System *b = &fit->base;
	double f[NP];

	for (int j = 0; j < NP; j++)
		f[j] = exp(clamp(lp[j], -20, 20));
	f[CAL_CONV] = capped(f[CAL_CONV], top(b->eff_conv, b->eff_conv_dt));
	f[CAL_GEMM] = capped(f[CAL_GEMM], top(b->eff_gemm, b->eff_gemm_dt));
	f[CAL_MEMORY] = capped(f[CAL_MEMORY], top(b->eff_mem > b->eff_norm_nchw ? b->eff_mem
									    : b->eff_norm_nchw,
						  b->eff_norm_nchw_dt));
	scale_eff(&s->eff_conv, s->eff_conv_dt, &b->eff_conv, b->eff_conv_dt, f[CAL_CONV]);
	scale_eff(&s->eff_gemm, s->eff_gemm_dt, &b->eff_gemm, b->eff_gemm_dt, f[CAL_GEMM]);
	scale_eff(&s->eff_mem, NULL, &b->eff_mem, NULL, f[CAL_MEMORY]);
	if (b->eff_norm_nchw > 0)
		scale_eff(&s->eff_norm_nchw, s->eff_norm_nchw_dt, &b->eff_norm_nchw,
			  b->eff_norm_nchw_dt, f[CAL_MEMORY]);
	s->conv_1x1_scale = scaled_class(b->conv_1x1_scale, f[CAL_CONV_1X1], lp[CAL_CONV_1X1]);
	s->conv_grouped_scale =
		scaled_class(b->conv_grouped_scale, f[CAL_CONV_GROUPED], lp[CAL_CONV_GROUPED]);
	if (fit->dispatch0 > 0)
		s->dispatch = lp[CAL_HOST] == 0 ? b->dispatch
						 : scaled_latency(fit->dispatch0, f[CAL_HOST]);
	s->nic_bw = clamp(b->nic_bw * f[CAL_NIC_BW], SYS_MIN_RATE, SYS_MAX_RATE);
	s->nic_lat = scaled_latency(b->nic_lat, f[CAL_NIC_LAT]);
	if (fit->send0 > 0)
		s->p2p_lat = scaled_latency(fit->send0, f[CAL_P2P_LAT]);
	s->fs_file_rate = clamp(b->fs_file_rate * f[CAL_FS_RATE], 0, SYS_MAX_COUNT);
	s->cache_files = clamp(b->cache_files * f[CAL_CACHE], 0, SYS_MAX_COUNT);
	if (fit->stage0 > 0)
		s->staging_bw = clamp(fit->stage0 * f[CAL_STAGING], SYS_MIN_RATE, SYS_MAX_RATE);
}

/* Whether the fit has parameter j to scale (a limit of 0 is none). */
static bool
has(const Fit *f, int j)
{
	switch (j) {
	case CAL_HOST: return f->dispatch0 > 0;
	case CAL_NIC_LAT: return f->base.nic_lat > 0;
	case CAL_P2P_LAT: return f->send0 > 0;
	case CAL_FS_RATE: return f->base.fs_file_rate > 0;
	case CAL_CACHE: return f->base.cache_files > 0;
	case CAL_STAGING: return f->stage0 > 0;
	default: return true;
	}
}

double
calibrate_predict(CalibRow *r, const System *s, const StrategyOpts *o)
{
	Candidate k;

	r->an->q.sys = s;
	implementation_override(&r->an->q.impl, s); /* the fitted latency and bandwidth */
	strategy_predict(r->g, r->an, o, r->kind, r->grid, &k);
	return k.computable ? k.t.total : NAN;
}

/* The full parameter vector of the free ones in x (the others 0: the
 * system's values). */
static void
expand(const Fit *f, const double *x, double *lp)
{
	for (int j = 0, i = 0; j < NP; j++)
		lp[j] = f->free[j] ? x[i++] : 0;
}

/* The runs' relative errors at lp into r[] (a run that cannot be
 * predicted is off by 1), each configuration predicted once. */
static void
errors(Fit *f, const double *lp, double *r)
{
	apply(f, lp);
	for (int u = 0; u < f->nuniq; u++)
		f->pred[u] = calibrate_predict(&f->rows[f->uniq[u]], f->sys, f->o);
	for (int i = 0; i < f->n; i++) {
		double p = f->pred[f->conf[i]];
		r[i] = isnan(p) ? 1 : (p - f->rows[i].measured) / f->rows[i].measured;
	}
}

/* The order of configurations: analysis, strategy, grid. */
typedef struct Conf {
	uintptr_t an;
	int kind;
	int64_t grid[DIM_COUNT];
	int row;
} Conf;

static int
by_conf(const void *pa, const void *pb)
{
	const Conf *a = pa, *b = pb;

	if (a->an != b->an)
		return a->an < b->an ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	for (int d = 0; d < DIM_COUNT; d++)
		if (a->grid[d] != b->grid[d])
			return a->grid[d] < b->grid[d] ? -1 : 1;
	return a->row - b->row; /* the first row of each stands for it */
}

/* f's configurations: the rows that share an analysis, a strategy and a
 * grid, whose predictions are equal. */
static void
configurations(Fit *f)
{
	Conf *c = xcalloc((size_t)f->n + 1, sizeof *c);

	for (int i = 0; i < f->n; i++) {
		c[i].an = (uintptr_t)f->rows[i].an;
		c[i].kind = (int)f->rows[i].kind;
		memcpy(c[i].grid, f->rows[i].grid, sizeof c[i].grid);
		c[i].row = i;
	}
	qsort(c, (size_t)f->n, sizeof *c, by_conf);
	f->uniq = xcalloc((size_t)f->n + 1, sizeof *f->uniq);
	f->conf = xcalloc((size_t)f->n + 1, sizeof *f->conf);
	f->pred = xcalloc((size_t)f->n + 1, sizeof *f->pred);
	f->nuniq = 0;
	for (int i = 0; i < f->n; i++) {
		if (i == 0 || c[i].an != c[i - 1].an || c[i].kind != c[i - 1].kind ||
		    memcmp(c[i].grid, c[i - 1].grid, sizeof c[i].grid) != 0)
			f->uniq[f->nuniq++] = c[i].row;
		f->conf[c[i].row] = f->nuniq - 1;
	}
	free(c);
}

/* GSL's residual function: the runs' errors, then the pull of each free
 * parameter towards the system's value.  Vectors may be strided (GSL
 * writes the finite-difference Jacobian's columns through it). */
static int
residuals(const gsl_vector *x, void *arg, gsl_vector *out)
{
	Fit *f = arg;
	double lp[NP], xs[NP], *e = xcalloc((size_t)f->n, sizeof *e);
	int m = f->n;

	for (int i = 0; i < f->k; i++)
		xs[i] = gsl_vector_get(x, (size_t)i);
	expand(f, xs, lp);
	errors(f, lp, e);
	for (int i = 0; i < m; i++)
		gsl_vector_set(out, (size_t)i, e[i]);
	for (int i = 0; i < f->k; i++)
		gsl_vector_set(out, (size_t)m + (size_t)i, sqrt(PRIOR) * xs[i]);
	free(e);
	return GSL_SUCCESS;
}

/* One trust-region fit of the free parameters from x0; their optimum in
 * x, the cost (half the sum of squared residuals) returned. */
static double
solve(Fit *f, int m, const double *x0, double *x)
{
	gsl_multifit_nlinear_parameters par = gsl_multifit_nlinear_default_parameters();
	gsl_multifit_nlinear_fdf fdf = { .f = residuals, .n = (size_t)(m + f->k),
					 .p = (size_t)f->k, .params = f };
	gsl_multifit_nlinear_workspace *w =
		gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &par, fdf.n, fdf.p);
	gsl_vector_const_view v = gsl_vector_const_view_array(x0, (size_t)f->k);
	gsl_vector *pos, *res;
	double cost = 0;
	int info;

	gsl_multifit_nlinear_init(&v.vector, &fdf, w);
	gsl_multifit_nlinear_driver(MAX_ITER, 1e-8, 1e-8, 1e-8, NULL, NULL, &info, w);
	pos = gsl_multifit_nlinear_position(w);
	res = gsl_multifit_nlinear_residual(w);
	for (int i = 0; i < f->k; i++)
		x[i] = gsl_vector_get(pos, (size_t)i);
	for (size_t i = 0; i < res->size; i++)
		cost += 0.5 * gsl_vector_get(res, i) * gsl_vector_get(res, i);
	gsl_multifit_nlinear_free(w);
	return cost;
}

/* The best of STARTS fits of the free parameters: from the system's
 * values, all up, all down, and two of mixed signs; into lp. */
static void
fit_free(Fit *f, int m, double *lp)
{
	static const double start[STARTS][2] = { { 0, 0 }, { 0.7, 0.7 }, { -0.7, -0.7 },
						 { 0.7, -0.7 }, { -0.7, 0.7 } };
	double x0[NP], x[NP], best[NP] = { 0 }, cost, best_cost = INFINITY;

	if (!f->k) {
		expand(f, best, lp);
		return;
	}
	for (int s = 0; s < STARTS; s++) {
		if (f->nuniq >= PROGRESS_CONFS)
			diag_progress("calibrate: %d runs, %d configurations: fitting %d "
				      "parameters, start %d of %d", f->n, f->nuniq, f->k, s + 1,
				      STARTS);
		for (int i = 0; i < f->k; i++)
			x0[i] = start[s][i % 2];
		cost = solve(f, m, x0, x);
		if (cost < best_cost * (1 - 1e-12)) {
			best_cost = cost;
			memcpy(best, x, sizeof x);
		}
	}
	expand(f, best, lp);
}

/* The runs' sensitivity to each parameter at lp: the central difference
 * of their errors over a step of STEP in its logarithm, into column j of
 * J (m rows, NP columns, row-major); the norm of each column into sens. */
static void
sensitivity(Fit *f, const double *lp, int m, double *J, double *sens)
{
	double *up = xcalloc((size_t)m, sizeof *up), *dn = xcalloc((size_t)m, sizeof *dn);
	double p[NP];

	for (int j = 0; j < NP; j++) {
		double norm = 0;
		memcpy(p, lp, sizeof p);
		p[j] = lp[j] + STEP;
		errors(f, p, up);
		p[j] = lp[j] - STEP;
		errors(f, p, dn);
		for (int i = 0; i < m; i++) {
			J[i * NP + j] = (up[i] - dn[i]) / (2 * STEP);
			norm += J[i * NP + j] * J[i * NP + j];
		}
		sens[j] = sqrt(norm);
	}
	free(up);
	free(dn);
}

/* The normal matrix of the free parameters, J^T J + pull * I (J: m rows,
 * NP columns, row-major; idx: the free columns), Cholesky-inverted into
 * a; false when it cannot be. */
static bool
normal_inverse(const double *J, int m, const int *idx, int k, double pull, gsl_matrix *a)
{
	for (int p = 0; p < k; p++)
		for (int q = 0; q < k; q++) {
			double v = 0;
			for (int i = 0; i < m; i++)
				v += J[i * NP + idx[p]] * J[i * NP + idx[q]];
			gsl_matrix_set(a, (size_t)p, (size_t)q, v + (p == q ? pull : 0));
		}
	return k > 0 && gsl_linalg_cholesky_decomp1(a) == GSL_SUCCESS &&
	       gsl_linalg_cholesky_invert(a) == GSL_SUCCESS;
}

/* The mean leave-one-out accuracy from the fit's influence: run i's
 * relative error without it is about e_i / (1 - h_ii), h_ii = J_i A^-1
 * J_i^T with A the Gauss-Newton matrix of the residuals fit_free
 * minimises (the pull's rows sqrt(PRIOR) x make it J^T J + PRIOR I).  A
 * run that cannot be predicted counts 0, as in the other means. */
static double
leave_one_out(const Fit *f, const double *J, const double *e, const int *idx, int k)
{
	gsl_matrix *a = gsl_matrix_alloc((size_t)(k ? k : 1), (size_t)(k ? k : 1));
	bool ok = normal_inverse(J, f->n, idx, k, PRIOR, a);
	double sum = 0;

	for (int i = 0; i < f->n; i++) {
		double h = 0, err;
		if (isnan(f->pred[f->conf[i]]))
			continue;
		for (int p = 0; ok && p < k; p++)
			for (int q = 0; q < k; q++)
				h += J[i * NP + idx[p]] * gsl_matrix_get(a, (size_t)p, (size_t)q) *
				     J[i * NP + idx[q]];
		err = h < 1 ? fabs(e[i]) / (1 - h) : INFINITY;
		sum += err < 1 ? 1 - err : 0;
	}
	gsl_matrix_free(a);
	return sum / f->n;
}

/* Fits, then frees no parameter the runs do not see: each pass drops
 * those whose sensitivity is below SEEN and refits the rest.  lp: the
 * fit; out: the factors, what is constrained, the standard errors and
 * the leave-one-out accuracy. */
static void
fit(Fit *f, double *lp, Calibration *out)
{
	int m = f->n, k, idx[NP];
	double *J = xcalloc((size_t)m * NP, sizeof *J), sens[NP], r2 = 0;
	double *e = xcalloc((size_t)m, sizeof *e);
	gsl_matrix *a;
	bool dropped, ok;

	f->k = 0;
	for (int j = 0; j < NP; j++)
		f->k += f->free[j] = has(f, j);
	for (int j = 0; j < NP; j++)
		out->too_few[j] = false;
	/* a parameter no run's prediction moves at all, at the system as it
	 * is (a class of kernels none of the models has), is left out before
	 * the first fit rather than after it: a fit is five starts, and one
	 * more of 2,000 runs took over two minutes under the sanitizers */
	for (int j = 0; j < NP; j++)
		lp[j] = 0;
	sensitivity(f, lp, m, J, sens);
	for (int j = 0; j < NP; j++)
		if (f->free[j] && sens[j] == 0) {
			f->free[j] = false;
			f->k--;
		}
	do {
		int least = -1;
		fit_free(f, m, lp);
		sensitivity(f, lp, m, J, sens);
		dropped = false;
		for (int j = 0; j < NP; j++)
			if (f->free[j] && sens[j] < SEEN) {
				f->free[j] = false;
				f->k--;
				dropped = true;
			}
		/* fewer parameters than runs (one for a single run): the one the
		 * runs see least goes back, until the rows support the rest */
		if (dropped || f->k <= (m > 1 ? m - 1 : 1))
			continue;
		for (int j = 0; j < NP; j++)
			if (f->free[j] && (least < 0 || sens[j] < sens[least]))
				least = j;
		f->free[least] = false;
		out->too_few[least] = true;
		f->k--;
		dropped = true;
	} while (dropped);
	/* covariance of the free parameters: (J^T J + PRIOR^2 I)^-1 times
	 * the residual variance (when there are more runs than them) -- the
	 * normal matrix of the residuals fit_free minimises, the pull
	 * included, so parameters the runs see only in a combination (a
	 * latency and a bandwidth of the same sends) get the large errors
	 * of the pull alone instead of a singular matrix */
	k = f->k;
	for (int j = 0, i = 0; j < NP; j++)
		if (f->free[j])
			idx[i++] = j;
	a = gsl_matrix_alloc((size_t)(k ? k : 1), (size_t)(k ? k : 1));
	ok = normal_inverse(J, m, idx, k, PRIOR * PRIOR, a) && m > k;
	errors(f, lp, e);
	for (int i = 0; i < m; i++)
		r2 += e[i] * e[i];
	for (int j = 0, i = 0; j < NP; j++) {
		for (int q = 0, l = 0; q < NP; q++) {
			out->corr[j][q] = NAN;
			if (ok && f->free[j] && f->free[q])
				out->corr[j][q] = gsl_matrix_get(a, (size_t)i, (size_t)l) /
						  sqrt(gsl_matrix_get(a, (size_t)i, (size_t)i) *
						       gsl_matrix_get(a, (size_t)l, (size_t)l));
			l += f->free[q];
		}
		out->constrained[j] = f->free[j];
		out->fitted[j] = has(f, j);
		out->rel_error[j] = NAN;
		if (f->free[j]) {
			if (ok)
				out->rel_error[j] = sqrt(gsl_matrix_get(a, (size_t)i, (size_t)i) *
							 r2 / (m - k));
			i++;
		}
	}
	gsl_matrix_free(a);
	out->loo = m > 1 ? leave_one_out(f, J, e, idx, k) : NAN;
	free(J);
	free(e);
}

/* A run's accuracy for the means of the fit: a run that could not be
 * predicted counts as 0. */
static double
fit_accuracy(double p, double m)
{
	double a = validation_accuracy(p, m);

	return isnan(a) ? 0 : a;
}

/* The factor a class's scale moved by (unset: 1). */
static double
class_factor(double base, double now)
{
	return now > 0 ? now / (base > 0 ? base : 1) : 1;
}

bool
calibrate_run(System *s, CalibRow *rows, int n, const StrategyOpts *o, Calibration *out)
{
	Fit f = { .sys = s, .base = *s, .send0 = software(s, rows, n, SOFT_SEND),
		  .stage0 = software(s, rows, n, SOFT_STAGE),
		  .dispatch0 = software(s, rows, n, SOFT_DISPATCH), .rows = rows, .n = n, .o = o };
	double lp[NP];
	gsl_error_handler_t *old = gsl_set_error_handler_off(); /* statuses, not aborts */

	configurations(&f);
	out->before = out->after = 0;
	for (int u = 0; u < f.nuniq; u++)
		f.pred[u] = calibrate_predict(&rows[f.uniq[u]], s, o);
	for (int i = 0; i < n; i++)
		out->before += fit_accuracy(f.pred[f.conf[i]], rows[i].measured) / n;
	fit(&f, lp, out);
	apply(&f, lp);
	for (int u = 0; u < f.nuniq; u++)
		f.pred[u] = calibrate_predict(&rows[f.uniq[u]], s, o);
	for (int i = 0; i < n; i++) {
		rows[i].predicted = f.pred[f.conf[i]];
		out->after += fit_accuracy(rows[i].predicted, rows[i].measured) / n;
	}
	/* the factors as applied (capped, kept in range); a parameter not
	 * fitted keeps its value */
	out->factor[CAL_CONV] = s->eff_conv / f.base.eff_conv;
	out->factor[CAL_CONV_1X1] = class_factor(f.base.conv_1x1_scale, s->conv_1x1_scale);
	out->factor[CAL_CONV_GROUPED] =
		class_factor(f.base.conv_grouped_scale, s->conv_grouped_scale);
	out->factor[CAL_GEMM] = s->eff_gemm / f.base.eff_gemm;
	out->factor[CAL_MEMORY] = s->eff_mem / f.base.eff_mem;
	out->factor[CAL_HOST] = f.dispatch0 > 0 && s->dispatch > 0 ? s->dispatch / f.dispatch0 : 1;
	out->factor[CAL_NIC_BW] = s->nic_bw / f.base.nic_bw;
	out->factor[CAL_NIC_LAT] = f.base.nic_lat > 0 ? s->nic_lat / f.base.nic_lat : 1;
	out->factor[CAL_P2P_LAT] = f.send0 > 0 ? s->p2p_lat / f.send0 : 1;
	out->factor[CAL_FS_RATE] =
		f.base.fs_file_rate > 0 ? s->fs_file_rate / f.base.fs_file_rate : 1;
	out->factor[CAL_CACHE] = f.base.cache_files > 0 ? s->cache_files / f.base.cache_files : 1;
	out->factor[CAL_STAGING] = f.stage0 > 0 ? s->staging_bw / f.stage0 : 1;
	free(f.uniq);
	free(f.conf);
	free(f.pred);
	gsl_set_error_handler(old);
	return true;
}
