/* test_memory.c -- passes/memory.c: which activations training keeps for
 * backward, counted once each, on the layer that made them. */
#include "harness.h"
#include "model/model.h"
#include "onnxbuild.h"

#define MEMORY(odl) fx_run(fx, odl, PASS_MEMORY)

static int64_t
kept_by(const Graph *g, const char *name)
{
	return fx_layer(g, name)->cost.act_elems;
}

/* What g keeps per sample as autograd keeps it at precision p, the graph
 * inputs' included, in bytes (model/memuse.c prices it so). */
static int64_t
act_bytes(const Graph *g, Precision p)
{
	const Keeps *k = graph_keeps(g, p, false);

	return kept_bytes(&k->layers, p) + k->input * precision_bytes(p);
}

/* Layer `name`'s part of it. */
static int64_t
layer_bytes_at(const Graph *g, const char *name, Precision p)
{
	return kept_bytes(&graph_keeps(g, p, false)->layer[fx_layer(g, name) - g->layer], p);
}

/* Autograd's figure: fp32 activations, graph inputs left out. */
static int64_t
saved_bytes(const Graph *g)
{
	return kept_bytes(&g->keep[0][KEEP_PLAIN].layers, PREC_FP32);
}

/* Every element kept, the graph inputs' included, each at the
 * precision's width. */
static int64_t
act_elems(const Graph *g)
{
	int64_t sum = g->keep[0][KEEP_PLAIN].input;

	for (int i = 0; i < g->nlayer; i++)
		sum += g->layer[i].cost.act_elems;
	return sum;
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
	assert_int_equal(act_elems(g), 192);
	assert_int_equal(act_bytes(g, PREC_FP32), 768);
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
	assert_int_equal(act_elems(g), 192 + 256);
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
	assert_int_equal(act_elems(g), 32);
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
	assert_int_equal(act_elems(g), 128);
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
	assert_int_equal(act_elems(g), 216);
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
	assert_int_equal(act_elems(g), 32);
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
	assert_int_equal(layer_bytes_at(g, "mp", PREC_FP32), 64);
	assert_int_equal(layer_bytes_at(g, "mp", PREC_FP16), 64); /* int64 whatever the precision */
	assert_false(fx_out(g, "mp")->saved);
	assert_int_equal(kept_by(g, "ap"), 0);
	assert_int_equal(kept_by(g, "m"), 0);
	assert_int_equal(act_elems(g), 4 * 32 + 8);
	assert_int_equal(saved_bytes(g), 4 * 32 * 4 + 8 * 8);
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
	assert_int_equal(layer_bytes_at(g, "d", PREC_FP32), 16 * 4 + 16);
	assert_int_equal(saved_bytes(g), 16 * 4 + 16 * 4 + 16);
}

/* conv-BN-ReLU: BN keeps its input (the conv's output) and 2 fp32 per
 * channel for the whole batch (mean, inverse std: not per sample); ReLU
 * keeps its output; BN's output is kept by no one.  The conv's input x is
 * a graph input: kept, but not in saved_bytes. */
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
	assert_int_equal(saved_bytes(g), 2 * 128 * 4);
	assert_int_equal(g->keep[0][KEEP_PLAIN].saved_fixed, 2 * 8 * 4);
	assert_int_equal(act_bytes(g, PREC_FP32), 2 * 128 * 4 + 48 * 4);
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
	assert_int_equal(layer_bytes_at(g, "l", PREC_FP32), 12 * 4);
	assert_int_equal(layer_bytes_at(g, "l", PREC_BF16), 12 * 4); /* fp32 statistics */
	assert_int_equal(kept_by(g, "i"), 6);
	assert_int_equal(saved_bytes(g), (30 + 12 + 6) * 4);
	assert_int_equal(g->keep[0][KEEP_PLAIN].saved_fixed, 0);
}

/* The backward peak of a chain x -> conv a (4x8x8) -> relu r -> conv c
 * (2x8x8), fp32: forward keeps x (192 elements), r (256; a's output is
 * nobody's).  Backward of c: all kept (448) + grad c (128) + grad r (256)
 * = 832 elements; of r: 448 + grad r + grad a (512) = 960; of a: x only
 * is left (192) + grad a (256; x gets none) = 448.  The peak 960 is 512
 * elements (2,048 bytes) over the 448 kept; at fp16, 1,024 bytes.
 * Workspace: the largest im2col, a's 3 channels x 3x3 kernel x 8x8
 * outputs = 1,728 elements; c's is 4 x 9 x 64 = 2,304, the larger. */
static void
backward_peak_and_workspace(void **state)
{
	Fx *fx = *state;
	Graph *g = MEMORY("model m { input x: 3x8x8;\n"
			  "  a = conv(x, 4, kernel=3, pad=1); r = relu(a);\n"
			  "  c = conv(r, 2, kernel=3, pad=1); }");

	assert_non_null(g);
	assert_int_equal(act_bytes(g, PREC_FP32), 448 * 4);
	assert_int_equal(memory_transient(g, &g->keep[0][KEEP_PLAIN], 4, 0), 512 * 4);
	assert_int_equal(memory_transient(g, &g->keep[0][KEEP_PLAIN], 2, 0), 512 * 2);
	assert_int_equal(g->total.workspace, 2304);
}

/* The backward pass's peak moves with the width: the indices' fixed bytes
 * do not scale, so it is no multiple of one count.  x (16x16) -> relu a
 * (256, kept) -> add b = a + a (256, kept by the pool) -> maxpool mp,
 * 5x5 stride 1 (12x12: 144 int64 indices, 1,152 bytes) -> relu r (144,
 * kept).  Over all kept (H), the backward of r holds its gradients
 * 288 w more, of mp 400 w - 144 w = 256 w, of b 768 w - 144 w - 1,152:
 * at fp32 (w = 4) b's 1,344 bytes is the peak, at fp16 (w = 2) r's 576,
 * not half of 1,344. */
static void
backward_peak_moves_with_the_width(void **state)
{
	Fx *fx = *state;
	Graph *g = MEMORY("model m { input x: 1x16x16;\n"
			  "  a = relu(x); b = add(a, a); mp = maxpool(b, kernel=5, stride=1);\n"
			  "  r = relu(mp); }");
	const Keeps *k;

	assert_non_null(g);
	k = &g->keep[0][KEEP_PLAIN];
	assert_int_equal(layer_bytes_at(g, "mp", PREC_FP32), 144 * 8);
	assert_int_equal(act_bytes(g, PREC_FP32), (256 + 256 + 144) * 4 + 1152);
	assert_int_equal(memory_transient(g, k, 4, 0), 1344);
	assert_int_equal(memory_transient(g, k, 2, 0), 576);
}

/* saved_bytes is autograd's figure: fp32 activations, the graph input left
 * out, whatever the precision; the bytes kept follow the item size and
 * count the input.  Indices stay 8 bytes. */
static void
saved_bytes_leave_the_input_out_and_stay_fp32(void **state)
{
	Fx *fx = *state;
	Graph *g = MEMORY("model m { input x: 2x4x4;\n"
			  "  c = conv(x, 2, kernel=1); r = relu(c); p = maxpool(r, kernel=2); }");

	assert_non_null(g);
	assert_int_equal(saved_bytes(g), 32 * 4 + 8 * 8);
	assert_int_equal(act_bytes(g, PREC_FP32), 32 * 4 + 8 * 8 + 32 * 4);
	assert_int_equal(act_bytes(g, PREC_FP16), 32 * 2 + 8 * 8 + 32 * 2);
}

/* The bytes follow the item size, and a second run gives the same
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
	assert_int_equal(act_elems(g), sum);
	assert_int_equal(act_bytes(g, PREC_FP32), 4 * sum);
	assert_true(memory_annotate(g));
	assert_int_equal(act_elems(g), sum);
	assert_int_equal(act_bytes(g, PREC_BF16), 2 * sum);
	assert_int_equal(layer_bytes_at(g, "s", PREC_BF16), 2 * 256);
}

/* ONNX graph og written to m.onnx and read through the passes. */
static Graph *
onnx_run(Fx *fx, Onnx__GraphProto *og)
{
	Arena *a = &fx->arena;
	const char *path = fx_write(fx, "m.onnx", "");
	uint8_t *buf;
	size_t len = ob_pack(a, ob_model(a, og), &buf);
	FILE *f = fopen(path, "wb");
	Graph *g;

	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
	g = onnx_load(path, a, &fx->files, NULL);
	if (!g)
		fail_msg("%s", fx_diags(fx));
	assert_true(shape_infer(g) && cost_annotate(g) && memory_annotate(g));
	return g;
}

/* A Constant node making the float scalar `name`, as torch.onnx writes the
 * numbers of a formula (an initializer would be a trained tensor). */
static void
scalar(Arena *a, Onnx__GraphProto *og, const char *name, float v)
{
	Onnx__TensorProto *t = ob_tensor(a, "", FLOAT, 0, NULL);

	t->n_float_data = 1;
	t->float_data = ob_copy(a, &v, sizeof v);
	ob_attr_t(a, ob_add(a, og, ob_node(a, "Constant", name, "", name)), "value", t);
}

/* A transformer MLP as torch.onnx writes it at opset 13: LayerNorm spelled
 * out (ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add) and the
 * exact GELU (Div, Erf, Add, Mul, Mul).  `split` gives d a second reader,
 * which is no longer LayerNorm. */
static Onnx__GraphProto *
mlp(Arena *a, bool split)
{
	Onnx__GraphProto *og = ob_graph(a);
	ob_input(a, og, ob_vinfo(a, "x", DIMS(SYM, 4, 8)));
	scalar(a, og, "two", 2), scalar(a, og, "eps", 1e-5f), scalar(a, og, "sqrt2", 1.4142135f);
	scalar(a, og, "one", 1), scalar(a, og, "half", 0.5f);
	ob_init(a, og, ob_tensor(a, "gamma", FLOAT, DIMS(8)));
	ob_init(a, og, ob_tensor(a, "beta", FLOAT, DIMS(8)));
	ob_init(a, og, ob_tensor(a, "w1", FLOAT, DIMS(8, 16)));
	ob_init(a, og, ob_tensor(a, "w2", FLOAT, DIMS(16, 8)));
	ob_add(a, og, ob_node(a, "Relu", "relu", "x", "r"));
	ob_attr_ints(a, ob_add(a, og, ob_node(a, "ReduceMean", "mean", "r", "m")), "axes",
		     DIMS(-1));
	ob_add(a, og, ob_node(a, "Sub", "sub", "r,m", "d"));
	ob_add(a, og, ob_node(a, "Pow", "pow", "d,two", "p"));
	ob_attr_ints(a, ob_add(a, og, ob_node(a, "ReduceMean", "var", "p", "v")), "axes",
		     DIMS(-1));
	ob_add(a, og, ob_node(a, "Add", "addeps", "v,eps", "ve"));
	ob_add(a, og, ob_node(a, "Sqrt", "sqrt", "ve", "s"));
	ob_add(a, og, ob_node(a, "Div", "div", "d,s", "n"));
	ob_add(a, og, ob_node(a, "Mul", "gamma", "n,gamma", "ng"));
	ob_add(a, og, ob_node(a, "Add", "beta", "ng,beta", "y"));
	ob_add(a, og, ob_node(a, "MatMul", "fc1", "y,w1", "h"));
	ob_add(a, og, ob_node(a, "Div", "gdiv", "h,sqrt2", "h2"));
	ob_add(a, og, ob_node(a, "Erf", "erf", "h2", "e"));
	ob_add(a, og, ob_node(a, "Add", "gadd", "e,one", "e1"));
	ob_add(a, og, ob_node(a, "Mul", "gmul", "h,e1", "gm"));
	ob_add(a, og, ob_node(a, "Mul", "ghalf", "gm,half", "act"));
	ob_add(a, og, ob_node(a, "MatMul", "fc2", "act,w2", "o"));
	ob_output(a, og, ob_vinfo(a, "o", DIMS(SYM, 4, 8)));
	if (split) {
		ob_add(a, og, ob_node(a, "Relu", "other", "d", "q"));
		ob_output(a, og, ob_vinfo(a, "q", DIMS(SYM, 4, 8)));
	}
	return og;
}

/* LayerNorm keeps its input r (32, also ReLU's output) and a mean and rstd
 * per row (2 x 4 fp32, on its first ReduceMean); fc1 keeps y (32); GELU its
 * input h (64); fc2 its input act (64).  Nothing else: not d, not the
 * rstd, not GELU's inner tensors. */
static void
onnx_layernorm_and_gelu_count_as_the_operators_they_spell(void **state)
{
	Fx *fx = *state;
	Graph *g = onnx_run(fx, mlp(&fx->arena, false));

	assert_int_equal(kept_by(g, "relu"), 32);
	assert_int_equal(kept_by(g, "mean"), 8);
	assert_int_equal(kept_by(g, "sub"), 0);
	assert_int_equal(kept_by(g, "sqrt"), 0);
	assert_int_equal(kept_by(g, "beta"), 32);
	assert_int_equal(kept_by(g, "fc1"), 64);
	assert_int_equal(kept_by(g, "gdiv"), 0);
	assert_int_equal(kept_by(g, "gadd"), 0);
	assert_int_equal(kept_by(g, "ghalf"), 64);
	assert_int_equal(saved_bytes(g), (32 + 8 + 32 + 64 + 64) * 4);
}

/* The decompositions are one operator each for the time model too
 * (Layer.pattern): LayerNorm at its first ReduceMean, its sub, pow, mean,
 * eps, sqrt, div, gamma and beta parts; GELU at its first division, the
 * erf, the add and the two products parts.  The parts run nothing; the
 * operator reads its input and writes its output, 2 x 32 floats a sample
 * for LayerNorm (backward 5: its data gradient, then gamma's and beta's,
 * reading both again), plus a kernel's latency each. */
static void
onnx_decompositions_run_as_one_kernel(void **state)
{
	Fx *fx = *state;
	Graph *g = onnx_run(fx, mlp(&fx->arena, false));
	const System *s = fx_abci(fx);
	Analysis an = {
		.eng = fx->eng, .q.sys = s, .q.impl = fx_impl(NULL), .q.set.prec = PREC_FP32
	};
	const char *parts[] = { "sub", "sqrt", "beta", "gadd", "gmul", "ghalf" };
	const Layer *mean = fx_layer(g, "mean");
	double bw = s->mem_bw * s->eff_mem;

	assert_int_equal(mean->pattern, PAT_LAYERNORM);
	assert_int_equal(fx_layer(g, "gdiv")->pattern, PAT_GELU);
	for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
		assert_int_equal(fx_layer(g, parts[i])->pattern, PAT_PART);
		NEAR(layer_time(&an, g, fx_layer(g, parts[i]), 64, 1, DIM_DATA, false), 0);
		NEAR(layer_host(&an, g, fx_layer(g, parts[i]), false), 0);
	}
	assert_int_equal(fx_layer(g, "fc1")->pattern, PAT_NONE);
	NEAR(layer_time(&an, g, mean, 64, 1, DIM_DATA, false),
	     2 * 32 * 4 * 64 / bw + s->kernel_lat);
	NEAR(layer_time(&an, g, mean, 64, 1, DIM_DATA, true),
	     5 * 32 * 4 * 64 / bw + 2 * s->kernel_lat);
	NEAR(layer_host(&an, g, mean, false), an.q.impl.dispatch);
}

/* With a second reader of d the nodes are counted one by one: Pow and Div
 * keep d, Div the rstd s (4); ReduceMean keeps its input r. */
static void
onnx_decomposition_with_an_outside_reader_counts_node_by_node(void **state)
{
	Fx *fx = *state;
	Graph *g = onnx_run(fx, mlp(&fx->arena, true));

	assert_int_equal(kept_by(g, "relu"), 32);
	assert_int_equal(kept_by(g, "mean"), 0);
	assert_int_equal(kept_by(g, "sub"), 32);
	assert_int_equal(kept_by(g, "var"), 0);
	assert_int_equal(kept_by(g, "sqrt"), 4);
	assert_int_equal(kept_by(g, "fc1"), 64); /* GELU still fused */
}

/* A Mul by a trained tensor (ConvNeXt's layer scale) keeps its input, as
 * autograd does to compute the scale's gradient; a Mul by a scalar and an
 * Add of a trained bias keep nothing.  A Dropout node is its input (the
 * ratio is not read; Dropout nodes left in eval exports have p = 0). */
static void
onnx_layer_scale_keeps_its_input_and_dropout_is_its_input(void **state)
{
	Fx *fx = *state;
	Arena *a = &fx->arena;
	Onnx__GraphProto *og = ob_graph(a);
	Graph *g;

	ob_input(a, og, ob_vinfo(a, "x", DIMS(SYM, 4, 8)));
	ob_init(a, og, ob_tensor(a, "ls", FLOAT, DIMS(8)));
	ob_init(a, og, ob_tensor(a, "b", FLOAT, DIMS(8)));
	scalar(a, og, "k", 3);
	ob_init(a, og, ob_tensor(a, "w", FLOAT, DIMS(8, 8)));
	ob_add(a, og, ob_node(a, "Add", "bias", "x,b", "y"));
	ob_add(a, og, ob_node(a, "Mul", "scalar", "y,k", "z"));
	ob_add(a, og, ob_node(a, "Mul", "layerscale", "z,ls", "u"));
	ob_add(a, og, ob_node(a, "Softmax", "softmax", "u", "sm"));
	ob_add(a, og, ob_node(a, "Dropout", "drop", "sm", "dr,mask"));
	ob_add(a, og, ob_node(a, "MatMul", "fc", "dr,w", "o"));
	ob_output(a, og, ob_vinfo(a, "o", DIMS(SYM, 4, 8)));
	g = onnx_run(fx, og);
	assert_int_equal(kept_by(g, "bias"), 0);
	assert_int_equal(kept_by(g, "scalar"), 32);
	assert_int_equal(kept_by(g, "layerscale"), 0);
	assert_int_equal(kept_by(g, "softmax"), 32); /* and fc's, through drop */
	assert_int_equal(kept_by(g, "drop"), 0);
	assert_int_equal(saved_bytes(g), 2 * 32 * 4);
}

/* ShuffleNet's chunk, SiLU and an exporter-padded average pool: conv's
 * input s is a slice of r, a view that keeps all of r (128, ReLU keeps it
 * anyway); SiLU (Sigmoid, Mul) keeps its input c (64) and not the gate;
 * AveragePool keeps its input unpadded: y (64), not the 4x6x6 Pad output. */
static void
onnx_slices_keep_their_input_and_silu_keeps_one_tensor(void **state)
{
	Fx *fx = *state;
	Arena *a = &fx->arena;
	Onnx__GraphProto *og = ob_graph(a);
	Onnx__NodeProto *n;
	Graph *g;

	ob_input(a, og, ob_vinfo(a, "x", DIMS(SYM, 8, 4, 4)));
	ob_init(a, og, ob_ints(a, "starts", DIMS(4)));
	ob_init(a, og, ob_ints(a, "ends", DIMS(8)));
	ob_init(a, og, ob_ints(a, "axes", DIMS(1)));
	ob_init(a, og, ob_ints(a, "pads", DIMS(0, 0, 1, 1, 0, 0, 1, 1)));
	ob_init(a, og, ob_tensor(a, "w", FLOAT, DIMS(4, 4, 1, 1)));
	ob_add(a, og, ob_node(a, "Relu", "relu", "x", "r"));
	ob_add(a, og, ob_node(a, "Slice", "chunk", "r,starts,ends,axes", "s"));
	ob_add(a, og, ob_node(a, "Conv", "conv", "s,w", "c"));
	ob_add(a, og, ob_node(a, "Sigmoid", "gate", "c", "sg"));
	ob_add(a, og, ob_node(a, "Mul", "silu", "c,sg", "y"));
	ob_add(a, og, ob_node(a, "Pad", "pad", "y,pads", "yp"));
	n = ob_add(a, og, ob_node(a, "AveragePool", "pool", "yp", "ap"));
	ob_attr_ints(a, n, "kernel_shape", DIMS(3, 3));
	ob_output(a, og, ob_vinfo(a, "ap", DIMS(SYM, 4, 4, 4)));
	g = onnx_run(fx, og);
	assert_int_equal(kept_by(g, "relu"), 128);
	assert_int_equal(kept_by(g, "chunk"), 0);
	assert_int_equal(kept_by(g, "conv"), 64);
	assert_int_equal(kept_by(g, "gate"), 0);
	assert_int_equal(kept_by(g, "silu"), 64);
	assert_int_equal(kept_by(g, "pad"), 0);
	assert_int_equal(saved_bytes(g), (128 + 64 + 64) * 4);
}

/* A select (Gather of one constant index) is a view: fc keeping it keeps
 * the whole tensor (ViT's head keeps all 3x8 of r for x[:, 0]); matmul
 * copies its operand and keeps the copy (Swin's qkv[2]: 8x8 of 3x8x8). */
static void
onnx_a_select_keeps_its_input_except_for_matmul(void **state)
{
	Fx *fx = *state;
	Arena *a = &fx->arena;
	Onnx__GraphProto *og = ob_graph(a);
	Onnx__TensorProto *i0 = ob_tensor(a, "i0", INT64, 0, NULL);
	Graph *g;

	i0->n_int64_data = 1;
	i0->int64_data = ob_copy(a, &(int64_t){ 0 }, sizeof(int64_t));
	ob_input(a, og, ob_vinfo(a, "x", DIMS(SYM, 3, 8)));
	ob_input(a, og, ob_vinfo(a, "z", DIMS(SYM, 3, 8, 8)));
	ob_init(a, og, i0);
	ob_init(a, og, ob_tensor(a, "w", FLOAT, DIMS(8, 2)));
	ob_add(a, og, ob_node(a, "Relu", "relu", "x", "r"));
	ob_attr_i(a, ob_add(a, og, ob_node(a, "Gather", "cls", "r,i0", "t")), "axis", 1);
	ob_add(a, og, ob_node(a, "Gemm", "head", "t,w", "o"));
	ob_add(a, og, ob_node(a, "Tanh", "tanh", "z", "q"));
	ob_attr_i(a, ob_add(a, og, ob_node(a, "Gather", "v", "q,i0", "v")), "axis", 1);
	ob_add(a, og, ob_node(a, "MatMul", "av", "v,v", "av"));
	ob_output(a, og, ob_vinfo(a, "o", DIMS(SYM, 2)));
	ob_output(a, og, ob_vinfo(a, "av", DIMS(SYM, 8, 8)));
	g = onnx_run(fx, og);
	assert_int_equal(kept_by(g, "relu"), 24);
	assert_int_equal(kept_by(g, "cls"), 0);
	assert_int_equal(kept_by(g, "tanh"), 192); /* tanh keeps its output */
	assert_int_equal(kept_by(g, "v"), 64);
}

/* GroupNorm as torch.onnx writes it (Reshape, InstanceNormalization,
 * Reshape, Mul by gamma, Add beta): the norm keeps its input, the conv's
 * output c (64), and a mean and rstd per group (2 x 2 per sample); the
 * Mul by gamma is part of the norm and keeps nothing. */
static void
onnx_group_norm_keeps_its_input_and_statistics_per_group(void **state)
{
	Fx *fx = *state;
	Arena *a = &fx->arena;
	Onnx__GraphProto *og = ob_graph(a);
	Graph *g;

	ob_input(a, og, ob_vinfo(a, "x", DIMS(SYM, 4, 4, 4)));
	ob_init(a, og, ob_tensor(a, "w", FLOAT, DIMS(4, 4, 1, 1)));
	ob_init(a, og, ob_ints(a, "groups", DIMS(0, 2, -1)));
	ob_init(a, og, ob_ints(a, "back", DIMS(0, 4, 4, 4)));
	ob_init(a, og, ob_tensor(a, "s", FLOAT, DIMS(2)));
	ob_init(a, og, ob_tensor(a, "b", FLOAT, DIMS(2)));
	ob_init(a, og, ob_tensor(a, "gamma", FLOAT, DIMS(4, 1, 1)));
	ob_init(a, og, ob_tensor(a, "beta", FLOAT, DIMS(4, 1, 1)));
	ob_add(a, og, ob_node(a, "Conv", "conv", "x,w", "c"));
	ob_add(a, og, ob_node(a, "Reshape", "split", "c,groups", "cg"));
	ob_add(a, og, ob_node(a, "InstanceNormalization", "gn", "cg,s,b", "n"));
	ob_add(a, og, ob_node(a, "Reshape", "merge", "n,back", "nm"));
	ob_add(a, og, ob_node(a, "Mul", "gamma", "nm,gamma", "ng"));
	ob_add(a, og, ob_node(a, "Add", "beta", "ng,beta", "y"));
	ob_add(a, og, ob_node(a, "Relu", "relu", "y", "r"));
	ob_output(a, og, ob_vinfo(a, "r", DIMS(SYM, 4, 4, 4)));
	g = onnx_run(fx, og);
	assert_int_equal(kept_by(g, "conv"), 64);
	assert_int_equal(kept_by(g, "gn"), 4);
	assert_int_equal(kept_by(g, "gamma"), 0);
	assert_int_equal(kept_by(g, "relu"), 64);
	assert_int_equal(saved_bytes(g), (64 + 4 + 64) * 4);
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
		FX_TEST(backward_peak_moves_with_the_width),
		FX_TEST(saved_bytes_leave_the_input_out_and_stay_fp32),
		FX_TEST(backward_peak_and_workspace),
		FX_TEST(totals_are_elements_times_item_size_and_stable_on_rerun),
		FX_TEST(onnx_layernorm_and_gelu_count_as_the_operators_they_spell),
		FX_TEST(onnx_decompositions_run_as_one_kernel),
		FX_TEST(onnx_decomposition_with_an_outside_reader_counts_node_by_node),
		FX_TEST(onnx_layer_scale_keeps_its_input_and_dropout_is_its_input),
		FX_TEST(onnx_slices_keep_their_input_and_silu_keeps_one_tensor),
		FX_TEST(onnx_a_select_keeps_its_input_except_for_matmul),
		FX_TEST(onnx_group_norm_keeps_its_input_and_statistics_per_group),
		FX_TEST(activation_memory_beyond_64_bits_is_rejected),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
