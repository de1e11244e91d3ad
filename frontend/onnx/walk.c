/* walk.c -- the walk over an ONNX graph: initializers and graph inputs
 * become values, then each node in turn is folded or lowered, by its row
 * in the operator table (optable.c).
 *
 * Every ONNX value is either an activation (it depends on a graph input;
 * its first dimension is the batch) or a constant (initializers, Constant
 * nodes, and what can be computed from them and from shapes).  Nodes whose
 * inputs are all constant are folded (fold.c): integer shape arithmetic
 * such as Shape -> Gather -> Unsqueeze -> Concat is evaluated, with the
 * batch kept symbolic (the value BATCH, values.h).  Nodes that read an
 * activation become IR layers (lower.h), with per-sample shapes inferred
 * at once (ir/infer.c) so later shape computations can read them.
 *
 * The batch is the first dimension of the graph inputs.  With --no-batch
 * (a hidden option for ONNX's single-operator conformance models, whose
 * inputs are plain tensors) every graph input is one whole sample: an
 * implicit batch of 1 sits outside it, so per-sample shapes are the full
 * ONNX shapes and no axis is the batch. */
#include "frontend/onnx/lower.h"
#include "frontend/onnx/optable.h"
#include "frontend/onnx/walk.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* Whether dt is a floating-point tensor type: trained weights. */
static bool
is_float(int dt)
{
	return dt == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT ||
	       dt == ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE ||
	       dt == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16 ||
	       dt == ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16;
}

/* ---- inputs and initializers ------------------------------------------- */

/* A float tensor whose values, where read, hold an infinity or a NaN: a
 * mask (0 and -inf), never a trained weight. */
static void
untrained(Val *v)
{
	for (int64_t k = 0; k < v->n && !v->untrained; k++)
		v->untrained = !isfinite(v->fv[k]);
}

/* Whether dt is an integer tensor type: token ids. */
static bool
is_integer(int dt)
{
	return dt == ONNX__TENSOR_PROTO__DATA_TYPE__INT64 ||
	       dt == ONNX__TENSOR_PROTO__DATA_TYPE__INT32 ||
	       dt == ONNX__TENSOR_PROTO__DATA_TYPE__INT16 ||
	       dt == ONNX__TENSOR_PROTO__DATA_TYPE__UINT16 ||
	       dt == ONNX__TENSOR_PROTO__DATA_TYPE__UINT32 ||
	       dt == ONNX__TENSOR_PROTO__DATA_TYPE__UINT64;
}

/* The fingerprint pbstrip.c gave a float matrix, NULL if none. */
static const char *
fingerprint_of(const Onnx__TensorProto *t)
{
	for (size_t i = 0; i < t->n_external_data; i++)
		if (t->external_data[i]->key && t->external_data[i]->value &&
		    strcmp(t->external_data[i]->key, ONNX_FINGERPRINT) == 0)
			return t->external_data[i]->value;
	return NULL;
}

/* A matrix v whose elements an earlier one u holds too, transposed or
 * not: the exporter's copy of a tied weight (a GPT's output layer, W^T
 * of the embedding table it shares), which counts as u. */
static Val *
tied(Map *seen, Val *v)
{
	Val *u;

	if (!v->fingerprint)
		return NULL;
	if (!(u = map_get(seen, v->fingerprint))) {
		map_put(seen, v->fingerprint, v);
		return NULL;
	}
	return (u->d[0] == v->d[1] && u->d[1] == v->d[0]) ||
		       (u->d[0] == v->d[0] && u->d[1] == v->d[1]) ? u : NULL;
}

static bool
add_initializers(Onnx *o, const Onnx__GraphProto *gp)
{
	Map seen; /* fingerprint -> the first matrix with it */

	map_init(&seen, o->a);
	for (size_t i = 0; i < gp->n_initializer; i++) {
		const Onnx__TensorProto *t = gp->initializer[i];
		Val *v;
		if (!t->name || !*t->name) {
			diag_error(floc(o), "initializer %zu has no name", i);
			return false;
		}
		if (!(v = tensor_val(o, t, "initializer")))
			return false;
		v->init = true;
		v->name = arena_strdup(o->a, t->name);
		if (is_float(t->data_type)) { /* a trained tensor: its own source */
			Val *u;
			v->src = arena_alloc(o->a, sizeof *v->src);
			v->src->init = v;
			if ((v->fingerprint = fingerprint_of(t)))
				v->fingerprint = arena_strdup(o->a, v->fingerprint);
			if ((u = tied(&seen, v))) {
				v->src->init = u;
				if (!o->tied++)
					diag_note(floc(o), "initializer '%s' holds the elements "
						  "of '%s' (a tied weight the exporter copied, as "
						  "W^T of a shared embedding table): counted once",
						  t->name, u->name);
			}
			/* every element equal: what the exporter merges (the
			 * values of tensors above pbstrip's 64 KiB are not read) */
			v->uniform = v->n >= 2 && v->n == count(v) && v->fv;
			for (int64_t k = 1; v->uniform && k < v->n; k++)
				v->uniform = v->fv[k] == v->fv[0];
			untrained(v);
		}
		map_put(&o->vals, arena_strdup(o->a, t->name), v);
	}
	return true;
}

/* One graph input's per-sample shape (the full shape with --no-batch);
 * its batch into *batch. */
static bool
input_shape(Onnx *o, const Onnx__ValueInfoProto *vi, const Shape *override, Shape *s,
	    int64_t *batch)
{
	const Onnx__TypeProto__Tensor *tt;
	int skip = o->nobatch ? 0 : 1;

	if (!vi->type || vi->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE) {
		diag_error(floc(o), "graph input '%s' is not a tensor (sequences, maps and "
			   "optionals are not supported)", vi->name);
		return false;
	}
	if (!(tt = vi->type->tensor_type) || !tt->shape) {
		diag_error(floc(o), "graph input '%s' has no tensor shape", vi->name);
		return false;
	}
	if (tt->shape->n_dim < (size_t)skip || tt->shape->n_dim > (size_t)MAX_RANK + skip) {
		diag_error(floc(o), "graph input '%s' has %zu dimensions (%d to %d supported)",
			   vi->name, tt->shape->n_dim, skip, MAX_RANK + skip);
		return false;
	}
	/* the first dimension is the batch, symbolic or fixed (a value below
	 * 1, as some exporters write for "dynamic", is symbolic) */
	*batch = BATCH;
	if (skip && tt->shape->dim[0]->value_case ==
			    ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
	    tt->shape->dim[0]->dim_value > 0)
		*batch = tt->shape->dim[0]->dim_value;
	if (*batch != BATCH && *batch > MAX_DIM) {
		diag_error(floc(o), "graph input '%s': batch dimension %" PRId64
			   " is out of range (1 to 2^40)", vi->name, *batch);
		return false;
	}
	s->rank = (int)tt->shape->n_dim - skip;
	for (int k = 0; k < s->rank; k++) {
		const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[k + skip];
		s->d[k] = d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE
				  ? d->dim_value
				  : BATCH; /* symbolic: any value a file may hold is a dim */
	}
	if (override && o->g->ninput == 0)
		*s = *override;
	/* --seq-len: the symbolic length of integer [batch, s] (token ids,
	 * their mask) */
	if (o->seq_len && skip && s->rank == 1 && s->d[0] == BATCH && tt->has_elem_type &&
	    is_integer(tt->elem_type))
		s->d[0] = o->seq_len;
	for (int k = 0; k < s->rank; k++) {
		if (s->d[k] == BATCH) {
			diag_error(floc(o), "graph input '%s': dimension %d is symbolic; give the "
				   "per-sample shape with --input-shape%s", vi->name, k + skip,
				   s->rank == 1 && tt->has_elem_type && is_integer(tt->elem_type)
					   ? " (or the sequence's length with --seq-len)"
					   : "");
			return false;
		}
		if (s->d[k] == 0) {
			diag_error(floc(o), "graph input '%s': dimension %d is 0 (empty tensors "
				   "are not supported)", vi->name, k + skip);
			return false;
		}
		if (s->d[k] < 1 || s->d[k] > MAX_DIM) {
			diag_error(floc(o), "graph input '%s': dimension %d is %" PRId64 ", out of "
				   "range (1 to 2^40)", vi->name, k + skip, s->d[k]);
			return false;
		}
	}
	if (!shape_elems(s, &(int64_t){ 0 })) {
		diag_error(floc(o), "graph input '%s' has more elements than 64 bits can count",
			   vi->name);
		return false;
	}
	return true;
}

/* The graph inputs that are not initializers (IR <= 3 lists both). */
static bool
add_inputs(Onnx *o, const Onnx__GraphProto *gp, const Shape *override)
{
	for (size_t i = 0; i < gp->n_input; i++) {
		const Onnx__ValueInfoProto *vi = gp->input[i];
		Shape s = { 0 };
		int64_t batch;
		Val *v;

		if (!vi->name || map_get(&o->vals, vi->name))
			continue;
		if (!input_shape(o, vi, override, &s, &batch))
			return false;
		if (o->g->ninput == 0)
			o->batch = batch;
		v = newval(o);
		v->act = true;
		v->shaped = true;
		v->rank = s.rank + !o->nobatch;
		v->bax = o->nobatch ? -1 : 0;
		v->d[0] = 1;
		memcpy(v->d + !o->nobatch, s.d, s.rank * sizeof s.d[0]);
		v->tensor = graph_add_input(o->g, arena_strdup(o->a, vi->name), &s);
		shape_elems(&s, &o->g->tensor[v->tensor].elems); /* input_shape checked it */
		/* integer [batch, s]: token ids, perhaps (sequence()) */
		if (!o->nobatch && s.rank == 1 && vi->type->tensor_type->has_elem_type &&
		    is_integer(vi->type->tensor_type->elem_type))
			o->g->tensor[v->tensor].seq = true;
		map_put(&o->vals, o->g->tensor[v->tensor].name, v);
	}
	if (o->g->ninput == 0 && !o->nobatch) {
		diag_error(floc(o), "the graph has no input besides its initializers");
		return false;
	}
	return true;
}

/* ---- nodes that read an activation -------------------------------------- */

/* An operator with no rule: an opaque layer with the output shape the
 * file's value_info declares, or an error when it declares none.  Unknown
 * operators and value_info are looked up by name (o->unknown, o->vinfo):
 * a model of many custom operators stays linear. */
static bool
lower_unknown(Onnx *o, const Val *x)
{
	const char *out = o->np->output[0]; /* node() checked it */
	const Onnx__ValueInfoProto *vi = map_get(&o->vinfo, out);
	const Onnx__TensorShapeProto *sp;
	Graph *g = o->g;
	Layer *l;
	Shape s = { 0 };
	int skip = o->nobatch ? 0 : 1;
	intptr_t k = (intptr_t)map_get(&o->unknown, o->np->op_type);

	if (!k) { /* a new one: the array doubles */
		int n = g->nunknown;
		if ((n & (n - 1)) == 0)
			g->unknown = arena_grow(o->a, g->unknown, n, n ? 2 * n : 1,
						sizeof *g->unknown);
		g->unknown[n].op = arena_strdup(o->a, o->np->op_type);
		k = ++g->nunknown;
		map_put(&o->unknown, g->unknown[n].op, (void *)k);
	}
	g->unknown[k - 1].count++;
	if (o->strict) {
		NERR(o, "unknown operator (--strict)");
		return false;
	}
	if (!vi || !vi->type || vi->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ||
	    !vi->type->tensor_type || !(sp = vi->type->tensor_type->shape) ||
	    sp->n_dim < (size_t)skip || sp->n_dim > (size_t)MAX_RANK + skip)
		goto noshape;
	s.rank = (int)sp->n_dim - skip;
	for (int d = 0; d < s.rank; d++) {
		if (sp->dim[d + skip]->value_case !=
		    ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
			goto noshape;
		s.d[d] = sp->dim[d + skip]->dim_value;
		if (s.d[d] < 1 || s.d[d] > MAX_DIM)
			goto noshape;
	}
	if (!(l = onnx_layer(o, OP_OPAQUE, &x, 1)))
		return false;
	o->g->tensor[l->out[0]].shape = s;
	if (!shape_elems(&s, &o->g->tensor[l->out[0]].elems)) {
		NERR(o, "the shape declared for output '%s' has more elements than 64 bits can "
			"count", out);
		return false;
	}
	return onnx_finish(o, l, s.rank + skip, skip - 1);
noshape:
	NERR(o, "unsupported operator, and the file declares no shape for its output '%s'", out);
	return false;
}

/* A node that reads an activation, of operator op (NULL: one oraclec does
 * not know): lowered by its row's rule, whose first input must be the
 * activation unless the row says otherwise. */
static bool
lower_node(Onnx *o, const OnnxOp *op, const Val **in, int nin)
{
	const Val *x = in[0] && in[0]->act ? in[0] : NULL;
	bool any = op && op->lower && (op->flags & OPF_ANY_FIRST);

	for (int i = 0; !x && i < nin; i++)
		if (in[i] && in[i]->act)
			x = in[i];
	if (op && (op->flags & OPF_DATA_SHAPED)) {
		NERR(o, "an output shape computed from data is not supported");
		return false;
	}
	if (any && (!(op->flags & OPF_PAIR) || (in[0] && nin > 1 && in[1])))
		return op->lower(o, op->kind, in, nin);
	if (x != in[0]) {
		NERR(o, "a constant first input is not supported");
		return false;
	}
	if (op && op->lower && !any)
		return op->lower(o, op->kind, in, nin);
	return lower_unknown(o, x);
}

/* ---- nodes of constants ------------------------------------------------- */

/* Evaluates the node by its row's folding rule into out (nothing for an
 * operator with none, or a node without its first input); false after
 * an error. */
static bool
fold(Onnx *o, const OnnxOp *op, const Val **in, int nin, Val *out)
{
	if (!op || !op->fold)
		return true;
	if (op->flags & OPF_CONSTANT) {
		op->fold(o, op->code, in, nin, out);
		return out->shaped || attr(o->np, "value") == NULL || !diag_errors();
	}
	if (nin < 1 || !in[0])
		return true;
	op->fold(o, op->code, in, nin, out);
	/* a shape of more elements than 64 bits count (Expand of [1, 2^40]
	 * to [2^40, 1]) is not one: the rules multiply its dimensions.  The
	 * rows with an operator character (element-wise) have always been
	 * left out of this check. */
	if (!op->code && out->shaped && count(out) < 0)
		out->shaped = false, out->n = -1;
	return true;
}

/* Whether a weight folded through input i of the node (operator op) is
 * still the weight: the data input of a view or copy (a Cast to a float
 * type); as any other input, or of any other operator, it is derived. */
static bool
passes_weight(Onnx *o, const OnnxOp *op, int i)
{
	if (!op || !(op->flags & OPF_VIEW) || (i > 0 && !(op->flags & OPF_VIEW_ALL)))
		return false;
	return op->kind != OP_CAST || is_float((int)attr_i(o->np, "to", 0));
}

/* A node whose inputs are all constants: folded. */
static bool
fold_node(Onnx *o, const OnnxOp *op, const Val **in, int nin)
{
	const Onnx__NodeProto *n = o->np;
	Val *v = newval(o);
	Src *src = NULL;
	const Onnx__AttributeProto *a;
	int errors = diag_errors();

	for (int i = 0; i < nin; i++)
		if (in[i])
			src = src_union(o, src, in[i]->src, !passes_weight(o, op, i));
	/* folding reports some errors (an index out of range) and goes on */
	if (!fold(o, op, in, nin, v) || diag_errors() > errors)
		return false;
	if (op && (op->flags & OPF_CONSTANT) && v->shaped && v->rank > 0 &&
	    (a = attr(n, "value")) && a->t && is_float(a->t->data_type)) {
		/* a trained tensor, as a float initializer is (some exporters
		 * write weights as Constant nodes); a scalar (an epsilon, a
		 * factor) is not */
		src = arena_alloc(o->a, sizeof *src);
		src->init = v;
		untrained(v);
	}
	v->src = src;
	map_put(&o->vals, arena_strdup(o->a, n->output[0]), v);
	for (size_t i = 1; i < n->n_output; i++)
		if (n->output[i] && *n->output[i]) {
			Val *w = newval(o);
			w->src = src;
			map_put(&o->vals, arena_strdup(o->a, n->output[i]), w);
		}
	return true;
}

/* The node listing `name` as an output (its *slot), -1 if none; only
 * looked for when an input is missing, to say why. */
static int
producer(const Onnx__GraphProto *gp, const char *name, size_t *slot)
{
	for (size_t i = 0; i < gp->n_node; i++)
		for (size_t k = 0; k < gp->node[i]->n_output; k++)
			if (gp->node[i]->output[k] && strcmp(gp->node[i]->output[k], name) == 0)
				return *slot = k, (int)i;
	return -1;
}

/* Says why the input `name` of the node has no value. */
static void
missing_input(Onnx *o, const Onnx__GraphProto *gp, const char *name)
{
	size_t slot = 0;
	int p = producer(gp, name, &slot);

	if (p < 0)
		NERR(o, "input '%s' is not produced by any node, nor a graph input or initializer",
		     name);
	else if (p >= o->node)
		NERR(o, "input '%s' is produced by node %d, which does not come before it "
			"(a cycle, or nodes out of topological order)", name, p);
	else
		NERR(o, "input '%s' is output %zu of node %d, which oraclec does not model", name,
		     slot + 1, p);
}

/* Checks the node o->np and its inputs, then lowers it when it reads an
 * activation, else folds it (or makes it a const layer that holds the
 * batch). */
static bool
node(Onnx *o, const Onnx__GraphProto *gp)
{
	const Onnx__NodeProto *n = o->np;
	const Val *in[MAX_NODE_INPUTS] = { 0 }, *act = NULL;
	const OnnxOp *op;
	int nin = 0;

	if (!n->op_type || !*n->op_type) {
		diag_error(floc(o), "node %d has no op_type", o->node);
		return false;
	}
	if (n->domain && *n->domain && strcmp(n->domain, "ai.onnx") != 0) {
		NERR(o, "operator domain '%s' is not supported", n->domain);
		return false;
	}
	if (n->n_output < 1 || !n->output[0] || !*n->output[0]) {
		bool any = false;
		for (size_t i = 1; i < n->n_output; i++)
			any |= n->output[i] && *n->output[i];
		/* only optional outputs, as recurrent layers may have */
		NERR(o, any ? "a node without its first output is not supported"
			    : "node has no output");
		return false;
	}
	for (size_t i = 0; i < n->n_attribute; i++)
		if (n->attribute[i]->g || n->attribute[i]->n_graphs) {
			NERR(o, "subgraphs (attribute '%s') are not supported",
			     n->attribute[i]->name ? n->attribute[i]->name : "");
			return false;
		}
	for (size_t i = 0; i < n->n_output; i++)
		if (n->output[i] && *n->output[i] && map_get(&o->vals, n->output[i])) {
			NERR(o, "output '%s' is already defined (duplicate name or cycle)",
			     n->output[i]);
			return false;
		}
	for (size_t i = 0; i < n->n_input; i++) {
		const Val *v;
		if (!n->input[i] || !*n->input[i])
			continue; /* an optional input left out */
		if (!(v = lookup(o, n->input[i]))) {
			missing_input(o, gp, n->input[i]);
			return false;
		}
		if (i >= NELEM(in)) {
			NERR(o, "more than %zu inputs are not supported", NELEM(in));
			return false;
		}
		in[i] = v, nin = (int)i + 1;
		if (v->act && !act)
			act = v;
	}
	op = onnx_op(n->op_type);
	/* Shape and Size read only an activation's shape: they fold */
	if (act && !(op && (op->flags & OPF_SHAPE_ONLY)))
		return lower_node(o, op, in, nin);
	if (!act && op && (op->flags & OPF_TO_BATCH)) {
		bool done = false;
		if (!onnx_batch_const(o, op->kind, in, nin, &done))
			return false;
		if (done)
			return true;
	}
	return fold_node(o, op, in, nin);
}

/* ---- the model ---------------------------------------------------------- */

/* The graph input that tensor t is, through views and casts; -1 if none. */
static int
input_behind(const Graph *g, int t)
{
	int p;

	while ((p = g->tensor[t].producer) >= 0) {
		const Layer *l = &g->layer[p];
		if (l->nin != 1 || !(op_info[l->op].cls == OPC_RESHAPE ||
				     op_info[l->op].cls == OPC_FLATTEN || l->op == OP_CAST ||
				     l->op == OP_IDENTITY))
			return -1;
		t = l->in[0];
	}
	return t;
}

/* The sequence: of the integer [batch, s] inputs, those whose values
 * index an embedding table (a Gather's indices: token ids, not an
 * attention mask), or the first of them when none does; its length s
 * the model's (Graph.seq_len). */
static void
sequence(Onnx *o)
{
	Graph *g = o->g;
	bool *ids = arena_array(o->a, g->ntensor ? g->ntensor : 1, sizeof *ids), any = false;

	for (int i = 0; i < g->nlayer; i++) {
		const Layer *l = &g->layer[i];
		int t;
		if (l->op == OP_GATHER && l->nin == 2 && (t = input_behind(g, l->in[1])) >= 0 &&
		    g->tensor[t].seq)
			ids[t] = any = true;
	}
	for (int i = 0; i < g->ninput; i++) {
		Tensor *t = &g->tensor[g->input[i]];
		if (any)
			t->seq = ids[g->input[i]];
		else if (t->seq && g->seq_len)
			t->seq = false;
		if (t->seq && !g->seq_len)
			g->seq_len = t->shape.d[0];
	}
}

/* The ai.onnx opset the model imports (1 when it says none). */
static int
opset_of(const Onnx__ModelProto *m)
{
	for (size_t i = 0; i < m->n_opset_import; i++) {
		const Onnx__OperatorSetIdProto *os = m->opset_import[i];
		if (!os->domain || !*os->domain || strcmp(os->domain, "ai.onnx") == 0)
			return (int)os->version;
	}
	return 1;
}

/* Marks the activations the graph outputs. */
static void
mark_outputs(Onnx *o, const Onnx__GraphProto *gp)
{
	for (size_t i = 0; i < gp->n_output; i++) {
		const Val *v = lookup(o, gp->output[i]->name);
		if (v && v->act && v->tensor >= 0)
			o->g->tensor[v->tensor].output = true;
	}
}

Graph *
onnx_walk(Onnx *o, const Onnx__ModelProto *m, const char *path, const Shape *override)
{
	const Onnx__GraphProto *gp = m->graph;
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	const char *dot = strrchr(base, '.');
	const char *name;

	/* NAME.onnx.gz is NAME */
	if (dot && dot != base && strcmp(dot, ".gz") == 0) {
		const char *d = dot;
		while (d > base && d[-1] != '.')
			d--;
		if (d > base + 1)
			dot = d - 1;
	}

	if (!gp) {
		diag_error(floc(o), "the model has no graph");
		return NULL;
	}
	/* exporters name graphs generically (torch_jit, main_graph): the
	 * file's name says more */
	name = arena_strndup(o->a, base, dot && dot != base ? (size_t)(dot - base) : strlen(base));
	o->g = graph_new(o->a, arena_strdup(o->a, name), path, "onnx");
	o->g->loc = floc(o);
	o->opset = opset_of(m);
	for (size_t i = 0; i < gp->n_value_info; i++) /* the first of a name counts */
		if (gp->value_info[i]->name && !map_get(&o->vinfo, gp->value_info[i]->name))
			map_put(&o->vinfo, gp->value_info[i]->name, gp->value_info[i]);
	if (!add_initializers(o, gp) || !add_inputs(o, gp, override))
		return NULL;
	for (size_t i = 0; i < gp->n_node; i++) {
		int errors = diag_errors();
		o->node = (int)i;
		o->np = gp->node[i];
		if (!node(o, gp)) {
			/* every failure must say why: a rule that gives up without
			 * a message is reported here rather than exiting silently */
			if (diag_errors() == errors)
				NERR(o, "this use of the operator is not supported");
			return NULL;
		}
	}
	mark_outputs(o, gp);
	sequence(o);
	onnx_note_renamed(o);
	onnx_note_merged(o);
	/* also when some BatchNormalization nodes remain: the exporter folds
	 * only those that follow a convolution (DenseNet keeps its BN-ReLU-conv
	 * ones) */
	o->g->bn_folded = o->folded > 0;
	o->g->batch = o->batch == BATCH ? 0 : o->batch;
	return o->g;
}
