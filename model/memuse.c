/* memuse.c -- memory per GPU by part, the one breakdown every strategy of
 * the default cost model fills (docs/model.md, "Memory per GPU").
 *
 * A GPU holds its weights, their gradients and the optimizer's state for
 * the whole step; the activations forward kept for backward, all held when
 * the forward pass ends; on top of them, at the backward pass's peak, the
 * gradients in flight (Totals.transient_bytes); the largest convolution's
 * workspace; and the system's reserve (CUDA context and what the caching
 * allocator holds back).  These parts are alive together at the backward
 * pass's peak, so the peak is their sum. */
#include "model/model.h"

const Totals *
kept(const Analysis *an, const Graph *g)
{
	return an->q.impl.fused_attention && g->fused_act ? &g->fused_total : &g->total;
}

double
kept_layer(const Analysis *an, const Graph *g, int i)
{
	return (double)(an->q.impl.fused_attention && g->fused_act ? g->fused_act[i]
								 : g->layer[i].cost.act_bytes);
}

const int64_t *
kept_layers(const Analysis *an, const Graph *g, const int64_t *act)
{
	return an->q.impl.fused_attention && g->fused_act ? g->fused_act : act;
}

void
mem_activations(MemUse *m, const Totals *t, double samples, double share)
{
	m->activations = ((double)t->act_bytes * samples + (double)t->saved_fixed_bytes) * share;
	m->transient = (double)t->transient_bytes * samples * share;
	m->workspace = (double)t->workspace_bytes * share;
}

double
mem_cast_weights(const Totals *t, double weights)
{
	return t->params > 0 ? (double)t->cast_weight_bytes * weights / (double)t->params : 0;
}

void
mem_total(MemUse *m, const System *s)
{
	m->buffers = s->reserved;
	m->total = m->weights + m->grads + m->optimizer + m->activations + m->transient +
		   m->workspace + m->buffers;
}
