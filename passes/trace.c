/* trace.c -- a profiler's trace (Graph.trace, frontend/trace.c) given to
 * the layers: each module's time per step goes to the layers whose module
 * it is (modules.c: "/layer1/layer1.0/conv1/Conv" is layer1.0.conv1's,
 * ODL's "layer1/y/conv1" is layer1.y.conv1's), shared out over several
 * (a module called twice: ReLU's "relu" and "relu_1") in proportion to
 * their FLOPs and bytes at the system's peak and bandwidth, then divided
 * by the samples a step took.  Which entry is a layer's is
 * passes/tracematch.c's (a module's name, the module after a folded
 * batch norm's convolution, a plain trace's kind and order).  A layer no
 * entry of the trace gives a time keeps the model's; the layers with
 * weights among them are named.  docs/model.md, "Measured layer times". */
#include "passes/passes.h"
#include "passes/tracematch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/escape.h"

/* The weight of layer l in its module's time: its roofline with no
 * efficiencies, forward or backward (1 where the system gives no peak). */
static double
weight(const Layer *l, const System *s, int elem, bool bwd)
{
	double peak = s && s->peak[DT_FP32] > 0 ? s->peak[DT_FP32] : 1;
	double bw = s && s->mem_bw > 0 ? s->mem_bw : 1;
	double c = (double)(bwd ? l->cost.flops_bwd : l->cost.flops_fwd) / peak;
	double m = (double)(bwd ? l->cost.elems_bwd : l->cost.elems_fwd) * elem / bw;

	return c > m ? c : m;
}

/* The layers with weights no entry of the trace gave a time, named
 * (escaped, cut) up to SHOWN of them: said once, with their count. */
enum { SHOWN = 5 };

static void
unmatched(const Graph *g, const TraceProfile *t, const int *mod_of)
{
	int weighted = 0, left = 0, at = 0;
	char names[SHOWN * (NAME_SHOWN + 8) + 8];

	names[0] = '\0';
	for (int i = 0; i < g->nlayer; i++) {
		const Layer *l = &g->layer[i];
		char *name;
		if (l->cost.params <= 0)
			continue;
		weighted++;
		if (mod_of[i] >= 0 || left++ >= SHOWN)
			continue;
		name = esc_text_cut(l->name, strlen(l->name), NAME_SHOWN);
		at += snprintf(names + at, sizeof names - (size_t)at, "%s'%s'", at ? ", " : "",
			       name);
		free(name);
	}
	if (left)
		diag_note((Loc){ t->file, 0, 0 },
			  "profile: %d of the %d layers with weights took no time from the "
			  "trace (%s%s); the model prices them",
			  left, weighted, names, left > SHOWN ? ", ..." : "");
}

/* Says once what the trace gave: how many layers, of how many; the
 * modules with a time that made no layer; the layers with weights that
 * took none. */
static void
report(const Graph *g, TraceProfile *t, const int *layers, const int *mod_of, int64_t samples,
       bool given)
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
	unmatched(g, t, mod_of);
}

/* The modules' times shared out over their layers (mod_of: each
 * layer's, -1 none) at the widths of precision p, into Graph.measured. */
static void
share_out(Graph *g, const System *s, Precision p, const int *mod_of, const int *layers,
	  int64_t samples)
{
	const TraceProfile *t = g->trace;
	double (*sum)[2] = xcalloc((size_t)t->nmod + 1, sizeof *sum);
	int elem = precision_bytes(p);

	for (int i = 0; i < g->nlayer; i++) {
		int m = mod_of[i];
		if (m >= 0) {
			sum[m][0] += weight(&g->layer[i], s, elem, false);
			sum[m][1] += weight(&g->layer[i], s, elem, true);
		}
	}
	for (int i = 0; i < g->nlayer; i++) {
		const Layer *l = &g->layer[i];
		int m = mod_of[i];
		double share[2];
		if (m < 0)
			continue;
		for (int b = 0; b < 2; b++)
			share[b] = sum[m][b] > 0 ? weight(l, s, elem, b) / sum[m][b]
						 : 1.0 / layers[m];
		g->measured[i][p][0] = t->mod[m].fwd * share[0] / (double)samples;
		g->measured[i][p][1] = t->mod[m].bwd * share[1] / (double)samples;
	}
	free(sum);
}

bool
trace_times(Graph *g, const System *s, int64_t samples)
{
	TraceProfile *t = g->trace;
	Modules mod;
	int *layers, *mod_of;
	bool given;

	if (!t)
		return true;
	given = t->batch > 0;
	if (given)
		samples = t->batch;
	if (samples < 1)
		samples = 1;
	modules_derive(g, &mod);
	if (!g->measured)
		g->measured = arena_array(g->arena, (size_t)g->nlayer + 1, sizeof *g->measured);
	layers = arena_array(g->arena, (size_t)t->nmod + 1, sizeof *layers);
	mod_of = arena_array(g->arena, (size_t)g->nlayer + 1, sizeof *mod_of);
	t->matched = trace_match(g, &mod, t, mod_of, NULL);
	for (int i = 0; i < g->nlayer; i++) {
		int m = mod_of[i];
		if (m >= 0) {
			layers[m]++;
			g->layer[i].timed = true;
		}
	}
	for (int p = 0; p < PREC_COUNT; p++)
		if (!s || system_runs(s, (Precision)p))
			share_out(g, s, (Precision)p, mod_of, layers, samples);
	report(g, t, layers, mod_of, samples, given);
	return true;
}
