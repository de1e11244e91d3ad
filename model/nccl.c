/* nccl.c -- a collective's time as NCCL prices and chooses it (docs/model.md,
 * "Collectives").
 *
 * NCCL (github.com/NVIDIA/nccl, src/graph/tuning.cc since 2.5) prices every
 * algorithm and protocol of a collective as a latency plus the bytes over a
 * bandwidth and runs the cheapest.  The algorithms: a ring (2 (n - 1) steps
 * for an all-reduce, n - 1 for an all-gather or reduce-scatter: latency
 * linear in the ranks); a double binary tree between the nodes with a chain
 * inside each (2.4 on: latency in log2 of the nodes); CollNet, the
 * network's switches reducing (SHARP, 2.6 on); NVLS, an NVSwitch reducing
 * inside the node (2.17 on), and NVLS with a tree between nodes.  The
 * protocols trade bandwidth for latency: LL (8-byte stores of 4 bytes of
 * data and a flag: a quarter of the bandwidth, the lowest latency), LL128
 * (120 of 128 bytes, Volta and later over NVLink, 2.5 on) and Simple.
 *
 * The constants are NCCL's, of three releases: v2.5.6-1 (used for 2.3 to
 * 2.6; 2.3 and 2.4 chose by thresholds, not by this model, and had no
 * LL128), v2.7.8-1 (for 2.7 to 2.17) and v2.19.3-1 (2.18 on; 2.23 changed
 * the tree's Simple latencies and 2.24 the LL bandwidth and added PAT,
 * which are not restated).  What NCCL learns from its topology search --
 * the bandwidth of a channel and how many channels -- comes from the
 * system: the bus bandwidth of the group's path (model/comm.c's path:
 * the link in a node, or the node's network share above it) is NCCL's
 * nChannels x bw, and the channels are that bandwidth in NVLink links
 * (topo.h: 20 GB/s a link on Volta and later).  NCCL's network hop
 * latency gains the system's switch levels (NCCL's graph latencyInter). */
#include "model/model.h"

#include <math.h>
#include <string.h>

enum { A_TREE, A_RING, A_COLLNET, A_COLLNET_DIRECT, A_NVLS, A_NVLS_TREE, A_COUNT };
enum { P_LL, P_LL128, P_SIMPLE, P_COUNT };
enum { HW_NVLINK, HW_PCI, HW_NET };

/* One release's constants: latencies in us, bandwidths in GB/s. */
typedef struct Era {
	const char *tag;
	float base[A_COUNT][P_COUNT];        /* baseLat */
	float hw[3][A_COUNT][P_COUNT];       /* hwLat: NVLink, PCI, network */
	float tree_fix[P_COUNT][23];         /* treeCorrectionFactor, 64 B up */
	int tree_fix_n;
	float ll128_cap[COLL_NCCL];          /* v2.5.6: LL128's ceiling a
	                                        collective (ll128MaxBw); v2.7.8:
	                                        per channel (ll128MaxBwPerCh) */
} Era;

static const Era era25 = {
	"v2.5.6-1",
	/* src/graph/tuning.cc: Tree, Ring */
	.base = { [A_TREE] = { 4.4, 4.4, 0 }, [A_RING] = { 3.6, 3.6, 8.4 } },
	.hw = { [HW_NVLINK] = { [A_TREE] = { .5, 1.9, 28 }, [A_RING] = { .4, 2.5, 5.7 } },
		[HW_PCI] = { [A_TREE] = { 1.0, 1.9, 28 }, [A_RING] = { 1.0, 2.5, 5.7 } },
		[HW_NET] = { [A_TREE] = { 5.0, 7.5, 50 }, [A_RING] = { .9, 2.5, 6.6 } } },
	/* src/enqueue.cc */
	.tree_fix = { { 1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6,
			.5, .5, .5, .6, .7, .8, .9, .9, 1.0, 1.0, 1.0 },
		      { 1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .8, .7,
			.7, .7, .6, .6, .7, .7, .8, .8, .9, .9, 1.0 },
		      { .9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6,
			.5, .5, .5, .5, .5, .5, .6, .6, .7, .8, .9 } },
	.tree_fix_n = 22,
	.ll128_cap = { [COLL_BROADCAST] = 113.0, [COLL_ALLGATHER] = 110.0,
		       [COLL_REDUCESCATTER] = 91.0, [COLL_ALLREDUCE] = 100.0 },
};

static const Era era27 = {
	"v2.7.8-1",
	/* src/graph/tuning.cc: Tree, Ring, CollNet */
	.base = { [A_TREE] = { 4.4, 4.4, 0 }, [A_RING] = { 3.6, 10.0, 8.4 },
		  [A_COLLNET] = { 4.4, 4.4, 0 } },
	.hw = { [HW_NVLINK] = { [A_TREE] = { .52, 1.2, 28 }, [A_RING] = { .47, 1.9, 3.4 },
				[A_COLLNET] = { .5, 1.2, 4.0 } },
		[HW_PCI] = { [A_TREE] = { 1.0, 1.9, 28 }, [A_RING] = { 1.0, 2.5, 5.7 },
			     [A_COLLNET] = { 1.0, 1.9, 5.5 } },
		[HW_NET] = { [A_TREE] = { 5.0, 8.5, 50 }, [A_RING] = { 2.7, 4.0, 9.6 },
			     [A_COLLNET] = { 5.0, 5.0, 10.7 } } },
	.tree_fix = { { 1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6,
			.5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0 },
		      { 1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6,
			.6, .6, .5, .6, .6, .7, .7, .8, .9, .9, 1.0 },
		      { .9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6,
			.5, .5, .5, .5, .5, .5, .6, .6, .7, .8, .9 } },
	.tree_fix_n = 22,
	.ll128_cap = { [COLL_BROADCAST] = 18.8, [COLL_ALLGATHER] = 18.3,
		       [COLL_REDUCESCATTER] = 15.2, [COLL_ALLREDUCE] = 16.7 },
};

static const Era era219 = {
	"v2.19.3-1",
	/* src/graph/tuning.cc: Tree, Ring, CollNet Chain and Direct, NVLS,
	 * NVLS Tree */
	.base = { [A_TREE] = { 6.8, 14.0, 0 }, [A_RING] = { 6.6, 14.0, 8.4 } },
	.hw = { [HW_NVLINK] = { [A_TREE] = { .6, 1.25, 28 }, [A_RING] = { .6, 1.9, 3.4 },
				[A_COLLNET] = { 0, 0, 2.8 }, [A_COLLNET_DIRECT] = { 0, 0, 3.7 },
				[A_NVLS] = { 0, 0, 23 }, [A_NVLS_TREE] = { 0, 0, 23 } },
		[HW_PCI] = { [A_TREE] = { 1.0, 1.9, 28 }, [A_RING] = { 1.0, 2.5, 5.7 },
			     [A_COLLNET] = { 0, 0, 2.8 }, [A_COLLNET_DIRECT] = { 0, 0, 3.7 } },
		[HW_NET] = { [A_TREE] = { 5.0, 8.5, 28 }, [A_RING] = { 2.7, 4.0, 14.0 },
			     [A_COLLNET] = { 0, 0, 30 }, [A_COLLNET_DIRECT] = { 0, 0, 31 },
			     [A_NVLS] = { 0, 0, 18 }, [A_NVLS_TREE] = { 0, 0, 14 } } },
	.tree_fix = { { 1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5,
			.4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0 },
		      { 1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6,
			.6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0 },
		      { .9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5,
			.5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9 } },
	.tree_fix_n = 23,
};

/* v2.19.3's ceilings by GPU (Volta, Ampere, Hopper) and nodes (1, 2, more):
 * LL's (Intel hosts past one node), LL128's and the tree's per channel. */
static const double ll_max19[3][3] = { { 39.0, 39.0, 20.4 }, { 87.7, 39.0, 20.4 },
				       { 87.7, 39.0, 20.4 } };
static const double ring_ll128_ch19[3] = { 20.0, 20.0, 36.7 };
static const double tree_ll128_ch19[3][3] = { { 20.0, 20.0, 20.0 }, { 20.0, 20.0, 20.0 },
					      { 36.7, 36.7, 29.0 } };
static const double tree_ch19[3][3] = { { 26.5, 18.5, 10.0 }, { 24.0, 23.6, 17.8 },
					{ 38.7, 41.4, 36.0 } };

/* NCCL's log2 (utils.h): the floor. */
static int
log2i(double n)
{
	int l = 0;

	for (long v = (long)n; v >>= 1;)
		l++;
	return l;
}

/* What the system and the group give NCCL's model. */
typedef struct Setting {
	const Era *era;
	int v;            /* the version, 2.3.7 = 20307 */
	int arch;         /* 0 Volta and older, 1 Ampere, 2 Hopper and later */
	double cc;        /* the compute capability, 7.0; 0: not given */
	int intra_hw;     /* HW_NVLINK or HW_PCI */
	double ranks, nodes, ppn, channels;
	double bw;        /* the path's bus bandwidth, GB/s */
	double intra_bw;  /* a node's link, GB/s */
	double extra;     /* the switch levels' latency a network hop adds, us */
} Setting;

/* Whether algorithm a exists in the version on this system and group. */
static bool
algo_exists(const System *s, const Setting *st, Coll c, int a)
{
	bool multi = st->nodes > 1;

	switch (a) {
	case A_RING: return true;
	case A_TREE:
		/* double binary trees: 2.4 on, all-reduce only, and the
		 * system's fabric must allow them */
		return c == COLL_ALLREDUCE && st->v >= 20400 && s->tree;
	case A_COLLNET:
		/* the network reduces (SHARP): 2.7 on here (2.6's first
		 * CollNet is not restated), across nodes */
		return c == COLL_ALLREDUCE && st->v >= 20700 && s->sharp && multi;
	case A_COLLNET_DIRECT:
		/* 2.19's direct CollNet needs NVSwitch in the node */
		return c == COLL_ALLREDUCE && st->era == &era219 && s->sharp && multi &&
		       s->nvls;
	case A_NVLS:
		/* the NVSwitch reduces: 2.18 on (2.17's first NVLS is not
		 * restated); all-reduce in one node, or across nodes with the
		 * network's CollNet */
		return st->era == &era219 && s->nvls &&
		       (c == COLL_ALLREDUCE || !multi) &&
		       (c == COLL_ALLREDUCE || c == COLL_ALLGATHER || c == COLL_REDUCESCATTER) &&
		       (!multi || s->sharp);
	case A_NVLS_TREE:
		return c == COLL_ALLREDUCE && st->era == &era219 && s->nvls && multi &&
		       s->tree;
	}
	return false;
}

/* Whether protocol p runs: LL everywhere; LL128 from 2.5 on NVLink
 * between Volta (2.5), Ampere (2.7) or Hopper (2.19) GPUs; NVLS and
 * CollNet (2.19) Simple only. */
static bool
proto_runs(const Setting *st, int a, int p)
{
	if ((a == A_NVLS || a == A_NVLS_TREE || a == A_COLLNET_DIRECT ||
	     (a == A_COLLNET && st->era == &era219)) && p != P_SIMPLE)
		return false;
	if (a == A_COLLNET && p == P_LL128)
		return false; /* v2.7.8: "CollNet does not support LL128" */
	if (p != P_LL128)
		return true;
	if (st->v < 20500 || st->intra_hw != HW_NVLINK)
		return false;
	if (st->era == &era25)
		return st->cc >= 7.0 && st->cc < 8.0;
	if (st->era == &era27)
		return st->cc >= 7.0 && st->cc < 9.0;
	return st->cc >= 7.0 && st->cc < 10.0;
}

/* Algorithm a, protocol p: NCCL's latency (us) and bandwidth (GB/s) for
 * collective c, the model's refinements in the release's order. */
static void
nccl_model(const Setting *st, Coll c, int a, int p, double *lat, double *bw)
{
	const Era *e = st->era;
	bool multi = st->nodes > 1;
	int n2 = st->nodes <= 2 ? (int)st->nodes - 1 : 2;
	double nsteps = c == COLL_ALLREDUCE	? 2 * (st->ranks - 1)
			: c == COLL_BROADCAST	? st->ranks
						: st->ranks - 1;
	double inter_steps, busbw = st->bw, ratio, intra, inter;
	int ai = a == A_COLLNET_DIRECT ? A_COLLNET_DIRECT : a;

	if (a == A_COLLNET || a == A_COLLNET_DIRECT)
		busbw = st->intra_bw; /* NCCL's bwIntra: the switches reduce */
	if (a == A_NVLS)
		busbw = multi && st->bw < st->intra_bw ? st->bw : st->intra_bw;
	if (a == A_NVLS_TREE)
		busbw = fmin(st->intra_bw, st->nodes <= 2 ? st->bw : st->bw / 2);

	/* the refinements ("Various model refinements") */
	if (e == &era25) {
		if (a == A_RING && p == P_LL)
			busbw *= 1.0 / 4.0;
		if (a == A_RING && p == P_LL128)
			busbw = fmin(busbw * 120.0 / 128.0, e->ll128_cap[c]);
		if (a == A_TREE)
			busbw = fmin(busbw * .9, multi ? 70.0 : 90.0);
		if (a == A_TREE && p == P_LL)
			busbw *= 1.0 / 3.0;
		if (a == A_TREE && p == P_LL128)
			busbw *= 7.0 / 9.0;
	} else if (e == &era27) {
		bool cc80 = st->cc >= 8.0 && st->cc < 9.0;
		double tree_max = st->nodes > 2 ? (cc80 && p == P_LL128 ? 105.0 : 80.0)
						: (cc80 && p == P_LL128 ? 130.0 : 110.0);
		if (cc80)
			busbw = fmin(busbw, 235.0);
		if (a == A_RING && p == P_LL)
			busbw *= multi || c == COLL_ALLREDUCE ? 1.0 / 4.0 : 1.0 / 3.0;
		if (a == A_RING && p == P_LL128)
			busbw = fmin(busbw * (st->ppn < 2 ? 0.7 : 0.92),
				     e->ll128_cap[c] * st->channels);
		if (a == A_TREE)
			busbw = fmin(busbw * .9, tree_max);
		if (a == A_TREE && p == P_LL)
			busbw *= 1.0 / 3.8;
		if (a == A_TREE && p == P_LL128)
			busbw = fmin(busbw * (st->nodes == 1 ? 7.0 / 9.0 : 0.915),
				     e->ll128_cap[c] * st->channels * 7.0 / 9.0);
		if (a == A_COLLNET)
			busbw *= .9;
		if (a == A_COLLNET && p == P_LL)
			busbw *= 1.0 / 6.0; /* GDR read disabled on both sides */
	} else {
		double llmax = ll_max19[st->nodes == 1 ? st->arch : 0][n2];
		if (a == A_RING && p == P_LL)
			busbw = fmin(llmax, busbw * (multi || c == COLL_ALLREDUCE ? 1.0 / 4.0
										  : 1.0 / 3.0));
		if (a == A_RING && p == P_LL128)
			busbw = fmin(busbw * (st->ppn < 2 ? 0.7 : 0.92),
				     st->channels * ring_ll128_ch19[st->arch]);
		if (a == A_TREE)
			busbw = fmin(busbw * .92, st->channels * tree_ch19[st->arch][n2]);
		if (a == A_TREE && p == P_LL)
			busbw = fmin(busbw * 1.0 / 3.8, llmax);
		if (a == A_TREE && p == P_LL128)
			busbw = fmin(busbw * (st->nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0),
				     st->channels * tree_ll128_ch19[st->arch][n2]);
		if (a == A_COLLNET_DIRECT) {
			/* every GPU wants a NIC of its own: the GPU-to-NIC
			 * ratio, half of it above 1 */
			double r = st->ppn / st->channels;
			busbw /= r - (r - 1) / 2;
			if (st->cc >= 9.0)
				busbw *= .85;
		}
	}
	ratio = a == A_RING		       ? st->ranks / nsteps
		: a == A_NVLS || a == A_NVLS_TREE ? (e == &era219 ? 5.0 / 6.0 : .5)
						  : .5;
	*bw = busbw * ratio;

	/* the latency */
	*lat = e->base[ai][p];
	intra = e->hw[st->intra_hw][ai][p];
	inter = e->hw[HW_NET][ai][p] + st->extra;
	if (e == &era27 && multi && p == P_LL)
		intra *= 1.8;
	if (e == &era219 && p == P_SIMPLE)
		inter += st->extra; /* "the flush extra latency" */
	if (a == A_RING) {
		if (c == COLL_BROADCAST) {
			/* one hop, the chunks pipelined round the ring
			 * (sameChannels) */
			*lat += multi ? e->hw[HW_NET][A_RING][p] : intra;
		} else if (e == &era25) {
			/* every step at the network's latency once the ring
			 * leaves the node; the switches crossed 2 (nodes - 1) */
			*lat += nsteps * (multi ? e->hw[HW_NET][A_RING][p] : intra) +
				(multi ? 2 * (st->nodes - 1) * st->extra : 0);
		} else {
			inter_steps = !multi ? 0
				      : c == COLL_ALLREDUCE
					      ? (e == &era219 ? 2 * st->nodes : 2 * (st->nodes - 1))
					      : st->nodes - 1;
			if (e == &era219 && multi) /* the network's post overhead */
				intra = fmax(intra, p == P_SIMPLE ? 3.0 : 1.0);
			*lat += (nsteps - inter_steps) * intra + inter_steps * inter;
		}
	} else if (a == A_TREE) {
		*lat += 2 * ((st->ppn - 1) * intra + log2i(st->nodes) * inter);
	} else if (a == A_COLLNET_DIRECT) {
		*lat += 2 * (fmin(1, st->ppn - 1) * intra + (st->ppn - 1) * 0.4) + inter;
	} else if (a == A_COLLNET) {
		*lat += 2 * (st->ppn - 1) * intra + inter;
	} else if (a == A_NVLS) {
		*lat = intra + (multi ? inter : 0);
	} else {
		*lat += intra + 2 * log2i(st->nodes) * inter;
	}
}

/* ncclTopoGetAlgoTime: the latency and the bytes over the bandwidth, the
 * tree's bandwidth corrected for medium sizes, a multi-node ring's
 * Simple all-reduce latency raised by its plateau. */
static double
algo_time(const Setting *st, Coll c, int a, int p, double bytes)
{
	const Era *e = st->era;
	double lat, bw;
	int log_size = log2i(bytes / 64);

	nccl_model(st, c, a, p, &lat, &bw);
	if (bw <= 0)
		return INFINITY;
	if (a == A_TREE && log_size < e->tree_fix_n)
		bw *= e->tree_fix[p][log_size];
	if (a == A_RING && p == P_SIMPLE && st->nodes > 1 && c == COLL_ALLREDUCE) {
		if (e == &era27 && bytes >= st->ranks / 16.0 * 65536)
			lat *= 1.9;
		if (e == &era219 && bytes / (st->channels * st->ranks) >= 64)
			lat *= st->cc > 0 && st->cc < 8.0 ? 1.9 : 1.4;
	}
	return lat * 1e-6 + bytes / (bw * 1e9);
}

double
nccl_time(const System *s, int version, Coll c, Group g, NcclPath path, double bytes,
	  NcclPick *pick)
{
	Setting st = { 0 };
	double best = INFINITY;
	int k = g.per_node < 1 ? 1 : (int)g.per_node;

	if (pick)
		*pick = (NcclPick){ -1, -1 };
	if (g.size <= 1 || bytes <= 0)
		return 0;
	st.v = version;
	st.era = version < 20700 ? &era25 : version < 21800 ? &era27 : &era219;
	st.cc = s->compute_capability;
	st.arch = st.cc >= 9.0 ? 2 : st.cc >= 8.0 ? 1 : 0;
	st.intra_hw = s->intra && strcmp(s->intra, "pcie") == 0 ? HW_PCI : HW_NVLINK;
	st.ranks = (double)g.size;
	st.ppn = (double)(k < g.size ? k : g.size);
	st.nodes = ceil(st.ranks / st.ppn);
	st.bw = path.bw / 1e9;
	st.intra_bw = s->intra_bw / 1e9;
	st.extra = path.levels * 1e6;
	st.channels = nccl_channels(s);
	for (int a = 0; a < A_COUNT; a++) {
		if (!algo_exists(s, &st, c, a))
			continue;
		for (int p = 0; p < P_COUNT; p++) {
			double t;
			if (!proto_runs(&st, a, p))
				continue;
			t = algo_time(&st, c, a, p, bytes);
			if (t < best) {
				best = t;
				if (pick)
					*pick = (NcclPick){ a, p };
			}
		}
	}
	return best;
}

/* topo.h: a channel carries one NVLink's 20 GB/s (Volta and later). */
double
nccl_channels(const System *s)
{
	return fmax(1, ceil(s->intra_bw / 20e9));
}

double
nccl_sms_held(const Analysis *an)
{
	const System *s = an->q.sys;

	if (an->q.impl.nccl <= 0 || s->host_device || s->sms <= 0)
		return 0;
	return fmin(nccl_channels(s), (double)s->sms) / (double)s->sms;
}

const char *
nccl_algo_name(int a)
{
	static const char *const name[A_COUNT] = { "tree", "ring", "collnet-chain",
						   "collnet-direct", "nvls", "nvls-tree" };
	return a >= 0 && a < A_COUNT ? name[a] : "none";
}

const char *
nccl_proto_name(int p)
{
	static const char *const name[P_COUNT] = { "LL", "LL128", "Simple" };
	return p >= 0 && p < P_COUNT ? name[p] : "none";
}
