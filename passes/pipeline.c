/* pipeline.c -- layer (pipeline) parallelism: contiguous stages, GPipe.
 *
 * The layers, in topological order, are cut into S contiguous stages, one
 * per GPU.  With M micro-batches of B/M samples, GPipe runs M + S - 1
 * steps, each as long as the slowest stage (forward and backward of one
 * micro-batch), and keeps every micro-batch's activations until its
 * backward pass.  For each M (powers of two up to B) the partition that
 * minimises the slowest stage under the per-GPU memory limit is found
 * exactly: the least bound T for which packing layers greedily into stages
 * of time <= T and memory <= the limit needs at most S stages (greedy
 * packing is optimal for contiguous partitions under additive limits, so
 * bisection on T finds the optimum).  The best M is kept.
 *
 * A plan (--plan) may allow cuts only after some layers, at the
 * boundaries of the blocks a framework can split at: the layers between
 * two allowed cuts are then packed as one item.  The candidate keeps each
 * stage's time and memory, which the plan lists. */
#include "passes/model.h"
#include "passes/passes.h"

#include <math.h>
#include <stdlib.h>

typedef struct Stages {
	int n;
	int *end;      /* last layer of each stage */
} Stages;

/* Greedy packing under time bound T and memory cap; false if more than
 * S stages would be needed (or a single layer breaks a limit).  pt and pm
 * are prefix sums (pt[i] = t[0] + ... + t[i-1]): each stage's last layer
 * is found by binary search, so a check costs O(S log L), not O(L). */
static bool
pack(const double *pt, const double *pm, int L, double T, double cap, int S, Stages *st)
{
	int first = 0;

	st->n = 0;
	while (first < L) {
		int lo = first, hi = L - 1;
		if (st->n == S)
			return false;
		/* the last layer e with both sums of [first, e] within the limits */
		if (pt[first + 1] - pt[first] > T || pm[first + 1] - pm[first] > cap)
			return false;
		while (lo < hi) {
			int mid = lo + (hi - lo + 1) / 2;
			if (pt[mid + 1] - pt[first] <= T && pm[mid + 1] - pm[first] <= cap)
				lo = mid;
			else
				hi = mid - 1;
		}
		st->end[st->n++] = lo;
		first = lo + 1;
	}
	return true;
}

/* Splits stages until there are S (or every stage holds one layer):
 * more stages never make the slowest one slower. */
static void
spread(Stages *st, int S)
{
	while (st->n < S) {
		int k = -1;
		for (int i = 0; i < st->n; i++) {
			int first = i ? st->end[i - 1] + 1 : 0;
			if (st->end[i] > first) {
				k = i;
				break;
			}
		}
		if (k < 0)
			return;
		for (int i = st->n; i > k; i--)
			st->end[i] = st->end[i - 1];
		st->end[k] = (k ? st->end[k - 1] + 1 : 0);
		st->n++;
	}
}

static double
stage_max(const double *v, const Stages *st)
{
	double worst = 0;

	for (int i = 0, first = 0; i < st->n; first = st->end[i] + 1, i++) {
		double sum = 0;
		for (int j = first; j <= st->end[i]; j++)
			sum += v[j];
		if (sum > worst)
			worst = sum;
	}
	return worst;
}

/* The optimal bound for S stages, or -1 when memory makes it impossible. */
static double
partition(const double *t, const double *m, int L, double cap, int S, Stages *st)
{
	double lo = 0, hi, T = -1;
	double *pt = xcalloc(L + 1, sizeof *pt), *pm = xcalloc(L + 1, sizeof *pm);

	for (int i = 0; i < L; i++) {
		pt[i + 1] = pt[i] + t[i];
		pm[i + 1] = pm[i] + m[i];
		if (t[i] > lo)
			lo = t[i];
	}
	hi = pt[L];
	if (pack(pt, pm, L, hi * (1 + 1e-12), cap, S, st)) {
		for (int it = 0; it < 64 && hi - lo > 1e-12 * hi; it++) {
			double mid = (lo + hi) / 2;
			if (pack(pt, pm, L, mid, cap, S, st))
				hi = mid;
			else
				lo = mid;
		}
		pack(pt, pm, L, hi, cap, S, st);
		spread(st, S);
		T = stage_max(t, st);
	}
	free(pt);
	free(pm);
	return T;
}

/* Time of forward and backward of one micro-batch of n samples (t), the
 * parameters (w) and the memory a stage holds for it (m), per layer. */
static void
layer_costs(const Graph *g, const Analysis *an, double n, int64_t M, double *t, double *m,
	    double *w)
{
	const System *s = an->sys;
	double delta = g->elem_bytes, per_w = 2 * delta + optimizer_bytes(an->opt);
	double in_act = (double)g->total.act_bytes;

	for (int i = 0; i < g->nlayer; i++) {
		const Layer *l = &g->layer[i];
		t[i] = layer_time(s, an->prec, g, l, n, 1, false) +
		       layer_time(s, an->prec, g, l, n, 1, true);
		w[i] = (double)l->cost.params;
		m[i] = w[i] * per_w + (double)l->cost.act_bytes * n * M;
		in_act -= (double)l->cost.act_bytes;
	}
	m[0] += in_act * n * M; /* the kept graph input lives on the first stage */
}

/* Where the layers may be cut: G items, item j ending at layer end[j]
 * (NULL: every layer is an item). */
typedef struct Items {
	const int *end;
	int n;
	double *t, *m;  /* the items' sums */
} Items;

/* The optimal partition of the items; st->end[] are layer indices. */
static double
partition_items(const double *t, const double *m, int L, const Items *it, double cap, int S,
		Stages *st)
{
	double T;

	if (!it->end)
		return partition(t, m, L, cap, S, st);
	for (int j = 0, i = 0; j < it->n; j++) {
		it->t[j] = it->m[j] = 0;
		for (; i <= it->end[j]; i++)
			it->t[j] += t[i], it->m[j] += m[i];
	}
	if ((T = partition(it->t, it->m, it->n, cap, S, st)) < 0)
		return T;
	for (int i = 0; i < st->n; i++)
		st->end[i] = it->end[st->end[i]];
	return stage_max(t, st);
}

/* Per GPU, beyond a stage's own layers (m[]): the backward peak's
 * gradients in flight and the workspace for one micro-batch of n samples
 * (the whole model's figures, an upper bound for a stage) and the
 * system's reserve. */
static double
stage_extra(const Graph *g, const System *s, double n)
{
	return (double)g->total.transient_bytes * n + (double)g->total.workspace_bytes +
	       s->reserved;
}

/* The breakdown of the stage that needs the most memory: its weights,
 * gradients and optimizer state, the kept activations of the micro-batches
 * GPipe holds, then the parts stage_extra() adds, as memuse.c sums them. */
static void
stage_memory(const Graph *g, const Analysis *an, const Stages *st, const double *m,
	     const double *w, double n, MemUse *mem)
{
	double wb = 0, most = -1;

	for (int i = 0, first = 0; i < st->n; first = st->end[i] + 1, i++) {
		double sm = 0, sw = 0;
		for (int j = first; j <= st->end[i]; j++)
			sm += m[j], sw += w[j];
		if (sm > most)
			most = sm, wb = sw;
	}
	mem->weights = wb * g->elem_bytes + mem_cast_weights(&g->total, wb);
	mem->grads = wb * g->elem_bytes;
	mem->optimizer = wb * optimizer_bytes(an->opt);
	mem->activations = most - wb * (2.0 * g->elem_bytes + optimizer_bytes(an->opt));
	mem->transient = (double)g->total.transient_bytes * n;
	mem->workspace = (double)g->total.workspace_bytes;
	mem_total(mem, an->sys);
}

/* Evaluates M micro-batches; fills k and returns false when no partition
 * fits in memory. */
static bool
with_micro(const Graph *g, const Analysis *an, const Mapping *map, Candidate *k, int64_t B,
	   int64_t M, double cap, double *t, double *m, double *w, const Items *it, Stages *st)
{
	int64_t S = map->q;
	const System *s = an->sys;
	double n = (double)B / M, delta = g->elem_bytes;
	double T, edge = 0, upd = 0;
	int L = g->nlayer;

	layer_costs(g, an, n, M, t, m, w);
	if ((T = partition_items(t, m, L, it, cap - stage_extra(g, s, n), (int)S, st)) < 0)
		return false;
	/* the largest activation crossing a stage boundary, each way */
	for (int i = 0; i + 1 < st->n; i++) {
		double y = (double)g->tensor[g->layer[st->end[i]].out[0]].elems * n * delta;
		if (y > edge)
			edge = y;
	}
	for (int i = 0, first = 0; i < st->n; first = st->end[i] + 1, i++) {
		double ww = 0, arrays = 0;
		for (int j = first; j <= st->end[i]; j++)
			ww += w[j], arrays += g->layer[j].nw;
		if (update_time(s, an->opt, ww, arrays) > upd)
			upd = update_time(s, an->opt, ww, arrays);
	}
	k->micro_batches = M;
	k->per_gpu_batch = n;
	k->t.compute = M * T;
	k->t.bubble = (S - 1) * T;
	k->t.p2p = st->n > 1 ? (M + S - 2) * 2 * p2p_time(s, edge, map->across) : 0;
	k->t.update = upd;
	/* the first stage loads every sample */
	k->t.input = input_time(s, (double)B, 1, an->sample_bytes, an->decode);
	stage_memory(g, an, st, m, w, n, &k->mem);
	return true;
}

/* Keeps the stages of st, and each one's time and memory from the
 * layers' t and m, in the candidate (arena arrays). */
static void
keep_stages(const Graph *g, const Analysis *an, const Stages *st, const double *t,
	    const double *m, Candidate *k)
{
	k->stages = st->n;
	k->stage_end = arena_array(g->arena, st->n, sizeof(int));
	k->stage_time = arena_array(g->arena, st->n, sizeof(double));
	k->stage_mem = arena_array(g->arena, st->n, sizeof(double));
	for (int i = 0, first = 0; i < st->n; first = st->end[i] + 1, i++) {
		k->stage_end[i] = st->end[i];
		k->stage_time[i] = k->stage_mem[i] = 0;
		for (int j = first; j <= st->end[i]; j++)
			k->stage_time[i] += t[j], k->stage_mem[i] += m[j];
		k->stage_mem[i] += stage_extra(g, an->sys, k->per_gpu_batch); /* as mem.total */
	}
}

void
pipeline(const Graph *g, const Analysis *an, const Mapping *map, Candidate *k,
	 const bool *cut_after)
{
	int L = g->nlayer;
	int64_t S = map->q;
	int64_t B = an->global_batch ? an->global_batch : an->batch_per_gpu;
	double *t = xcalloc(L, sizeof *t), *m = xcalloc(L, sizeof *m), *w = xcalloc(L, sizeof *w);
	Stages st = { 0, xcalloc(L + 1, sizeof(int)) };
	Items it = { NULL, L, NULL, NULL };
	int *ends = NULL;
	Candidate best = *k, tmp;
	bool any = false;
	double cap = an->sys->mem;

	if (cut_after) {
		ends = xcalloc(L, sizeof *ends);
		it = (Items){ ends, 0, xcalloc(L, sizeof(double)), xcalloc(L, sizeof(double)) };
		for (int i = 0; i < L; i++)
			if (cut_after[i] || i == L - 1)
				ends[it.n++] = i;
	}
	k->grid[DIM_PIPELINE] = S;
	k->global_batch = B;
	k->max_gpus = it.n;
	if (S > it.n) {
		k->computable = false;
		k->feasible = false;
		k->reason = cut_after ? "more stages than blocks to cut between" : "more stages than layers";
		k->bottleneck = "scaling limit";
		goto out;
	}
again:
	for (int64_t M = 1; M <= B; M = M * 2 > B && M != B ? B : M * 2) {
		tmp = *k;
		if (with_micro(g, an, map, &tmp, B, M, cap, t, m, w, &it, &st)) {
			double total = tmp.t.compute + tmp.t.bubble + tmp.t.p2p + tmp.t.update;
			double bt = best.t.compute + best.t.bubble + best.t.p2p + best.t.update;
			if (!any || total < bt) {
				best = tmp;
				keep_stages(g, an, &st, t, m, &best);
				any = true;
			}
		}
		if (M == B)
			break;
	}
	if (!any && isfinite(cap)) {
		/* no partition fits: predict without the limit; finish() then
		 * marks it infeasible by its memory */
		cap = INFINITY;
		goto again;
	}
	*k = best;
out:
	free(t);
	free(m);
	free(w);
	free(st.end);
	free(ends);
	free(it.t);
	free(it.m);
}

double
pipeline_partition(const double *t, const double *m, int L, double cap, int S, int *end, int *n)
{
	Stages st = { 0, end };
	double T = partition(t, m, L, cap, S, &st);

	*n = st.n;
	return T;
}
