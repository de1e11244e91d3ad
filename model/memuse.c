/* memuse.c -- memory per GPU by part, the one breakdown every strategy of
 * the default cost model fills (docs/model.md, "Memory per GPU"), and
 * what training keeps in bytes at the analysis's precision.
 *
 * A GPU holds its weights, their gradients and the optimizer's state for
 * the whole step; the activations forward kept for backward, all held when
 * the forward pass ends; on top of them, at the backward pass's peak, the
 * gradients in flight (memory_transient); the largest convolution's
 * workspace; and the system's reserve (CUDA context and what the caching
 * allocator holds back).  These parts are alive together at the backward
 * pass's peak, so the peak is their sum.
 *
 * The memory pass counts elements (Graph.keep); the bytes are the
 * analysis's: each element at its precision's width, autocast's 16-bit
 * ones at its low width, the fixed-width bytes as they are. */
#include "model/model.h"
#include "passes/passes.h"

#include <stdlib.h>

/* g's count that applies to an: its precision's regime, the attentions
 * fused where the implementation runs them as one kernel. */
static const Keeps *
keeps(const Analysis *an, const Graph *g)
{
	return graph_keeps(g, an->q.set.prec, an->q.impl.fused_attention);
}

/* What k (one of g's counts) keeps at those widths. */
static KeptBytes
kept_at_widths(const Graph *g, const Keeps *k, int wide, int narrow)
{
	KeptBytes b = { .input = k->input * wide };

	b.act = kept_at(&k->layers, wide, narrow) + b.input;
	b.saved_fixed = k->saved_fixed;
	b.transient = memory_transient(g, k, wide, narrow);
	/* the workspace at the width the convolutions compute in */
	b.workspace = g->total.workspace * (narrow ? narrow : wide);
	b.cast_weights = g->total.cast_weights * narrow;
	return b;
}

/* The engine's last answers, by everything they read: the graph (its
 * identity and version), which of its counts, and the widths (an analysis
 * asks for its own again and again, a search for a few precisions); with
 * each layer's bytes, which the pipeline's loops read. */
enum { KEPT_MEMO = 4 };
typedef struct KeptAnswer {
	const Graph *g;
	uint64_t version;
	const Keeps *k;
	int wide, narrow;
	KeptBytes b;
	double *layer;            /* each layer's kept bytes (nlayer) */
} KeptAnswer;
typedef struct KeptMemo {
	KeptAnswer a[KEPT_MEMO];
	int next;                 /* the slot the next new answer takes */
	int last;                 /* the slot last found, looked at first */
} KeptMemo;

/* Each layer's bytes of k at those widths into b[]. */
static void
layers_at(const Graph *g, const Keeps *k, int wide, int narrow, double *b)
{
	for (int i = 0; i < g->nlayer; i++)
		b[i] = (double)kept_at(&k->layer[i], wide, narrow);
}

/* an's answer on g, made on a miss. */
static const KeptAnswer *
answer(const Analysis *an, const Graph *g)
{
	Engine *e = an->eng;
	const Keeps *k = keeps(an, g);
	int wide = precision_bytes(an->q.set.prec), narrow = precision_low(an->q.set.prec);
	KeptAnswer *m;

	if (!e->kept)
		e->kept = xcalloc(1, sizeof *e->kept);
	for (int j = 0; j < KEPT_MEMO; j++) {
		int i = (e->kept->last + j) % KEPT_MEMO;
		m = &e->kept->a[i];
		if (m->g == g && m->version == g->version && m->k == k && m->wide == wide &&
		    m->narrow == narrow) {
			e->kept->last = i;
			return m;
		}
	}
	e->kept->last = e->kept->next;
	m = &e->kept->a[e->kept->next];
	e->kept->next = (e->kept->next + 1) % KEPT_MEMO;
	free(m->layer);
	*m = (KeptAnswer){ .g = g, .version = g->version, .k = k, .wide = wide, .narrow = narrow,
			   .b = kept_at_widths(g, k, wide, narrow),
			   .layer = xcalloc((size_t)g->nlayer + 1, sizeof *m->layer) };
	layers_at(g, k, wide, narrow, m->layer);
	return m;
}

KeptBytes
kept(const Analysis *an, const Graph *g)
{
	Precision p = an->q.set.prec;

	if (!an->eng->reuse)
		return kept_at_widths(g, keeps(an, g), precision_bytes(p), precision_low(p));
	return answer(an, g)->b;
}

const double *
kept_layers(const Analysis *an, const Graph *g)
{
	Precision p = an->q.set.prec;
	double *b;

	if (an->eng->reuse)
		return answer(an, g)->layer;
	b = engine_scratch(an->eng, SC_MEM_KEPT, (size_t)g->nlayer + 1, sizeof *b);
	layers_at(g, keeps(an, g), precision_bytes(p), precision_low(p), b);
	return b;
}

void
kept_free(struct KeptMemo *m)
{
	for (int i = 0; m && i < KEPT_MEMO; i++)
		free(m->a[i].layer);
	free(m);
}

double
kept_layer(const Analysis *an, const Graph *g, int i)
{
	return (double)kept_bytes(&keeps(an, g)->layer[i], an->q.set.prec);
}

ModelBytes
model_bytes(const Analysis *an, const Graph *g)
{
	Precision p = an->q.set.prec;
	const Keeps *k = graph_keeps(g, p, false), *plain = &g->keep[0][KEEP_PLAIN];
	ModelBytes b = { .item = precision_bytes(p), .low = precision_low(p) };

	b.weights = g->total.params * b.item;
	b.buffers = g->total.buffers * b.item;
	b.act = kept_at(&k->layers, b.item, b.low) + k->input * b.item;
	b.saved = kept_bytes(&plain->layers, PREC_FP32);
	b.saved_fixed = plain->saved_fixed;
	b.saved_low = b.low ? kept_at(&k->layers, b.item, b.low) : 0;
	b.cast_weights = g->total.cast_weights * b.low;
	return b;
}

LayerBytes
layer_bytes(const Analysis *an, const Graph *g, int i)
{
	Precision p = an->q.set.prec;
	const Cost *c = &g->layer[i].cost;
	int w = precision_bytes(p);

	return (LayerBytes){ .act = kept_bytes(&graph_keeps(g, p, false)->layer[i], p),
			     .fwd = c->elems_fwd * w,
			     .bwd = c->elems_bwd * w };
}

void
mem_activations(MemUse *m, const KeptBytes *t, double samples, double share)
{
	m->activations = ((double)t->act * samples + (double)t->saved_fixed) * share;
	m->transient = (double)t->transient * samples * share;
	m->workspace = (double)t->workspace * share;
}

double
mem_cast_weights(const Analysis *an, const Graph *g, double weights)
{
	double copies = (double)(g->total.cast_weights * precision_low(an->q.set.prec));

	return g->total.params > 0 ? copies * weights / (double)g->total.params : 0;
}

void
mem_total(MemUse *m, const System *s)
{
	m->buffers = s->reserved;
	m->total = m->weights + m->grads + m->optimizer + m->activations + m->transient +
		   m->workspace + m->buffers;
}
