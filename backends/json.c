/* json.c -- the JSON report (keys in ../docs/cli.md and oraclec(1)).
 * Built with jansson, which does all escaping; keys keep insertion order. */
#include "backends/backends.h"

#include <jansson.h>

static json_t *
shape_json(const Shape *s)
{
	json_t *a = json_array();

	for (int i = 0; i < s->rank; i++)
		json_array_append_new(a, json_integer(s->d[i]));
	return a;
}

static void
set(json_t *o, const char *key, json_t *v)
{
	json_object_set_new(o, key, v);
}

static json_t *
model_json(const Graph *g)
{
	const Totals *t = &g->total;
	json_t *m = json_object(), *ins = json_array(), *unk = json_array();

	set(m, "name", json_string(g->name));
	set(m, "source", json_string(g->source));
	set(m, "format", json_string(g->format));
	for (int i = 0; i < g->ninput; i++) {
		const Tensor *in = &g->tensor[g->input[i]];
		json_t *o = json_object();
		set(o, "name", json_string(in->name));
		set(o, "shape", shape_json(&in->shape));
		json_array_append_new(ins, o);
	}
	set(m, "inputs", ins);
	set(m, "layers", json_integer(g->nlayer));
	set(m, "params", json_integer(t->params));
	set(m, "buffers", json_integer(t->buffers));
	set(m, "macs_fwd_per_sample", json_integer(t->macs));
	set(m, "flops_fwd_per_sample", json_integer(t->flops_fwd));
	set(m, "flops_bwd_data_per_sample", json_integer(t->flops_bwd_data));
	set(m, "flops_bwd_weight_per_sample", json_integer(t->flops_bwd_weight));
	set(m, "flops_bwd_per_sample", json_integer(t->flops_bwd));
	set(m, "activation_bytes_per_sample", json_integer(t->act_bytes));
	set(m, "weight_bytes", json_integer(t->weight_bytes));
	set(m, "bytes_per_item", json_integer(g->elem_bytes));
	set(m, "dataset_size", g->dataset_size ? json_integer(g->dataset_size) : json_null());
	set(m, "file_batch", g->batch ? json_integer(g->batch) : json_null());
	set(m, "bn_folded", json_boolean(g->bn_folded));
	for (int i = 0; i < g->nunknown; i++) {
		json_t *u = json_object();
		set(u, "op", json_string(g->unknown[i].op));
		set(u, "count", json_integer(g->unknown[i].count));
		json_array_append_new(unk, u);
	}
	set(m, "unknown_ops", unk);
	return m;
}

static json_t *
layer_json(const Graph *g, const Layer *l)
{
	json_t *o = json_object(), *ins = json_array(), *ws = json_array();

	set(o, "name", json_string(l->name));
	set(o, "op", json_string(op_name(l->op)));
	for (int i = 0; i < l->nin; i++)
		json_array_append_new(ins, json_string(g->tensor[l->in[i]].name));
	set(o, "inputs", ins);
	set(o, "input", shape_json(&g->tensor[l->in[0]].shape));
	set(o, "output", shape_json(&g->tensor[l->out[0]].shape));
	for (int i = 0; i < l->nw; i++)
		json_array_append_new(ws, shape_json(&l->w[i].shape));
	set(o, "weights", ws);
	set(o, "params", json_integer(l->cost.params));
	set(o, "macs_fwd", json_integer(l->cost.macs));
	set(o, "flops_fwd", json_integer(l->cost.flops_fwd));
	set(o, "flops_bwd", json_integer(l->cost.flops_bwd));
	set(o, "flops_bwd_data", json_integer(l->cost.flops_bwd_data));
	set(o, "flops_bwd_weight", json_integer(l->cost.flops_bwd_weight));
	set(o, "activation_bytes", json_integer(l->cost.act_bytes));
	return o;
}

bool
json_emit(const Graph *g, const ReportOpts *o, FILE *f)
{
	json_t *root = json_object();
	int rc;

	set(root, "model", model_json(g));
	if (o->layers) {
		json_t *ls = json_array();
		for (int i = 0; i < g->nlayer; i++)
			json_array_append_new(ls, layer_json(g, &g->layer[i]));
		set(root, "layers", ls);
	}
	rc = json_dumpf(root, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
	json_decref(root);
	fputc('\n', f);
	return rc == 0 && !ferror(f);
}
