/* reuse.c -- what the strategies compute once and read many times
 * (issue 28.4): per layer, its forward and backward time at a number of
 * samples and a share of its work (compute.c's layer_time), the CPU's
 * issue time of each (host.c's layer_host), a split layer's collectives,
 * a spatial split's halo exchange and gather (split.c), kept in rows
 * that every grid, nesting and micro-batch count of the strategies, the
 * pipeline's stages, the host lane, the search's configurations and the
 * advice's GPU counts share.
 *
 * A row is a pure function's memo.  A layer's time depends on the layer,
 * its samples and share, the graph (its costs, widths and layout) and, of
 * the analysis, on the system, the implementation, the precision,
 * forward_only and whether ZeRO shards the gradients (stage 2 and up);
 * the collectives on the group besides.  A row's key is therefore its
 * kind and arguments, the graph's version (ir/graph.h: new after every
 * pass) and widths, every byte of the system, and every byte of the
 * analysis before its results (Analysis.cand) but those that none of
 * these reads and the strategies, the search and the advice vary: the
 * GPU count, the batch, dataset and input, the micro-batches, the
 * schedule, the optimizer, ZeRO below stage 2 and its node sharding,
 * recomputation.  A field such a function comes to read must leave that
 * list (key_of).  One read in 1,024 of a filled entry computes it again
 * and dies where the two differ.
 *
 * Layers alike cost alike: a row keeps a figure per class of layers
 * (layer_table's classes: every byte of the layer but its name, place
 * and pointers, of its window, shapes and weights, of its tensors and of
 * what it reads of their producers), so a chain's million layers cost a
 * few computations a row.  The same check reads through them.
 *
 * Rows are filled as they are read (NaN: not yet), live in a table of
 * ROWS within a budget of bytes (the row least recently asked for goes
 * first), and a row stays valid until ROWS_HELD more have been asked for:
 * a caller holds a few at a time. */
#include "model/model.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum {
	SC_LANE = SCRATCH_REUSE,  /* lane_times's arrays where rows have none */
	CTXS = 8,                 /* analyses (keys) kept at once */
	ROWS = 1024,              /* rows kept at once */
	BUCKETS = 2048,
	PREFIX = offsetof(Analysis, cand),
};
/* Bytes of rows kept beyond those held: 192 MiB, the rows of a strategy's
 * grids on a model of 100,000 layers, but less for a model larger than
 * 200,000 layers (at least 64 MiB, four rows of a million layers): one
 * that large runs near the memory of the machine, and on few GPUs its
 * rows are read soon after they are made. */
static size_t
budget(size_t layers)
{
	size_t most = (size_t)192 << 20, least = (size_t)64 << 20;
	double scaled = (double)most * 200000 / (double)(layers ? layers : 1);

	return layers <= 200000 ? most : scaled > (double)least ? (size_t)scaled : least;
}

typedef struct Key {
	const Graph *g;
	uint64_t version;
	int nlayer;
	_Alignas(max_align_t) unsigned char an[PREFIX];
	System sys;
} Key;

typedef struct Row {
	int ctx;                  /* -1: free */
	int next;                 /* the bucket's chain */
	RowKind kind;
	double arg[4];            /* Times' arguments as doubles */
	double *t[2];
	bool classed;             /* t[] per class of layers (layer_classes),
	                             not per layer */
	size_t len;
	uint64_t used;
	uint64_t id;              /* a serial no other row had */
} Row;

static Key key[CTXS], probe;
static uint64_t key_used[CTXS];
static bool key_live[CTXS];
static int current = -1;
/* analysis_stamp's keys and their stamps */
static Key pkey[CTXS];
static uint64_t pkey_used[CTXS], pkey_stamp[CTXS], stamps;
static bool pkey_live[CTXS];
static int pcurrent = -1;
static Row row[ROWS];
static int head[BUCKETS], nrows;
static bool ready;
static size_t bytes;
static uint64_t tick;     /* keys' clock */
static uint64_t handed;   /* rows handed out: the rows' clock */
static uint64_t serial;   /* rows made */
unsigned times_reads;
bool times_reuse = true;

static void
init(void)
{
	for (int i = 0; i < BUCKETS; i++)
		head[i] = -1;
	for (int i = 0; i < ROWS; i++)
		row[i].ctx = -1;
	ready = true;
}

/* The key of an and g's layer times into *k; with `whole`, of everything
 * but the GPU count, the batch, the dataset and the input (analysis_stamp). */
static void
key_of(const Analysis *an, const Graph *g, Key *k, bool whole)
{
	Analysis a;

	memcpy(&a, an, PREFIX);
	a.q.sys = NULL; /* the system's bytes are compared instead */
	a.q.set.micro_batches = 0;
	a.q.set.gpus = a.q.set.batch_per_gpu = a.q.set.global_batch = a.q.set.dataset_size = 0;
	a.q.set.sample_bytes = 0;
	a.q.set.data = DATA_AUTO;
	a.q.set.loader_workers = 0; /* the implementation's, in a.impl */
	a.q.set.impl = NULL;
	a.q.set.dropout_after = NULL; /* the graph's, in its version */
	a.q.set.as_exported = false;
	a.q.set.recompute = 0;        /* a.rc's */
	if (!whole) {
		a.q.set.opt = OPT_SGD;
		a.q.set.schedule = SCHED_GPIPE;
		a.q.set.virtual_stages = 0;
		a.q.set.zero = a.q.set.zero >= 2 ? 2 : 0; /* accumulate_time, layer_host: below 2 or not */
		a.q.set.zero_node = false;
		a.rc = (Recompute){ 0 };
	}
	memset(k, 0, sizeof *k);
	k->g = g;
	k->version = g->version;
	k->nlayer = g->nlayer;
	memcpy(k->an, &a, PREFIX);
	k->sys = *an->q.sys;
}

/* Row r's tables freed and its slot empty (unlinked already). */
static void
free_row(Row *r)
{
	bytes -= (r->t[1] ? 2 : 1) * r->len * sizeof(double);
	free(r->t[0]);
	free(r->t[1]);
	*r = (Row){ .ctx = -1 };
	nrows--;
}

/* Drops the rows of context c (all with c < 0). */
static void
drop(int c)
{
	for (int b = 0; b < BUCKETS; b++)
		for (int *p = &head[b]; *p >= 0;) {
			Row *r = &row[*p];
			if (c >= 0 && r->ctx != c) {
				p = &r->next;
				continue;
			}
			*p = r->next;
			free_row(r);
		}
}

/* The context of an and g: a kept key, or the least recently used
 * replaced by it. */
static int
context(const Analysis *an, const Graph *g)
{
	int c = 0;

	key_of(an, g, &probe, false);
	if (current >= 0 && memcmp(&key[current], &probe, sizeof probe) == 0)
		return current;
	for (int i = 0; i < CTXS; i++) {
		if (key_live[i] && memcmp(&key[i], &probe, sizeof probe) == 0)
			return current = i;
		if (!key_live[i] || (key_live[c] && key_used[i] < key_used[c]))
			c = i;
	}
	if (key_live[c])
		drop(c);
	key[c] = probe;
	key_live[c] = true;
	return current = c;
}

uint64_t
analysis_stamp(const Analysis *an, const Graph *g)
{
	int c = 0;

	key_of(an, g, &probe, true);
	if (pcurrent >= 0 && memcmp(&pkey[pcurrent], &probe, sizeof probe) == 0)
		return pkey_stamp[pcurrent];
	for (int i = 0; i < CTXS; i++) {
		if (pkey_live[i] && memcmp(&pkey[i], &probe, sizeof probe) == 0) {
			pkey_used[i] = ++tick;
			return pkey_stamp[pcurrent = i];
		}
		if (!pkey_live[i] || (pkey_live[c] && pkey_used[i] < pkey_used[c]))
			c = i;
	}
	pkey[c] = probe;
	pkey_live[c] = true;
	pkey_used[c] = ++tick;
	pkey_stamp[c] = ++stamps;
	return pkey_stamp[pcurrent = c];
}

static unsigned
bucket(int c, RowKind kind, const double *arg)
{
	uint64_t h = ((uint64_t)c << 8 | (unsigned)kind) * 0x9e3779b97f4a7c15u, bits;

	for (int i = 0; i < 4; i++) {
		memcpy(&bits, &arg[i], sizeof bits);
		h = (h ^ bits) * 0xbf58476d1ce4e5b9u;
	}
	h = (h ^ h >> 27) * 0x94d049bb133111ebu;
	return (unsigned)((h ^ h >> 31) & (BUCKETS - 1));
}

static void
unlink_row(int i)
{
	Row *r = &row[i];

	for (int *p = &head[bucket(r->ctx, r->kind, r->arg)]; *p >= 0; p = &row[*p].next)
		if (*p == i) {
			*p = r->next;
			break;
		}
	free_row(r);
}

/* Room for a row of `need` bytes: the least recently used rows that are
 * not held go. */
static void
make_room(size_t need, size_t layers)
{
	while (nrows == ROWS || (nrows > ROWS_HELD && bytes + need > budget(layers))) {
		int lru = -1;
		for (int i = 0; i < ROWS; i++)
			if (row[i].ctx >= 0 && row[i].used + ROWS_HELD <= handed &&
			    (lru < 0 || row[i].used < row[lru].used))
				lru = i;
		if (lru < 0)
			return;
		unlink_row(lru);
	}
}

/* The row of *t's kind and arguments, found or made; fills t->t[]. */
static void
find(Times *t)
{
	double arg[4] = { t->n, t->share, (double)t->grp.size, (double)t->grp.per_node };
	int c, i, arrays = t->kind == ROW_TIME || t->kind == ROW_HOST ? 2 : 1;
	const LayerTable *tb;
	unsigned b;
	Row *r;

	if (!ready)
		init();
	/* the collectives' rows: the group's third figure and the halo's
	 * neighbours folded into the second argument's place */
	if (t->kind == ROW_HALO)
		arg[1] = (double)t->ways, arg[2] = t->across, arg[3] = 0;
	else if (t->kind != ROW_TIME)
		arg[1] = (double)t->grp.sharing;
	if (t->kind == ROW_TIME || t->kind == ROW_HOST)
		arg[2] = arg[3] = 0;
	c = context(t->an, t->g);
	key_used[c] = ++tick;
	b = bucket(c, t->kind, arg);
	for (i = head[b]; i >= 0; i = row[i].next) {
		r = &row[i];
		if (r->ctx == c && r->kind == t->kind && memcmp(r->arg, arg, sizeof arg) == 0)
			break;
	}
	/* a row of a graph whose layers repeat keeps a figure per class,
	 * else one per layer */
	tb = layer_classes(t->g);
	if (i < 0) {
		size_t len = tb && tb->ncls > 0 ? (size_t)tb->ncls
			     : t->g->nlayer > 0 ? (size_t)t->g->nlayer
						: 1;
		make_room(arrays * len * sizeof(double), len);
		for (i = 0; row[i].ctx >= 0; i++)
			;
		r = &row[i];
		*r = (Row){ .ctx = c, .next = head[b], .kind = t->kind, .len = len, .id = ++serial,
			    .classed = tb && tb->ncls > 0 };
		memcpy(r->arg, arg, sizeof arg);
		for (int k = 0; k < arrays; k++) {
			r->t[k] = xcalloc(len, sizeof(double));
			for (size_t j = 0; j < len; j++)
				r->t[k][j] = NAN;
		}
		head[b] = i;
		bytes += arrays * len * sizeof(double);
		nrows++;
	}
	r->used = ++handed;
	t->t[0] = r->t[0];
	t->t[1] = r->t[1] ? r->t[1] : r->t[0];
	t->id = r->id;
	t->cls = r->classed ? tb->cls : NULL;
}

Times
layer_times(const Analysis *an, const Graph *g, double n, double share)
{
	Times t = { .an = an, .g = g, .kind = ROW_TIME, .n = n, .share = share };

	find(&t);
	return t;
}

Times
host_times(const Analysis *an, const Graph *g)
{
	Times t = { .an = an, .g = g, .kind = ROW_HOST, .n = -1, .share = -1 };

	find(&t);
	return t;
}

Times
halo_times(const Analysis *an, const Graph *g, double n, int64_t ways, bool across)
{
	Times t = { .an = an, .g = g, .kind = ROW_HALO, .n = n, .ways = ways, .across = across };

	find(&t);
	return t;
}

Times
gather_times(const Analysis *an, const Graph *g, double n, Group grp)
{
	Times t = { .an = an, .g = g, .kind = ROW_GATHER, .n = n, .grp = grp };

	find(&t);
	return t;
}

Times
split_times(const Analysis *an, const Graph *g, double n, Group grp, bool channel)
{
	Times t = { .an = an, .g = g, .kind = channel ? ROW_CHANNEL : ROW_FILTER, .n = n,
		    .grp = grp };

	find(&t);
	return t;
}

Lane
lane_times(const Analysis *an, const Graph *g, int first, int last, double n)
{
	Times t = layer_times(an, g, n, 1), h = host_times(an, g);
	size_t len = g->nlayer > 0 ? (size_t)g->nlayer : 1;
	double *v;

	if (!t.cls && !h.cls) { /* rows of a figure per layer: those */
		times_fill(&t, first, last);
		times_fill(&h, first, last);
		return (Lane){ t.t[0], t.t[1], h.t[0], h.t[1] };
	}
	v = scratch(SC_LANE, 4 * len, sizeof *v);
	for (int i = first; i <= last; i++) {
		v[i] = times_of(&t, i, false);
		v[len + i] = times_of(&t, i, true);
		v[2 * len + i] = times_of(&h, i, false);
		v[3 * len + i] = times_of(&h, i, true);
	}
	return (Lane){ v, v + len, v + 2 * len, v + 3 * len };
}

double
times_span(const Times *r, int first, int last)
{
	double t = 0;

	for (int i = first; i <= last; i++)
		t += times_of(r, i, false) + times_of(r, i, true);
	return t;
}

void
times_fill(const Times *r, int first, int last)
{
	for (int i = first; i <= last; i++) {
		times_of(r, i, false);
		times_of(r, i, true);
	}
}

/* Layer i's figure in row r, computed. */
static double
compute(const Times *r, int i, bool bwd)
{
	const Layer *l = &r->g->layer[i];

	switch (r->kind) {
	case ROW_TIME: return layer_time(r->an, r->g, l, r->n, r->share, bwd);
	case ROW_HOST: return layer_host(r->an, r->g, l, bwd);
	case ROW_HALO: return halo_time(r->an, r->g, l, r->n, r->ways, r->across);
	case ROW_GATHER: return spatial_gather(r->an, r->g, i, r->n, r->grp);
	case ROW_FILTER:
	case ROW_CHANNEL:
		return split_collective(r->an, r->g, l, r->grp, r->n, r->kind == ROW_CHANNEL);
	}
	return 0;
}

/* A split layer's collectives depend on the layer only through its input's
 * and output's sizes and whether it reads the graph's input: the last
 * such figure of a row, kept by them (layers alike in a row cost one
 * computation; split_collective_of). */
static struct {
	uint64_t row;
	int64_t in, out;
	bool reads;
	double v;
} last_split;

double
times_miss(const Times *r, int i, bool bwd)
{
	if (!r->cls && (r->kind == ROW_FILTER || r->kind == ROW_CHANNEL)) {
		const Layer *l = &r->g->layer[i];
		int64_t in = r->g->tensor[l->in[0]].elems, out = r->g->tensor[l->out[0]].elems;
		bool reads = reads_input(r->g, l);
		if (!times_reuse || last_split.row != r->id || last_split.in != in || last_split.out != out ||
		    last_split.reads != reads) {
			last_split.row = r->id;
			last_split.in = in;
			last_split.out = out;
			last_split.reads = reads;
			last_split.v = split_collective_of(r->an, r->g, r->grp, r->n,
							   r->kind == ROW_CHANNEL, in, out, reads);
		}
		return r->t[0][i] = last_split.v;
	}
	/* the figure of the layer, or of its class (layers alike) */
	return r->t[bwd][r->cls ? r->cls[i] : i] = compute(r, i, bwd);
}

void
times_check(const Times *r, int i, bool bwd, double v)
{
	double again = compute(r, i, bwd);

	if (memcmp(&again, &v, sizeof v) != 0)
		die("reuse.c: layer %d's figure (row kind %d, %s) is %.17g where it was %.17g (a "
		    "field it reads is missing from the key)",
		    i, (int)r->kind, bwd ? "backward" : "forward", again, v);
}

/* The layer table of the last graph asked for. */
static LayerTable table;

static void
table_free(LayerTable *t)
{
	free(t->nw);
	free(t->params);
	free(t->kernel);
	free(t->buffers);
	free(t->in);
	free(t->split);
	free(t->cls);
	*t = (LayerTable){ 0 };
}

const LayerTable *
layer_table(const Graph *g)
{
	LayerTable *t = &table;
	size_t n = g->nlayer > 0 ? (size_t)g->nlayer : 1;

	if (t->g == g && t->version == g->version)
		return t;
	table_free(t);
	t->g = g;
	t->version = g->version;
	t->n = g->nlayer;
	t->nw = xcalloc(n, sizeof *t->nw);
	t->params = xcalloc(n, sizeof *t->params);
	t->in = xcalloc(n, sizeof *t->in);
	t->split = xcalloc(n, sizeof *t->split);
	t->most[0] = t->most[1] = INT64_MAX;
	for (int i = 0; i < g->nlayer; i++) {
		const Layer *l = &g->layer[i];
		int64_t most;
		t->nw[i] = l->nw;
		t->arrays += l->nw;
		t->params[i] = l->cost.params;
		t->in[i] = g->tensor[i ? g->layer[i - 1].out[0] : l->in[0]].elems;
		for (int c = 0; c < 2; c++)
			if (model_split_layer(g, l, c, &most)) {
				t->split[i] |= (unsigned char)(1 << c);
				if (most < t->most[c])
					t->most[c] = most;
			}
	}
	return t;
}

const LayerTable *
layer_table_full(const Graph *g)
{
	LayerTable *t = (LayerTable *)layer_table(g);
	size_t n = g->nlayer > 0 ? (size_t)g->nlayer : 1;

	if (t->kernel)
		return t;
	t->kernel = xcalloc(n, sizeof *t->kernel);
	t->buffers = xcalloc(n, sizeof *t->buffers);
	for (int i = 0; i < g->nlayer; i++) {
		t->kernel[i] = layer_kernel_params(&g->layer[i]);
		t->buffers[i] = g->layer[i].cost.buffers;
	}
	return t;
}

/* A layer's class key into k (room for key_room(l) bytes): every byte of
 * the layer but its name, places and pointers; of the window, shapes and
 * weights they point to; of each tensor it reads and writes but its name
 * and indices, with whether the producer of each input is a layer and
 * that producer's part in an attention and a pattern.  Everything the
 * figures of a row read of a layer: two layers with the same key have
 * the same ones. */
enum { KEY_TENSOR = sizeof(Shape) + sizeof(int64_t) + 8 };

static size_t
key_room(const Layer *l)
{
	return sizeof(Layer) + sizeof(Window) + 2 * sizeof(Shape) + (size_t)l->nw * sizeof(Weight) +
	       ((size_t)l->nin + (size_t)l->nout) * KEY_TENSOR;
}

static size_t
class_key(const Graph *g, const Layer *l, unsigned char *k)
{
	Layer c = *l;
	size_t n = 0;

	c.name = NULL, c.loc = c.site = LOC_NONE, c.srcop = NULL, c.srcidx = 0;
	c.in = c.out = NULL, c.w = NULL;
	attr_view(&c.attr, &(Window){ 0 }); /* pointers: their contents follow */
	c.attr.kernel = c.attr.stride = c.attr.dilation = c.attr.pad = c.attr.out_pad = NULL;
	c.attr.target = c.attr.pad_hi = NULL;
	memcpy(k + n, &c, sizeof c), n += sizeof c;
	memcpy(k + n, attr_window_of(&l->attr), sizeof(Window)), n += sizeof(Window);
	memcpy(k + n, l->attr.target, sizeof(Shape)), n += sizeof(Shape);
	memcpy(k + n, l->attr.pad_hi, sizeof(Shape)), n += sizeof(Shape);
	if (l->nw > 0)
		memcpy(k + n, l->w, (size_t)l->nw * sizeof(Weight)), n += (size_t)l->nw * sizeof(Weight);
	for (int j = 0; j < l->nin + l->nout; j++) {
		const Tensor *t = &g->tensor[j < l->nin ? l->in[j] : l->out[j - l->nin]];
		unsigned char about[8] = { t->saved, t->output, t->producer >= 0 };
		if (j < l->nin && t->producer >= 0)
			about[3] = g->layer[t->producer].attn, about[4] = g->layer[t->producer].pattern;
		memcpy(k + n, &t->shape, sizeof t->shape), n += sizeof t->shape;
		memcpy(k + n, &t->elems, sizeof t->elems), n += sizeof t->elems;
		memcpy(k + n, about, sizeof about), n += sizeof about;
	}
	return n;
}

/* The classes: an open table of the first layer of each (its key kept). */
enum { MAX_CLASSES = 1 << 16 };

const LayerTable *
layer_classes(const Graph *g)
{
	LayerTable *t = (LayerTable *)layer_table(g);
	size_t cap = 1, room = 0;
	int *slot, nkeys = 0;
	unsigned char **keys, *k = NULL;
	size_t *len;
	uint64_t *hash;

	if (t->classed)
		return t;
	t->classed = true;
	t->ncls = 0;
	/* classes pay where layers repeat: a model of few layers, or one
	 * whose layers are all unlike, computes each figure as it is */
	if (g->nlayer < 64 || !times_reuse)
		return t;
	while (cap < 2 * (size_t)MAX_CLASSES)
		cap *= 2;
	slot = xcalloc(cap, sizeof *slot);
	keys = xcalloc(MAX_CLASSES, sizeof *keys);
	len = xcalloc(MAX_CLASSES, sizeof *len);
	hash = xcalloc(MAX_CLASSES, sizeof *hash);
	t->cls = xcalloc((size_t)g->nlayer, sizeof *t->cls);
	for (int i = 0; i < g->nlayer; i++) {
		const Layer *l = &g->layer[i];
		size_t n, s;
		uint64_t h = 1469598103934665603u;
		if (key_room(l) > room) {
			room = key_room(l);
			k = xrealloc(k, room);
		}
		n = class_key(g, l, k);
		for (size_t b = 0; b < n; b += 8) { /* a word at a time */
			uint64_t w = 0;
			memcpy(&w, k + b, n - b < 8 ? n - b : 8);
			h = (h ^ w) * 0x9e3779b97f4a7c15u;
			h ^= h >> 29;
		}
		for (s = h & (cap - 1); slot[s]; s = (s + 1) & (cap - 1)) {
			int c = slot[s] - 1;
			if (hash[c] == h && len[c] == n && memcmp(keys[c], k, n) == 0)
				break;
		}
		if (!slot[s]) {
			if (nkeys == MAX_CLASSES || nkeys > g->nlayer / 4) { /* too few alike */
				nkeys = -1;
				break;
			}
			keys[nkeys] = xcalloc(n, 1);
			memcpy(keys[nkeys], k, n);
			len[nkeys] = n;
			hash[nkeys] = h;
			slot[s] = ++nkeys;
		}
		t->cls[i] = slot[s] - 1;
	}
	for (int c = 0; c < MAX_CLASSES && keys[c]; c++)
		free(keys[c]);
	free(keys), free(len), free(hash), free(slot), free(k);
	if (nkeys < 0) {
		free(t->cls);
		t->cls = NULL;
		return t;
	}
	t->ncls = nkeys;
	return t;
}

void
times_forget(void)
{
	if (!ready)
		return;
	drop(-1);
	table_free(&table);
	for (int i = 0; i < CTXS; i++)
		key_live[i] = pkey_live[i] = false;
	current = pcurrent = -1;
}

/* Scratch buffers: one per slot, grown as asked, kept for the next call. */
enum { SLOTS = 32 };
static void *buf[SLOTS];
static size_t bufsize[SLOTS];

void *
scratch(int slot, size_t n, size_t size)
{
	size_t need;

	if (slot < 0 || slot >= SLOTS)
		die("reuse.c: scratch slot %d", slot);
	if (n > SIZE_MAX / (size ? size : 1))
		die("out of memory");
	need = (n ? n : 1) * (size ? size : 1);
	if (need > bufsize[slot]) {
		free(buf[slot]);
		buf[slot] = xcalloc(need, 1);
		bufsize[slot] = need;
	}
	return buf[slot];
}
