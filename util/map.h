/* map.h -- string-keyed hash map (open addressing) living in an arena.
 * Keys are not copied: they must outlive the map (arena strings do). */
#ifndef ORACLEC_UTIL_MAP_H
#define ORACLEC_UTIL_MAP_H

#include <stddef.h>
#include <stdint.h>

#include "util/arena.h"

typedef struct MapEntry {
	const char *key;
	void *val;
	uint64_t hash;   /* of key */
} MapEntry;

typedef struct Map {
	Arena *arena;    /* NULL: the slots are malloc'd, each table freed
	                    when it grows and by map_free */
	MapEntry *slot;
	size_t cap, len; /* cap is 0 or a power of two */
} Map;

void map_init(Map *m, Arena *a);
void *map_get(const Map *m, const char *key);       /* NULL if absent */
void map_put(Map *m, const char *key, void *val);   /* inserts or replaces */
void map_free(Map *m);  /* a map without arena: its table */
/* key's entry, made (val NULL) where it has none: one search for a get
 * and a put.  Valid until the next map_put or map_entry; the caller may
 * set its val, and its key to an equal string (a copy that lasts). */
MapEntry *map_entry(Map *m, const char *key);

#endif
