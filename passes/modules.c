/* modules.c -- the framework modules behind the layers, and the blocks a
 * pipeline may be cut between (docs/plans.md).
 *
 * PyTorch's ONNX exporter names a node by the stack of module calls that
 * ran it, then its operator: "/layer2/layer2.0/conv1/Conv".  Each part is
 * the called module's name as torch.onnx's _unqualified_variable_name
 * writes it: its fully-qualified name (FQN) from the last non-numeric atom
 * on ("layer2.0" for layer2.0, "features.0.0" for features.0.0, "h.0" for
 * transformer.h.0, whose ModuleList is never called itself).  A module
 * called again at the same place gets "_1", "_2" ("relu_1").  So, part by
 * part, with F the FQN so far:
 *
 *   - a part "X_N" is X when X is a part at the same place (a repeat call)
 *   - the module is F + its last atom when that name written unqualified
 *     is the part (layer2 -> layer2.0), else F + the part (transformer ->
 *     transformer.h.0)
 *
 * A node at the root ("/Flatten") is code of the model's own forward.
 *
 * Units: pipelines are cut at block boundaries only, as the split points of
 * torch.distributed.pipelining name modules.  A layer's block is the module
 * down to its first indexed part (an element of a Sequential or ModuleList:
 * layer2.0, features.3, transformer.h.7; or of an OrderedDict whose keys
 * are numbered: torchvision ViT's encoder.layers.encoder_layer_7 beside
 * encoder_layer_6 or _8), else its top-level module (conv1, fc).  A unit is
 * a run of layers of one block call; a stage may begin at a unit whose
 * module is called once and begins there.  ODL names ("layer1/y/conv1", and
 * ONNX files whose names are not scoped) give one unit per layer, the name
 * with '/' made '.', but for the calls of a block that one statement of the
 * model made again and again (`repeat 24 { h = layer(h); }`: h_1/...,
 * h_2/...): each call is a block, one unit.
 *
 * A stack (Megatron's layout): the blocks are elements of one container,
 * alike (the same operators and parameters), with units only before them
 * (E: embedding) and after them (L: loss). */
#include "passes/passes.h"

#include <stdlib.h>
#include <string.h>

#include "util/map.h"

typedef struct Span {
	int first, last;   /* layers of the module */
	const char *raw;   /* as a unit: the exporter's path of its first call */
	bool multi;        /* as a unit: called from more than one place */
} Span;

typedef struct Private {
	Map span;               /* module FQN -> Span */
	const char ***prefix;   /* per layer: its modules, outermost first */
	int *nprefix;
} Private;

/* ---- names -------------------------------------------------------------- */

static bool
numeric(const char *s, size_t n)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/* The FQN written as the exporter does: from its last non-numeric atom. */
static const char *
unqualified(const char *f)
{
	const char *p = f, *from = NULL;

	for (;;) {
		const char *dot = strchr(p, '.');
		size_t n = dot ? (size_t)(dot - p) : strlen(p);
		if (!numeric(p, n))
			from = p;
		if (!dot)
			break;
		p = dot + 1;
	}
	return from ? from : f;
}

static bool
indexed(const char *part)
{
	const char *p = part;

	for (;;) {
		const char *dot = strchr(p, '.');
		size_t n = dot ? (size_t)(dot - p) : strlen(p);
		if (numeric(p, n))
			return true;
		if (!dot)
			return false;
		p = dot + 1;
	}
}

static const char *
join(Arena *a, const char *f, const char *sep, const char *part, size_t n)
{
	return *f ? arena_printf(a, "%s%s%.*s", f, sep, (int)n, part)
		  : arena_strndup(a, part, n);
}

/* "relu_2" -> "relu" when "relu" is a part under the same parent. */
static const char *
repeat_call(Arena *a, const Map *raw, const char *parent, const char *part)
{
	const char *us = strrchr(part, '_');

	if (!us || us == part || !numeric(us + 1, strlen(us + 1)))
		return part;
	if (!map_get(raw, join(a, parent, "/", part, (size_t)(us - part))))
		return part;
	return arena_strndup(a, part, (size_t)(us - part));
}

/* "encoder_layer_7" under `parent` where "encoder_layer_6" or
 * "encoder_layer_8" is there too: an element of a numbered container. */
static bool
numbered(Arena *a, const Map *raw, const char *parent, const char *part)
{
	const char *us = strrchr(part, '_');
	size_t n = us ? (size_t)(us - part) : 0;
	long k;

	if (!n || !numeric(us + 1, strlen(us + 1)) || strlen(us + 1) > 9)
		return false;
	k = strtol(us + 1, NULL, 10);
	return (k > 0 && map_get(raw, arena_printf(a, "%s%s%.*s_%ld", parent, *parent ? "/" : "",
						       (int)n, part, k - 1))) ||
	       map_get(raw, arena_printf(a, "%s%s%.*s_%ld", parent, *parent ? "/" : "", (int)n,
					 part, k + 1));
}

static Span *
span_at(Modules *m, Arena *a, const char *fqn, int layer)
{
	Private *p = m->priv;
	Span *s = map_get(&p->span, fqn);

	if (!s) {
		s = arena_alloc(a, sizeof *s);
		s->first = layer;
		map_put(&p->span, fqn, s);
	}
	s->last = layer;
	return s;
}

/* Every layer name starts with '/': PyTorch's exporter wrote them. */
static bool
scoped(const Graph *g)
{
	for (int i = 0; i < g->nlayer; i++)
		if (g->layer[i].name[0] != '/')
			return false;
	return g->nlayer > 0;
}

/* One layer's modules from the exporter's scopes; its unit's path (NULL
 * at the root), name and whether it is indexed. */
static void
scoped_layer(const Graph *g, Modules *m, const Map *raw, int i, const char **ukey,
	     const char **uname, bool *block)
{
	Private *p = m->priv;
	Arena *a = g->arena;
	const char *name = g->layer[i].name + 1, *end = strrchr(name, '/');
	const char *path = "", *fqn = "", *s = name;
	int depth = 0;

	*ukey = *uname = NULL;
	*block = false;
	p->prefix[i] = NULL;
	p->nprefix[i] = 0;
	while (end && s <= end) {
		const char *slash = strchr(s, '/');
		size_t n = (size_t)(slash - s);
		const char *part = arena_strndup(a, s, n);
		const char *x = repeat_call(a, raw, path, part), *parent = path;
		const char *dot = strrchr(x, '.');
		const char *f1 = join(a, fqn, ".", dot ? dot + 1 : x, strlen(dot ? dot + 1 : x));
		fqn = strcmp(unqualified(f1), x) == 0 ? f1 : join(a, fqn, ".", x, strlen(x));
		path = join(a, path, "/", part, n);
		p->prefix[i] = arena_grow(a, p->prefix[i], (size_t)depth, (size_t)depth + 1,
					  sizeof(char *));
		p->prefix[i][depth++] = fqn;
		span_at(m, a, fqn, i);
		if (!*block && (indexed(x) || numbered(a, raw, parent, x))) {
			*block = true;
			*ukey = path;
			*uname = fqn;
		} else if (depth == 1 && !*block) {
			*ukey = path;
			*uname = fqn;
		}
		s = slash + 1;
	}
	p->nprefix[i] = depth;
	m->fqn[i] = fqn;
}

/* The model-level block call that made ODL layer i (its name up to the
 * first '/'), when its statement made other calls too -- a `repeat`'s
 * body: a repeated block, one unit; NULL otherwise.  repeated maps
 * "FILE:LINE:COL" of each statement to its first call, or to "" once a
 * second call has the same statement. */
static const char *
repeated_call(const Graph *g, const Map *repeated, int i)
{
	const Layer *l = &g->layer[i];
	const char *slash = strchr(l->name, '/'), *first;

	if (!slash || l->srcop)
		return NULL;
	first = map_get(repeated, arena_printf(g->arena, "%s:%d:%d",
					       l->site.file ? l->site.file : "", l->site.line,
					       l->site.col));
	if (!first || *first)
		return NULL;
	return arena_strndup(g->arena, l->name, (size_t)(slash - l->name));
}

/* The statements of the model that made several block calls. */
static void
repeated_calls(const Graph *g, Map *repeated)
{
	map_init(repeated, g->arena);
	for (int i = 0; i < g->nlayer; i++) {
		const Layer *l = &g->layer[i];
		const char *slash = strchr(l->name, '/'), *site, *first;
		if (!slash || l->srcop)
			continue;
		site = arena_printf(g->arena, "%s:%d:%d", l->site.file ? l->site.file : "",
				    l->site.line, l->site.col);
		if (!(first = map_get(repeated, site)))
			map_put(repeated, site, arena_strndup(g->arena, l->name,
							      (size_t)(slash - l->name)));
		else if (*first && (strncmp(first, l->name, (size_t)(slash - l->name)) != 0 ||
				    first[slash - l->name]))
			map_put(repeated, site, "");
	}
}

/* One layer named by ODL (or unscoped ONNX): its own unit, '/' made '.'. */
static void
plain_layer(const Graph *g, Modules *m, int i, const char **ukey, const char **uname)
{
	Private *p = m->priv;
	Arena *a = g->arena;
	const char *name = g->layer[i].name, *s = name, *fqn = "";
	int depth = 0;

	p->prefix[i] = NULL;
	for (;;) {
		const char *slash = strchr(s, '/');
		size_t n = slash ? (size_t)(slash - s) : strlen(s);
		fqn = join(a, fqn, ".", s, n);
		p->prefix[i] = arena_grow(a, p->prefix[i], (size_t)depth, (size_t)depth + 1,
					  sizeof(char *));
		p->prefix[i][depth++] = fqn;
		span_at(m, a, fqn, i);
		if (!slash)
			break;
		s = slash + 1;
	}
	p->nprefix[i] = depth;
	m->fqn[i] = fqn;
	*ukey = name;
	*uname = fqn;
}

/* ---- units -------------------------------------------------------------- */

static void
add_unit(const Graph *g, Modules *m, int *cap, const char *name, int i, bool module, bool block)
{
	if (m->nunit == *cap) {
		m->unit = arena_grow(g->arena, m->unit, (size_t)*cap, (size_t)*cap * 2 + 8,
				     sizeof *m->unit);
		*cap = *cap * 2 + 8;
	}
	m->unit[m->nunit++] = (ModUnit){ .name = name, .first = i, .last = i, .module = module,
				      .block = block };
}

/* The units and where a stage may begin. */
static void
units(const Graph *g, Modules *m, const char **key, const char **uname, const bool *block)
{
	Private *p = m->priv;
	int cap = 0;

	for (int i = 0; i < g->nlayer; i++) {
		bool same = i > 0 && key[i] && key[i - 1] && strcmp(key[i], key[i - 1]) == 0;
		if (same) {
			m->unit[m->nunit - 1].last = i;
		} else if (key[i]) {
			add_unit(g, m, &cap, uname[i], i, true, block[i]);
		} else {
			const char *n = g->layer[i].name;
			add_unit(g, m, &cap, n[0] == '/' ? n + 1 : n, i, false, false);
		}
		m->unit_of[i] = m->nunit - 1;
	}
	for (int u = 0; u < m->nunit; u++) { /* one module called from two places? */
		ModUnit *t = &m->unit[u];
		Span *s;
		if (!t->module)
			continue;
		s = map_get(&p->span, t->name);
		if (!s->raw)
			s->raw = key[t->first];
		else if (strcmp(s->raw, key[t->first]) != 0)
			s->multi = true;
	}
	for (int u = 1; u < m->nunit; u++) {
		ModUnit *t = &m->unit[u];
		Span *s = t->module ? map_get(&p->span, t->name) : NULL;
		t->cut = s && !s->multi && s->first == t->first;
		if (t->cut)
			m->cut_after[t->first - 1] = true;
	}
	if (g->nlayer)
		m->cut_after[g->nlayer - 1] = true;
}

/* ---- stacks of blocks ----------------------------------------------------- */

static int64_t
unit_params(const Graph *g, const ModUnit *u)
{
	int64_t w = 0;

	for (int i = u->first; i <= u->last; i++)
		w += g->layer[i].cost.params;
	return w;
}

static bool
alike(const Graph *g, const ModUnit *a, const ModUnit *b)
{
	if (a->last - a->first != b->last - b->first || unit_params(g, a) != unit_params(g, b))
		return false;
	for (int i = 0; i <= a->last - a->first; i++)
		if (g->layer[a->first + i].op != g->layer[b->first + i].op)
			return false;
	return true;
}

static size_t
container_len(const char *name)
{
	const char *dot = strrchr(name, '.');

	return dot ? (size_t)(dot - name) : 0;
}

static void
stack(const Graph *g, Modules *m)
{
	int b0 = -1, b1 = -1;
	const ModUnit *first;

	for (int u = 0; u < m->nunit; u++)
		if (m->unit[u].block) {
			if (b0 < 0)
				b0 = u;
			b1 = u;
		}
	m->stack = false;
	if (b0 < 0) {
		m->stack_why = "the model has no repeated blocks";
		return;
	}
	first = &m->unit[b0];
	for (int u = b0; u <= b1; u++) {
		const ModUnit *t = &m->unit[u];
		size_t n = container_len(t->name);
		if (!t->block || (!t->cut && u > 0)) {
			m->stack_why =
				arena_printf(g->arena, "'%s' sits between the blocks", t->name);
			return;
		}
		if (n != container_len(first->name) || strncmp(t->name, first->name, n) != 0) {
			m->stack_why = arena_printf(g->arena, "the blocks are in more than one "
					"container ('%s' and '%s')", first->name, t->name);
			return;
		}
		if (!alike(g, first, t)) {
			m->stack_why = arena_printf(g->arena, "the blocks differ ('%s' and '%s')",
						    first->name, t->name);
			return;
		}
	}
	m->stack = true;
	m->stack_why = NULL;
	for (int u = 0; u < m->nunit; u++)
		m->unit[u].role = u < b0 ? 'E' : u > b1 ? 'L' : 't';
}

/* ---- entry points -------------------------------------------------------- */

void
modules_derive(const Graph *g, Modules *m)
{
	Arena *a = g->arena;
	int L = g->nlayer;
	Private *p = arena_alloc(a, sizeof *p);
	const char **key = arena_array(a, L ? L : 1, sizeof *key);
	const char **uname = arena_array(a, L ? L : 1, sizeof *uname);
	bool *block = arena_array(a, L ? L : 1, sizeof *block);
	bool sc = scoped(g);
	Map raw, repeated;

	*m = (Modules){ .names = sc ? "pytorch-scopes" : "layer-names", .priv = p };
	m->fqn = arena_array(a, L ? L : 1, sizeof *m->fqn);
	m->unit_of = arena_array(a, L ? L : 1, sizeof *m->unit_of);
	m->cut_after = arena_array(a, L ? L : 1, sizeof *m->cut_after);
	p->prefix = arena_array(a, L ? L : 1, sizeof *p->prefix);
	p->nprefix = arena_array(a, L ? L : 1, sizeof *p->nprefix);
	map_init(&p->span, a);
	map_init(&raw, a);
	if (sc) { /* every place a module was called, for "relu_1" */
		for (int i = 0; i < L; i++) {
			const char *name = g->layer[i].name + 1, *s = strchr(name, '/');
			for (; s; s = strchr(s + 1, '/'))
				map_put(&raw, arena_strndup(a, name, (size_t)(s - name)),
					(void *)1);
		}
	}
	if (!sc)
		repeated_calls(g, &repeated);
	for (int i = 0; i < L; i++) {
		if (sc) {
			scoped_layer(g, m, &raw, i, &key[i], &uname[i], &block[i]);
		} else {
			const char *call = repeated_call(g, &repeated, i);
			plain_layer(g, m, i, &key[i], &uname[i]);
			if (call) /* a block of a `repeat`: the call is the unit */
				key[i] = uname[i] = call, block[i] = true;
		}
	}
	units(g, m, key, uname, block);
	stack(g, m);
}

int
modules_within(const Graph *g, const Modules *m, int first, int last, const char ***out)
{
	const Private *p = m->priv;
	Map seen;
	int n = 0;

	map_init(&seen, g->arena);
	*out = NULL;
	for (int i = first; i <= last; i++) {
		const char *pick = NULL;
		for (int d = 0; d < p->nprefix[i]; d++) {
			const Span *s = map_get(&p->span, p->prefix[i][d]);
			if (s->first >= first && s->last <= last) {
				pick = p->prefix[i][d];
				break;
			}
		}
		if (!pick && p->nprefix[i]) /* a module also used elsewhere */
			pick = p->prefix[i][p->nprefix[i] - 1];
		if (!pick || map_get(&seen, pick))
			continue;
		map_put(&seen, pick, (void *)1);
		*out = arena_grow(g->arena, *out, (size_t)n, (size_t)n + 1, sizeof(char *));
		(*out)[n++] = pick;
	}
	return n;
}
