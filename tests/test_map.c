/* test_map.c -- util/map.c: string-keyed open-addressing map in an arena. */
#include "harness.h"

#include "util/map.h"

static void
get_on_an_empty_map_returns_null(void **state)
{
	Fx *fx = *state;
	Map m;

	map_init(&m, &fx->arena);
	assert_null(map_get(&m, "conv1"));
	assert_null(map_get(&m, ""));
	assert_int_equal(m.len, 0);
}

static void
put_then_get_returns_each_value(void **state)
{
	Fx *fx = *state;
	Map m;
	int a = 1, b = 2;

	map_init(&m, &fx->arena);
	map_put(&m, "conv1", &a);
	map_put(&m, "relu", &b);
	assert_ptr_equal(map_get(&m, "conv1"), &a);
	assert_ptr_equal(map_get(&m, "relu"), &b);
	assert_null(map_get(&m, "conv2"));
	assert_int_equal(m.len, 2);
}

static void
put_on_an_existing_key_replaces_the_value(void **state)
{
	Fx *fx = *state;
	Map m;
	int a = 1, b = 2;

	map_init(&m, &fx->arena);
	map_put(&m, "x", &a);
	map_put(&m, "x", &b);
	assert_ptr_equal(map_get(&m, "x"), &b);
	assert_int_equal(m.len, 1);
}

static void
keys_compare_by_contents_not_by_pointer(void **state)
{
	Fx *fx = *state;
	Map m;
	char k1[] = "layer1/y", k2[] = "layer1/y";
	int v = 7;

	map_init(&m, &fx->arena);
	map_put(&m, k1, &v);
	assert_ptr_equal(map_get(&m, k2), &v);
	map_put(&m, k2, NULL);
	assert_int_equal(m.len, 1);
	assert_null(map_get(&m, k1));
}

static void
empty_string_is_a_key_like_any_other(void **state)
{
	Fx *fx = *state;
	Map m;
	int v = 3;

	map_init(&m, &fx->arena);
	map_put(&m, "", &v);
	assert_ptr_equal(map_get(&m, ""), &v);
	assert_null(map_get(&m, "a"));
}

/* 100,000 keys: the table doubles from 16 at half load, so it ends at
 * the first power of two >= 200,000, and every key survives each rehash. */
static void
hundred_thousand_keys_survive_rehashing(void **state)
{
	enum { N = 100000 };
	Fx *fx = *state;
	Map m;

	map_init(&m, &fx->arena);
	for (intptr_t i = 0; i < N; i++)
		map_put(&m, arena_printf(&fx->arena, "k%" PRIdPTR, i), (void *)(i + 1));
	assert_int_equal(m.len, N);
	assert_int_equal(m.cap, 262144);
	for (intptr_t i = 0; i < N; i++) {
		char key[32];
		snprintf(key, sizeof key, "k%" PRIdPTR, i);
		if ((intptr_t)map_get(&m, key) != i + 1)
			fail_msg("key %s maps to %" PRIdPTR, key, (intptr_t)map_get(&m, key));
	}
	assert_null(map_get(&m, "k100000"));
	assert_null(map_get(&m, "k-1"));
	assert_null(map_get(&m, "k"));
	/* replacing one of them changes neither the size nor the others */
	map_put(&m, "k500", (void *)-1);
	assert_int_equal(m.len, N);
	assert_int_equal((intptr_t)map_get(&m, "k500"), -1);
	assert_int_equal((intptr_t)map_get(&m, "k501"), 502);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		FX_TEST(get_on_an_empty_map_returns_null),
		FX_TEST(put_then_get_returns_each_value),
		FX_TEST(put_on_an_existing_key_replaces_the_value),
		FX_TEST(keys_compare_by_contents_not_by_pointer),
		FX_TEST(empty_string_is_a_key_like_any_other),
		FX_TEST(hundred_thousand_keys_survive_rehashing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
