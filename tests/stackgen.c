/* stackgen.c -- writes, for tests/plans.sh, an ONNX model named as
 * PyTorch's exporter names a stack of alike blocks:
 *
 *     class Net(nn.Module):            # "/body/embed/Gemm", ...
 *         body = Body()                # embed; layers = ModuleList of
 *                                      # Block (never called itself);
 *                                      # out
 *         head = nn.Linear
 *     class Block(nn.Module):          # "/body/layers.3/fc1/Gemm"
 *         attn: a self-attention without parameters (the vector as
 *               8 tokens of 16; softmax(x x^T) x), so that the model is
 *               a transformer to Megatron's plan
 *         fc1, fc2 = nn.Linear; act = nn.ReLU, called twice ("act_1")
 *
 * so the modules are body.embed, body.layers.0 .. body.layers.N-1,
 * body.out and head.
 *
 *     stackgen BLOCKS FILE [WIDE]
 *
 * With WIDE, block WIDE's hidden layer is twice as wide: the blocks
 * differ, and Megatron's plan has no layout. */
#include <stdio.h>
#include <stdlib.h>

#include "tests/onnxbuild.h"

enum { IN = 64, D = 128, H = 256, CLASSES = 10 };

static void
gemm(Arena *a, Onnx__GraphProto *g, const char *name, const char *x, const char *y, int64_t in,
     int64_t out)
{
	const char *w = arena_printf(a, "%s.weight", name), *b = arena_printf(a, "%s.bias", name);
	Onnx__NodeProto *n = ob_node(a, "Gemm", name, arena_printf(a, "%s,%s,%s", x, w, b), y);

	ob_init(a, g, ob_tensor(a, w, FLOAT, DIMS(out, in)));
	ob_init(a, g, ob_tensor(a, b, FLOAT, DIMS(out)));
	ob_attr_i(a, n, "transB", 1);
	ob_add(a, g, n);
}

int
main(int argc, char **argv)
{
	Arena a;
	Onnx__GraphProto *g;
	uint8_t *buf;
	size_t len;
	int blocks = argc == 3 || argc == 4 ? atoi(argv[1]) : 0, status = 0;
	int wide = argc == 4 ? atoi(argv[3]) : -1;
	const char *x = "x";

	if (blocks < 1 || blocks > 1000) {
		fprintf(stderr, "usage: stackgen BLOCKS FILE [WIDE]\n");
		return 2;
	}
	arena_init(&a);
	g = ob_graph(&a);
	g->name = "stack";
	ob_input(&a, g, ob_vinfo(&a, "x", DIMS(SYM, IN)));
	gemm(&a, g, "/body/embed/Gemm", x, "e", IN, D);
	x = "e";
	for (int i = 0; i < blocks; i++) {
		const char *p = arena_printf(&a, "/body/layers.%d", i);
		const char *t = arena_printf(&a, "t%d_", i);
		int64_t h = i == wide ? 2 * H : H;
		ob_attention(&a, g, arena_printf(&a, "%s/attn", p), x, arena_printf(&a, "%sq", t),
			     8, D / 8);
		gemm(&a, g, arena_printf(&a, "%s/fc1/Gemm", p), arena_printf(&a, "%sq", t),
		     arena_printf(&a, "%sa", t), D, h);
		ob_add(&a, g, ob_node(&a, "Relu", arena_printf(&a, "%s/act/Relu", p),
				      arena_printf(&a, "%sa", t), arena_printf(&a, "%sb", t)));
		gemm(&a, g, arena_printf(&a, "%s/fc2/Gemm", p), arena_printf(&a, "%sb", t),
		     arena_printf(&a, "%sc", t), h, D);
		ob_add(&a, g,
		       ob_node(&a, "Add", arena_printf(&a, "%s/Add", p),
			       arena_printf(&a, "%sc,%s", t, x), arena_printf(&a, "%sd", t)));
		ob_add(&a, g, ob_node(&a, "Relu", arena_printf(&a, "%s/act_1/Relu", p),
				      arena_printf(&a, "%sd", t), arena_printf(&a, "%se", t)));
		x = arena_printf(&a, "%se", t);
	}
	gemm(&a, g, "/body/out/Gemm", x, "o", D, D);
	gemm(&a, g, "/head/Gemm", "o", "y", D, CLASSES);
	ob_output(&a, g, ob_vinfo(&a, "y", DIMS(SYM, CLASSES)));
	len = ob_pack(&a, ob_model(&a, g), &buf);
	status = ob_write(argv[2], buf, len);
	arena_free(&a);
	return status;
}
