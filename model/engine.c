/* engine.c -- an engine made and freed (engine.h); each memo is made by
 * its own file on first use, and freed here with the rest (the scratch
 * buffers are scratch.c's: the files that use them call nothing here). */
#include "model/engine.h"

#include <stdint.h>
#include <stdlib.h>

#include "model/kerneltable.h"
#include "model/reuse.h"
#include "util/arena.h"

Engine *
engine_new(bool reuse)
{
	Engine *e = xcalloc(1, sizeof *e);

	e->reuse = reuse;
	for (int r = 0; r < KEY_ROLES; r++)
		e->stamps.last[r] = -1;
	return e;
}

void
engine_free(Engine *e)
{
	if (!e)
		return;
	rows_free(e->rows);
	plans_free(e->plans);
	tiles_free(e->tiles);
	kept_free(e->kept);
	kernel_needs_free(e->needs);
	for (int i = 0; i < SC_COUNT; i++)
		free(e->scratch[i]);
	free(e);
}
