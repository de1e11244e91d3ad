/* scratch.c -- an engine's scratch buffers (engine.h): one a slot, grown
 * as asked, kept for the next call. */
#include "model/engine.h"

#include <stdint.h>
#include <stdlib.h>

#include "util/arena.h"
#include "util/diag.h"

void *
engine_scratch(Engine *e, ScratchSlot slot, size_t n, size_t size)
{
	size_t need;

	if (slot < 0 || slot >= SC_COUNT)
		die("engine.c: scratch slot %d", (int)slot);
	if (n > SIZE_MAX / (size ? size : 1))
		die("out of memory");
	need = (n ? n : 1) * (size ? size : 1);
	if (need > e->scratch_size[slot]) {
		free(e->scratch[slot]);
		e->scratch[slot] = xcalloc(need, 1);
		e->scratch_size[slot] = need;
	}
	return e->scratch[slot];
}
