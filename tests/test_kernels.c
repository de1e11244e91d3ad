/* test_kernels.c -- kernel tables (docs/kernel-table.md): a layer's key
 * (ir/kernelkey.c) is its shape, never its name; the reader
 * (frontend/kernels.c) keeps the provenance, sorts the rows and refuses
 * every hostile table of the list below at its file, line and column;
 * the lookup (model/kerneltable.c) gives a row at its batch, a log-log
 * interpolation between two rows, and nothing beyond them; a split
 * layer's part has a key of its own (kernel_key_shard); the cost model
 * prices layers from a system's table (model/tabletime.c). */
#include "tests/harness.h"
#include "model/kerneltable.h"
#include "model/model.h"
#include "plan/analysis.h"

static const char model_src[] =
	"model m { input x: 3x8x8;"
	" CONVNAME = conv(x, 4, kernel=3, pad=1);"
	" b = batchnorm(CONVNAME); r = relu(b); p = maxpool(r, kernel=2);"
	" q = globalavgpool(p); f = flatten(q); y = fc(f, 10); }";

/* The model with its convolution named `name`, through the memory pass. */
static Graph *
model(Fx *fx, const char *name)
{
	char src[1024], *at;
	size_t n = strlen("CONVNAME");

	snprintf(src, sizeof src, "%s", model_src);
	while ((at = strstr(src, "CONVNAME"))) {
		char rest[1024];
		snprintf(rest, sizeof rest, "%s", at + n);
		snprintf(at, sizeof src - (size_t)(at - src), "%s%s", name, rest);
	}
	return fx_run(fx, src, PASS_MEMORY);
}

static const char *
key_text(const Graph *g, const char *name, Precision p, bool nhwc, const char **cls,
	 const char **dt, const char **layout)
{
	static char buf[KEY_TEXT];
	KernelKey k;
	int64_t per;

	if (!kernel_key(g, fx_index(g, name), p, nhwc, &k, &per))
		return NULL;
	assert_int_equal(per, 1);
	kernel_key_text(&k, buf, sizeof buf);
	*cls = kernel_class_name(k.cls);
	*dt = kernel_dtype_name(k.dt);
	*layout = kernel_layout_name(k.layout);
	return buf;
}

/* Every layer's key as the table writes it, at fp32 NCHW and where the
 * precision and layout change it. */
static void
keys_of_layers(void **state)
{
	Fx *fx = *state;
	Graph *g = model(fx, "conv1");
	const char *cls, *dt, *layout;
	static const struct {
		const char *layer, *cls, *layout, *shape;
	} want[] = {
		{ "conv1", "conv", "NCHW",
		  "c=3 h=8 w=8 k=4 r=3 s=3 stride=1x1 pad=1x1x1x1 groups=1 dilation=1x1" },
		{ "b", "norm", "NCHW", "op=batchnorm c=4 elements=256" },
		{ "r", "elementwise", "-", "op=relu elements=256" },
		{ "p", "pool", "NCHW",
		  "op=maxpool c=4 h=8 w=8 r=2 s=2 stride=2x2 pad=0x0x0x0 ceil=0" },
		{ "q", "pool", "NCHW", "op=globalavgpool c=4 h=4 w=4" },
		{ "y", "gemm", "-", "m=1 n=10 k=4 batch=1" },
	};

	assert_non_null(g);
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		const char *s = key_text(g, want[i].layer, PREC_FP32, false, &cls, &dt, &layout);
		assert_non_null(s);
		assert_string_equal(s, want[i].shape);
		assert_string_equal(cls, want[i].cls);
		assert_string_equal(layout, want[i].layout);
		assert_string_equal(dt, "fp32");
	}
	assert_null(key_text(g, "f", PREC_FP32, false, &cls, &dt, &layout)); /* a view */
	/* tf32: the products' format only; NHWC: the layouts that have one */
	key_text(g, "conv1", PREC_TF32, true, &cls, &dt, &layout);
	assert_string_equal(dt, "tf32");
	assert_string_equal(layout, "NHWC");
	key_text(g, "r", PREC_TF32, true, &cls, &dt, &layout);
	assert_string_equal(dt, "fp32");
	assert_string_equal(layout, "-");
	key_text(g, "y", PREC_BF16, false, &cls, &dt, &layout);
	assert_string_equal(dt, "bf16");
}

static KernelTable *
table(Fx *fx, const char *text)
{
	return kernels_parse("t.csv", text, strlen(text), &fx->arena);
}

#define HEADER \
	"class,precision,layout,n,shape,fwd_s,bwd_data_s,bwd_weight_s,spread,repeats,kernel\n"
#define CONV_SHAPE "c=3 h=8 w=8 k=4 r=3 s=3 stride=1x1 pad=1x1x1x1 groups=1 dilation=1x1"

/* A layer renamed finds the same row: the key holds no name. */
static void
renamed_layer_finds_its_row(void **state)
{
	Fx *fx = *state;
	KernelTable *t = table(fx, "# device: test\n" HEADER
			       "conv,fp32,NCHW,4," CONV_SHAPE ",1e-3,2e-3,3e-3,0.01,5,k\n");
	const char *names[] = { "conv1", "stem_conv_renamed" };
	KernelKey k[2];
	int64_t per;

	assert_non_null(t);
	for (int i = 0; i < 2; i++) {
		Graph *g = model(fx, names[i]);
		KernelTime r;
		assert_non_null(g);
		assert_true(kernel_key(g, fx_index(g, names[i]), PREC_FP32, false, &k[i], &per));
		r = kernel_lookup(t, &k[i], 4);
		assert_int_equal(r.src, KS_TABLE);
		assert_true(r.fwd == 1e-3 && r.bwd_data == 2e-3 && r.bwd_weight == 3e-3);
	}
	assert_int_equal(kernel_key_cmp(&k[0], &k[1]), 0);
}

/* fp8, the matrix products' format under --precision fp8 (precision.def:
 * Transformer Engine's), is a precision a row may have: the fc's key at
 * fp8 finds its row, the table's times exactly; its fp16 key does not. */
static void
fp8_rows_are_found(void **state)
{
	Fx *fx = *state;
	Graph *g = model(fx, "conv1");
	KernelTable *t =
		table(fx, HEADER "gemm,fp8,-,2,m=1 n=10 k=4 batch=1,2e-6,3e-6,4e-6,0,5,k\n");
	KernelKey k;
	KernelTime r;
	int64_t per;

	assert_non_null(t);
	assert_int_equal(t->nrow, 1);
	assert_true(kernel_key(g, fx_index(g, "y"), PREC_FP8, false, &k, &per));
	assert_string_equal(kernel_dtype_name(k.dt), "fp8");
	r = kernel_lookup(t, &k, 2);
	assert_int_equal(r.src, KS_TABLE);
	assert_true(r.fwd == 2e-6 && r.bwd_data == 3e-6 && r.bwd_weight == 4e-6);
	assert_true(kernel_key(g, fx_index(g, "y"), PREC_AMP_FP16, false, &k, &per));
	assert_int_equal(kernel_lookup(t, &k, 2).src, KS_NONE);
}

/* The reader: comments kept as notes, items in any order, rows sorted by
 * key then N, quoted kernel names, empty backward times none. */
static void
table_is_read_and_sorted(void **state)
{
	Fx *fx = *state;
	KernelTable *t = table(fx,
		"# oraclec kernel table\n#device: cpu\n" HEADER
		"conv,fp32,NCHW,8," CONV_SHAPE ",4e-3,8e-3,,0.02,5,\"void conv<float, 4>\"\r\n"
		"\n"
		"elementwise,fp32,-,4,elements=256 op=relu,1e-6,1e-6,,0,3,\n"
		"conv,fp32,NCHW,2,groups=1 dilation=1x1 c=3 h=8 w=8 k=4 r=3 s=3 stride=1x1 "
		"pad=1x1x1x1,1e-3,2e-3,1.5e-3,0.02,5,x\n"
		"# after\n");
	char buf[KEY_TEXT];

	assert_non_null(t);
	assert_string_equal(fx_diags(fx), "");
	assert_int_equal(t->nnote, 3);
	assert_string_equal(t->note[0], "oraclec kernel table");
	assert_string_equal(t->note[1], "device: cpu");
	assert_int_equal(t->nrow, 3);
	assert_int_equal(t->row[0].key.cls, KC_CONV);
	assert_int_equal(t->row[0].n, 2);
	assert_int_equal(t->row[1].n, 8);
	assert_string_equal(t->row[1].kernel, "void conv<float, 4>");
	assert_true(isnan(t->row[1].bwd_weight));
	assert_int_equal(t->row[1].loc.line, 4);
	kernel_key_text(&t->row[0].key, buf, sizeof buf);
	assert_string_equal(buf, CONV_SHAPE);
	kernel_key_text(&t->row[2].key, buf, sizeof buf);
	assert_string_equal(buf, "op=relu elements=256");
}

/* Exact, between two rows in log time over log N (each time where both
 * rows have it), and nothing outside them or for another key. */
static void
lookup_exact_interpolated_none(void **state)
{
	Fx *fx = *state;
	KernelTable *t = table(fx, HEADER
		"conv,fp32,NCHW,2," CONV_SHAPE ",1e-3,2e-3,1e-3,0.02,5,\n"
		"conv,fp32,NCHW,8," CONV_SHAPE ",4e-3,2e-3,,0.02,5,\n"
		"conv,fp32,NCHW,32," CONV_SHAPE ",8e-3,8e-3,,0.02,5,\n");
	KernelKey k = t->row[0].key, other = k;
	KernelTime r;

	r = kernel_lookup(t, &k, 8);
	assert_int_equal(r.src, KS_TABLE);
	assert_true(r.fwd == 4e-3 && r.lo == r.hi && r.lo->n == 8);
	/* n 4 between 2 and 8: log-linear, 1e-3 x (4/2)^(log 4 / log 4) =
	 * 2e-3; the data gradient flat at 2e-3; no weight gradient at 8 */
	r = kernel_lookup(t, &k, 4);
	assert_int_equal(r.src, KS_INTERPOLATED);
	assert_true(fabs(r.fwd / 2e-3 - 1) < 1e-12);
	assert_true(fabs(r.bwd_data / 2e-3 - 1) < 1e-12);
	assert_true(isnan(r.bwd_weight));
	assert_true(r.lo->n == 2 && r.hi->n == 8);
	/* n 16 between 8 and 32: 4e-3 x 2^(1/2) */
	r = kernel_lookup(t, &k, 16);
	assert_true(fabs(r.fwd / (4e-3 * sqrt(2)) - 1) < 1e-12);
	assert_int_equal(kernel_lookup(t, &k, 1).src, KS_NONE);
	assert_int_equal(kernel_lookup(t, &k, 33).src, KS_NONE);
	assert_int_equal(kernel_lookup(t, &k, 0).src, KS_NONE);
	other.d[0] = 4;
	assert_int_equal(kernel_lookup(t, &other, 8).src, KS_NONE);
	other = k;
	other.dt = DT_BF16;
	assert_int_equal(kernel_lookup(t, &other, 8).src, KS_NONE);
}

/* Hostile tables: each refused with one diagnostic at its place. */
static void
hostile_tables(void **state)
{
	Fx *fx = *state;
	static char longfield[6000];
	static const struct {
		const char *text, *want;
	} c[] = {
		{ "", "t.csv:1:1: error: no header 'class,precision,layout,n,shape,fwd_s,"
		      "bwd_data_s,bwd_weight_s,spread,repeats,kernel': not a kernel table "
		      "(docs/kernel-table.md)" },
		{ "# only a comment\n", "t.csv:1:1: error: no header" },
		{ "layer,forward_s,backward_s\n", "t.csv:1:1: error: expected the header" },
		{ HEADER "convv,fp32,NCHW,2," CONV_SHAPE ",1,1,1,0,1,\n",
		  "t.csv:2:1: error: class 'convv' is not conv, gemm, attention, elementwise, norm "
		  "or pool" },
		{ HEADER "conv,fp64,NCHW,2," CONV_SHAPE ",1,1,1,0,1,\n",
		  "t.csv:2:6: error: precision 'fp64' is not fp32, tf32, fp16, bf16 or fp8" },
		{ HEADER "conv,fp32,NCWH,2," CONV_SHAPE ",1,1,1,0,1,\n",
		  "t.csv:2:11: error: layout 'NCWH' is not NCHW, NHWC or -" },
		{ HEADER "conv,fp32,-,2," CONV_SHAPE ",1,1,1,0,1,\n",
		  "t.csv:2:11: error: layout '-': a conv key's layout is NCHW or NHWC" },
		{ HEADER "elementwise,fp32,NCHW,2,op=relu elements=4,1,1,,0,1,\n",
		  "t.csv:2:18: error: layout 'NCHW': a relu elementwise key's layout is '-' "
		  "(none)" },
		{ HEADER "conv,fp32,NCHW,0," CONV_SHAPE ",1,1,1,0,1,\n",
		  "t.csv:2:16: error: n '0' is not a whole number from 1 to 2147483647" },
		{ HEADER "conv,fp32,NCHW,1.5," CONV_SHAPE ",1,1,1,0,1,\n",
		  "t.csv:2:16: error: n '1.5' is not a whole number" },
		{ HEADER "conv,fp32,NCHW,1e3," CONV_SHAPE ",1,1,1,0,1,\n",
		  "t.csv:2:16: error: n '1e3' is not a whole number" },
		{ HEADER "conv,fp32,NCHW,99999999999," CONV_SHAPE ",1,1,1,0,1,\n",
		  "t.csv:2:16: error: n '99999999999' is not a whole number" },
		{ HEADER "conv,fp32,NCHW,2,c=3 h=8 w=8 k=4 r=3 s=3 stride=1x1 pad=1x1x1x1 groups=1,"
			 "1,1,1,0,1,\n",
		  "t.csv:2:18: error: shape: no dilation= item (a conv key has 10 items" },
		{ HEADER "conv,fp32,NCHW,2," CONV_SHAPE " q=1,1,1,1,0,1,\n",
		  "t.csv:2:87: error: shape: 'q' is not an item of a conv key" },
		{ HEADER "conv,fp32,NCHW,2,c=3 " CONV_SHAPE ",1,1,1,0,1,\n",
		  "t.csv:2:22: error: shape: 'c' given twice" },
		{ HEADER "conv,fp32,NCHW,2,c=3  h=8,1,1,1,0,1,\n",
		  "t.csv:2:22: error: shape: two spaces" },
		{ HEADER "conv,fp32,NCHW,2," CONV_SHAPE " ,1,1,1,0,1,\n",
		  "t.csv:2:86: error: shape: a space at the end" },
		{ HEADER "conv,fp32,NCHW,2,c=3 h=8 w=8 k=4 r=3 s=3 stride=1 pad=1x1x1x1 groups=1 "
			 "dilation=1x1,1,1,1,0,1,\n",
		  "t.csv:2:49: error: shape: stride takes 2 whole numbers from 1 to 2^40, 'x' "
		  "between" },
		{ HEADER "conv,fp32,NCHW,2,c=0 h=8 w=8 k=4 r=3 s=3 stride=1x1 pad=1x1x1x1 groups=1 "
			 "dilation=1x1,1,1,1,0,1,\n",
		  "t.csv:2:20: error: shape: c takes 1 whole number from 1 to 2^40" },
		{ HEADER "conv,fp32,NCHW,2,c=2199023255553 h=8 w=8 k=4 r=3 s=3 stride=1x1 "
			 "pad=1x1x1x1 groups=1 dilation=1x1,1,1,1,0,1,\n",
		  "t.csv:2:20: error: shape: c takes 1 whole number from 1 to 2^40" },
		{ HEADER "conv,fp32,NCHW,2,c=-3 h=8,1,1,1,0,1,\n",
		  "t.csv:2:20: error: shape: c takes 1 whole number" },
		{ HEADER "conv,fp32,NCHW,2,c3,1,1,1,0,1,\n",
		  "t.csv:2:18: error: shape: 'c3' is not name=value" },
		{ HEADER "elementwise,fp32,-,2,op=rellu elements=4,1,1,,0,1,\n",
		  "t.csv:2:25: error: shape: op 'rellu' has no elementwise key; did you mean "
		  "'relu'?" },
		{ HEADER "elementwise,fp32,-,2,op=batchnorm elements=4,1,1,,0,1,\n",
		  "t.csv:2:25: error: shape: op 'batchnorm' has no elementwise key (its class is "
		  "norm)\n" },
		{ HEADER "elementwise,fp32,-,2,op=flatten elements=4,1,1,,0,1,\n",
		  "t.csv:2:25: error: shape: op 'flatten' has no elementwise key (it has no "
		  "key)\n" },
		{ HEADER "elementwise,fp32,-,2,elements=4,1,1,,0,1,\n",
		  "t.csv:2:22: error: shape: no op= item (the operator the elementwise kernel "
		  "ran)" },
		{ HEADER "pool,fp32,NCHW,2,op=maxpool c=4 h=8 w=8 r=2 s=2 stride=2x2 "
			 "pad=0x0x0x0 ceil=2,1,1,,0,1,\n",
		  "t.csv:2:77: error: shape: ceil takes 1 whole number from 0 to 1" },
		{ HEADER "conv,fp32,NCHW,2," CONV_SHAPE ",,1,1,0,1,\n",
		  "t.csv:2:87: error: fwd_s is empty" },
		{ HEADER "conv,fp32,NCHW,2," CONV_SHAPE ",-1,1,1,0,1,\n",
		  "t.csv:2:87: error: fwd_s '-1' is not a time from 1e-9 to 1e6 seconds" },
		{ HEADER "conv,fp32,NCHW,2," CONV_SHAPE ",nan,1,1,0,1,\n",
		  "t.csv:2:87: error: fwd_s 'nan' is not a decimal number of seconds" },
		/* a time, a spread and a count are plain decimals: strtod's hex
		 * floats, inf and blanks are not (0x1p-3 was read as 0.125 s) */
		{ HEADER "conv,fp32,NCHW,2," CONV_SHAPE ",0x1p-3,1,1,0,1,\n",
		  "t.csv:2:87: error: fwd_s '0x1p-3' is not a decimal number of seconds" },
		{ HEADER "conv,fp32,NCHW,2," CONV_SHAPE ",1,0X1P-3,1,0,1,\n",
		  "t.csv:2:89: error: bwd_data_s '0X1P-3' is not a decimal number of seconds" },
		{ HEADER "conv,fp32,NCHW,2," CONV_SHAPE ",1,1,0x.8p1,0,1,\n",
		  "t.csv:2:91: error: bwd_weight_s '0x.8p1' is not a decimal number of seconds" },
		{ HEADER "conv,fp32,NCHW,2," CONV_SHAPE ",inf,1,1,0,1,\n",
		  "t.csv:2:87: error: fwd_s 'inf' is not a decimal number of seconds" },
		{ HEADER "conv,fp32,NCHW,2," CONV_SHAPE ",infinity,1,1,0,1,\n",
		  "t.csv:2:87: error: fwd_s 'infinity' is not a decimal number of seconds" },
		{ HEADER "conv,fp32,NCHW,2," CONV_SHAPE ",1,-nan,1,0,1,\n",
		  "t.csv:2:89: error: bwd_data_s '-nan' is not a decimal number of seconds" },
		{ HEADER "conv,fp32,NCHW,2," CONV_SHAPE ", 1,1,1,0,1,\n",
		  "t.csv:2:87: error: fwd_s ' 1' is not a decimal number of seconds" },
		{ HEADER "conv,fp32,NCHW,2," CONV_SHAPE ",1 ,1,1,0,1,\n",
		  "t.csv:2:87: error: fwd_s '1 ' is not a decimal number of seconds" },
		{ HEADER "conv,fp32,NCHW,2," CONV_SHAPE ",1e,1,1,0,1,\n",
		  "t.csv:2:87: error: fwd_s '1e' is not a decimal number of seconds" },
		{ HEADER "conv,fp32,NCHW,2," CONV_SHAPE ",1,1,1,0x0,1,\n",
		  "t.csv:2:93: error: spread '0x0' is not a relative spread from 0 to 100" },
		{ HEADER "conv,fp32,NCHW,2," CONV_SHAPE ",1,1,1,nan,1,\n",
		  "t.csv:2:93: error: spread 'nan' is not a relative spread" },
		{ HEADER "conv,fp32,NCHW,0x10," CONV_SHAPE ",1,1,1,0,1,\n",
		  "t.csv:2:16: error: n '0x10' is not a whole number from 1 to 2147483647" },
		{ HEADER "conv,fp32,NCHW, 2," CONV_SHAPE ",1,1,1,0,1,\n",
		  "t.csv:2:16: error: n ' 2' is not a whole number" },
		{ HEADER "conv,fp32,NCHW,2," CONV_SHAPE ",1,1,1,0,0x5,\n",
		  "t.csv:2:95: error: repeats '0x5' is not a whole number from 1 to 1000000" },
		{ HEADER "conv,fp32,NCHW,2,c=0x3 h=8 w=8 k=4 r=3 s=3 stride=1x1 pad=1x1x1x1 "
			 "groups=1 dilation=1x1,1,1,1,0,1,\n",
		  "t.csv:2:20: error: shape: c takes 1 whole number from 1 to 2^40" },
		{ HEADER "conv,fp32,NCHW,2,c=3e1 h=8 w=8 k=4 r=3 s=3 stride=1x1 pad=1x1x1x1 "
			 "groups=1 dilation=1x1,1,1,1,0,1,\n",
		  "t.csv:2:20: error: shape: c takes 1 whole number from 1 to 2^40" },
		{ HEADER "conv,fp32,NCHW,2,c=inf h=8 w=8 k=4 r=3 s=3 stride=1x1 pad=1x1x1x1 "
			 "groups=1 dilation=1x1,1,1,1,0,1,\n",
		  "t.csv:2:20: error: shape: c takes 1 whole number from 1 to 2^40" },

		{ HEADER "conv,fp32,NCHW,2," CONV_SHAPE ",1e7,1,1,0,1,\n",
		  "t.csv:2:87: error: fwd_s '1e7' is not a time" },
		{ HEADER "conv,fp32,NCHW,2," CONV_SHAPE ",1,1e-12,1,0,1,\n",
		  "t.csv:2:89: error: bwd_data_s '1e-12' is not a time" },
		{ HEADER "conv,fp32,NCHW,2," CONV_SHAPE ",1,1,1,-0.5,1,\n",
		  "t.csv:2:93: error: spread '-0.5' is not a relative spread from 0 to 100" },
		{ HEADER "conv,fp32,NCHW,2," CONV_SHAPE ",1,1,1,0,0,\n",
		  "t.csv:2:95: error: repeats '0' is not a whole number from 1 to 1000000" },
		{ HEADER "conv,fp32,NCHW,2," CONV_SHAPE ",1,1,1,0,1\n",
		  "t.csv:2:96: error: missing column 'kernel'" },
		{ HEADER "conv,fp32,NCHW,2," CONV_SHAPE ",1,1,1,0,1,k,extra\n",
		  "t.csv:2:98: error: more than 11 columns" },
		{ HEADER "conv,fp32,NCHW,2," CONV_SHAPE ",1,1,1,0,1,\"k\n",
		  "t.csv:2:97: error: unterminated quoted field" },
		{ HEADER "conv,fp32,NCHW,2," CONV_SHAPE ",1,1,1,0,1,\"k\"x\n",
		  "t.csv:2:100: error: expected ',' after a quoted field" },
		{ HEADER "conv,fp32,NCHW,2," CONV_SHAPE ",1,1,1,0,1,\n"
			 "conv,fp32,NCHW,2," CONV_SHAPE ",2,2,2,0,1,\n",
		  "t.csv:3:1: error: the key and n of line 2 again" },
		{ longfield, "t.csv:2:97: error: field longer than 4096 bytes" },
	};
	const char *nul = HEADER "conv,fp32,NCHW,2,c=3\0 h=8,1,1,1,0,1,\n";
	int n = (int)(sizeof HEADER - 1) + 40;

	snprintf(longfield, sizeof longfield, "%s", HEADER "conv,fp32,NCHW,2," CONV_SHAPE
		 ",1,1,1,0,1,");
	memset(longfield + strlen(longfield), 'k', 5000);
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		const char *got;
		diag_reset();
		assert_null(table(fx, c[i].text));
		got = fx_diags(fx);
		if (getenv("SHOW"))
			fprintf(stderr, "%zu: %s", i, got);
		else if (strncmp(got, c[i].want, strlen(c[i].want)) != 0)
			fail_msg("case %zu: got '%s', want '%s...'", i, got, c[i].want);
		/* one diagnostic, one line */
		assert_non_null(strchr(got, '\n'));
		assert_null(strchr(strchr(got, '\n') + 1, '\n'));
		fclose(fx->diag);
		free(fx->diag_buf);
		fx->diag_buf = NULL;
		fx->diag = open_memstream(&fx->diag_buf, &fx->diag_len);
		diag_out = fx->diag;
	}
	assert_null(kernels_parse("t.csv", nul, (size_t)n, &fx->arena));
	assert_non_null(strstr(fx_diags(fx), "t.csv:2:21: error: a NUL byte"));
}

/* A system file names its table (key kernels): the path is read from the
 * system file's directory and the table read with the system (System.table);
 * --kernels names another in its place; a table that is not there is an
 * error at the key, an empty name too. */
static void
system_names_its_table(void **state)
{
	Fx *fx = *state;
	static const char sys[] =
		"system s { gpus_per_node = 1; fp32 = 10TFLOPS; memory = 16GB; "
		"memory_bw = 900GB/s; intra_bw = 100GB/s; intra_latency = 10us; nic_bw = 10GB/s; "
		"nic_latency = 5us; kernels = \"%s\"; }\n";
	char text[512], want[512];
	const char *path;
	System *s;

	fx_write(fx, "kernels.csv",
		 "class,precision,layout,n,shape,fwd_s,bwd_data_s,bwd_weight_s,spread,repeats,"
		 "kernel\nelementwise,fp32,-,2,op=relu elements=8,1e-6,2e-6,,0,1,\n");
	snprintf(text, sizeof text, sys, "kernels.csv");
	path = fx_write(fx, "system.odl", text);
	s = system_load(path, &fx->arena, &fx->files);
	assert_non_null(s);
	snprintf(want, sizeof want, "%s/kernels.csv", fx->dir);
	assert_string_equal(s->kernels, want);
	assert_int_equal(s->kernels_at.line, 1);
	/* read with the system, once */
	assert_non_null(s->table);
	assert_int_equal(s->table->nrow, 1);
	/* --kernels: another table in its place */
	s = system_load_with(path, NULL, "nowhere.csv", &fx->arena, &fx->files);
	assert_null(s);
	assert_non_null(strstr(fx_diags(fx), "nowhere.csv"));
	/* a table the system names that is not there: at the key */
	snprintf(text, sizeof text, sys, "/abs/k.csv");
	assert_null(system_load(fx_write(fx, "system.odl", text), &fx->arena, &fx->files));
	assert_non_null(strstr(fx_diags(fx), "system.odl:1:"));
	assert_non_null(strstr(fx_diags(fx), "/abs/k.csv"));
	snprintf(text, sizeof text, sys, "");
	assert_null(system_load(fx_write(fx, "system.odl", text), &fx->arena, &fx->files));
	assert_non_null(strstr(fx_diags(fx), "system.odl:1:"));
	assert_non_null(strstr(fx_diags(fx), "error: 'kernels' is empty"));
}

/* The part of a key one GPU computes under a split (kernel_key_shard):
 * filter a convolution's k and a linear layer's n, channel their c and
 * k, a grouped convolution whole groups, spatial a strip's rows (at
 * least one a GPU); the largest part, ceil(size / ways). */
static void
shards_of_keys(void **state)
{
	Fx *fx = *state;
	static const char conv[] = CONV_SHAPE;
	static const struct {
		const char *cls, *layout, *shape;
		GridDim how;
		int64_t ways;
		const char *want; /* NULL: no part */
	} c[] = {
		{ "conv", "NCHW", "c=64 h=56 w=56 k=64 r=3 s=3 stride=1x1 pad=1x1x1x1 groups=1 "
				  "dilation=1x1", DIM_FILTER, 3,
		  "c=64 h=56 w=56 k=22 r=3 s=3 stride=1x1 pad=1x1x1x1 groups=1 dilation=1x1" },
		{ "conv", "NCHW", "c=64 h=56 w=56 k=64 r=3 s=3 stride=1x1 pad=1x1x1x1 groups=1 "
				  "dilation=1x1", DIM_CHANNEL, 4,
		  "c=16 h=56 w=56 k=64 r=3 s=3 stride=1x1 pad=1x1x1x1 groups=1 dilation=1x1" },
		{ "conv", "NCHW", "c=64 h=56 w=56 k=64 r=3 s=3 stride=1x1 pad=1x1x1x1 groups=1 "
				  "dilation=1x1", DIM_SPATIAL, 4,
		  "c=64 h=14 w=56 k=64 r=3 s=3 stride=1x1 pad=1x1x1x1 groups=1 dilation=1x1" },
		{ "conv", "NCHW", "c=64 h=56 w=56 k=64 r=3 s=3 stride=1x1 pad=1x1x1x1 groups=32 "
				  "dilation=1x1", DIM_FILTER, 4,
		  "c=16 h=56 w=56 k=16 r=3 s=3 stride=1x1 pad=1x1x1x1 groups=8 dilation=1x1" },
		{ "conv", "NCHW", "c=64 h=56 w=56 k=64 r=3 s=3 stride=1x1 pad=1x1x1x1 groups=32 "
				  "dilation=1x1", DIM_CHANNEL, 3, NULL },
		{ "gemm", "-", "m=1 n=1000 k=512 batch=1", DIM_FILTER, 3,
		  "m=1 n=334 k=512 batch=1" },
		{ "gemm", "-", "m=1 n=1000 k=512 batch=1", DIM_CHANNEL, 2,
		  "m=1 n=1000 k=256 batch=1" },
		{ "gemm", "-", "m=197 n=197 k=64 batch=12", DIM_FILTER, 2, NULL },
		{ "elementwise", "-", "op=add elements=802816 other=802816", DIM_SPATIAL, 4,
		  "op=add elements=200704 other=200704" },
		{ "elementwise", "-", "op=add elements=802816 other=64", DIM_SPATIAL, 4,
		  "op=add elements=200704 other=64" },
		{ "norm", "NCHW", "op=batchnorm c=64 elements=200704", DIM_SPATIAL, 3,
		  "op=batchnorm c=64 elements=66902" },
		{ "elementwise", "-", "op=relu elements=802816", DIM_FILTER, 4, NULL },
		{ "conv", "NCHW", "c=64 h=3 w=56 k=64 r=3 s=3 stride=1x1 pad=1x1x1x1 groups=1 "
				  "dilation=1x1", DIM_SPATIAL, 4, NULL },
		{ "conv", "NCHW", conv, DIM_DATA, 2, NULL },
	};
	char buf[KEY_TEXT];

	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		KernelKey k, part;
		bool made;
		assert_true(kernel_key_read(LOC_NONE, c[i].cls, "fp32", c[i].layout, c[i].shape,
					    &k));
		made = kernel_key_shard(&k, c[i].how, c[i].ways, &part);
		if (!c[i].want) {
			if (made)
				fail_msg("case %zu: a part where none is", i);
			continue;
		}
		if (!made)
			fail_msg("case %zu: no part", i);
		kernel_key_text(&part, buf, sizeof buf);
		assert_string_equal(buf, c[i].want);
		/* one way: the whole key */
		assert_true(kernel_key_shard(&k, c[i].how, 1, &part));
		assert_int_equal(kernel_key_cmp(&k, &part), 0);
	}
	assert_string_equal(fx_diags(fx), "");
}

/* The cost model prices a layer from the system's table
 * (model/tabletime.c): a row at the batch (source table), two rows
 * around it (interpolated), else the model; backward as the layer has
 * its parts (the first convolution reads the image: no data gradient; a
 * part the row lacks from the model); a split layer's part by its own
 * key; a profile before the table; a host_device system's dispatch taken
 * off; every key and batch looked up recorded where the engine keeps a
 * record. */
static void
layers_priced_from_the_table(void **state)
{
	Fx *fx = *state;
	Graph *g = model(fx, "conv1");
	KernelTable *t = table(fx, HEADER
		"conv,fp32,NCHW,4," CONV_SHAPE ",1e-3,2e-3,3e-3,0.01,5,\n"
		"conv,fp32,NCHW,4,c=3 h=8 w=8 k=2 r=3 s=3 stride=1x1 pad=1x1x1x1 groups=1 "
		"dilation=1x1,5e-4,1e-3,1e-3,0.01,5,\n"
		"elementwise,fp32,-,2,op=relu elements=256,1e-6,2e-6,,0,5,\n"
		"elementwise,fp32,-,8,op=relu elements=256,4e-6,8e-6,,0,5,\n"
		"norm,fp32,NCHW,4,op=batchnorm c=4 elements=256,3e-6,7e-6,,0,5,\n"
		"gemm,fp32,-,4,m=1 n=10 k=4 batch=1,1e-6,,2e-6,0,5,\n");
	System s = *fx_abci(fx), bare;
	Settings set = settings_default;
	Analysis an, model_an;
	const Layer *conv = fx_layer(g, "conv1"), *relu = fx_layer(g, "r"),
		    *bn = fx_layer(g, "b"), *fc = fx_layer(g, "y");
	const Cost *fcc = &fc->cost;
	TimeSource src;
	double v, m;

	assert_non_null(t);
	bare = s;
	s.table = t;
	assert_true(analysis_setup(&an, fx->eng, &set, g, &s));
	assert_true(analysis_setup(&model_an, fx->eng, &set, g, &bare));
	/* no gradient accumulation: the table's times alone */
	an.q.impl.zero_grad = model_an.q.impl.zero_grad = false;

	v = layer_time_of(&an, g, conv, 4, 1, DIM_DATA, false, true, &src);
	assert_int_equal(src, TS_TABLE);
	NEAR(v, 1e-3);
	/* the image needs no gradient: the weights' alone */
	v = layer_time_of(&an, g, conv, 4, 1, DIM_DATA, true, true, &src);
	assert_int_equal(src, TS_TABLE);
	assert_true(conv->cost.flops_bwd_data == 0);
	NEAR(v, 3e-3);
	/* n 4 between 2 and 8: 1e-6 x 2, 2e-6 x 2 */
	NEAR(layer_time_of(&an, g, relu, 4, 1, DIM_DATA, false, true, &src), 2e-6);
	assert_int_equal(src, TS_INTERPOLATED);
	NEAR(layer_time_of(&an, g, relu, 4, 1, DIM_DATA, true, true, &src), 4e-6);
	/* outside the rows: the model's time */
	v = layer_time_of(&an, g, relu, 16, 1, DIM_DATA, false, true, &src);
	assert_int_equal(src, TS_MODEL);
	NEAR(v, layer_time_of(&model_an, g, relu, 16, 1, DIM_DATA, false, true, &src));
	/* a norm's bwd_data is its whole backward */
	NEAR(layer_time_of(&an, g, bn, 4, 1, DIM_DATA, true, true, &src), 7e-6);
	assert_int_equal(src, TS_TABLE);
	/* the linear layer's data gradient the row lacks: the model's
	 * backward shared by FLOPs */
	m = layer_time_of(&model_an, g, fc, 4, 1, DIM_DATA, true, true, &src);
	assert_true(fcc->flops_bwd_data > 0 && fcc->flops_bwd_weight > 0);
	NEAR(layer_time_of(&an, g, fc, 4, 1, DIM_DATA, true, true, &src),
	     m * (double)fcc->flops_bwd_data /
			     (double)(fcc->flops_bwd_data + fcc->flops_bwd_weight) +
		     2e-6);
	/* a filter split's part (k 4 over 2: 2) by its own row; the same
	 * share of no split the model's */
	NEAR(layer_time_of(&an, g, conv, 4, 0.5, DIM_FILTER, false, true, &src), 5e-4);
	assert_int_equal(src, TS_TABLE);
	layer_time_of(&an, g, conv, 4, 0.5, DIM_DATA, false, true, &src);
	assert_int_equal(src, TS_MODEL);
	/* a profile first; predicted without it, the table again */
	g->measured = arena_array(&fx->arena, (size_t)g->nlayer, sizeof *g->measured);
	g->measured[conv - g->layer][PREC_FP32][0] = 7e-3;
	((Layer *)conv)->timed = true;
	NEAR(layer_time_of(&an, g, conv, 4, 1, DIM_DATA, false, true, &src), 4 * 7e-3);
	assert_int_equal(src, TS_PROFILE);
	NEAR(layer_time_of(&an, g, conv, 4, 1, DIM_DATA, false, false, &src), 1e-3);
	assert_int_equal(src, TS_TABLE);
	((Layer *)conv)->timed = false;
	/* a CPU probed: the call's dispatch is the host lane's */
	s.host_device = true;
	NEAR(layer_time_of(&an, g, conv, 4, 1, DIM_DATA, false, true, &src),
	     1e-3 - layer_call_host(&an, g, conv, false));
	s.host_device = false;
	/* what was looked up, recorded: 3.5 samples read the rows at 3 and 4 */
	fx->eng->needs = kernel_needs_new();
	layer_time_of(&an, g, conv, 3.5, 1, DIM_DATA, false, true, &src);
	assert_int_equal(src, TS_MODEL);
	layer_time_of(&an, g, conv, 4, 0.5, DIM_FILTER, true, true, &src);
	layer_time_of(&model_an, g, conv, 4, 0.5, DIM_FILTER, true, true, &src); /* no table */
	kernel_needs_sort(fx->eng->needs);
	assert_int_equal(fx->eng->needs->n, 3);
	assert_int_equal(fx->eng->needs->need[0].key.d[3], 2); /* the part: k=2 */
	assert_int_equal(fx->eng->needs->need[0].n, 4);
	assert_int_equal(fx->eng->needs->need[1].n, 3);
	assert_int_equal(fx->eng->needs->need[2].n, 4);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(keys_of_layers, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(renamed_layer_finds_its_row, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(table_is_read_and_sorted, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(lookup_exact_interpolated_none, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(hostile_tables, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(fp8_rows_are_found, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(system_names_its_table, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(shards_of_keys, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(layers_priced_from_the_table, fx_setup,
						fx_teardown),
	};

	return cmocka_run_group_tests_name("kernels", tests, NULL, NULL);
}
