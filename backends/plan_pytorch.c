/* plan_pytorch.c -- what a torch.distributed training script needs: the
 * DeviceMesh, and for pipelines torch.distributed.pipelining's split
 * points, the modules of each stage and the schedule (docs/plans.md). */
#include "backends/backends.h"
#include "backends/jsonout.h"

#include <jansson.h>

/* What each mesh dimension does, in PyTorch's terms. */
static const char *const use[DIM_COUNT] = {
	[DIM_DATA] = "replicas: DistributedDataParallel (or fully_shard) over this dimension",
	[DIM_SPATIAL] = "activations Shard(2) (height) up to split_after, halos exchanged "
			"with the neighbours; data parallel after it",
	[DIM_PIPELINE] = "torch.distributed.pipelining: one stage per rank",
	[DIM_FILTER] = "conv and linear weights Shard(0) (output channels; ColwiseParallel "
		       "for nn.Linear), outputs all-gathered",
	[DIM_CHANNEL] = "conv and linear weights Shard(1) (input channels; RowwiseParallel "
			"for nn.Linear), outputs all-reduced",
	[DIM_TENSOR] = "Megatron's pairs: ColwiseParallel on Q, K, V and the MLP's first "
		       "linear, RowwiseParallel on the projection and its second (heads "
		       "split; one all-reduce a pair each way)",
	[DIM_CONTEXT] = "the sequence split over this dimension, ring attention passing K "
			"and V (torch.distributed.tensor.experimental.context_parallel, "
			"PyTorch 2.4 and later); weights replicated, gradients reduced with "
			"the data dimension's",
};

/* torch.distributed.pipelining's schedule classes */
static const char *const schedule_class[SCHED_COUNT] = {
	[SCHED_GPIPE] = "ScheduleGPipe", [SCHED_1F1B] = "Schedule1F1B",
	[SCHED_INTERLEAVED] = "ScheduleInterleaved1F1B",
};

static json_t *
pipeline_json(const Analysis *an, const Placement *pl)
{
	json_t *o = json_object(), *split = json_object(), *stages = json_array();

	set(o, "schedule", jstr(schedule_class[an->q.set.schedule]));
	if (an->q.set.schedule == SCHED_INTERLEAVED)
		set(o, "stages_per_rank", json_integer(an->q.set.virtual_stages));
	set(o, "n_microbatches", json_integer(pl->micro_batches));
	/* torchgpipe's Pipe(checkpoint=...): the micro-batches whose stage
	 * forward runs again in backward */
	set(o, "checkpoint", jstr((const char *[]){ "never", "except_last",
						    "always" }[pl->checkpoint]));
	set(o, "microbatch_size", count(pl->micro_batch));
	for (int i = 1; i < pl->nstage; i++)
		set(split, pl->mod.unit[pl->stage[i].ufirst].name, jstr("BEGINNING"));
	set(o, "split_spec", split);
	for (int i = 0; i < pl->nstage; i++) {
		json_t *mods = json_array();
		for (int m = 0; m < pl->stage[i].nmodules; m++)
			json_array_append_new(mods, jstr(pl->stage[i].modules[m]));
		json_array_append_new(stages, mods);
	}
	set(o, "module_names_per_stage", stages);
	return o;
}

bool
plan_pytorch_emit(const Graph *g, const Analysis *an, const Placement *pl, FILE *f)
{
	const Candidate *k = pl->k;
	const char *other = plan_other(g, an, pl, PLAN_STATES_PER_LAYER | PLAN_STATES_ZERO3 |
					       PLAN_STATES_TF32);
	json_t *root = json_object(), *mesh = json_object(), *shape = json_array();
	json_t *names = json_array(), *dims = json_object(), *batch = json_object();

	set(root, "plan", jstr("pytorch"));
	/* a plan of another configuration than the run's recommendation says
	 * why (null: it is the recommendation's) */
	set(root, "other_configuration", other ? jstr(other) : json_null());
	set(root, "model", jstr(g->name));
	set(root, "strategy", jstr(strategy_name[k->kind]));
	set(root, "world_size", json_integer(pl->gpus));
	set(root, "nnodes", json_integer(pl->nodes));
	set(root, "nproc_per_node", json_integer(pl->per_node));
	/* a probed CPU (the system's host_device) runs the plan on the CPU */
	set(mesh, "device_type", jstr(an->q.sys->host_device ? "cpu" : "cuda"));
	/* Every dimension the strategy names is in the mesh, a size-1 one
	 * too: the cost model leaves data=1 out of the grid (dp on
	 * data=1,pipeline=2 is priced as pipeline=2), but a script that
	 * follows the plan takes mesh["data"] for a dp plan, and
	 * init_device_mesh takes a dimension of size 1.  Such a dimension
	 * changes no rank's number, so it goes outermost, where model-inner
	 * nesting puts data. */
	for (int d = 0; d < DIM_COUNT; d++) {
		GridDim g = grid_order[d];
		if ((strategy_info[k->kind].dims & DIM_BIT(g)) && k->grid[g] <= 0) {
			json_array_append_new(shape, json_integer(1));
			json_array_append_new(names, jstr(grid_dim_name[g]));
			set(dims, grid_dim_name[g], jstr(use[g]));
		}
	}
	for (int d = 0; d < pl->ndim; d++) {
		json_array_append_new(shape, json_integer(k->grid[pl->dim[d]]));
		json_array_append_new(names, jstr(grid_dim_name[pl->dim[d]]));
		set(dims, grid_dim_name[pl->dim[d]], jstr(use[pl->dim[d]]));
	}
	set(mesh, "mesh_shape", shape);
	set(mesh, "mesh_dim_names", names);
	set(root, "device_mesh", mesh);
	set(root, "dims", dims);
	set(batch, "global", json_integer(k->global_batch));
	set(batch, "per_replica", count(pl->replica_batch));
	set(root, "batch", batch);
	/* the parameters' dtype; autocast's (torch.autocast(dtype=...)); TF32
	 * as the prediction assumed it: torch.backends.cudnn.allow_tf32 and
	 * torch.backends.cuda.matmul.allow_tf32 (model/compute.c,
	 * tf32_switches) */
	set(root, "precision", jstr(an->q.set.prec == PREC_FP16   ? "float16"
					   : an->q.set.prec == PREC_BF16 ? "bfloat16"
								   : "float32"));
	set(root, "autocast", an->q.set.prec == PREC_AMP_FP16   ? jstr("float16")
			      : an->q.set.prec == PREC_AMP_BF16 ? jstr("bfloat16")
							  : json_null());
	set(root, "cudnn_allow_tf32", json_boolean(pl->cudnn_tf32));
	set(root, "matmul_allow_tf32", json_boolean(pl->matmul_tf32));
	/* the stack predicted, for the rows a run writes (oraclec validate) */
	set(root, "implementation", jstr(pl->implementation));
	/* a sample of the model's one input, channels first; null for a model
	 * of several inputs */
	if (g->ninput == 1) {
		json_t *input = json_array();
		const Shape *sh = &g->tensor[g->input[0]].shape;
		for (int i = 0; i < sh->rank; i++)
			json_array_append_new(input, json_integer(sh->d[i]));
		set(root, "input_shape", input);
	} else {
		set(root, "input_shape", json_null());
	}
	set(root, "module_names", jstr(pl->mod.names));
	/* FSDP's sharding for the ZeRO stage modelled (stage 3: FULL_SHARD, or
	 * HYBRID_SHARD inside each node; 2: SHARD_GRAD_OP; 1 has no FSDP
	 * equivalent: ZeroRedundancyOptimizer) */
	set(root, "fsdp", an->q.set.zero == 3 && an->q.set.zero_node ? jstr("HYBRID_SHARD")
			  : an->q.set.zero == 3 ? jstr("FULL_SHARD")
			  : an->q.set.zero == 2 ? jstr("SHARD_GRAD_OP")
					  : json_null());
	set(root, "zero_redundancy_optimizer", json_boolean(an->q.set.zero == 1));
	/* --sync-bn K: nn.SyncBatchNorm.convert_sync_batchnorm(model,
	 * process_group) with groups of K consecutive ranks of the data
	 * dimension (torch.distributed.new_group for each, on every rank) */
	set(root, "sync_batchnorm_group_size",
	    pl->sync_bn ? json_integer(pl->sync_bn) : json_null());
	/* torch.utils.checkpoint.checkpoint_sequential(segments=...) */
	set(root, "checkpoint_segments", pl->checkpoints ? json_integer(pl->checkpoints)
							 : json_null());
	set(root, "pipeline", pl->nstage ? pipeline_json(an, pl) : json_null());
	set(root, "split_after", pl->split >= 0 && *pl->mod.fqn[pl->split]
					 ? jstr(pl->mod.fqn[pl->split])
					 : json_null());
	/* nn.Linear and conv: filter is ColwiseParallel, channel RowwiseParallel */
	set(root, "per_layer", plan_per_layer(g, an, pl));
	set(root, "checked_with", jstr("PyTorch 1.13 (Debian 12): python3 -m oraclec.launch runs "
				       "data, pipeline (GPipe, 1F1B) and dp plans on CPU with "
				       "gloo (tests/launch.sh); torch.distributed.pipelining's "
				       "names are PyTorch 2.4's"));
	return plan_dump(root, f);
}
