/* paradl.c -- ParaDL's model tables (.net, .net_sc), so the same inputs
 * run through both tools (its platform files are read by plat.c). */
#include "frontend/frontend.h"
#include "util/checked.h"
#include "util/map.h"

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- model tables (.net, .net_sc) ----------------------------------------
 *
 * Three header lines, `Dataset|NAME`, `Input|DxCxWxH[xDEPTH]` (D samples
 * per epoch, then the per-sample shape) and `Model|NAME`, then one row per
 * layer, `NAME|x|w|y[|t]`: input shape, weight shape C x F x K..., output
 * shape, and seconds per sample.  Blank lines and lines that start with
 * `#` are skipped.  The layer type is the first of CONV, MPOOL, APOOL,
 * RELU, FC, BNORM, ADD found in NAME (ParaDL's order); DROPOUT is dropout,
 * and any other name is an opaque layer counted as zero, as ParaDL does.
 *
 * The chain rule.  The table is a sequence: each row reads what the row
 * before it made (the first row reads the input), and its x must describe
 * that tensor.  Dimensions of 1 at the end do not count (an FC's 4096x1x1
 * output is the vector 4096; a conv or pool that needs the dimensions
 * gets them through a reshape view).  A row whose x has the same number
 * of elements but another shape reads it through a reshape view, with a
 * warning; a row whose x has a different count is an error, since no
 * layer can be put in between (ParaDL's COSMOFLOW.net_256 has such a
 * typo).  An FC row flattens its input first (a view).  The table says
 * nothing about shortcut edges, so an ADD row adds the chain's tensor to
 * itself: the same work per element (one add, two reads, one write) as a
 * residual sum, with no edge invented; shortcut convolutions that the
 * table leaves out (ResNet-50's four projections) stay out.
 *
 * Attributes come from the shapes: conv filters F and kernel K from w;
 * stride = W / W' rounded to the nearest integer (ties down), and the
 * least total padding P (at most 2 (K - 1)) with (W + P - K) / s + 1 = W'
 * in every spatial dimension, split begin P / 2, end the rest.  A conv
 * has a bias unless a BNORM row follows it (batch norm makes it
 * redundant); an FC always has one.  The rows' y must equal the output
 * shape oraclec infers.
 *
 * The time column.  A time t > 0 is measured seconds per sample, forward
 * and backward, for its row and for the rows right after it that give 0
 * (ParaDL's shipped tables put the whole network's time on the first row
 * and 0 on the rest).  A 0 with no such row above it, or a missing t,
 * leaves the row to the estimate. */

enum { NET_FIELDS = 5 };

typedef enum Kind {
	K_CONV, K_MPOOL, K_APOOL, K_RELU, K_FC, K_BNORM, K_ADD, K_DROPOUT, K_OTHER
} Kind;

/* Searched for in this order; the first found wins. */
static const char *const kind_key[K_OTHER] = { "CONV", "MPOOL", "APOOL", "RELU", "FC",
					       "BNORM", "ADD", "DROPOUT" };

typedef struct Field {
	const char *s;  /* into the line, not NUL-terminated */
	int n;
	int col;        /* 1-based column of s[0] */
} Field;

typedef struct Row {
	int line;
	const char *name;       /* as written */
	Kind kind;
	Shape x, w, y;
	int col[NET_FIELDS];    /* each field's column */
	bool has_t;
	double t;
	int first, last;        /* the layers the row became; build */
} Row;

typedef struct Net {
	const char *path;
	Arena *a;
	Graph *g;
	Map names;              /* layer names taken (value: next suffix) */
	Map unknown;            /* names of no known type (value: 1 + index) */
	Row *row;
	int nrow, caprow;
	bool full;              /* too many rows: stop reading */
} Net;

static Loc
at(const Net *n, int line, int col)
{
	return (Loc){ n->path, line, col };
}

static bool
blank(char c)
{
	return c == ' ' || c == '\t';
}

/* Splits `line` at '|' into up to `max` fields, each trimmed of blanks;
 * returns how many there are (which may be more than max). */
static int
split(const char *line, Field *f, int max)
{
	int nf = 0;
	const char *p = line;

	for (;;) {
		const char *end = strchr(p, '|');
		const char *e = end ? end : p + strlen(p), *s = p;
		while (s < e && blank(*s))
			s++;
		while (e > s && blank(e[-1]))
			e--;
		if (nf < max)
			f[nf] = (Field){ s, (int)(e - s), (int)(s - line) + 1 };
		nf++;
		if (!end)
			return nf;
		p = end + 1;
	}
}

static bool
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* "64x56x56" -> shape; every dimension at least `min` (0 for weights).
 * `who` starts the messages: "row 'CONV1': x". */
static bool
parse_dims(const Net *n, int line, const Field *f, const char *who, int64_t min, Shape *out)
{
	const char *s = f->s, *e = f->s + f->n;
	Loc where = at(n, line, f->col);

	out->rank = 0;
	for (;;) {
		int64_t v = 0;
		while (s < e && blank(*s))
			s++;
		if (s == e || !is_digit(*s))
			break;
		while (s < e && is_digit(*s)) {
			v = v > MAX_DIM ? v : v * 10 + (*s - '0');
			s++;
		}
		while (s < e && blank(*s))
			s++;
		if (out->rank == MAX_RANK) {
			diag_error(where, "%s has more than %d dimensions", who, MAX_RANK);
			return false;
		}
		if (v < min || v > MAX_DIM) {
			diag_error(where, "%s '%.*s' has a dimension out of range (%d to 2^40)",
				   who, f->n > 64 ? 64 : f->n, f->s, (int)min);
			return false;
		}
		out->d[out->rank++] = v;
		if (s == e)
			return true;
		if (*s != 'x')
			break;
		s++;
	}
	diag_error(where, "%s '%.*s' is not a shape (numbers joined by 'x', e.g. 64x56x56)",
		   who, f->n > 64 ? 64 : f->n, f->s);
	return false;
}

/* The optional fifth field: seconds per sample, 0 to MAX_SAMPLE_SECONDS. */
static bool
parse_time(const Net *n, int line, const Field *f, const char *row, double *t)
{
	char buf[64], *end;
	Loc where = at(n, line, f->col);

	if (f->n == 0) {
		diag_error(where, "row '%s': empty time (give seconds per sample, or leave the "
				  "field out)", row);
		return false;
	}
	if (f->n >= (int)sizeof buf) {
		diag_error(where, "row '%s': time '%.32s...' is not a number", row, f->s);
		return false;
	}
	memcpy(buf, f->s, f->n);
	buf[f->n] = '\0';
	*t = strtod(buf, &end);
	if (end == buf || *end) {
		diag_error(where, "row '%s': time '%s' is not a number (seconds per sample)", row,
			   buf);
		return false;
	}
	if (!isfinite(*t)) {
		diag_error(where, "row '%s': time '%s' is not a finite number", row, buf);
		return false;
	}
	if (*t < 0) {
		diag_error(where, "row '%s': time %s is negative", row, buf);
		return false;
	}
	if (*t > MAX_SAMPLE_SECONDS) {
		diag_error(where, "row '%s': time %s is more than 1e6 seconds per sample", row,
			   buf);
		return false;
	}
	return true;
}

static Kind
kind_of(const char *name)
{
	int k = 0;

	while (k < K_OTHER && !strstr(name, kind_key[k]))
		k++;
	return (Kind)k;
}

/* One layer row into n->row; false (reported) when it is malformed. */
static bool
parse_row(Net *n, int line, const char *text)
{
	Field f[NET_FIELDS];
	int nf = split(text, f, NET_FIELDS);
	char who[3][96];
	Row *r;
	bool ok;

	if (nf < 4 || nf > NET_FIELDS) {
		int col = nf > NET_FIELDS ? f[NET_FIELDS - 1].col + f[NET_FIELDS - 1].n + 1 : 1;
		diag_error(at(n, line, col), "a layer row is NAME|x|w|y or NAME|x|w|y|t, not %d "
					     "field%s", nf, nf == 1 ? "" : "s");
		return false;
	}
	if (f[0].n == 0) {
		diag_error(at(n, line, 1), "empty layer name");
		return false;
	}
	if (n->nrow == MAX_LAYERS / 2) {
		diag_error(at(n, line, 1), "more than %d layer rows", MAX_LAYERS / 2);
		n->full = true;
		return false;
	}
	if (n->nrow == n->caprow) {
		n->caprow = n->caprow ? 2 * n->caprow : 64;
		n->row = xrealloc(n->row, n->caprow * sizeof *n->row);
	}
	r = &n->row[n->nrow];
	*r = (Row){ .line = line, .name = arena_strndup(n->a, f[0].s, f[0].n) };
	r->kind = kind_of(r->name);
	for (int i = 0; i < nf; i++)
		r->col[i] = f[i].col;
	for (int i = 0; i < 3; i++)
		snprintf(who[i], sizeof who[i], "row '%.64s': %c", r->name, "xwy"[i]);
	ok = parse_dims(n, line, &f[1], who[0], 1, &r->x) &&
	     parse_dims(n, line, &f[2], who[1], 0, &r->w) &&
	     parse_dims(n, line, &f[3], who[2], 1, &r->y);
	if (ok && nf == NET_FIELDS) {
		r->has_t = true;
		ok = parse_time(n, line, &f[4], r->name, &r->t);
	}
	if (ok)
		n->nrow++;
	return ok;
}

/* A header line `KEY|value`. */
static bool
header(const Net *n, int line, const char *text, const char *key, const char *form,
       Field *val)
{
	Field f[3];
	int nf = split(text, f, 3);

	if (nf != 2 || f[0].n != (int)strlen(key) || strncmp(f[0].s, key, f[0].n) != 0 ||
	    f[1].n == 0) {
		diag_error(at(n, line, 1), "expected '%s|%s' (line %d of a ParaDL table)", key,
			   form, line);
		return false;
	}
	*val = f[1];
	return true;
}

/* ---- building the chain --------------------------------------------------- */

/* A unique layer name: "NAME", else "NAME_1", "NAME_2"... (as ODL does). */
static const char *
fresh(Net *n, const char *base)
{
	intptr_t k = (intptr_t)map_get(&n->names, base);
	const char *name = base;

	while (k > 0 && map_get(&n->names, name = arena_printf(n->a, "%s_%" PRIdPTR, base, k)))
		k++;
	map_put(&n->names, base, (void *)(k + 1));
	if (name != base)
		map_put(&n->names, name, (void *)1);
	return name;
}

/* Shapes equal once trailing dimensions of 1 are dropped (4096x1x1 is
 * the vector 4096). */
static bool
same_dims(const Shape *a, const Shape *b)
{
	int ra = a->rank, rb = b->rank;

	while (ra > 1 && a->d[ra - 1] == 1)
		ra--;
	while (rb > 1 && b->d[rb - 1] == 1)
		rb--;
	return ra == rb && memcmp(a->d, b->d, ra * sizeof a->d[0]) == 0;
}

/* Room for element k of an arena array that grows by doubling. */
static void *
room(Arena *a, void *p, int k, size_t size)
{
	return k & (k - 1) ? p : arena_grow(a, p, k, k ? 2 * k : 1, size);
}

static const char *
dims_str(const Shape *s, char *buf)
{
	return shape_str(s, buf, 96);
}

/* Adds a layer reading tensor `in` (twice for an add), named after the
 * row (or `suffix` under it), with its output; returns the layer index. */
static int
add_layer(Net *n, const Row *r, OpKind op, const char *suffix, int in)
{
	Graph *g = n->g;
	const char *name = fresh(n, suffix ? arena_printf(n->a, "%s/%s", r->name, suffix)
					   : r->name);
	int l = graph_add_layer(g, op, name, at(n, r->line, 1)), ins[2] = { in, in };

	layer_set_inputs(g, l, ins, op == OP_ADD ? 2 : 1);
	layer_add_output(g, l, name);
	return l;
}

/* Runs shape inference on the new layer; its output tensor, or -1. */
static int
infer(Net *n, int l)
{
	return layer_infer(n->g, l, NULL) ? n->g->layer[l].out[0] : -1;
}

/* Stride and padding of a conv or pool row from x, y and the kernel. */
static bool
window(const Net *n, const Row *r, const Attr *a, Window *w)
{
	for (int i = 0; i < a->nspatial; i++) {
		int64_t W = r->x.d[i + 1], Wo = r->y.d[i + 1], K = w->kernel[i];
		int64_t s = (2 * W + Wo - 1) / (2 * Wo), lo, hi;
		if (s < 1)
			s = 1;
		/* (W + P - K) / s = Wo - 1, floored, for P in [lo, hi] */
		lo = s * (Wo - 1) + K - W;
		hi = lo + s - 1;
		if (lo < 0)
			lo = 0;
		if (lo > hi || lo > 2 * (K - 1)) {
			diag_error(at(n, r->line, r->col[3]),
				   "row '%s': no padding gives %" PRId64 " from %" PRId64
				   " with kernel %" PRId64 " and stride %" PRId64
				   " (spatial dimension %d)",
				   r->name, Wo, W, K, s, i + 1);
			return false;
		}
		w->stride[i] = s;
		w->dilation[i] = 1;
		w->pad[i] = lo / 2;
		w->pad[MAX_SPATIAL + i] = lo - lo / 2;
	}
	return true;
}

/* Pools, ReLU, BN, ADD, dropout: ParaDL writes their w with a 0 in it. */
static bool
weightless(const Net *n, const Row *r, const char *form)
{
	int64_t e;
	char b[96];

	if (shape_elems(&r->w, &e) && e == 0)
		return true;
	diag_error(at(n, r->line, r->col[2]), "row '%s': w %s holds weights, but this layer "
					      "has none (ParaDL writes %s)", r->name,
		   dims_str(&r->w, b), form);
	return false;
}

/* Conv and pool rows: w is C x F x K..., one K per spatial dimension;
 * the window into *win. */
static bool
kernel(const Net *n, const Row *r, Attr *a, Window *win)
{
	char b1[96], b2[96], b3[96];

	if (r->w.rank != r->x.rank + 1 || r->x.rank < 2 || r->y.rank != r->x.rank) {
		diag_error(at(n, r->line, r->col[2]), "row '%s': w %s and y %s do not fit x %s "
						      "(w is CxFxK with one K per spatial "
						      "dimension of x)", r->name,
			   dims_str(&r->w, b1), dims_str(&r->y, b2), dims_str(&r->x, b3));
		return false;
	}
	a->nspatial = r->x.rank - 1;
	for (int i = 0; i < a->nspatial; i++) {
		win->kernel[i] = r->w.d[2 + i];
		if (win->kernel[i] < 1) {
			diag_error(at(n, r->line, r->col[2]), "row '%s': w %s has a kernel of 0",
				   r->name, dims_str(&r->w, b1));
			return false;
		}
	}
	return window(n, r, a, win);
}

static int
conv_row(Net *n, const Row *r, int in, bool bias)
{
	Attr a = { 0 };
	Window w = { 0 };
	char b1[96], b2[96];
	int l;

	attr_init(&a);
	if (!kernel(n, r, &a, &w))
		return -1;
	if (r->w.d[0] != r->x.d[0] || r->w.d[1] < 1) {
		diag_error(at(n, r->line, r->col[2]),
			   "row '%s': w %s must be CxFxK... with C = "
			   "%" PRId64 ", the channels of x %s, and F > 0",
			   r->name, dims_str(&r->w, b1), r->x.d[0], dims_str(&r->x, b2));
		return -1;
	}
	a.filters = r->w.d[1];
	a.groups = 1;
	a.bias = bias;
	l = add_layer(n, r, OP_CONV, NULL, in);
	n->g->layer[l].attr = a;
	*attr_window(n->g, &n->g->layer[l].attr) = w;
	return infer(n, l);
}

static int
pool_row(Net *n, const Row *r, int in, OpKind op)
{
	Attr a = { 0 };
	Window w = { 0 };
	int l;

	attr_init(&a);
	if (!weightless(n, r, "0x0xKxK") || !kernel(n, r, &a, &w))
		return -1;
	l = add_layer(n, r, op, NULL, in);
	n->g->layer[l].attr = a;
	*attr_window(n->g, &n->g->layer[l].attr) = w;
	return infer(n, l);
}

/* FC: w is C x F x K... with C K... = |x|; the input is flattened first. */
static int
fc_row(Net *n, const Row *r, int in)
{
	int64_t k = 1, have = -1;
	char b1[96], b2[96];
	int l;

	for (int i = 0; i < r->w.rank; i++)
		if (i != 1 && !ck_mul(k, r->w.d[i], &k))
			k = -1;
	shape_elems(&r->x, &have); /* each dimension <= 2^40, the chain's count fits */
	if (r->w.rank < 2 || r->w.d[1] < 1 || k != have) {
		diag_error(at(n, r->line, r->col[2]), "row '%s': w %s must be CxFxK... with F > 0 "
						      "and C K... = %" PRId64 ", the elements of "
						      "x %s", r->name, dims_str(&r->w, b1), have,
			   dims_str(&r->x, b2));
		return -1;
	}
	if (n->g->tensor[in].shape.rank > 1) {
		l = add_layer(n, r, OP_FLATTEN, "flatten", in);
		if ((in = infer(n, l)) < 0)
			return -1;
	}
	l = add_layer(n, r, OP_FC, NULL, in);
	n->g->layer[l].attr.filters = r->w.d[1];
	n->g->layer[l].attr.bias = true;
	return infer(n, l);
}

/* A row whose name has no known type: zero FLOPs, the declared output. */
static int
other_row(Net *n, const Row *r, int in)
{
	Graph *g = n->g;
	int l, t;
	intptr_t k = (intptr_t)map_get(&n->unknown, r->name) - 1;
	int64_t e;

	if (!weightless(n, r, "CxCx0x0 for a layer of no known type"))
		return -1;
	if (!shape_elems(&r->y, &e)) {
		diag_error(at(n, r->line, r->col[3]), "row '%s': y has more elements than 64 bits "
						      "can count", r->name);
		return -1;
	}
	if (k < 0) {
		diag_warn(at(n, r->line, 1), "row '%s': no CONV, MPOOL, APOOL, RELU, FC, BNORM, "
					     "ADD or DROPOUT in the name: counted as zero, as "
					     "ParaDL does", r->name);
		k = g->nunknown++;
		g->unknown = room(n->a, g->unknown, (int)k, sizeof *g->unknown);
		g->unknown[k] = (OpCount){ r->name, 0 };
		map_put(&n->unknown, r->name, (void *)(k + 1));
	}
	g->unknown[k].count++;
	l = add_layer(n, r, OP_OPAQUE, NULL, in);
	t = g->layer[l].out[0];
	g->tensor[t].shape = r->y;
	g->tensor[t].elems = e;
	return t;
}

static int
elementwise_row(Net *n, const Row *r, int in, OpKind op)
{
	if (!weightless(n, r, "CxCx0x0"))
		return -1;
	return infer(n, add_layer(n, r, op, NULL, in));
}

/* The row's layers, reading tensor `in`; the tensor they make, or -1. */
static int
row_layers(Net *n, Row *r, int in, bool bn_next)
{
	Graph *g = n->g;
	Shape have = g->tensor[in].shape; /* a copy: new layers move g->tensor */
	int64_t e;
	char b1[96], b2[96];
	int out = -1;

	r->first = g->nlayer;
	if (!shape_elems(&r->x, &e))
		e = -1;
	if (!shape_eq(&have, &r->x)) {
		bool view = same_dims(&have, &r->x);
		bool spatial = r->kind == K_CONV || r->kind == K_MPOOL || r->kind == K_APOOL;
		if (!view && e != g->tensor[in].elems) {
			diag_error(at(n, r->line, r->col[1]), "row '%s': x %s does not match %s, "
							      "the output of the row before",
				   r->name, dims_str(&r->x, b1), dims_str(&have, b2));
			if (r == n->row)
				diag_note(at(n, r->line, r->col[1]),
					  "the first row reads the input "
					  "(line 2)");
			return -1;
		}
		/* an FC flattens anyway; element-wise rows keep any view */
		if (r->kind != K_FC && (spatial || !view)) {
			int l = add_layer(n, r, OP_RESHAPE, "reshape", in);
			if (!view)
				diag_warn(at(n, r->line, r->col[1]), "row '%s': x %s is reshaped "
								     "from %s, the output of the "
								     "row before", r->name,
					  dims_str(&r->x, b1), dims_str(&have, b2));
			*attr_target(g, &g->layer[l].attr) = r->x;
			if ((in = infer(n, l)) < 0)
				return -1;
		}
	}
	switch (r->kind) {
	case K_CONV: out = conv_row(n, r, in, !bn_next); break;
	case K_MPOOL: out = pool_row(n, r, in, OP_MAXPOOL); break;
	case K_APOOL: out = pool_row(n, r, in, OP_AVGPOOL); break;
	case K_RELU: out = elementwise_row(n, r, in, OP_RELU); break;
	case K_FC: out = fc_row(n, r, in); break;
	case K_BNORM: out = elementwise_row(n, r, in, OP_BATCHNORM); break;
	case K_ADD: out = elementwise_row(n, r, in, OP_ADD); break;
	case K_DROPOUT: out = elementwise_row(n, r, in, OP_DROPOUT); break;
	case K_OTHER: out = other_row(n, r, in); break;
	}
	r->last = g->nlayer - 1;
	if (out >= 0 && !same_dims(&g->tensor[out].shape, &r->y)) {
		diag_error(at(n, r->line, r->col[3]), "row '%s': y %s differs from %s, the output "
						      "oraclec infers", r->name,
			   dims_str(&r->y, b1), dims_str(&g->tensor[out].shape, b2));
		return -1;
	}
	return out;
}

/* The time column as Graph.timing: a t > 0 opens a span that the rows
 * right after it giving 0 join. */
static void
timings(Net *n)
{
	Graph *g = n->g;
	int open = -1;

	for (int i = 0; i < n->nrow; i++) {
		const Row *r = &n->row[i];
		if (!r->has_t) {
			open = -1;
		} else if (r->t > 0) {
			g->timing = room(n->a, g->timing, g->ntiming, sizeof *g->timing);
			open = g->ntiming++;
			g->timing[open] =
				(Timing){ r->first,     r->last, r->t / 3,
					  2 * r->t / 3, false,   at(n, r->line, r->col[4]) };
		} else if (open >= 0) {
			g->timing[open].last = r->last;
		} else {
			diag_warn(at(n, r->line, r->col[4]), "row '%s': time 0 with no timed row "
							     "above it; the layer is estimated "
							     "(ParaDL would count 0 s)", r->name);
		}
	}
}

static bool
build(Net *n, const Shape *input)
{
	int cur = graph_add_input(n->g, "input", input);

	if (!shape_elems(input, &n->g->tensor[cur].elems)) {
		diag_error(n->g->loc, "the input has more elements than 64 bits can count");
		return false;
	}
	for (int i = 0; i < n->nrow; i++) {
		bool bn_next = i + 1 < n->nrow && n->row[i + 1].kind == K_BNORM;
		if ((cur = row_layers(n, &n->row[i], cur, bn_next)) < 0)
			return false;
	}
	n->g->tensor[cur].output = true;
	timings(n);
	return true;
}

/* The three header lines and the rows, from NUL-terminated text. */
static bool
parse(Net *n, char *text, size_t len, Shape *input)
{
	static const char *const key[3] = { "Dataset", "Input", "Model" };
	static const char *const form[3] = { "NAME", "DxCxWxH", "NAME" };
	Field val[3];
	int nhead = 0, hline[3] = { 0 }, line = 0, errors = diag_errors();
	char *p = text, *end = text + len;

	while (p < end && !n->full) {
		char *nl = memchr(p, '\n', end - p), *eol = nl ? nl : end, *z, *q = p;
		line++;
		if (eol > p && eol[-1] == '\r')
			eol[-1] = '\0';
		*eol = '\0';
		if ((z = memchr(p, '\0', eol - p)) && z + 1 < eol) {
			diag_error(at(n, line, (int)(z - p) + 1), "a NUL byte (not a text file?)");
			return false;
		}
		while (blank(*q))
			q++;
		if (*q && *q != '#') {
			if (nhead < 3) {
				if (header(n, line, p, key[nhead], form[nhead], &val[nhead]))
					val[nhead].s = arena_strndup(n->a, val[nhead].s,
								     val[nhead].n);
				hline[nhead++] = line;
			} else {
				parse_row(n, line, p);
			}
		}
		p = nl ? nl + 1 : end;
	}
	if (diag_errors() > errors)
		return false;
	if (nhead < 3) {
		diag_error(at(n, line ? line : 1, 1), "expected '%s|%s' (a ParaDL table starts "
						      "with Dataset, Input and Model lines)",
			   key[nhead], form[nhead]);
		return false;
	}
	n->g->name = val[2].s;
	n->g->loc = at(n, hline[2], 1);
	if (!parse_dims(n, hline[1], &val[1], "Input", 1, input))
		return false;
	if (input->rank < 2) {
		diag_error(at(n, hline[1], 1), "expected 'Input|DxC...' (the dataset size, then "
						 "the sample's shape)");
		return false;
	}
	n->g->dataset_size = input->d[0];
	input->rank--;
	memmove(input->d, input->d + 1, input->rank * sizeof input->d[0]);
	if (n->nrow == 0) {
		diag_error(n->g->loc, "model '%s' has no layer rows", n->g->name);
		return false;
	}
	return true;
}

Graph *
paradl_load_net(const char *path, Arena *a, FileList *files)
{
	size_t len;
	char *text = file_read(path, &len, MAX_ODL_BYTES, LOC_NONE);
	Net n = { .path = path, .a = a };
	Shape input = { 0 };
	bool ok;

	if (!text)
		return NULL;
	files_add(files, path);
	n.g = graph_new(a, path, path, "paradl");
	n.g->loc = at(&n, 1, 1);
	map_init(&n.names, a);
	map_init(&n.unknown, a);
	ok = parse(&n, text, len, &input) && build(&n, &input);
	free(text);
	free(n.row);
	return ok ? n.g : NULL;
}
