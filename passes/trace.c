/* trace.c -- a profiler's trace (Graph.trace, frontend/trace.c) given to
 * the layers: each module's time per step goes to the layers whose module
 * it is (modules.c: "/layer1/layer1.0/conv1/Conv" is layer1.0.conv1's,
 * ODL's "layer1/y/conv1" is layer1.y.conv1's), shared out over several
 * (a module called twice: ReLU's "relu" and "relu_1") in proportion to
 * their FLOPs and bytes at the system's peak and bandwidth, then divided
 * by the samples a step took.  A layer no module of the trace made keeps
 * the model's time.  docs/model.md, "Measured layer times". */
#include "passes/passes.h"

#include <stdlib.h>
#include <string.h>

#include "util/escape.h"
#include "util/map.h"

/* The weight of layer l in its module's time: its roofline with no
 * efficiencies, forward or backward (1 where the system gives no peak). */
static double
weight(const Layer *l, const System *s, bool bwd)
{
	double peak = s && s->peak[DT_FP32] > 0 ? s->peak[DT_FP32] : 1;
	double bw = s && s->mem_bw > 0 ? s->mem_bw : 1;
	double c = (double)(bwd ? l->cost.flops_bwd : l->cost.flops_fwd) / peak;
	double m = (double)(bwd ? l->cost.bytes_bwd : l->cost.bytes_fwd) / bw;

	return c > m ? c : m;
}

/* Says once what the trace gave: how many layers, of how many; the
 * modules with a time that made no layer. */
static void
report(const Graph *g, TraceProfile *t, const int *layers, int64_t samples, bool given)
{
	int lost = 0, timed = 0;
	const char *first = NULL;
	char *name;

	if (t->reported)
		return;
	t->reported = true;
	for (int m = 0; m < t->nmod; m++) {
		timed += t->mod[m].timed;
		if (t->mod[m].timed && !layers[m] && !lost++)
			first = t->mod[m].module;
	}
	if (!given)
		diag_warn((Loc){ t->file, 0, 0 }, "the trace does not say how many samples a step "
			  "took (a split plan's); its times are taken per %lld samples, the "
			  "analysis's per GPU", (long long)samples);
	diag_note((Loc){ t->file, 0, 0 }, "profile: %d of %d layers from the trace (%d steps of "
		  "%lld samples on rank %d); the others keep the model's time", t->matched,
		  g->nlayer, t->steps, (long long)samples, t->rank);
	if (lost) {
		name = esc_text_cut(first, strlen(first), NAME_SHOWN);
		diag_note((Loc){ t->file, 0, 0 },
			  "%d of the trace's %d timed modules made no "
			  "layer of the model ('%s'%s)",
			  lost, timed, name, lost > 1 ? ", ..." : "");
		free(name);
	}
}

bool
trace_times(Graph *g, const System *s, int64_t samples)
{
	TraceProfile *t = g->trace;
	Modules mod;
	Map ids;
	int *layers, *mod_of;
	double (*sum)[2];
	bool given;

	if (!t)
		return true;
	given = t->batch > 0;
	if (given)
		samples = t->batch;
	if (samples < 1)
		samples = 1;
	modules_derive(g, &mod);
	map_init(&ids, g->arena);
	for (int m = 0; m < t->nmod; m++)
		if (t->mod[m].timed)
			map_put(&ids, t->mod[m].module, (void *)(intptr_t)(m + 1));
	layers = arena_array(g->arena, (size_t)t->nmod + 1, sizeof *layers);
	sum = arena_array(g->arena, (size_t)t->nmod + 1, sizeof *sum);
	mod_of = arena_array(g->arena, (size_t)g->nlayer + 1, sizeof *mod_of);
	for (int i = 0; i < g->nlayer; i++) {
		intptr_t m = *mod.fqn[i] ? (intptr_t)map_get(&ids, mod.fqn[i]) : 0;
		mod_of[i] = (int)m - 1;
		if (m) {
			layers[m - 1]++;
			sum[m - 1][0] += weight(&g->layer[i], s, false);
			sum[m - 1][1] += weight(&g->layer[i], s, true);
		}
	}
	t->matched = 0;
	for (int i = 0; i < g->nlayer; i++) {
		Layer *l = &g->layer[i];
		int m = mod_of[i];
		double share[2];
		if (m < 0)
			continue;
		for (int b = 0; b < 2; b++)
			share[b] = sum[m][b] > 0 ? weight(l, s, b) / sum[m][b] : 1.0 / layers[m];
		l->timed = true;
		l->fwd_s = t->mod[m].fwd * share[0] / (double)samples;
		l->bwd_s = t->mod[m].bwd * share[1] / (double)samples;
		t->matched++;
	}
	report(g, t, layers, samples, given);
	return true;
}
