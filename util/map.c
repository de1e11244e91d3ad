/* map.c -- FNV-1a hashing, linear probing, doubling at 1/2 load.  Each
 * entry keeps its key's hash, so a probe compares strings only where the
 * hashes agree and a rehash reads no key. */
#include "util/map.h"

#include <stdint.h>
#include <stdlib.h>
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
find(MapEntry *slot, size_t cap, const char *key, uint64_t h)
{
	size_t i = h & (cap - 1);

	while (slot[i].key && (slot[i].hash != h || strcmp(slot[i].key, key) != 0))
		i = (i + 1) & (cap - 1);
	return &slot[i];
}

void *
map_get(const Map *m, const char *key)
{
	if (!m->cap)
		return NULL;
	return find(m->slot, m->cap, key, hash(key))->val;
}

static void
rehash(Map *m)
{
	size_t cap = m->cap ? 2 * m->cap : 16;
	MapEntry *slot = m->arena ? arena_array(m->arena, cap, sizeof *slot)
				  : xcalloc(cap, sizeof *slot);

	for (size_t i = 0; i < m->cap; i++)
		if (m->slot[i].key) {
			size_t j = m->slot[i].hash & (cap - 1);
			while (slot[j].key)
				j = (j + 1) & (cap - 1);
			slot[j] = m->slot[i];
		}
	if (!m->arena)
		free(m->slot);
	m->slot = slot;
	m->cap = cap;
}

MapEntry *
map_entry(Map *m, const char *key)
{
	MapEntry *e;
	uint64_t h = hash(key);

	if (2 * (m->len + 1) > m->cap)
		rehash(m);
	e = find(m->slot, m->cap, key, h);
	if (!e->key) {
		e->key = key;
		e->hash = h;
		e->val = NULL;
		m->len++;
	}
	return e;
}

void
map_free(Map *m)
{
	if (!m->arena)
		free(m->slot);
	m->slot = NULL;
	m->cap = m->len = 0;
}

void
map_put(Map *m, const char *key, void *val)
{
	map_entry(m, key)->val = val;
}
