/* model.h -- the performance model shared by the strategy passes: the
 * time one GPU takes for a layer (compute.c) and the time of a collective
 * on the cluster (comm.c).  Pure functions of the IR and the System. */
#ifndef ORACLEC_PASSES_MODEL_H
#define ORACLEC_PASSES_MODEL_H

#include "ir/ir.h"

/* compute.c */

/* Seconds for layer l's forward (bwd false) or backward pass over n
 * samples, of which this GPU does the fraction `share` (1/p when the layer
 * is split p ways).  Roofline per op class and a fixed GPU cost per
 * kernel, or, for a layer with a measured time (Layer.timed, see
 * timing_spread), that time per sample times n x share; then the
 * framework's CPU dispatch, which overlaps the GPU's work: the slower of
 * the two sets the pace. */
double layer_time(const System *s, Precision prec, const Graph *g, const Layer *l, double n,
		  double share, bool bwd);

/* Forward + backward of layers [first, last] at n samples and a share. */
double span_time(const System *s, Precision prec, const Graph *g, int first, int last,
		 double n, double share);

/* The optimizer step over `params` elements held in `arrays` tensors. */
double update_time(const System *s, Optimizer opt, double params, double arrays);

/* Reading and decoding the samples of one iteration: samples_per_gpu on
 * each of gpus_in_node GPUs of a node, `bytes` each as stored. */
double input_time(const System *s, double samples_per_gpu, double gpus_in_node, double bytes,
		  bool decoded);

/* Bytes of optimizer state per parameter element (fp32 moments). */
double optimizer_bytes(Optimizer opt);

/* comm.c */

/* A communicator: `size` GPUs, `per_node` of them in each node, and
 * `sharing` such communicators running at once through each node's
 * network links (the GPUs of a node that belong to other groups). */
typedef struct Group {
	int64_t size, per_node, sharing;
} Group;

double allreduce_time(const System *s, Group g, double bytes);
double allgather_time(const System *s, Group g, double bytes); /* bytes: the whole result */
/* One message between neighbours, inside a node or across nodes. */
double p2p_time(const System *s, double bytes, bool across_nodes);

#endif
