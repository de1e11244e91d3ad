/* system.c -- small helpers on the cluster description. */
#include "ir/ir.h"

#include <stddef.h>

int
system_span(const System *s, int64_t nodes)
{
	int64_t group = 1;

	if (nodes <= 1)
		return -1;
	for (int i = 0; i < s->nlevels; i++) {
		if (s->level[i].fanout <= 0)
			return i;
		group *= s->level[i].fanout;
		if (nodes <= group)
			return i;
	}
	return s->nlevels - 1;
}

#define SYSKEY(name, type, unit, field, req, range, json, group) \
	{ name, type, unit, offsetof(System, field), req, range, json, group },
#define LEVELKEY(name, type, unit, field, req, range, json)
const SysKey sys_keys[NSYS_KEYS] = {
#include "ir/syskeys.def"
};
#undef SYSKEY
#undef LEVELKEY

#define SYSKEY(name, type, unit, field, req, range, json, group)
#define LEVELKEY(name, type, unit, field, req, range, json) \
	{ name, type, unit, offsetof(NetLevel, field), req, range, json, SJ_SYSTEM },
const SysKey level_keys[NLEVEL_KEYS] = {
#include "ir/syskeys.def"
};
#undef SYSKEY
#undef LEVELKEY
