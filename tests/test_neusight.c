/* test_neusight.c -- the kernel model (model/kernel.c) judged on GPUs it
 * was not fitted to.
 *
 * tests/data/kernels/gemm.csv holds NeuSight's single-operator
 * microbenchmarks (ASPLOS'25; its README says which commit and how the
 * rows were sampled): fp32 matrix products timed with PyTorch 2.1 on
 * eight GPUs, each time including the eager call's own cost on its host.
 * The model's free parameters -- the main loop's efficiency u and a tile's
 * overhead k0 -- are fitted on three GPUs (P100, V100, T4) and predict the
 * products of two others with their datasheets only (SMs, peak,
 * bandwidth, compute capability: gpus.csv): an A100 and an H100.  The
 * call's own cost is the host's, not the GPU's: each host's floor for
 * each call form (torch.bmm, nn.Linear) is its fastest call of that form,
 * measured, not fitted (docs/model.md, "One kernel"); the older figure,
 * one fixed cost fitted on the three training hosts, is printed beside
 * it.  The plain roofline at a constant efficiency, fitted the same way,
 * is the baseline.  The test asserts that the tiles in waves transfer
 * better than the roofline, and the mean errors it exists for.
 * tests/data/kernels/conv.csv's convolutions are judged the same way,
 * each priced as a layer is (kernel_compute), on the A100 80 GB.
 *
 * The rows are NeuSight's, not ours, so the repository does not carry
 * them: `python3 tests/data/kernels/extract.py NEUSIGHT_CHECKOUT` writes
 * them beside the script, and without them the test skips. */
#include "harness.h"
#include "model/model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAXROWS = 8000, GPUS = 16 };

typedef struct Gpu {
	char name[64];
	double sms, peak, bw, cc;
	double floor[2]; /* its host's fastest call of each form */
} Gpu;

typedef struct Row {
	int gpu;
	int form; /* 0 torch.bmm, 1 nn.Linear */
	Gemm p;
	double seconds;
} Row;

static Gpu gpu[GPUS];
static int ngpu;
static Row row[MAXROWS];
static int nrow;

static int
find_gpu(const char *name)
{
	for (int i = 0; i < ngpu; i++)
		if (strcmp(gpu[i].name, name) == 0)
			return i;
	return -1;
}

static void
load(void)
{
	char line[1024], b[64];
	FILE *f = fopen(data_path("kernels/gpus.csv"), "r");

	assert_non_null(f);
	assert_non_null(fgets(line, sizeof line, f)); /* header */
	while (ngpu < GPUS && fgets(line, sizeof line, f)) {
		Gpu *g = &gpu[ngpu++];
		snprintf(g->name, sizeof g->name, "%s", csv_field(line, 0, b, sizeof b));
		g->sms = atof(csv_field(line, 4, b, sizeof b));
		g->peak = atof(csv_field(line, 6, b, sizeof b));
		g->bw = atof(csv_field(line, 7, b, sizeof b));
		g->cc = atof(csv_field(line, 3, b, sizeof b)) / 10; /* sm_arch: 90 */
		g->floor[0] = g->floor[1] = INFINITY;
	}
	fclose(f);
	f = fopen(data_path("kernels/gemm.csv"), "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof line, f));
	while (nrow < MAXROWS && fgets(line, sizeof line, f)) {
		Row *r = &row[nrow];
		if ((r->gpu = find_gpu(csv_field(line, 0, b, sizeof b))) < 0)
			continue;
		r->p = (Gemm){ atof(csv_field(line, 4, b, sizeof b)),
			       atof(csv_field(line, 5, b, sizeof b)),
			       atof(csv_field(line, 6, b, sizeof b)),
			       atof(csv_field(line, 3, b, sizeof b)) };
		r->seconds = atof(csv_field(line, 9, b, sizeof b));
		r->form = strcmp(csv_field(line, 2, b, sizeof b), "linear") == 0;
		if (r->seconds > 0 && r->p.m > 0) {
			double *fl = &gpu[r->gpu].floor[r->form];
			*fl = r->seconds < *fl ? r->seconds : *fl;
			nrow++;
		}
	}
	fclose(f);
}

/* Free parameters of a model: the main loop's (or the roofline's)
 * efficiency, a tile's overhead in steps, the call's fixed seconds (< 0:
 * each host's measured floor instead). */
typedef struct Fit {
	double u, k0, t0;
} Fit;

/* Row r's predicted seconds: tiles in waves (waves) or the plain
 * roofline, at least the operands' bytes at 70 % of the bandwidth, plus
 * the call's cost. */
static double
predict(const Row *r, Fit f, bool waves)
{
	const Gpu *g = &gpu[r->gpu];
	System s = { .sms = waves ? (int)g->sms : 0, .tile_overhead = f.k0, .mem_bw = g->bw,
		     .eff_mem = 0.7, .compute_capability = g->cc };
	double bytes = 4 * r->p.batch * (r->p.m * r->p.k + r->p.k * r->p.n + r->p.m * r->p.n);
	double tc, tm = bytes / (g->bw * 0.7);

	s.peak[DT_FP32] = g->peak;
	tc = gemm_time(NULL, &s, &r->p, g->peak, f.u);
	return (tc > tm ? tc : tm) + (f.t0 < 0 ? g->floor[r->form] : f.t0);
}

static int
cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The mean relative error |p - m| / m of model f over the rows of the
 * GPUs in mask, and where median is given their median too. */
static double
errors(Fit f, bool waves, unsigned mask, double *median)
{
	static double e[MAXROWS];
	int n = 0;
	double sum = 0;

	for (int i = 0; i < nrow; i++)
		if (mask & (1u << row[i].gpu)) {
			e[n] = fabs(predict(&row[i], f, waves) - row[i].seconds) / row[i].seconds;
			sum += e[n++];
		}
	if (median) {
		qsort(e, (size_t)n, sizeof *e, cmp);
		*median = n ? e[n / 2] : NAN;
	}
	return n ? sum / n : NAN;
}

/* The parameters with the least mean error (the measure judged) on the
 * GPUs in mask: a grid over u, k0 (waves only) and t0 (floors: each
 * host's measured floor, nothing to fit). */
static Fit
fit(bool waves, bool floors, unsigned mask)
{
	static const double k0s[] = { 0, 8, 16, 32, 64 }, t0s[] = { 5e-6, 10e-6, 20e-6, 30e-6,
								  40e-6, 60e-6 };
	Fit best = { 1, 0, 0 };
	double least = INFINITY;

	for (double u = 0.3; u <= 1.0001; u += 0.05)
		for (size_t k = 0; k < (waves ? 5 : 1); k++)
			for (size_t t = 0; t < (floors ? 1 : 6); t++) {
				Fit f = { u, k0s[k], floors ? -1 : t0s[t] };
				double e = errors(f, waves, mask, NULL);
				if (e < least)
					least = e, best = f;
			}
	return best;
}

/* The fits on the training GPUs and their errors on the judged ones,
 * printed; mean[i] the judged GPU i's mean error of the tiles, mean[2]
 * both GPUs' rows together. */
static void
judge(bool floors, unsigned train, const int *judged, double *mean)
{
	Fit w = fit(true, floors, train), r = fit(false, floors, train);

	printf("# %s; fitted on P100, V100, T4: tiles in waves u %.2f k0 %.0f "
	       "(mean error %.3f), roofline u %.2f", floors ? "each host's floor" :
	       "one fitted call cost", w.u, w.k0, errors(w, true, train, NULL), r.u);
	if (!floors)
		printf(", call cost %.0f and %.0f us", w.t0 * 1e6, r.t0 * 1e6);
	printf("\n");
	for (int i = 0; i < 2; i++) {
		int k = judged[i];
		double ew, er, mw = errors(w, true, 1u << k, &ew);
		double mr = errors(r, false, 1u << k, &er);
		printf("#   %s: tiles in waves mean error %.3f (median %.3f); roofline %.3f "
		       "(median %.3f)\n", gpu[k].name, mw, ew, mr, er);
		/* the size-aware model transfers better than a constant
		 * efficiency: a smaller mean error (NeuSight's measure) */
		assert_true(mw < mr);
		mean[i] = mw;
	}
	mean[2] = errors(w, true, 1u << judged[0] | 1u << judged[1], NULL);
	printf("#   both: tiles in waves mean error %.3f\n", mean[2]);
}

static void
tiles_in_waves_transfer_to_gpus_they_were_not_fitted_on(void **state)
{
	unsigned train = 0;
	const char *trainers[] = { "P100-PCIe-16GB", "V100-PCIe-32GB", "T4" };
	int judged[] = { find_gpu("A100-PCIe-40GB"), find_gpu("H100-SXM-80GB") };
	double fitted[3], floors[3];

	(void)state;
	assert_int_equal(ngpu, 8);
	assert_true(nrow > 6000);
	assert_true(judged[0] >= 0 && judged[1] >= 0);
	for (int i = 0; i < 3; i++) {
		int k = find_gpu(trainers[i]);
		assert_true(k >= 0);
		train |= 1u << k;
	}
	judge(false, train, judged, fitted);
	judge(true, train, judged, floors);
	/* the figures of docs/model.md, "One kernel": the A100 0.175 and
	 * 0.141, the H100 0.123 and 0.082, both 0.149 and 0.111 */
	assert_true(fitted[0] < 0.18 && fitted[1] < 0.13);
	assert_true(floors[0] < 0.15 && floors[1] < 0.09 && floors[2] <= 0.12);
}

/* NeuSight's convolutions (conv.csv): fp32 forward 3 x 3, stride 1, pad 1,
 * timed with cudnn.benchmark on, as a layer's product (and Winograd, where
 * faster) prices them: kernel_compute, at least the operands' bytes at 70 %
 * of the bandwidth, plus each host's floor for the call (its fastest
 * convolution).  u and k0 fitted on P100, V100, T4 by the mean error; the
 * A100 80 GB judged. */
enum { MAXCONV = 2100 };
typedef struct ConvRow {
	int gpu;
	double n, bytes, seconds;
	const Graph *g;
	const Layer *l;
} ConvRow;
static ConvRow conv[MAXCONV];
static int nconv;
static double conv_floor[GPUS];

static void
load_convs(Fx *fx)
{
	char line[1024], b[64], src[256];
	FILE *f = fopen(data_path("kernels/conv.csv"), "r");

	assert_non_null(f);
	assert_non_null(fgets(line, sizeof line, f));
	for (int i = 0; i < ngpu; i++)
		conv_floor[i] = INFINITY;
	while (nconv < MAXCONV && fgets(line, sizeof line, f)) {
		ConvRow *r = &conv[nconv];
		double n = atof(csv_field(line, 3, b, sizeof b));
		double c = atof(csv_field(line, 4, b, sizeof b));
		double h = atof(csv_field(line, 5, b, sizeof b));
		double k = atof(csv_field(line, 7, b, sizeof b));
		if ((r->gpu = find_gpu(csv_field(line, 0, b, sizeof b))) < 0)
			continue;
		r->n = n;
		r->seconds = atof(csv_field(line, 16, b, sizeof b));
		r->bytes = 4 * (n * c * h * h + k * c * 9 + n * k * h * h);
		snprintf(src, sizeof src,
			 "model m { input x: %.0fx%.0fx%.0f;\n"
			 "  c = conv(x, %.0f, kernel=3, pad=1); }", c, h, h, k);
		r->g = fx_run(fx, src, PASS_MEMORY);
		assert_non_null(r->g);
		r->l = fx_layer(r->g, "c");
		if (r->seconds < conv_floor[r->gpu])
			conv_floor[r->gpu] = r->seconds;
		nconv++;
	}
	fclose(f);
}

static double
conv_predict(Fx *fx, const ConvRow *r, Fit f)
{
	const Gpu *g = &gpu[r->gpu];
	System s = { .sms = (int)g->sms, .tile_overhead = f.k0, .mem_bw = g->bw, .eff_mem = 0.7,
		     .compute_capability = g->cc };
	Analysis an = { .eng = fx->eng, .q.sys = &s, .q.impl = fx_impl(NULL) };
	double tc, tm = r->bytes / (g->bw * 0.7);

	s.peak[DT_FP32] = g->peak;
	an.q.set.prec = PREC_FP32;
	tc = kernel_compute(&an, r->g, r->l, r->n, 1, false, DT_FP32, g->peak, f.u,
			    (double)r->l->cost.flops_fwd * r->n);
	return (tc > tm ? tc : tm) + conv_floor[r->gpu];
}

static double
conv_error(Fx *fx, Fit f, unsigned mask)
{
	double sum = 0;
	int n = 0;

	for (int i = 0; i < nconv; i++)
		if (mask & (1u << conv[i].gpu)) {
			double p = conv_predict(fx, &conv[i], f);
			sum += fabs(p - conv[i].seconds) / conv[i].seconds;
			n++;
		}
	return n ? sum / n : NAN;
}

static void
convolutions_transfer_to_a_gpu_not_fitted_on(void **state)
{
	Fx *fx = *state;
	unsigned train = 1u << find_gpu("P100-PCIe-16GB") | 1u << find_gpu("V100-PCIe-32GB") |
			 1u << find_gpu("T4");
	int a = find_gpu("A100-PCIe-80GB");
	static const double k0s[] = { 0, 8, 16, 32, 64 };
	Fit best = { 1, 0, 0 };
	double least = INFINITY, judged;

	load_convs(fx);
	assert_true(nconv > 1900);
	for (double u = 0.3; u <= 1.0001; u += 0.05)
		for (size_t k = 0; k < 5; k++) {
			Fit f = { u, k0s[k], 0 };
			double e = conv_error(fx, f, train);
			if (e < least)
				least = e, best = f;
		}
	printf("# convolutions fitted on P100, V100, T4: u %.2f k0 %.0f (mean error %.3f)\n",
	       best.u, best.k0, least);
	for (int i = 0; i < ngpu; i++)
		if (i == a || train & 1u << i)
			printf("#   %s: mean error %.3f\n", gpu[i].name,
			       conv_error(fx, best, 1u << i));
	/* the figures of docs/model.md, "One kernel": the judged GPU as far
	 * off as the training ones (0.388 against 0.341-0.384), under 0.4 */
	judged = conv_error(fx, best, 1u << a);
	assert_true(judged < 0.40 && judged < 1.1 * least);
}

int
main(void)
{
	static const char *need[] = {
		"kernels/gpus.csv",
		"kernels/gemm.csv",
		"kernels/conv.csv",
	};

	for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
		if (access(data_path(need[i]), R_OK) != 0) {
			/* TAP: the whole file skipped */
			printf("1..0 # SKIP no NeuSight rows: python3 "
			       "tests/data/kernels/extract.py NEUSIGHT_CHECKOUT makes them\n");
			return 0;
		}
	load();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tiles_in_waves_transfer_to_gpus_they_were_not_fitted_on),
		cmocka_unit_test_setup_teardown(convolutions_transfer_to_a_gpu_not_fitted_on,
						fx_setup, fx_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
