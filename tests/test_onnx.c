/* test_onnx.c -- the ONNX frontend (frontend/onnx/) on bad input, and its
 * operator table.
 *
 * Every model is built in memory with protobuf-c's generated API
 * (tests/onnxbuild.h), packed, written to the scratch directory and read
 * back through onnx_load() and the passes, as main.c runs them.  Broken
 * files are made from packed models: cut short, overwritten with random
 * bytes, or written byte by byte where the API cannot say it.  Each case
 * checks the exact diagnostics: `m.onnx: error: node N 'name' (Op): ...`
 * where a node is at fault, `m.onnx: error: ...` otherwise.
 *
 * Cases that could hang, exhaust memory or overflow the stack when the
 * code regresses run in a child process with a time limit (and an address
 * space limit where the point is not to allocate). */
#include "harness.h"
#include "onnxbuild.h"
#include "frontend/onnx/optable.h"
#include "model/model.h"
#include "plan/analysis.h"

#include <math.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

/* ---- running models ----------------------------------------------------- */

/* buf[len] written to `name` in the scratch directory; its full path */
static const char *
write_bytes(Fx *fx, const char *name, const void *buf, size_t len)
{
	const char *path = fx_write(fx, name, "");
	FILE *f = fopen(path, "wb");

	if (!f)
		fail_msg("cannot write %s", path);
	if ((len && fwrite(buf, 1, len, f) != len) | (fclose(f) != 0))
		fail_msg("cannot write %s", path);
	return path;
}

/* The file read as main.c does: onnx_load, then the passes, with the IR
 * verified after each step.  NULL as soon as a step reports errors. */
static Graph *
load_file(Fx *fx, const char *path, const OnnxOptions *opt)
{
	Graph *g = onnx_load(path, &fx->arena, &fx->files, opt);

	if (!g)
		return NULL;
	assert_int_equal(ir_verify(g), 0);
	if (!shape_infer(g) || ir_verify(g) || !cost_annotate(g) || ir_verify(g) ||
	    !memory_annotate(g))
		return NULL;
	assert_int_equal(ir_verify(g), 0);
	return g;
}

static Graph *
load_bytes(Fx *fx, const char *name, const void *buf, size_t len, const OnnxOptions *opt)
{
	return load_file(fx, write_bytes(fx, name, buf, len), opt);
}

/* m packed into m.onnx and read */
static Graph *
run_opt(Fx *fx, const Onnx__ModelProto *m, const OnnxOptions *opt)
{
	uint8_t *buf;
	size_t len = ob_pack(&fx->arena, m, &buf);

	return load_bytes(fx, "m.onnx", buf, len, opt);
}

static Graph *
run(Fx *fx, Onnx__GraphProto *g)
{
	return run_opt(fx, ob_model(&fx->arena, g), NULL);
}

/* What was reported since the last call with the same mark. */
static const char *
since(Fx *fx, size_t *mark)
{
	const char *all = fx_diags(fx), *s = all + *mark;

	*mark = strlen(all);
	return s;
}

/* A graph reading x: N x 3 x 8 x 8. */
static Onnx__GraphProto *
base(Fx *fx)
{
	Onnx__GraphProto *g = ob_graph(&fx->arena);

	ob_input(&fx->arena, g, ob_vinfo(&fx->arena, "x", DIMS(SYM, 3, 8, 8)));
	return g;
}

/* The valid model the file-level cases break: conv, relu, pool, gemm. */
static Onnx__ModelProto *
small_model(Fx *fx)
{
	Arena *a = &fx->arena;
	Onnx__GraphProto *g = base(fx);
	Onnx__NodeProto *n;

	ob_init(a, g, ob_tensor(a, "w", FLOAT, DIMS(4, 3, 3, 3)));
	ob_init(a, g, ob_tensor(a, "b", FLOAT, DIMS(4)));
	ob_init(a, g, ob_tensor(a, "fw", FLOAT, DIMS(10, 64)));
	n = ob_add(a, g, ob_node(a, "Conv", "conv", "x,w,b", "c"));
	ob_attr_ints(a, n, "pads", DIMS(1, 1, 1, 1));
	ob_add(a, g, ob_node(a, "Relu", "relu", "c", "r"));
	n = ob_add(a, g, ob_node(a, "MaxPool", "pool", "r", "p"));
	ob_attr_ints(a, n, "kernel_shape", DIMS(2, 2));
	ob_attr_ints(a, n, "strides", DIMS(2, 2));
	ob_add(a, g, ob_node(a, "Flatten", "flat", "p", "f"));
	n = ob_add(a, g, ob_node(a, "Gemm", "fc", "f,fw", "y"));
	ob_attr_i(a, n, "transB", 1);
	ob_output(a, g, ob_vinfo(a, "y", DIMS(SYM, 10)));
	return ob_model(a, g);
}

/* ---- child processes ---------------------------------------------------- */

typedef int ChildFn(Fx *fx, const void *arg);

/* Runs fn in a child process for at most `secs` seconds; with extra_mb > 0
 * its address space may grow by only that much.  Returns the child's exit
 * status, or 128 + the signal that ended it (SIGALRM: out of time). */
static int
in_child(Fx *fx, ChildFn *fn, const void *arg, unsigned secs, long extra_mb)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (extra_mb > 0) {
			/* statm's first field: the address space now, in pages */
			FILE *f = fopen("/proc/self/statm", "r");
			unsigned long pages = 0;
			if (f && fscanf(f, "%lu", &pages) == 1) {
				rlim_t lim = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) +
					     (rlim_t)extra_mb * 1024 * 1024;
				setrlimit(RLIMIT_AS, &(struct rlimit){ lim, lim });
			}
			if (f)
				fclose(f);
		}
		alarm(secs);
		_exit(fn(fx, arg));
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

/* In a child: 0 if the diagnostics are exactly `want`, else 3 (and both
 * printed to stderr). */
static int
child_diags(Fx *fx, const char *want)
{
	const char *got = fx_diags(fx);

	if (strcmp(got, want) == 0)
		return 0;
	fprintf(stderr, "diagnostics:\n%s\nexpected:\n%s\n", got, want);
	return 3;
}

static void
assert_child_ok(int status)
{
	if (status == 128 + SIGALRM)
		fail_msg("the child ran out of time");
	if (status > 128)
		fail_msg("the child died of signal %d", status - 128);
	assert_int_equal(status, 0);
}

/* ---- sanity: the model the file-level cases break ----------------------- */

static void
model_built_in_memory_is_analysed(void **state)
{
	Fx *fx = *state;
	Graph *g = run_opt(fx, small_model(fx), NULL);

	assert_non_null(g);
	assert_string_equal(fx_diags(fx), "");
	assert_string_equal(fx_names(fx, g), "conv relu pool flat fc");
	assert_string_equal(fx_shape(g, "pool"), "4x4x4");
	/* conv 4*3*3*3 + 4, fc 64*10 */
	assert_int_equal(g->total.params, 112 + 640);
	assert_int_equal(g->total.macs, 4 * 8 * 8 * 27 + 640);
}

/* ---- broken files ------------------------------------------------------- */

static void
empty_file_is_rejected(void **state)
{
	Fx *fx = *state;

	assert_null(load_bytes(fx, "m.onnx", "", 0, NULL));
	assert_string_equal(fx_diags(fx), "m.onnx: error: empty file\n");
}

static void
missing_file_and_directory_are_rejected(void **state)
{
	Fx *fx = *state;
	size_t mark = 0;
	const char *dir = fx_write(fx, "d.onnx/f", "");

	assert_null(load_file(fx, arena_printf(&fx->arena, "%s/no.onnx", fx->dir), NULL));
	assert_string_equal(since(fx, &mark),
			    "no.onnx: error: cannot read file: No such file or directory\n");
	assert_null(load_file(fx, arena_printf(&fx->arena, "%s/d.onnx", fx->dir), NULL));
	assert_string_equal(since(fx, &mark),
			    "d.onnx: error: cannot read file: not a regular file\n");
	(void)dir;
}

/* The packed model cut at every length: always a clean error, except
 * where the cut falls between the top-level fields. */
static void
truncated_file_is_rejected_at_every_cut(void **state)
{
	Fx *fx = *state;
	Onnx__ModelProto *m = small_model(fx);
	uint8_t *buf;
	size_t len = ob_pack(&fx->arena, m, &buf), mark = 0;
	/* the last field is opset_import (field 8): key, length, 08 0d */
	size_t opset_at = len - 4;
	int ok = 0;

	assert_int_equal(buf[opset_at], 8 << 3 | 2);
	for (size_t cut = 0; cut < len; cut++) {
		Graph *g;
		const char *d;
		diag_reset();
		g = load_bytes(fx, "t.onnx", buf, cut, NULL);
		d = since(fx, &mark);
		if (g) {
			/* without its opset_import the model is opset 1: still valid */
			assert_int_equal(cut, opset_at);
			assert_string_equal(d, "");
			ok++;
			continue;
		}
		if (strncmp(d, "t.onnx: error: ", 15) != 0 || strchr(d, '\n') != d + strlen(d) - 1)
			fail_msg("cut at %zu of %zu: not one error line: '%s'", cut, len, d);
		if (cut == 0)
			assert_string_equal(d, "t.onnx: error: empty file\n");
		else if (cut == 1)
			assert_string_equal(d, "t.onnx: error: not a valid ONNX model "
					       "(truncated varint)\n");
		else if (cut == 2) /* ir_version alone */
			assert_string_equal(d, "t.onnx: error: the model has no graph\n");
		else if (cut == 3 || cut == len / 2 || cut == opset_at + 1 || cut == len - 1)
			assert_string_equal(d, "t.onnx: error: not a valid ONNX model "
					       "(truncated length-delimited field)\n");
	}
	assert_int_equal(ok, 1);
}

static uint64_t
xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* 500 files of 1 to 1024 random bytes (a fixed seed): never a model. */
static void
random_bytes_are_rejected_cleanly(void **state)
{
	Fx *fx = *state;
	uint64_t seed = 0x9e3779b97f4a7c15u;
	uint8_t buf[1024];
	size_t mark = 0;

	for (int i = 0; i < 500; i++) {
		size_t len = 1 + xorshift(&seed) % sizeof buf;
		const char *d;
		for (size_t k = 0; k < len; k++)
			buf[k] = (uint8_t)(xorshift(&seed) >> 32);
		if (i % 2)
			buf[0] = 0x08; /* starts like a model: ir_version */
		diag_reset();
		assert_null(load_bytes(fx, "r.onnx", buf, len, NULL));
		d = since(fx, &mark);
		if (strncmp(d, "r.onnx: error: ", 15) != 0 || strchr(d, '\n') != d + strlen(d) - 1)
			fail_msg("random file %d (%zu bytes): not one error line: '%s'", i, len, d);
	}
	/* one of them, exactly */
	memcpy(buf, "\x08\x07\x3a\x05\x0a\x03\x0a\x01", 8); /* graph { node { input: <cut> */
	assert_null(load_bytes(fx, "r.onnx", buf, 8, NULL));
	assert_string_equal(since(fx, &mark), "r.onnx: error: not a valid ONNX model "
					      "(truncated length-delimited field)\n");
	memcpy(buf, "\x08\x07\x3b", 3); /* field 7 as a group */
	assert_null(load_bytes(fx, "r.onnx", buf, 3, NULL));
	assert_string_equal(since(fx, &mark), "r.onnx: error: not a valid ONNX model "
					      "(unsupported wire type (groups))\n");
}

/* Valid protobuf messages of other types are not models. */
static void
protobuf_that_is_not_a_model_is_rejected(void **state)
{
	Fx *fx = *state;
	Arena *a = &fx->arena;
	Onnx__TensorProto *t = ob_tensor(a, "w", FLOAT, DIMS(3, 4));
	Onnx__GraphProto *g = base(fx);
	uint8_t buf[256];
	size_t len, mark = 0;

	len = onnx__tensor_proto__pack(t, buf);
	assert_null(load_bytes(fx, "t.onnx", buf, len, NULL));
	assert_string_equal(since(fx, &mark), "t.onnx: error: not a valid ONNX model "
					      "(protobuf decode failed)\n");
	/* a GraphProto's name and inputs (fields 2, 11) read as a ModelProto's
	 * producer_name and an unknown field: a model without a graph */
	assert_true(onnx__graph_proto__get_packed_size(g) <= sizeof buf);
	len = onnx__graph_proto__pack(g, buf);
	assert_null(load_bytes(fx, "g.onnx", buf, len, NULL));
	assert_string_equal(since(fx, &mark), "g.onnx: error: the model has no graph\n");
}

typedef struct Nest {
	long depth;
	const char *want;
} Nest;

static int
nested_types_child(Fx *fx, const void *arg)
{
	const Nest *n = arg;
	uint8_t *buf;
	size_t len = ob_nested_types(&fx->arena, n->depth, &buf);

	return load_bytes(fx, "n.onnx", buf, len, NULL) ? 2 : child_diags(fx, n->want);
}

/* protobuf-c unpacks nested messages by recursion: a 2 MB file of nested
 * sequence types overflowed the C stack before pbstrip.c bounded it. */
static void
deeply_nested_types_are_rejected_not_a_stack_overflow(void **state)
{
	static const char deep[] = "n.onnx: error: not a valid ONNX model (messages nested "
				   "too deeply)\n";
	/* model, graph, value_info, then two levels per sequence type */
	static const Nest cases[] = {
		{ 200000, deep },
		{ 49, deep }, /* 101 levels */
		{ 48,
		  "n.onnx: error: graph input 'x' is not a tensor (sequences, maps and optionals "
		  "are not supported)\n" },
	};

	for (int i = 0; i < 3; i++)
		assert_child_ok(in_child(*state, nested_types_child, &cases[i], 60, 0));
}

static void
model_without_graph_is_rejected(void **state)
{
	Fx *fx = *state;

	assert_null(run_opt(fx, ob_model(&fx->arena, NULL), NULL));
	assert_string_equal(fx_diags(fx), "m.onnx: error: the model has no graph\n");
}

static void
graph_without_input_is_rejected(void **state)
{
	Fx *fx = *state;
	Arena *a = &fx->arena;
	Onnx__GraphProto *g = ob_graph(a);
	size_t mark = 0;

	assert_null(run(fx, g));
	assert_string_equal(since(fx, &mark),
			    "m.onnx: error: the graph has no input besides its initializers\n");
	/* IR 3 lists initializers among the inputs: they do not count */
	ob_input(a, g, ob_vinfo(a, "w", DIMS(4, 3)));
	ob_init(a, g, ob_tensor(a, "w", FLOAT, DIMS(4, 3)));
	ob_add(a, g, ob_node(a, "Relu", "r", "w", "y"));
	assert_null(run(fx, g));
	assert_string_equal(since(fx, &mark),
			    "m.onnx: error: the graph has no input besides its initializers\n");
	g = ob_graph(a);
	ob_input(a, g, ob_vinfo(a, "x", NOSHAPE));
	assert_null(run(fx, g));
	assert_string_equal(since(fx, &mark),
			    "m.onnx: error: graph input 'x' has no tensor shape\n");
}

/* ---- graph structure ---------------------------------------------------- */

/* A float tensor of rank 1 holding vals[n]. */
static Onnx__TensorProto *
floats(Arena *a, const char *name, int n, const float *vals)
{
	Onnx__TensorProto *t = ob_tensor(a, name, FLOAT, 1, (int64_t[]){ n });

	t->n_float_data = (size_t)n;
	t->float_data = ob_copy(a, vals, n * sizeof *vals);
	return t;
}

/* torch.onnx.export merges initializers of equal shape, type and values:
 * a tensor of equal elements that nodes of two modules (name prefixes)
 * read counts once per module; a tensor of distinct values two modules
 * read (weight tying) counts once; a module that reads one twice, or a
 * node without a module, adds nothing. */
static void
merged_initializers_count_once_per_module(void **state)
{
	Fx *fx = *state;
	Arena *a = &fx->arena;
	Onnx__GraphProto *g = ob_graph(a);
	Graph *ir;
	size_t mark = 0;

	ob_input(a, g, ob_vinfo(a, "x", DIMS(SYM, 4)));
	ob_init(a, g, floats(a, "ones", 4, (float[]){ 1, 1, 1, 1 }));
	ob_init(a, g, floats(a, "tied", 4, (float[]){ 0.1f, 0.2f, 0.3f, 0.4f }));
	ob_add(a, g, ob_node(a, "Mul", "/blockA/norm/Mul", "x,ones", "a"));
	ob_add(a, g, ob_node(a, "Mul", "/blockA/norm/Mul_1", "a,ones", "b"));
	ob_add(a, g, ob_node(a, "Mul", "/blockB/norm/Mul", "b,ones", "c"));
	ob_add(a, g, ob_node(a, "Mul", "plain", "c,ones", "d"));
	ob_add(a, g, ob_node(a, "Add", "/blockA/Add", "d,tied", "e"));
	ob_add(a, g, ob_node(a, "Add", "/blockB/Add", "e,tied", "y"));
	ob_output(a, g, ob_vinfo(a, "y", DIMS(SYM, 4)));
	since(fx, &mark);
	ir = run(fx, g);
	assert_non_null(ir);
	assert_int_equal(ir->total.params, 4 + 4 + 4);
	assert_int_equal(ir->merged_inits, 1);
	assert_int_equal(ir->merged_params, 4);
	assert_non_null(strstr(since(fx, &mark),
			       "1 initializer of equal elements (the first: "
			       "'ones') is read by the nodes of several modules"));
}

static void
graph_with_a_cycle_is_rejected(void **state)
{
	Fx *fx = *state;
	Arena *a = &fx->arena;
	Onnx__GraphProto *g = base(fx);
	size_t mark = 0;

	ob_add(a, g, ob_node(a, "Add", "a1", "x,b", "a"));
	ob_add(a, g, ob_node(a, "Relu", "r1", "a", "b"));
	assert_null(run(fx, g));
	assert_string_equal(since(fx, &mark),
			    "m.onnx: error: node 0 'a1' (Add): input 'b' is produced by node 1, "
			    "which does not come before it (a cycle, or nodes out of topological "
			    "order)\n");
	/* a node reading its own output */
	g = base(fx);
	ob_add(a, g, ob_node(a, "Add", "self", "x,s", "s"));
	assert_null(run(fx, g));
	assert_string_equal(since(fx, &mark),
			    "m.onnx: error: node 0 'self' (Add): input 's' is produced by node 0, "
			    "which does not come before it (a cycle, or nodes out of topological "
			    "order)\n");
}

static void
input_nobody_produces_is_rejected(void **state)
{
	Fx *fx = *state;
	Arena *a = &fx->arena;
	Onnx__GraphProto *g = base(fx);
	Onnx__NodeProto *n;
	size_t mark = 0;

	ob_add(a, g, ob_node(a, "Relu", "r", "x", "r"));
	ob_add(a, g, ob_node(a, "Add", "sum", "r,ghost", "y"));
	assert_null(run(fx, g));
	assert_string_equal(since(fx, &mark),
			    "m.onnx: error: node 1 'sum' (Add): input 'ghost' is not produced by "
			    "any node, nor a graph input or initializer\n");
	/* an opaque layer's second output is not modelled */
	g = base(fx);
	ob_add(a, g, ob_node(a, "Frobnicate", "f", "x", "p,q"));
	ob_value_info(a, g, ob_vinfo(a, "p", DIMS(SYM, 5)));
	ob_add(a, g, ob_node(a, "Relu", "r", "q", "y"));
	assert_null(run(fx, g));
	assert_string_equal(since(fx, &mark),
			    "m.onnx: error: node 1 'r' (Relu): input 'q' is output 2 of node 0, "
			    "which oraclec does not model\n");
	/* MaxPool's second output (the indices) is: the pool's shape */
	g = base(fx);
	n = ob_add(a, g, ob_node(a, "MaxPool", "pool", "x", "p,idx"));
	ob_attr_ints(a, n, "kernel_shape", DIMS(2, 2));
	ob_add(a, g, ob_node(a, "Relu", "r", "idx", "y"));
	assert_non_null(run(fx, g));
	assert_string_equal(since(fx, &mark), "");
	/* an empty name is an optional input left out, not a missing one */
	g = base(fx);
	ob_add(a, g, ob_node(a, "Relu", "r", "x,,", "y"));
	assert_non_null(run(fx, g));
}

static void
duplicate_output_names_are_rejected(void **state)
{
	Fx *fx = *state;
	Arena *a = &fx->arena;
	Onnx__GraphProto *g = base(fx);
	size_t mark = 0;

	ob_add(a, g, ob_node(a, "Relu", "r1", "x", "y"));
	ob_add(a, g, ob_node(a, "Sigmoid", "r2", "x", "y"));
	assert_null(run(fx, g));
	assert_string_equal(since(fx, &mark),
			    "m.onnx: error: node 1 'r2' (Sigmoid): output 'y' is already defined "
			    "(duplicate name or cycle)\n");
	/* over a graph input, over an initializer */
	g = base(fx);
	ob_add(a, g, ob_node(a, "Relu", "r", "x", "x"));
	assert_null(run(fx, g));
	assert_string_equal(since(fx, &mark),
			    "m.onnx: error: node 0 'r' (Relu): output 'x' is already defined "
			    "(duplicate name or cycle)\n");
	g = base(fx);
	ob_init(a, g, ob_tensor(a, "w", FLOAT, DIMS(3)));
	ob_add(a, g, ob_node(a, "Relu", NULL, "x", "w"));
	assert_null(run(fx, g));
	assert_string_equal(since(fx, &mark),
			    "m.onnx: error: node 0 '' (Relu): output 'w' is already defined "
			    "(duplicate name or cycle)\n");
}

static void
subgraphs_are_rejected(void **state)
{
	Fx *fx = *state;
	Arena *a = &fx->arena;
	Onnx__GraphProto *g = base(fx), *then = ob_graph(a), *body = ob_graph(a);
	Onnx__TensorProto *t = ob_tensor(a, "t", BOOLEAN, 0, NULL);
	Onnx__NodeProto *n;
	size_t mark = 0;

	ob_add(a, then, ob_node(a, "Relu", "inner", "x", "z"));
	ob_output(a, then, ob_vinfo(a, "z", NOSHAPE));
	t->n_int32_data = 1;
	t->int32_data = arena_alloc(a, sizeof *t->int32_data);
	t->int32_data[0] = 1;
	ob_attr_t(a, ob_add(a, g, ob_node(a, "Constant", "cond", "", "c")), "value", t);
	n = ob_add(a, g, ob_node(a, "If", "if", "c", "y"));
	ob_attr_g(a, n, "then_branch", then);
	ob_attr_g(a, n, "else_branch", then);
	assert_null(run(fx, g));
	assert_string_equal(since(fx, &mark), "m.onnx: error: node 1 'if' (If): subgraphs "
					      "(attribute 'then_branch') are not supported\n");
	/* a Loop over an activation */
	g = base(fx);
	n = ob_add(a, g, ob_node(a, "Loop", "loop", ",,x", "y"));
	ob_attr_g(a, n, "body", body);
	assert_null(run(fx, g));
	assert_string_equal(since(fx, &mark), "m.onnx: error: node 0 'loop' (Loop): subgraphs "
					      "(attribute 'body') are not supported\n");
}

/* ---- dimensions --------------------------------------------------------- */

static void
negative_dims_are_rejected(void **state)
{
	Fx *fx = *state;
	Arena *a = &fx->arena;
	Onnx__GraphProto *g = ob_graph(a);
	size_t mark = 0;

	ob_input(a, g, ob_vinfo(a, "x", DIMS(SYM, 3, -5, 8)));
	ob_add(a, g, ob_node(a, "Relu", "r", "x", "y"));
	assert_null(run(fx, g));
	assert_string_equal(since(fx, &mark), "m.onnx: error: graph input 'x': dimension 2 is -5, "
					      "out of range (1 to 2^40)\n");
	g = base(fx);
	ob_init(a, g, ob_tensor(a, "w", FLOAT, DIMS(4, 3, -3, 3)));
	ob_add(a, g, ob_node(a, "Conv", "c", "x,w", "y"));
	assert_null(run(fx, g));
	assert_string_equal(since(fx, &mark),
			    "m.onnx: error: initializer 'w' has dimension -3 out of range\n");
	/* in a Constant node, the node is named */
	g = base(fx);
	ob_attr_t(a, ob_add(a, g, ob_node(a, "Constant", "k", "", "s")), "value",
		  ob_tensor(a, "v", INT64, DIMS(-1)));
	ob_add(a, g, ob_node(a, "Reshape", "rs", "x,s", "y"));
	assert_null(run(fx, g));
	assert_string_equal(since(fx, &mark), "m.onnx: error: node 0 'k' (Constant): constant 'v' "
					      "has dimension -1 out of range\n");
	/* a batch below 1 (some exporters write -1 for "dynamic") is symbolic */
	g = ob_graph(a);
	ob_input(a, g, ob_vinfo(a, "x", DIMS(-1, 3, 8, 8)));
	ob_add(a, g, ob_node(a, "Relu", "r", "x", "y"));
	assert_non_null(run(fx, g));
	assert_string_equal(since(fx, &mark), "");
}

static void
absurd_dims_are_rejected(void **state)
{
	Fx *fx = *state;
	Arena *a = &fx->arena;
	Onnx__GraphProto *g = ob_graph(a);
	size_t mark = 0;
	const int64_t huge = (int64_t)1 << 62;

	ob_input(a, g, ob_vinfo(a, "x", DIMS(SYM, 3, huge, 8)));
	ob_add(a, g, ob_node(a, "Relu", "r", "x", "y"));
	assert_null(run(fx, g));
	assert_string_equal(since(fx, &mark),
			    "m.onnx: error: graph input 'x': dimension 2 is 4611686018427387904, "
			    "out of range (1 to 2^40)\n");
	g = ob_graph(a);
	ob_input(a, g, ob_vinfo(a, "x", DIMS(huge, 3, 8, 8)));
	ob_add(a, g, ob_node(a, "Relu", "r", "x", "y"));
	assert_null(run(fx, g));
	assert_string_equal(since(fx, &mark),
			    "m.onnx: error: graph input 'x': batch dimension 4611686018427387904 "
			    "is out of range (1 to 2^40)\n");
	g = base(fx);
	ob_init(a, g, ob_tensor(a, "w", FLOAT, DIMS(4, 3, huge, 3)));
	ob_add(a, g, ob_node(a, "Conv", "c", "x,w", "y"));
	assert_null(run(fx, g));
	assert_string_equal(since(fx, &mark), "m.onnx: error: initializer 'w' has dimension "
					      "4611686018427387904 out of range\n");
	/* a rank of a million */
	g = base(fx);
	{
		Onnx__TensorProto *t = ob_tensor(a, "w", FLOAT, 0, NULL);
		t->n_dims = 1000000;
		t->dims = arena_array(a, t->n_dims, sizeof *t->dims);
		ob_init(a, g, t);
	}
	assert_null(run(fx, g));
	assert_string_equal(since(fx, &mark), "m.onnx: error: initializer 'w' has 1000000 "
					      "dimensions; at most 9 are supported\n");
}

static void
dims_whose_product_overflows_are_rejected(void **state)
{
	Fx *fx = *state;
	Arena *a = &fx->arena;
	Onnx__GraphProto *g = ob_graph(a);
	Onnx__NodeProto *n;
	size_t mark = 0;
	const int64_t t40 = (int64_t)1 << 40;

	ob_input(a, g, ob_vinfo(a, "x", DIMS(SYM, t40, t40, 8)));
	ob_add(a, g, ob_node(a, "Relu", "r", "x", "y"));
	assert_null(run(fx, g));
	assert_string_equal(since(fx, &mark), "m.onnx: error: graph input 'x' has more elements "
					      "than 64 bits can count\n");
	g = base(fx);
	ob_init(a, g, ob_tensor(a, "w", FLOAT, DIMS(t40, t40, 3, 3)));
	ob_add(a, g, ob_node(a, "Conv", "c", "x,w", "y"));
	assert_null(run(fx, g));
	assert_string_equal(since(fx, &mark), "m.onnx: error: initializer 'w' has more elements "
					      "than 64 bits can count\n");
	/* a layer whose output overflows: 2^10 x 2^30 x 2^30 */
	g = ob_graph(a);
	ob_input(a, g, ob_vinfo(a, "x", DIMS(SYM, 1, 1 << 20, 1 << 20)));
	ob_init(a, g, ob_tensor(a, "w", FLOAT, DIMS(1, 1024, 1, 1)));
	n = ob_add(a, g, ob_node(a, "ConvTranspose", "up", "x,w", "y"));
	ob_attr_ints(a, n, "strides", DIMS(1024, 1024));
	assert_null(run(fx, g));
	assert_string_equal(since(fx, &mark),
			    "m.onnx: error: node 0 'up' (ConvTranspose): output 1024x1073740801x"
			    "1073740801 has more elements than 64 bits can count\n");
}

/* ---- operators ---------------------------------------------------------- */

static void
missing_required_attribute_or_input_is_reported(void **state)
{
	Fx *fx = *state;
	Arena *a = &fx->arena;
	Onnx__GraphProto *g = base(fx);
	Onnx__NodeProto *n;
	size_t mark = 0;

	ob_add(a, g, ob_node(a, "Conv", "conv", "x", "y"));
	assert_null(run(fx, g));
	assert_string_equal(since(fx, &mark), "m.onnx: error: node 0 'conv' (Conv): input 2 (the "
					      "weight) is missing\n");
	g = base(fx);
	ob_add(a, g, ob_node(a, "Conv", "conv", "x,x", "y"));
	assert_null(run(fx, g));
	assert_string_equal(since(fx, &mark), "m.onnx: error: node 0 'conv' (Conv): input 2 (the "
					      "weight) must be a constant, not an activation\n");
	g = base(fx);
	ob_add(a, g, ob_node(a, "MaxPool", "pool", "x", "y"));
	assert_null(run(fx, g));
	assert_string_equal(since(fx, &mark), "m.onnx: error: node 0 'pool' (MaxPool): missing or "
					      "wrong 'kernel_shape'\n");
	g = base(fx);
	n = ob_add(a, g, ob_node(a, "AveragePool", "pool", "x", "y"));
	ob_attr_ints(a, n, "kernel_shape", DIMS(2, 2, 2));
	assert_null(run(fx, g));
	assert_string_equal(since(fx, &mark), "m.onnx: error: node 0 'pool' (AveragePool): missing "
					      "or wrong 'kernel_shape'\n");
	g = base(fx);
	ob_add(a, g, ob_node(a, "Reshape", "rs", "x", "y"));
	assert_null(run(fx, g));
	assert_string_equal(since(fx, &mark), "m.onnx: error: node 0 'rs' (Reshape): the target "
					      "shape is not a known constant\n");
	g = base(fx);
	ob_add(a, g, ob_node(a, NULL, "what", "x", "y"));
	assert_null(run(fx, g));
	assert_string_equal(since(fx, &mark), "m.onnx: error: node 0 has no op_type\n");
	g = base(fx);
	ob_add(a, g, ob_node(a, "Relu", "r", "x", ""));
	assert_null(run(fx, g));
	assert_string_equal(since(fx, &mark), "m.onnx: error: node 0 'r' (Relu): node has no "
					      "output\n");
}

static void
kernel_larger_than_padded_input_is_rejected(void **state)
{
	Fx *fx = *state;
	Arena *a = &fx->arena;
	Onnx__GraphProto *g = base(fx);
	Onnx__NodeProto *n;
	size_t mark = 0;

	n = ob_add(a, g, ob_node(a, "MaxPool", "pool", "x", "y"));
	ob_attr_ints(a, n, "kernel_shape", DIMS(20, 2));
	assert_null(run(fx, g));
	assert_string_equal(since(fx, &mark),
			    "m.onnx: error: node 0 'pool' (MaxPool): kernel 20 (20 with dilation) "
			    "is larger than the padded input 8 in spatial dimension 1\n");
	/* the kernel from the weight: 11 against 8 + 2 * 1 */
	g = base(fx);
	ob_init(a, g, ob_tensor(a, "w", FLOAT, DIMS(4, 3, 3, 11)));
	n = ob_add(a, g, ob_node(a, "Conv", "conv", "x,w", "y"));
	ob_attr_ints(a, n, "pads", DIMS(1, 1, 1, 1));
	assert_null(run(fx, g));
	assert_string_equal(since(fx, &mark),
			    "m.onnx: error: node 0 'conv' (Conv): kernel 11 (11 with dilation) "
			    "is larger than the padded input 10 in spatial dimension 2\n");
	/* a kernel_shape the weight contradicts */
	g = base(fx);
	ob_init(a, g, ob_tensor(a, "w", FLOAT, DIMS(4, 3, 5, 5)));
	n = ob_add(a, g, ob_node(a, "Conv", "conv", "x,w", "y"));
	ob_attr_ints(a, n, "kernel_shape", DIMS(3, 3));
	assert_null(run(fx, g));
	assert_string_equal(since(fx, &mark), "m.onnx: error: node 0 'conv' (Conv): weight 1 does "
					      "not have the expected shape 4x3x3x3\n");
}

/* Fewer strides than spatial dimensions were read from an uninitialised
 * array (valgrind), an empty list from a NULL pointer (UBSan). */
static void
window_attributes_need_one_value_per_spatial_dimension(void **state)
{
	Fx *fx = *state;
	Arena *a = &fx->arena;
	static const struct {
		const char *attr;
		int n;
		const char *want;
	} cases[] = {
		{ "strides", 1, "'strides' has 1 values for 2 spatial dimensions" },
		{ "strides", 0, "'strides' has 0 values for 2 spatial dimensions" },
		{ "dilations", 1, "'dilations' has 1 values for 2 spatial dimensions" },
		{ "dilations", 4, "attribute 'dilations' has 4 values, at most 3 are supported" },
		{ "kernel_shape", 0, "missing or wrong 'kernel_shape'" },
		{ "pads", 2, "'pads' has 2 values for 2 spatial dimensions" },
	};
	size_t mark = 0;

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		Onnx__GraphProto *g = base(fx);
		Onnx__NodeProto *n = ob_add(a, g, ob_node(a, "MaxPool", "pool", "x", "y"));
		if (strcmp(cases[i].attr, "kernel_shape") != 0)
			ob_attr_ints(a, n, "kernel_shape", DIMS(2, 2));
		ob_attr_ints(a, n, cases[i].attr, cases[i].n, (int64_t[]){ 1, 1, 1, 1 });
		assert_null(run(fx, g));
		assert_string_equal(since(fx, &mark),
				    arena_printf(a, "m.onnx: error: node 0 'pool' (MaxPool): %s\n",
						 cases[i].want));
	}
}

static Onnx__GraphProto *
gemm_graph(Fx *fx, Onnx__TensorProto *w, int transb)
{
	Arena *a = &fx->arena;
	Onnx__GraphProto *g = base(fx);
	Onnx__NodeProto *n;

	ob_init(a, g, w);
	ob_add(a, g, ob_node(a, "Flatten", "flat", "x", "f"));
	n = ob_add(a, g, ob_node(a, "Gemm", "fc", "f,w", "y"));
	ob_attr_i(a, n, "transB", transb);
	return g;
}

static void
gemm_whose_weight_does_not_match_is_rejected(void **state)
{
	Fx *fx = *state;
	Arena *a = &fx->arena;
	size_t mark = 0;

	/* the flattened input has 192 features */
	assert_non_null(run(fx, gemm_graph(fx, ob_tensor(a, "w", FLOAT, DIMS(10, 192)), 1)));
	assert_null(run(fx, gemm_graph(fx, ob_tensor(a, "w", FLOAT, DIMS(10, 100)), 1)));
	assert_string_equal(since(fx, &mark), "m.onnx: error: node 1 'fc' (Gemm): weight has 100 "
					      "input features, the input 192\n");
	assert_null(run(fx, gemm_graph(fx, ob_tensor(a, "w", FLOAT, DIMS(10, 192)), 0)));
	assert_string_equal(since(fx, &mark), "m.onnx: error: node 1 'fc' (Gemm): weight has 10 "
					      "input features, the input 192\n");
	assert_null(run(fx, gemm_graph(fx, ob_tensor(a, "w", FLOAT, DIMS(10, 192, 1)), 1)));
	assert_string_equal(since(fx, &mark), "m.onnx: error: node 1 'fc' (Gemm): input 2 (the "
					      "weight) has rank 3, expected 2\n");
}

static int
huge_weight_child(Fx *fx, const void *arg)
{
	Arena *a = &fx->arena;
	Onnx__GraphProto *g = ob_graph(a);
	Onnx__NodeProto *n;
	Graph *ir;

	(void)arg;
	ob_input(a, g, ob_vinfo(a, "x", DIMS(SYM, 1024)));
	ob_init(a, g, ob_tensor(a, "w", FLOAT, DIMS(262144, 1024))); /* 1 GiB of float */
	n = ob_add(a, g, ob_node(a, "Gemm", "fc", "x,w", "y"));
	ob_attr_i(a, n, "transB", 1);
	ir = run(fx, g);
	if (!ir)
		return child_diags(fx, "") ? 3 : 2;
	return ir->total.params == (int64_t)1 << 28
		       ? child_diags(fx, "")
		       : 4;
}

/* A 1 GiB weight declared by its dims: analysed with 256 MB of address
 * space to spare, so nothing ever allocates it. */
static void
huge_weight_declared_without_data_is_analysed_without_allocating_it(void **state)
{
	assert_child_ok(in_child(*state, huge_weight_child, NULL, 60, 256));
}

static void
unknown_operator_without_a_declared_shape_is_rejected(void **state)
{
	Fx *fx = *state;
	Arena *a = &fx->arena;
	Onnx__GraphProto *g = base(fx);
	Onnx__ValueInfoProto *vi;
	size_t mark = 0;
	const char *want = "m.onnx: error: node 0 'f' (Frobnicate): unsupported operator, and the "
			   "file declares no shape for its output 'y'\n";

	ob_add(a, g, ob_node(a, "Frobnicate", "f", "x", "y"));
	assert_null(run(fx, g));
	assert_string_equal(since(fx, &mark), want);
	/* value_info that does not give a shape: nameless, symbolic, a sequence */
	ob_value_info(a, g, ob_vinfo(a, NULL, DIMS(SYM, 5, 5)));
	ob_value_info(a, g, ob_vinfo(a, "y", DIMS(SYM, SYM, 5)));
	assert_null(run(fx, g));
	assert_string_equal(since(fx, &mark), want);
	g = base(fx);
	ob_add(a, g, ob_node(a, "Frobnicate", "f", "x", "y"));
	vi = ob_vinfo(a, "y", NOSHAPE);
	vi->type->value_case = ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE;
	vi->type->sequence_type =
		OB_NEW(a, Onnx__TypeProto__Sequence, ONNX__TYPE_PROTO__SEQUENCE__INIT);
	vi->type->sequence_type->elem_type = ob_vinfo(a, "e", DIMS(SYM, 5))->type;
	ob_value_info(a, g, vi);
	assert_null(run(fx, g));
	assert_string_equal(since(fx, &mark), want);
	g = base(fx);
	ob_add(a, g, ob_node(a, "Frobnicate", "f", "x", "y"));
	ob_value_info(a, g, ob_vinfo(a, "y", DIMS(SYM, (int64_t)1 << 40, 1 << 30)));
	assert_null(run(fx, g));
	assert_string_equal(since(fx, &mark),
			    "m.onnx: error: node 0 'f' (Frobnicate): the shape declared for output "
			    "'y' has more elements than 64 bits can count\n");
}

static void
unknown_operator_with_a_declared_shape_is_an_opaque_layer(void **state)
{
	Fx *fx = *state;
	Arena *a = &fx->arena;
	Onnx__GraphProto *g = base(fx);
	Graph *ir;

	ob_add(a, g, ob_node(a, "Frobnicate", "f", "x", "y"));
	ob_add(a, g, ob_node(a, "Frobnicate", "f2", "y", "z"));
	ob_value_info(a, g, ob_vinfo(a, "z", DIMS(SYM, 7)));
	ob_value_info(a, g, ob_vinfo(a, "y", DIMS(SYM, 5, 5)));
	ob_value_info(a, g, ob_vinfo(a, "y", DIMS(SYM, 6))); /* the first one counts */
	ir = run(fx, g);
	assert_non_null(ir);
	assert_string_equal(fx_diags(fx), "");
	assert_int_equal(fx_layer(ir, "f")->op, OP_OPAQUE);
	assert_string_equal(fx_shape(ir, "f"), "5x5");
	assert_string_equal(fx_shape(ir, "f2"), "7");
	assert_int_equal(ir->nunknown, 1);
	assert_string_equal(ir->unknown[0].op, "Frobnicate");
	assert_int_equal(ir->unknown[0].count, 2);
}

static void
strict_makes_an_unknown_operator_an_error(void **state)
{
	Fx *fx = *state;
	Arena *a = &fx->arena;
	Onnx__GraphProto *g = base(fx);
	OnnxOptions strict = { .strict = true };
	size_t mark = 0;

	ob_add(a, g, ob_node(a, "Relu", "r", "x", "r"));
	assert_non_null(run_opt(fx, ob_model(a, g), &strict));
	ob_add(a, g, ob_node(a, "Frobnicate", "f", "r", "y"));
	ob_value_info(a, g, ob_vinfo(a, "y", DIMS(SYM, 5)));
	assert_non_null(run_opt(fx, ob_model(a, g), NULL));
	assert_string_equal(since(fx, &mark), "");
	assert_null(run_opt(fx, ob_model(a, g), &strict));
	assert_string_equal(since(fx, &mark), "m.onnx: error: node 1 'f' (Frobnicate): unknown "
					      "operator (--strict)\n");
	/* an operator from another domain is an error either way */
	g = base(fx);
	ob_add(a, g, ob_node(a, "Relu", "r", "x", "y"))->domain = arena_strdup(a, "com.example");
	assert_null(run_opt(fx, ob_model(a, g), NULL));
	assert_string_equal(since(fx, &mark), "m.onnx: error: node 0 'r' (Relu): operator domain "
					      "'com.example' is not supported\n");
}

/* auto_pad is protobuf bytes: no NUL after it (ASan saw strcmp read past
 * "SAME_UPPER"), none at all when empty (a NULL pointer). */
static void
string_attributes_are_read_by_their_length(void **state)
{
	Fx *fx = *state;
	Arena *a = &fx->arena;
	static const char *const pads[] = { "SAME_UPPER", "VALID", "", "NOTSET" };
	static const char *const want[] = { "3x8x8", "3x6x6", "3x6x6", "3x6x6" };

	for (int i = 0; i < 4; i++) {
		Onnx__GraphProto *g = base(fx);
		Onnx__NodeProto *n = ob_add(a, g, ob_node(a, "MaxPool", "pool", "x", "y"));
		Graph *ir;
		ob_attr_ints(a, n, "kernel_shape", DIMS(3, 3));
		ob_attr_s(a, n, "auto_pad", pads[i]);
		ir = run(fx, g);
		assert_non_null(ir);
		assert_string_equal(fx_shape(ir, "pool"), want[i]);
	}
	assert_string_equal(fx_diags(fx), "");
}

static void
constant_times_activation_is_a_scale(void **state)
{
	Fx *fx = *state;
	Arena *a = &fx->arena;
	Onnx__GraphProto *g = base(fx);
	Graph *ir;

	ob_init(a, g, ob_tensor(a, "c", FLOAT, DIMS(1)));
	ob_add(a, g, ob_node(a, "Mul", "left", "c,x", "y"));
	ob_add(a, g, ob_node(a, "Mul", "right", "y,c", "z"));
	ob_add(a, g, ob_node(a, "Mul", "square", "z,z", "s"));
	ir = run(fx, g);
	assert_non_null(ir);
	assert_int_equal(fx_layer(ir, "left")->op, OP_SCALE);
	assert_int_equal(fx_layer(ir, "right")->op, OP_SCALE);
	assert_int_equal(fx_layer(ir, "square")->op, OP_MUL);
	assert_int_equal(fx_layer(ir, "square")->nin, 2);
}

/* Weights written as Constant nodes (as some exporters do) are parameters
 * as initializers are; a scalar Constant (a factor) is not. */
static void
weights_in_constant_nodes_are_parameters(void **state)
{
	Fx *fx = *state;
	Arena *a = &fx->arena;
	Onnx__GraphProto *g = base(fx);
	Onnx__TensorProto *half = ob_tensor(a, "h", FLOAT, 0, NULL);
	Graph *ir;

	ob_attr_t(a, ob_add(a, g, ob_node(a, "Constant", "w", "", "w")), "value",
		  ob_tensor(a, "w", FLOAT, DIMS(4, 3, 3, 3)));
	ob_attr_t(a, ob_add(a, g, ob_node(a, "Constant", "b", "", "b")), "value",
		  ob_tensor(a, "b", FLOAT, DIMS(4)));
	half->n_float_data = 1;
	half->float_data = (float[]){ 0.5f };
	ob_attr_t(a, ob_add(a, g, ob_node(a, "Constant", "h", "", "h")), "value", half);
	ob_add(a, g, ob_node(a, "Conv", "conv", "x,w,b", "c"));
	ob_add(a, g, ob_node(a, "Mul", "half", "c,h", "y"));
	assert_non_null(ir = run(fx, g));
	assert_string_equal(fx_diags(fx), "");
	assert_int_equal(ir->total.params, 4 * 3 * 3 * 3 + 4);
}

/* ---- constant folding --------------------------------------------------- */

static Onnx__GraphProto *
fold_graph(Fx *fx, const char *op, const char *in)
{
	Arena *a = &fx->arena;
	Onnx__GraphProto *g = base(fx);

	ob_add(a, g, ob_node(a, op, "k", in, "k"));
	ob_add(a, g, ob_node(a, "Relu", "r", "x", "y"));
	return g;
}

static void
errors_while_folding_fail_the_model(void **state)
{
	Fx *fx = *state;
	Arena *a = &fx->arena;
	Onnx__GraphProto *g = fold_graph(fx, "Gather", "d,i");

	ob_init(a, g, ob_ints(a, "d", DIMS(1, 2, 3)));
	ob_init(a, g, ob_ints(a, "i", DIMS(7)));
	assert_null(run(fx, g));
	assert_string_equal(fx_diags(fx), "m.onnx: error: node 0 'k' (Gather): index 7 is out of "
					  "range\n");
}

static int
extreme_fold_child(Fx *fx, const void *arg)
{
	Arena *a = &fx->arena;
	Onnx__GraphProto *g;
	Onnx__TensorProto *t;
	const int64_t t40 = (int64_t)1 << 40;

	(void)arg;
	/* Gather from an empty 2^40 x 1 x 0 constant: 2^40 empty rows */
	g = fold_graph(fx, "Gather", "d,i");
	t = ob_init(a, g, ob_tensor(a, "d", INT64, DIMS(t40, 1, 0)));
	ob_init(a, g, ob_ints(a, "i", DIMS(0)));
	ob_attr_i(a, g->node[0], "axis", 1);
	if (!run(fx, g))
		return 2;
	/* Slice with steps of +-(2^63 - 1) */
	g = fold_graph(fx, "Slice", "d,s,e,ax,st");
	ob_init(a, g, ob_ints(a, "d", DIMS(1, 2, 3)));
	ob_init(a, g, ob_ints(a, "s", DIMS(0)));
	ob_init(a, g, ob_ints(a, "e", DIMS(5)));
	ob_init(a, g, ob_ints(a, "ax", DIMS(0)));
	ob_init(a, g, ob_ints(a, "st", DIMS(INT64_MAX)));
	if (!run(fx, g))
		return 3;
	g->initializer[1]->int64_data[0] = 2;
	g->initializer[2]->int64_data[0] = -5;
	g->initializer[4]->int64_data[0] = -INT64_MAX;
	if (!run(fx, g))
		return 4;
	/* Range from -(2^63 - 1) to 2^63 - 1 */
	g = fold_graph(fx, "Range", "s,e,st");
	ob_init(a, g, ob_tensor(a, "s", INT64, 0, NULL))->n_int64_data = 1;
	g->initializer[0]->int64_data = (int64_t[]){ -INT64_MAX };
	ob_init(a, g, ob_tensor(a, "e", INT64, 0, NULL))->n_int64_data = 1;
	g->initializer[1]->int64_data = (int64_t[]){ INT64_MAX };
	ob_init(a, g, ob_tensor(a, "st", INT64, 0, NULL))->n_int64_data = 1;
	g->initializer[2]->int64_data = (int64_t[]){ (int64_t)1 << 62 };
	if (!run(fx, g))
		return 5;
	g->initializer[2]->int64_data = (int64_t[]){ -1 };
	g->initializer[0]->int64_data = (int64_t[]){ 1 };
	g->initializer[1]->int64_data = (int64_t[]){ -INT64_MAX };
	if (!run(fx, g))
		return 6;
	(void)t;
	return child_diags(fx, "");
}

/* These looped 2^40 times, or overflowed (UBSan), or divided by -1. */
static void
folding_extreme_values_neither_hangs_nor_overflows(void **state)
{
	assert_child_ok(in_child(*state, extreme_fold_child, NULL, 60, 0));
}

/* The graph outputs' shapes as --no-batch --print-outputs prints them
 * ("k [2,3]", "k ?" when not known), NULL when the model fails. */
static const char *
outputs_of(Fx *fx, Onnx__GraphProto *g)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	OnnxOptions opt = { .nobatch = true, .print_outputs = f };
	Graph *ir;
	const char *s;

	assert_non_null(f);
	ir = run_opt(fx, ob_model(&fx->arena, g), &opt);
	fclose(f);
	s = ir ? arena_strdup(&fx->arena, buf) : NULL;
	free(buf);
	return s;
}

/* One node k of op over constants; its output k is the graph's. */
static Onnx__GraphProto *
const_graph(Fx *fx, const char *op, const char *in)
{
	Arena *a = &fx->arena;
	Onnx__GraphProto *g = ob_graph(a);

	ob_input(a, g, ob_vinfo(a, "x", DIMS(2, 3))); /* read with --no-batch */
	if (op)
		ob_add(a, g, ob_node(a, op, "k", in, "k"));
	ob_add(a, g, ob_node(a, "Relu", "r", "x", "y"));
	ob_output(a, g, ob_vinfo(a, "k", NOSHAPE));
	return g;
}

/* An int64 initializer of rows x cols holding vals. */
static Onnx__TensorProto *
ints2(Fx *fx, Onnx__GraphProto *g, const char *name, int64_t rows, int64_t cols,
      const int64_t *vals)
{
	Onnx__TensorProto *t = ob_init(&fx->arena, g, ob_ints(&fx->arena, name,
							       (int)(rows * cols), vals));

	t->n_dims = 2;
	t->dims = arena_alloc(&fx->arena, 2 * sizeof *t->dims);
	t->dims[0] = rows, t->dims[1] = cols;
	return t;
}

/* Constants that are not what the operator needs: the values were read
 * or written past their array (a repeated axis in a permutation, concat
 * operands that differ off the axis), or computed with overflows (UBSan);
 * now exact, unknown, or an error naming the node. */
static void
folding_malformed_constants_is_exact_or_an_error(void **state)
{
	Fx *fx = *state;
	Arena *a = &fx->arena;
	static const int64_t v[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	const int64_t t40 = (int64_t)1 << 40;
	Onnx__GraphProto *g;
	Onnx__NodeProto *n;
	Graph *ir;
	size_t mark = 0;

	g = const_graph(fx, "Transpose", "d");
	ints2(fx, g, "d", 2, 3, v);
	ob_attr_ints(a, g->node[0], "perm", DIMS(0, 0));
	assert_null(outputs_of(fx, g));
	assert_string_equal(since(fx, &mark),
			    "m.onnx: error: node 0 'k' (Transpose): bad permutation\n");
	g->node[0]->attribute[0]->ints[0] = 1;
	assert_string_equal(outputs_of(fx, g), "k [3,2]\n");
	/* empty, with dimensions past int */
	g = const_graph(fx, "Transpose", "d");
	ob_init(a, g, ob_tensor(a, "d", INT64, DIMS(0, 3000000000, 3)));
	assert_string_equal(outputs_of(fx, g), "k [3,3000000000,0]\n");

	g = const_graph(fx, "Concat", "d,e");
	ints2(fx, g, "d", 2, 3, v);
	ints2(fx, g, "e", 2, 4, v);
	ob_attr_i(a, g->node[0], "axis", 0);
	assert_null(outputs_of(fx, g));
	assert_string_equal(since(fx, &mark), "m.onnx: error: node 0 'k' (Concat): input 2 has "
					      "dimension 4 on axis 1, input 1 3\n");
	g->node[0]->attribute[0]->i = 1;
	assert_string_equal(outputs_of(fx, g), "k [2,7]\n");

	/* a value read back in a Reshape target [N, 6, -1]: 6 mod (2^63 - 1) */
	g = base(fx);
	ob_init(a, g, ob_ints(a, "six", DIMS(6)));
	ob_init(a, g, ob_ints(a, "big", DIMS(INT64_MAX)));
	ob_init(a, g, ob_ints(a, "n", DIMS(0)));
	ob_init(a, g, ob_ints(a, "rest", DIMS(-1)));
	ob_add(a, g, ob_node(a, "Mod", "mod", "six,big", "t"));
	ob_attr_i(a, ob_add(a, g, ob_node(a, "Concat", "cat", "n,t,rest", "shape")), "axis", 0);
	ob_add(a, g, ob_node(a, "Reshape", "rs", "x,shape", "y"));
	assert_non_null(ir = run(fx, g));
	assert_string_equal(fx_shape(ir, "rs"), "6x32");
	/* -INT64_MIN and |INT64_MIN| overflow: unknown values */
	for (int i = 0; i < 2; i++) {
		g = const_graph(fx, i ? "Abs" : "Neg", "d");
		ob_init(a, g, ob_ints(a, "d", DIMS(INT64_MIN)));
		assert_string_equal(outputs_of(fx, g), "k [1]\n");
	}
	/* floats past int64_t (converting them is undefined) */
	g = const_graph(fx, NULL, NULL);
	ob_attr_t(a, ob_add(a, g, ob_node(a, "Constant", "c", "", "d")), "value",
		  ob_tensor(a, "v", FLOAT, 0, NULL));
	g->node[1]->attribute[0]->t->n_float_data = 1;
	g->node[1]->attribute[0]->t->float_data = (float[]){ 1e30f };
	ob_add(a, g, ob_node(a, "Floor", "k", "d", "k"));
	assert_string_equal(outputs_of(fx, g), "k []\n");

	/* Slice of an empty tensor backwards takes nothing */
	g = const_graph(fx, "Slice", "d,s,e,ax,st");
	ob_init(a, g, ob_ints(a, "d", 0, NULL));
	ob_init(a, g, ob_ints(a, "s", DIMS(-1)));
	ob_init(a, g, ob_ints(a, "e", DIMS(-10)));
	ob_init(a, g, ob_ints(a, "ax", DIMS(0)));
	ob_init(a, g, ob_ints(a, "st", DIMS(-1)));
	assert_string_equal(outputs_of(fx, g), "k [0]\n");
	/* 0 x 2^40 x 2^40 flattened from axis 1 has no shape in 64 bits */
	g = const_graph(fx, "Flatten", "d");
	ob_init(a, g, ob_tensor(a, "d", INT64, DIMS(0, t40, t40)));
	assert_string_equal(outputs_of(fx, g), "k ?\n");
	/* neither has [1, 2^40] expanded to [2^40, 1, 2^40] */
	g = const_graph(fx, "Expand", "d,s");
	ob_init(a, g, ob_tensor(a, "d", INT64, DIMS(1, t40)));
	ob_init(a, g, ob_ints(a, "s", DIMS(t40, 1, t40)));
	assert_string_equal(outputs_of(fx, g), "k ?\n");
	/* ScatterND into an empty tensor */
	g = const_graph(fx, "ScatterND", "d,i,u");
	ob_init(a, g, ob_tensor(a, "d", INT64, DIMS(0, t40, t40)));
	ints2(fx, g, "i", 1, 1, (int64_t[]){ 0 });
	ob_init(a, g, ob_tensor(a, "u", INT64, DIMS(0)));
	assert_string_equal(outputs_of(fx, g), "k [0,1099511627776,1099511627776]\n");
	assert_string_equal(since(fx, &mark), "");

	/* Resize by scales, with sizes given but not known (read as NULL) */
	g = base(fx);
	ob_add(a, g, ob_node(a, "Resize", "up", "x,,sc,sz", "y"));
	ob_init(a, g, ob_tensor(a, "sc", FLOAT, DIMS(4)));
	g->initializer[0]->n_float_data = 4;
	g->initializer[0]->float_data = (float[]){ 1, 1, 2, 2 };
	ob_init(a, g, ob_tensor(a, "sz", INT64, DIMS(4)));
	assert_non_null(ir = run(fx, g));
	assert_string_equal(fx_shape(ir, "up"), "3x16x16");
	g->initializer[0]->float_data = (float[]){ 1, 1, NAN, 1e30f };
	assert_null(run(fx, g));
	assert_string_equal(since(fx, &mark), "m.onnx: error: node 0 'up' (Resize): output 3x0x0 "
					      "has a dimension out of range (1 to 2^40)\n");

	/* rules that gave up without a word */
	g = base(fx);
	ob_init(a, g, ob_ints(a, "d", DIMS(1)));
	ob_add(a, g, ob_node(a, "Frobnicate", "f", "d", "i"));
	ob_attr_i(a, ob_add(a, g, ob_node(a, "Gather", "g", "x,i", "y")), "axis", 1);
	assert_null(run(fx, g));
	assert_string_equal(since(fx, &mark), "m.onnx: error: node 1 'g' (Gather): the shape of "
					      "the indices is not known\n");
	g = base(fx);
	n = ob_add(a, g, ob_node(a, "Split", "s", "x", "s0"));
	for (int i = 1; i < 65; i++)
		OB_PUSH(a, n->output, n->n_output, arena_printf(a, "s%d", i));
	assert_null(run(fx, g));
	assert_string_equal(since(fx, &mark), "m.onnx: error: node 0 's' (Split): 65 outputs "
					      "are not supported (at most 64)\n");
}

/* ---- size --------------------------------------------------------------- */

/* Stripping large data before unpacking: a 1 MiB raw_data (an initializer,
 * a Constant, a subgraph's initializer) and 100 KB of float_data written
 * element by element are left out; a small shape tensor keeps its values. */
static void
large_tensor_data_is_dropped_before_unpacking(void **state)
{
	Fx *fx = *state;
	Arena *a = &fx->arena;
	Onnx__GraphProto *g = base(fx), *sub = ob_graph(a);
	Onnx__TensorProto *w = ob_tensor(a, "w", FLOAT, DIMS(512, 512));
	Onnx__TensorProto *k = ob_tensor(a, "v", FLOAT, DIMS(512, 512));
	Onnx__NodeProto *n;
	Onnx__ModelProto *m, *back;
	uint8_t *buf, *small;
	size_t len, slen;
	const char *err;

	w->has_raw_data = k->has_raw_data = true;
	w->raw_data.len = k->raw_data.len = 512 * 512 * 4;
	w->raw_data.data = k->raw_data.data = arena_alloc(a, w->raw_data.len);
	ob_init(a, g, w);
	ob_init(a, g, ob_ints(a, "shape", DIMS(0, -1)));
	ob_attr_t(a, ob_add(a, g, ob_node(a, "Constant", "k", "", "kv")), "value", k);
	ob_init(a, sub, w);
	n = ob_add(a, g, ob_node(a, "If", "if", "c", "z"));
	ob_attr_g(a, n, "then_branch", sub);
	m = ob_model(a, g);
	len = ob_pack(a, m, &buf);
	assert_true(len > 3 * 1024 * 1024);
	small = onnx_strip(buf, len, &slen, &err);
	assert_non_null(small);
	assert_true(slen < 4096);
	back = onnx__model_proto__unpack(NULL, slen, small);
	free(small);
	assert_non_null(back);
	assert_int_equal(back->graph->n_initializer, 2);
	assert_int_equal(back->graph->initializer[0]->n_dims, 2);
	assert_false(back->graph->initializer[0]->has_raw_data);
	assert_int_equal(back->graph->initializer[1]->n_int64_data, 2);
	assert_int_equal(back->graph->initializer[1]->int64_data[1], -1);
	assert_false(back->graph->node[0]->attribute[0]->t->has_raw_data);
	assert_false(back->graph->node[1]->attribute[0]->g->initializer[0]->has_raw_data);
	onnx__model_proto__free_unpacked(back, NULL);

	/* float_data, not packed: 25,000 fields of key 0x25 and 4 bytes */
	{
		size_t nf = 25000, tl = 2 + 3 + 5 * nf, at = 0;
		uint8_t *raw = arena_alloc(a, tl + 16);
		raw[at++] = 0x08, raw[at++] = 0x01; /* dims: 1 */
		raw[at++] = 0x10, raw[at++] = 0x01; /* data_type: FLOAT */
		raw[at++] = 0x42, raw[at++] = 0x01, raw[at++] = 'f'; /* name */
		for (size_t i = 0; i < nf; i++, at += 5)
			raw[at] = 0x25;
		tl = at;
		buf = arena_alloc(a, tl + 16);
		len = 0;
		buf[len++] = 0x3a; /* graph */
		buf[len++] = (uint8_t)((tl + 4) | 0x80);
		buf[len++] = (uint8_t)(((tl + 4) >> 7) | 0x80);
		buf[len++] = (uint8_t)((tl + 4) >> 14);
		buf[len++] = 0x2a; /* initializer */
		buf[len++] = (uint8_t)(tl | 0x80);
		buf[len++] = (uint8_t)((tl >> 7) | 0x80);
		buf[len++] = (uint8_t)(tl >> 14);
		memcpy(buf + len, raw, tl);
		len += tl;
		small = onnx_strip(buf, len, &slen, &err);
		assert_non_null(small);
		assert_int_equal(slen, 1 + 1 + 1 + 1 + 7);
		back = onnx__model_proto__unpack(NULL, slen, small);
		free(small);
		assert_non_null(back);
		assert_int_equal(back->graph->initializer[0]->n_float_data, 0);
		assert_string_equal(back->graph->initializer[0]->name, "f");
		onnx__model_proto__free_unpacked(back, NULL);
	}
}

typedef struct Huge {
	const char *what;
	long n;
} Huge;

static int
huge_child(Fx *fx, const void *arg)
{
	const Huge *h = arg;
	Arena *a = &fx->arena;
	Onnx__GraphProto *g = base(fx);
	Onnx__NodeProto *n;
	Graph *ir;
	char prev[32] = "x", next[32];

	if (strcmp(h->what, "layers") == 0) { /* a chain of relus */
		for (long i = 0; i < h->n; i++) {
			snprintf(next, sizeof next, "t%ld", i);
			ob_add(a, g, ob_node(a, "Relu", NULL, prev, next));
			memcpy(prev, next, sizeof prev);
		}
		ir = run(fx, g);
		if (h->n > MAX_LAYERS)
			return ir ? 2
				  : child_diags(
					    fx,
					    "m.onnx: error: model has more than 1048576 layers\n");
		return !ir ? 2 : ir->nlayer != h->n ? 4 : child_diags(fx, "");
	}
	if (strcmp(h->what, "constants") == 0) { /* folded, never layers */
		Onnx__AttributeProto *at;
		n = ob_add(a, g, ob_node(a, "Constant", NULL, "", "c0"));
		ob_attr_i(a, n, "value_int", 7);
		at = n->attribute[0];
		for (long i = 1; i < h->n; i++) {
			snprintf(next, sizeof next, "c%ld", i);
			n = ob_add(a, g, ob_node(a, "Constant", NULL, "", next));
			OB_PUSH(a, n->attribute, n->n_attribute, at);
		}
		ob_add(a, g, ob_node(a, "Relu", "r", "x", "y"));
		return !(ir = run(fx, g)) ? 2 : ir->nlayer != 1 ? 4 : child_diags(fx, "");
	}
	if (strcmp(h->what, "attributes") == 0) { /* on one node, none known */
		n = ob_add(a, g, ob_node(a, "Relu", "r", "x", "y"));
		for (long i = 0; i < h->n; i++)
			ob_attr_i(a, n, "junk", i);
		return !(ir = run(fx, g)) ? 2 : child_diags(fx, "");
	}
	if (strcmp(h->what, "inputs") == 0) { /* of one node */
		n = ob_add(a, g, ob_node(a, "Concat", "cat", "", "y"));
		for (long i = 0; i < h->n; i++)
			OB_PUSH(a, n->input, n->n_input, g->input[0]->name);
		ob_attr_i(a, n, "axis", 1);
		return run(fx, g)
			       ? 2
			       : child_diags(fx,
					     "m.onnx: error: node 0 'cat' (Concat): more than 256 "
					     "inputs are not supported\n");
	}
	/* unknown ops: h->n of them, each its own op_type, and 10 value_info
	 * entries for each, the one that counts last */
	for (long i = 0; i < h->n; i++) {
		char op[32];
		snprintf(op, sizeof op, "Custom%ld", i);
		snprintf(next, sizeof next, "u%ld", i);
		ob_add(a, g, ob_node(a, op, NULL, prev, next));
		memcpy(prev, next, sizeof prev);
	}
	for (int k = 0; k < 10; k++)
		for (long i = 0; i < h->n; i++) {
			if (k < 9)
				snprintf(next, sizeof next, "v%ld_%d", i, k);
			else
				snprintf(next, sizeof next, "u%ld", i);
			ob_value_info(a, g, ob_vinfo(a, next, DIMS(SYM, 3, 8, 8)));
		}
	ir = run(fx, g);
	return !ir ? 2 : ir->nunknown != h->n ? 4 : child_diags(fx, "");
}

/* Repeated fields a million long: done in seconds, with a result or a
 * limit's diagnostic.  (A million distinct unknown operators with value_info
 * took hours when both were searched linearly per node.) */
static void
huge_repeated_fields_finish_quickly(void **state)
{
	static const Huge cases[] = {
		{ "layers", 1000000 },    { "layers", MAX_LAYERS + 1 }, { "constants", 1000000 },
		{ "attributes", 1000000 }, { "inputs", 1000000 },       { "unknown", 100000 },
	};

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct timespec t0, t1;
		int st;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		st = in_child(*state, huge_child, &cases[i], 120, 0);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (st)
			fail_msg("%s x %ld: child status %d", cases[i].what, cases[i].n, st);
		print_message("# %s x %ld: built, written and read in %.1f s\n", cases[i].what,
			      cases[i].n, (double)(t1.tv_sec - t0.tv_sec) +
						  (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	}
}

/* ---- decoders ----------------------------------------------------------- */

/* A float matrix r x c whose raw data holds f(i, j) (its transpose with
 * tr: c x r holding f(j, i)). */
static Onnx__TensorProto *
matrix(Arena *a, const char *name, int64_t r, int64_t c, bool tr, float (*f)(int64_t, int64_t))
{
	Onnx__TensorProto *t = ob_tensor(a, name, FLOAT, 2, tr ? (int64_t[]){ c, r }
							       : (int64_t[]){ r, c });
	float *v = arena_alloc(a, (size_t)(r * c) * sizeof *v);

	for (int64_t i = 0; i < r; i++)
		for (int64_t j = 0; j < c; j++)
			v[tr ? j * r + i : i * c + j] = f(i, j);
	t->has_raw_data = true;
	t->raw_data.len = (size_t)(r * c) * sizeof *v;
	t->raw_data.data = (uint8_t *)v;
	return t;
}

static float
drawn(int64_t i, int64_t j)
{
	return (float)sin((double)(i * 7919 + j * 104729 + 1));
}

static float
drawn_too(int64_t i, int64_t j)
{
	return (float)cos((double)(i * 31 + j * 17 + 3));
}

static float
zero(int64_t i, int64_t j)
{
	return 0 * (float)(i + j);
}

/* ids: N x t token ids (int64); the graph reads them. */
static Onnx__GraphProto *
ids_graph(Fx *fx, int64_t t)
{
	Arena *a = &fx->arena;
	Onnx__GraphProto *g = ob_graph(a);
	Onnx__ValueInfoProto *vi = ob_vinfo(a, "ids", DIMS(SYM, t));

	vi->type->tensor_type->elem_type = INT64;
	ob_input(a, g, vi);
	return g;
}

/* torch.onnx.export folds the W^T of a GPT's output layer, tied to its
 * token embedding, into an initializer of its own: the same elements,
 * transposed, which count once (the note names both); an output layer of
 * its own values counts, small (values read) or large (past pbstrip's
 * 64 KiB, fingerprinted while its data is dropped); matrices of zeros
 * tie nothing. */
static void
a_tied_tables_copy_counts_once(void **state)
{
	Fx *fx = *state;
	Arena *a = &fx->arena;
	static const int64_t sizes[2][2] = { { 16, 8 }, { 400, 64 } }; /* 512 B, 100 KiB */
	size_t mark = 0;

	for (int big = 0; big < 2; big++)
		for (int k = 0; k < 3; k++) {
			int64_t v = sizes[big][0], h = sizes[big][1];
			Onnx__GraphProto *g = ids_graph(fx, 4);
			Graph *ir;
			ob_init(a, g, matrix(a, "wte", v, h, false, k == 2 ? zero : drawn));
			ob_init(a, g, matrix(a, "onnx::MatMul_9", v, h, true,
					     k == 0 ? drawn : k == 1 ? drawn_too : zero));
			ob_add(a, g, ob_node(a, "Gather", "/wte/Gather", "wte,ids", "e"));
			ob_add(a, g, ob_node(a, "MatMul", "/lm_head/MatMul", "e,onnx::MatMul_9",
					     "y"));
			since(fx, &mark);
			assert_non_null(ir = run(fx, g));
			assert_int_equal(ir->total.params, (k == 0 ? 1 : 2) * v * h);
			assert_int_equal(ir->total.buffers, 0);
			assert_int_equal(fx_layer(ir, "/lm_head/MatMul")->op, OP_FC);
			assert_string_equal(since(fx, &mark),
					    k ? "" : "m.onnx: note: initializer 'onnx::MatMul_9' "
					    "holds the elements of 'wte' (a tied weight the "
					    "exporter copied, as W^T of a shared embedding "
					    "table): counted once\n");
		}
}

/* Parameters and buffers (docs/counting.md): a tensor a layer reads as
 * it is, or through views, is trained (a weight, a position embedding
 * added); one it reads only derived -- compared into a mask, positions
 * times inv_freq through a cosine -- or that holds an infinity is a
 * buffer; one read derived first and as it is later is a parameter after
 * all.  Buffers are counted once, on their first reader, and in bytes at
 * the bytes per item. */
static void
buffers_are_what_no_layer_reads_as_a_weight(void **state)
{
	Fx *fx = *state;
	Arena *a = &fx->arena;
	Onnx__GraphProto *g = ob_graph(a);
	Onnx__TensorProto *ninf = ob_tensor(a, "ninf", FLOAT, DIMS(4, 4));
	float *mv = arena_alloc(a, 16 * sizeof *mv);
	Graph *ir;

	for (int i = 0; i < 16; i++)
		mv[i] = i % 4 > i / 4 ? -INFINITY : 0;
	ninf->n_float_data = 16;
	ninf->float_data = mv;
	ob_input(a, g, ob_vinfo(a, "x", DIMS(SYM, 4, 4)));
	ob_init(a, g, ob_tensor(a, "w", FLOAT, DIMS(4, 4)));
	ob_init(a, g, ob_tensor(a, "pos", FLOAT, DIMS(1, 4, 4)));
	ob_init(a, g, ob_tensor(a, "bias", FLOAT, DIMS(1, 4, 4)));
	ob_init(a, g, ob_tensor(a, "inv_freq", FLOAT, DIMS(4)));
	ob_init(a, g, ob_tensor(a, "both", FLOAT, DIMS(4)));
	ob_init(a, g, ninf);
	ob_init(a, g, ob_ints(a, "zero", 1, (int64_t[]){ 0 }));
	ob_init(a, g, ob_ints(a, "four", 1, (int64_t[]){ 4 }));
	ob_init(a, g, ob_ints(a, "one", 1, (int64_t[]){ 1 }));
	ob_add(a, g, ob_node(a, "Range", "range", "zero,four,one", "ti"));
	ob_attr_i(a, ob_add(a, g, ob_node(a, "Cast", "cast", "ti", "t")), "to", FLOAT);
	ob_add(a, g, ob_node(a, "MatMul", "fc", "x,w", "h"));             /* w: 16 */
	ob_add(a, g, ob_node(a, "Add", "pos_add", "h,pos", "p"));         /* pos: 16 */
	ob_add(a, g, ob_node(a, "Equal", "eq", "bias,zero", "m"));
	ob_add(a, g, ob_node(a, "Where", "masked", "m,p,ninf", "q"));     /* bias, ninf */
	ob_attr_s(a, ob_add(a, g, ob_node(a, "Einsum", "freqs", "t,inv_freq", "f")), "equation",
		  "i,j->ij");
	ob_add(a, g, ob_node(a, "Cos", "cos", "f", "c"));
	ob_add(a, g, ob_node(a, "Mul", "rot", "q,c", "r"));               /* inv_freq */
	ob_add(a, g, ob_node(a, "Mul", "both2", "both,both", "b2"));
	ob_add(a, g, ob_node(a, "Add", "derived", "r,b2", "s"));          /* both, derived */
	ob_add(a, g, ob_node(a, "Add", "direct", "s,both", "y"));         /* both: trained */
	ob_output(a, g, ob_vinfo(a, "y", DIMS(SYM, 4, 4)));
	assert_non_null(ir = run(fx, g));
	assert_string_equal(fx_diags(fx), "");
	assert_int_equal(fx_layer(ir, "fc")->cost.params, 16);
	assert_int_equal(fx_layer(ir, "pos_add")->cost.params, 16);
	assert_int_equal(fx_layer(ir, "masked")->cost.buffers, 16 + 16);
	assert_int_equal(fx_layer(ir, "masked")->cost.params, 0);
	assert_int_equal(fx_layer(ir, "rot")->cost.buffers, 4);
	assert_int_equal(fx_layer(ir, "derived")->cost.buffers, 0);
	assert_int_equal(fx_layer(ir, "direct")->cost.params, 4);
	assert_int_equal(ir->total.params, 16 + 16 + 4);
	assert_int_equal(ir->total.buffers, 16 + 16 + 4);
	{ /* at a precision, the buffers' bytes are their elements' */
		Analysis an;
		Settings set = settings_default;
		set.prec = PREC_FP16;
		assert_true(analysis_setup(&an, fx->eng, &set, ir, fx_abci(fx)));
		assert_int_equal(model_bytes(&an, ir).buffers, 2 * (16 + 16 + 4));
	}
}

/* Token ids: the integer [N, s] input that indexes an embedding table is
 * the model's sequence, of length s; an attention mask beside it is not;
 * without a table, the first integer [N, s] input; a float one never. */
static void
token_ids_are_the_sequence(void **state)
{
	Fx *fx = *state;
	Arena *a = &fx->arena;

	for (int k = 0; k < 3; k++) {
		Onnx__GraphProto *g = ob_graph(a);
		Onnx__ValueInfoProto *mask = ob_vinfo(a, "mask", DIMS(SYM, 6));
		Onnx__ValueInfoProto *ids = ob_vinfo(a, "ids", DIMS(SYM, 6));
		Graph *ir;
		ids->type->tensor_type->elem_type = mask->type->tensor_type->elem_type = INT64;
		if (k == 2)
			ids->type->tensor_type->elem_type = FLOAT;
		ob_input(a, g, mask);
		ob_input(a, g, ids);
		ob_init(a, g, ob_tensor(a, "table", FLOAT, DIMS(100, 8)));
		if (k == 0) {
			ob_add(a, g, ob_node(a, "Reshape", "view", "ids,shape", "v"));
			ob_init(a, g, ob_ints(a, "shape", 2, (int64_t[]){ -1, 6 }));
			ob_add(a, g, ob_node(a, "Gather", "emb", "table,v", "e"));
		} else {
			ob_add(a, g, ob_node(a, "Relu", "emb", "ids", "e"));
		}
		ob_add(a, g, ob_node(a, "Cast", "c", "mask", "y"));
		assert_non_null(ir = run(fx, g));
		assert_int_equal(ir->seq_len, 6);
		assert_int_equal(ir->tensor[ir->input[0]].seq, k != 0);
		assert_int_equal(ir->tensor[ir->input[1]].seq, k == 0);
	}
}

/* Einsum as torch.einsum runs it: the attention scores a batched product
 * (b's operand permuted), a constant operand all contracted or its own a
 * fully connected layer, one operand a permutation or a sum; the batch
 * stays out of the product, a sum over it is refused. */
static void
einsum_lowers_as_torch_runs_it(void **state)
{
	Fx *fx = *state;
	Arena *a = &fx->arena;
	static const struct {
		const char *eq, *kinds, *shape;
		int64_t macs, params;
	} cases[] = {
		{ "bhid,bhjd->bhij", "transpose matmul", "4x6x6", 4 * 6 * 6 * 8, 0 },
		{ "bhid,bd->bhi", "reshape reshape matmul reshape", "4x6", 4 * 6 * 8, 0 },
		{ "bhid,de->bhie", "fc", "4x6x5", 4 * 6 * 8 * 5, 8 * 5 },
		{ "bhid->bdih", "transpose", "8x6x4", 0, 0 },
		{ "bhid->bh", "reducesum", "4", 0, 0 },
		{ "bhid->bhid", "identity", "4x6x8", 0, 0 },
	};
	size_t mark = 0;

	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		Onnx__GraphProto *g = ob_graph(a);
		bool weight = strstr(cases[c].eq, "de") != NULL;
		bool two = strchr(cases[c].eq, ',') != NULL;
		char kinds[128] = "";
		Graph *ir;
		ob_input(a, g, ob_vinfo(a, "x", DIMS(SYM, 4, 6, 8)));
		if (weight)
			ob_init(a, g, ob_tensor(a, "w", FLOAT, DIMS(8, 5)));
		else if (two)
			ob_input(a, g, ob_vinfo(a, "z", DIMS(SYM, 8)));
		ob_attr_s(a, ob_add(a, g, ob_node(a, "Einsum", "e", two ? (weight ? "x,w" : "x,z")
									 : "x", "y")),
			  "equation", cases[c].eq);
		if (!strcmp(cases[c].eq, "bhid,bhjd->bhij"))
			g->node[0]->input[1] = g->node[0]->input[0];
		assert_non_null(ir = run(fx, g));
		for (int i = 0; i < ir->nlayer; i++)
			snprintf(kinds + strlen(kinds), sizeof kinds - strlen(kinds), "%s%s",
				 i ? " " : "", op_name(ir->layer[i].op));
		assert_string_equal(kinds, cases[c].kinds);
		assert_string_equal(fx_shape(ir, ir->layer[ir->nlayer - 1].name), cases[c].shape);
		assert_string_equal(ir->tensor[ir->layer[ir->nlayer - 1].out[0]].name, "y");
		assert_int_equal(ir->total.macs, cases[c].macs);
		assert_int_equal(ir->total.params, cases[c].params);
	}
	{
		Onnx__GraphProto *g = ob_graph(a);
		ob_input(a, g, ob_vinfo(a, "x", DIMS(SYM, 4)));
		ob_attr_s(a, ob_add(a, g, ob_node(a, "Einsum", "e", "x", "y")), "equation",
			  "bi->i");
		since(fx, &mark);
		assert_null(run(fx, g));
		assert_string_equal(since(fx, &mark),
				    "m.onnx: error: node 0 'e' (Einsum): summing or contracting "
				    "over the batch axis is not supported: the counts are per "
				    "sample\n");
	}
}

/* Opset 23's Attention: its definition's layers, which graph_attention
 * finds -- grouped heads (2 key/value heads for 4 queries), causal --
 * with the products' MACs of four heads, a mask an input; a key/value
 * cache is refused. */
static void
opset23_attention_is_an_attention(void **state)
{
	Fx *fx = *state;
	Arena *a = &fx->arena;
	size_t mark = 0;

	for (int k = 0; k < 3; k++) {
		Onnx__GraphProto *g = ob_graph(a);
		Onnx__ModelProto *m;
		Onnx__NodeProto *n;
		Graph *ir;
		bool three = k == 0;
		if (three) {
			ob_input(a, g, ob_vinfo(a, "q", DIMS(SYM, 5, 32)));
			ob_input(a, g, ob_vinfo(a, "kv", DIMS(SYM, 5, 16)));
		} else {
			ob_input(a, g, ob_vinfo(a, "q", DIMS(SYM, 4, 5, 8)));
			ob_input(a, g, ob_vinfo(a, "kv", DIMS(SYM, 4, 5, 8)));
		}
		ob_input(a, g, ob_vinfo(a, "mask", DIMS(SYM, 1, 5, 5)));
		n = ob_add(a, g, ob_node(a, "Attention", "att", k == 2 ? "q,kv,kv,mask,kv,kv"
							    : k ? "q,kv,kv,mask" : "q,kv,kv", "y"));
		if (three) {
			ob_attr_i(a, n, "q_num_heads", 4);
			ob_attr_i(a, n, "kv_num_heads", 2);
			ob_attr_i(a, n, "is_causal", 1);
		}
		m = ob_model(a, g);
		m->opset_import[0]->version = 23;
		since(fx, &mark);
		ir = run_opt(fx, m, NULL);
		if (k == 2) {
			assert_null(ir);
			assert_string_equal(since(fx, &mark),
					    "m.onnx: error: node 0 'att' (Attention): a key/value "
					    "cache (past_key, past_value) is not supported: it is "
					    "inference, not training\n");
			continue;
		}
		assert_non_null(ir);
		assert_int_equal(graph_attention(ir, NULL), 1);
		assert_int_equal(ir->total.macs, 2 * 4 * 5 * 5 * 8);
		assert_string_equal(fx_shape(ir, ir->layer[ir->nlayer - 1].name),
				    three ? "5x32" : "4x5x8");
		assert_string_equal(ir->tensor[ir->layer[ir->nlayer - 1].out[0]].name, "y");
	}
}

/* Opset 23's RMSNormalization: a norm with a scale and no shift, 4 FLOPs
 * an element forward; the ODL kind of the same name. */
static void
rmsnormalization_has_a_scale_only(void **state)
{
	Fx *fx = *state;
	Arena *a = &fx->arena;
	Onnx__GraphProto *g = ob_graph(a);
	Onnx__ModelProto *m;
	Graph *ir;

	ob_input(a, g, ob_vinfo(a, "x", DIMS(SYM, 4, 8)));
	ob_init(a, g, ob_tensor(a, "scale", FLOAT, DIMS(8)));
	ob_add(a, g, ob_node(a, "RMSNormalization", "norm", "x,scale", "y"));
	m = ob_model(a, g);
	m->opset_import[0]->version = 23;
	assert_non_null(ir = run_opt(fx, m, NULL));
	assert_int_equal(fx_layer(ir, "norm")->op, OP_RMSNORM);
	assert_int_equal(ir->total.params, 8);
	assert_int_equal(ir->total.flops_fwd, 4 * 32);
	assert_int_equal(fx_layer(ir, "norm")->cost.act_elems, 4); /* a rstd a row */
}

/* CumSum, Tile and GatherElements on activations: their shapes, and the
 * batch axis left alone. */
static void
running_sums_tiles_and_gathers_keep_the_batch(void **state)
{
	Fx *fx = *state;
	Arena *a = &fx->arena;
	Onnx__GraphProto *g = ob_graph(a);
	Onnx__ValueInfoProto *ix = ob_vinfo(a, "ix", DIMS(SYM, 2, 3));
	Graph *ir;
	size_t mark = 0;

	ix->type->tensor_type->elem_type = INT64;
	ob_input(a, g, ob_vinfo(a, "x", DIMS(SYM, 2, 3)));
	ob_input(a, g, ix);
	ob_init(a, g, ob_ints(a, "ax", 1, (int64_t[]){ -1 }));
	ob_init(a, g, ob_ints(a, "reps", 3, (int64_t[]){ 1, 2, 3 }));
	ob_add(a, g, ob_node(a, "CumSum", "cs", "x,ax", "c"));
	ob_add(a, g, ob_node(a, "Tile", "tile", "c,reps", "t"));
	ob_attr_i(a, ob_add(a, g, ob_node(a, "GatherElements", "ge", "x,ix", "y")), "axis", -1);
	assert_non_null(ir = run(fx, g));
	assert_string_equal(fx_shape(ir, "cs"), "2x3");
	assert_string_equal(fx_shape(ir, "tile"), "4x9");
	assert_string_equal(fx_shape(ir, "ge"), "2x3");
	assert_int_equal(fx_layer(ir, "cs")->cost.flops_fwd, 6);
	g->initializer[1] = ob_ints(a, "reps", 3, (int64_t[]){ 2, 1, 1 });
	since(fx, &mark);
	assert_null(run(fx, g));
	assert_string_equal(since(fx, &mark), "m.onnx: error: node 1 'tile' (Tile): tiling the "
		"batch axis (axis 0) is not supported: it changes the number of samples, and the "
		"counts are per sample\n");
}

/* Masks and rotary positions built in forward fold: a triu of -inf
 * (ConstantOfShape, Trilu) added to the scores, cos and sin of positions
 * times inv_freq, each a constant of known shape and values. */
static void
masks_and_positions_built_in_forward_fold(void **state)
{
	Fx *fx = *state;
	Arena *a = &fx->arena;
	Onnx__GraphProto *g = ob_graph(a);
	Onnx__TensorProto *fill = ob_tensor(a, "v", FLOAT, DIMS(1));
	Graph *ir;

	fill->n_float_data = 1;
	fill->float_data = (float[]){ -INFINITY };
	ob_input(a, g, ob_vinfo(a, "x", DIMS(SYM, 4, 4)));
	ob_init(a, g, ob_ints(a, "tt", 2, (int64_t[]){ 4, 4 }));
	ob_init(a, g, ob_ints(a, "one", 1, (int64_t[]){ 1 }));
	ob_attr_t(a, ob_add(a, g, ob_node(a, "ConstantOfShape", "full", "tt", "f")), "value", fill);
	ob_add(a, g, ob_node(a, "Trilu", "triu", "f,one", "mask"));
	ob_add(a, g, ob_node(a, "Add", "masked", "x,mask", "s"));
	ob_add(a, g, ob_node(a, "Sin", "sin", "s", "y"));
	assert_non_null(ir = run(fx, g));
	assert_int_equal(ir->nlayer, 2);
	assert_int_equal(fx_layer(ir, "masked")->op, OP_SCALE);
	assert_string_equal(fx_shape(ir, "masked"), "4x4");
	assert_int_equal(ir->total.params + ir->total.buffers, 0);
}

/* ---- the operator table ------------------------------------------------- */

/* Sorted by name for bsearch, each row found by its name, other names
 * (case matters, no prefixes) not at all. */
static void
operator_table_is_sorted_and_each_row_is_found(void **state)
{
	static const char *const unknown[] = { "", "A", "abs", "relu", "Relu ", "Conv2",
					       "Reduce", "ReduceFoo", "Zz", "~" };
	size_t n;
	const OnnxOp *ops = onnx_ops(&n);

	assert_true(n > 100);
	for (size_t i = 0; i < n; i++) {
		if (i && strcmp(ops[i - 1].name, ops[i].name) >= 0)
			fail_msg("row %zu '%s' is not after '%s'", i, ops[i].name, ops[i - 1].name);
		assert_ptr_equal(onnx_op(ops[i].name), &ops[i]);
	}
	for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++)
		assert_null(onnx_op(unknown[i]));
}

/* Whether rule r reads its row's kind. */
static bool
reads_kind(LowerRule *r)
{
	return r == lower_conv || r == lower_pool || r == lower_channels ||
	       r == lower_elementwise || r == lower_unary || r == lower_softmax ||
	       r == lower_reduce || r == lower_layernorm || r == lower_cumsum || r == lower_tile ||
	       r == lower_gather_elements;
}

/* What the graph walk relies on, row by row. */
static void
operator_table_rows_are_consistent(void **state)
{
	size_t n;
	const OnnxOp *ops = onnx_ops(&n);

	for (size_t i = 0; i < n; i++) {
		const OnnxOp *r = &ops[i];
		bool coded = r->fold == fold_binary || r->fold == fold_unary ||
			     r->fold == fold_same_shape;
		bool ok =
			(!(r->flags & OPF_ANY_FIRST) || r->lower) &&
			(!(r->flags & OPF_PAIR) || (r->flags & OPF_ANY_FIRST)) &&
			(!(r->flags & OPF_DATA_SHAPED) || !r->lower) &&
			(!(r->flags & (OPF_SHAPE_ONLY | OPF_CONSTANT)) || (!r->lower && r->fold)) &&
			(!(r->flags & OPF_TO_BATCH) || r->kind == OP_EXPAND ||
			 r->kind == OP_CONST) &&
			(r->code != 0) == coded &&
			(r->lower && reads_kind(r->lower)
				 ? r->kind != OP_OPAQUE
				 : r->kind == OP_OPAQUE || (r->flags & OPF_TO_BATCH));
		if (!ok)
			fail_msg("row '%s' is not consistent", r->name);
	}
}

/* The walk by the table's flags: a constant first input only where the
 * row allows one (Add, not Conv nor an operator of no row); MatMul
 * without its second input is an operator with no rule; an output shaped
 * by data is refused; Shape of an activation folds. */
static void
the_table_decides_how_a_node_is_read(void **state)
{
	Fx *fx = *state;
	Arena *a = &fx->arena;
	Onnx__GraphProto *g;
	Graph *ir;
	size_t mark = 0;

	g = base(fx);
	ob_init(a, g, ob_tensor(a, "w", FLOAT, DIMS(3, 1, 1)));
	ob_add(a, g, ob_node(a, "Add", "add", "w,x", "y"));
	assert_non_null(ir = run(fx, g));
	assert_int_equal(fx_layer(ir, "add")->op, OP_SCALE);
	for (int k = 0; k < 2; k++) {
		g = base(fx);
		ob_init(a, g, ob_tensor(a, "w", FLOAT, DIMS(4, 3, 3, 3)));
		ob_add(a, g, ob_node(a, k ? "Frobnicate" : "Conv", "c", "w,x", "y"));
		assert_null(run(fx, g));
		assert_string_equal(since(fx, &mark),
				    k ? "m.onnx: error: node 0 'c' (Frobnicate): a "
					"constant first input is not supported\n"
				      : "m.onnx: error: node 0 'c' (Conv): a constant "
					"first input is not supported\n");
	}
	g = base(fx);
	ob_add(a, g, ob_node(a, "MatMul", "mm", "x", "y"));
	ob_value_info(a, g, ob_vinfo(a, "y", DIMS(SYM, 5)));
	assert_non_null(ir = run(fx, g));
	assert_int_equal(fx_layer(ir, "mm")->op, OP_OPAQUE);
	assert_int_equal(ir->nunknown, 1);
	assert_string_equal(ir->unknown[0].op, "MatMul");
	g = base(fx);
	ob_add(a, g, ob_node(a, "NonZero", "nz", "x", "y"));
	assert_null(run(fx, g));
	assert_string_equal(since(fx, &mark), "m.onnx: error: node 0 'nz' (NonZero): an output "
					      "shape computed from data is not supported\n");
	g = base(fx);
	ob_add(a, g, ob_node(a, "Shape", "s", "x", "s"));
	ob_add(a, g, ob_node(a, "Reshape", "rs", "x,s", "y"));
	assert_non_null(ir = run(fx, g));
	assert_string_equal(fx_names(fx, ir), "rs");
	assert_string_equal(fx_shape(ir, "rs"), "3x8x8");
	assert_string_equal(since(fx, &mark), "");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		FX_TEST(model_built_in_memory_is_analysed),
		FX_TEST(empty_file_is_rejected),
		FX_TEST(missing_file_and_directory_are_rejected),
		FX_TEST(truncated_file_is_rejected_at_every_cut),
		FX_TEST(random_bytes_are_rejected_cleanly),
		FX_TEST(protobuf_that_is_not_a_model_is_rejected),
		FX_TEST(deeply_nested_types_are_rejected_not_a_stack_overflow),
		FX_TEST(model_without_graph_is_rejected),
		FX_TEST(graph_without_input_is_rejected),
		FX_TEST(graph_with_a_cycle_is_rejected),
		FX_TEST(input_nobody_produces_is_rejected),
		FX_TEST(duplicate_output_names_are_rejected),
		FX_TEST(subgraphs_are_rejected),
		FX_TEST(negative_dims_are_rejected),
		FX_TEST(absurd_dims_are_rejected),
		FX_TEST(dims_whose_product_overflows_are_rejected),
		FX_TEST(missing_required_attribute_or_input_is_reported),
		FX_TEST(kernel_larger_than_padded_input_is_rejected),
		FX_TEST(window_attributes_need_one_value_per_spatial_dimension),
		FX_TEST(gemm_whose_weight_does_not_match_is_rejected),
		FX_TEST(huge_weight_declared_without_data_is_analysed_without_allocating_it),
		FX_TEST(unknown_operator_without_a_declared_shape_is_rejected),
		FX_TEST(unknown_operator_with_a_declared_shape_is_an_opaque_layer),
		FX_TEST(strict_makes_an_unknown_operator_an_error),
		FX_TEST(string_attributes_are_read_by_their_length),
		FX_TEST(constant_times_activation_is_a_scale),
		FX_TEST(weights_in_constant_nodes_are_parameters),
		FX_TEST(errors_while_folding_fail_the_model),
		FX_TEST(folding_extreme_values_neither_hangs_nor_overflows),
		FX_TEST(folding_malformed_constants_is_exact_or_an_error),
		FX_TEST(large_tensor_data_is_dropped_before_unpacking),
		FX_TEST(merged_initializers_count_once_per_module),
		FX_TEST(huge_repeated_fields_finish_quickly),
		FX_TEST(operator_table_is_sorted_and_each_row_is_found),
		FX_TEST(a_tied_tables_copy_counts_once),
		FX_TEST(buffers_are_what_no_layer_reads_as_a_weight),
		FX_TEST(token_ids_are_the_sequence),
		FX_TEST(einsum_lowers_as_torch_runs_it),
		FX_TEST(opset23_attention_is_an_attention),
		FX_TEST(rmsnormalization_has_a_scale_only),
		FX_TEST(running_sums_tiles_and_gathers_keep_the_batch),
		FX_TEST(masks_and_positions_built_in_forward_fold),
		FX_TEST(operator_table_rows_are_consistent),
		FX_TEST(the_table_decides_how_a_node_is_read),
	};
	const char *only = getenv("TEST_FILTER");

	if (only && *only)
		cmocka_set_test_filter(only);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
