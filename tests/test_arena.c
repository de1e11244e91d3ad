/* test_arena.c -- util/arena.c: alignment, zeroing, chunks, growth, strings. */
#include "harness.h"

enum { ALIGN = _Alignof(max_align_t) };

static void
allocations_are_aligned_to_max_align_t(void **state)
{
	static const size_t sizes[] = { 1, 3, 7, 8, 15, 17, 33, 100, 0, 1 };
	Arena a;
	unsigned char *prev = NULL;
	size_t prevn = 0;

	(void)state;
	arena_init(&a);
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		unsigned char *p = arena_alloc(&a, sizes[i]);
		assert_non_null(p);
		assert_int_equal((uintptr_t)p % ALIGN, 0);
		/* bump allocation in one chunk: no overlap with the previous block */
		if (prev)
			assert_true(p >= prev + prevn);
		prev = p;
		prevn = sizes[i];
	}
	arena_free(&a);
}

static void
zero_size_allocation_is_distinct_and_aligned(void **state)
{
	Arena a;
	void *p, *q;

	(void)state;
	arena_init(&a);
	p = arena_alloc(&a, 0);
	q = arena_alloc(&a, 0);
	assert_non_null(p);
	assert_ptr_not_equal(p, q);
	assert_int_equal((uintptr_t)q % ALIGN, 0);
	arena_free(&a);
}

/* The arena never reuses its own memory, so zeroing is only visible on
 * memory malloc hands back dirty: fill a chunk, free the arena, and the
 * next arena of the same size gets the same heap block back. */
static void
allocations_are_zeroed_even_on_reused_heap_memory(void **state)
{
	Arena a;
	unsigned char *p;

	(void)state;
	arena_init(&a);
	p = arena_alloc(&a, 4000);
	memset(p, 0xAA, 4000);
	arena_free(&a);

	arena_init(&a);
	p = arena_alloc(&a, 4000);
	for (int i = 0; i < 4000; i++)
		if (p[i] != 0)
			fail_msg("byte %d is 0x%02x, not 0", i, p[i]);
	arena_free(&a);
}

static void
allocation_larger_than_a_chunk_gets_a_chunk_of_its_own(void **state)
{
	const size_t big = (size_t)3 << 20; /* the first chunk is 64 KiB */
	Arena a;
	char *small, *huge, *after;

	(void)state;
	arena_init(&a);
	small = arena_alloc(&a, 16);
	strcpy(small, "still here");
	huge = arena_alloc(&a, big);
	assert_int_equal((uintptr_t)huge % ALIGN, 0);
	for (size_t i = 0; i < big; i += 4096)
		assert_int_equal(huge[i], 0);
	assert_int_equal(huge[big - 1], 0);
	/* the 64 KiB first chunk and one of exactly 3 MiB, plus two headers */
	assert_in_range(a.total - big - 64 * 1024, 2 * sizeof(void *), 2 * 128);
	memset(huge, 'x', big);
	after = arena_alloc(&a, 16);
	assert_int_equal(after[0], 0);
	assert_string_equal(small, "still here");
	assert_int_equal(huge[big - 1], 'x');
	arena_free(&a);
	assert_int_equal(a.total, 0);
	assert_null(a.head);
}

static void
many_small_allocations_across_chunks_keep_their_contents(void **state)
{
	enum { N = 20000 }; /* 20000 * 64 bytes: several chunks */
	Arena a;
	int **p = xcalloc(N, sizeof *p);

	(void)state;
	arena_init(&a);
	for (int i = 0; i < N; i++) {
		p[i] = arena_alloc(&a, 16 * sizeof(int));
		for (int k = 0; k < 16; k++)
			p[i][k] = i * 16 + k;
	}
	for (int i = 0; i < N; i++)
		for (int k = 0; k < 16; k++)
			if (p[i][k] != i * 16 + k)
				fail_msg("block %d item %d is %d", i, k, p[i][k]);
	free(p);
	arena_free(&a);
}

static void
arena_grow_keeps_contents_and_zeroes_the_rest(void **state)
{
	Arena a;
	int *v, *w;

	(void)state;
	arena_init(&a);
	v = arena_array(&a, 10, sizeof *v);
	for (int i = 0; i < 10; i++)
		v[i] = 100 + i;
	w = arena_grow(&a, v, 10, 100000, sizeof *w);
	assert_ptr_not_equal(v, w);
	for (int i = 0; i < 10; i++)
		assert_int_equal(w[i], 100 + i);
	for (int i = 10; i < 100000; i++)
		if (w[i] != 0)
			fail_msg("new item %d is %d, not 0", i, w[i]);
	/* growing from nothing is an allocation */
	v = arena_grow(&a, NULL, 0, 4, sizeof *v);
	assert_int_equal(v[3], 0);
	arena_free(&a);
}

static void
arena_grow_to_fewer_items_copies_only_those(void **state)
{
	Arena a;
	int *v, *w;

	(void)state;
	arena_init(&a);
	v = arena_array(&a, 8, sizeof *v);
	for (int i = 0; i < 8; i++)
		v[i] = i + 1;
	w = arena_grow(&a, v, 8, 3, sizeof *w);
	assert_int_equal(w[0], 1);
	assert_int_equal(w[2], 3);
	arena_free(&a);
}

static void
arena_strdup_and_strndup_copy_into_the_arena(void **state)
{
	Arena a;
	char src[] = "conv1";
	char *d, *n;

	(void)state;
	arena_init(&a);
	d = arena_strdup(&a, src);
	n = arena_strndup(&a, "layer2/y_1/conv2", 6);
	src[0] = 'X';
	assert_string_equal(d, "conv1");
	assert_string_equal(n, "layer2");
	assert_string_equal(arena_strdup(&a, ""), "");
	arena_free(&a);
}

static void
arena_printf_formats_into_an_exact_buffer(void **state)
{
	Arena a;
	char *s, *big;

	(void)state;
	arena_init(&a);
	s = arena_printf(&a, "%s/%s_%d", "layer1", "y", 2);
	assert_string_equal(s, "layer1/y_2");
	/* longer than any fixed buffer a careless version would use */
	big = arena_printf(&a, "%0100000d|", 7);
	assert_int_equal(strlen(big), 100001);
	assert_int_equal(big[99999], '7');
	assert_int_equal(big[100000], '|');
	assert_int_equal(big[0], '0');
	arena_free(&a);
}

static void
arena_array_of_zero_items_is_a_valid_pointer(void **state)
{
	Arena a;

	(void)state;
	arena_init(&a);
	assert_non_null(arena_array(&a, 0, sizeof(double)));
	assert_non_null(arena_array(&a, 5, 0));
	arena_free(&a);
}

static void
release_takes_back_what_came_after_the_mark_and_clears_it(void **state)
{
	Arena a;
	ArenaMark m;
	char *keep, *p, *q;

	(void)state;
	arena_init(&a);
	keep = arena_strdup(&a, "kept");
	m = arena_mark(&a);
	p = arena_alloc(&a, 100);
	memset(p, 0xAB, 100);
	arena_release(&a, m);
	q = arena_alloc(&a, 100);
	assert_ptr_equal(q, p); /* the same memory again */
	for (int i = 0; i < 100; i++)
		assert_int_equal(q[i], 0);
	assert_string_equal(keep, "kept");
	arena_free(&a);
}

static void
release_across_chunks_keeps_one_spare_so_loops_stop_allocating(void **state)
{
	Arena a;
	ArenaMark m;
	size_t total = 0;

	(void)state;
	arena_init(&a);
	m = arena_mark(&a); /* before the first chunk */
	for (int round = 0; round < 100; round++) {
		/* two chunks' worth each round: the first chunk and a bigger one */
		for (int i = 0; i < 3; i++) {
			unsigned char *p = arena_alloc(&a, 40000);
			for (int j = 0; j < 40000; j += 997)
				assert_int_equal(p[j], 0);
			memset(p, 0xCD, 40000);
		}
		arena_release(&a, m);
		if (round == 1)
			total = a.total;
		if (round > 1)
			assert_int_equal(a.total, total);
	}
	/* at most the first chunk (as the spare) and one more are held */
	assert_true(total <= 3 * 64 * 1024 + 4096);
	arena_free(&a);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(allocations_are_aligned_to_max_align_t),
		cmocka_unit_test(zero_size_allocation_is_distinct_and_aligned),
		cmocka_unit_test(allocations_are_zeroed_even_on_reused_heap_memory),
		cmocka_unit_test(allocation_larger_than_a_chunk_gets_a_chunk_of_its_own),
		cmocka_unit_test(many_small_allocations_across_chunks_keep_their_contents),
		cmocka_unit_test(arena_grow_keeps_contents_and_zeroes_the_rest),
		cmocka_unit_test(arena_grow_to_fewer_items_copies_only_those),
		cmocka_unit_test(arena_strdup_and_strndup_copy_into_the_arena),
		cmocka_unit_test(arena_printf_formats_into_an_exact_buffer),
		cmocka_unit_test(arena_array_of_zero_items_is_a_valid_pointer),
		cmocka_unit_test(release_takes_back_what_came_after_the_mark_and_clears_it),
		cmocka_unit_test(release_across_chunks_keeps_one_spare_so_loops_stop_allocating),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
