/* arena.h -- one arena per compilation: every IR object, string and parser
 * value lives here and is released at once by arena_free(). */
#ifndef ORACLEC_UTIL_ARENA_H
#define ORACLEC_UTIL_ARENA_H

#include <stddef.h>

typedef struct Chunk Chunk;

typedef struct Arena {
	Chunk *head;    /* newest chunk; older ones linked through Chunk.prev */
	Chunk *spare;   /* a cleared chunk kept by arena_release() for reuse */
	size_t total;   /* bytes obtained from malloc, for the benchmarks */
	void **owned;   /* big growable arrays, realloc'd in place (arena_regrow) */
	size_t nowned;
	size_t most;    /* the largest chunk it makes (0: 64 MiB): smaller for
	                   an arena freed oldest first (arena_drop_older) */
} Arena;

void arena_init(Arena *a);
void arena_free(Arena *a);
void *arena_alloc(Arena *a, size_t size);           /* zeroed, max-aligned */
/* zeroed, aligned to `align` only (a power of two up to max_align_t):
 * small arrays and strings packed, where a million of them add up */
void *arena_alloc_aligned(Arena *a, size_t size, size_t align);
char *arena_strndup_packed(Arena *a, const char *s, size_t n);
void *arena_array(Arena *a, size_t n, size_t size); /* checked n * size */
void *arena_grow(Arena *a, void *old, size_t oldn, size_t newn, size_t size);
/* For arrays that keep doubling (the graph's layers and tensors): realloc'd
 * outside the chunks so old copies are not left behind, still released by
 * arena_free().  New elements are not zeroed: the caller initializes each
 * as it takes it (the pages of a big array's unused part then cost no
 * memory). */
void *arena_regrow(Arena *a, void *old, size_t oldn, size_t newn, size_t size);
/* Stack discipline for scratch memory: arena_release(a, m) takes back every
 * chunk allocation made since m = arena_mark(a) (not arena_regrow arrays)
 * and clears it, so later allocations are zeroed as ever.  One released
 * chunk is kept, so a loop that marks and releases does not call malloc
 * each time round. */
typedef struct ArenaMark {
	Chunk *head;
	size_t used;
} ArenaMark;
ArenaMark arena_mark(const Arena *a);
void arena_release(Arena *a, ArenaMark m);
char *arena_strdup(Arena *a, const char *s);
/* Frees every chunk older than the one before the chunk holding p (p
 * must be in a's chunks): for an arena whose allocations are used in the
 * order they were made and then done with (the statements of a model's
 * body, frontend/dsl.c), the memory of those done goes back while the
 * rest is still read.  The chunk before p's is kept: what was allocated
 * just before p may still be in use. */
void arena_drop_older(Arena *a, const void *p);
char *arena_strndup(Arena *a, const char *s, size_t n);
char *arena_printf(Arena *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The one out-of-memory choke point outside the arena. */
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t size);

#endif
