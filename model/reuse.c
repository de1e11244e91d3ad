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
 * the query, on the system, the implementation, and the settings
 * ir/settings.def marks as read by a layer's figures (the precision,
 * forward_only, whether ZeRO shards the gradients); the collectives on
 * the group besides.  A row's key is therefore its kind and arguments and
 * the query's stamp for a layer's figures (model/key.h), which the
 * engine's memos share.  One read in 1,024 of a filled entry computes it
 * again and dies where the two differ.
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
 * a caller holds a few at a time.  The rows are kept in the order they
 * were last asked for (a list through the table) and the empty slots on a
 * stack, so making a row costs the same with 1,024 kept as with one: a
 * calibration asks for new rows at every step of its fit (each changes
 * the system), and a scan of the table for the oldest row and for an
 * empty slot was over half its time. */
#include "model/reuse.h"

#include "model/engine.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum {
	ROWS = 1024,              /* rows kept at once */
	BUCKETS = 2048,
	/* the layer tables of this many graphs: validate's and calibrate's
	 * rows take their models in turn (a table built again at every row
	 * was a third of calibrate's time) */
	TABLES = 4,
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

typedef struct Row {
	uint64_t stamp;           /* the query's (KEY_LAYER); 0: free */
	int next;                 /* the bucket's chain */
	RowKind kind;
	double arg[4];            /* Times' arguments as doubles */
	double *t[2];
	bool classed;             /* t[] per class of layers (layer_classes),
	                             not per layer */
	size_t len;
	uint64_t used;
	int older, newer;         /* the rows by last use: neighbours (-1: none) */
	uint64_t id;              /* a serial no other row had */
} Row;

/* A split layer's collectives depend on the layer only through its input's
 * and output's sizes and whether it reads the graph's input: the last
 * such figure of a row, kept by them (layers alike in a row cost one
 * computation; split_collective_of). */
typedef struct LastSplit {
	uint64_t row;
	int64_t in, out;
	bool reads;
	double v;
} LastSplit;

/* An engine's rows (engine.h), and its layer table. */
typedef struct Rows {
	Row row[ROWS];
	int head[BUCKETS], nrows;
	int oldest, newest;       /* the ends of the rows by last use (-1: none) */
	int spare[ROWS], nspare;  /* the empty slots */
	size_t bytes;
	uint64_t handed;          /* rows handed out: the rows' clock */
	uint64_t serial;          /* rows made */
	LastSplit last_split;
	LayerTable table[TABLES]; /* of the graphs last asked for */
	uint64_t table_used[TABLES], tables_asked;
} Rows;

static Rows *
rows_of(Engine *e)
{
	if (!e->rows) {
		e->rows = xcalloc(1, sizeof *e->rows);
		for (int i = 0; i < BUCKETS; i++)
			e->rows->head[i] = -1;
		e->rows->oldest = e->rows->newest = -1;
		for (int i = 0; i < ROWS; i++)
			e->rows->spare[i] = ROWS - 1 - i;
		e->rows->nspare = ROWS;
	}
	return e->rows;
}

/* Row i out of the order of use. */
static void
unlist(Rows *rs, int i)
{
	Row *r = &rs->row[i];

	*(r->older >= 0 ? &rs->row[r->older].newer : &rs->oldest) = r->newer;
	*(r->newer >= 0 ? &rs->row[r->newer].older : &rs->newest) = r->older;
	r->older = r->newer = -1;
}

/* Row i, just asked for, the newest in the order of use. */
static void
list_newest(Rows *rs, int i)
{
	Row *r = &rs->row[i];

	r->older = rs->newest, r->newer = -1;
	*(rs->newest >= 0 ? &rs->row[rs->newest].newer : &rs->oldest) = i;
	rs->newest = i;
	r->used = ++rs->handed;
}

/* Row i's tables freed and its slot empty (out of its bucket already). */
static void
free_row(Rows *rs, int i)
{
	Row *r = &rs->row[i];

	unlist(rs, i);
	rs->bytes -= (r->t[1] ? 2 : 1) * r->len * sizeof(double);
	free(r->t[0]);
	free(r->t[1]);
	*r = (Row){ 0 };
	rs->nrows--;
	rs->spare[rs->nspare++] = i;
}

uint64_t
analysis_stamp(const Analysis *an, const Graph *g)
{
	return key_stamp(&an->eng->stamps, &an->q, g, KEY_PLAN);
}

static unsigned
bucket(uint64_t stamp, RowKind kind, const double *arg)
{
	uint64_t h = (stamp << 8 | (unsigned)kind) * 0x9e3779b97f4a7c15u, bits;

	for (int i = 0; i < 4; i++) {
		memcpy(&bits, &arg[i], sizeof bits);
		h = (h ^ bits) * 0xbf58476d1ce4e5b9u;
	}
	h = (h ^ h >> 27) * 0x94d049bb133111ebu;
	return (unsigned)((h ^ h >> 31) & (BUCKETS - 1));
}

static void
unlink_row(Rows *rs, int i)
{
	Row *r = &rs->row[i];

	for (int *p = &rs->head[bucket(r->stamp, r->kind, r->arg)]; *p >= 0; p = &rs->row[*p].next)
		if (*p == i) {
			*p = r->next;
			break;
		}
	free_row(rs, i);
}

/* Room for a row of `need` bytes: the least recently used rows that are
 * not held go (the oldest is held only when every row is). */
static void
make_room(Rows *rs, size_t need, size_t layers)
{
	while (rs->nrows == ROWS ||
	       (rs->nrows > ROWS_HELD && rs->bytes + need > budget(layers))) {
		int lru = rs->oldest;
		if (lru < 0 || rs->row[lru].used + ROWS_HELD > rs->handed)
			return;
		unlink_row(rs, lru);
	}
}

/* The row of *t's kind and arguments, found or made; fills t->t[]. */
static void
find(Times *t)
{
	double arg[4] = { t->n, t->share, (double)t->grp.size, (double)t->grp.per_node };
	bool tensor = t->kind == ROW_TENSOR || t->kind == ROW_TENSOR_SP;
	int i, arrays = t->kind == ROW_TIME || t->kind == ROW_HOST || tensor ? 2 : 1;
	Rows *rs = rows_of(t->an->eng);
	const LayerTable *tb;
	uint64_t stamp;
	unsigned b;
	Row *r;

	/* the collectives' rows: the group's third figure and the halo's
	 * neighbours folded into the second argument's place */
	if (t->kind == ROW_HALO)
		arg[1] = (double)t->ways, arg[2] = t->across, arg[3] = 0;
	else if (t->kind != ROW_TIME)
		arg[1] = (double)t->grp.sharing;
	if (t->kind == ROW_TIME || t->kind == ROW_HOST)
		arg[2] = t->kind == ROW_TIME ? (double)t->how : 0, arg[3] = 0;
	stamp = key_stamp(&t->an->eng->stamps, &t->an->q, t->g, KEY_LAYER);
	b = bucket(stamp, t->kind, arg);
	for (i = rs->head[b]; i >= 0; i = rs->row[i].next) {
		r = &rs->row[i];
		if (r->stamp == stamp && r->kind == t->kind && memcmp(r->arg, arg, sizeof arg) == 0)
			break;
	}
	/* a row of a graph whose layers repeat keeps a figure per class,
	 * else one per layer */
	tb = layer_classes(t->an, t->g);
	if (tensor) /* per layer */
		tb = NULL;
	if (i < 0) {
		size_t len = tb && tb->ncls > 0 ? (size_t)tb->ncls
			     : t->g->nlayer > 0 ? (size_t)t->g->nlayer
						: 1;
		make_room(rs, arrays * len * sizeof(double), len);
		i = rs->spare[--rs->nspare];
		r = &rs->row[i];
		*r = (Row){ .stamp = stamp, .next = rs->head[b], .kind = t->kind, .len = len,
			    .older = -1, .newer = -1, .id = ++rs->serial,
			    .classed = tb && tb->ncls > 0 };
		memcpy(r->arg, arg, sizeof arg);
		for (int k = 0; k < arrays; k++) {
			r->t[k] = xcalloc(len, sizeof(double));
			for (size_t j = 0; j < len; j++)
				r->t[k][j] = NAN;
		}
		rs->head[b] = i;
		rs->bytes += arrays * len * sizeof(double);
		rs->nrows++;
	} else {
		unlist(rs, i);
	}
	list_newest(rs, i);
	t->t[0] = r->t[0];
	t->t[1] = r->t[1] ? r->t[1] : r->t[0];
	t->id = r->id;
	t->cls = r->classed ? tb->cls : NULL;
}

Times
layer_times(const Analysis *an, const Graph *g, double n, double share, GridDim how)
{
	Times t = { .an = an, .g = g, .kind = ROW_TIME, .n = n, .share = share,
		    .how = share == 1 ? DIM_DATA : how };

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

/* The rows of a kind priced over a group: a split's collectives. */
static Times
grouped(const Analysis *an, const Graph *g, double n, Group grp, RowKind kind)
{
	Times t = { .an = an, .g = g, .kind = kind, .n = n, .grp = grp };

	find(&t);
	return t;
}

Times
gather_times(const Analysis *an, const Graph *g, double n, Group grp)
{
	return grouped(an, g, n, grp, ROW_GATHER);
}

Times
split_times(const Analysis *an, const Graph *g, double n, Group grp, bool channel)
{
	return grouped(an, g, n, grp, channel ? ROW_CHANNEL : ROW_FILTER);
}

Times
tensor_times(const Analysis *an, const Graph *g, double n, Group grp, bool sp)
{
	return grouped(an, g, n, grp, sp ? ROW_TENSOR_SP : ROW_TENSOR);
}

Lane
lane_times(const Analysis *an, const Graph *g, int first, int last, double n)
{
	Times t = layer_times(an, g, n, 1, DIM_DATA), h = host_times(an, g);
	size_t len = g->nlayer > 0 ? (size_t)g->nlayer : 1;
	double *v;

	if (!t.cls && !h.cls) { /* rows of a figure per layer: those */
		times_fill(&t, first, last);
		times_fill(&h, first, last);
		return (Lane){ t.t[0], t.t[1], h.t[0], h.t[1] };
	}
	v = engine_scratch(an->eng, SC_REUSE_LANE, 4 * len, sizeof *v);
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
	case ROW_TIME: return layer_time(r->an, r->g, l, r->n, r->share, r->how, bwd);
	case ROW_HOST: return layer_host(r->an, r->g, l, bwd);
	case ROW_HALO: return halo_time(r->an, r->g, l, r->n, r->ways, r->across);
	case ROW_GATHER: return spatial_gather(r->an, r->g, i, r->n, r->grp);
	case ROW_FILTER:
	case ROW_CHANNEL:
		return split_collective(r->an, r->g, l, r->grp, r->n, r->kind == ROW_CHANNEL);
	case ROW_TENSOR:
	case ROW_TENSOR_SP:
		return tensor_collective(r->an, r->g, &layer_table_tensor(r->an, r->g)->tensor, i,
					 r->grp, r->n, r->kind == ROW_TENSOR_SP, bwd);
	}
	return 0;
}


double
times_miss(const Times *r, int i, bool bwd)
{
	if (!r->cls && (r->kind == ROW_FILTER || r->kind == ROW_CHANNEL)) {
		LastSplit *last = &rows_of(r->an->eng)->last_split;
		const Layer *l = &r->g->layer[i];
		int64_t in = r->g->tensor[l->in[0]].elems, out = r->g->tensor[l->out[0]].elems;
		bool reads = reads_input(r->g, l);
		if (!r->an->eng->reuse || last->row != r->id || last->in != in ||
		    last->out != out || last->reads != reads)
			*last = (LastSplit){ r->id, in, out, reads,
					     split_collective_of(r->an, r->g, r->grp, r->n,
								 r->kind == ROW_CHANNEL, in, out,
								 reads) };
		return r->t[0][i] = last->v;
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
	tensor_table_free(&t->tensor);
	*t = (LayerTable){ 0 };
}

const LayerTable *
layer_table(const Analysis *an, const Graph *g)
{
	Rows *rs = rows_of(an->eng);
	LayerTable *t = NULL;
	size_t n = g->nlayer > 0 ? (size_t)g->nlayer : 1;
	int lru = 0;

	for (int i = 0; i < TABLES && !t; i++) {
		if (rs->table[i].g == g && rs->table[i].version == g->version)
			t = &rs->table[i];
		else if (rs->table_used[i] < rs->table_used[lru])
			lru = i;
	}
	if (t) {
		rs->table_used[t - rs->table] = ++rs->tables_asked;
		return t;
	}
	t = &rs->table[lru];
	rs->table_used[lru] = ++rs->tables_asked;
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
layer_table_full(const Analysis *an, const Graph *g)
{
	LayerTable *t = (LayerTable *)layer_table(an, g);
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

const LayerTable *
layer_table_tensor(const Analysis *an, const Graph *g)
{
	LayerTable *t = (LayerTable *)layer_table_full(an, g);

	if (!t->tensored) {
		tensor_table(g, &an->tf, &t->tensor);
		t->tensored = true;
	}
	return t;
}

/* A layer's class key into k (room for key_room(l) bytes): every field
 * of the layer but its name, places and pointers; of the window, shapes
 * and weights they point to; of each tensor it reads and writes but its
 * name and indices, with whether the producer of each input is a layer
 * and that producer's part in an attention and a pattern.  Everything the
 * figures of a row read of a layer: two layers with the same key have
 * the same ones.  Written field by field (a shape as its rank and its
 * used dimensions), never as a struct's bytes: padding and unused
 * dimensions hold whatever the code that made them left, and two layers
 * alike would differ there (valgrind's "uninitialised value"). */
enum { KEY_SHAPE = sizeof(int) + MAX_RANK * sizeof(int64_t),
       KEY_TENSOR = KEY_SHAPE + sizeof(int64_t) + 8 };

/* The fields written: a field added to these records must be written
 * too (or said why not), and these sizes changed with it. */
_Static_assert(sizeof(Layer) == 336, "a new Layer field: write it in class_key");
_Static_assert(sizeof(Attr) == 96, "a new Attr field: write it in class_key");
_Static_assert(sizeof(Cost) == 120, "a new Cost field: write it in class_key");

static size_t
key_room(const Layer *l)
{
	return sizeof(Layer) + sizeof(Window) + 2 * KEY_SHAPE +
	       (size_t)l->nw * (sizeof(WeightRole) + KEY_SHAPE + sizeof(int64_t)) +
	       ((size_t)l->nin + (size_t)l->nout) * KEY_TENSOR;
}

#define PUT(x) (memcpy(k + n, &(x), sizeof(x)), n += sizeof(x))

static size_t
put_shape(unsigned char *k, size_t n, const Shape *s)
{
	PUT(s->rank);
	for (int i = 0; i < s->rank && i < MAX_RANK; i++)
		PUT(s->d[i]);
	return n;
}

static size_t
class_key(const Graph *g, const Layer *l, unsigned char *k)
{
	const Attr *a = &l->attr;
	const Cost *c = &l->cost;
	size_t n = 0;

	PUT(l->op), PUT(l->nin), PUT(l->nout), PUT(l->nw), PUT(l->low), PUT(l->pattern);
	PUT(l->attn), PUT(l->folded_bn), PUT(l->timed), PUT(l->fparams), PUT(l->fbuffers);
	PUT(l->fuse);
	PUT(a->nspatial), PUT(a->lead), PUT(a->axis), PUT(a->bias), PUT(a->ceil_mode);
	PUT(a->no_halo), PUT(a->keepdims), PUT(a->filters), PUT(a->groups);
	PUT(*attr_window_of(a)); /* int64_t arrays only: no padding */
	n = put_shape(k, n, a->target);
	n = put_shape(k, n, a->pad_hi);
	PUT(c->macs), PUT(c->flops_fwd), PUT(c->flops_bwd_data), PUT(c->flops_bwd_weight);
	PUT(c->flops_bwd), PUT(c->params), PUT(c->buffers), PUT(c->elems_fwd), PUT(c->elems_bwd);
	PUT(c->act_elems), PUT(c->cast_w), PUT(c->cast_in), PUT(c->cast_grad), PUT(c->cast_wn);
	PUT(c->cast_inn), PUT(c->cast_gradn);
	for (int i = 0; i < l->nw; i++) {
		PUT(l->w[i].role);
		n = put_shape(k, n, &l->w[i].shape);
		PUT(l->w[i].elems);
	}
	for (int j = 0; j < l->nin + l->nout; j++) {
		const Tensor *t = &g->tensor[j < l->nin ? l->in[j] : l->out[j - l->nin]];
		unsigned char about[8] = { t->saved, t->output, t->producer >= 0, 0, 0, t->konst,
					   t->seq };
		if (j < l->nin && t->producer >= 0)
			about[3] = g->layer[t->producer].attn,
			about[4] = g->layer[t->producer].pattern;
		n = put_shape(k, n, &t->shape);
		PUT(t->elems);
		PUT(about);
	}
	return n;
}

#undef PUT

/* The classes: an open table of the first layer of each (its key kept). */
enum { MAX_CLASSES = 1 << 16 };

const LayerTable *
layer_classes(const Analysis *an, const Graph *g)
{
	LayerTable *t = (LayerTable *)layer_table(an, g);
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
	if (g->nlayer < 64 || !an->eng->reuse)
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
rows_free(Rows *rs)
{
	if (!rs)
		return;
	for (int i = 0; i < ROWS; i++)
		if (rs->row[i].stamp)
			free_row(rs, i);
	for (int i = 0; i < TABLES; i++)
		table_free(&rs->table[i]);
	free(rs);
}
