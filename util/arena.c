/* arena.c -- chunked bump allocator.
 *
 * Chunks grow geometrically so a 100,000-layer model costs a few dozen
 * mallocs; a request bigger than a chunk gets a chunk of its own.  Memory is
 * never returned piecemeal: arena_grow() copies into fresh space, which
 * wastes at most the geometric series of old sizes, i.e. stays linear.  The
 * exception is scratch memory used as a stack (arena_mark/arena_release). */
#include "util/arena.h"
#include "util/diag.h"

#include <stdarg.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct Chunk {
	Chunk *prev;
	size_t used, cap;
	bool mapped;    /* its own mapping (a big chunk): given back when freed */
	_Alignas(max_align_t) unsigned char data[];
};

enum { ALIGN = _Alignof(max_align_t), FIRST_CHUNK = 64 * 1024 };
/* Chunks of this size and more are mappings of their own, not malloc's
 * heap: freed, their memory goes back to the system at once, for the
 * arena that frees its oldest chunks while the program goes on
 * (arena_drop_older); malloc keeps big blocks it has given back. */
#define MAPPED_CHUNK ((size_t)1 << 20)

static void
chunk_free(Chunk *c)
{
	if (c && c->mapped)
		munmap(c, sizeof(Chunk) + c->cap);
	else
		free(c);
}

void *
xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		die("out of memory");
	return p;
}

void *
xrealloc(void *p, size_t size)
{
	p = realloc(p, size ? size : 1);
	if (!p)
		die("out of memory");
	return p;
}

void
arena_init(Arena *a)
{
	a->head = NULL;
	a->spare = NULL;
	a->total = 0;
	a->owned = NULL;
	a->nowned = 0;
	a->most = 0;
}

void
arena_free(Arena *a)
{
	Chunk *c, *prev;

	for (c = a->head; c; c = prev) {
		prev = c->prev;
		chunk_free(c);
	}
	chunk_free(a->spare);
	for (size_t i = 0; i < a->nowned; i++)
		free(a->owned[i]);
	free(a->owned);
	a->head = NULL;
	a->spare = NULL;
	a->total = 0;
	a->owned = NULL;
	a->nowned = 0;
}

static Chunk *
newchunk(Arena *a, size_t need)
{
	size_t cap = a->head ? a->head->cap * 2 : FIRST_CHUNK;
	Chunk *c = a->spare;

	if (c && c->cap >= need) {
		a->spare = NULL;
		c->prev = a->head;
		a->head = c;
		return c;
	}
	if (cap > (a->most ? a->most : (size_t)64 << 20))
		cap = a->most ? a->most : (size_t)64 << 20;
	if (cap < need)
		cap = need;
	if (cap > SIZE_MAX - sizeof(Chunk))
		die("out of memory");
	/* calloc: fresh memory is zero (large chunks come zeroed from the
	 * kernel), and memory is handed out twice only after arena_release
	 * cleared it, so arena_alloc need not clear anything */
	if (cap >= MAPPED_CHUNK) {
		/* fresh pages are zero, as calloc's */
		void *m = mmap(NULL, sizeof(Chunk) + cap, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			die("out of memory");
		c = m;
		c->mapped = true;
	} else if (!(c = calloc(1, sizeof(Chunk) + cap))) {
		die("out of memory");
	}
	c->used = 0;
	c->cap = cap;
	c->prev = a->head;
	a->head = c;
	a->total += sizeof(Chunk) + cap;
	return c;
}

void *
arena_alloc_aligned(Arena *a, size_t size, size_t align)
{
	Chunk *c = a->head;
	size_t off;

	if (size > SIZE_MAX - ALIGN)
		die("out of memory");
	if (size == 0)
		size = 1;
	off = c ? (c->used + align - 1) & ~(align - 1) : 0;
	if (!c || off > c->cap || c->cap - off < size) {
		c = newchunk(a, size);
		off = 0;
	}
	c->used = off + size;
	return c->data + off;
}

void *
arena_alloc(Arena *a, size_t size)
{
	if (size > SIZE_MAX - ALIGN)
		die("out of memory");
	size = (size + ALIGN - 1) & ~(size_t)(ALIGN - 1);
	return arena_alloc_aligned(a, size ? size : ALIGN, ALIGN);
}

ArenaMark
arena_mark(const Arena *a)
{
	return (ArenaMark){ a->head, a->head ? a->head->used : 0 };
}

static void
drop_chunk(Arena *a, Chunk *c)
{
	a->total -= sizeof(Chunk) + c->cap;
	chunk_free(c);
}

void
arena_release(Arena *a, ArenaMark m)
{
	while (a->head != m.head) {
		Chunk *c = a->head;

		if (!c)
			die("arena_release: the mark is not from this arena");
		a->head = c->prev;
		memset(c->data, 0, c->used); /* arena_alloc hands out zeroed memory */
		c->used = 0;
		if (a->spare && a->spare->cap >= c->cap) {
			drop_chunk(a, c);
		} else {
			if (a->spare)
				drop_chunk(a, a->spare);
			a->spare = c;
		}
	}
	if (m.head) {
		memset(m.head->data + m.used, 0, m.head->used - m.used);
		m.head->used = m.used;
	}
}

void *
arena_array(Arena *a, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		die("out of memory");
	return arena_alloc(a, n * size);
}

void *
arena_grow(Arena *a, void *old, size_t oldn, size_t newn, size_t size)
{
	void *p = arena_array(a, newn, size);

	if (old && oldn)
		memcpy(p, old, (oldn < newn ? oldn : newn) * size);
	return p;
}

void *
arena_regrow(Arena *a, void *old, size_t oldn, size_t newn, size_t size)
{
	size_t i = 0;
	char *p;

	(void)oldn; /* the new elements are left as they come */
	if (size && newn > SIZE_MAX / size)
		die("out of memory");
	while (old && i < a->nowned && a->owned[i] != old)
		i++;
	if (!old || i == a->nowned) {
		a->owned = xrealloc(a->owned, (a->nowned + 1) * sizeof *a->owned);
		i = a->nowned++;
		old = NULL;
	}
	/* a big block's untouched pages cost no memory until the caller
	 * initializes each element */
	p = xrealloc(old, newn * size);
	a->owned[i] = p;
	return p;
}

char *
arena_strndup(Arena *a, const char *s, size_t n)
{
	char *p = arena_alloc(a, n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *
arena_strdup(Arena *a, const char *s)
{
	return arena_strndup(a, s, strlen(s));
}

char *
arena_strndup_packed(Arena *a, const char *s, size_t n)
{
	char *p;

	if (n > SIZE_MAX - ALIGN)
		die("out of memory");
	p = arena_alloc_aligned(a, n + 1, 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

void
arena_drop_older(Arena *a, const void *p)
{
	const unsigned char *q = p;
	Chunk *c = a->head, *keep;

	while (c && !(q >= c->data && q < c->data + c->cap))
		c = c->prev;
	if (!c || !(keep = c->prev))
		return;
	while (keep->prev) {
		Chunk *old = keep->prev;
		keep->prev = old->prev;
		drop_chunk(a, old);
	}
}

char *
arena_printf(Arena *a, const char *fmt, ...)
{
	va_list ap;
	int n;
	char *p;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		die("bad format");
	p = arena_alloc(a, (size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return p;
}
