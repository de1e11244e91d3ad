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
} Arena;

void arena_init(Arena *a);
void arena_free(Arena *a);
void *arena_alloc(Arena *a, size_t size);           /* zeroed, max-aligned */
void *arena_array(Arena *a, size_t n, size_t size); /* checked n * size */
void *arena_grow(Arena *a, void *old, size_t oldn, size_t newn, size_t size);
/* For arrays that keep doubling (the graph's layers and tensors): realloc'd
 * outside the chunks so old copies are not left behind, still released by
 * arena_free().  New elements are zeroed. */
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
char *arena_strndup(Arena *a, const char *s, size_t n);
char *arena_printf(Arena *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The one out-of-memory choke point outside the arena. */
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t size);

#endif
