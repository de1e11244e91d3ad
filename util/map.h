/* map.h -- string-keyed hash map (open addressing) living in an arena.
 * Keys are not copied: they must outlive the map (arena strings do). */
#ifndef ORACLEC_UTIL_MAP_H
#define ORACLEC_UTIL_MAP_H

#include <stddef.h>

#include "util/arena.h"

typedef struct MapEntry {
	const char *key;
	void *val;
} MapEntry;

typedef struct Map {
	Arena *arena;
	MapEntry *slot;
	size_t cap, len; /* cap is 0 or a power of two */
} Map;

void map_init(Map *m, Arena *a);
void *map_get(const Map *m, const char *key);       /* NULL if absent */
void map_put(Map *m, const char *key, void *val);   /* inserts or replaces */

#endif
