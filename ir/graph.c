/* graph.c -- building a Graph: tensors, layers, the op table. */
#include "ir/ir.h"

#include <stdarg.h>
#include <stdint.h>
#include <string.h>

const OpInfo op_info[OP_COUNT] = {
#define OP(id, name, cls, f, bd, bw, save) [id] = { name, cls, f, bd, bw, save },
#include "ir/ops.def"
#undef OP
};

Graph *
graph_new(Arena *a, const char *name, const char *source, const char *format)
{
	Graph *g = arena_alloc(a, sizeof *g);

	g->arena = a;
	g->name = name;
	g->source = source;
	g->format = format;
	graph_touch(g);
	return g;
}

void
graph_touch(Graph *g)
{
	static uint64_t versions;

	g->version = ++versions;
}

/* What a layer without a window or shapes reads: zeros. */
static const Window no_window;
static const Shape no_shape;

void
attr_init(Attr *a)
{
	attr_view(a, &no_window);
	a->target = a->pad_hi = &no_shape;
}

void
attr_view(Attr *a, const Window *w)
{
	a->kernel = w->kernel;
	a->stride = w->stride;
	a->dilation = w->dilation;
	a->pad = w->pad;
	a->out_pad = w->out_pad;
}

const Window *
attr_window_of(const Attr *a)
{
	/* kernel is the window's first field */
	return a->kernel ? (const Window *)(const void *)a->kernel : &no_window;
}

Window *
attr_window(Graph *g, Attr *a)
{
	Window *w = arena_alloc(g->arena, sizeof *w);

	*w = *attr_window_of(a);
	attr_view(a, w);
	return w;
}

/* A shape of the layer's own in g's arena, a copy of *field's (zero when
 * none), that *field then points at. */
static Shape *
own_shape(Graph *g, const Shape **field)
{
	Shape *s = arena_alloc(g->arena, sizeof *s);

	if (*field)
		*s = **field;
	*field = s;
	return s;
}

Shape *
attr_target(Graph *g, Attr *a)
{
	return own_shape(g, &a->target);
}

Shape *
attr_pad_hi(Graph *g, Attr *a)
{
	return own_shape(g, &a->pad_hi);
}

/* The last weights kept, per number of them: a chain's layers of one
 * kind find the ones of the last layer of that kind. */
static struct {
	const Graph *g;
	uint64_t version;
	const Weight *w[5];
} last_weights;

const Weight *
graph_weights(Graph *g, const Weight *w, int n)
{
	Weight *copy;

	if (n <= 0)
		return NULL;
	if (last_weights.g != g || last_weights.version != g->version) {
		memset(&last_weights, 0, sizeof last_weights);
		last_weights.g = g;
		last_weights.version = g->version;
	}
	if (n < 5 && last_weights.w[n] && memcmp(last_weights.w[n], w, n * sizeof *w) == 0)
		return last_weights.w[n];
	copy = arena_array(g->arena, n, sizeof *copy);
	memcpy(copy, w, n * sizeof *w);
	if (n < 5)
		last_weights.w[n] = copy;
	return copy;
}

int
graph_add_tensor(Graph *g, const char *name, int producer)
{
	Tensor *t;

	if (g->ntensor == g->captensor) {
		int cap = g->captensor ? 2 * g->captensor : 64;
		g->tensor = arena_regrow(g->arena, g->tensor, g->ntensor, cap, sizeof *t);
		g->captensor = cap;
	}
	t = &g->tensor[g->ntensor];
	memset(t, 0, sizeof *t); /* arena_regrow leaves it as it comes */
	t->name = name;
	t->producer = producer;
	t->root = g->ntensor;
	return g->ntensor++;
}

int
graph_add_input(Graph *g, const char *name, const Shape *s)
{
	int t = graph_add_tensor(g, name, -1);

	g->tensor[t].shape = *s;
	g->input = arena_grow(g->arena, g->input, g->ninput, g->ninput + 1, sizeof(int));
	g->input[g->ninput++] = t;
	return t;
}

int
graph_add_layer(Graph *g, OpKind op, const char *name, Loc loc)
{
	Layer *l;

	if (g->nlayer == g->caplayer) {
		int cap = g->caplayer ? 2 * g->caplayer : 64;
		g->layer = arena_regrow(g->arena, g->layer, g->nlayer, cap, sizeof *l);
		g->caplayer = cap;
	}
	l = &g->layer[g->nlayer];
	memset(l, 0, sizeof *l); /* arena_regrow leaves it as it comes */
	l->op = op;
	l->name = name;
	l->loc = loc;
	l->site = loc;
	l->fparams = -1;
	attr_init(&l->attr);
	return g->nlayer++;
}

void
layer_set_inputs(Graph *g, int l, const int *in, int nin)
{
	Layer *ly = &g->layer[l];

	/* packed: a million layers' lists add up */
	if ((size_t)nin > SIZE_MAX / sizeof(int))
		die("out of memory");
	ly->in = arena_alloc_aligned(g->arena, (size_t)nin * sizeof(int), _Alignof(int));
	memcpy(ly->in, in, nin * sizeof(int));
	ly->nin = nin;
}

int
layer_add_output(Graph *g, int l, const char *tensor_name)
{
	int t = graph_add_tensor(g, tensor_name, l);
	Layer *ly = &g->layer[l];
	int *out =
		arena_alloc_aligned(g->arena, ((size_t)ly->nout + 1) * sizeof(int), _Alignof(int));

	if (ly->nout)
		memcpy(out, ly->out, ly->nout * sizeof(int));
	ly->out = out;
	ly->out[ly->nout++] = t;
	return t;
}

int
op_lookup(const char *name)
{
	for (int i = 0; i < OP_COUNT; i++)
		if (strcmp(op_info[i].name, name) == 0)
			return i;
	return -1;
}

const char *
op_name(OpKind op)
{
	return (unsigned)op < OP_COUNT ? op_info[op].name : "?";
}

/* "file:line:col: error: layer 'name' (op): msg", plus a note pointing at
 * the model-level statement when the layer came from inside a block. */
void
layer_error(const Graph *g, const Layer *l, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (l->srcop) {
		diag_error(l->loc, "node %d '%s' (%s): %s", l->srcidx, l->name, l->srcop, msg);
		return;
	}
	diag_error(l->loc, "layer '%s' (%s): %s", l->name, op_name(l->op), msg);
	if (l->site.line != l->loc.line || l->site.col != l->loc.col || l->site.file != l->loc.file)
		diag_note(l->site, "in the expansion of this statement");
	(void)g;
}

void
graph_last_use(const Graph *g, int *last)
{
	for (int t = 0; t < g->ntensor; t++)
		last[t] = g->tensor[t].output ? g->nlayer : -1;
	for (int i = 0; i < g->nlayer; i++)
		for (int j = 0; j < g->layer[i].nin; j++)
			if (last[g->layer[i].in[j]] < i)
				last[g->layer[i].in[j]] = i;
}

int64_t
layer_kernel_params(const Layer *l)
{
	OpClass c = op_info[l->op].cls;

	if ((c == OPC_CONV || c == OPC_FC) && l->attr.bias)
		return l->cost.params - l->attr.filters;
	return l->cost.params;
}

/* Element-wise: a scaling, a mask added, a cast, dropout. */
static bool
elementwise(const Layer *l)
{
	return op_info[l->op].cls == OPC_UNARY || op_info[l->op].cls == OPC_BINARY;
}

/* The one layer that reads tensor t, or -1 (none, or several). */
static int
sole_reader(const Graph *g, int t)
{
	int r = -1;

	for (int i = 0; i < g->nlayer; i++)
		for (int j = 0; j < g->layer[i].nin; j++)
			if (g->layer[i].in[j] == t) {
				if (r >= 0 && r != i)
					return -1;
				r = i;
			}
	return r;
}

/* The layer after `at` on the way from an attention's softmax to its
 * product with V (dropout, casts), or -1 at the last of them. */
static int
after_softmax(const Graph *g, int at)
{
	int r = g->layer[at].nout == 1 ? sole_reader(g, g->layer[at].out[0]) : -1;

	return r >= 0 && elementwise(&g->layer[r]) && g->layer[r].nin == 1 ? r : -1;
}

/* Back from layer `at` to a product of two activations (a weight makes
 * an fc) through at most `steps` element-wise layers -- a scaling, a mask
 * added or selected (Where), a cast -- trying each input in turn, the
 * first first, and none a constant makes (the mask): the layers on the
 * way into path[*np..], the product last; false if there is none. */
static bool
back_to_product(const Graph *g, int at, int steps, int *path, int *np)
{
	const Layer *l = &g->layer[at];

	for (int j = 0; j < l->nin; j++) {
		int p = g->tensor[l->in[j]].producer;
		const Layer *q = p >= 0 ? &g->layer[p] : NULL;
		if (!q || q->op == OP_CONST)
			continue;
		path[*np] = p;
		if (op_info[q->op].cls == OPC_MATMUL) {
			if (q->nin != 2)
				continue;
			++*np;
			return true;
		}
		if (!elementwise(q) || steps == 0)
			continue;
		++*np;
		if (back_to_product(g, p, steps - 1, path, np))
			return true;
		--*np;
	}
	return false;
}

/* The attentions of g: core (nlayer flags, or NULL) as graph_attention
 * says; attn (or NULL): the parts of those a fused kernel can run; at (or
 * NULL): each one's product QK^T and product with V (-1: none found), as
 * graph_attention_parts says. */
static int
attentions(const Graph *g, bool *core, unsigned char *attn, int (*at_)[2])
{
	int n = 0;

	for (int i = 0; i < g->nlayer; i++) {
		int path[5], np = 0, at, pv;
		bool trained = false;

		if (g->layer[i].op != OP_SOFTMAX || g->layer[i].nin < 1)
			continue;
		/* back through a scaling, a mask, a cast: a few steps */
		if (!back_to_product(g, i, 3, path, &np))
			continue;
		for (int k = 0; k < np - 1; k++)
			trained |= g->layer[path[k]].cost.params > 0;
		if (at_) {
			for (at = i; after_softmax(g, at) >= 0;)
				at = after_softmax(g, at);
			pv = g->layer[at].nout == 1 ? sole_reader(g, g->layer[at].out[0]) : -1;
			at_[n][0] = path[np - 1];
			at_[n][1] = pv >= 0 && op_info[g->layer[pv].op].cls == OPC_MATMUL &&
						    g->layer[pv].nin == 2
					    ? pv
					    : -1;
		}
		if (!attn)
			n++;
		if (core) {
			core[i] = true;
			for (int k = 0; k < np; k++)
				core[path[k]] = true;
			/* on through dropout and casts to the product with V */
			for (at = i; (at = after_softmax(g, at)) >= 0;)
				core[at] = true;
		}
		if (!attn || trained)
			continue;
		for (at = i; after_softmax(g, at) >= 0;)
			at = after_softmax(g, at);
		pv = g->layer[at].nout == 1 ? sole_reader(g, g->layer[at].out[0]) : -1;
		if (pv < 0 || op_info[g->layer[pv].op].cls != OPC_MATMUL || g->layer[pv].nin != 2)
			continue; /* no product with V after it: not one kernel */
		n++;
		for (int k = 0; k < np - 1; k++)
			attn[path[k]] = ATTN_CORE;
		attn[path[np - 1]] = ATTN_QK;
		attn[i] = ATTN_CORE;
		for (at = i; (at = after_softmax(g, at)) >= 0;)
			attn[at] = ATTN_CORE;
		attn[pv] = ATTN_PV;
	}
	return n;
}

int
graph_attention(const Graph *g, bool *core)
{
	return attentions(g, core, NULL, NULL);
}

int
graph_fusable_attention(const Graph *g, unsigned char *attn)
{
	return attentions(g, NULL, attn, NULL);
}

int
graph_attention_parts(const Graph *g, int (*at)[2])
{
	return attentions(g, NULL, NULL, at);
}

