/* shape.c -- shape inference over the whole graph (rules: ir/infer.c).
 *
 * Layers are visited in IR (topological) order, so every input shape is
 * known when a layer is reached.  Layers downstream of one whose shapes do
 * not fit are skipped, so one mistake gives one error. */
#include "passes/passes.h"

#include <stdlib.h>

bool
shape_infer(Graph *g)
{
	bool *bad = xcalloc(g->ntensor ? g->ntensor : 1, sizeof *bad);
	int errors = diag_errors();

	for (int i = 0; i < g->ninput; i++) {
		Tensor *t = &g->tensor[g->input[i]];
		if (!shape_elems(&t->shape, &t->elems)) {
			diag_error(g->loc, "input '%s' has more elements than 64 bits can count",
				   t->name);
			bad[g->input[i]] = true;
		}
	}
	for (int l = 0; l < g->nlayer; l++)
		if (!layer_infer(g, l, bad))
			for (int i = 0; i < g->layer[l].nout; i++)
				bad[g->layer[l].out[i]] = true;
	free(bad);
	if (diag_errors() > errors)
		return false;
	g->done |= PASS_SHAPE;
	return true;
}
