/* tracematch.c -- which entry of a profiler's trace gives each layer its
 * time (passes/tracematch.h):
 *
 *   1. the module that made the layer: a timed module of the trace named
 *      as modules_derive names the layer's (layer1.0.conv1);
 *   2. a batch norm the export folded into the convolution before it
 *      (passes/training.c restored it: a batchnorm after a convolution
 *      whose folded_bn is set) and that no module names: the module the
 *      trace shows called first after that convolution's under the same
 *      parent (layer1.0.conv1 -> layer1.0.bn1, conv1 -> bn1,
 *      downsample.0 -> downsample.1);
 *   3. a plain torch.profiler trace (no module names): the k-th layer of
 *      a kind in the model's order takes the entry of the k-th operator
 *      of that kind in a step (frontend/trace.c), for the kinds whose
 *      layers and entries are as many (else none of that kind: an order
 *      that does not line up gives no time rather than a wrong one). */
#include "passes/tracematch.h"
#include "ir/kernels.h"

#include <stdlib.h>

#include "util/map.h"

int
trace_group(int op)
{
	return op == OP_ADAPTAVGPOOL ? OP_GAVGPOOL : op;
}

int
trace_match(const Graph *g, const Modules *m, const TraceProfile *t, int *ent, TraceHow *how)
{
	Map ids;
	int matched = 0;

	for (int i = 0; i < g->nlayer; i++) {
		ent[i] = -1;
		if (how)
			how[i] = TH_NONE;
	}
	if (!t)
		return 0;
	map_init(&ids, g->arena);
	for (int e = 0; e < t->nmod; e++)
		if (t->mod[e].timed && t->mod[e].op < 0)
			map_put(&ids, t->mod[e].module, (void *)(intptr_t)(e + 1));
	for (int i = 0; i < g->nlayer; i++) {
		intptr_t e = *m->fqn[i] ? (intptr_t)map_get(&ids, m->fqn[i]) : 0;
		if (e) {
			ent[i] = (int)e - 1;
			if (how)
				how[i] = TH_MODULE;
		}
	}
	for (int i = 1; i < g->nlayer; i++) {
		const Layer *l = &g->layer[i], *c = &g->layer[i - 1];
		int next;
		if (ent[i] >= 0 || l->op != OP_BATCHNORM || c->op != OP_CONV || !c->folded_bn ||
		    ent[i - 1] < 0)
			continue;
		next = t->mod[ent[i - 1]].next;
		if (next >= 0 && t->mod[next].timed && t->mod[next].op < 0) {
			ent[i] = next;
			if (how)
				how[i] = TH_FOLDED_BN;
		}
	}
	if (t->plain) {
		/* per kind: the entries by ordinal, and how many layers */
		int *entries[OP_COUNT] = { NULL }, nent[OP_COUNT] = { 0 }, nlay[OP_COUNT] = { 0 };
		int rank[OP_COUNT] = { 0 };
		for (int e = 0; e < t->nmod; e++) {
			int k = t->mod[e].op;
			if (k >= 0 && k < OP_COUNT && t->mod[e].ordinal >= nent[k])
				nent[k] = t->mod[e].ordinal + 1;
		}
		for (int k = 0; k < OP_COUNT; k++)
			if (nent[k]) {
				entries[k] = malloc((size_t)nent[k] * sizeof *entries[k]);
				for (int j = 0; j < nent[k]; j++)
					entries[k][j] = -1;
			}
		for (int e = 0; e < t->nmod; e++) {
			int k = t->mod[e].op;
			if (k >= 0 && k < OP_COUNT && t->mod[e].timed)
				entries[k][t->mod[e].ordinal] = e;
		}
		for (int i = 0; i < g->nlayer; i++)
			if (g->layer[i].pattern != PAT_PART)
				nlay[trace_group(layer_operator(&g->layer[i]))]++;
		for (int i = 0; i < g->nlayer; i++) {
			int k, r;
			if (g->layer[i].pattern == PAT_PART)
				continue;
			k = trace_group(layer_operator(&g->layer[i]));
			r = rank[k]++;
			if (ent[i] >= 0 || nlay[k] != nent[k] || entries[k][r] < 0)
				continue;
			ent[i] = entries[k][r];
			if (how)
				how[i] = TH_ORDER;
		}
		for (int k = 0; k < OP_COUNT; k++)
			free(entries[k]);
	}
	for (int i = 0; i < g->nlayer; i++)
		matched += ent[i] >= 0;
	return matched;
}
