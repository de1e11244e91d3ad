/* tracematch.h -- which entry of a profiler's trace (ir/trace.h) gives
 * each layer its time (passes/tracematch.c), for the timing pass
 * (passes/trace.c's trace_times); docs/model.md, "A trace of the run". */
#ifndef ORACLEC_PASSES_TRACEMATCH_H
#define ORACLEC_PASSES_TRACEMATCH_H

#include "passes/passes.h"

/* How a layer's entry was found. */
typedef enum TraceHow {
	TH_NONE,       /* no entry: the layer keeps the model's time */
	TH_MODULE,     /* the module that made it (modules_derive's name) */
	TH_FOLDED_BN,  /* a batch norm the export folded into the convolution
	                  before it: the module called after that one's under
	                  the same parent (ModTime.next: layer1.0.bn1) */
	TH_ORDER,      /* a plain trace: the entry of its kind and rank */
} TraceHow;

/* For every layer of g, the entry of t (an index into t->mod) whose time
 * it takes, in ent[i] (-1: none), and how, in how[i] (how may be NULL);
 * returns the layers given one.  m: modules_derive's of g. */
int trace_match(const Graph *g, const Modules *m, const TraceProfile *t, int *ent,
		TraceHow *how);

/* The kind a plain trace's entries of layer kind op are keyed by (ops.def;
 * frontend/trace.c's tables): adaptiveavgpool is globalavgpool's. */
int trace_group(int op);

#endif
