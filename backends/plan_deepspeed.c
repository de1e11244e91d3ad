/* plan_deepspeed.c -- a ds_config.json: batch sizes, gradient
 * accumulation, precision; oraclec's own key "oraclec" holds the grid and,
 * for pipelines, PipelineModule's layer list and stage boundaries
 * (docs/plans.md: the script pops it before deepspeed.initialize). */
#include "backends/backends.h"
#include "backends/jsonout.h"

#include <jansson.h>

static json_t *
enabled(bool on)
{
	json_t *o = json_object();

	set(o, "enabled", json_boolean(on));
	return o;
}

static json_t *
topology_json(const Placement *pl)
{
	json_t *o = json_object(), *axes = json_array(), *dims = json_array();

	for (int d = 0; d < pl->ndim; d++) {
		GridDim g = pl->dim[d];
		json_array_append_new(axes, jstr(g == DIM_PIPELINE ? "pipe"
						 : g == DIM_DATA   ? "data"
								   : "model"));
		json_array_append_new(dims, json_integer(pl->k->grid[g]));
	}
	set(o, "axes", axes);
	set(o, "dims", dims);
	return o;
}

/* PipelineModule: the layer list (one entry per unit: the module's path
 * in the model, null for code of the model's own forward, such as
 * ResNet's torch.flatten, which the script gives as a callable) and its
 * parts. */
static json_t *
pipeline_json(const Placement *pl)
{
	json_t *o = json_object(), *parts = json_array(), *layers = json_array();

	set(o, "num_stages", json_integer(pl->nstage));
	for (int i = 0; i < pl->nstage; i++)
		json_array_append_new(parts, json_integer(pl->stage[i].ufirst));
	json_array_append_new(parts, json_integer(pl->mod.nunit));
	set(o, "parts", parts);
	for (int u = 0; u < pl->mod.nunit; u++)
		json_array_append_new(layers, pl->mod.unit[u].module ? jstr(pl->mod.unit[u].name)
								      : json_null());
	set(o, "layers", layers);
	set(o, "module_names", jstr(pl->mod.names));
	/* the ranks' order as the grid nests (outer to inner), in
	 * DeepSpeed's axis names, for PipelineModule(topology=
	 * ProcessTopology(axes, dims)); DeepSpeed's own
	 * PipeModelDataParallelTopology is ["pipe", "data", "model"]:
	 * pipeline-outer */
	set(o, "topology", topology_json(pl));
	return o;
}

bool
plan_deepspeed_emit(const Graph *g, const Analysis *an, const Placement *pl, FILE *f)
{
	const Candidate *k = pl->k;
	const char *other = plan_other(g, an, pl, PLAN_STATES_ZERO3 | PLAN_STATES_TF32);
	json_t *root = json_object(), *own = json_object(), *grid = json_object();

	set(root, "train_batch_size", json_integer(k->global_batch));
	set(root, "train_micro_batch_size_per_gpu", count(pl->micro_batch));
	set(root, "gradient_accumulation_steps", json_integer(pl->micro_batches));
	/* DeepSpeed's fp16 and bf16 keep fp32 master weights: amp */
	set(root, "fp16", enabled(an->q.set.prec == PREC_FP16 || an->q.set.prec == PREC_AMP_FP16));
	set(root, "bf16", enabled(an->q.set.prec == PREC_BF16 || an->q.set.prec == PREC_AMP_BF16));
	/* the optimizer modelled: DeepSpeed's own for Adam and AdamW (its
	 * "params" default to torch's); SGD, with or without momentum, and
	 * RMSprop have no DeepSpeed type and are the client optimizer
	 * deepspeed.initialize() is given (named under "oraclec") */
	if (an->q.set.opt == OPT_ADAM || an->q.set.opt == OPT_ADAMW) {
		json_t *opt = json_object();
		set(opt, "type", jstr(an->q.set.opt == OPT_ADAM ? "Adam" : "AdamW"));
		set(opt, "params", json_object());
		set(root, "optimizer", opt);
	}
	if (an->q.set.zero) {
		json_t *z = json_object();
		set(z, "stage", json_integer(an->q.set.zero));
		/* ZeRO++'s hierarchical partitioning: a copy of the parameters
		 * sharded inside each node, as FSDP hybrid */
		if (an->q.set.zero_node)
			set(z, "zero_hpz_partition_size", json_integer(an->q.sys->gpus_per_node));
		set(z, "overlap_comm", json_boolean(true));
		set(root, "zero_optimization", z);
	}
	if (pl->checkpoints) {
		json_t *ac = json_object();
		set(ac, "number_checkpoints", json_integer(pl->checkpoints));
		set(ac, "partition_activations", json_boolean(false));
		set(root, "activation_checkpointing", ac);
	}
	set(own, "other_configuration", other ? jstr(other) : json_null());
	set(own, "model", jstr(g->name));
	set(own, "strategy", jstr(strategy_name[k->kind]));
	for (int d = 0; d < pl->ndim; d++)
		set(grid, grid_dim_name[pl->dim[d]], json_integer(k->grid[pl->dim[d]]));
	set(own, "grid", grid);
	set(own, "checked_with", jstr("DeepSpeed's config documentation (keys and batch "
				      "arithmetic); not run: DeepSpeed is not packaged in Debian"));
	set(own, "world_size", json_integer(pl->gpus));
	/* DeepSpeed's config has no TF32 keys: the switches the prediction
	 * assumed, for the script to set (torch.backends.cudnn.allow_tf32,
	 * torch.backends.cuda.matmul.allow_tf32) */
	set(own, "cudnn_allow_tf32", json_boolean(pl->cudnn_tf32));
	set(own, "matmul_allow_tf32", json_boolean(pl->matmul_tf32));
	set(own, "implementation", jstr(pl->implementation));
	set(own, "data_parallel_size", json_integer(pl->replicas));
	set(own, "client_optimizer",
	    an->q.set.opt == OPT_MOMENTUM  ? jstr("torch.optim.SGD(momentum=0.9)")
	    : an->q.set.opt == OPT_SGD     ? jstr("torch.optim.SGD")
	    : an->q.set.opt == OPT_RMSPROP ? jstr("torch.optim.RMSprop(momentum=0.9)")
					   : json_null());
	set(own, "pipeline", pl->nstage ? pipeline_json(pl) : json_null());
	set(root, "oraclec", own);
	return plan_dump(root, f);
}
