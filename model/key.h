/* key.h -- the keys of the engine's memos, made from the query: the graph
 * by its identity and version, every byte of the system and of the
 * implementation, and of the settings those ir/settings.def says a figure
 * reads.  Two analyses with equal keys get equal figures from every memo
 * that keys on them, whatever else they differ in.
 *
 * A key is a record built field by field, never a range of an
 * Analysis's bytes: a setting added to the table says how it keys, or
 * the build fails. */
#ifndef ORACLEC_MODEL_KEY_H
#define ORACLEC_MODEL_KEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/analysis.h"

/* What a memo's figures read of the settings: a layer's figures (the
 * settings' `layer` column), or a pipeline's partitions (the `layer`
 * and `plan` columns). */
typedef enum KeyRole { KEY_LAYER, KEY_PLAN, KEY_ROLES } KeyRole;

enum { QUERY_KEY_MAX = sizeof(System) + sizeof(Implementation) + 2 * sizeof(Settings) + 64 };

typedef struct QueryKey {
	size_t len;
	unsigned char b[QUERY_KEY_MAX];
} QueryKey;

/* The key of query q on graph g for a memo of `role`, into *k. */
void query_key(const Query *q, const Graph *g, KeyRole role, QueryKey *k);

/* The queries an engine has met, a few of each role, each with a stamp no
 * other key got: a memo keys on the stamp (and its own arguments) and so
 * on everything the key holds.  The least recently used key gives way to
 * a new one; its stamp is then never handed out again. */
enum { KEY_STAMPS = 8 };
typedef struct KeyStamps {
	QueryKey key[KEY_ROLES][KEY_STAMPS];
	uint64_t stamp[KEY_ROLES][KEY_STAMPS]; /* 0: empty */
	uint64_t used[KEY_ROLES][KEY_STAMPS];
	int last[KEY_ROLES];                   /* the last found, -1 none */
	uint64_t clock, made;
	QueryKey probe;
} KeyStamps;

/* The stamp of q on g for role in *ks: the one its key had, or a new one. */
uint64_t key_stamp(KeyStamps *ks, const Query *q, const Graph *g, KeyRole role);

/* The settings as the table keys them, for the test that checks it: each
 * setting's name, place and size in Settings, and its two key columns as
 * the table spells them ("KEYS", "NO_KEY", "KEYS_AS(...)"). */
typedef struct KeyedSetting {
	const char *name;
	size_t offset, size;
	const char *how[KEY_ROLES];
} KeyedSetting;
extern const KeyedSetting keyed_settings[];
extern const int nkeyed_settings;

#endif
