/* verify.c -- ir_verify: check the Graph's invariants between passes.
 *
 * Like QBE's ssacheck, it runs after every pass in checking builds (see
 * main.c).  A broken invariant is a bug in oraclec, not in the input, so
 * it is reported as "internal" and counted by the caller. */
#include "ir/ir.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static int nbad;

static void
bad(const Graph *g, const char *fmt, const char *what, int idx)
{
	fprintf(stderr, "%s: internal: ir_verify: ", g->source ? g->source : "?");
	fprintf(stderr, fmt, what, idx);
	fputc('\n', stderr);
	nbad++;
}

static const Graph *sortg;

static int
byname(const void *a, const void *b)
{
	return strcmp(sortg->layer[*(const int *)a].name, sortg->layer[*(const int *)b].name);
}

static void
unique_names(const Graph *g)
{
	int *ix = xcalloc(g->nlayer ? g->nlayer : 1, sizeof *ix);

	for (int i = 0; i < g->nlayer; i++)
		ix[i] = i;
	sortg = g;
	qsort(ix, g->nlayer, sizeof *ix, byname);
	for (int i = 1; i < g->nlayer; i++)
		if (strcmp(g->layer[ix[i]].name, g->layer[ix[i - 1]].name) == 0)
			bad(g, "layer name '%s' used twice (layer %d)", g->layer[ix[i]].name,
			    ix[i]);
	free(ix);
}

static void
check_shape(const Graph *g, const Tensor *t, int idx)
{
	int64_t n = 1;

	if (t->shape.rank < 0 || t->shape.rank > MAX_RANK) {
		bad(g, "tensor '%s' (%d) has a bad rank", t->name, idx);
		return;
	}
	for (int i = 0; i < t->shape.rank; i++) {
		if (t->shape.d[i] < 1 || t->shape.d[i] > MAX_DIM)
			bad(g, "tensor '%s' (%d) has a dimension out of range", t->name, idx);
		n *= t->shape.d[i] < 1 ? 1 : t->shape.d[i];
	}
	if (n != t->elems)
		bad(g, "tensor '%s' (%d) element count disagrees with its shape", t->name, idx);
}

static void
check_layer(const Graph *g, int l)
{
	const Layer *ly = &g->layer[l];

	if ((unsigned)ly->op >= OP_COUNT)
		bad(g, "layer '%s' (%d) has a bad op kind", ly->name, l);
	if (!ly->name || !*ly->name)
		bad(g, "layer %s%d has no name", "", l);
	for (int i = 0; i < ly->nin; i++) {
		int t = ly->in[i];
		if (t < 0 || t >= g->ntensor)
			bad(g, "layer '%s' (%d) reads a tensor out of range", ly->name, l);
		else if (g->tensor[t].producer >= l)
			bad(g, "layer '%s' (%d) reads a tensor made later: not topological",
			    ly->name, l);
	}
	for (int i = 0; i < ly->nout; i++) {
		int t = ly->out[i];
		if (t < 0 || t >= g->ntensor || g->tensor[t].producer != l)
			bad(g, "layer '%s' (%d) has an output it did not produce", ly->name, l);
	}
	if (ly->cost.macs < 0 || ly->cost.flops_fwd < 0 || ly->cost.params < 0 ||
	    ly->cost.act_elems < 0)
		bad(g, "layer '%s' (%d) has a negative cost", ly->name, l);
}

static void
check_totals(const Graph *g)
{
	Totals s = { 0 };

	for (int l = 0; l < g->nlayer; l++) {
		s.params += g->layer[l].cost.params;
		s.macs += g->layer[l].cost.macs;
		s.flops_fwd += g->layer[l].cost.flops_fwd;
	}
	if (s.params != g->total.params || s.macs != g->total.macs ||
	    s.flops_fwd != g->total.flops_fwd)
		bad(g, "model totals disagree with the layer sums%s%.0d", "", 0);
}

int
ir_verify(const Graph *g)
{
	nbad = 0;
	for (int t = 0; t < g->ntensor; t++) {
		const Tensor *tt = &g->tensor[t];
		if (tt->producer < -1 || tt->producer >= g->nlayer)
			bad(g, "tensor '%s' (%d) has a bad producer", tt->name, t);
		if (g->done & PASS_SHAPE)
			check_shape(g, tt, t);
	}
	for (int l = 0; l < g->nlayer; l++)
		check_layer(g, l);
	if (!g->done) /* names never change after the frontend: check them once */
		unique_names(g);
	if (g->done & PASS_COST)
		check_totals(g);
	for (int i = 0; i < g->ntiming; i++) {
		const Timing *t = &g->timing[i];
		if (t->first < 0 || t->first > t->last || t->last >= g->nlayer ||
		    !(t->fwd >= 0) || !(t->bwd >= 0))
			bad(g, "timing %s%d covers no layers or has a bad time", "", i);
	}
	return nbad;
}
