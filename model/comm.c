/* comm.c -- collectives on a hierarchical cluster: a measured table where
 * the system gives one (model/colltable.c), else NCCL's model of them
 * (model/nccl.c) on the path below, else (an implementation not on NCCL,
 * and the paper mode's ring_link) the alpha-beta rings and trees of this
 * file.
 *
 * A ring over g GPUs moves data in 2(g-1) steps (all-reduce) or g-1 steps
 * (all-gather), each sending 1/g of the message; a step costs the start-up
 * latency and the transfer time of its slowest link.  Inside a node the
 * link is the GPU interconnect; once the ring leaves the node, every step
 * waits for the network: the NIC, shared by the other communicators of the
 * node running at the same time, and, above the leaf switches, the
 * over-subscribed uplinks shared by every ring crossing them.  Each switch
 * level the ring crosses adds its latency twice (up and down).
 *
 * Where the system has trees (NCCL >= 2.4), an all-reduce across nodes
 * may instead reduce inside each node, run a pipelined double binary tree
 * between nodes (latency logarithmic in the node count, about twice the
 * bandwidth term of a ring) and broadcast inside the node; the cheaper
 * algorithm is used, as NCCL chooses. */
#include "model/model.h"

#include "model/colltable.h"

#include <math.h>

typedef struct Path {
	double alpha;   /* seconds per step */
	double bw;      /* bytes per second per step */
	int64_t nodes;
	double levels;  /* the switch levels' part of alpha */
} Path;

static Path
path(const System *s, Group g)
{
	int64_t k = g.per_node < 1 ? 1 : g.per_node;
	Path p = { s->intra_lat, s->intra_bw, (g.size + k - 1) / k, 0 };
	int top;
	double share = g.sharing < 1 ? 1 : (double)g.sharing;
	double nodes = 1; /* in a group of the level; fanouts of 2^30 overflow an int */

	if (p.nodes <= 1)
		return p;
	top = system_span(s, p.nodes);
	p.alpha = s->nic_lat;
	p.bw = s->nic_bw / share;
	if (s->intra_bw < p.bw)
		p.bw = s->intra_bw;
	for (int i = 0; i <= top && i < s->nlevels; i++) {
		p.alpha += 2 * s->level[i].latency;
		p.levels += 2 * s->level[i].latency;
		if (s->level[i].fanout <= 0)
			continue;
		nodes *= (double)s->level[i].fanout;
		if (i < top) {
			/* the uplinks of a level-i group carry its nodes' bandwidth
			 * divided by the over-subscription; two ring edges per
			 * communicator cross them */
			double up = nodes * s->nic_bw / s->level[i].oversub;
			double per = up / (2 * share);
			if (per < p.bw)
				p.bw = per;
		}
	}
	return p;
}

/* The start-up latency and bandwidth of one step of a ring over g: the
 * paper mode's alpha and 1 / beta (model/paper.c). */
void
ring_link(const System *s, Group g, double *alpha, double *bw)
{
	Path p = path(s, g);

	*alpha = p.alpha;
	*bw = p.bw;
}

static double
ring(double steps, double alpha, double chunk, double bw)
{
	return steps * (alpha + chunk / bw);
}

double
allreduce_time(const System *s, Group g, double bytes)
{
	Path p;
	double t, k, tree;

	if (g.size <= 1 || bytes <= 0)
		return 0;
	p = path(s, g);
	t = ring(2.0 * (g.size - 1), p.alpha, bytes / g.size, p.bw);
	if (!s->tree || p.nodes <= 1)
		return t;
	k = g.per_node < 1 ? 1 : (double)g.per_node;
	tree = ring(k - 1, s->intra_lat, bytes / k, s->intra_bw) +       /* reduce in node */
	       2 * ceil(log2((double)p.nodes)) * p.alpha + 2 * bytes / p.bw + /* tree */
	       ring(k - 1, s->intra_lat, bytes / k, s->intra_bw);        /* broadcast */
	return tree < t ? tree : t;
}

double
allgather_time(const System *s, Group g, double bytes)
{
	Path p;

	if (g.size <= 1 || bytes <= 0)
		return 0;
	p = path(s, g);
	return ring((double)(g.size - 1), p.alpha, bytes / g.size, p.bw);
}

/* A broadcast of `bytes` from one GPU of g to the others: NCCL's ring,
 * the message cut into chunks that follow one another around it, so
 * every link carries the message once and the start-up is one step's
 * (NCCL's own model, src/graph/tuning.cc, prices a ring broadcast's
 * latency as its base and one hop, whatever the ranks). */
double
broadcast_time(const System *s, Group g, double bytes)
{
	Path p;

	if (g.size <= 1 || bytes <= 0)
		return 0;
	p = path(s, g);
	return p.alpha + bytes / p.bw;
}

/* An all-to-all of `bytes` in all over g: each GPU holds bytes / g and
 * sends a g-th of it to each of the others, in g - 1 steps. */
double
alltoall_time(const System *s, Group g, double bytes)
{
	/* the steps of an all-gather, each a g-th of its chunk */
	return g.size > 1 ? allgather_time(s, g, bytes / (double)g.size) : 0;
}

/* A point-to-point send.  Device transport (NCCL): the software latency
 * and the bytes over the link.  Host transport (CUDA managed memory under
 * Open MPI, which stages it through host buffers): the latency, a copy
 * from the GPU to host memory and one back, each at the staging bandwidth
 * (the host-to-host hop inside a node is pipelined with them), and the
 * network between nodes. */
double
p2p_time(const Analysis *an, double bytes, bool across_nodes)
{
	const System *s = an->q.sys;
	const Implementation *im = &an->q.impl;
	double net = s->nic_bw < s->intra_bw ? s->nic_bw : s->intra_bw, t;
	const CollRun *r = colltable_send(s->colls, s->gpus_per_node, across_nodes);

	if (!im->staged && r && colltable_time(r, bytes, &t))
		return t; /* sendrecv_perf's measured send */
	if (im->staged)
		return im->send_latency + 2 * bytes / im->staging_bw +
		       (across_nodes ? bytes / net : 0);
	return im->send_latency + bytes / (across_nodes ? net : s->intra_bw);
}

/* Device transport: NCCL's ring.  Host transport (MPI_Allgatherv or
 * Alltoallv on managed memory): a send to each of the others (its
 * latency), each rank's piece copied to the host and the whole result
 * back (bytes/g + (g-1)/g bytes at the staging bandwidth), and the ring's
 * network part when the group spans nodes. */
double
gather_time(const Analysis *an, Group g, double bytes)
{
	const Implementation *im = &an->q.impl;

	if (!im->staged || g.size <= 1 || bytes <= 0)
		return coll_allgather(an, g, bytes);
	return (double)(g.size - 1) * im->send_latency + bytes / im->staging_bw +
	       (g.per_node < g.size ? coll_allgather(an, g, bytes) : 0);
}

/* The model's figure: NCCL's at the implementation's version, or the
 * alpha-beta rings and trees above for a stack not on NCCL. */
static double
modelled(const Analysis *an, Coll c, Group g, double bytes)
{
	const System *s = an->q.sys;
	int v = an->q.impl.nccl;

	if (c == COLL_ALLTOALL) /* an all-gather's steps, a g-th of its chunk */
		return modelled(an, COLL_ALLGATHER, g, bytes / (double)g.size);
	if (v > 0 && c < COLL_NCCL) {
		Path p = path(s, g);
		return nccl_time(s, v, c, g, (NcclPath){ p.bw, p.levels }, bytes, NULL);
	}
	switch (c) {
	case COLL_ALLREDUCE: return allreduce_time(s, g, bytes);
	case COLL_BROADCAST: return broadcast_time(s, g, bytes);
	default: return allgather_time(s, g, bytes); /* reduce-scatter: its mirror */
	}
}

/* The group g's shape at r ranks: as many a node as g has, at most r. */
static Group
at_ranks(Group g, int64_t r)
{
	return (Group){ r, g.per_node < r ? g.per_node : r, g.sharing };
}

double
coll_time(const Analysis *an, Coll c, Group g, double bytes)
{
	const CollTable *t = an->q.sys->colls;
	const CollRun *lo, *hi;
	double model, size, m_lo, m_hi, f;

	if (g.size <= 1 || bytes <= 0)
		return 0;
	model = modelled(an, c, g, bytes);
	if (!t)
		return model;
	/* nccl-tests' size: a rank's buffer of an all-to-all */
	size = c == COLL_ALLTOALL ? bytes / (double)g.size : bytes;
	colltable_runs(t, c, g.size, &lo, &hi);
	if (lo && lo->ranks == g.size)
		return colltable_time(lo, size, &m_lo) ? m_lo : model;
	if (!lo || !hi || !colltable_time(lo, size, &m_lo) || !colltable_time(hi, size, &m_hi))
		return model;
	/* between two measured rank counts: the model's shape through the
	 * measured points, its ratio to them interpolated in log ranks */
	f = log((double)g.size / (double)lo->ranks) / log((double)hi->ranks / (double)lo->ranks);
	m_lo /= modelled(an, c, at_ranks(g, lo->ranks), bytes);
	m_hi /= modelled(an, c, at_ranks(g, hi->ranks), bytes);
	return model * (m_lo + (m_hi - m_lo) * f);
}

double
coll_allreduce(const Analysis *an, Group g, double bytes)
{
	return coll_time(an, COLL_ALLREDUCE, g, bytes);
}

/* The stack's gradient all-reduce over g: hierarchical (docs/model.md,
 * "Hierarchical all-reduce") as NVIDIA's Horovod runs it with
 * HOROVOD_ALLREDUCE_MODE=1 (horovod/common/operations.cc, as Fujitsu
 * vendored it in mlperf/training_results_v0.6: ncclReduceScatter on the
 * node's communicator, ncclAllReduce of the rank's 1/k on the
 * communicator of the GPUs of the same local rank, ncclAllGather on the
 * node's), each of the k cross-node communicators of a node running at
 * once through its network links; flat where the implementation says so
 * or the group lies in one node or holds one GPU a node. */
double
coll_grad_allreduce(const Analysis *an, Group g, double bytes)
{
	int64_t k = g.per_node;
	int64_t share = k * (g.sharing < 1 ? 1 : g.sharing);
	Group node = { k, k, 1 }, across = { (g.size + k - 1) / k, 1, share };

	if (!an->q.impl.hier_allreduce || k <= 1 || g.size <= k)
		return coll_allreduce(an, g, bytes);
	return coll_reduce_scatter(an, node, bytes) +
	       coll_allreduce(an, across, bytes / (double)k) + coll_allgather(an, node, bytes);
}

double
coll_allgather(const Analysis *an, Group g, double bytes)
{
	return coll_time(an, COLL_ALLGATHER, g, bytes);
}

double
coll_reduce_scatter(const Analysis *an, Group g, double bytes)
{
	return coll_time(an, COLL_REDUCESCATTER, g, bytes);
}

double
coll_broadcast(const Analysis *an, Group g, double bytes)
{
	return coll_time(an, COLL_BROADCAST, g, bytes);
}

double
coll_alltoall(const Analysis *an, Group g, double bytes)
{
	return coll_time(an, COLL_ALLTOALL, g, bytes);
}
