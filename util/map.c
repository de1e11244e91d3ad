/* map.c -- FNV-1a hashing, linear probing, doubling at 1/2 load. */
#include "util/map.h"

#include <stdint.h>
#include <string.h>

void
map_init(Map *m, Arena *a)
{
	m->arena = a;
	m->slot = NULL;
	m->cap = m->len = 0;
}

static uint64_t
hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3u;
	return h;
}

static MapEntry *
find(MapEntry *slot, size_t cap, const char *key)
{
	size_t i = hash(key) & (cap - 1);

	while (slot[i].key && strcmp(slot[i].key, key) != 0)
		i = (i + 1) & (cap - 1);
	return &slot[i];
}

void *
map_get(const Map *m, const char *key)
{
	if (!m->cap)
		return NULL;
	return find(m->slot, m->cap, key)->val;
}

static void
rehash(Map *m)
{
	size_t cap = m->cap ? 2 * m->cap : 16;
	MapEntry *slot = arena_array(m->arena, cap, sizeof *slot);

	for (size_t i = 0; i < m->cap; i++)
		if (m->slot[i].key)
			*find(slot, cap, m->slot[i].key) = m->slot[i];
	m->slot = slot;
	m->cap = cap;
}

void
map_put(Map *m, const char *key, void *val)
{
	MapEntry *e;

	if (2 * (m->len + 1) > m->cap)
		rehash(m);
	e = find(m->slot, m->cap, key);
	if (!e->key) {
		e->key = key;
		m->len++;
	}
	e->val = val;
}
