/* memory.c -- what training keeps from forward for backward, per sample.
 *
 * A tensor is kept when some layer's backward needs it: its inputs for
 * conv, fc, matmul, norms, max pools and the activations marked S_IN in
 * ir/ops.def, its output for ReLU, sigmoid, tanh, softmax and dropout's
 * mask (S_OUT).  Views (flatten, reshape, identity) share their input's
 * memory, so keeping a view keeps its root.  A kept tensor is counted once,
 * however many layers need it, on the layer that produced it; kept graph
 * inputs count in the model total only.  This is what PyTorch's autograd
 * saves without activation checkpointing. */
#include "passes/passes.h"
#include "util/checked.h"

static void
keep(Graph *g, int t)
{
	g->tensor[g->tensor[t].root].saved = true;
}

bool
memory_annotate(Graph *g)
{
	Totals *tot = &g->total;
	int64_t sum = 0;

	for (int t = 0; t < g->ntensor; t++) {
		g->tensor[t].root = t;
		g->tensor[t].saved = false;
	}
	for (int i = 0; i < g->nlayer; i++) {
		const Layer *l = &g->layer[i];
		int save = op_info[l->op].save;
		for (int k = 0; k < l->nout; k++)
			if (save & S_VIEW)
				g->tensor[l->out[k]].root = g->tensor[l->in[0]].root;
		for (int k = 0; k < l->nin && (save & S_IN); k++)
			keep(g, l->in[k]);
		for (int k = 0; k < l->nout && (save & S_OUT); k++)
			keep(g, l->out[k]);
	}
	for (int i = 0; i < g->nlayer; i++) {
		Layer *l = &g->layer[i];
		l->cost.act_elems = 0;
		for (int k = 0; k < l->nout; k++) {
			const Tensor *t = &g->tensor[l->out[k]];
			if (t->saved && t->root == l->out[k])
				l->cost.act_elems += t->elems; /* checked below in sum */
		}
	}
	for (int t = 0; t < g->ntensor; t++)
		if (g->tensor[t].saved && !ck_add(sum, g->tensor[t].elems, &sum)) {
			diag_error(g->loc, "activation memory overflows 64 bits");
			return false;
		}
	tot->act_elems = sum;
	if (!ck_mul(sum, g->elem_bytes, &tot->act_bytes)) {
		diag_error(g->loc, "activation memory overflows 64 bits");
		return false;
	}
	for (int i = 0; i < g->nlayer; i++) /* each at most the total: no overflow */
		g->layer[i].cost.act_bytes = g->layer[i].cost.act_elems * g->elem_bytes;
	g->done |= PASS_MEMORY;
	return true;
}
