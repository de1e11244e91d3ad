/* onnxgen.c -- write a large ONNX model with embedded weights, for
 * bench/bigmodel.sh.
 *
 *     onnxgen [-c] SIZE_MIB FILE
 *
 * writes to FILE a model "big" of about SIZE_MIB MiB (at least 90) whose
 * every weight is stored in the file:
 *
 *     x: N x 256 x 14 x 14
 *     4 x (Conv 256->256, 3x3, pad 1, bias; Relu)     raw_data, 2.25 MiB each
 *     GlobalAveragePool, Flatten, Gemm 256->4096      raw_data, 4 MiB
 *     K x (Gemm 4096->4096, bias; Relu)               raw_data, 64 MiB each
 *     Gemm 4096->1000                                 float_data (packed), 15.6 MiB
 *
 * with K chosen to reach SIZE_MIB.  With -c, the 4096x4096 weights are
 * Constant nodes instead of initializers, as some exporters write them
 * (TensorFlow's, PyTorch's without constant folding).  The message is streamed to the file by
 * protobuf-c's pack_to_buffer, and every big tensor points at one shared
 * buffer of pseudo-random floats, so the generator holds about 80 MiB
 * whatever the size.  Exit status: 0, 1 on a write error, 2 on bad usage. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/onnx/onnx.pb-c.h"

enum { W = 4096, C = 256, HW = 14, CLASSES = 1000 };

typedef struct FileBuf {
	ProtobufCBuffer base;
	FILE *f;
	int failed;
} FileBuf;

static void
append(ProtobufCBuffer *b, size_t len, const uint8_t *data)
{
	FileBuf *fb = (FileBuf *)b;

	if (!fb->failed && fwrite(data, 1, len, fb->f) != len)
		fb->failed = errno ? errno : EIO;
}

static void *
xmalloc(size_t n)
{
	void *p = calloc(1, n ? n : 1);

	if (!p) {
		fprintf(stderr, "onnxgen: out of memory\n");
		exit(1);
	}
	return p;
}

static char *
name(const char *fmt, int i)
{
	char *s = xmalloc(64);

	snprintf(s, 64, fmt, i);
	return s;
}

/* The shared weight data: floats in [-0.05, 0.05) from a fixed seed. */
static float *
weights(size_t n)
{
	float *w = xmalloc(n * sizeof *w);
	unsigned long x = 12345;

	for (size_t i = 0; i < n; i++) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		w[i] = (float)((double)(x >> 40) / (double)(1UL << 24) - 0.5) / 10;
	}
	return w;
}

static Onnx__TensorProto *
tensor(const char *nm, int rank, const int64_t *dims, const float *data)
{
	Onnx__TensorProto *t = xmalloc(sizeof *t);
	size_t n = 1;

	onnx__tensor_proto__init(t);
	t->name = (char *)nm;
	t->has_data_type = 1;
	t->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
	t->n_dims = rank;
	t->dims = xmalloc(rank * sizeof *dims);
	memcpy(t->dims, dims, rank * sizeof *dims);
	for (int i = 0; i < rank; i++)
		n *= dims[i];
	t->has_raw_data = 1;
	t->raw_data.len = n * sizeof(float);
	t->raw_data.data = (uint8_t *)data;
	return t;
}

typedef struct Model {
	Onnx__GraphProto g;
	Onnx__NodeProto **node;
	Onnx__TensorProto **init;
	size_t nnode, ninit, cap;
} Model;

static Onnx__NodeProto *
node(Model *m, const char *op, char *nm, int nin, char **in, char *out)
{
	Onnx__NodeProto *n = xmalloc(sizeof *n);

	onnx__node_proto__init(n);
	n->op_type = (char *)op;
	n->name = nm;
	n->n_input = nin;
	n->input = xmalloc(nin * sizeof *in);
	memcpy(n->input, in, nin * sizeof *in);
	n->n_output = 1;
	n->output = xmalloc(sizeof *n->output);
	n->output[0] = out;
	m->node[m->nnode++] = n;
	return n;
}

static void
ints_attr(Onnx__NodeProto *n, const char *nm, int cnt, int64_t v)
{
	Onnx__AttributeProto *a = xmalloc(sizeof *a);

	onnx__attribute_proto__init(a);
	a->name = (char *)nm;
	a->has_type = 1;
	a->type = cnt ? ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS
		      : ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
	if (cnt) {
		a->n_ints = cnt;
		a->ints = xmalloc(cnt * sizeof *a->ints);
		for (int i = 0; i < cnt; i++)
			a->ints[i] = v;
	} else {
		a->has_i = 1;
		a->i = v;
	}
	n->attribute = realloc(n->attribute, (n->n_attribute + 1) * sizeof *n->attribute);
	n->attribute[n->n_attribute++] = a;
}

int
main(int argc, char **argv)
{
	Model m = { .g = ONNX__GRAPH_PROTO__INIT };
	Onnx__ModelProto model = ONNX__MODEL_PROTO__INIT;
	Onnx__OperatorSetIdProto os = ONNX__OPERATOR_SET_ID_PROTO__INIT, *osp = &os;
	FileBuf fb = { .base = { append } };
	char *end, *cur = "x";
	long mib, k;
	float *data;
	Onnx__TensorProto *fc;
	int constants = argc > 1 && strcmp(argv[1], "-c") == 0;

	argv += constants, argc -= constants;
	if (argc != 3 || (errno = 0, mib = strtol(argv[1], &end, 10), errno || *end) || mib < 90 ||
	    mib > 8000) {
		fprintf(stderr, "usage: onnxgen [-c] SIZE_MIB FILE   (SIZE_MIB from 90 to 8000)\n");
		return 2;
	}
	/* 4 convs (9 MiB), the first Gemm (4 MiB), the last (15.6 MiB) */
	k = (mib - 29 + 32) / 64;
	if (k < 1)
		k = 1;
	m.cap = 64 + 4 * k;
	m.node = xmalloc(m.cap * sizeof *m.node);
	m.init = xmalloc(m.cap * sizeof *m.init);
	data = weights((size_t)W * W);

	/* input */
	{
		Onnx__ValueInfoProto *vi = xmalloc(sizeof *vi);
		Onnx__TypeProto *tp = xmalloc(sizeof *tp);
		Onnx__TypeProto__Tensor *tt = xmalloc(sizeof *tt);
		Onnx__TensorShapeProto *sp = xmalloc(sizeof *sp);
		int64_t d[4] = { 0, C, HW, HW };
		onnx__value_info_proto__init(vi);
		onnx__type_proto__init(tp);
		onnx__type_proto__tensor__init(tt);
		onnx__tensor_shape_proto__init(sp);
		vi->name = "x";
		vi->type = tp;
		tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
		tp->tensor_type = tt;
		tt->has_elem_type = 1;
		tt->elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
		tt->shape = sp;
		sp->n_dim = 4;
		sp->dim = xmalloc(4 * sizeof *sp->dim);
		for (int i = 0; i < 4; i++) {
			Onnx__TensorShapeProto__Dimension *dm = xmalloc(sizeof *dm);
			onnx__tensor_shape_proto__dimension__init(dm);
			dm->value_case = i ? ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE
					   : ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
			if (i)
				dm->dim_value = d[i];
			else
				dm->dim_param = "N";
			sp->dim[i] = dm;
		}
		m.g.n_input = 1;
		m.g.input = xmalloc(sizeof *m.g.input);
		m.g.input[0] = vi;
	}
	for (int i = 0; i < 4; i++) {
		char *w = name("conv%d.weight", i), *b = name("conv%d.bias", i);
		char *in[3] = { cur, w, b };
		Onnx__NodeProto *n;
		m.init[m.ninit++] = tensor(w, 4, (int64_t[]){ C, C, 3, 3 }, data);
		m.init[m.ninit++] = tensor(b, 1, (int64_t[]){ C }, data);
		n = node(&m, "Conv", name("conv%d", i), 3, in, name("c%d", i));
		ints_attr(n, "kernel_shape", 2, 3);
		ints_attr(n, "pads", 4, 1);
		node(&m, "Relu", name("relu%d", i), 1, &n->output[0], name("r%d", i));
		cur = m.node[m.nnode - 1]->output[0];
	}
	node(&m, "GlobalAveragePool", "gap", 1, &cur, "gap");
	node(&m, "Flatten", "flatten", 1, (char *[]){ "gap" }, "flat");
	cur = "flat";
	for (long i = 0; i <= k; i++) {
		char *w = name("fc%d.weight", (int)i), *b = name("fc%d.bias", (int)i);
		char *in[3] = { cur, w, b };
		Onnx__NodeProto *n;
		Onnx__TensorProto *t = tensor(w, 2, (int64_t[]){ W, i ? W : C }, data);
		if (constants && i) { /* a Constant node whose value is the weight */
			Onnx__AttributeProto *a = xmalloc(sizeof *a);
			onnx__attribute_proto__init(a);
			a->name = "value";
			a->has_type = 1;
			a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
			a->t = t;
			n = node(&m, "Constant", name("fc%d.const", (int)i), 0, NULL, w);
			n->n_attribute = 1;
			n->attribute = xmalloc(sizeof *n->attribute);
			n->attribute[0] = a;
		} else {
			m.init[m.ninit++] = t;
		}
		m.init[m.ninit++] = tensor(b, 1, (int64_t[]){ W }, data);
		n = node(&m, "Gemm", name("fc%d", (int)i), 3, in, name("f%d", (int)i));
		ints_attr(n, "transB", 0, 1);
		node(&m, "Relu", name("fc%d.relu", (int)i), 1, &n->output[0], name("fr%d", (int)i));
		cur = m.node[m.nnode - 1]->output[0];
	}
	/* the classifier's weight as packed float_data */
	fc = tensor("head.weight", 2, (int64_t[]){ CLASSES, W }, data);
	fc->has_raw_data = 0;
	fc->n_float_data = (size_t)CLASSES * W;
	fc->float_data = data;
	m.init[m.ninit++] = fc;
	node(&m, "Gemm", "head", 2, (char *[]){ cur, "head.weight" }, "logits");
	ints_attr(m.node[m.nnode - 1], "transB", 0, 1);

	m.g.name = "big";
	m.g.n_node = m.nnode;
	m.g.node = m.node;
	m.g.n_initializer = m.ninit;
	m.g.initializer = m.init;
	model.has_ir_version = 1;
	model.ir_version = 8;
	model.producer_name = "oraclec bench/onnxgen";
	model.graph = &m.g;
	os.has_version = 1;
	os.version = 13;
	model.n_opset_import = 1;
	model.opset_import = &osp;

	if (!(fb.f = fopen(argv[2], "wb"))) {
		perror(argv[2]);
		return 1;
	}
	onnx__model_proto__pack_to_buffer(&model, &fb.base);
	if (fclose(fb.f) != 0 && !fb.failed)
		fb.failed = errno ? errno : EIO;
	if (fb.failed) {
		fprintf(stderr, "onnxgen: %s: %s\n", argv[2], strerror(fb.failed));
		remove(argv[2]);
		return 1;
	}
	return 0;
}
