/* training.c -- the graph that will be trained: an eval-mode ONNX export
 * folds each BatchNormalization into the convolution before it (new
 * weights and a bias, Graph.bn_folded); this pass puts a batchnorm layer
 * back after each such convolution (Layer.folded_bn) and takes the
 * convolution's bias away, as PyTorch's convolutions before a batch norm
 * have none (--conv-bias: they had one, Graph.conv_bias).  --as-exported
 * (Graph.as_exported) keeps the file's graph. */
#include "passes/passes.h"
#include "util/escape.h"

#include <stdlib.h>
#include <string.h>

/* A copy of s with suffix appended, in g's arena. */
static const char *
suffixed(Graph *g, const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	char *p = arena_alloc(g->arena, n + m + 1);

	memcpy(p, s, n);
	memcpy(p + n, suffix, m + 1);
	return p;
}

/* The convolution whose batch norm the export folded: its bias came from
 * the batch norm, and goes (from its file params too). */
static void
drop_bias(Layer *c)
{
	if (c->attr.bias && c->fparams >= c->attr.filters)
		c->fparams -= c->attr.filters;
	c->attr.bias = false;
}

/* A layer of kind op at index at + 1 (its slot made by insert_after())
 * between layer `at` and its output: it reads a new tensor (the output's
 * name + t_suffix) that layer `at` now writes, and writes the old output,
 * so every reader follows it.  Named after layer `at` + suffix. */
static Layer *
splice(Graph *g, int at, OpKind op, const char *suffix, const char *t_suffix)
{
	Layer *p = &g->layer[at], *l = &g->layer[at + 1];
	int out = p->out[0];
	int t = graph_add_tensor(g, suffixed(g, g->tensor[out].name, t_suffix), at);

	*l = (Layer){
		.op = op,
		.name = suffixed(g, p->name, suffix),
		.loc = p->loc,
		.site = p->site,
		.srcidx = p->srcidx,
		.fparams = -1,
	};
	attr_init(&l->attr);
	l->in = arena_array(g->arena, 1, sizeof(int));
	l->in[0] = t;
	l->nin = 1;
	l->out = arena_array(g->arena, 1, sizeof(int));
	l->out[0] = out;
	l->nout = 1;
	p->out[0] = t;
	g->tensor[out].producer = at + 1;
	g->tensor[t].root = t;
	return l;
}

/* A folded convolution at index at: the batchnorm the export folded into
 * it, after it, and its bias gone -- but where the user says the model's
 * convolutions had one of their own (--conv-bias: torchvision's VGG-BN,
 * nn.Conv2d's default bias=True before each BatchNorm2d), which the folded
 * bias includes and the file cannot tell apart. */
static void
restore_bn(Graph *g, int at)
{
	Layer *bn = splice(g, at, OP_BATCHNORM, "/bn", "/conv");

	if (!g->conv_bias)
		drop_bias(&g->layer[at]);
	bn->attr.lead = g->layer[at].attr.lead;
}

/* Rebuilds g's layer array with one new layer after each layer i whose
 * add[i] is set, each made by make(g, at) with `at` the old layer's new
 * index (the new one is at + 1); measured spans follow their layers. */
static bool
insert_after(Graph *g, const bool *add, int nadd, void (*make)(Graph *, int),
	     const char *what)
{
	Layer *old = g->layer;
	int n = g->nlayer, *at;

	if (n + nadd > MAX_LAYERS) {
		diag_error(g->loc, "more than %d layers with %s", MAX_LAYERS, what);
		return false;
	}
	at = arena_array(g->arena, n, sizeof(int));
	g->layer = arena_array(g->arena, n + nadd, sizeof(Layer));
	g->nlayer = g->caplayer = n + nadd;
	for (int i = 0, j = 0; i < n; i++) {
		at[i] = j;
		g->layer[j] = old[i];
		for (int k = 0; k < old[i].nout; k++)
			g->tensor[old[i].out[k]].producer = j;
		j += add[i] ? 2 : 1;
	}
	for (int i = 0; i < g->ntiming; i++) {
		g->timing[i].first = at[g->timing[i].first];
		g->timing[i].last = at[g->timing[i].last] + add[g->timing[i].last];
	}
	for (int i = 0; i < n; i++)
		if (add[i])
			make(g, at[i]);
	return true;
}

/* A dropout after layer `at`, where the user said the export removed
 * one: it saves a 1-byte mask per element (CUDA's native_dropout), and
 * the layers reading its output keep its output, not the layer's. */
static void
dropout_at(Graph *g, int at)
{
	splice(g, at, OP_DROPOUT, "/dropout", "/pre-dropout");
}

/* --dropout NAME,...: the layers after which the export removed a
 * dropout.  Names are the report's (after BatchNorm is restored). */
static bool
add_dropout(Graph *g, const char *names)
{
	bool *add = arena_array(g->arena, g->nlayer, sizeof(bool));
	int nadd = 0;
	const char *p = names;

	while (*p) {
		size_t len = strcspn(p, ",");
		int found = -1;
		for (int i = 0; i < g->nlayer && found < 0; i++)
			if (strlen(g->layer[i].name) == len &&
			    memcmp(g->layer[i].name, p, len) == 0)
				found = i;
		if (found < 0 || g->layer[found].nout != 1) {
			/* the name as the user gave it, escaped and cut
			 * (docs/limits.md, "Names quoted in diagnostics") */
			char *name = esc_text_cut(p, len, NAME_SHOWN);
			if (found < 0)
				diag_error(g->loc, "--dropout: the model has no layer '%s'", name);
			else
				diag_error(g->loc, "--dropout: layer '%s' has %d outputs, not one",
					   name, g->layer[found].nout);
			free(name);
			return false;
		}
		nadd += !add[found];
		add[found] = true;
		p += len + (p[len] == ',');
	}
	return insert_after(g, add, nadd, dropout_at, "dropout added");
}

/* The folded batch norms put back (unless --as-exported), then the
 * dropouts --dropout names (the user's word, --as-exported or not). */
bool
training_graph(Graph *g)
{
	int n = g->nlayer, nfold = 0;
	bool *add = arena_array(g->arena, n, sizeof(bool));

	for (int i = 0; i < n && g->bn_folded && !g->as_exported; i++)
		nfold += add[i] = g->layer[i].folded_bn;
	if (nfold) {
		if (!insert_after(g, add, nfold, restore_bn, "BatchNormalization restored"))
			return false;
		g->bn_restored = nfold;
		diag_note(g->loc, "BatchNormalization restored after %d convolution%s (the "
			  "export folded it); --as-exported analyses the file as it is",
			  nfold, nfold == 1 ? "" : "s");
	}
	return !g->dropout_after || add_dropout(g, g->dropout_after);
}
