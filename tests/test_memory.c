/* test_memory.c -- passes/memory.c: which activations training keeps for
 * backward, counted once each, on the layer that made them. */
#include "harness.h"

#define MEMORY(odl) fx_run(fx, odl, PASS_MEMORY)

static int64_t
kept_by(const Graph *g, const char *name)
{
	return fx_layer(g, name)->cost.act_elems;
}

/* relu keeps its output r (3*8*8 = 192); the conv reading r keeps its
 * input, which is the same tensor: 192 once.  Nobody needs c. */
static void
conv_input_and_relu_output_are_one_tensor_kept_once(void **state)
{
	Fx *fx = *state;
	Graph *g = MEMORY("model m { input x: 3x8x8;\n"
			  "  r = relu(x); c = conv(r, 4, kernel=3, pad=1); }");

	assert_non_null(g);
	assert_true(fx_out(g, "r")->saved);
	assert_false(fx_out(g, "c")->saved);
	assert_int_equal(kept_by(g, "r"), 192);
	assert_int_equal(kept_by(g, "c"), 0);
	assert_int_equal(g->total.act_elems, 192);
	assert_int_equal(g->total.act_bytes, 768);
}

/* conv keeps its input; a graph input counts in the total only. */
static void
conv_keeps_its_input_and_graph_inputs_count_in_the_total(void **state)
{
	Fx *fx = *state;
	Graph *g = MEMORY("model m { input x: 3x8x8;\n"
			  "  c = conv(x, 4, kernel=3, pad=1); d = conv(c, 4, kernel=3, pad=1); }");

	assert_non_null(g);
	assert_true(g->tensor[g->input[0]].saved);
	assert_int_equal(kept_by(g, "c"), 256); /* read by d */
	assert_int_equal(kept_by(g, "d"), 0);
	assert_int_equal(g->total.act_elems, 192 + 256);
}

static void
relu_keeps_its_output_not_its_input(void **state)
{
	Fx *fx = *state;
	Graph *g = MEMORY("model m { input x: 4x4;\n"
			  "  a = relu(x); b = relu(a); }");

	assert_non_null(g);
	assert_false(g->tensor[g->input[0]].saved);
	assert_int_equal(kept_by(g, "a"), 16);
	assert_int_equal(kept_by(g, "b"), 16);
	assert_int_equal(g->total.act_elems, 32);
}

/* flatten is a view of r: fc keeping f keeps r, which relu keeps too.
 * 8x4x4 = 128, counted once, on relu. */
static void
flatten_is_a_view_counted_once_at_its_root(void **state)
{
	Fx *fx = *state;
	Graph *g = MEMORY("model m { input x: 8x4x4;\n"
			  "  r = relu(x); f = flatten(r); o = fc(f, 10); }");
	int r;

	assert_non_null(g);
	r = fx_layer(g, "r")->out[0];
	assert_int_equal(fx_out(g, "f")->root, r);
	assert_false(fx_out(g, "f")->saved);
	assert_int_equal(kept_by(g, "r"), 128);
	assert_int_equal(kept_by(g, "f"), 0);
	assert_int_equal(kept_by(g, "o"), 0);
	assert_int_equal(g->total.act_elems, 128);
}

/* A chain of views roots at the first real tensor: conv reading the last
 * view keeps a (6x6x6 = 216), made by the add. */
static void
views_of_views_share_the_first_root(void **state)
{
	Fx *fx = *state;
	Graph *g = MEMORY("model m { input x: 6x6x6;\n"
			  "  a = add(x, x); f = flatten(a); s = reshape(f, [6, 36]);\n"
			  "  i = identity(s); c = conv(i, 2, kernel=3); }");
	int a;

	assert_non_null(g);
	a = fx_layer(g, "a")->out[0];
	assert_int_equal(fx_out(g, "f")->root, a);
	assert_int_equal(fx_out(g, "s")->root, a);
	assert_int_equal(fx_out(g, "i")->root, a);
	assert_int_equal(kept_by(g, "a"), 216);
	assert_int_equal(kept_by(g, "i"), 0);
	assert_int_equal(g->total.act_elems, 216);
}

/* add's backward passes the gradient through: it keeps nothing.  The
 * convs keep x (2*4*4 = 32, a graph input); c1, c2, s are kept by no one. */
static void
add_keeps_nothing(void **state)
{
	Fx *fx = *state;
	Graph *g = MEMORY("model m { input x: 2x4x4;\n"
			  "  c1 = conv(x, 2, kernel=1); c2 = conv(x, 2, kernel=1);\n"
			  "  s = add(c1, c2); }");

	assert_non_null(g);
	for (int i = 0; i < g->nlayer; i++)
		assert_int_equal(g->layer[i].cost.act_elems, 0);
	assert_false(fx_out(g, "c1")->saved);
	assert_false(fx_out(g, "s")->saved);
	assert_int_equal(g->total.act_elems, 32);
}

/* Pools keep their input (PyTorch's avg_pool2d, adaptive_avg_pool2d and
 * mean save it too); maxpool also saves int64 indices, one per output
 * element, counted on it: 2x2x2 = 8 elements, 64 bytes.  mul keeps both
 * inputs. */
static void
pools_and_products_keep_what_their_backward_reads(void **state)
{
	Fx *fx = *state;
	Graph *g = MEMORY("model m { input x: 2x4x4;\n"
			  "  a = add(x, x); b = add(x, x); c = add(x, x); d = add(x, x);\n"
			  "  mp = maxpool(a, kernel=2); ap = avgpool(b, kernel=2);"
			  " gp = globalavgpool(d); m = mul(c, a); }");

	assert_non_null(g);
	assert_int_equal(kept_by(g, "a"), 32); /* maxpool and mul: once */
	assert_int_equal(kept_by(g, "b"), 32);
	assert_int_equal(kept_by(g, "c"), 32);
	assert_int_equal(kept_by(g, "d"), 32);
	assert_int_equal(kept_by(g, "mp"), 8);
	assert_int_equal(fx_layer(g, "mp")->cost.act_bytes, 64);
	assert_false(fx_out(g, "mp")->saved);
	assert_int_equal(kept_by(g, "ap"), 0);
	assert_int_equal(kept_by(g, "m"), 0);
	assert_int_equal(g->total.act_elems, 4 * 32 + 8);
	assert_int_equal(g->total.saved_bytes, 4 * 32 * 4 + 8 * 8);
}

/* Dropout saves a 1-byte mask per element, as CUDA's native_dropout does
 * (on CPU PyTorch 1.13 saves fp32 noise); its output is a new tensor that
 * fc keeps.  fc's input (flatten of r) is r. */
static void
dropout_saves_a_one_byte_mask_and_its_reader_its_output(void **state)
{
	Fx *fx = *state;
	Graph *g = MEMORY("model m { input x: 16;\n"
			  "  r = relu(x); d = dropout(r, p=0.5); o = fc(d, 4); }");

	assert_non_null(g);
	assert_true(fx_out(g, "d")->saved);
	assert_int_equal(kept_by(g, "r"), 16);
	assert_int_equal(kept_by(g, "d"), 16 + 16); /* output and mask */
	assert_int_equal(fx_layer(g, "d")->cost.act_bytes, 16 * 4 + 16);
	assert_int_equal(g->total.saved_bytes, 16 * 4 + 16 * 4 + 16);
}

/* conv-BN-ReLU: BN keeps its input (the conv's output) and 2 fp32 per
 * channel for the whole batch (mean, inverse std: not per sample); ReLU
 * keeps its output; BN's output is kept by no one.  The conv's input x is
 * a graph input: in act_bytes, not in saved_bytes. */
static void
batchnorm_saves_its_input_and_fixed_channel_statistics(void **state)
{
	Fx *fx = *state;
	Graph *g = MEMORY("model m { input x: 3x4x4;\n"
			  "  c = conv(x, 8, kernel=1, bias=false); b = batchnorm(c); r = relu(b);\n"
			  "  d = conv(r, 8, kernel=1); }");

	assert_non_null(g);
	assert_int_equal(kept_by(g, "c"), 128);
	assert_int_equal(kept_by(g, "b"), 0);
	assert_int_equal(kept_by(g, "r"), 128);
	assert_int_equal(g->total.saved_bytes, 2 * 128 * 4);
	assert_int_equal(g->total.saved_fixed_bytes, 2 * 8 * 4);
	assert_int_equal(g->total.act_bytes, 2 * 128 * 4 + 48 * 4);
}

/* Layer norm saves its input and a mean and rstd per normalized row (here
 * 6 rows of 5): 12 fp32 per sample; instance norm one pair per channel
 * (3 channels of 2x5): 6 fp32 per sample. */
static void
layer_and_instance_norms_save_statistics_per_sample(void **state)
{
	Fx *fx = *state;
	Graph *g = MEMORY("model m { input x: 3x2x5;\n"
			  "  a = add(x, x); l = layernorm(a); i = instancenorm(a); }");

	assert_non_null(g);
	assert_int_equal(kept_by(g, "a"), 30);
	assert_int_equal(kept_by(g, "l"), 12);
	assert_int_equal(fx_layer(g, "l")->cost.act_bytes, 12 * 4);
	assert_int_equal(kept_by(g, "i"), 6);
	assert_int_equal(g->total.saved_bytes, (30 + 12 + 6) * 4);
	assert_int_equal(g->total.saved_fixed_bytes, 0);
}

/* saved_bytes is autograd's figure: fp32 activations, the graph input left
 * out, whatever the precision; act_bytes follows the item size and counts
 * the input.  Indices stay 8 bytes. */
static void
saved_bytes_leave_the_input_out_and_stay_fp32(void **state)
{
	Fx *fx = *state;
	Graph *g = MEMORY("model m { input x: 2x4x4;\n"
			  "  c = conv(x, 2, kernel=1); r = relu(c); p = maxpool(r, kernel=2); }");

	assert_non_null(g);
	assert_int_equal(g->total.saved_bytes, 32 * 4 + 8 * 8);
	assert_int_equal(g->total.act_bytes, 32 * 4 + 8 * 8 + 32 * 4);
	g->elem_bytes = 2;
	assert_true(memory_annotate(g));
	assert_int_equal(g->total.saved_bytes, 32 * 4 + 8 * 8);
	assert_int_equal(g->total.act_bytes, 32 * 2 + 8 * 8 + 32 * 2);
}

/* Totals in bytes follow the item size, and a second run gives the same
 * answer (the pass starts from a clean slate). */
static void
totals_are_elements_times_item_size_and_stable_on_rerun(void **state)
{
	Fx *fx = *state;
	Graph *g = MEMORY("model m { input x: 3x8x8;\n"
			  "  r = relu(x); c = conv(r, 4, kernel=3, pad=1); s = sigmoid(c); }");
	int64_t sum = 0;

	assert_non_null(g);
	for (int i = 0; i < g->nlayer; i++)
		sum += g->layer[i].cost.act_elems;
	/* r (192, relu's output, conv's input) and s (256, sigmoid's output);
	 * sigmoid's backward reads its output, so c is not kept */
	assert_int_equal(sum, 192 + 256);
	assert_false(fx_out(g, "c")->saved);
	assert_int_equal(g->total.act_elems, sum);
	g->elem_bytes = 2;
	assert_true(memory_annotate(g));
	assert_int_equal(g->total.act_elems, sum);
	assert_int_equal(g->total.act_bytes, 2 * sum);
	assert_int_equal(fx_layer(g, "s")->cost.act_bytes, 2 * 256);
}

/* Two kept tensors of 2^62 elements each: 2^63 does not fit. */
static void
activation_memory_beyond_64_bits_is_rejected(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_run(fx, "model m { input a: [2Gi, 2Gi]; input b: [2Gi, 2Gi];\n"
			      "  ra = relu(a); rb = relu(b); }", PASS_SHAPE);

	assert_non_null(g);
	assert_false(memory_annotate(g));
	assert_string_equal(fx_diags(fx),
			    "t.odl:1:7: error: activation memory overflows 64 bits\n");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		FX_TEST(conv_input_and_relu_output_are_one_tensor_kept_once),
		FX_TEST(conv_keeps_its_input_and_graph_inputs_count_in_the_total),
		FX_TEST(relu_keeps_its_output_not_its_input),
		FX_TEST(flatten_is_a_view_counted_once_at_its_root),
		FX_TEST(views_of_views_share_the_first_root),
		FX_TEST(add_keeps_nothing),
		FX_TEST(pools_and_products_keep_what_their_backward_reads),
		FX_TEST(dropout_saves_a_one_byte_mask_and_its_reader_its_output),
		FX_TEST(batchnorm_saves_its_input_and_fixed_channel_statistics),
		FX_TEST(layer_and_instance_norms_save_statistics_per_sample),
		FX_TEST(saved_bytes_leave_the_input_out_and_stay_fp32),
		FX_TEST(totals_are_elements_times_item_size_and_stable_on_rerun),
		FX_TEST(activation_memory_beyond_64_bits_is_rejected),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
