/* namegen.c -- writes, for tests/names.sh, an ONNX model whose names
 * carry a given string NAME (newlines, quotes, `$(...)`, invalid UTF-8):
 *
 *     input NAME (N x 64) -> /embed/Gemm
 *       -> /layers.0/{attn/..., fc/Gemm, act/Relu} (attn: a self-attention
 *          without parameters, so that Megatron's plan takes the model)
 *       -> /NAME/Gemm (a unit between the blocks, so Megatron's plan says
 *          why there is no layout, quoting it) -> /layers.1, /layers.2
 *       -> /head/Gemm -> /tail/NAME, an operator of type NAME (unknown,
 *          its output declared)
 *
 * so NAME reaches the layer, module and stage names, the input's name and
 * the unknown operators.  NAME must not hold '/' (a scope separator).
 *
 *     namegen NAME FILE */
#include <stdio.h>
#include <stdlib.h>

#include "tests/onnxbuild.h"

enum { D = 64, CLASSES = 10 };

static void
gemm(Arena *a, Onnx__GraphProto *g, const char *name, const char *x, const char *y, int64_t in,
     int64_t out)
{
	const char *w = arena_printf(a, "w%zu", g->n_node);
	const char *b = arena_printf(a, "bias%zu", g->n_node);
	Onnx__NodeProto *n = ob_node(a, "Gemm", name, "x,w,b", y);

	n->input[0] = arena_strdup(a, x); /* x may hold a comma */
	n->input[1] = (char *)w;
	n->input[2] = (char *)b;
	ob_init(a, g, ob_tensor(a, w, FLOAT, DIMS(out, in)));
	ob_init(a, g, ob_tensor(a, b, FLOAT, DIMS(out)));
	ob_attr_i(a, n, "transB", 1);
	ob_add(a, g, n);
}

static void
block(Arena *a, Onnx__GraphProto *g, int i, const char *x, const char *y)
{
	const char *t = arena_printf(a, "t%d", i), *q = arena_printf(a, "q%d", i);

	ob_attention(a, g, arena_printf(a, "/layers.%d/attn", i), x, q, 8, D / 8);
	gemm(a, g, arena_printf(a, "/layers.%d/fc/Gemm", i), q, t, D, D);
	ob_add(a, g, ob_node(a, "Relu", arena_printf(a, "/layers.%d/act/Relu", i), t, y));
}

int
main(int argc, char **argv)
{
	Arena a;
	Onnx__GraphProto *g;
	uint8_t *buf;
	size_t len;
	const char *name = argc == 3 ? argv[1] : NULL;
	int status = 0;

	if (!name || !*name || strchr(name, '/')) {
		fprintf(stderr, "usage: namegen NAME FILE (NAME without '/')\n");
		return 2;
	}
	arena_init(&a);
	g = ob_graph(&a);
	g->name = (char *)name;
	ob_input(&a, g, ob_vinfo(&a, name, DIMS(SYM, D)));
	gemm(&a, g, "/embed/Gemm", name, "e", D, D);
	block(&a, g, 0, "e", "b0");
	gemm(&a, g, arena_printf(&a, "/%s/Gemm", name), "b0", "m", D, D);
	block(&a, g, 1, "m", "b1");
	block(&a, g, 2, "b1", "b2");
	gemm(&a, g, "/head/Gemm", "b2", "h", D, CLASSES);
	ob_add(&a, g, ob_node(&a, name, arena_printf(&a, "/tail/%s", name), "h", "y"));
	ob_value_info(&a, g, ob_vinfo(&a, "y", DIMS(SYM, CLASSES)));
	ob_output(&a, g, ob_vinfo(&a, "y", DIMS(SYM, CLASSES)));
	len = ob_pack(&a, ob_model(&a, g), &buf);
	status = ob_write(argv[2], buf, len);
	arena_free(&a);
	return status;
}
