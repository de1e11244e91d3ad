/* test_cost.c -- passes/cost.c: MACs, FLOPs, parameters and bytes per
 * layer and in total, on concrete layers whose numbers are worked out by
 * hand in the comments (the rules are at the top of cost.c). */
#include "harness.h"

#define COST(odl) fx_run(fx, odl, PASS_COST)

/* Most tests feed the layer under test through a layernorm: it has
 * parameters, so a gradient flows into the layer and its backward-data
 * FLOPs are counted (a layer reading only graph inputs has none). */

static const Cost *
cost_of(const Graph *g, const char *name)
{
	return &fx_layer(g, name)->cost;
}

/* ResNet-50's first layer.  Output 64x112x112 ((224 + 6 - 7) / 2 + 1).
 * MACs = F * Hout * Wout * (C / groups) * K * K
 *      = 64 * 112 * 112 * 3 * 7 * 7 = 118,013,952
 * fwd = bwd_data = bwd_weight = 2 * MACs = 236,027,904 (no bias)
 * params = 64 * 3 * 7 * 7 = 9,408 */
static void
conv_macs_are_filters_times_output_times_channels_times_kernel(void **state)
{
	Fx *fx = *state;
	Graph *g = COST("model m { input x_in: 3x224x224; x = layernorm(x_in);\n"
			"  c = conv(x, 64, kernel=7, stride=2, pad=3, bias=false); }");
	const Cost *c;

	assert_non_null(g);
	c = cost_of(g, "c");
	assert_int_equal(c->macs, 118013952);
	assert_int_equal(c->flops_fwd, 236027904);
	assert_int_equal(c->flops_bwd_data, 236027904);
	assert_int_equal(c->flops_bwd_weight, 236027904);
	assert_int_equal(c->flops_bwd, 472055808);
	assert_int_equal(c->params, 9408);
	assert_int_equal(c->buffers, 0);
}

/* 32x56x56 -> 64 filters, 3x3, pad 1, 4 groups: output 64x56x56, E = 200,704.
 * MACs = 64 * 56 * 56 * (32 / 4) * 3 * 3 = 200,704 * 72 = 14,450,688
 * fwd = 2 * MACs + E (bias) = 29,102,080; bwd_data = 2 * MACs = 28,901,376;
 * bwd_weight = 2 * MACs + E = 29,102,080; params = 64 * 8 * 9 + 64 = 4,672 */
static void
grouped_conv_divides_the_channels_each_filter_sees(void **state)
{
	Fx *fx = *state;
	Graph *g = COST("model m { input x_in: 32x56x56; x = layernorm(x_in);\n"
			"  c = conv(x, 64, kernel=3, pad=1, groups=4); }");
	const Cost *c;

	assert_non_null(g);
	c = cost_of(g, "c");
	assert_int_equal(c->macs, 14450688);
	assert_int_equal(c->flops_fwd, 29102080);
	assert_int_equal(c->flops_bwd_data, 28901376);
	assert_int_equal(c->flops_bwd_weight, 29102080);
	assert_int_equal(c->params, 4672);
}

/* The same conv with and without bias: the bias adds E = 16 * 30 * 30 =
 * 14,400 to forward and to backward-weight, nothing to backward-data,
 * and F = 16 parameters. */
static void
bias_adds_one_flop_per_output_element(void **state)
{
	Fx *fx = *state;
	Graph *g = COST("model m { input x: 3x32x32;\n"
			"  b = conv(x, 16, kernel=3);\n"
			"  n = conv(x, 16, kernel=3, bias=false); }");
	const Cost *b, *n;

	assert_non_null(g);
	b = cost_of(g, "b");
	n = cost_of(g, "n");
	assert_int_equal(b->macs, n->macs);
	assert_int_equal(b->flops_fwd - n->flops_fwd, 14400);
	assert_int_equal(b->flops_bwd_weight - n->flops_bwd_weight, 14400);
	assert_int_equal(b->flops_bwd_data, n->flops_bwd_data);
	assert_int_equal(b->params - n->params, 16);
}

/* 16x8x8 -> 8 filters, 4x4, stride 2, pad 1: output 8x16x16.
 * MACs = C * in_spatial * (F / groups) * K = 16 * 8 * 8 * 8 * 4 * 4 = 131,072 */
static void
convtranspose_macs_count_over_the_input(void **state)
{
	Fx *fx = *state;
	Graph *g = COST("model m { input x: 16x8x8;\n"
			"  u = convtranspose(x, 8, kernel=4, stride=2, pad=1, bias=false); }");

	assert_non_null(g);
	assert_int_equal(cost_of(g, "u")->macs, 131072);
	assert_int_equal(cost_of(g, "u")->params, 16 * 8 * 4 * 4);
}

/* 2048 -> 1000: MACs = 2048 * 1000 = 2,048,000; fwd = 2 * MACs + 1000 =
 * 4,097,000; params = 2,048,000 + 1000 = 2,049,000.
 * 197x768 -> 3072 (no bias): MACs = 197 * 768 * 3072 = 464,781,312. */
static void
fc_macs_are_input_elements_times_outputs(void **state)
{
	Fx *fx = *state;
	Graph *g = COST(
		"model m { input v_in: 2048; v = layernorm(v_in); input t_in: 197x768; t = "
		"layernorm(t_in);\n"
		"  a = fc(v, 1000); b = fc(t, 3072, bias=false); }");
	const Cost *a, *b;

	assert_non_null(g);
	a = cost_of(g, "a");
	b = cost_of(g, "b");
	assert_int_equal(a->macs, 2048000);
	assert_int_equal(a->flops_fwd, 4097000);
	assert_int_equal(a->flops_bwd_data, 4096000);
	assert_int_equal(a->flops_bwd_weight, 4097000);
	assert_int_equal(a->params, 2049000);
	assert_int_equal(b->macs, 464781312);
	assert_int_equal(b->flops_fwd, 929562624);
	assert_int_equal(b->params, 3072 * 768);
}

/* q 12x197x64 @ k 12x64x197: E = 12 * 197 * 197 = 465,708 outputs, each
 * an inner product of 64: MACs = 29,805,312; fwd = 59,610,624; bwd_data =
 * 4 * MACs = 119,221,248 (both operands are activations); no weights. */
static void
matmul_backward_is_four_macs_and_has_no_weight_gradient(void **state)
{
	Fx *fx = *state;
	Graph *g = COST(
		"model m { input q_in: 12x197x64; q = layernorm(q_in); input k_in: 12x64x197; "
		"k = layernorm(k_in);\n"
		"  s = matmul(q, k); }");
	const Cost *s;

	assert_non_null(g);
	s = cost_of(g, "s");
	assert_int_equal(s->macs, 29805312);
	assert_int_equal(s->flops_fwd, 59610624);
	assert_int_equal(s->flops_bwd_data, 119221248);
	assert_int_equal(s->flops_bwd_weight, 0);
	assert_int_equal(s->params, 0);
}

/* Element-wise ops: per-element constants from ops.def times E =
 * 64 * 112 * 112 = 802,816.  relu 1/1, sigmoid 3/3, gelu 5/8. */
static void
activations_cost_their_constant_per_element(void **state)
{
	Fx *fx = *state;
	Graph *g = COST("model m { input x_in: 64x112x112; x = layernorm(x_in);\n"
			"  r = relu(x); s = sigmoid(x); e = gelu(x); }");

	assert_non_null(g);
	assert_int_equal(cost_of(g, "r")->flops_fwd, 802816);
	assert_int_equal(cost_of(g, "r")->flops_bwd_data, 802816);
	assert_int_equal(cost_of(g, "r")->flops_bwd_weight, 0);
	assert_int_equal(cost_of(g, "r")->macs, 0);
	assert_int_equal(cost_of(g, "s")->flops_fwd, 3 * 802816);
	assert_int_equal(cost_of(g, "e")->flops_fwd, 5 * 802816);
	assert_int_equal(cost_of(g, "e")->flops_bwd_data, 8 * 802816);
}

/* maxpool k3 s2 p1 on 64x112x112: E = 64 * 56 * 56 = 200,704 outputs of
 * 9 compares: fwd = 1,806,336; backward routes: bwd_data = E.
 * avgpool k2 on 8x4x4: E = 32, fwd = 32 * 4 = 128; backward spreads each
 * gradient over the window: bwd_data = 128. */
static void
pool_flops_are_output_elements_times_kernel_volume(void **state)
{
	Fx *fx = *state;
	Graph *g = COST(
		"model m { input x_in: 64x112x112; x = layernorm(x_in); input y_in: 8x4x4; y = "
		"layernorm(y_in);\n"
		"  mp = maxpool(x, kernel=3, stride=2, pad=1);"
		" ap = avgpool(y, kernel=2); }");

	assert_non_null(g);
	assert_int_equal(cost_of(g, "mp")->flops_fwd, 1806336);
	assert_int_equal(cost_of(g, "mp")->flops_bwd_data, 200704);
	assert_int_equal(cost_of(g, "mp")->params, 0);
	assert_int_equal(cost_of(g, "ap")->flops_fwd, 128);
	assert_int_equal(cost_of(g, "ap")->flops_bwd_data, 128);
}

/* globalavgpool on 2048x7x7 reads E_in = 100,352 elements once each way. */
static void
global_pool_counts_input_elements(void **state)
{
	Fx *fx = *state;
	Graph *g = COST(
		"model m { input x_in: 2048x7x7; x = layernorm(x_in); p = globalavgpool(x); }");

	assert_non_null(g);
	assert_int_equal(cost_of(g, "p")->flops_fwd, 100352);
	assert_int_equal(cost_of(g, "p")->flops_bwd_data, 100352);
}

/* batchnorm on 64x56x56 (E = 200,704): fwd = bwd_data = 7E = 1,404,928,
 * bwd_weight = 3E = 602,112; scale + shift = 128 params; running mean and
 * variance = 128 buffers (not trained, so not params). */
static void
batchnorm_has_params_and_running_buffers(void **state)
{
	Fx *fx = *state;
	Graph *g = COST(
		"model m { input x_in: 64x56x56; x = layernorm(x_in); b = batchnorm(x); l = "
		"layernorm(x); }");
	const Cost *b;

	assert_non_null(g);
	b = cost_of(g, "b");
	assert_int_equal(b->flops_fwd, 1404928);
	assert_int_equal(b->flops_bwd_data, 1404928);
	assert_int_equal(b->flops_bwd_weight, 602112);
	assert_int_equal(b->params, 128);
	assert_int_equal(b->buffers, 128);
	assert_int_equal(cost_of(g, "l")->params, 2 * 56);
	assert_int_equal(cost_of(g, "l")->buffers, 0);
}

/* add of n inputs: (n - 1) adds per output element; 8x4x4 = 128. */
static void
add_costs_one_flop_per_extra_input_per_element(void **state)
{
	Fx *fx = *state;
	Graph *g = COST(
		"model m { input a_in: 8x4x4; a = layernorm(a_in); input b_in: 8x4x4; b = "
		"layernorm(b_in); input c_in: 8x4x4; c = layernorm(c_in);\n"
		"  two = add(a, b); three = add(a, b, c); prod = mul(a, b); }");

	assert_non_null(g);
	assert_int_equal(cost_of(g, "two")->flops_fwd, 128);
	assert_int_equal(cost_of(g, "two")->flops_bwd_data, 0);
	assert_int_equal(cost_of(g, "three")->flops_fwd, 256);
	assert_int_equal(cost_of(g, "prod")->flops_fwd, 128);
	assert_int_equal(cost_of(g, "prod")->flops_bwd_data, 256);
}

/* Data movement computes nothing; views move no bytes either.
 * concat bytes = (16*8*8 * 2 in + 32*8*8 out) * 4 = 16,384. */
static void
data_movement_ops_cost_no_flops(void **state)
{
	Fx *fx = *state;
	Graph *g = COST("model m { input x: 16x8x8;\n"
			"  c = concat(x, x); f = flatten(c); r = reshape(c, [32, 64]);\n"
			"  t = transpose(r, [1, 0]); i = identity(t); }");
	const char *names[] = { "c", "f", "r", "t", "i" };

	assert_non_null(g);
	for (int k = 0; k < 5; k++) {
		const Cost *c = cost_of(g, names[k]);
		assert_int_equal(c->macs + c->flops_fwd + c->flops_bwd + c->params, 0);
	}
	assert_int_equal(cost_of(g, "c")->bytes_fwd, 16384);
	assert_int_equal(cost_of(g, "f")->bytes_fwd, 0);
	assert_int_equal(cost_of(g, "r")->bytes_fwd, 0);
	assert_int_equal(cost_of(g, "i")->bytes_fwd, 0);
	assert_int_equal(cost_of(g, "t")->bytes_fwd, 2 * 2048 * 4);
}

/* Forward bytes: inputs + outputs + parameters, times the item size.
 * ResNet conv1: (150,528 + 802,816 + 9,408) * 4 = 3,851,008; at fp16 half. */
static void
forward_bytes_count_activations_and_weights(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_run(fx, "model m { input x: 3x224x224;\n"
			      "  c = conv(x, 64, kernel=7, stride=2, pad=3, bias=false); }",
			  PASS_SHAPE);

	assert_non_null(g);
	assert_true(cost_annotate(g));
	assert_int_equal(cost_of(g, "c")->bytes_fwd, 3851008);
	assert_int_equal(g->total.weight_bytes, 9408 * 4);
	g->elem_bytes = 2;
	assert_true(cost_annotate(g));
	assert_int_equal(cost_of(g, "c")->bytes_fwd, 1925504);
	assert_int_equal(g->total.weight_bytes, 9408 * 2);
}

/* x 3x32x32 -> conv 8 k3 p1 -> batchnorm -> relu -> maxpool k2 -> flatten
 * -> fc 10.  Params: conv 8*3*9 + 8 = 224, bn 16, fc 10 * 2048 + 10 =
 * 20,490: 20,730 in all. */
static void
totals_equal_the_sums_over_layers(void **state)
{
	Fx *fx = *state;
	Graph *g = COST("model m { input x: 3x32x32;\n"
			"  c = conv(x, 8, kernel=3, pad=1); b = batchnorm(c); r = relu(b);\n"
			"  p = maxpool(r, kernel=2); f = flatten(p); o = fc(f, 10); }");
	Totals s = { 0 };

	assert_non_null(g);
	for (int i = 0; i < g->nlayer; i++) {
		const Cost *c = &g->layer[i].cost;
		assert_int_equal(c->flops_bwd, c->flops_bwd_data + c->flops_bwd_weight);
		s.params += c->params;
		s.buffers += c->buffers;
		s.macs += c->macs;
		s.flops_fwd += c->flops_fwd;
		s.flops_bwd_data += c->flops_bwd_data;
		s.flops_bwd_weight += c->flops_bwd_weight;
		s.bytes_fwd += c->bytes_fwd;
		s.bytes_bwd += c->bytes_bwd;
	}
	assert_int_equal(g->total.params, 20730);
	assert_int_equal(g->total.params, s.params);
	assert_int_equal(g->total.buffers, 16);
	assert_int_equal(g->total.buffers, s.buffers);
	/* conv 8*32*32*3*9 = 221,184; fc 2048 * 10 = 20,480 */
	assert_int_equal(g->total.macs, 241664);
	assert_int_equal(g->total.macs, s.macs);
	assert_int_equal(g->total.flops_fwd, s.flops_fwd);
	assert_int_equal(g->total.flops_bwd_data, s.flops_bwd_data);
	assert_int_equal(g->total.flops_bwd_weight, s.flops_bwd_weight);
	assert_int_equal(g->total.flops_bwd, s.flops_bwd_data + s.flops_bwd_weight);
	assert_int_equal(g->total.bytes_fwd, s.bytes_fwd);
	assert_int_equal(g->total.bytes_bwd, s.bytes_bwd);
	assert_int_equal(g->total.weight_bytes, 20730 * 4);
	/* running the pass again starts from zero */
	assert_true(cost_annotate(g));
	assert_int_equal(g->total.params, 20730);
	assert_int_equal(g->total.macs, 241664);
}

/* Backward bytes as autograd's kernels move them (the profile of such a
 * block under torch.autograd.profiler, tests/data/autograd/
 * backward_kernels.txt: threshold_backward for a relu, no
 * kernel for an add, two muls and a sum for the broadcast gate, one add
 * where a tensor's two gradients meet).  E = 16 x 8 x 8 = 1,024 items of
 * 4 bytes; the squeezed tensors have 16.
 *   a  conv on the image: no input gradient, the weight gradient reads x
 *      and dy: forward's (192 + 1,024) x 4 = 4,864
 *   b  batch norm: 5 E = 20,480; forward reads x twice: 3 E = 12,288
 *   r  relu: 3 E = 12,288, + its output's two gradients (read by m and p)
 *      added: 3 E = 12,288
 *   p  global pool: E + 16 = 4,160
 *   s  sigmoid: 3 x 16 = 192
 *   m  the gate: (2 E + 16) + (2 E + E + E) = 6 E + 16 = 24,640
 *   y  add of equal shapes: 0; and r2 (read by y and z) 3 E more */
static void
backward_bytes_follow_autograds_kernels(void **state)
{
	Fx *fx = *state;
	Graph *g = COST("model m { input x: 3x8x8;\n"
			"  a = conv(x, 16, kernel=1); b = batchnorm(a); r = relu(b);\n"
			"  p = globalavgpool(r); s = sigmoid(p); m = mul(r, s);\n"
			"  r2 = relu(m); y = add(r2, r2); }");

	assert_non_null(g);
	assert_int_equal(cost_of(g, "a")->bytes_bwd, 4864);
	assert_int_equal(cost_of(g, "b")->bytes_bwd, 20480);
	assert_int_equal(cost_of(g, "b")->bytes_fwd - 32 * 4, 12288);
	assert_int_equal(cost_of(g, "r")->bytes_bwd, 12288 + 12288);
	assert_int_equal(cost_of(g, "p")->bytes_bwd, 4160);
	assert_int_equal(cost_of(g, "s")->bytes_bwd, 192);
	assert_int_equal(cost_of(g, "m")->bytes_bwd, 24640);
	assert_int_equal(cost_of(g, "r2")->bytes_bwd, 12288 + 12288);
	assert_int_equal(cost_of(g, "y")->bytes_bwd, 0);
}

/* 2^20 x 2^20 input -> fc to 2^30 features: shapes fit (2^50 outputs, a
 * 2^50 weight), MACs = 2^40 * 2^30 = 2^70 do not. */
static void
layer_counts_beyond_64_bits_are_rejected(void **state)
{
	Fx *fx = *state;

	assert_null(COST("model m { input x: [1Mi, 1Mi];\n  f = fc(x, 1Gi, bias=false); }"));
	assert_string_equal(fx_diags(fx), "t.odl:2:3: error: layer 'f' (fc): its operation counts "
					  "overflow 64 bits\n");
	assert_int_equal(diag_errors(), 1);
}

/* A layer reading only the graph input computes no input gradient: the
 * first conv of a network has backward-weight FLOPs only. */
static void
first_layer_has_no_backward_data(void **state)
{
	Fx *fx = *state;
	Graph *g = COST("model m { input x: 3x32x32;\n"
			"  c = conv(x, 8, kernel=3, pad=1, bias=false); r = relu(c);\n"
			"  d = conv(r, 8, kernel=3, pad=1, bias=false); }");

	assert_non_null(g);
	/* MACs = 8 * 32 * 32 * 3 * 9 = 221,184 */
	assert_int_equal(cost_of(g, "c")->flops_bwd_data, 0);
	assert_int_equal(cost_of(g, "c")->flops_bwd_weight, 2 * 221184);
	assert_int_equal(cost_of(g, "r")->flops_bwd_data, 8 * 32 * 32);
	/* MACs = 8 * 32 * 32 * 8 * 9 = 589,824 */
	assert_int_equal(cost_of(g, "d")->flops_bwd_data, 2 * 589824);
}

/* Five fc layers of 2^60 MACs each: every layer fits, the model's
 * forward FLOPs (5 * 2^61) do not. */
static void
model_totals_beyond_64_bits_are_rejected(void **state)
{
	Fx *fx = *state;

	assert_null(COST("model m { input x: [1Mi, 1Mi];\n"
			 "  a = fc(x, 1Mi, bias=false); b = fc(x, 1Mi, bias=false);\n"
			 "  c = fc(x, 1Mi, bias=false); d = fc(x, 1Mi, bias=false);\n"
			 "  e = fc(x, 1Mi, bias=false); }"));
	assert_non_null(strstr(fx_diags(fx), "overflow 64 bits\n"));
	assert_int_equal(diag_errors(), 1);
}

/* A pool has no weight whose size would catch a huge kernel: 2^40 in
 * each of three dimensions (a 1x1x1 input padded by 2^39 on each side)
 * is a kernel volume of 2^120 compares per output. */
static void
pool_kernel_volume_beyond_64_bits_is_rejected(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_run(fx, "model m { input x: 1x1x1x1;\n"
			      "  p = maxpool(x, kernel=1Ti, pad=512Gi); }", PASS_SHAPE);

	assert_non_null(g);
	assert_string_equal(fx_shape(g, "p"), "1x1x1x1");
	assert_false(cost_annotate(g));
	assert_string_equal(fx_diags(fx), "t.odl:2:3: error: layer 'p' (maxpool): its operation "
					  "counts overflow 64 bits\n");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		FX_TEST(conv_macs_are_filters_times_output_times_channels_times_kernel),
		FX_TEST(grouped_conv_divides_the_channels_each_filter_sees),
		FX_TEST(bias_adds_one_flop_per_output_element),
		FX_TEST(convtranspose_macs_count_over_the_input),
		FX_TEST(fc_macs_are_input_elements_times_outputs),
		FX_TEST(matmul_backward_is_four_macs_and_has_no_weight_gradient),
		FX_TEST(activations_cost_their_constant_per_element),
		FX_TEST(pool_flops_are_output_elements_times_kernel_volume),
		FX_TEST(global_pool_counts_input_elements),
		FX_TEST(batchnorm_has_params_and_running_buffers),
		FX_TEST(add_costs_one_flop_per_extra_input_per_element),
		FX_TEST(data_movement_ops_cost_no_flops),
		FX_TEST(forward_bytes_count_activations_and_weights),
		FX_TEST(totals_equal_the_sums_over_layers),
		FX_TEST(backward_bytes_follow_autograds_kernels),
		FX_TEST(layer_counts_beyond_64_bits_are_rejected),
		FX_TEST(first_layer_has_no_backward_data),
		FX_TEST(model_totals_beyond_64_bits_are_rejected),
		FX_TEST(pool_kernel_volume_beyond_64_bits_is_rejected),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
