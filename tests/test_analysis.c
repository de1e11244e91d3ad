/* test_analysis.c -- plan/analysis.c: the settings' defaults, bytes per
 * item set before any pass, the pass table's runner (order, resuming,
 * -v notes, its internal checks) and the set-up of measured runs. */
#include "harness.h"

#include <signal.h>
#include <sys/wait.h>

#include "model/key.h"
#include "plan/analysis.h"

/* An image model without a dataset size: 3x32x32 in, ten classes out. */
static const char image_model[] =
	"model m {\n"
	"    input x: 3x32x32;\n"
	"    c = conv(x, 8, kernel=3, pad=1);\n"
	"    r = relu(c);\n"
	"    f = flatten(r);\n"
	"    o = fc(f, 10);\n"
	"}\n";

static void
settings_default_are_the_documented_defaults(void **state)
{
	const Settings *d = &settings_default;

	(void)state;
	assert_int_equal(d->prec, PREC_FP32);
	assert_int_equal(d->opt, OPT_MOMENTUM);
	assert_int_equal(d->gpus, 1);
	assert_int_equal(d->batch_per_gpu, 32);
	assert_int_equal(d->global_batch, 0);
	assert_int_equal(d->dataset_size, 0);
	assert_true(d->sample_bytes == 0);
	assert_int_equal(precision_bytes(PREC_FP32), 4);
	assert_int_equal(precision_bytes(PREC_FP16), 2);
	assert_int_equal(precision_bytes(PREC_BF16), 2);
}

/* The bug of issue 12 (bytes per item set after the cost and memory
 * passes left their byte counts at fp32's) cannot come back: the passes
 * count elements, whatever the precision, and an analysis prices them at
 * its own.  The conv keeps the input x (3x32x32 = 3,072), relu its output
 * (8x32x32 = 8,192). */
static void
the_bytes_per_item_are_the_analysiss(void **state)
{
	Fx *fx = *state;
	Settings set = settings_default;
	Graph *g = fx_load(fx, image_model);
	const Precision at[] = { PREC_FP16, PREC_FP32, PREC_BF16 };

	assert_non_null(g);
	set.dataset_size = 1000;
	analysis_init(g, &set);
	assert_int_equal(g->dataset_size, 1000);
	assert_true(passes_run(g, NULL, PASS_MEMORY, NULL));
	assert_int_equal(g->layer[1].cost.act_elems, 8192);
	for (int i = 0; i < 3; i++) {
		Analysis an = { .q.set.prec = at[i] };
		ModelBytes b = model_bytes(&an, g);
		int w = precision_bytes(at[i]);
		assert_int_equal(b.item, w);
		assert_int_equal(b.act, (3072 + 8192) * w);
		assert_int_equal(b.weights, g->total.params * w);
		assert_int_equal(layer_bytes(&an, g, 1).act, 8192 * w);
		assert_int_equal(layer_bytes(&an, g, 0).fwd, g->layer[0].cost.elems_fwd * w);
		assert_int_equal(b.saved, 8192 * 4); /* autograd's figure: fp32 */
	}
}

/* amp-fp16 (autocast): conv and fc compute in 16 bits and save 16-bit
 * inputs -- the conv a cast of the fp32 input x (3x32x32 = 3,072
 * elements, a storage of its own), the fc the flattened relu output, which
 * follows the conv's type: 16-bit, no cast.  relu keeps its 16-bit output
 * (8x32x32 = 8,192).  So 2 x (3,072 + 8,192) = 22,528 bytes per sample,
 * where fp32 keeps 4 x 8,192 = 32,768 (the input left out).  Autocast
 * caches 16-bit copies of the weights, biases aside: 8x3x3x3 + 10x8,192
 * = 82,136 elements, 164,272 bytes.  Weights stay fp32 (4 bytes). */
static void
autocast_saves_16_bit_activations_and_weight_copies(void **state)
{
	Fx *fx = *state;
	Settings set = settings_default;
	Graph *g = fx_load(fx, image_model);
	Precision p;

	assert_non_null(g);
	assert_true(precision_parse("amp-fp16", &p));
	assert_int_equal(p, PREC_AMP_FP16);
	assert_false(precision_parse("fp4", &p));
	set.prec = p;
	analysis_init(g, &set);
	assert_true(passes_run(g, NULL, PASS_MEMORY, NULL));
	Analysis an = { .q.set.prec = p };
	ModelBytes b = model_bytes(&an, g);
	assert_int_equal(b.item, 4);
	assert_int_equal(b.saved, 32768);
	assert_int_equal(b.saved_low, 22528);
	assert_int_equal(b.act, 22528);
	assert_int_equal(b.cast_weights, 164272);
	assert_true(g->layer[0].low && g->layer[1].low);
	an.q.set.prec = PREC_FP32; /* the same graph, no autocast */
	b = model_bytes(&an, g);
	assert_int_equal(b.act, 4 * (3072 + 8192));
	assert_int_equal(b.saved_low, 0);
	assert_int_equal(b.cast_weights, 0);
	assert_int_equal(precision_dtype(PREC_AMP_FP16, true), DT_FP16);
	assert_int_equal(precision_dtype(PREC_AMP_FP16, false), DT_FP32);
	assert_int_equal(precision_dtype(PREC_TF32, true), DT_TF32);
}

/* A run in two steps: the model's passes, then (with the analysis) the
 * system's; each pass runs once, -v notes each. */
static void
passes_run_resumes_where_it_stopped(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_load(fx, image_model);
	Analysis an;

	assert_non_null(g);
	analysis_init(g, &settings_default);
	diag_verbose = 1;
	assert_true(passes_run(g, NULL, PASS_SHAPE, NULL));
	assert_int_equal(g->done, PASS_SHAPE);
	assert_true(passes_run(g, NULL, PASS_MEMORY, NULL));
	assert_int_equal(g->done, PASS_SHAPE | PASS_COST | PASS_MEMORY);
	assert_true(analysis_setup(&an, fx->eng, &settings_default, g, fx_abci(fx)));
	assert_true(passes_run(g, &an, PASS_TIMING, NULL));
	assert_true(passes_run(g, &an, PASS_TIMING, NULL)); /* nothing left to run */
	diag_verbose = 0;
	assert_int_equal(g->done, PASS_SHAPE | PASS_COST | PASS_MEMORY | PASS_TIMING);
	assert_non_null(strstr(fx_diags(fx), "pass shape: "));
	assert_null(strstr(strstr(fx_diags(fx), "pass shape: ") + 1, "pass shape: "));
	assert_non_null(strstr(strstr(fx_diags(fx), "pass cost: "), "pass memory: "));
	assert_non_null(strstr(strstr(fx_diags(fx), "pass memory: "), "pass timing: "));
	assert_null(strstr(strstr(fx_diags(fx), "pass timing: ") + 1, "pass timing: "));
}

/* The runner stops after the pass --dump-after names, the IR printed. */
static void
passes_run_stops_after_the_dumped_pass(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_load(fx, image_model);
	FILE *saved = stdout, *out = tmpfile();

	assert_non_null(g);
	assert_non_null(out);
	analysis_init(g, &settings_default);
	stdout = out;
	assert_true(passes_run(g, NULL, PASS_MEMORY, "cost"));
	stdout = saved;
	assert_int_equal(g->done, PASS_SHAPE | PASS_COST);
	assert_true(ftell(out) > 0);
	fclose(out);
}

/* Runs passes_run(g, an, want) in a child process; true when it died by
 * abort() (an internal error), its message dropped. */
static bool
aborts(Graph *g, const Analysis *an, unsigned want)
{
	pid_t pid = fork();
	int status;

	assert_true(pid >= 0);
	if (pid == 0) {
		diag_out = fopen("/dev/null", "w");
		passes_run(g, an, want, NULL);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

/* A pass that needs the system, run before the analysis is set up, is an
 * internal error: die(). */
static void
passes_run_dies_when_the_timing_pass_has_no_analysis(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_load(fx, image_model);
	Analysis an = { 0 };

	assert_non_null(g);
	analysis_init(g, &settings_default);
	assert_true(passes_run(g, NULL, PASS_MEMORY, NULL));
	assert_true(aborts(g, NULL, PASS_TIMING));
	assert_true(aborts(g, &an, PASS_TIMING)); /* no system */
	assert_false(aborts(g, NULL, PASS_MEMORY)); /* all done: nothing runs */
}

static void
pass_dumpable_knows_the_passes_on_the_model_alone(void **state)
{
	(void)state;
	assert_true(pass_dumpable("parse"));
	assert_true(pass_dumpable("shape"));
	assert_true(pass_dumpable("cost"));
	assert_true(pass_dumpable("memory"));
	assert_false(pass_dumpable("timing"));
	assert_false(pass_dumpable("bogus"));
	assert_false(pass_dumpable(""));
}

/* Weak scaling at 32 per GPU, ImageNet's dataset and JPEG size for an
 * image model; strong scaling and a given dataset override them. */
static void
analysis_setup_fills_in_the_defaults(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_load(fx, image_model);
	Settings set = settings_default;
	Analysis an;

	assert_non_null(g);
	analysis_init(g, &set);
	assert_true(passes_run(g, NULL, PASS_MEMORY, NULL));
	assert_true(analysis_setup(&an, fx->eng, &set, g, fx_abci(fx)));
	assert_int_equal(an.q.set.prec, PREC_FP32);
	assert_int_equal(an.q.set.opt, OPT_MOMENTUM);
	assert_int_equal(an.q.set.gpus, 1);
	assert_int_equal(an.q.set.batch_per_gpu, 32);
	assert_int_equal(an.q.set.global_batch, 0);
	assert_int_equal(an.q.set.dataset_size, 1281167);
	assert_true(an.q.set.sample_bytes == 3072); /* a 32 x 32 image: raw bytes */
	assert_int_equal(an.q.set.data, DATA_RAW);
	/* abci runs the ParaDL scripts' software unless told otherwise */
	assert_string_equal(an.q.impl.name, "chainermn-paradl");
	assert_true(an.q.impl.staged && an.q.impl.chain && an.q.impl.node_loader);
	set.global_batch = 512;
	set.dataset_size = 5000;
	set.sample_bytes = 7;
	assert_true(analysis_setup(&an, fx->eng, &set, g, fx_abci(fx)));
	assert_int_equal(an.q.set.batch_per_gpu, 0);
	assert_int_equal(an.q.set.global_batch, 512);
	assert_int_equal(an.q.set.dataset_size, 5000);
	assert_true(an.q.set.sample_bytes == 7);
	assert_int_equal(an.q.set.data, DATA_RAW);
	/* --loader-workers overrides the implementation's */
	set.loader_workers = 3;
	assert_true(analysis_setup(&an, fx->eng, &set, g, fx_abci(fx)));
	assert_int_equal(an.q.impl.loader_workers, 3);
}

/* An ImageNet-sized image is a JPEG of ImageNet's average size; --data
 * says otherwise. */
static void
analysis_setup_reads_large_images_as_jpeg(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_load(fx, "model c { input x: 3x224x224; f = flatten(x); o = fc(f, 10); }\n");
	Settings set = settings_default;
	Analysis an;

	assert_non_null(g);
	analysis_init(g, &set);
	assert_true(passes_run(g, NULL, PASS_MEMORY, NULL));
	assert_true(analysis_setup(&an, fx->eng, &set, g, fx_abci(fx)));
	assert_int_equal(an.q.set.data, DATA_JPEG);
	assert_true(an.q.set.sample_bytes == 110e3);
	set.data = DATA_STORED;
	assert_true(analysis_setup(&an, fx->eng, &set, g, fx_abci(fx)));
	assert_true(an.q.set.sample_bytes == 3 * 224 * 224 * 4);
}

/* Not an image: the input tensor at 4 bytes per item, nothing to decode;
 * a system without the precision's peak is an input error. */
static void
analysis_setup_sizes_other_inputs_and_checks_the_peak(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_load(fx, "model v { input x: 100; o = fc(x, 10); }\n");
	Settings set = settings_default;
	Analysis an;

	assert_non_null(g);
	analysis_init(g, &set);
	assert_true(passes_run(g, NULL, PASS_MEMORY, NULL));
	assert_true(analysis_setup(&an, fx->eng, &set, g, fx_abci(fx)));
	assert_true(an.q.set.sample_bytes == 400);
	assert_int_equal(an.q.set.data, DATA_STORED);
	set.prec = PREC_BF16;
	assert_false(analysis_setup(&an, fx->eng, &set, g, fx_abci(fx)));
	assert_non_null(
		strstr(fx_diags(fx),
		       "oraclec: error: --precision bf16: abci (built-in) has no bf16 peak"));
	assert_false(analysis_setup(&an, fx->eng, &settings_default, g, NULL));
}

/* A measured run takes its GPUs, batch and dataset from the row, the rest
 * from the settings, and runs the system's passes on its model. */
static void
analysis_measured_sets_up_the_row(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_load(fx, image_model);
	Settings set = settings_default;
	Measured r = { .kind = STRAT_DATA, .gpus = 8, .global_batch = 256,
		       .dataset_size = 9000, .measured = 0.5 };
	CalibRow row = { 0 };
	Analysis an = { 0 };

	assert_non_null(g);
	r.grid[DIM_DATA] = 8;
	set.opt = OPT_ADAM;
	analysis_init(g, &set);
	assert_true(passes_run(g, NULL, PASS_MEMORY, NULL));
	assert_true(analysis_measured(&an, fx->eng, &set, g, fx_abci(fx), &r));
	analysis_row(&row, g, &an, &r);
	assert_ptr_equal(row.g, g);
	assert_ptr_equal(row.an, &an);
	assert_int_equal(row.kind, STRAT_DATA);
	assert_int_equal(row.grid[DIM_DATA], 8);
	assert_true(row.measured == 0.5);
	assert_int_equal(row.an->q.set.gpus, 8);
	assert_int_equal(row.an->q.set.global_batch, 256);
	assert_int_equal(row.an->q.set.batch_per_gpu, 0);
	assert_int_equal(row.an->q.set.dataset_size, 9000);
	assert_int_equal(row.an->q.set.opt, OPT_ADAM);
	assert_true(g->done & PASS_TIMING);
}

/* Each setting keys the engine's memos as ir/settings.def says: changing
 * it changes a layer's key where its `layer` column says KEYS, a
 * partition's where either column does, and nothing where both say
 * NO_KEY; a KEYS_AS setting keys on its expression (ZeRO: whether
 * gradients are sharded, stage 2 and up). */
static void
settings_key_as_the_table_says(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_run(fx, image_model, PASS_MEMORY);
	Analysis an;

	assert_true(analysis_setup(&an, fx->eng, &settings_default, g, fx_abci(fx)));
	assert_true(nkeyed_settings > 15);
	for (int i = 0; i < nkeyed_settings; i++) {
		const KeyedSetting *k = &keyed_settings[i];
		for (int role = 0; role < KEY_ROLES; role++) {
			static QueryKey before, after;
			Query q = an.q;
			bool keys = strcmp(k->how[KEY_LAYER], "KEYS") == 0 ||
				    (role == KEY_PLAN && strcmp(k->how[KEY_PLAN], "KEYS") == 0);
			bool none = strcmp(k->how[KEY_LAYER], "NO_KEY") == 0 &&
				    (role == KEY_LAYER || strcmp(k->how[KEY_PLAN], "NO_KEY") == 0);
			bool changed;
			assert_true(keys || none || strncmp(k->how[KEY_LAYER], "KEYS_AS(", 8) == 0);
			query_key(&q, g, (KeyRole)role, &before);
			((unsigned char *)&q.set)[k->offset] ^= 1; /* another value */
			query_key(&q, g, (KeyRole)role, &after);
			changed = before.len != after.len ||
				  memcmp(before.b, after.b, before.len) != 0;
			if (keys || none)
				assert_true(changed == keys);
		}
	}
	/* ZeRO: a layer's figures read whether gradients are sharded */
	{
		static QueryKey k0, k1, k2;
		Query q = an.q;
		q.set.zero = 0, query_key(&q, g, KEY_LAYER, &k0);
		q.set.zero = 1, query_key(&q, g, KEY_LAYER, &k1);
		q.set.zero = 2, query_key(&q, g, KEY_LAYER, &k2);
		assert_memory_equal(k0.b, k1.b, k0.len);
		assert_memory_not_equal(k1.b, k2.b, k1.len);
		q.set.zero = 1, query_key(&q, g, KEY_PLAN, &k1);
		q.set.zero = 0, query_key(&q, g, KEY_PLAN, &k0);
		assert_memory_not_equal(k0.b, k1.b, k0.len);
	}
	/* the system and the implementation key whole */
	{
		static QueryKey a, b;
		Query q = an.q;
		System s = *an.q.sys;
		query_key(&q, g, KEY_LAYER, &a);
		s.kernel_lat *= 2;
		q.sys = &s;
		query_key(&q, g, KEY_LAYER, &b);
		assert_memory_not_equal(a.b, b.b, a.len);
		q = an.q;
		q.impl.dispatch *= 2;
		query_key(&q, g, KEY_LAYER, &b);
		assert_memory_not_equal(a.b, b.b, a.len);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(settings_default_are_the_documented_defaults),
		FX_TEST(the_bytes_per_item_are_the_analysiss),
		FX_TEST(autocast_saves_16_bit_activations_and_weight_copies),
		FX_TEST(passes_run_resumes_where_it_stopped),
		FX_TEST(passes_run_stops_after_the_dumped_pass),
		FX_TEST(passes_run_dies_when_the_timing_pass_has_no_analysis),
		cmocka_unit_test(pass_dumpable_knows_the_passes_on_the_model_alone),
		FX_TEST(analysis_setup_fills_in_the_defaults),
		FX_TEST(analysis_setup_sizes_other_inputs_and_checks_the_peak),
		FX_TEST(analysis_setup_reads_large_images_as_jpeg),
		FX_TEST(analysis_measured_sets_up_the_row),
		FX_TEST(settings_key_as_the_table_says),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
