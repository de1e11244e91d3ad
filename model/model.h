/* model.h -- the performance model: the time one GPU takes for a layer
 * (compute.c), the time of a collective on the cluster (comm.c), a grid's
 * place on the nodes (mapping.c), the primitives of a split layer
 * (split.c), the memory parts (memuse.c, zero.c), the gradient exchange
 * (overlap.c), a pipeline's stages (pipeline.c) and an iteration's sum
 * (iteration.c); the cost models built on them (costmodel.h: physical.c,
 * paper.c).  Pure functions of the IR, the System and the Analysis; none
 * calls up into plan/. */
#ifndef ORACLEC_MODEL_MODEL_H
#define ORACLEC_MODEL_MODEL_H

#include "ir/ir.h"
#include "model/costmodel.h"
#include "model/engine.h"
#include "model/kerneltable.h"

/* compute.c
 * requires: PASS_COST, the system and settings of the analysis.
 * provides: PASS_TIMING -- Layer.timed and Graph.measured from
 *           Graph.timing: a span's measured time shared out over its
 *           layers in proportion to their roofline estimates (so one time
 *           for the whole network keeps the estimate's shape), at every
 *           precision the system runs; a later timing wins for a layer two
 *           cover.  Without timings every layer is left to the roofline. */
bool timing_spread(Graph *g, const Analysis *an);

/* compute.c */

/* Seconds for layer l's forward (bwd false) or backward pass over n
 * samples, of which this GPU does the fraction `share` (1/p when the layer
 * is split p ways along `how`: DIM_FILTER, DIM_CHANNEL or DIM_SPATIAL;
 * DIM_DATA for a whole layer, or a share no whole split makes).  In
 * order of preference: a layer's measured time (Layer.timed, see
 * timing_spread) per sample times n x share; the system's kernel table
 * (tabletime.c: its row for the layer's key, or its part's, at the
 * batch; else two rows around it); the model: a roofline per op class and
 * a fixed GPU cost per kernel.  Autocast's casts and the gradients'
 * accumulation on top.  The CPU's dispatch is the host lane's (host.c). */
double layer_time(const Analysis *an, const Graph *g, const Layer *l, double n, double share,
		  GridDim how, bool bwd);
/* The same, saying where the time comes from (*src); profile false: as if
 * the layer had no measured time (what the table or the model predicts). */
double layer_time_of(const Analysis *an, const Graph *g, const Layer *l, double n, double share,
		     GridDim how, bool bwd, bool profile, TimeSource *src);

/* Whether layer l runs inside another's kernel under the implementation's
 * fusions: a ReLU after a batch norm, a residual add and the ReLU after
 * it (compute.c, docs/model.md "Fused kernels"). */
bool layer_fused_away(const Analysis *an, const Layer *l);

/* Forward + backward of layers [first, last] at n samples and a share. */
double span_time(const Analysis *an, const Graph *g, int first, int last, double n,
		 double share, GridDim how);

/* tabletime.c: the kernel table's seconds for layer l's pass at n samples
 * and a share (layer_time's), its own kernels only; model: the model's
 * time of the same, for a part the table's rows lack; call: the CPU's
 * time the measured call holds that the host lane adds too (a probed
 * CPU's: layer_call_host; else 0), taken off.  NAN (and *src KS_NONE)
 * where the table has no time for it.  Records each key and batch it
 * looks up where the engine keeps a record (Engine.needs). */
double table_time(const Analysis *an, const Graph *g, const Layer *l, double n, double share,
		  GridDim how, bool bwd, double model, double call, KernelSource *src);

/* The optimizer step over `params` elements held in `arrays` tensors. */
double update_time(const Analysis *an, double params, double arrays);

/* One loader process preparing `samples` per iteration on `cores` CPU
 * cores, each of the job's `nodes` nodes reading `node_samples` from
 * storage. */
double input_time(const Analysis *an, double samples, double cores, double node_samples,
		  double nodes);

/* Bytes of optimizer state per parameter element (fp32 moments). */
double optimizer_bytes(Optimizer opt);
/* The tensor operations the optimizer's step runs per parameter tensor. */
int step_ops(Optimizer opt);
/* Whether layer l is a depthwise convolution PyTorch runs in its own
 * kernels, not cuDNN's. */
bool layer_on_aten(const Analysis *an, const Graph *g, const Layer *l);
/* compute.c: PyTorch's TF32 switches as the prediction assumes them:
 * torch.backends.cudnn.allow_tf32 (*cudnn: an fp32 convolution runs in
 * TF32 where the GPU has it) and torch.backends.cuda.matmul.allow_tf32
 * (*matmul: an fp32 matrix product does).  What a plan states, so that
 * the run computes in the number formats priced. */
void tf32_switches(const Analysis *an, bool *cudnn, bool *matmul);
/* cuDNN calls of layer l's forward or backward (a batch norm's, a
 * convolution's but those ATen runs; backward the data and the weight
 * gradient's, the first layer's weight gradient only). */
int library_calls(const Analysis *an, const Graph *g, const Layer *l, bool bwd);
/* CPU seconds of layer l's own operator's call, forward or backward (its
 * dispatch and library calls; not autocast's casts, a batch norm's
 * counter or the gradients' accumulation, which host.c adds): what a
 * kernel table's time holds on a host_device system. */
double layer_call_host(const Analysis *an, const Graph *g, const Layer *l, bool bwd);
/* The number format layer l computes in (compute.c). */
Dtype layer_dtype(const Analysis *an, const Graph *g, const Layer *l);

/* kernel.c */

/* A matrix product as a library runs it: `batch` products of m x n over
 * k. */
typedef struct Gemm {
	double m, n, k, batch;
} Gemm;
/* Seconds its tiles take in waves over the system's SMs at the peak and
 * the main loop's efficiency u (the plain rate without sms); the tiling
 * chosen is kept in engine e (NULL: none kept). */
double gemm_time(Engine *e, const System *s, const Gemm *p, double peak, double u);
/* An engine's tilings freed (engine_free). */
struct TileMemo;
void tiles_free(struct TileMemo *m);
/* The products of layer l's forward or backward pass (a convolution's
 * implicit GEMMs, a linear layer's, a product of two activations) on n
 * samples into out[3]; how many (0: not tiled). */
int layer_gemms(const Graph *g, const Layer *l, double n, bool bwd, Gemm *out);
/* The compute time of layer l's pass of `flops` FLOPs on n samples at a
 * share: its products as tiles in waves (Winograd where cuDNN would take
 * it), or flops / (peak u) where the layer is not a product or the system
 * gives no SMs. */
double kernel_compute(const Analysis *an, const Graph *g, const Layer *l, double n, double share,
		      bool bwd, Dtype dt, double peak, double u, double flops);

/* host.c */

/* CPU seconds to issue layer l's forward or backward operators. */
double layer_host(const Analysis *an, const Graph *g, const Layer *l, bool bwd);
/* CPU seconds to issue the optimizer's step over `arrays` tensors (and
 * zero_grad's and the loss scaler's operators). */
double step_host(const Analysis *an, double arrays);
/* What the host lane reads of each layer, indexed by layer: its GPU
 * seconds forward and backward on a micro-batch's samples (layer_time,
 * share 1: the times the strategy priced the layers at) and its CPU
 * seconds to issue them (layer_host); reuse.c's rows. */
typedef struct Lane {
	const double *f, *b, *hf, *hb;
} Lane;
/* The iteration of k (its parts priced; micro_batches set) on the CPU
 * that issues it, one process running layers first..last, each layer's
 * times in ln, and stepping over `arrays` tensors: k->t.host, its issue
 * time, and k->t.dispatch, what the GPU waits for it. */
void host_lane(const Analysis *an, const Graph *g, int first, int last, const Lane *ln,
	       double arrays, Candidate *k);

/* memuse.c */

/* What training keeps of g per sample in bytes at the analysis's
 * precision (the memory pass's elements, Graph.keep, at its widths),
 * under its implementation: the attentions fused where it runs them as
 * one kernel, else as autograd keeps each operator's. */
typedef struct KeptBytes {
	int64_t act;          /* kept for backward, the graph inputs' included */
	int64_t input;        /* the graph inputs' part of act */
	int64_t saved_fixed;  /* whatever the batch: batch norm's per-channel
	                         statistics */
	int64_t transient;    /* on top of act at the backward pass's peak: the
	                         gradients in flight (memory_transient) */
	int64_t workspace;    /* the largest convolution's im2col buffer */
	int64_t cast_weights; /* autocast's 16-bit weight copies; 0 without */
} KeptBytes;
KeptBytes kept(const Analysis *an, const Graph *g);
/* Layer i's part of act. */
double kept_layer(const Analysis *an, const Graph *g, int i);
/* Every layer's part of act, as kept() reads them: valid until the
 * engine's memo of them has been asked for a few other precisions or
 * graphs. */
const double *kept_layers(const Analysis *an, const Graph *g);
/* An engine's answers of kept() freed (engine_free). */
struct KeptMemo;
void kept_free(struct KeptMemo *m);
/* Bytes of a weight, a gradient or a full-width activation element at
 * the analysis's precision. */
static inline int
elem_bytes(const Analysis *an)
{
	return precision_bytes(an->q.set.prec);
}

/* The activation parts of a GPU's memory: the kept tensors of `samples`
 * samples (and the batch-independent statistics), the backward pass's
 * gradients in flight and the convolution workspace, `share` of each
 * (a split layer keeps 1/p). */
void mem_activations(MemUse *m, const KeptBytes *t, double samples, double share);
/* Autocast's 16-bit weight copies on a GPU holding `weights` of the
 * model's parameters (their share of all the copies). */
double mem_cast_weights(const Analysis *an, const Graph *g, double weights);
/* Adds the system's reserve and sums the parts into the peak, m->total. */
void mem_total(MemUse *m, const System *s);

/* comm.c */

/* A communicator: `size` GPUs, `per_node` of them in each node, and
 * `sharing` such communicators running at once through each node's
 * network links (the GPUs of a node that belong to other groups). */
typedef struct Group {
	int64_t size, per_node, sharing;
} Group;

/* Collective c over g as the analysis's stack runs it (docs/model.md,
 * "Collectives"): the system's measured table where it covers the
 * collective, the size and the ranks (between two rank counts measured,
 * the model's figure scaled by its ratio to them, interpolated in log
 * ranks); else NCCL's model at the implementation's nccl_version
 * (nccl.c); else, for nccl_version "none", the alpha-beta rings and trees
 * below.  `bytes`: an all-reduce's or broadcast's message, an
 * all-gather's whole result, a reduce-scatter's whole input, the whole
 * tensor of an all-to-all (each GPU holding bytes / g.size). */
double coll_time(const Analysis *an, Coll c, Group g, double bytes);
double coll_allreduce(const Analysis *an, Group g, double bytes);
/* The data-parallel gradients' all-reduce as the implementation runs it
 * (its `allreduce`): flat, coll_allreduce; hierarchical, a reduce-scatter
 * inside the node, an all-reduce of 1/k across, an all-gather inside. */
double coll_grad_allreduce(const Analysis *an, Group g, double bytes);
double coll_allgather(const Analysis *an, Group g, double bytes);
double coll_reduce_scatter(const Analysis *an, Group g, double bytes);
double coll_broadcast(const Analysis *an, Group g, double bytes);
double coll_alltoall(const Analysis *an, Group g, double bytes);
/* The alpha-beta model of a ring over g (and NCCL >= 2.4's tree for an
 * all-reduce across nodes): what coll_time gives a stack not on NCCL;
 * ring_link is the paper mode's alpha and beta. */
double allreduce_time(const System *s, Group g, double bytes);
void ring_link(const System *s, Group g, double *alpha, double *bw);
double allgather_time(const System *s, Group g, double bytes); /* bytes: the whole result */
double alltoall_time(const System *s, Group g, double bytes);  /* bytes: the whole tensor */
double broadcast_time(const System *s, Group g, double bytes); /* bytes: the message */

/* nccl.c: collective c (c < COLL_NCCL) of `bytes` over g on NCCL `version`
 * (nccl_version_parse's number): the time of the algorithm and protocol
 * NCCL's tuning model picks, which *pick says (NULL: not asked). */
typedef struct NcclPick {
	int algo, proto; /* nccl_algo_name, nccl_proto_name; -1: none */
} NcclPick;
/* What NCCL's topology search learns of g's path and comm.c computes:
 * its bus bandwidth (bytes/s: the link in a node, or the node's share of
 * the network above it) and what its switch levels add to a step's
 * latency (s). */
typedef struct NcclPath {
	double bw, levels;
} NcclPath;
double nccl_time(const System *s, int version, Coll c, Group g, NcclPath path, double bytes,
		 NcclPick *pick);
const char *nccl_algo_name(int a);
const char *nccl_proto_name(int p);
/* The channels NCCL runs a collective on over s's links: the node's link
 * in NVLinks.  NCCL launches a CUDA block a channel ("reducing the number
 * of rings also reduces the number of CUDA blocks used for
 * communication, hence the impact on GPU computing resources", NCCL's
 * documentation of NCCL_MAX_NRINGS), each holding an SM while it runs. */
double nccl_channels(const System *s);
/* The share of the GPU's SMs those blocks hold while a collective runs (0
 * off NCCL, on a host device, or where the system gives no SMs): the
 * backward beside the hidden gradient exchange slows by it (overlap.c says
 * why; iteration_finish adds it to the compute). */
double nccl_sms_held(const Analysis *an);
/* One message between neighbours, inside a node or across nodes, as the
 * implementation sends it (NCCL, or staged through host memory). */
double p2p_time(const Analysis *an, double bytes, bool across_nodes);
/* A layer-wise all-gather (or all-to-all) of `bytes` in all over group g
 * as the implementation runs it: NCCL's ring, or staged through host
 * memory (docs/model.md, "Implementations"). */
double gather_time(const Analysis *an, Group g, double bytes);

/* split.c */

/* Whether a filter or channel split divides layer l (a convolution or a
 * fully connected layer); whether l reads only graph inputs (a channel
 * split leaves it whole: the image has no channels to spare); l's kernel
 * on the split axis, dilated. */
bool split_layer(const Layer *l);
bool reads_input(const Graph *g, const Layer *l);
int64_t dilated_kernel(const Layer *l);

/* A grid beyond the strategy's limit: kept with the reason, no times. */
void beyond_limit(Candidate *k, const char *reason);

/* Whether a filter (or channel) split divides layer l's work, and into at
 * most how many ways (its filters, or input channels). */
bool model_split_layer(const Graph *g, const Layer *l, bool channel, int64_t *ways);
/* The parameters one of `ways` GPUs holds of a layer split by filter (1/ways
 * of its weights and bias) or by channel (1/ways of its weights, the whole
 * bias, added after the partial outputs are summed: Megatron's
 * RowParallelLinear, PyTorch's RowwiseParallel). */
double split_params(const Layer *l, bool channel, double ways);
/* The same of a layer of `params` trained elements, `kernel` of them its
 * weight tensor's (layer_kernel_params). */
double split_params_of(int64_t params, int64_t kernel, bool channel, double ways);
/* The parameters one GPU holds of layer l under a per-layer split s: its
 * share where a filter or channel split of s.d ways divides it, else all
 * of them (data, spatial, a layer the mode leaves whole). */
double layer_split_params(const Graph *g, const Layer *l, LayerSplit s);
/* The forward and backward collectives of split layer l over grp, on n
 * samples, as the implementation runs them. */
double split_collective(const Analysis *an, const Graph *g, const Layer *l, Group grp, double n,
			bool channel);
/* The same of a layer whose input and output have `in` and `out`
 * elements a sample, `reads` when it reads only graph inputs: all that
 * split_collective reads of the layer. */
double split_collective_of(const Analysis *an, const Graph *g, Group grp, double n, bool channel,
			   int64_t in, int64_t out, bool reads);
/* Spatial splits: the last of the leading layers whose outputs have at
 * least `ways` rows (-1: none); layer l's halo exchange, forward and
 * backward, for n samples over `ways` strips (across: the neighbours are
 * on other nodes); and the gather of layer `split`'s output forward and
 * the scatter of its gradient backward over grp. */
int spatial_limit(const Graph *g, int64_t ways);
/* Why g cannot be split into `ways` strips (NULL: it can), and the most
 * strips it takes (*most: the first layer's output rows, 1 for a model
 * whose layers have dimensions before the channels). */
const char *spatial_refusal(const Graph *g, int64_t ways, int64_t *most);
double halo_time(const Analysis *an, const Graph *g, const Layer *l, double n, int64_t ways,
		 bool across);
double spatial_gather(const Analysis *an, const Graph *g, int split, double n, Group grp);

/* tensor.c: Megatron-LM's tensor parallelism found on the layers
 * (docs/model.md, "tensor, dt and dpt"): per layer TP_* -- its work split over the
 * group (TP_SPLIT: a column- or row-parallel fc, the attention core
 * over its heads, what lies between), its output all-reduced forward
 * (TP_REDUCE: a row-parallel fc, the vocabulary-parallel embedding), a
 * row-parallel fc (TP_ROWPAR: its bias whole), the cross-entropy over
 * the split vocabulary (TP_CE), the embedding table split by rows
 * (TP_TABLE), rows split with the weights whole (TP_WHOLE_W); the tensor
 * whose gradient its backward all-reduces (bwd, -1: none), the elements
 * a sample it all-gathers first (gather), a cross-entropy's rows. */
enum { TP_SPLIT = 1, TP_REDUCE = 2, TP_ROWPAR = 4, TP_CE = 8, TP_TABLE = 16, TP_WHOLE_W = 32 };
typedef struct TensorTable {
	unsigned char *tp;
	int *bwd;
	int64_t *gather, *rows;
	int64_t div;   /* the heads and widths split: t must divide it (0: none) */
	int64_t most;  /* the fewest elements along a split axis */
	int nsplit;    /* layers split; 0: nothing Megatron splits */
} TensorTable;
void tensor_table(const Graph *g, const Transformer *tf, TensorTable *t);
void tensor_table_free(TensorTable *t);
/* Why t cannot be split `ways` ways (NULL: it can). */
const char *tensor_refusal(const TensorTable *t, int64_t ways);
/* Layer i's share of the work on a GPU of `ways`: 1/ways for a split
 * layer, and for every layer with sequence parallelism (sp). */
double tensor_share(const TensorTable *t, int i, double ways, bool sp);
/* Layer i's collectives over grp on n samples, forward or backward
 * (bwd), sequence parallel or not. */
double tensor_collective(const Analysis *an, const Graph *g, const TensorTable *t, int i,
			 Group grp, double n, bool sp, bool bwd);

/* context.c: Megatron-LM's context parallelism (docs/model.md, "context,
 * dc and dtc"). */
/* Why a model cannot run `ways` ways of context parallelism (NULL: it can). */
const char *context_refusal(const Transformer *tf, int64_t ways);
/* The most ways of context parallelism the model takes: half its sequence
 * (2 x ways equal chunks), 1 for an odd one or none. */
int64_t context_limit(const Transformer *tf);
/* The bytes of K and V a GPU of a tensor group of `tensor` holds of one
 * attention for n samples, its s/ways tokens of each: one ring step's send. */
double context_kv_bytes(const Analysis *an, const Transformer *tf, double n, int64_t tensor,
			int64_t ways);
/* The ring's exposed time of one attention, forward and backward (*fwd:
 * forward's), its steps' compute step_f and step_b, each send of kv bytes
 * round `ring`. */
double context_ring(const Analysis *an, double step_f, double step_b, double kv, Group ring,
		    double *fwd);

/* zero.c */

/* The weights, gradients and optimizer state of a GPU holding `weights`
 * parameters under ZeRO stage an->set.zero (0-3) over nd GPUs, into m;
 * with master_weights, Megatron's fp32 main weights and gradients. */
bool master_weights(const Analysis *an);
/* Bytes of a gradient element as the data-parallel exchange sums it:
 * the precision's, fp32 under master_weights at bf16 (Megatron's
 * --accumulate-allreduce-grads-in-fp32). */
int grad_bytes(const Analysis *an);
void zero_memory(const Analysis *an, const Graph *g, double weights, double nd, MemUse *m);
/* The parameter tensors a GPU's optimizer step runs over when `arrays`
 * tensors are sharded over nd GPUs: all of them without ZeRO; at stage 1
 * its share of whole tensors (the implementation's zero_partition
 * "tensors", at least one) or one flat slice ("flat"); one flat slice at
 * stages 2 and 3. */
double zero_step_arrays(const Analysis *an, double arrays, double nd);
/* The group the states are sharded over: the data-parallel group `grad`,
 * or its part inside one node under FSDP hybrid (Analysis.zero_node). */
Group zero_group(const Analysis *an, Group grad);
/* FSDP hybrid's gradient exchange: reduce-scatter inside the node, then
 * each shard all-reduced across the nodes; the part a `window` of
 * seconds (what backward hid of DDP's exchange) does not hide (returned)
 * and the part it hides. */
double zero_node_exchange(const Analysis *an, const Graph *g, Group grad, double weights,
			  double window, double *hidden);
/* ZeRO over grp (not hybrid): the exchange that *grad exposed and
 * *hidden hid as DDP's all-reduce becomes a ring reduce-scatter in the
 * backward, hidden as far as that window (*hidden) lasts, and under
 * stages 1 and 2 a ring all-gather of the updated parameters after the
 * optimizer step, exposed: both rewritten. */
void zero_exchange(const Analysis *an, const Graph *g, Group grp, double weights, double *grad,
		   double *hidden);
/* Stage 3's parameter all-gathers over grp: the part `compute` seconds of
 * forward and backward do not hide (returned) and the part they hide. */
double zero_gather_time(const Analysis *an, const Graph *g, Group grp, double weights,
			double compute, double *hidden);
/* Whether stages 2 and 3 run as PyTorch's FSDP (the implementation's
 * zero_partition "tensors": ZeroRedundancyOptimizer, then FSDP), not as
 * DeepSpeed's ZeRO ("flat"). */
bool zero_fsdp(const Analysis *an);
/* FSDP's collectives per iteration over the data-parallel group `grad`
 * as the plan runs it, none hidden (zero.c): the flat parameter gathered
 * over the shard group before the forward, its gradient reduce-scattered
 * after the backward and, under HYBRID_SHARD, the shard all-reduced
 * across the nodes.  *gathers: the all-gathers issued. */
double fsdp_exchange(const Analysis *an, const Graph *g, Group grad, double weights,
		     int *gathers);
/* FSDP's CPU time per iteration (its hooks and the flat parameter's views
 * of `arrays` parameter tensors): 0 without FSDP. */
double fsdp_host(const Analysis *an, double arrays);

/* overlap.c */

/* The gradient exchange over grp after a backward pass on n samples, each
 * layer's gradients `wshare[i]` of its parameters (NULL: all): the part
 * that backward does not hide (returned) and the part it hides
 * (*hidden).  Without overlap (Implementation.overlap_grad) it is one
 * all-reduce after backward, nothing hidden. */
double grad_time(const Analysis *an, const Graph *g, Group grp, double n, const double *wshare,
		 double *hidden);
/* The data-parallel wrapper's kernels around an exchange over grp of the
 * gradients of layers first..last, layer i's `wshare[i]` of its parameters
 * (NULL: all): the implementation's copies of each gradient tensor
 * (grad_copies) and its forward's broadcast of the buffers
 * (broadcast_buffers); 0 on one replica. */
double reducer_time(const Analysis *an, const Graph *g, Group grp, int first, int last,
		    const double *wshare);
/* Layer l's part of it, the broadcast's collective left out, for `weights`
 * gradient elements exchanged. */
double reducer_layer(const Analysis *an, const Graph *g, const Layer *l, double weights);
/* The same of a layer of nw parameter tensors and `buffers` untrained
 * elements (Cost.buffers); the bytes of those buffers its forward's
 * broadcast sends. */
double reducer_kernels(const Analysis *an, const Graph *g, int nw, int64_t buffers, double weights);
double buffer_bytes(const Analysis *an, int64_t buffers);
/* reducer_time of layers whose kernels (reducer_layer) add up to t and
 * whose buffers to `bytes`, on group grp: the broadcast's collective
 * added. */
double reducer_total(const Analysis *an, Group grp, double t, double bytes);

/* mapping.c */

/* A grid on the cluster: the one placement both the cost model and a
 * plan assume (docs/model.md, "Placement").  Ranks number the grid
 * row-major with its dimensions outer to inner (nest_order), so the
 * innermost block -- the q GPUs of a model-parallel group (model-inner)
 * or the r replicas of a shard (data-inner) -- has consecutive ranks.  A
 * block of u <= g GPUs sits inside one node, g / u blocks to a node (the
 * node's other GPUs idle when u does not divide g); a larger one takes
 * ceil(u / g) nodes of its own.  Each collective's group follows from it. */
typedef struct Mapping {
	GridDim dim[DIM_COUNT];   /* the grid's dimensions (sizes above 0),
	                             outer to inner */
	int ndim;
	Nesting nest;             /* model-inner when the grid has one kind of
	                             dimension only */
	int64_t gpus;             /* p, the ranks */
	int64_t replicas;         /* p1: the data dimension, 1 without */
	int64_t q;                /* a model-parallel group: the other
	                             dimensions' product */
	int64_t inner;            /* u: the innermost block, q or r */
	int64_t gpus_per_node;    /* g */
	int64_t groups_per_node;  /* u <= g: g / u blocks to a node; else 0 */
	int64_t nodes_per_group;  /* u > g: ceil(u / g); else 1 */
	int64_t nodes;            /* nodes the ranks take */
	int64_t per_node;         /* most ranks on one node */
	int64_t in_node;          /* the job's GPUs on a node as the input
	                             pipeline counts them: min(p, g) */
	bool across;              /* a model-parallel group spans nodes:
	                             neighbours' sends cross the network */
	Group model;              /* collectives inside a model-parallel group
	                             (layer-wise, the spatial gather) */
	Group split;              /* the split inside a pipeline stage (dpf,
	                             dpc): its t GPUs; the model group's
	                             placement without a pipeline */
	Group grad;               /* the gradient all-reduce among the GPUs
	                             that hold the same weights */
	Group tensor;             /* a Megatron tensor-parallel group (the
	                             tensor dimension's GPUs) */
	Group context;            /* a context-parallel ring: C GPUs one in
	                             every tensor group (tp-cp-ep-dp-pp) */
} Mapping;

void grid_map(const System *s, const int64_t grid[DIM_COUNT], Nesting nest, Mapping *m);
/* Rank r's node (from 0, in the job's nodes) and GPU within it. */
void grid_rank(const Mapping *m, int64_t r, int64_t *node, int *gpu);

/* pipeline.c: the pipeline strategy of the default cost model over the
 * stages of the mapped grid (its pipeline dimension; a filter or channel
 * dimension splits every stage's layers), with each stage's time and
 * memory (Candidate.stage_time, stage_mem; with keep only, else NULL);
 * cut_after as in StrategyOpts.  Each partition is kept (for the same
 * analysis, samples, stages and split) and found again by the other
 * grids, nestings and GPU counts that ask for it. */
void pipeline(const Graph *g, const Analysis *an, const Mapping *m, Candidate *k,
	      const bool *cut_after, const int64_t grid[DIM_COUNT], double beat, bool keep);
/* The reason of a grid pipeline() did not partition because a lower
 * bound on its epoch cannot beat `beat` (an epoch; INFINITY: none). */
extern const char pipeline_bounded[];
/* Micro-batches stage i of S holds at its peak under the schedule (v
 * virtual stages when interleaved), of M. */
double pipeline_held(Schedule sched, int v, int64_t M, int S, int i);
/* The pipeline's checkpointing (CKPT_*): the implementation's
 * pipe_checkpoint, none when --recompute chose its own segments. */
int pipeline_checkpoint(const Analysis *an);
/* Of the `held` micro-batches (of M) a stage holds at its peak, those it
 * keeps as their input only; *whole: those it keeps whole, the rest or,
 * with any checkpointed, at least the one recomputed in backward. */
double pipeline_checkpointed(const Analysis *an, int64_t M, double held, double *whole);
/* The share of the kept bytes (kept_layers) a GPU of a tensor group of
 * `ways` keeps: tensor_share per layer, weighted by the layer's bytes
 * (dt's memory, and dpt's transients; pipeline.c). */
double tensor_kept_share(const Analysis *an, const Graph *g, double ways, bool sp);
/* The optimal min-max partition of L layers with times t and memory m
 * (cap per stage) into S contiguous stages: fills end[] (room for L + 1)
 * and *n, returns the slowest stage's time, -1 when memory forbids. */
double pipeline_partition(const double *t, const double *m, int L, double cap, int S, int *end,
			  int *n);

/* An engine's partitions freed (engine_free). */
struct Plans;
void plans_free(struct Plans *ps);

/* peak.c: the dense peak g's matrix products run at under an: per layer
 * with multiply-accumulates, the precision's rate (TF32 for an fp32 run's
 * convolutions where the implementation has cuDNN use it), weighted by
 * the layer's FLOPs as a harmonic mean (the rate at which the model's
 * FLOPs would take the time they take at each layer's own peak). */
double matmul_peak(const Graph *g, const Analysis *an);

/* syncbn.c: synchronised batch norm's exchanges for one micro-batch (the
 * settings' sync_bn: groups of that many of the data-parallel group
 * `data`): each batch norm of layers first..last has its statistics
 * all-gathered forward and its two gradient sums all-reduced backward,
 * with a kernel each. */
double sync_bn_time(const Analysis *an, const Graph *g, Group data, int first, int last);
/* The group a data dimension of `data` ranks shares statistics in: K,
 * at most the dimension (1: nothing shared). */
int64_t sync_bn_group(const Analysis *an, int64_t data);
/* Why --sync-bn K cannot run on a data dimension of `data` ranks (K
 * does not cut it into groups of one size), naming both; NULL where it
 * can. */
const char *sync_bn_refusal(const Graph *g, const Analysis *an, int64_t data);
/* A predicted candidate whose data dimension sync_bn_refusal refuses
 * becomes a grid beyond a limit: that reason, no times. */
void sync_bn_limit(const Graph *g, const Analysis *an, Candidate *k);

/* skew.c: the slowest of N -- the expected largest of n independent
 * standard normals (0 for n <= 1), and what the slowest of the job's
 * ranks adds to a step whose parts are t: the spread of a rank's step
 * (the system's jitter and gpu_spread together) times its ranks' own work
 * (all but the exposed communication) times that. */
double normal_max(int64_t n);
double skew_time(const Analysis *an, const IterTime *t);

/* iteration.c: the end of every candidate's prediction by model m -- the
 * slowest of N where m has it, its parts added (the input overlapping the
 * rest), the epoch, the bottleneck and whether it fits; a candidate whose
 * figures overflow is not computable. */
void iteration_finish(const Analysis *an, const CostModel *m, Candidate *k);
/* An iteration's parts added, all but the input, which overlaps them. */
double iteration_busy(const IterTime *t);

#endif
