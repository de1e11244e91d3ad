/* json.c -- the JSON report (its keys: oraclec(1), section OUTPUT).
 * Built with jansson, which escapes; names go through jstr() (jsonout.h),
 * so invalid UTF-8 cannot lose a key.  Keys keep insertion order. */
#include "backends/backends.h"
#include "backends/jsonout.h"
#include "ir/kernels.h"

#include <jansson.h>

static json_t *
shape_json(const Shape *s)
{
	json_t *a = json_array();

	for (int i = 0; i < s->rank; i++)
		json_array_append_new(a, json_integer(s->d[i]));
	return a;
}

/* The measured times used (present only when the model has some). */
static json_t *
profile_json(const Graph *g, Precision p)
{
	json_t *o = json_object(), *ts = json_array();
	int timed = 0;
	double sum = 0;

	for (int i = 0; i < g->nlayer; i++)
		if (g->layer[i].timed)
			timed++,
			sum += layer_measured(g, i, p, false) + layer_measured(g, i, p, true);
	set(o, "timed_layers", json_integer(timed));
	set(o, "seconds_per_sample", json_real(sum));
	for (int i = 0; i < g->ntiming; i++) {
		const Timing *t = &g->timing[i];
		json_t *e = json_object();
		set(e, "file", jstr(t->loc.file));
		set(e, "line", json_integer(t->loc.line));
		set(e, "first", jstr(g->layer[t->first].name));
		set(e, "last", jstr(g->layer[t->last].name));
		set(e, "layers", json_integer(t->last - t->first + 1));
		set(e, "forward_s", json_real(t->fwd));
		set(e, "backward_s", json_real(t->bwd));
		set(e, "split_measured", json_boolean(t->split));
		json_array_append_new(ts, e);
	}
	set(o, "timings", ts);
	if (g->trace) /* --profile TRACE: its modules' times (ir/trace.h) */
		set(o, "trace", jstr(g->trace->file));
	return o;
}

/* A sequence model: its length and, for a transformer, its dimensions as
 * Megatron-LM names them and the standard count of its FLOPs, the
 * formula named (docs/model.md, "Transformers"). */
static json_t *
transformer_json(const Graph *g, const Analysis *an)
{
	const Transformer *t = &an->tf;
	json_t *o = json_object();
	int redo = an->rc.k == RECOMPUTE_SELECTIVE ? 2 : an->rc.k ? 1 : 0;
	static const char *const hw[3] = {
		"as flops_formula (no recomputation)",
		"Narayanan et al. 2021, eq. 3: 96 s l h^2 (1 + s/6h + V/16lh), every layer's "
		"forward again",
		"flops_formula + 4 s^2 l a d: the attention cores' forward again (selective "
		"recomputation, Korthikanti et al. 2022)",
	};

	set(o, "seq_len", json_integer(g->seq_len));
	if (!t->layers)
		return o;
	set(o, "layers", json_integer(t->layers));
	set(o, "hidden", json_integer(t->hidden));
	set(o, "heads", json_integer(t->heads));
	set(o, "head_dim", json_integer(t->head_dim));
	set(o, "kv_groups", json_integer(t->kv_groups));
	set(o, "ffn", json_integer(t->ffn));
	set(o, "vocab", t->vocab ? json_integer(t->vocab) : json_null());
	set(o, "max_positions", json_integer(t->positions));
	set(o, "norm", jstr(t->rmsnorm ? "rmsnorm" : "layernorm"));
	set(o, "swiglu", json_boolean(t->swiglu));
	set(o, "positions", jstr(t->rope ? "rope" : t->learned ? "learned" : "none"));
	set(o, "tied", t->output < 0 ? json_null() : json_boolean(!t->untied));
	set(o, "flops_per_sample", json_real(an->tf_flops[0]));
	set(o, "flops_formula",
	    jstr("Narayanan et al. 2021, eq. 3 without recomputation: 72 s l h^2 (1 + s/6h + "
		 "V/12lh), as Megatron-LM counts it: 12 s l h^2 ((1 + g/a + s/h) a d/h + "
		 "ffn/h (x 3/2 gated) + V/2lh)"));
	set(o, "hardware_flops_per_sample", json_real(an->tf_flops[1]));
	set(o, "hardware_flops_formula", jstr(hw[redo]));
	return o;
}

static json_t *
model_json(const Graph *g, const Analysis *an)
{
	const Totals *t = &g->total;
	const ModelBytes *b = &an->bytes;
	json_t *m = json_object(), *ins = json_array(), *unk = json_array();

	set(m, "name", jstr(g->name));
	set(m, "source", jstr(g->source));
	set(m, "format", jstr(g->format));
	for (int i = 0; i < g->ninput; i++) {
		const Tensor *in = &g->tensor[g->input[i]];
		json_t *o = json_object();
		set(o, "name", jstr(in->name));
		set(o, "shape", shape_json(&in->shape));
		json_array_append_new(ins, o);
	}
	set(m, "inputs", ins);
	set(m, "layers", json_integer(g->nlayer));
	set(m, "params", json_integer(t->params));
	set(m, "buffers", json_integer(t->buffers));
	set(m, "buffer_bytes", json_integer(b->buffers));
	set(m, "macs_fwd_per_sample", json_integer(t->macs));
	set(m, "flops_fwd_per_sample", json_integer(t->flops_fwd));
	set(m, "flops_bwd_data_per_sample", json_integer(t->flops_bwd_data));
	set(m, "flops_bwd_weight_per_sample", json_integer(t->flops_bwd_weight));
	set(m, "flops_bwd_per_sample", json_integer(t->flops_bwd));
	set(m, "activation_bytes_per_sample", json_integer(b->act));
	set(m, "saved_bytes_per_sample", json_integer(b->saved));
	set(m, "saved_fixed_bytes", json_integer(b->saved_fixed));
	set(m, "saved_amp_bytes_per_sample", b->low ? json_integer(b->saved_low) : json_null());
	set(m, "autocast_weight_bytes", json_integer(b->cast_weights));
	set(m, "weight_bytes", json_integer(b->weights));
	set(m, "bytes_per_item", json_integer(b->item));
	set(m, "dataset_size", g->dataset_size ? json_integer(g->dataset_size) : json_null());
	set(m, "file_batch", g->batch ? json_integer(g->batch) : json_null());
	set(m, "bn_folded", json_boolean(g->bn_folded));
	set(m, "training_graph", json_boolean(g->bn_restored > 0));
	/* initializers of equal elements several modules read: the
	 * exporter's merges, counted once per module */
	set(m, "merged_initializers", json_integer(g->merged_inits));
	set(m, "merged_params", json_integer(g->merged_params));
	for (int i = 0; i < g->nunknown; i++) {
		json_t *u = json_object();
		set(u, "op", jstr(g->unknown[i].op));
		set(u, "count", json_integer(g->unknown[i].count));
		json_array_append_new(unk, u);
	}
	set(m, "unknown_ops", unk);
	if (g->seq_len)
		set(m, "transformer", transformer_json(g, an));
	if (g->ntiming || g->trace)
		set(m, "profile", profile_json(g, an->q.set.prec));
	return m;
}

/* A layer's kernel key (ir/kernelkey.c; docs/kernel-table.md): the row of
 * a kernel table that prices it, null where it has none. */
static json_t *
kernel_json(const Graph *g, int i, Precision prec, bool channels_last)
{
	KernelKey k;
	int64_t per_sample;
	char text[KEY_TEXT];
	json_t *o;

	if (!kernel_key(g, i, prec, channels_last, &k, &per_sample))
		return json_null();
	kernel_key_text(&k, text, sizeof text);
	o = json_object();
	set(o, "class", jstr(kernel_class_name(k.cls)));
	set(o, "precision", jstr(kernel_dtype_name(k.dt)));
	set(o, "layout", jstr(kernel_layout_name(k.layout)));
	set(o, "shape", jstr(text));
	set(o, "per_sample", json_integer(per_sample));
	return o;
}

static json_t *
layer_json(const Graph *g, const Analysis *an, int i)
{
	const Layer *l = &g->layer[i];
	const LayerBytes *b = &an->layer_bytes[i];
	const LayerTime *t = &an->layer_times[i];
	Precision p = an->q.set.prec;
	json_t *o = json_object(), *ins = json_array(), *ws = json_array();

	set(o, "name", jstr(l->name));
	set(o, "op", jstr(op_name(l->op)));
	for (int i = 0; i < l->nin; i++)
		json_array_append_new(ins, jstr(g->tensor[l->in[i]].name));
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
	set(o, "activation_bytes", json_integer(b->act));
	set(o, "bytes_fwd", json_integer(b->fwd));
	set(o, "bytes_bwd", json_integer(b->bwd));
	set(o, "time_s", json_real(t->time_s));
	set(o, "time_source", jstr(time_source_name[t->src]));
	if (g->ntiming || g->trace) {
		set(o, "measured_fwd_s",
		    l->timed ? json_real(layer_measured(g, i, p, false)) : json_null());
		set(o, "measured_bwd_s",
		    l->timed ? json_real(layer_measured(g, i, p, true)) : json_null());
		set(o, "predicted_s",
		    t->src == TS_PROFILE ? json_real(t->predicted_s) : json_null());
		set(o, "predicted_source", t->src == TS_PROFILE
						   ? jstr(time_source_name[t->predicted_src])
						   : json_null());
	}
	set(o, "kernel", kernel_json(g, i, p, an->q.set.channels_last));
	return o;
}

/* A byte count: an integer while it is one exactly (below 2^53), else a
 * real, never an out-of-range conversion. */
static json_t *
bytes_json(double v)
{
	if (v >= 0 && v < 9007199254740992.0)
		return json_integer((json_int_t)v);
	return json_real(v);
}

/* Key k of the struct at base as a JSON value. */
static json_t *
key_json(const SysKey *k, const void *base)
{
	const char *p = (const char *)base + k->off;

	switch (k->type) {
	case SK_REAL:
		return k->unit == U_BYTES ? bytes_json(*(const double *)p)
					  : json_real(*(const double *)p);
	case SK_INT: return json_integer(*(const int *)p);
	case SK_INT64: return json_integer(*(const int64_t *)p);
	case SK_BOOL: return json_boolean(*(const bool *)p);
	case SK_STRING: return jstr(*(const char *const *)p);
	}
	return json_null();
}

/* The system: the keys of ir/syskeys.def that have a JSON name, in its
 * order, the GPU's in their own object, then the levels. */
static json_t *
system_json(const System *s)
{
	json_t *o = json_object(), *gpu = NULL, *lv = json_array();

	set(o, "name", jstr(s->name));
	set(o, "source", jstr(s->source));
	for (int i = 0; i < NSYS_KEYS; i++) {
		const SysKey *k = &sys_keys[i];
		if (!k->json)
			continue;
		if (k->group == SJ_GPU && !gpu)
			set(o, "gpu", gpu = json_object());
		set(k->group == SJ_GPU ? gpu : o, k->json, key_json(k, s));
	}
	for (int i = 0; i < s->nlevels; i++) {
		json_t *l = json_object();
		set(l, "name", jstr(s->level[i].name));
		for (int k = 0; k < NLEVEL_KEYS; k++)
			if (level_keys[k].json)
				set(l, level_keys[k].json, key_json(&level_keys[k], &s->level[i]));
		json_array_append_new(lv, l);
	}
	set(o, "levels", lv);
	return o;
}

/* The implementation: its name, source and keys (ir/implkeys.def). */
static json_t *
implementation_json(const Implementation *im)
{
	json_t *o = json_object();

	set(o, "name", jstr(im->name));
	set(o, "source", jstr(im->source));
	for (int i = 0; i < NIMPL_KEYS; i++)
		set(o, impl_keys[i].json, key_json(&impl_keys[i], im));
	return o;
}

/* --per-layer: per_layer [{ layer, split: { DIM: N } }] as cli.md names
 * it, and per_layer_summary with the time and the uniform ones. */
static void
per_layer_json(json_t *root, const Graph *g, const Analysis *an)
{
	static const GridDim dim[PL_MODES] = { DIM_DATA, DIM_FILTER, DIM_CHANNEL, DIM_SPATIAL };
	const PerLayer *pl = an->per_layer;
	json_t *a = json_array(), *sum = json_object(), *uni = json_object();

	for (int i = 0; i < g->nlayer; i++) {
		json_t *e = json_object(), *split = json_object();
		set(e, "layer", jstr(g->layer[i].name));
		int64_t d = pl->degree[i];
		if (an->q.set.gpus / d > 1) /* the groups that share the samples */
			set(split, grid_dim_name[DIM_DATA], json_integer(an->q.set.gpus / d));
		if (pl->mode[i] != PL_DATA)
			set(split, grid_dim_name[dim[pl->mode[i]]], json_integer(d));
		set(e, "split", split);
		json_array_append_new(a, e);
	}
	set(root, "per_layer", a);
	set(sum, "blocks", json_integer(pl->nblocks));
	set(sum, "choices_per_layer", json_integer(pl->nstates));
	set(sum, "blocks_not_series_parallel", json_integer(pl->nwhole));
	set(sum, "global_batch", json_integer((json_int_t)pl->global_batch));
	set(sum, "iteration_s", json_real(pl->time));
	set(sum, "memory_per_gpu_bytes", bytes_json(pl->memory));
	set(sum, "fits", json_boolean(pl->fits));
	set(sum, "memory_limited", json_boolean(pl->limited));
	set(sum, "epoch_s", json_real(pl->epoch));
	set(sum, "recommended", json_boolean(pl->recommended));
	for (int m = 0; m < PL_MODES; m++)
		set(uni, per_layer_mode_name[m],
		    isfinite(pl->uniform[m]) ? json_real(pl->uniform[m]) : json_null());
	set(sum, "uniform_iteration_s", uni);
	set(root, "per_layer_summary", sum);
}

static json_t *
num(bool ok, double v)
{
	return ok ? json_real(v) : json_null();
}

/* --search: { evaluated, pruned, top: [configuration, ...] }; the
 * elapsed time is left out (the report is deterministic; -v says it). */
static json_t *
search_json(const Search *s)
{
	json_t *o = json_object(), *top = json_array();
	char b[32];

	set(o, "evaluated", json_integer(s->evaluated));
	set(o, "pruned", json_integer(s->pruned));
	set(o, "complete", json_boolean(!s->stopped));
	/* the first is the recommended configuration: the fastest, or the
	 * simplest within 3 % of it, and why */
	set(o, "simpler", s->simpler[0] ? jstr(s->simpler) : json_null());
	for (int i = 0; i < s->ntop; i++) {
		const SearchConfig *c = &s->top[i];
		json_t *e = json_object(), *grid = json_object();
		set(e, "strategy", jstr(strategy_name[c->kind]));
		for (int d = 0; d < DIM_COUNT; d++)
			if (c->grid[d])
				set(grid, grid_dim_name[d], json_integer(c->grid[d]));
		set(e, "grid", grid);
		set(e, "nesting", jstr(nesting_name[c->nest]));
		set(e, "schedule", !STRATEGY_PIPELINED(c->kind)
					   ? json_null()
					   : jstr(schedule_label(c->schedule, c->virtual_stages, b,
								 sizeof b)));
		set(e, "micro_batches", c->micro_batches ? json_integer(c->micro_batches)
							 : json_null());
		set(e, "precision", jstr(precision_name(c->prec)));
		set(e, "zero", json_integer(c->zero));
		set(e, "fsdp", c->zero < 3 ? json_null() : jstr(c->zero_node ? "hybrid" : "full"));
		set(e, "recompute", jstr(recompute_label(c->recompute, b, sizeof b)));
		if (c->grid[DIM_TENSOR] > 1) /* Megatron's, only beside a tensor split */
			set(e, "sequence_parallel", json_boolean(c->sequence_parallel));
		set(e, "iteration_s", json_real(c->iteration));
		set(e, "epoch_s", json_real(c->epoch));
		set(e, "throughput_samples_per_s", json_real(c->throughput));
		set(e, "mfu", json_real(c->mfu));
		set(e, "mfu_peak_flops", num(c->mfu_peak > 0, c->mfu_peak));
		set(e, "memory_per_gpu_bytes", bytes_json(c->memory));
		set(e, "feasible", json_boolean(c->feasible));
		set(e, "reason", i && c->why[0] ? jstr(c->why) : json_null());
		json_array_append_new(top, e);
	}
	set(o, "top", top);
	return o;
}

/* The run's one answer (Analysis.decision): the configuration the text's
 * recommendation line, best, the ranks, the HTML and --plan name; null
 * when nothing is recommended.  The per-layer splits: strategy
 * "per-layer" (over a mesh of all the GPUs: no grid; per_layer has each
 * module's split), the rest of the configuration the run's. */
static json_t *
recommendation_json(const Analysis *an)
{
	static const char *const from[] = { [DECIDED_RANKING] = "ranking",
					    [DECIDED_SEARCH] = "search",
					    [DECIDED_PER_LAYER] = "per-layer" };
	const Decision *d = &an->decision;
	const SearchConfig *c = &d->c;
	const PerLayer *pl = an->per_layer;
	bool split = d->from == DECIDED_PER_LAYER;
	json_t *o, *grid;
	char b[32];

	if (d->from == DECIDED_NONE)
		return json_null();
	o = json_object();
	grid = split ? NULL : json_object();
	set(o, "from", jstr(from[d->from]));
	set(o, "strategy", jstr(split ? "per-layer" : strategy_name[c->kind]));
	for (int i = 0; grid && i < DIM_COUNT; i++)
		if (c->grid[i])
			set(grid, grid_dim_name[i], json_integer(c->grid[i]));
	set(o, "grid", grid ? grid : json_null());
	set(o, "nesting", split ? json_null() : jstr(nesting_name[c->nest]));
	set(o, "schedule",
	    split || !STRATEGY_PIPELINED(c->kind)
		    ? json_null()
		    : jstr(schedule_label(c->schedule, c->virtual_stages, b, sizeof b)));
	set(o, "precision", jstr(precision_name(split ? an->q.set.prec : c->prec)));
	set(o, "zero", json_integer(split ? an->q.set.zero : c->zero));
	set(o, "fsdp",
	    (split ? an->q.set.zero : c->zero) < 3
		    ? json_null()
		    : jstr((split ? an->q.set.zero_node : c->zero_node) ? "hybrid" : "full"));
	set(o, "recompute", jstr(recompute_label(split ? an->rc.k : c->recompute, b, sizeof b)));
	if (!split && c->grid[DIM_TENSOR] > 1)
		set(o, "sequence_parallel", json_boolean(c->sequence_parallel));
	set(o, "iteration_s", json_real(split ? pl->time : c->iteration));
	set(o, "epoch_s", json_real(split ? pl->epoch : c->epoch));
	set(o, "memory_per_gpu_bytes", bytes_json(split ? pl->memory : c->memory));
	return o;
}

/* The advice pass's warnings: [{ "code", "message" }]. */
static json_t *
warnings_json(const Analysis *an)
{
	json_t *a = json_array();

	for (int i = 0; i < an->nwarning; i++) {
		json_t *w = json_object();
		set(w, "code", jstr(an->warning[i].code));
		set(w, "message", jstr(an->warning[i].message));
		json_array_append_new(a, w);
	}
	return a;
}

/* Why the recommendation is what it is, besides the warnings: why none,
 * or why not the fastest (the text's "note:" lines). */
static json_t *
notes_json(const Analysis *an)
{
	json_t *a = json_array();

	if (an->why_none[0])
		json_array_append_new(a, jstr(an->why_none));
	for (int i = 0; i < an->nnote; i++)
		json_array_append_new(a, jstr(an->note[i]));
	return a;
}

static json_t *
strategy_json(const Graph *g, const Analysis *an, const Candidate *k)
{
	json_t *o = json_object(), *grid = json_object(), *it = json_object();
	bool c = k->computable;
	char label[32];

	set(o, "name", jstr(strategy_name[k->kind]));
	/* 1 = recommended; the array keeps the table's order */
	set(o, "rank", json_integer(k->rank));
	for (int d = 0; d < DIM_COUNT; d++)
		if (k->grid[d])
			set(grid, grid_dim_name[d], json_integer(k->grid[d]));
	set(o, "grid", grid);
	set(o, "nesting", jstr(nesting_name[k->nest]));
	set(o, "feasible", json_boolean(k->feasible));
	/* false where the implementation does not run the strategy */
	set(o, "supported", json_boolean(!k->not_run));
	set(o, "reason", k->reason ? jstr(k->reason) : json_null());
	set(o, "implementation", jstr(an->q.impl.name));
	set(o, "zero", json_integer(an->q.set.zero));
	set(o, "fsdp",
	    an->q.set.zero < 3 ? json_null() : jstr(an->q.set.zero_node ? "hybrid" : "full"));
	set(o, "recompute", jstr(recompute_label(an->rc.k, label, sizeof label)));
	set(it, "compute_s", num(c, k->t.compute));
	set(it, "communication_s", num(c, k->t.communication));
	set(it, "gradient_allreduce_s", num(c, k->t.grad));
	set(it, "reducer_s", num(c, k->t.reducer));
	set(it, "layer_collectives_s", num(c, k->t.layer));
	set(it, "p2p_s", num(c, k->t.p2p));
	if (k->grid[DIM_CONTEXT] > 1) /* ring attention's exposed sends, part of p2p */
		set(it, "context_ring_s", num(c, k->t.ring));
	set(it, "bubble_s", num(c, k->t.bubble));
	set(it, "weight_update_s", num(c, k->t.update));
	set(it, "input_s", num(c, k->t.input));
	set(it, "input_copies_s", num(c, k->t.feed));
	set(it, "recompute_s", num(c, k->t.recompute));
	set(it, "dispatch_s", num(c, k->t.dispatch));
	set(it, "sync_bn_s", num(c, k->t.sync_bn));
	set(it, "skew_s", num(c, k->t.skew));
	set(it, "host_s", num(c, k->t.host));
	set(it, "exposed_communication_s", num(c, k->t.communication));
	set(it, "overlapped_communication_s", num(c, k->t.grad_hidden));
	set(it, "total_s", num(c, k->t.total));
	set(o, "iteration", it);
	set(o, "epoch_s", num(c, k->epoch));
	set(o, "throughput_samples_per_s", num(c, k->throughput));
	if (g->seq_len)
		set(o, "throughput_tokens_per_s", num(c, k->tokens));
	set(o, "mfu", num(c, k->mfu));
	/* what mfu divides by: the per-GPU dense peak of the formats the
	 * model's products run in (matmul_peak) */
	set(o, "mfu_peak_flops", num(k->mfu_peak > 0, k->mfu_peak));
	if (g->seq_len && an->tf.layers)
		set(o, "mfu_standard", num(c, k->mfu_std));
	set(o, "memory_per_gpu_bytes", c ? bytes_json(k->mem.total) : json_null());
	set(o, "memory", memuse_json(&k->mem, c));
	set(o, "global_batch", json_integer(k->global_batch));
	set(o, "samples_per_gpu", num(c, k->per_gpu_batch));
	set(o, "max_gpus", json_integer(k->max_gpus));
	if (an->max_batch) {
		set(o, "max_batch_per_gpu", json_integer(k->max_batch));
		set(o, "max_batch_reason", k->max_batch_why ? jstr(k->max_batch_why) : json_null());
	}
	set(o, "bottleneck", k->bottleneck ? jstr(k->bottleneck) : json_null());
	if (STRATEGY_PIPELINED(k->kind) && c) {
		json_t *st = json_array();
		for (int i = 0, first = 0; i < k->stages; first = k->stage_end[i] + 1, i++) {
			json_t *s = json_object();
			set(s, "first", jstr(g->layer[first].name));
			set(s, "last", jstr(g->layer[k->stage_end[i]].name));
			json_array_append_new(st, s);
		}
		set(o, "micro_batches", json_integer(k->micro_batches));
		set(o, "schedule",
		    jstr(schedule_label(an->q.set.schedule, an->q.set.virtual_stages, label,
					sizeof label)));
		set(o, "stages", st);
	}
	if (!STRATEGY_PIPELINED(k->kind) && c && k->micro_batches > 1) /* accumulation */
		set(o, "micro_batches", json_integer(k->micro_batches));
	if (k->split >= 0 && c)
		set(o, "split_after", jstr(g->layer[k->split].name));
	return o;
}

static json_t *
strategies_json(const Graph *g, const Analysis *an)
{
	json_t *st = json_array();

	for (int k = 0; k < STRAT_COUNT; k++)
		if (an->cand[k].analysed)
			json_array_append_new(st, strategy_json(g, an, &an->cand[k]));
	return st;
}

bool
json_emit(const Graph *g, const Analysis *an, const ReportOpts *o, FILE *f)
{
	json_t *root = json_object(), *batch = json_object();
	int rc;

	set(root, "model", model_json(g, an));
	set(root, "system", system_json(an->q.sys));
	set(root, "implementation", implementation_json(&an->q.impl));
	set(root, "gpus", json_integer(an->q.set.gpus));
	set(root, "precision", jstr(precision_name(an->q.set.prec)));
	set(root, "optimizer", jstr(optimizer_name(an->q.set.opt)));
	set(root, "warnings", warnings_json(an));
	set(root, "notes", notes_json(an));
	set(batch, "per_gpu",
	    an->q.set.batch_per_gpu ? json_integer(an->q.set.batch_per_gpu) : json_null());
	set(batch, "global",
	    an->q.set.global_batch ? json_integer(an->q.set.global_batch) : json_null());
	set(batch, "dataset_size", json_integer(an->q.set.dataset_size));
	set(batch, "sample_bytes", json_real(an->q.set.sample_bytes));
	set(root, "batch", batch);
	set(root, "strategies", strategies_json(g, an));
	set(root, "best", an->best >= 0 ? jstr(strategy_name[an->best]) : json_null());
	set(root, "recommendation", recommendation_json(an));
	if (an->search)
		set(root, "search", search_json(an->search));
	if (an->per_layer && an->per_layer->done)
		per_layer_json(root, g, an);
	if (an->nsweep) {
		json_t *sw = json_array();
		for (int i = 0; i < an->nsweep; i++) {
			const Analysis *s = &an->sweep[i];
			json_t *e = json_object();
			set(e, "gpus", json_integer(s->q.set.gpus));
			set(e, "strategies", strategies_json(g, s));
			set(e, "best", s->best >= 0 ? jstr(strategy_name[s->best])
						    : json_null());
			set(e, "per_gpu_vs_node", s->node_scaling > 0 ? json_real(s->node_scaling)
								     : json_null());
			json_array_append_new(sw, e);
		}
		set(root, "sweep", sw);
	}
	if (o->layers) {
		json_t *ls = json_array();
		for (int i = 0; i < g->nlayer; i++)
			json_array_append_new(ls, layer_json(g, an, i));
		set(root, "layers", ls);
	}
	rc = json_dumpf(root, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
	json_decref(root);
	fputc('\n', f);
	return rc == 0 && !ferror(f);
}
