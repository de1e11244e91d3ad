/* measured.c -- libFuzzer harness: the measured-runs CSV of oraclec
 * validate and calibrate (measured_load), then each row set up and
 * predicted as `oraclec validate` does (analysis_measured; every row's
 * model is one small fixed model, analysed once), the scores and the
 * validation reports; and, for an input of one row, the calibration fit.
 * A fit is thousands of predictions at systems no memo has met (five
 * starts, a finite-difference Jacobian, a pass more for each parameter
 * too many for the runs): in this build (-fsanitize=fuzzer,address,
 * undefined) one row of a hybrid grid took up to 0.45 s, two 0.76 s and
 * three 0.77 s (3.5 s before model/reuse.c kept its rows in order of
 * use), against the 1 s fuzz/run gives an input with another harness
 * beside it.  The fit of many rows (the covariance, leave-one-out) runs
 * under the sanitizers in tests/cli.sh's calibrations of 6 and 21 runs. */
#include "fuzz/common.h"

#include "backends/backends.h"
#include "frontend/frontend.h"
#include "plan/analysis.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static Arena keep;
static Graph *model;
static const System *abci;
static FILE *devnull;

static void
once(void)
{
	static const char text[] =
		"model m { input x: 3x64x64; c = conv(x, 16, kernel=3, pad=1); r = relu(c);"
		" p = maxpool(r, kernel=2, stride=2); d = conv(p, 32, kernel=3, pad=1);"
		" f = flatten(d); o = fc(f, 10); }\n";
	FileList files = { 0 };

	fuzz_init();
	arena_init(&keep);
	model = dsl_load(fuzz_file("model.odl", (const uint8_t *)text, sizeof text - 1), &keep,
			 &files);
	abci = system_load("abci", &keep, &files);
	files_free(&files);
	devnull = fopen("/dev/null", "w");
	if (!model || !fuzz_passes(model) || !abci || !devnull)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	StrategyOpts so = { .mask = (1u << STRAT_COUNT) - 1, .spatial_split = SPLIT_ALL };
	Validation v = { 0 };
	FileList files = { 0 };
	CalibRow *cr;
	Engine *eng;
	Arena a;

	if (!model)
		once();
	eng = engine_new(true);
	arena_init(&a);
	v.row = measured_load(fuzz_file("in.csv", data, size), &a, &files, &v.nrow);
	if (!v.row)
		goto done;
	cr = arena_array(&a, (size_t)v.nrow, sizeof *cr);
	for (int i = 0; i < v.nrow; i++) {
		Measured *r = &v.row[i];
		Candidate k;

		Analysis *an = arena_alloc(&a, sizeof *an);

		if (!analysis_measured(an, eng, &settings_default, model, abci, r))
			abort(); /* the fixed model on abci must analyse */
		analysis_row(&cr[i], model, an, r);
		strategy_predict(model, an, &so, r->kind, r->grid, &k);
		r->predicted = k.computable ? k.t.total : NAN;
		r->note = k.computable ? k.bottleneck : k.reason;
	}
	validation_score(&v);
	validation_text(&v, devnull);
	validation_csv(&v, devnull);
	if (v.nrow == 1) {
		System s = *abci;
		Calibration cal;

		calibrate_run(&s, cr, v.nrow, &so, &cal);
		system_emit(&s, "fuzz", "calibrated", devnull);
	}
done:
	engine_free(eng);
	fuzz_done(&a, &files);
	return 0;
}
