/* test_shape.c -- passes/shape.c: output and weight shapes per op class,
 * and the errors for shapes that do not fit.  Models are ODL text run
 * through the real frontend; expected sizes are worked out in comments
 * with PyTorch's formula out = floor((in + pads - d*(k-1) - 1) / s) + 1. */
#include "harness.h"

#define SHAPE(odl) fx_run(fx, odl, PASS_SHAPE)

/* ---- conv --------------------------------------------------------------- */

static void
conv_2d_output_uses_stride_and_padding(void **state)
{
	Fx *fx = *state;
	/* (224 + 6 - 7) / 2 + 1 = 112 */
	Graph *g = SHAPE("model m { input x: 3x224x224;\n"
			 "  c = conv(x, 64, kernel=7, stride=2, pad=3, bias=false); }");

	assert_non_null(g);
	assert_string_equal(fx_shape(g, "c"), "64x112x112");
	assert_int_equal(fx_out(g, "c")->elems, 802816);
	assert_int_equal(fx_layer(g, "c")->nw, 1);
	assert_string_equal(fx_weight(g, "c", 0), "64x3x7x7");
	assert_int_equal(fx_layer(g, "c")->w[0].role, W_WEIGHT);
	assert_int_equal(fx_layer(g, "c")->attr.nspatial, 2);
}

static void
conv_with_bias_has_a_bias_vector_per_filter(void **state)
{
	Fx *fx = *state;
	Graph *g = SHAPE("model m { input x: 3x32x32; c = conv(x, 16, kernel=3); }");

	assert_non_null(g);
	/* (32 - 3) / 1 + 1 = 30 */
	assert_string_equal(fx_shape(g, "c"), "16x30x30");
	assert_int_equal(fx_layer(g, "c")->nw, 2);
	assert_string_equal(fx_weight(g, "c", 1), "16");
	assert_int_equal(fx_layer(g, "c")->w[1].role, W_BIAS);
	assert_int_equal(fx_layer(g, "c")->w[1].elems, 16);
}

static void
conv_dilation_widens_the_kernel(void **state)
{
	Fx *fx = *state;
	/* effective kernel 2*(3-1)+1 = 5: (32 - 5) / 1 + 1 = 28; with pad 2: 32 */
	Graph *g = SHAPE("model m { input x: 16x32x32;\n"
			 "  a = conv(x, 16, kernel=3, dilation=2);\n"
			 "  b = conv(x, 16, kernel=3, dilation=2, pad=2); }");

	assert_non_null(g);
	assert_string_equal(fx_shape(g, "a"), "16x28x28");
	assert_string_equal(fx_shape(g, "b"), "16x32x32");
	assert_string_equal(fx_weight(g, "a", 0), "16x16x3x3");
}

static void
conv_1d_slides_over_one_dimension(void **state)
{
	Fx *fx = *state;
	/* (100 - 5) / 2 + 1 = 48 */
	Graph *g = SHAPE("model m { input x: 8x100; c = conv(x, 16, kernel=5, stride=2); }");

	assert_non_null(g);
	assert_string_equal(fx_shape(g, "c"), "16x48");
	assert_string_equal(fx_weight(g, "c", 0), "16x8x5");
	assert_int_equal(fx_layer(g, "c")->attr.nspatial, 1);
}

static void
conv_3d_takes_per_dimension_strides(void **state)
{
	Fx *fx = *state;
	/* D: (16 + 2 - 3) / 1 + 1 = 16; H, W: (32 + 2 - 3) / 2 + 1 = 16 */
	Graph *g = SHAPE("model m { input x: 4x16x32x32;\n"
			 "  c = conv(x, 8, kernel=3, stride=[1, 2, 2], pad=1); }");

	assert_non_null(g);
	assert_string_equal(fx_shape(g, "c"), "8x16x16x16");
	assert_string_equal(fx_weight(g, "c", 0), "8x4x3x3x3");
	assert_int_equal(fx_layer(g, "c")->attr.nspatial, 3);
}

static void
conv_pad_list_gives_begins_then_ends(void **state)
{
	Fx *fx = *state;
	/* H: 10 + 0 + 2 = 12 padded, (12 - 3) + 1 = 10; W: 10 + 1 + 3 = 14, 12 */
	Graph *g = SHAPE("model m { input x: 2x10x10;\n"
			 "  c = conv(x, 2, kernel=3, pad=[0, 1, 2, 3]); }");

	assert_non_null(g);
	assert_string_equal(fx_shape(g, "c"), "2x10x12");
}

static void
conv_groups_divide_the_weight_channels(void **state)
{
	Fx *fx = *state;
	Graph *g = SHAPE("model m { input x: 32x56x56;\n"
			 "  g4 = conv(x, 64, kernel=3, pad=1, groups=4);\n"
			 "  dw = conv(x, 32, kernel=3, pad=1, groups=32, bias=false); }");

	assert_non_null(g);
	assert_string_equal(fx_shape(g, "g4"), "64x56x56");
	assert_string_equal(fx_weight(g, "g4", 0), "64x8x3x3");
	assert_string_equal(fx_weight(g, "dw", 0), "32x1x3x3");
}

static void
conv_groups_that_do_not_divide_are_an_error(void **state)
{
	Fx *fx = *state;

	assert_null(SHAPE("model m { input x: 32x8x8;\n  c = conv(x, 64, kernel=1, groups=3); }"));
	assert_string_equal(fx_diags(fx), "t.odl:2:3: error: layer 'c' (conv): groups 3 must "
					  "divide the input channels 32 and the filters 64\n");
}

static void
convtranspose_grows_the_input(void **state)
{
	Fx *fx = *state;
	/* (8 - 1) * 2 - 1 - 1 + 1 * (4 - 1) + 0 + 1 = 16; weight C x F/g x k x k */
	Graph *g = SHAPE("model m { input x: 16x8x8;\n"
			 "  u = convtranspose(x, 8, kernel=4, stride=2, pad=1); }");

	assert_non_null(g);
	assert_string_equal(fx_shape(g, "u"), "8x16x16");
	assert_string_equal(fx_weight(g, "u", 0), "16x8x4x4");
}

static void
kernel_larger_than_padded_input_is_an_error_naming_the_layer(void **state)
{
	Fx *fx = *state;

	assert_null(SHAPE("model m {\n  input x: 3x4x4;\n"
			  "  big = conv(x, 8, kernel=7, pad=1);\n  r = relu(big);\n}"));
	assert_string_equal(fx_diags(fx),
			    "t.odl:3:3: error: layer 'big' (conv): kernel 7 (7 with dilation) is "
			    "larger than the padded input 6 in spatial dimension 1\n");
	/* one mistake, one error: relu downstream is skipped */
	assert_int_equal(diag_errors(), 1);
}

/* d * (k - 1) + 1 must not wrap: with kernel 2^40 and dilation 2^24 the
 * window spans about 2^64 elements, far beyond an input of 8. */
static void
huge_dilated_kernel_is_larger_than_the_input(void **state)
{
	Fx *fx = *state;

	assert_null(SHAPE("model m { input x: 1x8;\n"
			  "  c = conv(x, 1, kernel=1Ti, dilation=16Mi); }"));
	assert_non_null(strstr(fx_diags(fx),
			       "t.odl:2:3: error: layer 'c' (conv): kernel "
			       "1099511627776 with dilation 16777216 is larger than"));
	assert_int_equal(diag_errors(), 1);
}

static void
error_inside_a_block_names_the_layer_and_notes_the_call(void **state)
{
	Fx *fx = *state;

	assert_null(SHAPE("block down(x) {\n  c = conv(x, 8, kernel=9);\n  return c;\n}\n"
			  "model m {\n  input x: 3x4x4;\n  d = down(x);\n}"));
	assert_string_equal(fx_diags(fx),
			    "t.odl:2:3: error: layer 'd/c' (conv): kernel 9 (9 with dilation) is "
			    "larger than the padded input 4 in spatial dimension 1\n"
			    "t.odl:7:3: note: in the expansion of this statement\n");
}

static void
spatial_rank_of_arguments_must_match_the_input(void **state)
{
	Fx *fx = *state;

	assert_null(SHAPE("model m { input x: 3x32x32; c = conv(x, 8, kernel=[3, 3, 3]); }"));
	assert_string_equal(fx_diags(fx),
			    "t.odl:1:29: error: layer 'c' (conv): arguments give 3 spatial "
			    "dimensions but the input 3x32x32 has 2\n");
}

static void
conv_input_needs_channels_and_spatial_dimensions(void **state)
{
	Fx *fx = *state;

	assert_null(SHAPE("model m { input x: 100; c = conv(x, 8, kernel=3); }"));
	assert_string_equal(fx_diags(fx),
			    "t.odl:1:25: error: layer 'c' (conv): input 100 must be channels plus "
			    "1 to 3 spatial dimensions\n");
}

/* ---- pools -------------------------------------------------------------- */

static void
maxpool_halves_with_kernel_3_stride_2_pad_1(void **state)
{
	Fx *fx = *state;
	/* (112 + 2 - 3) / 2 + 1 = 55 + 1 = 56 */
	Graph *g = SHAPE("model m { input x: 64x112x112;\n"
			 "  p = maxpool(x, kernel=3, stride=2, pad=1); }");

	assert_non_null(g);
	assert_string_equal(fx_shape(g, "p"), "64x56x56");
	assert_int_equal(fx_layer(g, "p")->nw, 0);
}

static void
pool_ceil_mode_rounds_the_last_window_up(void **state)
{
	Fx *fx = *state;
	/* 56 - 3 = 53 span: floor 53/2 + 1 = 27, ceil 27 + 1 = 28 (the 28th
	 * window starts at 54, inside the input) */
	Graph *g = SHAPE("model m { input x: 8x56x56;\n"
			 "  fl = maxpool(x, kernel=3, stride=2);\n"
			 "  ce = maxpool(x, kernel=3, stride=2, ceil=true); }");

	assert_non_null(g);
	assert_string_equal(fx_shape(g, "fl"), "8x27x27");
	assert_string_equal(fx_shape(g, "ce"), "8x28x28");
}

static void
pool_ceil_mode_drops_a_window_starting_in_right_padding(void **state)
{
	Fx *fx = *state;
	/* 5 + 2 pads - 2 = 5 span: ceil 5/2 + 1 = 4, but window 4 would start
	 * at 6 >= 5 + 1, in the right padding: PyTorch gives 3 */
	Graph *g = SHAPE("model m { input x: 1x5x5;\n"
			 "  p = maxpool(x, kernel=2, stride=2, pad=1, ceil=true); }");

	assert_non_null(g);
	assert_string_equal(fx_shape(g, "p"), "1x3x3");
}

static void
pool_stride_defaults_to_the_kernel(void **state)
{
	Fx *fx = *state;
	Graph *g = SHAPE("model m { input x: 8x4x6; p = avgpool(x, kernel=2); }");

	assert_non_null(g);
	assert_string_equal(fx_shape(g, "p"), "8x2x3");
	assert_int_equal(fx_layer(g, "p")->attr.stride[1], 2);
}

static void
global_and_adaptive_pools_set_the_spatial_size(void **state)
{
	Fx *fx = *state;
	Graph *g = SHAPE("model m { input x: 256x13x13;\n"
			 "  gp = globalavgpool(x);\n"
			 "  gm = globalmaxpool(x);\n"
			 "  ap = adaptiveavgpool(x, [6, 6]); }");

	assert_non_null(g);
	assert_string_equal(fx_shape(g, "gp"), "256x1x1");
	assert_string_equal(fx_shape(g, "gm"), "256x1x1");
	assert_string_equal(fx_shape(g, "ap"), "256x6x6");
}

static void
adaptive_pool_size_must_match_the_spatial_rank(void **state)
{
	Fx *fx = *state;
	Graph *g;

	assert_null(SHAPE("model m { input x: 256x13x13; ap = adaptiveavgpool(x, [6]); }"));
	assert_string_equal(fx_diags(fx),
			    "t.odl:1:31: error: layer 'ap' (adaptiveavgpool): output size has 1 "
			    "dimensions but the input 256x13x13 has 2 spatial ones\n");
	/* one integer is every spatial dimension, as AdaptiveAvgPool2d(6) */
	diag_reset();
	g = SHAPE("model m { input x: 256x13x13; ap = adaptiveavgpool(x, 6); }");
	assert_non_null(g);
	assert_string_equal(fx_shape(g, "ap"), "256x6x6");
}

/* ---- element-wise, concat, views ---------------------------------------- */

static void
add_broadcasts_right_aligned(void **state)
{
	Fx *fx = *state;
	Graph *g = SHAPE("model m { input a: 8x4x4; input b: 8x1x1; input v: 4;\n"
			 "  s = add(a, b); t = add(a, v); u = mul(b, v); w = add(a, b, v); }");

	assert_non_null(g);
	assert_string_equal(fx_shape(g, "s"), "8x4x4");
	assert_string_equal(fx_shape(g, "t"), "8x4x4");
	assert_string_equal(fx_shape(g, "u"), "8x1x4");
	assert_string_equal(fx_shape(g, "w"), "8x4x4");
}

static void
add_of_clashing_shapes_is_an_error(void **state)
{
	Fx *fx = *state;

	assert_null(SHAPE("model m { input a: 8x4x4; input b: 3x4x4; s = add(a, b); }"));
	assert_string_equal(fx_diags(fx), "t.odl:1:43: error: layer 's' (add): shapes 8x4x4 and "
					  "3x4x4 do not broadcast\n");
}

static void
concat_adds_up_the_channels(void **state)
{
	Fx *fx = *state;
	Graph *g = SHAPE("model m { input a: 16x8x8; input b: 32x8x8;\n"
			 "  c = concat(a, b, a); d = concat(a, a, axis=2); }");

	assert_non_null(g);
	assert_string_equal(fx_shape(g, "c"), "64x8x8");
	assert_string_equal(fx_shape(g, "d"), "16x8x16");
}

static void
concat_of_mismatched_spatial_sizes_is_an_error(void **state)
{
	Fx *fx = *state;

	assert_null(SHAPE("model m { input a: 16x8x8; input b: 32x4x4; c = concat(a, b); }"));
	assert_string_equal(fx_diags(fx), "t.odl:1:45: error: layer 'c' (concat): cannot "
					  "concatenate 16x8x8 and 32x4x4 along axis 0\n");
}

static void
flatten_collapses_from_its_axis(void **state)
{
	Fx *fx = *state;
	Graph *g = SHAPE("model m { input x: 512x7x7;\n"
			 "  f = flatten(x); g = flatten(x, axis=1); }");

	assert_non_null(g);
	assert_string_equal(fx_shape(g, "f"), "25088");
	assert_string_equal(fx_shape(g, "g"), "512x49");
}

static void
reshape_infers_one_minus_one_and_copies_zeros(void **state)
{
	Fx *fx = *state;
	Graph *g = SHAPE("model m { input x: 512x7x7;\n"
			 "  a = reshape(x, [-1, 49]); b = reshape(x, [0, -1]);\n"
			 "  c = reshape(x, [7, 7, 512]); d = reshape(x, -1); }");

	assert_non_null(g);
	assert_string_equal(fx_shape(g, "a"), "512x49");
	assert_string_equal(fx_shape(g, "b"), "512x49");
	assert_string_equal(fx_shape(g, "c"), "7x7x512");
	assert_string_equal(fx_shape(g, "d"), "25088");
}

static void
reshape_to_a_different_element_count_is_an_error(void **state)
{
	Fx *fx = *state;

	assert_null(SHAPE("model m { input x: 512x7x7; a = reshape(x, [100, 7]); }"));
	assert_string_equal(fx_diags(fx), "t.odl:1:29: error: layer 'a' (reshape): cannot "
					  "reshape 512x7x7 (25088 elements) to [100x7]\n");
}

static void
reshape_with_minus_one_that_does_not_divide_is_an_error(void **state)
{
	Fx *fx = *state;

	assert_null(SHAPE("model m { input x: 512x7x7; a = reshape(x, [-1, 5]); }"));
	assert_string_equal(fx_diags(fx), "t.odl:1:29: error: layer 'a' (reshape): cannot "
					  "reshape 512x7x7 (25088 elements) to [-1x5]\n");
}

static void
transpose_permutes_the_dimensions(void **state)
{
	Fx *fx = *state;
	Graph *g = SHAPE("model m { input x: 12x197x64; t = transpose(x, [1, 0, 2]);\n"
			 "  u = transpose(x, [2, 0, 1]); }");

	assert_non_null(g);
	assert_string_equal(fx_shape(g, "t"), "197x12x64");
	assert_string_equal(fx_shape(g, "u"), "64x12x197");
}

static void
transpose_with_a_repeated_axis_is_an_error(void **state)
{
	Fx *fx = *state;

	assert_null(SHAPE("model m { input x: 12x197x64; t = transpose(x, [0, 0, 1]); }"));
	assert_string_equal(fx_diags(fx),
			    "t.odl:1:31: error: layer 't' (transpose): bad permutation\n");
}

/* ---- fc, matmul, norms -------------------------------------------------- */

static void
fc_on_a_vector_maps_features(void **state)
{
	Fx *fx = *state;
	Graph *g = SHAPE("model m { input x: 2048; f = fc(x, 1000); }");

	assert_non_null(g);
	assert_string_equal(fx_shape(g, "f"), "1000");
	assert_string_equal(fx_weight(g, "f", 0), "1000x2048");
	assert_string_equal(fx_weight(g, "f", 1), "1000");
}

static void
fc_on_a_matrix_maps_the_last_dimension(void **state)
{
	Fx *fx = *state;
	Graph *g = SHAPE("model m { input x: 197x768; f = fc(x, 3072, bias=false); }");

	assert_non_null(g);
	assert_string_equal(fx_shape(g, "f"), "197x3072");
	assert_string_equal(fx_weight(g, "f", 0), "3072x768");
	assert_int_equal(fx_layer(g, "f")->nw, 1);
}

static void
matmul_multiplies_batched_matrices(void **state)
{
	Fx *fx = *state;
	Graph *g = SHAPE("model m { input q: 12x197x64; input k: 12x64x197; input w: 64x10;\n"
			 "  input v: 64;\n"
			 "  s = matmul(q, k); b = matmul(q, w); u = matmul(v, w);"
			 " t = matmul(q, v); }");

	assert_non_null(g);
	assert_string_equal(fx_shape(g, "s"), "12x197x197");
	assert_string_equal(fx_shape(g, "b"), "12x197x10"); /* w broadcast over 12 */
	assert_string_equal(fx_shape(g, "u"), "10");        /* vector times matrix */
	assert_string_equal(fx_shape(g, "t"), "12x197");    /* matrix times vector */
	assert_int_equal(fx_layer(g, "s")->nw, 0);
}

static void
matmul_of_unequal_inner_dimensions_is_an_error(void **state)
{
	Fx *fx = *state;

	assert_null(SHAPE("model m { input q: 12x197x64; input k: 12x32x197; s = matmul(q, k); }"));
	assert_string_equal(fx_diags(fx), "t.odl:1:51: error: layer 's' (matmul): inner "
					  "dimensions of 12x197x64 and 12x32x197 differ\n");
}

static void
layernorm_has_scale_and_shift_over_the_normalized_axes(void **state)
{
	Fx *fx = *state;
	Graph *g = SHAPE("model m { input x: 197x768;\n"
			 "  a = layernorm(x); b = layernorm(x, axis=-2); }");
	const Layer *a;

	assert_non_null(g);
	a = fx_layer(g, "a");
	assert_string_equal(fx_shape(g, "a"), "197x768");
	assert_int_equal(a->attr.axis, -1);
	assert_int_equal(a->nw, 2);
	assert_int_equal(a->w[0].role, W_SCALE);
	assert_int_equal(a->w[1].role, W_SHIFT);
	assert_string_equal(fx_weight(g, "a", 0), "768");
	assert_string_equal(fx_weight(g, "a", 1), "768");
	assert_string_equal(fx_weight(g, "b", 0), "197x768");
}

/* axis=0 written out means the whole sample (LayerNorm([197, 768])); it
 * must not be taken for "no axis given", which defaults to the last. */
static void
layernorm_with_axis_0_normalizes_the_whole_sample(void **state)
{
	Fx *fx = *state;
	Graph *g = SHAPE("model m { input x: 197x768; b = layernorm(x, axis=0); }");

	assert_non_null(g);
	assert_int_equal(fx_layer(g, "b")->attr.axis, 0);
	assert_string_equal(fx_weight(g, "b", 0), "197x768");
	assert_string_equal(fx_weight(g, "b", 1), "197x768");
}

static void
batchnorm_has_scale_and_shift_per_channel(void **state)
{
	Fx *fx = *state;
	Graph *g = SHAPE("model m { input x: 64x56x56; b = batchnorm(x); }");

	assert_non_null(g);
	assert_string_equal(fx_shape(g, "b"), "64x56x56");
	assert_string_equal(fx_weight(g, "b", 0), "64");
	assert_string_equal(fx_weight(g, "b", 1), "64");
}

static void
softmax_axis_out_of_range_is_an_error(void **state)
{
	Fx *fx = *state;

	assert_null(SHAPE("model m { input x: 10x10; s = softmax(x, axis=2); }"));
	assert_string_equal(fx_diags(fx), "t.odl:1:27: error: layer 's' (softmax): axis 2 is "
					  "out of range for a rank-2 tensor\n");
}

/* ---- limits ------------------------------------------------------------- */

static void
input_of_more_than_2_to_the_63_elements_is_rejected(void **state)
{
	Fx *fx = *state;

	assert_null(SHAPE("model m {\n  input x: [1Ti, 1Ti];\n  r = relu(x);\n}"));
	assert_string_equal(fx_diags(fx), "t.odl:2:12: error: input 'x' has more elements than "
					  "64 bits can count\n");
	assert_int_equal(diag_errors(), 1);
}

static void
output_of_more_than_2_to_the_63_elements_is_rejected(void **state)
{
	Fx *fx = *state;

	/* 2^40 x 2^20 input (2^60) -> fc to 2^40 features: 2^80 outputs */
	assert_null(SHAPE("model m { input x: [1Ti, 1Mi]; f = fc(x, 1Ti, bias=false); }"));
	assert_string_equal(fx_diags(fx), "t.odl:1:32: error: layer 'f' (fc): output "
					  "1099511627776x1099511627776 has more elements than 64 "
					  "bits can count\n");
}

static void
weight_of_more_than_2_to_the_63_elements_is_rejected(void **state)
{
	Fx *fx = *state;

	/* output 2^40 x 1 fits; the weight 2^40 x 2^40 does not */
	assert_null(SHAPE("model m { input x: [1, 1Ti]; f = fc(x, 1Ti, bias=false); }"));
	assert_string_equal(fx_diags(fx), "t.odl:1:30: error: layer 'f' (fc): weight "
					  "1099511627776x1099511627776 has more elements than 64 "
					  "bits can count\n");
}

static void
concat_beyond_the_largest_dimension_is_rejected(void **state)
{
	Fx *fx = *state;

	assert_null(SHAPE("model m { input x: 1Ti; c = concat(x, x); }"));
	assert_string_equal(fx_diags(fx), "t.odl:1:25: error: layer 'c' (concat): concatenated "
					  "dimension is too large\n");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		FX_TEST(conv_2d_output_uses_stride_and_padding),
		FX_TEST(conv_with_bias_has_a_bias_vector_per_filter),
		FX_TEST(conv_dilation_widens_the_kernel),
		FX_TEST(conv_1d_slides_over_one_dimension),
		FX_TEST(conv_3d_takes_per_dimension_strides),
		FX_TEST(conv_pad_list_gives_begins_then_ends),
		FX_TEST(conv_groups_divide_the_weight_channels),
		FX_TEST(conv_groups_that_do_not_divide_are_an_error),
		FX_TEST(convtranspose_grows_the_input),
		FX_TEST(kernel_larger_than_padded_input_is_an_error_naming_the_layer),
		FX_TEST(huge_dilated_kernel_is_larger_than_the_input),
		FX_TEST(error_inside_a_block_names_the_layer_and_notes_the_call),
		FX_TEST(spatial_rank_of_arguments_must_match_the_input),
		FX_TEST(conv_input_needs_channels_and_spatial_dimensions),
		FX_TEST(maxpool_halves_with_kernel_3_stride_2_pad_1),
		FX_TEST(pool_ceil_mode_rounds_the_last_window_up),
		FX_TEST(pool_ceil_mode_drops_a_window_starting_in_right_padding),
		FX_TEST(pool_stride_defaults_to_the_kernel),
		FX_TEST(global_and_adaptive_pools_set_the_spatial_size),
		FX_TEST(adaptive_pool_size_must_match_the_spatial_rank),
		FX_TEST(add_broadcasts_right_aligned),
		FX_TEST(add_of_clashing_shapes_is_an_error),
		FX_TEST(concat_adds_up_the_channels),
		FX_TEST(concat_of_mismatched_spatial_sizes_is_an_error),
		FX_TEST(flatten_collapses_from_its_axis),
		FX_TEST(reshape_infers_one_minus_one_and_copies_zeros),
		FX_TEST(reshape_to_a_different_element_count_is_an_error),
		FX_TEST(reshape_with_minus_one_that_does_not_divide_is_an_error),
		FX_TEST(transpose_permutes_the_dimensions),
		FX_TEST(transpose_with_a_repeated_axis_is_an_error),
		FX_TEST(fc_on_a_vector_maps_features),
		FX_TEST(fc_on_a_matrix_maps_the_last_dimension),
		FX_TEST(matmul_multiplies_batched_matrices),
		FX_TEST(matmul_of_unequal_inner_dimensions_is_an_error),
		FX_TEST(layernorm_has_scale_and_shift_over_the_normalized_axes),
		FX_TEST(layernorm_with_axis_0_normalizes_the_whole_sample),
		FX_TEST(batchnorm_has_scale_and_shift_per_channel),
		FX_TEST(softmax_axis_out_of_range_is_an_error),
		FX_TEST(input_of_more_than_2_to_the_63_elements_is_rejected),
		FX_TEST(output_of_more_than_2_to_the_63_elements_is_rejected),
		FX_TEST(weight_of_more_than_2_to_the_63_elements_is_rejected),
		FX_TEST(concat_beyond_the_largest_dimension_is_rejected),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
