/* reuse.h -- the engine's per-layer rows (reuse.c): what the strategies
 * read of every layer again and again, computed once each. */
#ifndef ORACLEC_MODEL_REUSE_H
#define ORACLEC_MODEL_REUSE_H

#include "model/engine.h"
#include "model/model.h"

/* reuse.c: per-layer figures the strategies read again and again (every
 * grid, nesting, micro-batch count, configuration of the search and GPU
 * count of the advice), computed once each and kept in rows, a row per
 * kind and arguments and analysis: a layer's forward and backward time at
 * n samples and a share (layer_time), its issue times (layer_host), a
 * split layer's collectives on a group (split_collective, forward and
 * backward together), a layer's halo exchange (halo_time) and the gather
 * after it (spatial_gather).  times_of(r, i, bwd) reads layer i's, and
 * computes it on the first read; the value is the function's, bit for
 * bit.  A row stays valid until ROWS_HELD more have been asked for. */
enum { ROWS_HELD = 4 };
typedef enum RowKind {
	ROW_TIME, ROW_HOST, ROW_HALO, ROW_GATHER, ROW_FILTER, ROW_CHANNEL,
	ROW_TENSOR, ROW_TENSOR_SP /* tensor_collective, forward and backward apart,
	                             per layer (no classes: layers alike split alike
	                             only where their places in the pairs agree) */
} RowKind;
typedef struct Times {
	double *t[2];          /* forward, backward per layer (one array for
	                          the collectives); NaN: not computed yet */
	const Analysis *an;
	const Graph *g;
	RowKind kind;
	double n, share;       /* samples; the share of the work (ROW_TIME) */
	GridDim how;           /* ROW_TIME: the split the share is a part of
	                          (layer_time's); DIM_DATA for share 1 */
	int64_t ways;          /* ROW_HALO: strips */
	bool across;           /* ROW_HALO: neighbours on other nodes */
	Group grp;             /* ROW_GATHER, ROW_FILTER, ROW_CHANNEL */
	uint64_t id;           /* the row's: no other row has it */
	const int *cls;        /* NULL: t[] per layer; else per class of
	                          layers, layer i's t[][cls[i]] (valid while
	                          no other graph's table is made) */
} Times;
Times layer_times(const Analysis *an, const Graph *g, double n, double share, GridDim how);
Times host_times(const Analysis *an, const Graph *g);
Times halo_times(const Analysis *an, const Graph *g, double n, int64_t ways, bool across);
Times gather_times(const Analysis *an, const Graph *g, double n, Group grp);
Times split_times(const Analysis *an, const Graph *g, double n, Group grp, bool channel);
/* Megatron's tensor-parallel collectives of every layer over grp on n
 * samples (sequence parallel: sp), forward and backward apart. */
Times tensor_times(const Analysis *an, const Graph *g, double n, Group grp, bool sp);
/* Every figure of layers first..last computed. */
void times_fill(const Times *r, int first, int last);
/* The host lane's times of layers first..last at n samples a micro-batch,
 * all computed (valid as the rows they are in). */
Lane lane_times(const Analysis *an, const Graph *g, int first, int last, double n);
/* span_time's sum over a ROW_TIME row: forward + backward of layers
 * first..last, added in the same order. */
double times_span(const Times *r, int first, int last);
/* What the strategies' loops over the layers read of g, in arrays of
 * their own (a layer's record spans many cache lines; these a few bytes
 * each): built once per graph version. */
typedef struct LayerTable {
	const Graph *g;
	uint64_t version;
	int n;
	int *nw;                 /* parameter tensors */
	int64_t *params;         /* trained elements (Cost.params) */
	int64_t *kernel;         /* of them, the weight tensor's (layer_kernel_params);
	                            layer_table_full only */
	int64_t *buffers;        /* untrained state (Cost.buffers); layer_table_full */
	int64_t *in;             /* elements a stage beginning at the layer receives:
	                            the layer before's output, the first's input */
	unsigned char *split;    /* bit 0: a filter split divides it, bit 1: a
	                            channel split (model_split_layer) */
	int64_t most[2];         /* the fewest ways of those layers (filter,
	                            channel); INT64_MAX: none */
	double arrays;           /* every layer's nw, added in order */
	int *cls;                /* layer_classes: each layer's class, layers
	                            alike in everything a row's figure reads */
	TensorTable tensor;      /* layer_table_tensor: Megatron's tensor
	                            parallelism on the layers (tensor.c) */
	bool tensored;           /* layer_table_tensor has built it */
	int ncls;                /* 0: no classes (few layers, or few alike) */
	bool classed;            /* layer_classes has looked */
} LayerTable;
const LayerTable *layer_table(const Analysis *an, const Graph *g);
/* The same with kernel and buffers, which few read (a channel split's
 * share, the data-parallel wrapper's kernels). */
const LayerTable *layer_table_full(const Analysis *an, const Graph *g);
/* The same with the layers' classes (reuse.c: a row computes a figure
 * once per class). */
const LayerTable *layer_classes(const Analysis *an, const Graph *g);
/* The same (full) with Megatron's tensor parallelism on the layers
 * (LayerTable.tensor; the transformer an->tf). */
const LayerTable *layer_table_tensor(const Analysis *an, const Graph *g);
/* The parameters a GPU of `ways` holds of layer i under it: a split
 * layer's 1/ways, a row-parallel fc's weight rows and whole bias, a
 * layer run whole all (tensor.c). */
double tensor_params(const TensorTable *t, const LayerTable *tb, int i, double ways);
/* The query's stamp for a pipeline's partitions (model/key.h, KEY_PLAN):
 * every analysis of g with the same system, implementation and the
 * settings a partition reads shares it, whatever its GPU count, batch,
 * dataset and input; anything else gets a new one. */
uint64_t analysis_stamp(const Analysis *an, const Graph *g);
void times_check(const Times *r, int i, bool bwd, double v);

/* Layer i's figure in row r, computed and kept: what times_of does on
 * the first read. */
double times_miss(const Times *r, int i, bool bwd);

static inline double
times_of(const Times *r, int i, bool bwd)
{
	double v = r->t[bwd][r->cls ? r->cls[i] : i];

	if (v != v || !r->an->eng->reuse)
		return times_miss(r, i, bwd);
	if ((++r->an->eng->reads & 1023) == 0)
		times_check(r, i, bwd, v);
	return v;
}

/* An engine's rows and layer table freed (engine_free). */
struct Rows;
void rows_free(struct Rows *rs);

/* context.c */
/* The ring of attention j of the transformer (its layers tf->parts[j]) on
 * one micro-batch of m samples round `ring`, each GPU at the share t-way
 * tensor parallelism gives the core's layers (whole's or part's times, on
 * its s/C of the m): the exposed time, forward and backward; *fwd the
 * forward's, *redo whether recomputation runs the core's forward (and its
 * ring) again. */
double context_attention(const Analysis *an, const Graph *g, int j, const Times *whole,
			 const Times *part, int64_t t, Group ring, double m, double *fwd,
			 bool *redo);

#endif
