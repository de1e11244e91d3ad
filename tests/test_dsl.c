/* test_dsl.c -- frontend/dsl.c: includes, blocks, repeat, if, layer
 * naming, and the errors a model author sees. */
#include "harness.h"
#include "passes/passes.h"

#include <sys/wait.h>

static const char BLOCK_B[] = "block b(x, f, k=3, s=1) {\n"
			      "  y = conv(x, f, kernel=k, stride=s, pad=1);\n"
			      "  return y;\n"
			      "}\n";

/* BLOCK_B followed by a model whose body is `body`. */
static Graph *
load_with_b(Fx *fx, const char *body)
{
	return fx_load(fx, arena_printf(&fx->arena, "%smodel m {\n  input x: 3x32x32;\n%s}\n",
					BLOCK_B, body));
}

/* ---- blocks ------------------------------------------------------------- */

static void
block_defaults_and_keyword_arguments_fill_the_parameters(void **state)
{
	Fx *fx = *state;
	Graph *g = load_with_b(fx, "  c = b(x, 8, s=2);\n  d = b(c, f=4, k=1);\n");
	const Layer *c, *d;

	assert_non_null(g);
	assert_string_equal(fx_names(fx, g), "c/y d/y");
	c = fx_layer(g, "c/y");
	d = fx_layer(g, "d/y");
	assert_int_equal(c->attr.filters, 8);
	assert_int_equal(c->attr.kernel[0], 3);
	assert_int_equal(c->attr.stride[0], 2);
	assert_int_equal(d->attr.filters, 4);
	assert_int_equal(d->attr.kernel[0], 1);
	assert_int_equal(d->attr.stride[0], 1);
	/* d's block reads c's result */
	assert_int_equal(d->in[0], c->out[0]);
	/* the layer is at the block's statement, its site at the call */
	assert_int_equal(c->loc.line, 2);
	assert_int_equal(c->site.line, 7);
	assert_int_equal(d->site.line, 8);
}

static void
block_called_with_too_many_arguments_says_how_many_it_takes(void **state)
{
	Fx *fx = *state;

	assert_null(load_with_b(fx, "  c = b(x, 8, 3, 1, 5);\n"));
	assert_string_equal(fx_diags(fx),
			    "t.odl:7:21: error: block 'b' takes 4 arguments, got 5\n");
}

static void
block_called_without_a_required_argument_points_at_the_block(void **state)
{
	Fx *fx = *state;

	assert_null(load_with_b(fx, "  c = b(x);\n"));
	assert_string_equal(fx_diags(fx), "t.odl:7:7: error: block 'b': missing argument 'f'\n"
					  "t.odl:1:7: note: 'b' is declared here\n");
	assert_int_equal(diag_errors(), 1);
}

static void
block_keyword_arguments_must_name_a_parameter_once(void **state)
{
	Fx *fx = *state;

	assert_null(load_with_b(fx, "  c = b(x, 8, z=1);\n  d = b(x, 8, f=2);\n"));
	assert_string_equal(fx_diags(fx), "t.odl:7:15: error: block 'b' has no parameter 'z'\n"
					  "t.odl:8:15: error: parameter 'f' given twice\n");
}

static void
nested_blocks_name_layers_by_their_call_path(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_load(fx, "block inner(x) { r = relu(x); return r; }\n"
			       "block outer(x) { i = inner(x); j = inner(i); return j; }\n"
			       "model m { input x: 4; o = outer(x); o = outer(o); }\n");

	assert_non_null(g);
	assert_string_equal(fx_names(fx, g), "o/i/r o/j/r o_1/i/r o_1/j/r");
	assert_int_equal(fx_layer(g, "o_1/i/r")->in[0], fx_layer(g, "o/j/r")->out[0]);
}

static void
block_without_return_is_an_error_at_the_block(void **state)
{
	Fx *fx = *state;

	assert_null(fx_load(fx, "block b(x) { r = relu(x); }\n"
				"model m { input x: 4; y = b(x); }\n"));
	assert_string_equal(fx_diags(fx), "t.odl:1:7: error: block 'b' ends without 'return'\n"
					  "t.odl:2:23: note: called from here\n");
}

static void
block_calling_itself_is_reported_as_recursion(void **state)
{
	Fx *fx = *state;

	assert_null(fx_load(fx, "block r(x) { y = r(x); return y; }\n"
				"model m { input x: 4; z = r(x); }\n"));
	assert_string_equal(fx_diags(fx), "t.odl:1:18: error: block 'r' calls itself; recursion "
					  "is not allowed\n");
	assert_int_equal(diag_errors(), 1);
}

static void
blocks_calling_each_other_are_reported_as_recursion(void **state)
{
	Fx *fx = *state;

	assert_null(fx_load(fx, "block a(x) { y = b(x); return y; }\n"
				"block b(x) { y = a(x); return y; }\n"
				"model m { input x: 4; z = a(x); }\n"));
	assert_string_equal(fx_diags(fx), "t.odl:2:18: error: block 'a' calls itself; recursion "
					  "is not allowed\n");
	assert_int_equal(diag_errors(), 1);
}

static void
block_named_after_a_layer_kind_or_defined_twice_is_an_error(void **state)
{
	Fx *fx = *state;

	assert_null(fx_load(fx, "block relu(x) { return x; }\n"
				"block b(x) { return x; }\n"
				"block b(x, x) { return x; }\n"
				"model m { input x: 4; }\n"));
	assert_string_equal(fx_diags(fx),
			    "t.odl:1:7: error: block 'relu' has the name of a layer kind\n"
			    "t.odl:3:7: error: block 'b' is defined twice\n"
			    "t.odl:2:7: note: first defined here\n"
			    "t.odl:3:12: error: parameter 'x' declared twice\n");
}

/* ---- layer arguments ---------------------------------------------------- */

static void
pad_list_of_one_item_per_dimension_pads_both_sides(void **state)
{
	Fx *fx = *state;
	Graph *g;
	const Attr *a;

	/* a 3-D pad first, so stale stack memory in the argument code holds
	 * 7s rather than zeros that would hide a missed store */
	assert_non_null(fx_load(fx, "model m { input x: 3x8x8x8;\n"
				    "  c = conv(x, 4, kernel=3, pad=[7, 7, 7]); }"));
	g = fx_load(fx, "model m { input x: 3x8x8; c = conv(x, 4, kernel=[3, 3], pad=[1, 2]); }");
	assert_non_null(g);
	a = &fx_layer(g, "c")->attr;
	assert_int_equal(a->nspatial, 2);
	assert_int_equal(a->pad[0], 1);
	assert_int_equal(a->pad[1], 2);
	assert_int_equal(a->pad[MAX_SPATIAL + 0], 1);
	assert_int_equal(a->pad[MAX_SPATIAL + 1], 2);
	/* the dimension the list does not reach stays 0, as for the kernel */
	assert_int_equal(a->kernel[2], 0);
	assert_int_equal(a->pad[2], 0);
	assert_int_equal(a->pad[MAX_SPATIAL + 2], 0);
}

static void
scalar_arguments_fill_every_spatial_dimension(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_load(fx, "model m { input x: 3x8x8;\n"
			       "  c = conv(x, 4, kernel=3, stride=2, pad=1, dilation=2, groups=1,\n"
			       "           bias=false);\n"
			       "  p = maxpool(c, kernel=[2, 3], ceil=true); }");
	const Attr *c, *p;

	assert_non_null(g);
	c = &fx_layer(g, "c")->attr;
	p = &fx_layer(g, "p")->attr;
	for (int i = 0; i < MAX_SPATIAL; i++) {
		assert_int_equal(c->kernel[i], 3);
		assert_int_equal(c->stride[i], 2);
		assert_int_equal(c->dilation[i], 2);
		assert_int_equal(c->pad[i], 1);
		assert_int_equal(c->pad[MAX_SPATIAL + i], 1);
	}
	assert_int_equal(c->nspatial, 0); /* any rank: the shape pass decides */
	assert_false(c->bias);
	assert_int_equal(p->nspatial, 2);
	assert_int_equal(p->stride[0], 2); /* pool stride defaults to its kernel */
	assert_int_equal(p->stride[1], 3);
	assert_true(p->ceil_mode);
}

static void
list_arguments_must_agree_on_the_spatial_rank(void **state)
{
	Fx *fx = *state;

	assert_null(fx_load(fx, "model m { input x: 3x8x8;\n"
				"  c = conv(x, 4, kernel=[3, 3], stride=[1, 1, 1]); }"));
	assert_string_equal(fx_diags(fx), "t.odl:2:33: error: 'stride' has 3 items where other "
					  "arguments have 2\n");
}

/* ---- names and statements ----------------------------------------------- */

static void
unknown_name_is_reported_where_it_is_used(void **state)
{
	Fx *fx = *state;

	assert_null(fx_load(fx, "model m {\n  input x: 4;\n  y = relu(z);\n}\n"));
	assert_string_equal(fx_diags(fx), "t.odl:3:12: error: unknown name 'z'\n");
	assert_int_equal(diag_errors(), 1);
}

static void
unknown_layer_kind_is_reported_at_its_name(void **state)
{
	Fx *fx = *state;

	assert_null(fx_load(fx, "model m {\n  input x: 4;\n  y = relux(x);\n}\n"));
	assert_string_equal(fx_diags(fx), "t.odl:3:7: error: unknown layer kind or block "
					  "'relux'\n");
}

static void
layer_arguments_are_checked_against_the_op(void **state)
{
	Fx *fx = *state;

	assert_null(fx_load(fx, "model m {\n  input x: 4x8x8;\n"
				"  a = add(x);\n"
				"  b = relu(x, x);\n"
				"  c = conv(x, kernel=3);\n"
				"  d = relu(x, foo=1);\n"
				"  e = conv(x, 8, 9, kernel=3);\n"
				"}\n"));
	assert_string_equal(fx_diags(fx),
			    "t.odl:3:7: error: add: expects at least 2 input tensors, got 1\n"
			    "t.odl:4:15: error: relu: takes at most 1 input tensor\n"
			    "t.odl:5:7: error: conv: missing argument 'filters'\n"
			    "t.odl:6:15: error: relu: unknown argument 'foo'\n"
			    "t.odl:7:18: error: conv: unexpected argument (an integer)\n");
}

static void
input_needs_a_model_a_fresh_name_and_dimensions(void **state)
{
	Fx *fx = *state;

	assert_null(fx_load(fx, "block b(x) { input y: 4; return x; }\n"
				"model m {\n  input x: 4;\n  input x: 5;\n  input z: 0x3;\n"
				"  y = b(x);\n}\n"));
	assert_string_equal(fx_diags(fx),
			    "t.odl:4:3: error: 'x' is already defined\n"
			    "t.odl:5:12: error: input dimension 0 is out of range (1 to 2^40)\n"
			    "t.odl:1:14: error: 'input' is only allowed in a model\n");
}

/* `input x: [s, h] as tokens;`: a sequence of s tokens, the model's
 * length; only `tokens` follows `as`, and a second sequence input must be
 * as long. */
static void
input_as_tokens_is_the_models_sequence(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_load(fx, "model m {\n  input x: [16, 4] as tokens;\n  input m: 16;\n"
			       "  y = relu(x);\n}\n");

	assert_non_null(g);
	assert_int_equal(g->seq_len, 16);
	assert_true(g->tensor[g->input[0]].seq);
	assert_false(g->tensor[g->input[1]].seq);
	g = fx_load(fx, "model m {\n  input x: 8x4;\n  y = relu(x);\n}\n");
	assert_non_null(g);
	assert_int_equal(g->seq_len, 0);
	assert_null(fx_load(fx, "model m {\n  input x: 8x4 as frames;\n  input y: 8 as tokens;\n"
				"  input z: 6 as tokens;\n  r = relu(y);\n}\n"));
	assert_string_equal(fx_diags(fx),
			    "t.odl:2:19: error: 'as frames': an input may only be 'as tokens'\n"
			    "t.odl:4:17: error: input 'z' is a sequence of 6 tokens, the model's "
			    "of 8\n");
}

/* The calls of a block that one statement of the model made again and
 * again (a repeat's body) are repeated blocks: a unit each, a stack
 * between the layers before and after; two calls made by two statements
 * are not. */
static void
repeated_block_calls_are_a_stack(void **state)
{
	Fx *fx = *state;
	static const char blk[] = "block blk(x) {\n  a = fc(x, 8);\n  b = relu(a);\n"
				  "  return b;\n}\n";
	Graph *g = fx_run(fx, arena_printf(&fx->arena, "%smodel m {\n  input x: 4x8 as tokens;\n"
					  "  h = fc(x, 8);\n  repeat 3 { h = blk(h); }\n"
					  "  out = fc(h, 10);\n}\n", blk), PASS_MEMORY);
	char roles[16] = "";
	Modules m;

	assert_non_null(g);
	modules_derive(g, &m);
	assert_true(m.stack);
	for (int u = 0; u < m.nunit && u < 15; u++)
		roles[u] = m.unit[u].role;
	assert_string_equal(roles, "EtttL");
	assert_string_equal(m.unit[1].name, "h_1");
	assert_int_equal(m.unit[1].last - m.unit[1].first, 1);
	g = fx_run(fx, arena_printf(&fx->arena, "%smodel m {\n  input x: 4x8;\n"
				   "  h = blk(x);\n  k = blk(h);\n}\n", blk), PASS_MEMORY);
	modules_derive(g, &m);
	assert_false(m.stack);
	assert_string_equal(m.stack_why, "the model has no repeated blocks");
	assert_int_equal(m.nunit, 4);
}

static void
model_without_input_is_an_error(void **state)
{
	Fx *fx = *state;

	assert_null(fx_load(fx, "model empty {\n}\n"));
	assert_string_equal(fx_diags(fx), "t.odl:1:7: error: model 'empty' declares no input\n");
}

static void
file_without_exactly_one_model_is_an_error(void **state)
{
	Fx *fx = *state;

	assert_null(fx_load(fx, "block b(x) { return x; }\n"));
	assert_string_equal(fx_diags(fx), "t.odl: error: no model in this file\n");
}

static void
second_model_in_a_file_is_an_error(void **state)
{
	Fx *fx = *state;

	assert_null(fx_load(fx, "model a { input x: 4; }\nmodel b { input x: 4; }\n"));
	assert_string_equal(fx_diags(fx), "t.odl:2:7: error: a second model 'b' in one file\n"
					  "t.odl:1:7: note: the first is 'a'\n");
}

static void
dataset_size_accepts_suffixes(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_load(fx, "model m { input x: 4; dataset 1.28M; }\n");

	assert_non_null(g);
	assert_int_equal(g->dataset_size, 1280000);
	assert_string_equal(g->name, "m");
	assert_string_equal(g->format, "odl");
}

static void
integer_arithmetic_errors_are_reported(void **state)
{
	Fx *fx = *state;

	assert_null(fx_load(fx, "model m { input x: 4;\n"
				"  a = 1 / 0;\n"
				"  b = 7 % (2 - 2);\n"
				"  c = 7 % 3 * 5 - 20 / 6;\n"
				"  repeat c - 7 { x = relu(x); }\n"
				"}\n"));
	assert_string_equal(fx_diags(fx), "t.odl:2:9: error: division by zero\n"
					  "t.odl:3:9: error: division by zero\n"
					  "t.odl:5:12: error: repeat count must be an integer "
					  "from 0 to 1048576\n");
}

static void
arithmetic_on_wrong_kinds_and_overflow_are_reported(void **state)
{
	Fx *fx = *state;

	assert_null(fx_load(fx, "model m { input x: 4;\n"
				"  c = 4Gi * 4Gi * 4Gi;\n"
				"  d = x + 1;\n"
				"  if x { y = relu(x); }\n"
				"}\n"));
	assert_string_equal(fx_diags(fx),
			    "t.odl:2:11: error: integer overflow in '*'\n"
			    "t.odl:3:9: error: '+' needs integers, not a tensor and an integer\n"
			    "t.odl:4:6: error: a condition must be a boolean or an integer, not a "
			    "tensor\n");
}

/* ---- naming ------------------------------------------------------------- */

static void
rebinding_a_name_numbers_the_layers(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_load(fx, "model m { input x: 4; x = relu(x); x = relu(x); y = sigmoid(x); }");

	assert_non_null(g);
	assert_string_equal(fx_names(fx, g), "x_1 x_2 y");
	/* each statement reads the latest binding */
	assert_int_equal(g->layer[0].in[0], g->input[0]);
	assert_int_equal(g->layer[1].in[0], g->layer[0].out[0]);
	assert_int_equal(g->layer[2].in[0], g->layer[1].out[0]);
	assert_string_equal(g->tensor[g->layer[1].out[0]].name, "x_2");
}

static void
generated_names_skip_names_already_taken(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_load(fx, "model m { input x: 4;\n"
			       "  x_1 = relu(x); x = relu(x_1); x = relu(x); x_2 = relu(x); }");

	assert_non_null(g);
	assert_string_equal(fx_names(fx, g), "x_1 x_2 x_3 x_2_1");
	assert_int_equal(ir_verify(g), 0);
}

static void
outputs_are_the_unread_tensors_unless_named(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_load(fx, "model m { input x: 4; a = relu(x); b = relu(a); c = relu(a); }");

	assert_non_null(g);
	assert_false(fx_out(g, "a")->output);
	assert_true(fx_out(g, "b")->output);
	assert_true(fx_out(g, "c")->output);
	assert_false(g->tensor[g->input[0]].output);
}

static void
output_statement_names_the_outputs(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_load(fx, "model m { input x: 4; a = relu(x); b = relu(a); c = relu(a);\n"
			       "  output a, c; }");

	assert_non_null(g);
	assert_true(fx_out(g, "a")->output);
	assert_false(fx_out(g, "b")->output);
	assert_true(fx_out(g, "c")->output);
}

/* ---- repeat and if ------------------------------------------------------ */

static void
repeat_as_binds_the_iteration_number(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_load(fx, "model m { input x: 3x8x8;\n"
			       "  repeat 3 as i { x = conv(x, 8 * (i + 1), kernel=1); }\n"
			       "  repeat 0 { x = relu(x); }\n"
			       "}\n");

	assert_non_null(g);
	assert_string_equal(fx_names(fx, g), "x_1 x_2 x_3");
	assert_int_equal(g->layer[0].attr.filters, 8);
	assert_int_equal(g->layer[1].attr.filters, 16);
	assert_int_equal(g->layer[2].attr.filters, 24);
}

static void
repeat_count_out_of_range_is_rejected(void **state)
{
	Fx *fx = *state;

	assert_null(fx_load(fx, "model m { input x: 4;\n"
				"  repeat 4194305 { x = relu(x); }\n"
				"  repeat -1 { x = relu(x); }\n"
				"  repeat 1.5 { x = relu(x); }\n"
				"}\n"));
	assert_string_equal(fx_diags(fx),
			    "t.odl:2:10: error: repeat count must be an integer from 0 to 1048576\n"
			    "t.odl:3:10: error: repeat count must be an integer from 0 to 1048576\n"
			    "t.odl:4:10: error: repeat count must be an integer from 0 to "
			    "1048576\n");
}

static void
error_inside_a_repeat_is_reported_once(void **state)
{
	Fx *fx = *state;

	assert_null(fx_load(fx, "model m { input x: 4;\n  repeat 100 { y = relu(z); }\n}\n"));
	assert_string_equal(fx_diags(fx), "t.odl:2:25: error: unknown name 'z'\n");
	assert_int_equal(diag_errors(), 1);
}

static void
if_else_runs_the_branch_its_condition_picks(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_load(fx, "block act(x, n) {\n"
			       "  if n > 2 { y = relu(x); } else { y = sigmoid(x); }\n"
			       "  if n == 3 { y = tanh(y); }\n"
			       "  return y;\n"
			       "}\n"
			       "model m { input x: 4; a = act(x, 3); b = act(x, 1);"
			       " c = act(x, 5); }\n");

	assert_non_null(g);
	assert_string_equal(fx_names(fx, g), "a/y a/y_1 b/y c/y");
	assert_int_equal(fx_layer(g, "a/y")->op, OP_RELU);
	assert_int_equal(fx_layer(g, "a/y_1")->op, OP_TANH);
	assert_int_equal(fx_layer(g, "b/y")->op, OP_SIGMOID);
	assert_int_equal(fx_layer(g, "c/y")->op, OP_RELU);
}

/* ---- memory while expanding ----------------------------------------------- */

/* Values live on the stack, rebinding overwrites, block scopes are taken
 * back when the call returns: 200,000 steps that make no layer (lists
 * bound in a loop, calls of a block that returns its input) grow the
 * arena by nothing like the ~1 KB per step they took when every value
 * was allocated. */
static void
steps_that_make_no_layer_take_no_memory(void **state)
{
	Fx *fx = *state;
	size_t before = fx->arena.total;
	Graph *g;

	g = fx_load(fx,
		    "block id(t, k=[1, 2, 3, 4, 5, 6, 7, 8]) {\n"
		    "  j = k; repeat 2 as i { j = i; } return t;\n"
		    "}\n"
		    "model m {\n"
		    "  input x: 4;\n"
		    "  repeat 200 { repeat 1000 { k = [1, 2, 3, 4, 5, 6, 7, 8]; y = id(x); } }\n"
		    "  y = relu(y);\n"
		    "}\n");
	assert_non_null(g);
	/* a call that makes no layer takes no name: the relu is "y" */
	assert_string_equal(fx_names(fx, g), "y");
	assert_true(fx->arena.total - before < 1 << 20);
}

/* A block's own names survive the nested calls and repeats it runs, which
 * take their scratch memory after its own and give it back. */
static void
block_scope_survives_nested_calls_and_repeats(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_load(fx, "block leaf(t) { k = [2, 2]; u = maxpool(t, kernel=k); return u; }\n"
			       "block outer(t, n) {\n"
			       "  f = 3; a = leaf(t);\n"
			       "  repeat n as i { z = [i, i, i]; a = leaf(a); }\n"
			       "  c = conv(a, f, kernel=1); return c;\n"
			       "}\n"
			       "model m { input x: 1x16x16; o = outer(x, 2); }\n");

	assert_non_null(g);
	assert_string_equal(fx_names(fx, g), "o/a/u o/a_1/u o/a_2/u o/c");
	assert_int_equal(fx_layer(g, "o/c")->attr.filters, 3);
	assert_int_equal(fx_layer(g, "o/a_2/u")->attr.kernel[1], 2);
}

/* ---- includes ----------------------------------------------------------- */

static void
include_paths_are_relative_to_the_including_file(void **state)
{
	Fx *fx = *state;
	Graph *g;

	fx_write(fx, "lib/blocks.odl", "include \"act.odl\";\n"
				       "block b(x) { y = act(x); return y; }\n");
	fx_write(fx, "lib/act.odl", "block act(x) { r = relu(x); return r; }\n");
	g = fx_load(fx, "include \"lib/blocks.odl\";\nmodel m { input x: 4; c = b(x); }\n");
	assert_non_null(g);
	assert_string_equal(fx_names(fx, g), "c/y/r");
	assert_int_equal(fx->files.n, 3);
	assert_string_equal(fx->files.path[0], arena_printf(&fx->arena, "%s/t.odl", fx->dir));
	assert_string_equal(fx->files.path[1],
			    arena_printf(&fx->arena, "%s/lib/blocks.odl", fx->dir));
	assert_string_equal(fx->files.path[2], arena_printf(&fx->arena, "%s/lib/act.odl", fx->dir));
}

static void
file_included_twice_is_loaded_once(void **state)
{
	Fx *fx = *state;
	Graph *g;

	fx_write(fx, "common.odl", "block act(x) { r = relu(x); return r; }\n");
	fx_write(fx, "a.odl", "include \"common.odl\";\n");
	fx_write(fx, "sub/b.odl", "include \"../common.odl\";\n");
	g = fx_load(fx, "include \"a.odl\";\ninclude \"sub/b.odl\";\n"
			"model m { input x: 4; y = act(x); }\n");
	assert_non_null(g);
	assert_string_equal(fx_diags(fx), "");
	assert_int_equal(fx->files.n, 4);
}

static void
include_cycle_is_reported_at_the_include(void **state)
{
	Fx *fx = *state;

	fx_write(fx, "a.odl", "block b(x) { return x; }\ninclude \"t.odl\";\n");
	assert_null(fx_load(fx, "include \"a.odl\";\nmodel m { input x: 4; }\n"));
	assert_string_equal(fx_diags(fx), "a.odl:2:1: error: include cycle: 't.odl' includes "
					  "itself\n"
					  "t.odl:1:1: note: 'a.odl' is included from here\n");
	assert_int_equal(diag_errors(), 1);
}

static void
file_including_itself_is_a_cycle(void **state)
{
	Fx *fx = *state;

	assert_null(fx_load(fx, "include \"t.odl\";\nmodel m { input x: 4; }\n"));
	assert_string_equal(fx_diags(fx), "t.odl:1:1: error: include cycle: 't.odl' includes "
					  "itself\n");
}

static void
missing_include_is_reported_at_the_include(void **state)
{
	Fx *fx = *state;

	assert_null(fx_load(fx, "model m { input x: 4; }\ninclude \"nope.odl\";\n"));
	assert_string_equal(fx_diags(fx), "t.odl:2:1: error: cannot read 'nope.odl': No such "
					  "file or directory\n");
}

static void
missing_main_file_is_reported_without_a_line(void **state)
{
	Fx *fx = *state;

	assert_null(dsl_load("/nonexistent/oraclec/model.odl", &fx->arena, &fx->files));
	assert_string_equal(fx_diags(fx), "/nonexistent/oraclec/model.odl: error: cannot read "
					  "file: No such file or directory\n");
	assert_int_equal(fx->files.n, 0);
}

/* The unterminated string is the one mistake; the loader must not go on
 * to read a file named "" for it. */
static void
include_with_an_unterminated_string_is_one_error(void **state)
{
	Fx *fx = *state;

	assert_null(fx_load(fx, "include \"lib.odl\n;\nmodel m { input x: 4; }\n"));
	assert_string_equal(fx_diags(fx), "t.odl:1:9: error: unterminated string\n");
	assert_int_equal(diag_errors(), 1);
}

/* A sum of 200,001 ones parses into a left-leaning tree 200,000 deep (the
 * parser's own stack stays shallow).  Evaluating it must not recurse once
 * per term: with an 8 MiB stack that overflows.  The load runs in a child
 * process so a crash fails this test instead of ending the test program.
 * Either outcome is fine: the value, or one diagnostic about the limit. */
static void
very_long_expression_is_evaluated_or_rejected_without_crashing(void **state)
{
	enum { N = 200000 };
	Fx *fx = *state;
	char *text = xcalloc(2 * N + 100, 1), *p = text;
	int status;
	pid_t pid;

	p += sprintf(p, "model m { input x: 4; n = 1");
	for (int i = 0; i < N; i++)
		p += sprintf(p, "+1");
	sprintf(p, "; repeat n - %d { x = relu(x); } }\n", N);
	fx_write(fx, "t.odl", text);
	free(text);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		Graph *g = dsl_load(arena_printf(&fx->arena, "%s/t.odl", fx->dir), &fx->arena,
				    &fx->files);
		_exit(g ? (g->nlayer == 1 ? 0 : 3) : (diag_errors() == 1 ? 0 : 4));
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (WIFSIGNALED(status))
		fail_msg("loading a %d-term sum died of signal %d", N + 1, WTERMSIG(status));
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		FX_TEST(block_defaults_and_keyword_arguments_fill_the_parameters),
		FX_TEST(block_called_with_too_many_arguments_says_how_many_it_takes),
		FX_TEST(block_called_without_a_required_argument_points_at_the_block),
		FX_TEST(block_keyword_arguments_must_name_a_parameter_once),
		FX_TEST(nested_blocks_name_layers_by_their_call_path),
		FX_TEST(block_without_return_is_an_error_at_the_block),
		FX_TEST(block_calling_itself_is_reported_as_recursion),
		FX_TEST(blocks_calling_each_other_are_reported_as_recursion),
		FX_TEST(block_named_after_a_layer_kind_or_defined_twice_is_an_error),
		FX_TEST(pad_list_of_one_item_per_dimension_pads_both_sides),
		FX_TEST(scalar_arguments_fill_every_spatial_dimension),
		FX_TEST(list_arguments_must_agree_on_the_spatial_rank),
		FX_TEST(unknown_name_is_reported_where_it_is_used),
		FX_TEST(unknown_layer_kind_is_reported_at_its_name),
		FX_TEST(layer_arguments_are_checked_against_the_op),
		FX_TEST(input_needs_a_model_a_fresh_name_and_dimensions),
		FX_TEST(input_as_tokens_is_the_models_sequence),
		FX_TEST(repeated_block_calls_are_a_stack),
		FX_TEST(model_without_input_is_an_error),
		FX_TEST(file_without_exactly_one_model_is_an_error),
		FX_TEST(second_model_in_a_file_is_an_error),
		FX_TEST(dataset_size_accepts_suffixes),
		FX_TEST(integer_arithmetic_errors_are_reported),
		FX_TEST(arithmetic_on_wrong_kinds_and_overflow_are_reported),
		FX_TEST(rebinding_a_name_numbers_the_layers),
		FX_TEST(generated_names_skip_names_already_taken),
		FX_TEST(outputs_are_the_unread_tensors_unless_named),
		FX_TEST(output_statement_names_the_outputs),
		FX_TEST(repeat_as_binds_the_iteration_number),
		FX_TEST(repeat_count_out_of_range_is_rejected),
		FX_TEST(error_inside_a_repeat_is_reported_once),
		FX_TEST(if_else_runs_the_branch_its_condition_picks),
		FX_TEST(steps_that_make_no_layer_take_no_memory),
		FX_TEST(block_scope_survives_nested_calls_and_repeats),
		FX_TEST(include_paths_are_relative_to_the_including_file),
		FX_TEST(file_included_twice_is_loaded_once),
		FX_TEST(include_cycle_is_reported_at_the_include),
		FX_TEST(file_including_itself_is_a_cycle),
		FX_TEST(missing_include_is_reported_at_the_include),
		FX_TEST(missing_main_file_is_reported_without_a_line),
		FX_TEST(include_with_an_unterminated_string_is_one_error),
		FX_TEST(very_long_expression_is_evaluated_or_rejected_without_crashing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
