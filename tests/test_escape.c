/* test_escape.c -- util/escape.c: each output language's escaper on the
 * bytes that matter to it (docs/limits.md, "Names in generated files"). */
#include "harness.h"

#include "util/escape.h"

/* What fn writes for s, malloc'd. */
static char *
written(void (*fn)(FILE *, const char *), const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	fn(f, s);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void
text(FILE *f, const char *s)
{
	esc_text(f, s);
}

static void
make_target(FILE *f, const char *s)
{
	esc_make(f, s, true);
}

static void
make_prerequisite(FILE *f, const char *s)
{
	esc_make(f, s, false);
}

static void
expect(void (*fn)(FILE *, const char *), const char *s, const char *want)
{
	char *got = written(fn, s);

	assert_string_equal(got, want);
	free(got);
}

/* A name for a message: escaped as text, cut after `max` bytes of it with
 * "...", the bytes of a UTF-8 sequence the cut splits shown as \xNN. */
static void
names_in_messages_are_escaped_and_cut(void **state)
{
	static const struct {
		const char *s;
		size_t max;
		const char *want;
	} c[] = {
		{ "relu", 64, "relu" },
		{ "a\xff""b\x1b[31m", 64, "a\\xffb\\x1b[31m" },
		{ "abcdef", 3, "abc..." },
		{ "abc", 3, "abc" },
		{ "\xc3\xa9t\xc3\xa9", 4, "\xc3\xa9t\\xc3..." },
		{ "", 64, "" },
	};
	char big[100001], *t;

	(void)state;
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		t = esc_text_cut(c[i].s, strlen(c[i].s), c[i].max);
		assert_string_equal(t, c[i].want);
		free(t);
	}
	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	t = esc_text_cut(big, strlen(big), NAME_SHOWN);
	assert_int_equal(strlen(t), NAME_SHOWN + 3);
	free(t);
	t = esc_text_cut("a,b", 1, NAME_SHOWN); /* the first len bytes only */
	assert_string_equal(t, "a");
	free(t);
}

static void
text_escapes_control_bytes_and_bad_utf8_only(void **state)
{
	(void)state;
	expect(text, "conv1 /layer2.0/Conv", "conv1 /layer2.0/Conv");
	expect(text, "a\nb\rc\td\\e", "a\\nb\\rc\\td\\\\e");
	expect(text, "\x1b[31m\x7f", "\\x1b[31m\\x7f");
	expect(text, "mod\xc3\xa9le \xe6\xa8\xa1", "mod\xc3\xa9le \xe6\xa8\xa1"); /* UTF-8 kept */
	expect(text, "nel\xc2\x85", "nel\\xc2\\x85");                          /* C1 control */
	expect(text, "\xff\xc0\xaf\xed\xa0\x80", "\\xff\\xc0\\xaf\\xed\\xa0\\x80");
	assert_int_equal(esc_text(NULL, "a\nb"), 4);
}

static void
utf8_fix_replaces_each_maximal_bad_subpart(void **state)
{
	struct { const char *in, *out; } c[] = {
		{ "ok \xc3\xa9", "ok \xc3\xa9" },
		{ "\xff", "\xef\xbf\xbd" },
		{ "a\xe6\x97" "b", "a\xef\xbf\xbd" "b" },           /* cut short: one */
		{ "\xc0\xaf", "\xef\xbf\xbd\xef\xbf\xbd" },         /* overlong: two */
		{ "\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" }, /* surrogate */
		{ "\xf4\x90\x80\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" },
		{ "\xf0\x9f\x98", "\xef\xbf\xbd" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		char *got = utf8_fix(c[i].in);
		assert_string_equal(got, c[i].out);
		assert_true(utf8_valid(got));
		assert_int_equal(utf8_valid(c[i].in), strcmp(c[i].in, c[i].out) == 0);
		free(got);
	}
}

static void
shell_words_are_single_quoted(void **state)
{
	(void)state;
	expect(esc_shell, "EttL|tt", "'EttL|tt'");
	expect(esc_shell, "it's $(x)", "'it'\\''s $(x)'");
}

static void
csv_fields_are_quoted_when_needed(void **state)
{
	(void)state;
	expect(esc_csv, "resnet50", "resnet50");
	expect(esc_csv, "a,b", "\"a,b\"");
	expect(esc_csv, "say \"hi\"", "\"say \"\"hi\"\"\"");
	expect(esc_csv, "a\nb", "\"a\nb\"");
	expect(esc_csv, "a\rb", "\"a\rb\"");
	expect(esc_csv_quoted, "data=4", "\"data=4\"");
}

static void
make_names_are_quoted_for_gnu_make(void **state)
{
	(void)state;
	expect(make_prerequisite, "a b#c$d:e", "a\\ b\\#c$$d\\:e");
	expect(make_prerequisite, "x=y", "x$(if ,,=)y");
	expect(make_prerequisite, "p%q|r", "p%q\\|r");
	expect(make_target, "p%q|r", "p\\%q|r");
	expect(make_prerequisite, "a\\b", "a\\b");      /* literal mid-name */
	expect(make_prerequisite, "a\\ b", "a\\\\\\ b"); /* doubled before a space */
	expect(make_prerequisite, "st*r?[x]", "st[*]r[?][[]x]");
	expect(make_prerequisite, "~user", "[~]user");
	expect(make_prerequisite, "a\\*", "a\\\\[*]"); /* glob reads \\ as \ */
}

static void
make_refuses_what_it_cannot_read(void **state)
{
	(void)state;
	assert_null(make_bad("dir/a b#$:=%*.onnx"));
	assert_non_null(make_bad("a\nb"));
	assert_non_null(make_bad("a\rb"));
	assert_non_null(make_bad("a\tb"));
	assert_non_null(make_bad("a;b"));
	assert_non_null(make_bad("a\\"));
	assert_int_equal(*make_bad("ab;c\n"), ';');
}

static void
odl_strings_and_identifiers(void **state)
{
	(void)state;
	expect(esc_odl_string, "V100", "\"V100\"");
	expect(esc_odl_string, "a\"b\\c\nd\te\rf\x01g\xff",
	       "\"a\\\"b\\\\c\\nd\\te\\rf\\x01g\xff\"");
	expect(esc_odl_ident, "abci_calibrated", "abci_calibrated");
	expect(esc_odl_ident, "./ABCI.plat_calibrated", "__ABCI_plat_calibrated");
	expect(esc_odl_ident, "4gpu", "_4gpu");
	expect(esc_odl_ident, "", "_");
	expect(esc_odl_ident, "model", "model_");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(text_escapes_control_bytes_and_bad_utf8_only),
		cmocka_unit_test(names_in_messages_are_escaped_and_cut),
		cmocka_unit_test(utf8_fix_replaces_each_maximal_bad_subpart),
		cmocka_unit_test(shell_words_are_single_quoted),
		cmocka_unit_test(csv_fields_are_quoted_when_needed),
		cmocka_unit_test(make_names_are_quoted_for_gnu_make),
		cmocka_unit_test(make_refuses_what_it_cannot_read),
		cmocka_unit_test(odl_strings_and_identifiers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
