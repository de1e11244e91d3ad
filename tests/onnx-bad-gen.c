/* onnx-bad-gen.c -- write one of the ONNX models of tests/onnx-bad.sh.
 *
 *     onnx-bad-gen NAME FILE
 *
 * The models are built in memory with protobuf-c's generated API
 * (tests/onnxbuild.h, shared with tests/test_onnx.c), so the CLI cases
 * need no committed binary file.  `onnx-bad-gen -l` lists the names.
 * Exit status: 0 written, 1 a write error, 2 usage or an unknown NAME. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tests/onnxbuild.h"

typedef Onnx__GraphProto *Maker(Arena *a);

/* x: N x 3 x 8 x 8 */
static Onnx__GraphProto *
base(Arena *a)
{
	Onnx__GraphProto *g = ob_graph(a);

	ob_input(a, g, ob_vinfo(a, "x", DIMS(SYM, 3, 8, 8)));
	return g;
}

static Onnx__GraphProto *
cycle(Arena *a)
{
	Onnx__GraphProto *g = base(a);

	ob_add(a, g, ob_node(a, "Add", "add", "x,b", "a"));
	ob_add(a, g, ob_node(a, "Relu", "relu", "a", "b"));
	return g;
}

static Onnx__GraphProto *
undefined(Arena *a)
{
	Onnx__GraphProto *g = base(a);

	ob_add(a, g, ob_node(a, "Relu", "relu", "x", "r"));
	ob_add(a, g, ob_node(a, "Add", "sum", "r,ghost", "y"));
	return g;
}

static Onnx__GraphProto *
duplicate(Arena *a)
{
	Onnx__GraphProto *g = base(a);

	ob_add(a, g, ob_node(a, "Relu", "r1", "x", "y"));
	ob_add(a, g, ob_node(a, "Sigmoid", "r2", "x", "y"));
	return g;
}

static Onnx__GraphProto *
subgraph(Arena *a)
{
	Onnx__GraphProto *g = base(a), *then = ob_graph(a);
	Onnx__NodeProto *n;

	ob_add(a, then, ob_node(a, "Relu", "inner", "x", "z"));
	ob_output(a, then, ob_vinfo(a, "z", NOSHAPE));
	ob_init(a, g, ob_tensor(a, "c", BOOLEAN, 0, NULL));
	n = ob_add(a, g, ob_node(a, "If", "if", "c", "y"));
	ob_attr_g(a, n, "then_branch", then);
	ob_attr_g(a, n, "else_branch", then);
	return g;
}

static Onnx__GraphProto *
unknown(Arena *a)
{
	Onnx__GraphProto *g = base(a);

	ob_add(a, g, ob_node(a, "Frobnicate", "frob", "x", "y"));
	return g;
}

/* an unknown operator whose output the file declares: fine unless --strict */
static Onnx__GraphProto *
unknown_declared(Arena *a)
{
	Onnx__GraphProto *g = unknown(a);

	ob_value_info(a, g, ob_vinfo(a, "y", DIMS(SYM, 5)));
	return g;
}

static Onnx__GraphProto *
negative_dim(Arena *a)
{
	Onnx__GraphProto *g = ob_graph(a);

	ob_input(a, g, ob_vinfo(a, "x", DIMS(SYM, 3, -5, 8)));
	ob_add(a, g, ob_node(a, "Relu", "relu", "x", "y"));
	return g;
}

static Onnx__GraphProto *
overflow(Arena *a)
{
	Onnx__GraphProto *g = ob_graph(a);

	ob_input(a, g, ob_vinfo(a, "x", DIMS(SYM, (int64_t)1 << 40, (int64_t)1 << 40, 8)));
	ob_add(a, g, ob_node(a, "Relu", "relu", "x", "y"));
	return g;
}

/* a fully connected layer with a 1 GiB weight declared by its dims only */
static Onnx__GraphProto *
huge_weight(Arena *a)
{
	Onnx__GraphProto *g = ob_graph(a);
	Onnx__NodeProto *n;

	ob_input(a, g, ob_vinfo(a, "x", DIMS(SYM, 1024)));
	ob_init(a, g, ob_tensor(a, "w", FLOAT, DIMS(262144, 1024)));
	n = ob_add(a, g, ob_node(a, "Gemm", "fc", "x,w", "y"));
	ob_attr_i(a, n, "transB", 1);
	return g;
}

static Onnx__GraphProto *
gather_index(Arena *a)
{
	Onnx__GraphProto *g = base(a);

	ob_init(a, g, ob_ints(a, "d", DIMS(1, 2, 3)));
	ob_init(a, g, ob_ints(a, "i", DIMS(7)));
	ob_add(a, g, ob_node(a, "Gather", "gather", "d,i", "k"));
	ob_add(a, g, ob_node(a, "Relu", "relu", "x", "y"));
	return g;
}

/* Valid models whose node names repeat (ONNX allows it): the later
 * layers are renamed (tests/finite.sh).  Two nodes named alike: */
static Onnx__GraphProto *
names_twice(Arena *a)
{
	Onnx__GraphProto *g = base(a);

	ob_add(a, g, ob_node(a, "Relu", "r", "x", "a"));
	ob_add(a, g, ob_node(a, "Relu", "r", "a", "y"));
	return g;
}

/* a node named as oraclec names the nameless node 1 */
static Onnx__GraphProto *
names_generated(Arena *a)
{
	Onnx__GraphProto *g = base(a);

	ob_add(a, g, ob_node(a, "Relu", "Relu_1", "x", "a"));
	ob_add(a, g, ob_node(a, "Relu", NULL, "a", "y"));
	return g;
}

/* r three times, and a node named as the first renaming would be; the
 * second node of a LayerNormalization named as its mean's layer */
static Onnx__GraphProto *
names_many(Arena *a)
{
	Onnx__GraphProto *g = base(a);

	ob_add(a, g, ob_node(a, "Relu", "r", "x", "a"));
	ob_add(a, g, ob_node(a, "Relu", "r", "a", "b"));
	ob_add(a, g, ob_node(a, "Relu", "r~2", "b", "c"));
	ob_add(a, g, ob_node(a, "Relu", "r", "c", "d"));
	ob_add(a, g, ob_node(a, "LayerNormalization", "ln", "d", "e,mean"));
	ob_add(a, g, ob_node(a, "Relu", "ln:1", "e", "y"));
	return g;
}

/* Graphs that take samples from the batch or make new ones: the counts
 * per sample would be wrong, so each is an error (oraclec(1): an
 * operator that mixes samples).  x[0:1] of N samples: */
static Onnx__GraphProto *
slice_batch(Arena *a)
{
	Onnx__GraphProto *g = base(a);

	ob_init(a, g, ob_ints(a, "s", 1, (int64_t[]){ 0 }));
	ob_init(a, g, ob_ints(a, "e", 1, (int64_t[]){ 1 }));
	ob_init(a, g, ob_ints(a, "ax", 1, (int64_t[]){ 0 }));
	ob_add(a, g, ob_node(a, "Slice", "first", "x,s,e,ax", "y"));
	return g;
}

/* x[-1:] of N samples, the last */
static Onnx__GraphProto *
slice_batch_last(Arena *a)
{
	Onnx__GraphProto *g = base(a);

	ob_init(a, g, ob_ints(a, "s", 1, (int64_t[]){ -1 }));
	ob_init(a, g, ob_ints(a, "e", 1, (int64_t[]){ INT64_MAX }));
	ob_init(a, g, ob_ints(a, "ax", 1, (int64_t[]){ 0 }));
	ob_add(a, g, ob_node(a, "Slice", "last", "x,s,e,ax", "y"));
	return g;
}

/* x[0:2] of a file's fixed batch of 4 */
static Onnx__GraphProto *
slice_batch_fixed(Arena *a)
{
	Onnx__GraphProto *g = ob_graph(a);

	ob_input(a, g, ob_vinfo(a, "x", DIMS(4, 3, 8, 8)));
	ob_init(a, g, ob_ints(a, "s", 1, (int64_t[]){ 0 }));
	ob_init(a, g, ob_ints(a, "e", 1, (int64_t[]){ 2 }));
	ob_init(a, g, ob_ints(a, "ax", 1, (int64_t[]){ 0 }));
	ob_add(a, g, ob_node(a, "Slice", "half", "x,s,e,ax", "y"));
	return g;
}

/* x[0:] along the batch and [2:6] along the width: the whole batch */
static Onnx__GraphProto *
slice_batch_whole(Arena *a)
{
	Onnx__GraphProto *g = base(a);

	ob_init(a, g, ob_ints(a, "s", 2, (int64_t[]){ 0, 2 }));
	ob_init(a, g, ob_ints(a, "e", 2, (int64_t[]){ INT64_MAX, 6 }));
	ob_init(a, g, ob_ints(a, "ax", 2, (int64_t[]){ 0, 3 }));
	ob_add(a, g, ob_node(a, "Slice", "crop", "x,s,e,ax", "y"));
	return g;
}

/* N samples expanded to 4 */
static Onnx__GraphProto *
expand_batch(Arena *a)
{
	Onnx__GraphProto *g = base(a);

	ob_init(a, g, ob_ints(a, "t", 4, (int64_t[]){ 4, 3, 8, 8 }));
	ob_add(a, g, ob_node(a, "Expand", "grow", "x,t", "y"));
	return g;
}

/* a file's one sample expanded to 8 */
static Onnx__GraphProto *
expand_batch_fixed(Arena *a)
{
	Onnx__GraphProto *g = ob_graph(a);

	ob_input(a, g, ob_vinfo(a, "x", DIMS(1, 3, 8, 8)));
	ob_init(a, g, ob_ints(a, "t", 4, (int64_t[]){ 8, 3, 8, 8 }));
	ob_add(a, g, ob_node(a, "Expand", "grow", "x,t", "y"));
	return g;
}

/* Expand by 1 on the batch axis (broadcast: the batch stays) */
static Onnx__GraphProto *
expand_batch_kept(Arena *a)
{
	Onnx__GraphProto *g = ob_graph(a);

	ob_input(a, g, ob_vinfo(a, "x", DIMS(SYM, 3, 1, 8)));
	ob_init(a, g, ob_ints(a, "t", 4, (int64_t[]){ 1, 3, 8, 8 }));
	ob_add(a, g, ob_node(a, "Expand", "wide", "x,t", "y"));
	return g;
}

/* a file's batch of 4 reshaped to 2 rows of two samples each */
static Onnx__GraphProto *
reshape_batch_fixed(Arena *a)
{
	Onnx__GraphProto *g = ob_graph(a);

	ob_input(a, g, ob_vinfo(a, "x", DIMS(4, 3, 8, 8)));
	ob_init(a, g, ob_ints(a, "t", 2, (int64_t[]){ 2, 384 }));
	ob_add(a, g, ob_node(a, "Reshape", "pairs", "x,t", "y"));
	return g;
}

/* N samples reshaped to 2 rows */
static Onnx__GraphProto *
reshape_batch(Arena *a)
{
	Onnx__GraphProto *g = base(a);

	ob_init(a, g, ob_ints(a, "t", 2, (int64_t[]){ 2, -1 }));
	ob_add(a, g, ob_node(a, "Reshape", "rows", "x,t", "y"));
	return g;
}

static Onnx__GraphProto *
no_graph(Arena *a)
{
	(void)a;
	return NULL;
}

static const struct {
	const char *name;
	Maker *make; /* NULL: nested */
} models[] = {
	{ "cycle", cycle },
	{ "undefined", undefined },
	{ "duplicate", duplicate },
	{ "subgraph", subgraph },
	{ "unknown", unknown },
	{ "unknown-declared", unknown_declared },
	{ "negative-dim", negative_dim },
	{ "overflow", overflow },
	{ "huge-weight", huge_weight },
	{ "gather-index", gather_index },
	{ "no-graph", no_graph },
	{ "slice-batch", slice_batch },
	{ "slice-batch-last", slice_batch_last },
	{ "slice-batch-fixed", slice_batch_fixed },
	{ "slice-batch-whole", slice_batch_whole },
	{ "expand-batch", expand_batch },
	{ "expand-batch-fixed", expand_batch_fixed },
	{ "expand-batch-kept", expand_batch_kept },
	{ "reshape-batch", reshape_batch },
	{ "reshape-batch-fixed", reshape_batch_fixed },
	{ "names-twice", names_twice },
	{ "names-generated", names_generated },
	{ "names-many", names_many },
	{ "nested", NULL }, /* 200,000 nested sequence types */
};

int
main(int argc, char **argv)
{
	Arena a;
	uint8_t *buf = NULL;
	size_t len = 0, i, n = sizeof models / sizeof models[0];
	int status = 0;

	if (argc == 2 && strcmp(argv[1], "-l") == 0) {
		for (i = 0; i < n; i++)
			puts(models[i].name);
		return fflush(stdout) ? 1 : 0;
	}
	if (argc != 3) {
		fprintf(stderr, "usage: onnx-bad-gen NAME FILE\n"
				"(onnx-bad-gen -l lists the names)\n");
		return 2;
	}
	for (i = 0; i < n && strcmp(models[i].name, argv[1]) != 0; i++)
		;
	if (i == n) {
		fprintf(stderr, "onnx-bad-gen: unknown model '%s'\n", argv[1]);
		return 2;
	}
	arena_init(&a);
	if (models[i].make)
		len = ob_pack(&a, ob_model(&a, models[i].make(&a)), &buf);
	else
		len = ob_nested_types(&a, 200000, &buf);
	status = ob_write(argv[2], buf, len);
	arena_free(&a);
	return status;
}
