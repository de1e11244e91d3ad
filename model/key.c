/* key.c -- the memos' keys, made from the query field by field (key.h).
 *
 * The system and the implementation key whole: every key of theirs is
 * one a figure may read, and a field added to either keys with no word
 * said (at worst a memo finds less).  The settings key as their table,
 * ir/settings.def, says: a setting is written into a role's key by its
 * column for that role -- KEYS its value, NO_KEY nothing, KEYS_AS(x) the
 * value of x -- and a plan's key holds the layer's part too. */
#include "model/key.h"

#include <string.h>

#include "util/diag.h"

static void
put(QueryKey *k, const void *p, size_t n)
{
	if (n > sizeof k->b - k->len)
		die("key.c: a query's key outgrows QUERY_KEY_MAX");
	memcpy(k->b + k->len, p, n);
	k->len += n;
}

static void
put_as(QueryKey *k, int64_t v)
{
	put(k, &v, sizeof v);
}

/* The columns of the table as code: KEYS(k, s, name) writes the setting;
 * NO_KEY(k, s, name) nothing; KEYS_AS(x) writes x and swallows the
 * arguments that follow it (KEY_SWALLOW). */
#define KEYS(k, s, name) put(k, &(s)->name, sizeof (s)->name)
#define NO_KEY(k, s, name) ((void)0)
#define KEY_SWALLOW(k, s, name)
#define KEYS_AS(x) put_as(k, (int64_t)(x)) KEY_SWALLOW

static void
settings_key(const Settings *s, KeyRole role, QueryKey *k)
{
#define SETTING(type, name, dflt, shown, layer, plan) layer(k, s, name);
#include "ir/settings.def"
#undef SETTING
	if (role == KEY_PLAN) {
#define SETTING(type, name, dflt, shown, layer, plan) plan(k, s, name);
#include "ir/settings.def"
#undef SETTING
	}
}

#undef KEYS
#undef NO_KEY
#undef KEYS_AS

void
query_key(const Query *q, const Graph *g, KeyRole role, QueryKey *k)
{
	uint64_t version = g->version;
	int nlayer = g->nlayer;

	k->len = 0;
	put(k, &role, sizeof role);
	put(k, &g, sizeof g);
	put(k, &version, sizeof version);
	put(k, &nlayer, sizeof nlayer);
	put(k, q->sys, sizeof *q->sys);
	put(k, &q->impl, sizeof q->impl);
	settings_key(&q->set, role, k);
}

static bool
same(const QueryKey *a, const QueryKey *b)
{
	return a->len == b->len && memcmp(a->b, b->b, a->len) == 0;
}

uint64_t
key_stamp(KeyStamps *ks, const Query *q, const Graph *g, KeyRole role)
{
	int c = 0, last = ks->stamp[role][0] ? ks->last[role] : -1;

	query_key(q, g, role, &ks->probe);
	if (last >= 0 && same(&ks->key[role][last], &ks->probe)) {
		ks->used[role][last] = ++ks->clock;
		return ks->stamp[role][last];
	}
	for (int i = 0; i < KEY_STAMPS; i++) {
		if (ks->stamp[role][i] && same(&ks->key[role][i], &ks->probe)) {
			ks->used[role][i] = ++ks->clock;
			ks->last[role] = i;
			return ks->stamp[role][i];
		}
		if (!ks->stamp[role][i] ||
		    (ks->stamp[role][c] && ks->used[role][i] < ks->used[role][c]))
			c = i;
	}
	ks->key[role][c] = ks->probe;
	ks->stamp[role][c] = ++ks->made;
	ks->used[role][c] = ++ks->clock;
	ks->last[role] = c;
	return ks->stamp[role][c];
}

/* The table as data, for the test of its keys. */
#define SETTING(type, name, dflt, shown, layer, plan)                                          \
	{ #name, offsetof(Settings, name), sizeof(type), { #layer, #plan } },
const KeyedSetting keyed_settings[] = {
#include "ir/settings.def"
};
#undef SETTING
const int nkeyed_settings = sizeof keyed_settings / sizeof keyed_settings[0];
