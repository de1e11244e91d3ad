/* test_ir.c -- ir/: building graphs, the op table, shape helpers, the
 * verifier and the stable text form.  Graphs are built by hand here, so
 * the verifier can be shown graphs no frontend would make. */
#include "harness.h"

static const Loc L1 = { "tiny.odl", 2, 5 };
static const Loc L2 = { "tiny.odl", 3, 5 };

/* x: 3x8x8 -> c = conv(x, 4, kernel=3, pad=1) -> r = relu(c) */
static Graph *
tiny(Fx *fx)
{
	Graph *g = graph_new(&fx->arena, "tiny", "tiny.odl", "odl");
	Shape s = { 3, { 3, 8, 8 } };
	int x = graph_add_input(g, "x", &s);
	int c = graph_add_layer(g, OP_CONV, "c", L1), tc;
	int r = graph_add_layer(g, OP_RELU, "r", L2);
	Attr *a = &g->layer[c].attr;
	Window *w = attr_window(g, a);

	a->nspatial = 2;
	w->kernel[0] = w->kernel[1] = 3;
	for (int i = 0; i < MAX_SPATIAL; i++) {
		w->stride[i] = w->dilation[i] = 1;
		w->pad[i] = w->pad[MAX_SPATIAL + i] = 1;
	}
	a->filters = 4;
	a->groups = 1;
	a->bias = true;
	layer_set_inputs(g, c, &x, 1);
	tc = layer_add_output(g, c, "c");
	layer_set_inputs(g, r, &tc, 1);
	layer_add_output(g, r, "r");
	return g;
}

/* Runs ir_verify with stderr sent to a temporary file; returns what it
 * printed (arena string) and stores the count it returned. */
static const char *
verify_text(Fx *fx, const Graph *g, int *nbad)
{
	FILE *tmp = tmpfile();
	int saved;
	long n;
	char *s;

	assert_non_null(tmp);
	fflush(stderr);
	saved = dup(2);
	dup2(fileno(tmp), 2);
	*nbad = ir_verify(g);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	n = ftell(tmp);
	s = arena_alloc(&fx->arena, n + 1);
	rewind(tmp);
	assert_int_equal(fread(s, 1, n, tmp), n);
	fclose(tmp);
	return s;
}

static char *
print_text(Fx *fx, const Graph *g)
{
	char *buf = NULL, *s;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ir_print(g, f);
	fclose(f);
	s = arena_strdup(&fx->arena, buf);
	free(buf);
	return s;
}

/* ---- building ----------------------------------------------------------- */

static void
graph_add_functions_return_consecutive_indices(void **state)
{
	Fx *fx = *state;
	Graph *g = graph_new(&fx->arena, "m", "m.odl", "odl");
	Shape s = { 1, { 10 } };
	int a, b, l0, l1, t0, t1, ins[2];

	a = graph_add_input(g, "a", &s);
	b = graph_add_input(g, "b", &s);
	l0 = graph_add_layer(g, OP_ADD, "sum", L1);
	ins[0] = a;
	ins[1] = b;
	layer_set_inputs(g, l0, ins, 2);
	t0 = layer_add_output(g, l0, "sum");
	l1 = graph_add_layer(g, OP_RELU, "act", L2);
	layer_set_inputs(g, l1, &t0, 1);
	t1 = layer_add_output(g, l1, "act");

	assert_int_equal(a, 0);
	assert_int_equal(b, 1);
	assert_int_equal(l0, 0);
	assert_int_equal(l1, 1);
	assert_int_equal(t0, 2);
	assert_int_equal(t1, 3);
	assert_int_equal(g->ninput, 2);
	assert_int_equal(g->input[1], 1);
	assert_int_equal(g->ntensor, 4);
	assert_int_equal(g->nlayer, 2);
	assert_int_equal(g->tensor[a].producer, -1);
	assert_int_equal(g->tensor[t0].producer, 0);
	assert_int_equal(g->tensor[t1].producer, 1);
	assert_int_equal(g->tensor[t1].root, 3);
	assert_int_equal(g->tensor[b].shape.d[0], 10);
	assert_int_equal(g->layer[0].nin, 2);
	assert_int_equal(g->layer[0].in[1], 1);
	assert_int_equal(g->layer[1].out[0], 3);
	assert_int_equal(g->layer[1].loc.line, 3);
	/* a layer's site starts as its own statement */
	assert_int_equal(g->layer[1].site.line, 3);
}

static void
thousands_of_layers_keep_their_fields_as_arrays_grow(void **state)
{
	enum { N = 5000 };
	Fx *fx = *state;
	Graph *g = graph_new(&fx->arena, "m", "m.odl", "odl");
	Shape s = { 1, { 10 } };
	int t = graph_add_input(g, "x", &s);

	for (int i = 0; i < N; i++) {
		const char *name = arena_printf(&fx->arena, "r%d", i);
		int l = graph_add_layer(g, OP_RELU, name, (Loc){ "m.odl", i + 1, 1 });
		layer_set_inputs(g, l, &t, 1);
		t = layer_add_output(g, l, name);
	}
	assert_int_equal(g->nlayer, N);
	assert_int_equal(g->ntensor, N + 1);
	for (int i = 0; i < N; i++) {
		char want[16];
		snprintf(want, sizeof want, "r%d", i);
		assert_string_equal(g->layer[i].name, want);
		assert_int_equal(g->layer[i].in[0], i);
		assert_int_equal(g->layer[i].out[0], i + 1);
		assert_int_equal(g->layer[i].loc.line, i + 1);
	}
	assert_int_equal(ir_verify(g), 0);
}

/* ---- the op table ------------------------------------------------------- */

static const struct {
	OpKind id;
	const char *name;
	OpClass cls;
} rows[] = {
#define OP(id, name, cls, f, bd, bw, save) { id, name, cls },
#include "ir/ops.def"
#undef OP
};

static void
every_op_name_looks_up_to_its_own_kind(void **state)
{
	(void)state;
	assert_int_equal(sizeof rows / sizeof rows[0], OP_COUNT);
	for (int i = 0; i < OP_COUNT; i++) {
		assert_int_equal(rows[i].id, i);
		assert_non_null(op_info[i].name);
		assert_non_null(op_name(i));
		assert_string_equal(op_name(i), rows[i].name);
		assert_int_equal(op_info[i].cls, rows[i].cls);
		assert_int_equal(op_lookup(op_name(i)), i);
	}
}

static void
op_names_are_unique_lowercase_words(void **state)
{
	(void)state;
	for (int i = 0; i < OP_COUNT; i++) {
		const char *n = op_info[i].name;
		assert_true(*n != '\0');
		for (const char *p = n; *p; p++)
			if (*p < 'a' || *p > 'z')
				fail_msg("op name '%s' has '%c'", n, *p);
		for (int k = i + 1; k < OP_COUNT; k++)
			if (strcmp(n, op_info[k].name) == 0)
				fail_msg("ops %d and %d are both '%s'", i, k, n);
	}
}

static void
op_lookup_knows_the_odl_spellings_and_nothing_else(void **state)
{
	(void)state;
	assert_int_equal(op_lookup("conv"), OP_CONV);
	assert_int_equal(op_lookup("fc"), OP_FC);
	assert_int_equal(op_lookup("globalavgpool"), OP_GAVGPOOL);
	assert_int_equal(op_lookup("identity"), OP_IDENTITY);
	assert_int_equal(op_lookup("Conv"), -1);
	assert_int_equal(op_lookup("conv2d"), -1);
	assert_int_equal(op_lookup(""), -1);
	assert_string_equal(op_name(OP_COUNT), "?");
	assert_string_equal(op_name((OpKind)-1), "?");
}

/* cost.c counts conv, fc and matmul by MACs; per-element constants there
 * would be ignored, so ops.def must leave them 0.  Views share memory
 * with their input, so only one-input data-movement ops may be views. */
static void
op_table_rows_agree_with_their_class(void **state)
{
	(void)state;
	for (int i = 0; i < OP_COUNT; i++) {
		const OpInfo *o = &op_info[i];
		if (o->cls == OPC_CONV || o->cls == OPC_FC || o->cls == OPC_MATMUL) {
			assert_int_equal(o->fwd, 0);
			assert_int_equal(o->bwd_data, 0);
			assert_int_equal(o->bwd_weight, 0);
		}
		if (o->save & S_VIEW)
			assert_true(o->cls == OPC_FLATTEN || o->cls == OPC_RESHAPE ||
				    i == OP_IDENTITY);
		if (o->cls != OPC_NORM)
			assert_int_equal(o->bwd_weight, 0);
	}
}

/* ---- shapes ------------------------------------------------------------- */

static void
shape_elems_multiplies_the_dimensions(void **state)
{
	Shape img = { 3, { 3, 224, 224 } }, scalar = { 0 }, big = { 2, { 1LL << 31, 1LL << 31 } };
	int64_t n = -1;

	(void)state;
	assert_true(shape_elems(&img, &n));
	assert_int_equal(n, 150528);
	assert_true(shape_elems(&scalar, &n));
	assert_int_equal(n, 1);
	assert_true(shape_elems(&big, &n));
	assert_int_equal(n, 1LL << 62);
}

static void
shape_elems_reports_overflow_and_leaves_the_result(void **state)
{
	Shape at63 = { 3, { 1LL << 31, 1LL << 31, 2 } };
	Shape huge = { 2, { 1LL << 40, 1LL << 40 } };
	Shape max = { 2, { 3, 3074457345618258602LL } }; /* 3 * that = 2^63 - 2 */
	int64_t n = 42;

	(void)state;
	assert_false(shape_elems(&at63, &n));
	assert_false(shape_elems(&huge, &n));
	assert_int_equal(n, 42);
	assert_true(shape_elems(&max, &n));
	assert_int_equal(n, INT64_MAX - 1);
}

static void
shape_str_joins_dimensions_with_x(void **state)
{
	Shape img = { 3, { 3, 224, 224 } }, vec = { 1, { 1000 } }, scalar = { 0 };
	Shape big = { 2, { 1099511627776LL, 7 } };
	char buf[64], small[6];

	(void)state;
	assert_string_equal(shape_str(&img, buf, sizeof buf), "3x224x224");
	assert_string_equal(shape_str(&vec, buf, sizeof buf), "1000");
	assert_string_equal(shape_str(&scalar, buf, sizeof buf), "scalar");
	assert_string_equal(shape_str(&big, buf, sizeof buf), "1099511627776x7");
	/* a short buffer truncates, NUL-terminated */
	assert_string_equal(shape_str(&img, small, sizeof small), "3x224");
}

static void
shape_eq_compares_rank_and_dimensions(void **state)
{
	Shape a = { 2, { 3, 4 } }, b = { 2, { 3, 4, 99 } }, c = { 3, { 3, 4, 5 } };
	Shape d = { 2, { 3, 5 } };

	(void)state;
	assert_true(shape_eq(&a, &b)); /* dimensions past the rank do not count */
	assert_false(shape_eq(&a, &c));
	assert_false(shape_eq(&a, &d));
}

/* ---- the verifier ------------------------------------------------------- */

static void
ir_verify_accepts_a_well_formed_graph_after_every_pass(void **state)
{
	Fx *fx = *state;
	Graph *g = tiny(fx);
	int nbad;

	assert_string_equal(verify_text(fx, g, &nbad), "");
	assert_int_equal(nbad, 0);
	assert_true(shape_infer(g));
	assert_int_equal(ir_verify(g), 0);
	assert_true(cost_annotate(g));
	assert_int_equal(ir_verify(g), 0);
	assert_true(memory_annotate(g));
	assert_int_equal(ir_verify(g), 0);
}

static void
ir_verify_catches_a_layer_reading_a_later_tensor(void **state)
{
	Fx *fx = *state;
	Graph *g = graph_new(&fx->arena, "bad", "bad.odl", "odl");
	Shape s = { 1, { 10 } };
	int x = graph_add_input(g, "x", &s);
	int a = graph_add_layer(g, OP_RELU, "a", L1);
	int b = graph_add_layer(g, OP_RELU, "b", L2);
	int tb, nbad;

	layer_add_output(g, a, "a");
	layer_set_inputs(g, b, &x, 1);
	tb = layer_add_output(g, b, "b");
	layer_set_inputs(g, a, &tb, 1); /* a reads what b, later, makes */
	assert_string_equal(verify_text(fx, g, &nbad),
			    "bad.odl: internal: ir_verify: layer 'a' (0) reads a tensor made "
			    "later: not topological\n");
	assert_int_equal(nbad, 1);
}

static void
ir_verify_catches_a_layer_reading_itself(void **state)
{
	Fx *fx = *state;
	Graph *g = graph_new(&fx->arena, "bad", "bad.odl", "odl");
	int a = graph_add_layer(g, OP_RELU, "a", L1);
	int t = layer_add_output(g, a, "a");
	int nbad;

	layer_set_inputs(g, a, &t, 1);
	verify_text(fx, g, &nbad);
	assert_int_equal(nbad, 1);
}

static void
ir_verify_catches_duplicate_layer_names(void **state)
{
	Fx *fx = *state;
	Graph *g = graph_new(&fx->arena, "bad", "bad.odl", "odl");
	Shape s = { 1, { 10 } };
	int t = graph_add_input(g, "x", &s), nbad;
	const char *names[] = { "r", "s", "r", "t", "r" };
	const char *out;

	for (int i = 0; i < 5; i++) {
		int l = graph_add_layer(g, OP_RELU, names[i], L1);
		layer_set_inputs(g, l, &t, 1);
		t = layer_add_output(g, l, names[i]);
	}
	out = verify_text(fx, g, &nbad);
	/* three layers share one name: two reports */
	assert_int_equal(nbad, 2);
	assert_non_null(strstr(out, "bad.odl: internal: ir_verify: layer name 'r' used twice"));
}

static void
ir_verify_catches_indices_out_of_range(void **state)
{
	Fx *fx = *state;
	Graph *g = graph_new(&fx->arena, "bad", "bad.odl", "odl");
	Shape s = { 1, { 10 } };
	int x = graph_add_input(g, "x", &s), nowhere = 7, nbad;
	int a = graph_add_layer(g, OP_RELU, "a", L1);

	layer_set_inputs(g, a, &nowhere, 1);
	layer_add_output(g, a, "a");
	g->tensor[x].producer = 5;
	assert_string_equal(verify_text(fx, g, &nbad),
			    "bad.odl: internal: ir_verify: tensor 'x' (0) has a bad producer\n"
			    "bad.odl: internal: ir_verify: layer 'a' (0) reads a tensor out of "
			    "range\n");
	assert_int_equal(nbad, 2);
}

static void
ir_verify_checks_shapes_and_totals_once_their_passes_ran(void **state)
{
	Fx *fx = *state;
	Graph *g = tiny(fx);
	const char *out;
	int nbad;

	assert_true(shape_infer(g));
	assert_true(cost_annotate(g));
	g->tensor[1].elems++;
	g->total.macs++;
	out = verify_text(fx, g, &nbad);
	assert_int_equal(nbad, 2);
	assert_non_null(strstr(out, "tiny.odl: internal: ir_verify: tensor 'c' (1) element "
				    "count disagrees with its shape\n"));
	assert_non_null(strstr(out, "disagree with the layer sums"));
	/* the same damage is invisible before the passes claim the fields */
	g->done = 0;
	assert_int_equal(ir_verify(g), 0);
}

/* ---- diagnostics on layers --------------------------------------------- */

static void
layer_error_names_the_layer_and_its_op(void **state)
{
	Fx *fx = *state;
	Graph *g = tiny(fx);

	layer_error(g, &g->layer[0], "bad %s %d", "thing", 3);
	assert_string_equal(fx_diags(fx),
			    "tiny.odl:2:5: error: layer 'c' (conv): bad thing 3\n");
	assert_int_equal(diag_errors(), 1);
}

static void
layer_error_from_a_block_notes_the_calling_statement(void **state)
{
	Fx *fx = *state;
	Graph *g = tiny(fx);

	g->layer[1].loc = (Loc){ "blocks.odl", 9, 3 };
	layer_error(g, &g->layer[1], "oops");
	assert_string_equal(fx_diags(fx),
			    "blocks.odl:9:3: error: layer 'r' (relu): oops\n"
			    "tiny.odl:3:5: note: in the expansion of this statement\n");
	assert_int_equal(diag_errors(), 1);
}

/* ---- the text form ------------------------------------------------------ */

static void
ir_print_before_the_passes_shows_structure_only(void **state)
{
	Fx *fx = *state;

	assert_string_equal(print_text(fx, tiny(fx)),
			    "graph tiny (odl)\n"
			    "input x: 3x8x8\n"
			    "0 c = conv(x) -> c k=3x3 s=1x1 p=1x1+1x1 d=1x1 g=1 bias\n"
			    "1 r = relu(c) -> r\n");
}

/* c: 4 filters of 3x3x3 + 4 biases = 112 params; output 4x8x8, E = 256;
 * MACs = F*H*W*C*K*K = 4*8*8*3*3*3 = 6912; fwd = 2*6912 + E = 14080;
 * bwd_d = 2*6912 = 13824; bwd_w = fwd = 14080.  relu: fwd = bwd_d = E.
 * Kept for backward: x (conv input, a graph input: totals only) and r
 * (relu output, 256); c is read only by relu, which keeps its output. */
static void
ir_print_after_the_passes_is_a_stable_two_layer_dump(void **state)
{
	Fx *fx = *state;
	Graph *g = tiny(fx);

	assert_true(shape_infer(g));
	assert_true(cost_annotate(g));
	assert_true(memory_annotate(g));
	assert_string_equal(print_text(fx, g),
			    "graph tiny (odl)\n"
			    "input x: 3x8x8\n"
			    "0 c = conv(x) -> c:4x8x8 k=3x3 s=1x1 p=1x1+1x1 d=1x1 g=1 bias"
			    " w0=4x3x3x3 w1=4 params=112 macs=6912 fwd=14080 bwd_d=0"
			    " bwd_w=14080 saved=0\n"
			    "1 r = relu(c) -> r:4x8x8 params=0 macs=0 fwd=256 bwd_d=256 bwd_w=0"
			    " saved=256\n");
	assert_int_equal(g->keep[0][KEEP_PLAIN].input + g->layer[0].cost.act_elems +
				 g->layer[1].cost.act_elems,
			 192 + 256);
}

/* Attr.pad holds begins in pad[0..MAX_SPATIAL) and ends from
 * pad[MAX_SPATIAL]; the dump must show a 2-D conv's begins then ends. */
static void
ir_print_shows_pad_begins_then_ends(void **state)
{
	Fx *fx = *state;
	Graph *g = tiny(fx);
	Window *w = attr_window(g, &g->layer[0].attr);
	const char *out;

	memset(w->pad, 0, sizeof w->pad);
	w->pad[0] = 1;               /* top */
	w->pad[1] = 2;               /* left */
	w->pad[MAX_SPATIAL + 0] = 3; /* bottom */
	w->pad[MAX_SPATIAL + 1] = 4; /* right */
	out = print_text(fx, g);
	assert_string_equal(strstr(out, "0 c"), "0 c = conv(x) -> c k=3x3 s=1x1 p=1x2+3x4 d=1x1 "
						"g=1 bias\n1 r = relu(c) -> r\n");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		FX_TEST(graph_add_functions_return_consecutive_indices),
		FX_TEST(thousands_of_layers_keep_their_fields_as_arrays_grow),
		cmocka_unit_test(every_op_name_looks_up_to_its_own_kind),
		cmocka_unit_test(op_names_are_unique_lowercase_words),
		cmocka_unit_test(op_lookup_knows_the_odl_spellings_and_nothing_else),
		cmocka_unit_test(op_table_rows_agree_with_their_class),
		cmocka_unit_test(shape_elems_multiplies_the_dimensions),
		cmocka_unit_test(shape_elems_reports_overflow_and_leaves_the_result),
		cmocka_unit_test(shape_str_joins_dimensions_with_x),
		cmocka_unit_test(shape_eq_compares_rank_and_dimensions),
		FX_TEST(ir_verify_accepts_a_well_formed_graph_after_every_pass),
		FX_TEST(ir_verify_catches_a_layer_reading_a_later_tensor),
		FX_TEST(ir_verify_catches_a_layer_reading_itself),
		FX_TEST(ir_verify_catches_duplicate_layer_names),
		FX_TEST(ir_verify_catches_indices_out_of_range),
		FX_TEST(ir_verify_checks_shapes_and_totals_once_their_passes_ran),
		FX_TEST(layer_error_names_the_layer_and_its_op),
		FX_TEST(layer_error_from_a_block_notes_the_calling_statement),
		FX_TEST(ir_print_before_the_passes_shows_structure_only),
		FX_TEST(ir_print_after_the_passes_is_a_stable_two_layer_dump),
		FX_TEST(ir_print_shows_pad_begins_then_ends),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
