/* test_trace.c -- a profiler's trace matched to the layers
 * (passes/tracematch.c) on ResNet-18 as the default, eval-mode export
 * leaves it (tests/data/onnx/resnet18.onnx: every batch norm folded into
 * its convolution, restored by the training pass): the launcher's trace
 * (tests/data/traces/resnet18-runner.json) gives the 20 convolutions and
 * fc by their modules and the 20 restored batch norms by the module
 * called after their convolution under the same parent; a plain
 * torch.profiler trace of a user's own training loop
 * (tests/data/traces/resnet18-user.json, tools/user_trace.py) gives all
 * 41 by kind and order.  Before, --profile gave 21 of these 41 layers a
 * time (issue 37.4).  And a Kineto trace written here: entries by
 * sequence number, times by the kernels' External id, the rank from
 * distributedInfo. */
#include "tests/harness.h"
#include "passes/tracematch.h"

/* ResNet-18's training graph with the trace `name` read; the layers with
 * weights (conv, fc, batchnorm) matched, the total in *weighted. */
static int
match(Fx *fx, const char *name, int *weighted, int **ent, TraceHow **how, Graph **out)
{
	OnnxOptions opt = { 0 };
	Graph *g = frontend_load(data_path("onnx/resnet18.onnx"), &fx->arena, &fx->files, &opt);
	Modules m;
	int n = 0;

	assert_non_null(g);
	assert_true(training_graph(g));
	assert_true(profile_load(data_path(name), g, &fx->files));
	modules_derive(g, &m);
	*ent = arena_array(&fx->arena, (size_t)g->nlayer, sizeof **ent);
	*how = arena_array(&fx->arena, (size_t)g->nlayer, sizeof **how);
	trace_match(g, &m, g->trace, *ent, *how);
	*weighted = 0;
	for (int i = 0; i < g->nlayer; i++) {
		OpKind op = g->layer[i].op;
		if (op != OP_CONV && op != OP_FC && op != OP_BATCHNORM)
			continue;
		++*weighted;
		n += (*ent)[i] >= 0;
	}
	*out = g;
	return n;
}

static void
runner_trace_restored_batch_norms(void **state)
{
	Fx *fx = *state;
	int w, *ent, i;
	TraceHow *how;
	Graph *g;
	int n = match(fx, "traces/resnet18-runner.json", &w, &ent, &how, &g);

	assert_int_equal(w, 41);
	assert_int_equal(n, 41);
	i = fx_index(g, "/layer1/layer1.0/conv1/Conv/bn");
	assert_int_equal(how[i], TH_FOLDED_BN);
	assert_string_equal(g->trace->mod[ent[i]].module, "layer1.0.bn1");
	i = fx_index(g, "/layer2/layer2.0/downsample/downsample.0/Conv/bn");
	assert_string_equal(g->trace->mod[ent[i]].module, "layer2.0.downsample.1");
	i = fx_index(g, "/conv1/Conv/bn");
	assert_string_equal(g->trace->mod[ent[i]].module, "bn1");
	i = fx_index(g, "/layer1/layer1.0/conv1/Conv");
	assert_int_equal(how[i], TH_MODULE);
	assert_true(g->trace->mod[ent[i]].fwd > 0 && g->trace->mod[ent[i]].bwd > 0);
}

static void
user_trace_by_kind_and_order(void **state)
{
	Fx *fx = *state;
	int w, *ent, i;
	TraceHow *how;
	Graph *g;
	int n = match(fx, "traces/resnet18-user.json", &w, &ent, &how, &g);

	assert_true(g->trace->plain);
	assert_int_equal(w, 41);
	assert_int_equal(n, 41);
	i = fx_index(g, "/layer1/layer1.0/conv2/Conv/bn");
	assert_int_equal(how[i], TH_ORDER);
	assert_string_equal(g->trace->mod[ent[i]].module, "batchnorm #2");
	assert_true(g->trace->mod[ent[i]].fwd > 0 && g->trace->mod[ent[i]].bwd > 0);
	i = fx_index(g, "/fc/Gemm");
	assert_string_equal(g->trace->mod[ent[i]].module, "fc #0");
	assert_true(g->trace->mod[ent[i]].bwd > 0);
	/* the relus (17 layers, 17 aten::relu_ a step) by order too; the adds
	 * not: training batch norms add 1 to num_batches_tracked (aten::add_)
	 * besides the 8 residual adds, so the kind does not line up */
	assert_int_equal(how[fx_index(g, "/layer4/layer4.1/relu_1/Relu")], TH_ORDER);
	assert_int_equal(how[fx_index(g, "/layer1/layer1.0/Add")], TH_NONE);
}

/* A Kineto trace (PyTorch 2.x with a GPU): cpu_op events with sequence
 * numbers and External ids, kernels by External id, a user annotation's
 * step, distributedInfo. */
static void
kineto_trace(void **state)
{
	Fx *fx = *state;
	static const char trace[] =
		"{\"schemaVersion\": 1, \"distributedInfo\": {\"backend\": \"nccl\", "
		"\"rank\": 3},\n"
		"\"traceEvents\": [\n"
		"{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#7\", "
		"\"pid\": 1, \"tid\": 1, \"ts\": 0, \"dur\": 1000},\n"
		"{\"ph\": \"X\", \"cat\": \"python_function\", "
		"\"name\": \"nn.Module: Conv2d_0\", \"pid\": 1, \"tid\": 1, \"ts\": 9, "
		"\"dur\": 100},\n"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::conv2d\", \"pid\": 1, "
		"\"tid\": 1, \"ts\": 10, \"dur\": 50, \"args\": {\"External id\": 1, "
		"\"Sequence number\": 40, \"Fwd thread id\": 0, "
		"\"Input Dims\": [[2, 3, 8, 8], [4, 3, 3, 3]]}},\n"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::cudnn_convolution\", "
		"\"pid\": 1, \"tid\": 1, \"ts\": 12, \"dur\": 40, \"args\": {\"External id\": 2, "
		"\"Sequence number\": 41}},\n"
		"{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", "
		"\"pid\": 1, \"tid\": 1, \"ts\": 13, \"dur\": 5, \"args\": {\"External id\": 2, "
		"\"correlation\": 9}},\n"
		"{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"implicit_convolve_sgemm\", "
		"\"pid\": 0, \"tid\": 7, \"ts\": 20, \"dur\": 30, \"args\": {\"External id\": 2, "
		"\"correlation\": 9}},\n"
		"{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"add_tensor\", \"pid\": 0, "
		"\"tid\": 7, \"ts\": 51, \"dur\": 6, \"args\": {\"External id\": 2}},\n"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::relu\", \"pid\": 1, "
		"\"tid\": 1, \"ts\": 70, \"dur\": 9, \"args\": {\"External id\": 3, "
		"\"Sequence number\": 42}},\n"
		"{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"relu_kernel\", \"pid\": 0, "
		"\"tid\": 7, \"ts\": 80, \"dur\": 4, \"args\": {\"External id\": 3}},\n"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", "
		"\"name\": \"autograd::engine::evaluate_function: ReluBackward0\", \"pid\": 1, "
		"\"tid\": 2, \"ts\": 300, \"dur\": 20, \"args\": {\"External id\": 4, "
		"\"Sequence number\": 42, \"Fwd thread id\": 1}},\n"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::threshold_backward\", "
		"\"pid\": 1, \"tid\": 2, \"ts\": 301, \"dur\": 10, "
		"\"args\": {\"External id\": 5}},\n"
		"{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"threshold_kernel\", "
		"\"pid\": 0, \"tid\": 7, \"ts\": 310, \"dur\": 5, "
		"\"args\": {\"External id\": 5}},\n"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", "
		"\"name\": \"autograd::engine::evaluate_function: ConvolutionBackward0\", "
		"\"pid\": 1, \"tid\": 2, \"ts\": 400, \"dur\": 90, "
		"\"args\": {\"External id\": 6, \"Sequence number\": 41, "
		"\"Fwd thread id\": 1}},\n"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::convolution_backward\", "
		"\"pid\": 1, \"tid\": 2, \"ts\": 401, \"dur\": 80, "
		"\"args\": {\"External id\": 7}},\n"
		"{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"dgrad\", \"pid\": 0, "
		"\"tid\": 7, \"ts\": 420, \"dur\": 50, \"args\": {\"External id\": 7}},\n"
		"{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"wgrad\", \"pid\": 0, "
		"\"tid\": 7, \"ts\": 470, \"dur\": 25, \"args\": {\"External id\": 7}},\n"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"Optimizer.step#SGD.step\", "
		"\"pid\": 1, \"tid\": 1, \"ts\": 600, \"dur\": 100},\n"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::add_\", \"pid\": 1, "
		"\"tid\": 1, \"ts\": 610, \"dur\": 5, \"args\": {\"External id\": 8}},\n"
		"{\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"name\": \"x\", \"pid\": 1, "
		"\"tid\": 1, \"ts\": 5}\n"
		"], \"traceName\": \"t.json\"}\n";
	static const char odl[] =
		"model m { input x: 3x8x8; c = conv(x, 4, kernel=3, pad=1); r = relu(c); "
		"f = flatten(r); y = fc(f, 10); }";
	Graph *g = fx_load(fx, odl);
	Modules m;
	int ent[4];
	TraceHow how[4];
	const ModTime *e;

	assert_non_null(g);
	assert_true(profile_load(fx_write(fx, "k.json", trace), g, &fx->files));
	assert_true(g->trace->plain && g->trace->device_time);
	assert_int_equal(g->trace->rank, 3);
	assert_int_equal(g->trace->steps, 1);
	modules_derive(g, &m);
	assert_int_equal(trace_match(g, &m, g->trace, ent, how), 2);
	/* conv: its kernels (30 + 6 us) forward, by sequence number 41 (its
	 * inner operator's) backward 50 + 25 us; relu 4 and 5 us */
	e = &g->trace->mod[ent[0]];
	assert_string_equal(e->module, "conv #0");
	assert_true(fabs(e->fwd - 36e-6) < 1e-12 && fabs(e->bwd - 75e-6) < 1e-12);
	e = &g->trace->mod[ent[1]];
	assert_string_equal(e->module, "relu #0");
	assert_true(fabs(e->fwd - 4e-6) < 1e-12 && fabs(e->bwd - 5e-6) < 1e-12);
	assert_int_equal(how[3], TH_NONE); /* fc: no aten::linear in the trace */
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(runner_trace_restored_batch_norms, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(user_trace_by_kind_and_order, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(kineto_trace, fx_setup, fx_teardown),
	};

	return cmocka_run_group_tests_name("trace", tests, NULL, NULL);
}
