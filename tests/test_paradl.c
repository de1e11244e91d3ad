/* test_paradl.c -- ParaDL's model tables (frontend/paradl.c), measured
 * profiles (frontend/profile.c) and how the model uses measured times
 * (model/compute.c): the shipped tables of tests/data/paradl, the chain
 * rule, the time column, and the diagnostics of bad input. */
#include "harness.h"
#include "model/model.h"

#include <math.h>


/* The header every small table below starts with (3 lines). */
#define HEAD "Dataset|toy\nInput|100x3x8x8\nModel|toy\n"

/* A table through the frontend and the passes main.c runs; NULL as soon
 * as a step reports an error. */
static Graph *
net_run(Fx *fx, const char *path)
{
	Graph *g = paradl_load_net(path, &fx->arena, &fx->files);

	if (!g)
		return NULL;
	assert_int_equal(ir_verify(g), 0);
	if (!shape_infer(g) || !cost_annotate(g) || !memory_annotate(g))
		return NULL;
	assert_int_equal(ir_verify(g), 0);
	return g;
}

static Graph *
net_text(Fx *fx, const char *text)
{
	return net_run(fx, fx_write(fx, "t.net", text));
}

static Graph *
shipped(Fx *fx, const char *name)
{
	char path[4096];

	snprintf(path, sizeof path, "%s", data_path(name));
	return net_run(fx, arena_strdup(&fx->arena, path));
}

/* Forgets what was reported, for the next case of a table-driven test: a
 * new memory stream (one rewound keeps its old bytes past the new end). */
static void
restart(Fx *fx)
{
	diag_reset();
	fclose(fx->diag);
	free(fx->diag_buf);
	fx->diag_buf = NULL;
	fx->diag = open_memstream(&fx->diag_buf, &fx->diag_len);
	assert_non_null(fx->diag);
	diag_out = fx->diag;
}

/* ParaDL's weight column sums to the tables' Sigma|w| (its README); oraclec
 * adds what the column leaves out: batch-norm scale and shift (2 C per
 * BNORM row), a bias on every FC and on every conv that no BNORM follows.
 *   ResNet-50: 22,734,016 + 45,440 (BN) + 1,000 (FC)        = 22,780,456
 *   VGG16:    169,801,408 + 4,224 (conv) + 9,192 (FC)        = 169,814,824
 *   AlexNet:   62,367,776 + 1,376 (conv) + 9,192 (FC)        = 62,378,344
 *   CosmoFlow:  2,128,064 + 880 (conv) + 2,308 (FC)          = 2,131,252 */
static void
shipped_tables_count_the_weight_column_plus_biases_and_bn(void **state)
{
	Fx *fx = *state;
	static const struct {
		const char *file;
		int64_t params, dataset;
		int layers; /* rows, and a flatten before the first FC */
	} t[] = {
		{ "paradl/RESNET50_ImageNet_profall.net_sc", 22780456, 1280000, 167 },
		{ "paradl/VGG_ImageNet_profall.net_sc", 169814824, 1280000, 39 },
		{ "paradl/ALEXNET_ImageNet_profall.net_sc", 62378344, 1280000, 21 },
		{ "paradl/ALEXNET_ImageNet.net", 62378344, 1280000, 21 },
		{ "paradl/COSMOFLOW.net", 2131252, 1584, 26 },
	};

	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		Graph *g = shipped(fx, t[i].file);
		assert_non_null(g);
		assert_int_equal(g->total.params, t[i].params);
		assert_int_equal(g->dataset_size, t[i].dataset);
		assert_int_equal(g->nlayer, t[i].layers);
		assert_string_equal(g->format, "paradl");
	}
	/* the published MACs of CosmoFlow's layer shapes (tests/golden.sh) */
	assert_int_equal(shipped(fx, "paradl/COSMOFLOW.net")->total.macs, 472306170880);
}

/* The ResNet-50 table lacks the four projection shortcuts: with them (the
 * 1x1 convs 64->256, 256->512, 512->1024, 1024->2048 and their batch
 * norms) it has exactly the 25,557,032 parameters of examples/resnet50.odl. */
static void
resnet50_table_is_resnet50_without_its_projections(void **state)
{
	Fx *fx = *state;
	Graph *t = shipped(fx, "paradl/RESNET50_ImageNet_profall.net_sc");
	char path[4096];
	Graph *odl;
	int64_t proj = 64 * 256 + 256 * 512 + 512 * 1024 + 1024 * 2048 +
		       2 * (256 + 512 + 1024 + 2048);

	snprintf(path, sizeof path, "%s/examples/resnet50.odl",
		 getenv("srcdir") ? getenv("srcdir") : ".");
	odl = dsl_load(path, &fx->arena, &fx->files);
	assert_non_null(t);
	assert_non_null(odl);
	assert_true(shape_infer(odl) && cost_annotate(odl));
	assert_int_equal(proj, 2776576);
	assert_int_equal(t->total.params + proj, odl->total.params);
}

/* COSMOFLOW.net_256 line 8 reads 32x2128x128x128 after a row that made
 * 32x128x128x128: no layer can sit in between, so it is an error. */
static void
cosmoflow_256_typo_row_is_diagnosed(void **state)
{
	Fx *fx = *state;
	const char *path = arena_strdup(&fx->arena, data_path("paradl/COSMOFLOW.net_256"));
	char want[4200];

	assert_null(net_run(fx, path));
	snprintf(want, sizeof want, "%s:8:6: error: row 'RELU': x 32x2128x128x128 does not "
				    "match 32x128x128x128, the output of the row before\n", path);
	assert_string_equal(fx_diags(fx), want);
}

/* Stride W/W' rounded, the least padding, split begin/end; a conv before
 * a BNORM has no bias, others do; repeated names get _1, _2. */
static void
conv_and_pool_attributes_come_from_the_shapes(void **state)
{
	Fx *fx = *state;
	Graph *g = net_text(fx, HEAD
			    "CONV|3x8x8|3x4x3x3|4x4x4\n"      /* s 2, pad 0+1 */
			    "BNORM|4x4x4|4x4x0x0|4x4x4\n"
			    "CONV|4x4x4|4x6x3x3|6x4x4\n"      /* s 1, pad 1+1 */
			    "MPOOL|6x4x4|0x0x2x2|6x3x3\n"     /* s 1, pad 0 */
			    "APOOL|6x3x3|0x0x2x2|6x2x2\n");   /* s 1 (1.5 ties down) */
	const Layer *c0, *c1, *mp, *ap;

	assert_non_null(g);
	assert_string_equal(fx_names(fx, g), "CONV BNORM CONV_1 MPOOL APOOL");
	c0 = fx_layer(g, "CONV");
	c1 = fx_layer(g, "CONV_1");
	mp = fx_layer(g, "MPOOL");
	ap = fx_layer(g, "APOOL");
	assert_int_equal(c0->attr.stride[0], 2);
	assert_int_equal(c0->attr.pad[0], 0);
	assert_int_equal(c0->attr.pad[MAX_SPATIAL], 1);
	assert_false(c0->attr.bias);
	assert_int_equal(c1->attr.stride[1], 1);
	assert_int_equal(c1->attr.pad[1], 1);
	assert_int_equal(c1->attr.pad[MAX_SPATIAL + 1], 1);
	assert_true(c1->attr.bias);
	assert_int_equal(mp->op, OP_MAXPOOL);
	assert_int_equal(mp->attr.stride[0], 1);
	/* 3 / 2 = 1.5, ties down to stride 1: (3 + 0 - 2) / 1 + 1 = 2 */
	assert_int_equal(ap->op, OP_AVGPOOL);
	assert_int_equal(ap->attr.stride[0], 1);
	assert_int_equal(ap->attr.pad[0] + ap->attr.pad[MAX_SPATIAL], 0);
	assert_string_equal(fx_shape(g, "APOOL"), "6x2x2");
	assert_int_equal(g->total.params, 4 * 3 * 9 + 2 * 4 + 6 * 4 * 9 + 6);
}

/* FC flattens its input (a view); its 4096x1x1 output is the vector 4096,
 * which the next row may write as 4096x1x1; ADD adds the chain to itself;
 * DROPOUT is dropout. */
static void
fc_flattens_and_add_reads_the_chain_twice(void **state)
{
	Fx *fx = *state;
	Graph *g = net_text(fx, "Dataset|toy\nInput|10x8x2x2\nModel|toy\n"
			    "ADD|8x2x2|8x8x0x0|8x2x2\n"
			    "FC1|8x2x2|8x16x2x2|16x1x1\n"
			    "RELU|16x1x1|16x16x0x0|16x1x1\n"
			    "DROPOUT|16|16x16x0|16\n"
			    "FC2|16x1x1|16x4x1x1|4x1x1\n");
	const Layer *add;

	assert_non_null(g);
	assert_string_equal(fx_names(fx, g), "ADD FC1/flatten FC1 RELU DROPOUT FC2");
	add = fx_layer(g, "ADD");
	assert_int_equal(add->nin, 2);
	assert_int_equal(add->in[0], add->in[1]);
	assert_int_equal(add->in[0], g->input[0]);
	assert_int_equal(fx_layer(g, "FC1/flatten")->op, OP_FLATTEN);
	assert_string_equal(fx_shape(g, "FC1"), "16");
	assert_int_equal(fx_layer(g, "DROPOUT")->op, OP_DROPOUT);
	assert_int_equal(g->total.params, 16 * 32 + 16 + 4 * 16 + 4);
	assert_int_equal(g->dataset_size, 10);
	assert_string_equal(fx_diags(fx), "");
}

/* A row whose x has the chain's element count but another shape reads it
 * through a reshape, with a warning; an unknown type is an opaque layer,
 * counted as zero and listed, with one warning per name. */
static void
reshaped_rows_and_unknown_types_warn(void **state)
{
	Fx *fx = *state;
	Graph *g = net_text(fx, HEAD
			    "RELU|3x4x16|3x3x0x0|3x4x16\n"
			    "SOFTMAX|3x4x16|0x0|3x4x16\n"
			    "SOFTMAX|3x4x16|0x0|3x4x16\n");

	assert_non_null(g);
	assert_string_equal(fx_names(fx, g), "RELU/reshape RELU SOFTMAX SOFTMAX_1");
	assert_int_equal(fx_layer(g, "RELU/reshape")->op, OP_RESHAPE);
	assert_int_equal(fx_layer(g, "SOFTMAX")->op, OP_OPAQUE);
	assert_int_equal(g->nunknown, 1);
	assert_int_equal(g->unknown[0].count, 2);
	assert_string_equal(fx_diags(fx),
			    "t.net:4:6: warning: row 'RELU': x 3x4x16 is reshaped from 3x8x8, the "
			    "output of the row before\n"
			    "t.net:5:1: warning: row 'SOFTMAX': no CONV, MPOOL, APOOL, RELU, FC, "
			    "BNORM, ADD or DROPOUT in the name: counted as zero, as ParaDL does\n");
}

/* A t > 0 covers its row and the rows right after it that give 0; a
 * missing t ends the span; a 0 with no span open is estimated, with a
 * warning.  Totals are split 1:2 between forward and backward. */
static void
time_column_makes_spans(void **state)
{
	Fx *fx = *state;
	Graph *g = net_text(fx, HEAD
			    "RELU|3x8x8|3x3x0x0|3x8x8|0\n"        /* layer 0: estimated */
			    "RELU|3x8x8|3x3x0x0|3x8x8|0.003\n"    /* 1: span 1..2 */
			    "RELU|3x8x8|3x3x0x0|3x8x8|0\n"        /* 2 */
			    "RELU|3x8x8|3x3x0x0|3x8x8\n"          /* 3: estimated */
			    "RELU|3x8x8|3x3x0x0|3x8x8|0\n"        /* 4: estimated */
			    "RELU|3x8x8|3x3x0x0|3x8x8|6e-3\n");   /* 5: alone */

	assert_non_null(g);
	assert_int_equal(g->ntiming, 2);
	assert_int_equal(g->timing[0].first, 1);
	assert_int_equal(g->timing[0].last, 2);
	NEAR(g->timing[0].fwd, 0.001);
	NEAR(g->timing[0].bwd, 0.002);
	assert_false(g->timing[0].split);
	assert_int_equal(g->timing[0].loc.line, 5);
	assert_int_equal(g->timing[0].loc.col, 26);
	assert_int_equal(g->timing[1].first, 5);
	assert_int_equal(g->timing[1].last, 5);
	assert_string_equal(fx_diags(fx),
			    "t.net:4:26: warning: row 'RELU': time 0 with no timed row above it; "
			    "the layer is estimated (ParaDL would count 0 s)\n"
			    "t.net:8:26: warning: row 'RELU': time 0 with no timed row above it; "
			    "the layer is estimated (ParaDL would count 0 s)\n");
	assert_true(timing_spread(g, &(Analysis){ .eng = fx->eng,
						  .q.sys = fx_abci(fx),
						  .q.impl = fx_impl(fx_abci(fx)) }));
	assert_false(g->layer[0].timed);
	assert_true(g->layer[1].timed && g->layer[2].timed);
	assert_false(g->layer[3].timed || g->layer[4].timed);
	/* two equal layers share the span's time equally */
	NEAR(layer_measured(g, 1, PREC_FP32, false), 0.0005);
	NEAR(layer_measured(g, 2, PREC_FP32, true), 0.001);
	NEAR(layer_measured(g, 5, PREC_FP32, false) + layer_measured(g, 5, PREC_FP32, true), 0.006);
}

/* The first row's time is the whole network's: shared out over every
 * layer in proportion to the roofline, so the layers sum to it, and data
 * parallelism on one GPU spends it per sample (no dispatch floor here).
 * The pass shares it out at every precision the GPU runs, each as an
 * analysis at that precision would (the search reads them without
 * running the pass again): under amp-fp16 the convolutions run on tensor
 * cores, and their share shrinks. */
static void
whole_network_time_is_spread_and_used_per_sample(void **state)
{
	Fx *fx = *state;
	Graph *g = shipped(fx, "paradl/RESNET50_ImageNet_profall.net_sc");
	System s = *fx_abci(fx);
	Analysis an = { .eng = fx->eng,
			.q.sys = &s,
			.q.impl = fx_impl(&s),
			.q.set.gpus = 1,
			.q.set.batch_per_gpu = 32,
			.q.set.dataset_size = 1280000,
			.q.set.sample_bytes = 110e3 };
	StrategyOpts o = { .mask = 1u << STRAT_DATA };
	double fwd = 0, bwd = 0, conv = 0, relu = 0, amp = 0;
	int c2;

	assert_non_null(g);
	assert_int_equal(g->ntiming, 1);
	assert_int_equal(g->timing[0].first, 0);
	assert_int_equal(g->timing[0].last, g->nlayer - 1);
	s.dispatch = 0;
	an.q.impl.dispatch = 0;
	assert_true(timing_spread(g, &an));
	for (int i = 0; i < g->nlayer; i++) {
		assert_true(g->layer[i].timed);
		fwd += layer_measured(g, i, PREC_FP32, false);
		bwd += layer_measured(g, i, PREC_FP32, true);
		amp += layer_measured(g, i, PREC_AMP_FP16, false);
	}
	NEAR(fwd, 0.003119502 / 3);
	NEAR(bwd, 2 * 0.003119502 / 3);
	NEAR(amp, 0.003119502 / 3);
	assert_true(layer_measured(g, 0, PREC_AMP_BF16, false) == 0); /* no bf16 on a V100 */
	/* a 3x3 conv outweighs the ReLU after it (about 20 us to 2 us per
	 * sample on abci), as in the roofline */
	c2 = (int)(fx_layer(g, "CONV_2a2") - g->layer);
	conv = layer_measured(g, c2, PREC_FP32, false);
	relu = layer_measured(g, c2 + 2, PREC_FP32, false);
	assert_true(conv > 5 * relu);
	assert_true(layer_measured(g, c2, PREC_AMP_FP16, false) < conv);
	/* as the analysis at amp-fp16 shares it out */
	amp = layer_measured(g, c2, PREC_AMP_FP16, false);
	an.q.set.prec = PREC_AMP_FP16;
	assert_true(timing_spread(g, &an));
	assert_true(layer_measured(g, c2, PREC_AMP_FP16, false) == amp);
	assert_true(layer_measured(g, c2, PREC_FP32, false) == conv);
	an.q.set.prec = PREC_FP32;
	assert_true(strategies_run(g, &an, &o));
	NEAR(an.cand[STRAT_DATA].t.compute, 32 * 0.003119502);
}

/* --profile: one Timing per row, measured apart (split); it names layers
 * as reports do, and a later timing wins over a table's span. */
static void
profile_rows_replace_the_estimate_of_the_named_layers(void **state)
{
	Fx *fx = *state;
	Graph *g = net_text(fx, HEAD
			    "CONV1|3x8x8|3x4x3x3|4x8x8|0.003\n"
			    "RELU|4x8x8|4x4x0x0|4x8x8|0\n"
			    "FC|4x8x8|4x10x8x8|10x1x1|0\n");
	const char *csv = fx_write(fx, "p.csv", "layer,forward_s,backward_s\r\n"
					      "\"RELU\",1e-4,2e-4\r\n"
					      "\r\n"
					      "FC/flatten, 0 ,0\r\n");

	assert_non_null(g);
	assert_true(profile_load(csv, g, &fx->files));
	assert_int_equal(fx->files.n, 2);
	assert_int_equal(g->ntiming, 3);
	assert_true(g->timing[1].split);
	assert_int_equal(g->timing[1].first, 1);
	assert_int_equal(g->timing[2].first, 2);
	assert_int_equal(g->timing[2].loc.line, 4);
	assert_true(timing_spread(g, &(Analysis){ .eng = fx->eng,
						  .q.sys = fx_abci(fx),
						  .q.impl = fx_impl(fx_abci(fx)) }));
	NEAR(layer_measured(g, (int)(fx_layer(g, "RELU") - g->layer), PREC_FP32, false), 1e-4);
	NEAR(layer_measured(g, (int)(fx_layer(g, "RELU") - g->layer), PREC_FP16, true), 2e-4);
	assert_true(fx_layer(g, "CONV1")->timed && fx_layer(g, "FC")->timed);
	assert_string_equal(fx_diags(fx), "");
}

/* Every bad profile row names its line and column; nothing is kept. */
static void
bad_profiles_are_diagnosed_and_change_nothing(void **state)
{
	Fx *fx = *state;
	Graph *g = net_text(fx, HEAD "RELU|3x8x8|3x3x0x0|3x8x8\n");
	static const struct {
		const char *text, *err;
	} t[] = {
		{ "layer,fwd,bwd\nRELU,1,2\n",
		  "p.csv:1:1: error: expected the header 'layer,forward_s,backward_s'\n" },
		{ "", "p.csv:1:1: error: expected the header 'layer,forward_s,backward_s'\n" },
		{ "layer,forward_s,backward_s\nrelu,1,2\n",
		  "p.csv:2:1: error: unknown layer 'relu' (model 'toy' has no layer of that "
		  "name; --layers lists them)\n" },
		{ "layer,forward_s,backward_s\nRELU,1\n",
		  "p.csv:2:7: error: missing column 'backward_s'\n" },
		{ "layer,forward_s,backward_s\nRELU,,1\n",
		  "p.csv:2:6: error: missing forward_s\n" },
		{ "layer,forward_s,backward_s\nRELU,1,2,3\n",
		  "p.csv:2:10: error: more than 3 columns (layer,forward_s,backward_s)\n" },
		{ "layer,forward_s,backward_s\nRELU,1,fast\n",
		  "p.csv:2:8: error: backward_s 'fast' is not a number (seconds per sample)\n" },
		{ "layer,forward_s,backward_s\nRELU,NaN,1\n",
		  "p.csv:2:6: error: forward_s 'NaN' is not a finite number\n" },
		{ "layer,forward_s,backward_s\nRELU,1,0x1p-3\n",
		  "p.csv:2:8: error: backward_s '0x1p-3' is not a number (seconds per sample)\n" },
		{ "layer,forward_s,backward_s\nRELU, infinity ,1\n",
		  "p.csv:2:6: error: forward_s 'infinity ' is not a finite number\n" },
		{ "layer,forward_s,backward_s\nRELU,1,-2e-3\n",
		  "p.csv:2:8: error: backward_s -2e-3 is negative\n" },
		{ "layer,forward_s,backward_s\nRELU,1,2\nRELU,1,2\n",
		  "p.csv:3:1: error: layer 'RELU' is already timed on line 2\n" },
		{ "layer,forward_s,backward_s\n\"RELU,1,2\n",
		  "p.csv:2:1: error: unterminated quoted field\n" },
	};

	assert_non_null(g);
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		const char *path = fx_write(fx, "p.csv", t[i].text);
		restart(fx);
		assert_false(profile_load(path, g, &fx->files));
		assert_string_equal(fx_diags(fx), t[i].err);
		assert_int_equal(g->ntiming, 0);
	}
}

/* Malformed tables: the exact diagnostic for each, at the field. */
static void
bad_tables_are_diagnosed_at_the_field(void **state)
{
	Fx *fx = *state;
	static const struct {
		const char *text, *err;
	} t[] = {
		{ "Input|100x3x8x8\n", "t.net:1:1: error: expected 'Dataset|NAME' (line 1 of a "
				       "ParaDL table)\n" },
		{ "Dataset|toy\nInput|100x3x8x8\n",
		  "t.net:2:1: error: expected 'Model|NAME' (a ParaDL table starts with Dataset, "
		  "Input and Model lines)\n" },
		{ "Dataset|toy\nInput|100x3xbx8\nModel|toy\nRELU|3x8x8|3x3x0x0|3x8x8\n",
		  "t.net:2:7: error: Input '100x3xbx8' is not a shape (numbers joined by 'x', "
		  "e.g. 64x56x56)\n" },
		{ "Dataset|toy\nInput|100\nModel|toy\nRELU|3x8x8|3x3x0x0|3x8x8\n",
		  "t.net:2:1: error: expected 'Input|DxC...' (the dataset size, then the sample's "
		  "shape)\n" },
		{ HEAD, "t.net:3:1: error: model 'toy' has no layer rows\n" },
		{ HEAD "CONV1|3x8x8|3x4x3x3\n",
		  "t.net:4:1: error: a layer row is NAME|x|w|y or NAME|x|w|y|t, not 3 fields\n" },
		{ HEAD "CONV1|3x8x8|3x4x3x3|4x8x8|1|2\n",
		  "t.net:4:29: error: a layer row is NAME|x|w|y or NAME|x|w|y|t, not 6 fields\n" },
		{ HEAD "|3x8x8|3x4x3x3|4x8x8\n", "t.net:4:1: error: empty layer name\n" },
		{ HEAD "CONV1|3x8x8|3x4x3x3|4x8x\n",
		  "t.net:4:21: error: row 'CONV1': y '4x8x' is not a shape (numbers joined by "
		  "'x', e.g. 64x56x56)\n" },
		{ HEAD "CONV1|3x0x8|3x4x3x3|4x8x8\n",
		  "t.net:4:7: error: row 'CONV1': x '3x0x8' has a dimension out of range (1 to "
		  "2^40)\n" },
		{ HEAD "CONV1|3x8x8|3x4x3x3|4x8x8|fast\n",
		  "t.net:4:27: error: row 'CONV1': time 'fast' is not a number (seconds per "
		  "sample)\n" },
		{ HEAD "CONV1|3x8x8|3x4x3x3|4x8x8|-1e-3\n",
		  "t.net:4:27: error: row 'CONV1': time -1e-3 is negative\n" },
		{ HEAD "CONV1|3x8x8|3x4x3x3|4x8x8|inf\n",
		  "t.net:4:27: error: row 'CONV1': time 'inf' is not a finite number\n" },
		{ HEAD "CONV1|3x8x8|3x4x3x3|4x8x8|\n",
		  "t.net:4:27: error: row 'CONV1': empty time (give seconds per sample, or leave "
		  "the field out)\n" },
		{ HEAD "CONV1|3x9x9|3x4x3x3|4x9x9\n",
		  "t.net:4:7: error: row 'CONV1': x 3x9x9 does not match 3x8x8, the output of the "
		  "row before\n"
		  "t.net:4:7: note: the first row reads the input (line 2)\n" },
		{ HEAD "CONV1|3x8x8|2x4x3x3|4x8x8\n",
		  "t.net:4:13: error: row 'CONV1': w 2x4x3x3 must be CxFxK... with C = 3, the "
		  "channels of x 3x8x8, and F > 0\n" },
		{ HEAD "CONV1|3x8x8|3x4x3|4x8x8\n",
		  "t.net:4:13: error: row 'CONV1': w 3x4x3 and y 4x8x8 do not fit x 3x8x8 (w is "
		  "CxFxK with one K per spatial dimension of x)\n" },
		{ HEAD "CONV1|3x8x8|3x4x3x3|4x20x8\n",
		  "t.net:4:21: error: row 'CONV1': no padding gives 20 from 8 with kernel 3 and "
		  "stride 1 (spatial dimension 1)\n" },
		{ HEAD "CONV1|3x8x8|3x4x3x3|5x8x8\n",
		  "t.net:4:21: error: row 'CONV1': y 5x8x8 differs from 4x8x8, the output "
		  "oraclec infers\n" },
		{ HEAD "MPOOL|3x8x8|3x3x2x2|3x4x4\n",
		  "t.net:4:13: error: row 'MPOOL': w 3x3x2x2 holds weights, but this layer has "
		  "none (ParaDL writes 0x0xKxK)\n" },
		{ HEAD "RELU|3x8x8|3x3x0x0|3x8x4\n",
		  "t.net:4:20: error: row 'RELU': y 3x8x4 differs from 3x8x8, the output oraclec "
		  "infers\n" },
		{ HEAD "FC|3x8x8|3x10x4x4|10\n",
		  "t.net:4:10: error: row 'FC': w 3x10x4x4 must be CxFxK... with F > 0 and C K... "
		  "= 192, the elements of x 3x8x8\n" },
		{ HEAD "LRN|3x8x8|3x3x1x1|3x8x8\n",
		  "t.net:4:11: error: row 'LRN': w 3x3x1x1 holds weights, but this layer has none "
		  "(ParaDL writes CxCx0x0 for a layer of no known type)\n" },
	};

	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		const char *path = fx_write(fx, "t.net", t[i].text);
		restart(fx);
		assert_null(net_run(fx, path));
		assert_string_equal(fx_diags(fx), t[i].err);
	}
}

/* frontend_load: .net, .net_sc and .net_256 by name, "Dataset|" by content. */
static void
tables_are_recognised_by_name_and_content(void **state)
{
	Fx *fx = *state;
	static const char *const names[] = { "a.net", "a.net_sc", "a.net_256", "a.txt" };

	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		const char *path = fx_write(fx, names[i], HEAD "RELU|3x8x8|3x3x0x0|3x8x8\n");
		Graph *g = frontend_load(path, &fx->arena, &fx->files, &(OnnxOptions){ 0 });
		assert_non_null(g);
		assert_string_equal(g->format, "paradl");
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		FX_TEST(shipped_tables_count_the_weight_column_plus_biases_and_bn),
		FX_TEST(resnet50_table_is_resnet50_without_its_projections),
		FX_TEST(cosmoflow_256_typo_row_is_diagnosed),
		FX_TEST(conv_and_pool_attributes_come_from_the_shapes),
		FX_TEST(fc_flattens_and_add_reads_the_chain_twice),
		FX_TEST(reshaped_rows_and_unknown_types_warn),
		FX_TEST(time_column_makes_spans),
		FX_TEST(whole_network_time_is_spread_and_used_per_sample),
		FX_TEST(profile_rows_replace_the_estimate_of_the_named_layers),
		FX_TEST(bad_profiles_are_diagnosed_and_change_nothing),
		FX_TEST(bad_tables_are_diagnosed_at_the_field),
		FX_TEST(tables_are_recognised_by_name_and_content),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
