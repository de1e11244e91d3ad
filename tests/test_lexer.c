/* test_lexer.c -- grammar/lex.l and parse.y through dsl_parse(): literals,
 * comments, locations, and the syntax errors one run reports. */
#include "harness.h"

/* The model declaration among the parsed ones (the test's only model). */
static const Decl *
model_of(const Decl *d)
{
	for (; d; d = d->next)
		if (d->kind == D_MODEL)
			return d;
	fail_msg("no model parsed");
	return NULL;
}

/* The expression of `lhs = expr;` in the model body. */
static const Expr *
let(const Decl *decls, const char *lhs)
{
	for (const Stmt *s = model_of(decls)->body; s; s = s->next)
		if (s->kind == ST_LET && strcmp(s->lhs, lhs) == 0)
			return s->expr;
	fail_msg("no statement '%s = ...;'", lhs);
	return NULL;
}

/* The integer that `lhs = NUMBER;` holds; fails unless it is E_INT. */
static int64_t
int_of(const Decl *decls, const char *lhs)
{
	const Expr *e = let(decls, lhs);

	if (e->kind != E_INT)
		fail_msg("'%s' is expression kind %d, not an integer", lhs, e->kind);
	return e->ival;
}

static int
count_stmts(const Stmt *s)
{
	int n = 0;

	for (; s; s = s->next)
		n++;
	return n;
}

/* ---- numbers ------------------------------------------------------------ */

static void
underscores_in_numbers_are_ignored(void **state)
{
	Fx *fx = *state;
	Decl *d = fx_parse(fx, "model m { a = 1_281_167; b = 1_0; c = 100; }");

	assert_int_equal(diag_errors(), 0);
	assert_int_equal(int_of(d, "a"), 1281167);
	assert_int_equal(int_of(d, "b"), 10);
	assert_int_equal(int_of(d, "c"), 100);
}

static void
decimal_size_suffix_gives_an_exact_integer(void **state)
{
	Fx *fx = *state;
	Decl *d = fx_parse(fx, "model m { a = 1.28M; b = 5K; c = 3G; d = 2T; e = 0.5K; }");

	assert_int_equal(diag_errors(), 0);
	assert_int_equal(int_of(d, "a"), 1280000);
	assert_int_equal(int_of(d, "b"), 5000);
	assert_int_equal(int_of(d, "c"), 3000000000);
	assert_int_equal(int_of(d, "d"), 2000000000000);
	assert_int_equal(int_of(d, "e"), 500);
}

static void
binary_size_suffix_uses_powers_of_1024(void **state)
{
	Fx *fx = *state;
	Decl *d = fx_parse(fx, "model m { a = 64Ki; b = 1Mi; c = 1.5Ki; d = 2Gi; e = 1Ti; }");

	assert_int_equal(diag_errors(), 0);
	assert_int_equal(int_of(d, "a"), 65536);
	assert_int_equal(int_of(d, "b"), 1048576);
	assert_int_equal(int_of(d, "c"), 1536);
	assert_int_equal(int_of(d, "d"), 2147483648);
	assert_int_equal(int_of(d, "e"), 1099511627776);
}

static void
exponent_that_comes_out_whole_is_an_integer(void **state)
{
	Fx *fx = *state;
	Decl *d = fx_parse(fx, "model m { a = 2.5e3; b = 1e6; c = 1E2; }");

	assert_int_equal(diag_errors(), 0);
	assert_int_equal(int_of(d, "a"), 2500);
	assert_int_equal(int_of(d, "b"), 1000000);
	assert_int_equal(int_of(d, "c"), 100);
}

static void
number_that_is_not_whole_stays_a_float(void **state)
{
	Fx *fx = *state;
	Decl *d = fx_parse(fx, "model m { a = 1.5; b = 1e-3; c = 0.1K; d = 1.0001K; }");
	const Expr *a = let(d, "a"), *b = let(d, "b"), *c = let(d, "c"), *e = let(d, "d");

	assert_int_equal(diag_errors(), 0);
	assert_int_equal(a->kind, E_FLOAT);
	assert_true(a->fval == 1.5);
	assert_int_equal(b->kind, E_FLOAT);
	assert_true(b->fval == 1e-3);
	/* 0.1K is exactly 100 */
	assert_int_equal(c->kind, E_INT);
	assert_int_equal(c->ival, 100);
	assert_int_equal(e->kind, E_FLOAT);
	assert_true(e->fval > 1000.09 && e->fval < 1000.11);
}

static void
number_beyond_64_bits_is_an_error_with_its_place(void **state)
{
	Fx *fx = *state;

	fx_parse(fx, "model m {\n  a = 99999999999999999999;\n}");
	assert_string_equal(fx_diags(fx),
			    "t.odl:2:7: error: number '99999999999999999999' is too large\n");
	assert_int_equal(diag_errors(), 1);
}

static void
digits_followed_by_letters_are_a_bad_number(void **state)
{
	Fx *fx = *state;
	Decl *d = fx_parse(fx, "model m { a = 12abc; b = 3; }");

	assert_string_equal(fx_diags(fx), "t.odl:1:15: error: bad number '12abc'\n");
	/* reported once, and the parse goes on */
	assert_int_equal(int_of(d, "b"), 3);
}

static void
dims_literal_is_a_list_of_integers(void **state)
{
	Fx *fx = *state;
	Decl *d = fx_parse(fx, "model m { a = 3x224x224; b = 10x1; }");
	const Expr *a = let(d, "a"), *b = let(d, "b");
	const Expr *i;

	assert_int_equal(diag_errors(), 0);
	assert_int_equal(a->kind, E_LIST);
	i = a->list;
	assert_int_equal(i->kind, E_INT);
	assert_int_equal(i->ival, 3);
	assert_int_equal(i->next->ival, 224);
	assert_int_equal(i->next->next->ival, 224);
	assert_null(i->next->next->next);
	assert_int_equal(b->list->ival, 10);
	assert_int_equal(b->list->next->ival, 1);
	assert_null(b->list->next->next);
}

static void
dims_literal_too_large_is_an_error(void **state)
{
	Fx *fx = *state;

	fx_parse(fx, "model m { a = 3x99999999999999999999; }");
	assert_string_equal(fx_diags(fx), "t.odl:1:15: error: dimension in "
					  "'3x99999999999999999999' is too large\n");
}

/* ---- comments, strings, locations ---------------------------------------- */

static void
all_three_comment_forms_are_skipped(void **state)
{
	Fx *fx = *state;
	Decl *d = fx_parse(fx, "// line comment\n"
			       "# hash comment\n"
			       "model m { /* inline */ a = 1; // to the end\n"
			       "  /* two\n"
			       "     lines * with / stars */ b = 2; # tail\n"
			       "}\n");
	const Decl *m = model_of(d);

	assert_int_equal(diag_errors(), 0);
	assert_int_equal(count_stmts(m->body), 2);
	assert_int_equal(int_of(d, "a"), 1);
	assert_int_equal(int_of(d, "b"), 2);
	/* locations keep counting through comments */
	assert_int_equal(m->loc.line, 3);
	assert_int_equal(m->loc.col, 7);
	assert_int_equal(m->body->next->loc.line, 5);
	assert_int_equal(m->body->next->loc.col, 30);
}

static void
columns_count_bytes_from_one(void **state)
{
	Fx *fx = *state;
	Decl *d = fx_parse(fx, "model m {\n\tinput x: 3;\n    y = relu(x);\n}");
	const Stmt *in = model_of(d)->body, *y = in->next;

	assert_int_equal(in->loc.line, 2);
	assert_int_equal(in->loc.col, 2);
	assert_int_equal(y->loc.line, 3);
	assert_int_equal(y->loc.col, 5);
	assert_int_equal(y->callee_loc.col, 9);
	assert_string_equal(y->loc.file, "t.odl");
}

/* The diagnostic belongs where the comment opens, as in gcc; the scanner
 * reports the place of the last piece of comment text it read. */
static void
unterminated_comment_is_reported_where_it_opens(void **state)
{
	Fx *fx = *state;

	fx_parse(fx, "model m { }\n"
		     "  /* never\n"
		     "  closed * really\n");
	assert_string_equal(fx_diags(fx), "t.odl:2:3: error: unterminated comment\n");
	assert_int_equal(diag_errors(), 1);
}

static void
unterminated_string_is_reported_at_its_quote(void **state)
{
	Fx *fx = *state;
	Decl *d = fx_parse(fx, "model m { }\ninclude \"blocks.odl\n;\n");

	assert_string_equal(fx_diags(fx), "t.odl:2:9: error: unterminated string\n");
	assert_int_equal(diag_errors(), 1);
	/* the string ends at the line's end, and the statement still parses */
	assert_int_equal(d->next->kind, D_INCLUDE);
	assert_string_equal(d->next->name, "");
}

static void
string_escapes_keep_the_escaped_character(void **state)
{
	Fx *fx = *state;
	Decl *d = fx_parse(fx, "include \"a\\\"b\\\\c.odl\";");

	assert_int_equal(diag_errors(), 0);
	assert_int_equal(d->kind, D_INCLUDE);
	assert_string_equal(d->name, "a\"b\\c.odl");
}

static void
stray_characters_are_reported_and_skipped(void **state)
{
	Fx *fx = *state;
	Decl *d = fx_parse(fx, "model m { a = 1; @ b = 2; \x01 \xff $ }");

	assert_string_equal(fx_diags(fx), "t.odl:1:18: error: stray '@' in input\n"
					  "t.odl:1:27: error: stray byte 0x01 in input\n"
					  "t.odl:1:29: error: stray byte 0xff in input\n"
					  "t.odl:1:31: error: stray '$' in input\n");
	assert_int_equal(diag_errors(), 4);
	assert_int_equal(int_of(d, "b"), 2);
}

static void
errors_beyond_fifty_are_counted_but_not_shown(void **state)
{
	Fx *fx = *state;
	char text[61];
	const char *out, *last;
	int lines = 0;

	memset(text, '@', 60);
	text[60] = '\0';
	fx_parse(fx, text);
	assert_int_equal(diag_errors(), 60);
	out = fx_diags(fx);
	for (const char *p = out; *p; p++)
		lines += *p == '\n';
	assert_int_equal(lines, 51);
	last = strstr(out, "t.odl:1:50: error: stray '@' in input\n");
	assert_non_null(last);
	assert_string_equal(last + strlen("t.odl:1:50: error: stray '@' in input\n"),
			    "oraclec: too many errors, the rest are not shown\n");
}

/* ---- syntax ------------------------------------------------------------- */

static void
keywords_need_a_whole_word(void **state)
{
	Fx *fx = *state;
	Decl *d = fx_parse(fx, "model m { models = 1; input_x = 2; iffy = 3; }");

	assert_int_equal(diag_errors(), 0);
	assert_int_equal(int_of(d, "models"), 1);
	assert_int_equal(int_of(d, "input_x"), 2);
	assert_int_equal(int_of(d, "iffy"), 3);
}

static void
syntax_error_has_line_and_column(void **state)
{
	Fx *fx = *state;

	fx_parse(fx, "model m {\n  input x 3;\n}\n");
	assert_string_equal(fx_diags(fx), "t.odl:2:11: error: syntax error, unexpected number, "
					  "expecting ':'\n");
	assert_int_equal(diag_errors(), 1);
}

static void
syntax_error_lists_the_tokens_expected(void **state)
{
	Fx *fx = *state;

	/* bison stays silent until three tokens after a recovery shifted, so
	 * the errors are a declaration apart */
	fx_parse(fx, "block b(x { }\nmodel ok { }\nmodel { }\nmodel m { y = relu(x) }\n");
	assert_string_equal(fx_diags(fx),
			    "t.odl:1:11: error: syntax error, unexpected '{', expecting ')' or ',' "
			    "or '='\n"
			    "t.odl:3:7: error: syntax error, unexpected '{', expecting identifier\n"
			    "t.odl:4:23: error: syntax error, unexpected '}', expecting ';'\n");
	assert_int_equal(diag_errors(), 3);
}

static void
several_syntax_errors_are_reported_in_one_run(void **state)
{
	Fx *fx = *state;
	Decl *d = fx_parse(fx, "model m {\n"
			       "  a = ;\n"
			       "  b = conv(;\n"
			       "  c = 1;\n"
			       "  d = 2 +;\n"
			       "  e = 5;\n"
			       "}\n");

	assert_string_equal(fx_diags(fx), "t.odl:2:7: error: syntax error, unexpected ';'\n"
					  "t.odl:3:12: error: syntax error, unexpected ';'\n"
					  "t.odl:5:10: error: syntax error, unexpected ';'\n");
	assert_int_equal(diag_errors(), 3);
	/* recovery at ';' keeps the good statements */
	assert_int_equal(count_stmts(model_of(d)->body), 2);
	assert_int_equal(int_of(d, "c"), 1);
	assert_int_equal(int_of(d, "e"), 5);
}

static void
declarations_come_back_in_source_order(void **state)
{
	Fx *fx = *state;
	Decl *d = fx_parse(fx, "include \"a.odl\";\n"
			       "block b(x, n = 2, s) { return x; }\n"
			       "model m { input x: 3x8x8; }\n");
	const Param *p;

	assert_int_equal(diag_errors(), 0);
	assert_int_equal(d->kind, D_INCLUDE);
	assert_string_equal(d->name, "a.odl");
	d = d->next;
	assert_int_equal(d->kind, D_BLOCK);
	assert_string_equal(d->name, "b");
	p = d->params;
	assert_string_equal(p->name, "x");
	assert_null(p->deflt);
	assert_string_equal(p->next->name, "n");
	assert_int_equal(p->next->deflt->ival, 2);
	assert_string_equal(p->next->next->name, "s");
	assert_null(p->next->next->next);
	d = d->next;
	assert_int_equal(d->kind, D_MODEL);
	assert_string_equal(d->name, "m");
	assert_null(d->next);
}

static void
multiplication_binds_tighter_than_addition(void **state)
{
	Fx *fx = *state;
	Decl *d = fx_parse(fx, "model m { a = 1 + 2 * 3; b = (1 + 2) * 3; c = -4 - 1; }");
	const Expr *a = let(d, "a"), *b = let(d, "b"), *c = let(d, "c");

	assert_int_equal(diag_errors(), 0);
	assert_int_equal(a->kind, E_BINOP);
	assert_int_equal(a->op, '+');
	assert_int_equal(a->b->kind, E_BINOP);
	assert_int_equal(a->b->op, '*');
	assert_int_equal(b->op, '*');
	assert_int_equal(b->a->op, '+');
	assert_int_equal(c->op, '-');
	assert_int_equal(c->a->kind, E_NEG);
	assert_int_equal(c->a->a->ival, 4);
}

static void
comparisons_do_not_chain(void **state)
{
	Fx *fx = *state;

	fx_parse(fx, "model m { a = 1 < 2 < 3; }");
	assert_int_equal(diag_errors(), 1);
	assert_string_equal(fx_diags(fx), "t.odl:1:21: error: syntax error, unexpected '<'\n");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		FX_TEST(underscores_in_numbers_are_ignored),
		FX_TEST(decimal_size_suffix_gives_an_exact_integer),
		FX_TEST(binary_size_suffix_uses_powers_of_1024),
		FX_TEST(exponent_that_comes_out_whole_is_an_integer),
		FX_TEST(number_that_is_not_whole_stays_a_float),
		FX_TEST(number_beyond_64_bits_is_an_error_with_its_place),
		FX_TEST(digits_followed_by_letters_are_a_bad_number),
		FX_TEST(dims_literal_is_a_list_of_integers),
		FX_TEST(dims_literal_too_large_is_an_error),
		FX_TEST(all_three_comment_forms_are_skipped),
		FX_TEST(columns_count_bytes_from_one),
		FX_TEST(unterminated_comment_is_reported_where_it_opens),
		FX_TEST(unterminated_string_is_reported_at_its_quote),
		FX_TEST(string_escapes_keep_the_escaped_character),
		FX_TEST(stray_characters_are_reported_and_skipped),
		FX_TEST(errors_beyond_fifty_are_counted_but_not_shown),
		FX_TEST(keywords_need_a_whole_word),
		FX_TEST(syntax_error_has_line_and_column),
		FX_TEST(syntax_error_lists_the_tokens_expected),
		FX_TEST(several_syntax_errors_are_reported_in_one_run),
		FX_TEST(declarations_come_back_in_source_order),
		FX_TEST(multiplication_binds_tighter_than_addition),
		FX_TEST(comparisons_do_not_chain),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
