/* layer.c -- the IR layers of the node being lowered: their names, the
 * parameters they count, their inputs and outputs, and the helpers every
 * lowering rule shares (axes, constant operands, a one-input layer, a
 * transpose).
 *
 * A layer keeps the node's name; a nameless node's is "<op_type>_<index>".
 * ONNX does not require node names to be unique: a name already taken
 * (by an earlier node or a generated name) gets a "~N" suffix, with one
 * note after the last node.
 *
 * Parameters: every float initializer, and every float tensor of a
 * Constant node but scalars, counts once, on the first layer that reads it
 * directly or through folded constants (Layer.fparams), except
 * BatchNormalization's running mean and variance (buffers) and the
 * tensors a layer reads only derived (a mask compared, positions times
 * rotary inv_freq through a sine: Src), or holding an infinity: buffers
 * (Layer.fbuffers; docs/counting.md, "Parameters and buffers").  But an
 * initializer whose elements are all equal counts once per module (node
 * name prefix, "/features/features.1/block/block.2" of
 * ".../block/block.2/Mul") that reads it: torch.onnx.export merges
 * initializers of equal shape, type and values, so a fresh model's
 * LayerNorm weights of ones and biases of zeros become one tensor each,
 * read by every block (ConvNeXt-T: 28,533,928 parameters against torch's
 * 28,589,128).  A tensor two modules share on purpose (tied weights) holds
 * values drawn at random, not all equal, and still counts once. */
#include "frontend/onnx/lower.h"

#include <inttypes.h>
#include <string.h>

/* ---- names -------------------------------------------------------------- */

/* A layer name no layer has yet: base itself, else base~2, base~3, ...
 * (the first of these not taken either); every layer name, the node's own
 * or a generated one, is made here.  base must live in the arena. */
static const char *
unique_name(Onnx *o, const char *base)
{
	uintptr_t k = (uintptr_t)map_get(&o->names, base);
	const char *name = base;

	if (k) {
		do {
			name = arena_printf(o->a, "%s~%ju", base, (uintmax_t)k++);
		} while (map_get(&o->names, name));
		map_put(&o->names, base, (void *)k);
		if (!o->renamed++) {
			o->renamed_from = base;
			o->renamed_to = name;
		}
	}
	map_put(&o->names, name, (void *)(uintptr_t)2);
	return name;
}

/* The name of the node's first layer: the node's name, or
 * "<op_type>_<index>" for a nameless node, made unique. */
static const char *
node_name(Onnx *o)
{
	if (o->np->name && *o->np->name)
		return unique_name(o, arena_strdup(o->a, o->np->name));
	return unique_name(o, arena_printf(o->a, "%s_%d", o->np->op_type, o->node));
}

/* After the last node: one note for the layers that were renamed. */
void
onnx_note_renamed(Onnx *o)
{
	if (o->renamed == 1)
		diag_note(floc(o), "the layer name '%s' was used before: this layer is "
			  "named '%s'", o->renamed_from, o->renamed_to);
	else if (o->renamed > 1)
		diag_note(floc(o), "%d layer names were used before and got a '~N' suffix "
			  "(the first: '%s' is named '%s')", o->renamed, o->renamed_from,
			  o->renamed_to);
}

/* ---- layers ------------------------------------------------------------- */

/* The module of the node being lowered: its name up to the last '/'
 * (torch.onnx.export's scope names); NULL for a name without one. */
static const char *
node_module(Onnx *o, size_t *len)
{
	const char *name = o->np->name, *slash;

	if (!name || !(slash = strrchr(name, '/')) || slash == name)
		return NULL;
	*len = (size_t)(slash - name);
	return name;
}

/* Whether uniform initializer v was counted for the module m (mlen
 * bytes) already; if not, it is now. */
static bool
module_counted(Onnx *o, Val *v, const char *m, size_t mlen)
{
	for (int k = 0; k < v->nmods; k++)
		if (strlen(v->mods[k]) == mlen && strncmp(v->mods[k], m, mlen) == 0)
			return true;
	if ((v->nmods & (v->nmods - 1)) == 0) { /* 0, 1, 2, 4, ...: grow */
		const char **grown = arena_array(o->a, v->nmods ? 2 * v->nmods : 1, sizeof *grown);
		if (v->nmods)
			memcpy(grown, v->mods, v->nmods * sizeof *grown);
		v->mods = grown;
	}
	v->mods[v->nmods++] = arena_strndup(o->a, m, mlen);
	return false;
}

/* The float initializers the node reads, directly or through folded
 * constants, that no earlier layer counted: they are layer l's, its
 * parameters (as they are) or its buffers (derived only, or holding an
 * infinity).  A uniform one counts again for each module that reads it;
 * one an earlier layer counted as a buffer that l reads as it is was a
 * parameter after all, and moves. */
static void
new_state(Onnx *o, Layer *l)
{
	int64_t n = 0;
	size_t mlen = 0;
	const char *m = node_module(o, &mlen);

	for (size_t i = 0; i < o->np->n_input; i++) {
		const Val *v = lookup(o, o->np->input[i]);
		for (const Src *s = v && !v->act ? v->src : NULL; s; s = s->next) {
			Val *init = s->init;
			bool seen;
			if (s->derived || init->untrained) {
				if (!init->counted) {
					init->counted = true;
					init->buf_layer = (int)(l - o->g->layer);
					l->fbuffers += count(init);
				}
				continue;
			}
			if (init->buf_layer >= 0) {
				o->g->layer[init->buf_layer].fbuffers -= count(init);
				init->buf_layer = -1;
				init->counted = false;
			}
			seen = m && init->uniform && module_counted(o, init, m, mlen);
			if (!init->counted) {
				init->counted = true;
				n += count(init);
			} else if (m && init->uniform && !seen) {
				/* the exporter's merge: this module's own tensor */
				if (init->nmods == 2) {
					o->merged++;
					if (!o->merged_first)
						o->merged_first = o->np->input[i];
				}
				o->merged_params += count(init);
				n += count(init);
			}
		}
	}
	l->fparams = n;
}

void
onnx_note_merged(Onnx *o)
{
	o->g->merged_inits = o->merged;
	o->g->merged_params = o->merged_params;
	if (o->merged)
		diag_note(floc(o),
			  "%d initializer%s of equal elements (the first: '%s') %s read by "
			  "the nodes of several modules: the exporter merged what were each "
			  "module's own (a fresh model's ones and zeros); counted once per module, "
			  "%" PRId64 " parameters more",
			  o->merged, o->merged == 1 ? "" : "s", o->merged_first,
			  o->merged == 1 ? "is" : "are", o->merged_params);
}

/* Adds a layer reading the activations `in`; its output is the node's
 * output `out`, or for out = -1 a tensor of the lowering's own named
 * "<layer>:out".  A node lowered to several layers gives them its name
 * with a ":k" suffix after the first. */
Layer *
onnx_layer_out(Onnx *o, OpKind op, const Val **in, int nin, int out)
{
	int *ins = arena_array(o->a, nin ? nin : 1, sizeof *ins), l;
	Graph *g = o->g;
	const char *name;

	if (g->nlayer >= MAX_LAYERS) {
		diag_error(floc(o), "model has more than %d layers", MAX_LAYERS);
		return NULL;
	}
	for (int i = 0; i < nin; i++)
		ins[i] = in[i]->tensor;
	if (g->nlayer && g->layer[g->nlayer - 1].srcidx == o->node &&
	    g->layer[g->nlayer - 1].srcop) {
		name = unique_name(o, arena_printf(o->a, "%s:%d", o->lname, g->nlayer - o->first));
	} else {
		o->first = g->nlayer;
		name = o->lname = node_name(o);
	}
	l = graph_add_layer(g, op, name, floc(o));
	g->layer[l].srcop = arena_strdup(o->a, o->np->op_type);
	g->layer[l].srcidx = o->node;
	new_state(o, &g->layer[l]);
	layer_set_inputs(g, l, ins, nin);
	layer_add_output(g, l, out < 0 ? arena_printf(o->a, "%s:out", name)
					: arena_strdup(o->a, o->np->output[out]));
	return &g->layer[l];
}

/* A layer whose output is the node's first. */
Layer *
onnx_layer(Onnx *o, OpKind op, const Val **in, int nin)
{
	return onnx_layer_out(o, op, in, nin, 0);
}

/* The full shape of an activation from its per-sample shape: the batch
 * axis comes back, as 1 when the per-sample shape left it out. */
static bool
full_shape(Onnx *o, const Shape *ps, int rank, int bax, Val *v)
{
	char b[96];

	v->rank = rank;
	v->bax = bax;
	if (bax < 0 && ps->rank == rank) {
		memcpy(v->d, ps->d, rank * sizeof ps->d[0]);
	} else if (bax >= 0 && bax < rank && ps->rank == rank && ps->d[bax] > 1) {
		memcpy(v->d, ps->d, rank * sizeof ps->d[0]);
	} else if (bax >= 0 && bax < rank && ps->rank == rank - 1) {
		memcpy(v->d, ps->d, bax * sizeof ps->d[0]);
		v->d[bax] = 1;
		memcpy(v->d + bax + 1, ps->d + bax, (rank - 1 - bax) * sizeof ps->d[0]);
	} else {
		NERR(o, "internal: per-sample shape %s does not fit rank %d with the batch "
			"on axis %d", shape_str(ps, b, sizeof b), rank, bax);
		return false;
	}
	return true;
}

/* Infers the new layer's shapes and binds its outputs (the node's first
 * ones) as activations of full rank `rank`, batch on axis `bax`. */
bool
onnx_finish(Onnx *o, Layer *ly, int rank, int bax)
{
	Graph *g = o->g;

	if (!layer_infer(g, (int)(ly - g->layer), NULL))
		return false;
	for (int k = 0; k < ly->nout; k++) {
		const Tensor *t = &g->tensor[ly->out[k]];
		Val *v = newval(o);
		v->act = true;
		v->shaped = true;
		v->tensor = ly->out[k];
		if (!full_shape(o, &t->shape, rank, bax, v))
			return false;
		map_put(&o->vals, t->name, v);
	}
	return true;
}

/* ---- what the rules share ---------------------------------------------- */

/* onnx_finish with x's full rank and batch axis; false for no layer l */
bool
onnx_finish_like(Onnx *o, Layer *l, const Val *x)
{
	return l && onnx_finish(o, l, x->rank, x->bax);
}

/* a full axis attribute, normalised; -1 after an error */
int
onnx_full_axis(Onnx *o, int64_t axis, int rank)
{
	if (axis < -rank || axis >= rank) {
		NERR(o, "axis %" PRId64 " is out of range for rank %d", axis, rank);
		return -1;
	}
	return (int)(axis < 0 ? axis + rank : axis);
}

/* the per-sample axis of a full one that must not be the batch's */
int
onnx_sample_axis(Onnx *o, const Val *x, int64_t axis)
{
	int a = onnx_full_axis(o, axis, x->rank);

	if (a < 0)
		return -2;
	if (a == x->bax) {
		NERR(o, "operating along the batch axis is not supported");
		return -2;
	}
	return ps_axis(x, a);
}

/* A const layer holding a constant operand, with per-sample shape s. */
const Val *
onnx_const_layer(Onnx *o, const Shape *s)
{
	Layer *l = onnx_layer_out(o, OP_CONST, NULL, 0, -1);
	Val *v;

	if (!l)
		return NULL;
	*attr_target(o->g, &l->attr) = *s;
	if (!layer_infer(o->g, (int)(l - o->g->layer), NULL))
		return NULL;
	v = newval(o);
	v->act = true;
	v->tensor = l->out[0];
	return v;
}

/* The activation made from a constant operand of a matrix product or
 * other op: a const layer with its full shape (it holds no batch). */
const Val *
onnx_const_operand(Onnx *o, const Val *c)
{
	Shape s = { .rank = c->rank };
	const Val *v;
	Val *full;

	if (!c->shaped || c->rank > MAX_RANK) {
		NERR(o, "the shape of a constant operand is not known");
		return NULL;
	}
	memcpy(s.d, c->d, c->rank * sizeof c->d[0]);
	if (!(v = onnx_const_layer(o, &s)))
		return NULL;
	full = (Val *)v;
	full->shaped = true;
	full->rank = c->rank;
	full->bax = -1;
	memcpy(full->d, c->d, c->rank * sizeof c->d[0]);
	return full;
}

/* A layer of kind op reading x alone, shaped like it. */
bool
onnx_lower_unary(Onnx *o, const Val *x, OpKind op)
{
	Layer *l = onnx_layer(o, op, &x, 1);

	if (!l)
		return false;
	/* Dropout's mask has the output's shape */
	if (op == OP_DROPOUT && o->np->n_output > 1 && *o->np->output[1])
		layer_add_output(o->g, (int)(l - o->g->layer),
				 arena_strdup(o->a, o->np->output[1]));
	return onnx_finish_like(o, l, x);
}

/* A transpose of x by the full permutation p; *out, when given, is the
 * result, a tensor of the lowering's own (else the node's output). */
bool
onnx_transpose(Onnx *o, const Val *x, const int64_t *p, const Val **out)
{
	Layer *l;
	Shape *perm;
	int bax = -1;
	unsigned used = 0;

	if (!(l = onnx_layer_out(o, OP_TRANSPOSE, &x, 1, out ? -1 : 0)))
		return false;
	perm = attr_target(o->g, &l->attr);
	for (int i = 0; i < x->rank; i++) {
		if (p[i] < 0 || p[i] >= x->rank || (used & (1u << p[i]))) {
			NERR(o, "bad permutation");
			return false;
		}
		used |= 1u << p[i];
		if (p[i] == x->bax) {
			bax = i;
			if (x->d[p[i]] == 1)
				continue; /* the batch alone: not in the sample */
		}
		perm->d[perm->rank++] = ps_axis(x, (int)p[i]);
	}
	if (!onnx_finish(o, l, x->rank, bax))
		return false;
	if (out)
		*out = lookup(o, o->g->tensor[l->out[0]].name);
	return true;
}
