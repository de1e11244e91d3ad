/* training.c -- the graph that will be trained: an eval-mode ONNX export
 * folds each BatchNormalization into the convolution before it (new
 * weights and a bias, Graph.bn_folded); this pass puts a batchnorm layer
 * back after each such convolution (Layer.folded_bn) and takes the
 * convolution's bias away, as PyTorch's convolutions before a batch norm
 * have none.  --as-exported (Graph.as_exported) keeps the file's graph. */
#include "passes/passes.h"

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

/* Layer old[i], a folded convolution now at index at in g: a batchnorm
 * layer at index at + 1 reading a new tensor the convolution writes and
 * writing the convolution's old output. */
static void
restore_bn(Graph *g, int at)
{
	Layer *c = &g->layer[at], *bn = &g->layer[at + 1];
	int out = c->out[0];
	int t = graph_add_tensor(g, suffixed(g, g->tensor[out].name, "/conv"), at);

	drop_bias(c);
	*bn = (Layer){
		.op = OP_BATCHNORM,
		.name = suffixed(g, c->name, "/bn"),
		.loc = c->loc,
		.site = c->site,
		.srcidx = c->srcidx,
		.fparams = -1,
	};
	bn->attr.lead = c->attr.lead;
	bn->in = arena_array(g->arena, 1, sizeof(int));
	bn->in[0] = t;
	bn->nin = 1;
	bn->out = arena_array(g->arena, 1, sizeof(int));
	bn->out[0] = out;
	bn->nout = 1;
	c->out[0] = t;
	g->tensor[out].producer = at + 1;
	g->tensor[t].root = t;
}

bool
training_graph(Graph *g)
{
	Layer *old = g->layer;
	int n = g->nlayer, nfold = 0, *at;

	if (!g->bn_folded || g->as_exported)
		return true;
	for (int i = 0; i < n; i++)
		nfold += old[i].folded_bn;
	if (!nfold)
		return true;
	if (n + nfold > MAX_LAYERS) {
		diag_error(g->loc, "more than %d layers with BatchNormalization restored",
			   MAX_LAYERS);
		return false;
	}
	at = arena_array(g->arena, n, sizeof(int));
	g->layer = arena_array(g->arena, n + nfold, sizeof(Layer));
	g->nlayer = g->caplayer = n + nfold;
	for (int i = 0, j = 0; i < n; i++) {
		at[i] = j;
		g->layer[j] = old[i];
		for (int k = 0; k < old[i].nout; k++)
			g->tensor[old[i].out[k]].producer = j;
		j += old[i].folded_bn ? 2 : 1;
	}
	for (int i = 0; i < g->ntiming; i++) {
		g->timing[i].first = at[g->timing[i].first];
		g->timing[i].last = at[g->timing[i].last] + old[g->timing[i].last].folded_bn;
	}
	for (int i = 0; i < n; i++)
		if (old[i].folded_bn)
			restore_bn(g, at[i]);
	g->bn_restored = nfold;
	diag_note(g->loc, "BatchNormalization restored after %d convolution%s (the export "
		  "folded it); --as-exported analyses the file as it is",
		  nfold, nfold == 1 ? "" : "s");
	return true;
}
