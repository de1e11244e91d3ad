/* mapping.c -- a process grid on the cluster's nodes: the groups each
 * collective runs in and each rank's node and GPU (model.h, Mapping).
 * The default cost model (physical.c, pipeline.c) prices the collectives
 * on these groups; a plan (placement.c) places its ranks so. */
#include "model/model.h"

static int64_t
min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

/* The all-reduce of the gradients runs among the GPUs that hold the same
 * weights: every GPU when no dimension of the grid shards them (data,
 * spatial, ds), packed min(p, g) to a node.  Otherwise the r replicas of
 * each shard (df: p1), one per model-parallel group: all in one node when
 * the whole grid fits in one (p <= g); else taken as one per node, with
 * the node's min(q, g) positions running their all-reduces at the same
 * time through its links.  That last case is the cost model's assumption
 * as published (docs/model.md, "Hybrids"): when q < g the ranks put g / q
 * groups on a node, so r / (g / q) nodes hold the replicas, which only
 * changes the network levels the ring reaches and the tree's shape. */
static Group
grad_group(const int64_t grid[DIM_COUNT], int64_t p, int64_t q, int64_t g)
{
	int64_t r = 1;

	for (int d = 0; d < DIM_COUNT; d++)
		if (grid[d] > 0 && !grid_dim_info[d].shards)
			r *= grid[d];
	if (r == p)
		return (Group){ p, min64(p, g), 1 };
	return (Group){ r, p <= g ? r : 1, p <= g ? 1 : min64(q, g) };
}

/* n GPUs one in every `stride` consecutive ranks (data-inner: a group
 * across the replica blocks): g / stride of them to a node while a block
 * fits in one, else one; where it spans nodes, the node's min(stride, g)
 * positions run such groups at the same time through its links. */
static Group
strided(int64_t n, int64_t stride, int64_t g)
{
	int64_t k = stride <= g ? min64(n, g / stride) : 1;

	return (Group){ n, k, n > k ? min64(stride, g) : 1 };
}

void
grid_map(const System *s, const int64_t grid[DIM_COUNT], Nesting nest, Mapping *m)
{
	int64_t g = s->gpus_per_node, u, o, t = 0;
	GridDim order[DIM_COUNT];

	*m = (Mapping){ .replicas = grid[DIM_DATA] > 0 ? grid[DIM_DATA] : 1, .q = 1,
			.gpus_per_node = g };
	nest_order(nest, order);
	for (int i = 0; i < DIM_COUNT; i++) {
		GridDim d = order[i];
		if (grid[d] <= 0)
			continue;
		m->dim[m->ndim++] = d;
		if (d != DIM_DATA)
			m->q *= grid[d];
		if (d != DIM_DATA && d != DIM_PIPELINE) /* the split inside a layer: a
							   stage's tensor x context (dptc) */
			t = t ? t * grid[d] : grid[d];
	}
	if (grid[DIM_PIPELINE] <= 1 || !t)
		t = m->q;
	m->gpus = m->replicas * m->q;
	m->nest = m->replicas > 1 && m->q > 1 ? nest : NEST_MODEL_INNER;
	/* pipeline-outer is another order only with data, pipeline and a
	 * split: without a pipeline (or one of a single stage, which places
	 * every rank where model-inner does) it is model-inner, without a
	 * split data-inner */
	if (m->nest == NEST_PIPELINE_OUTER && (grid[DIM_PIPELINE] <= 1 || t == m->q))
		m->nest = grid[DIM_PIPELINE] > 1 ? NEST_DATA_INNER : NEST_MODEL_INNER;
	u = m->inner = m->nest == NEST_DATA_INNER	    ? m->replicas
		       : m->nest == NEST_PIPELINE_OUTER ? m->replicas * t
							: m->q;
	o = m->gpus / u;
	if (u <= g) {
		m->groups_per_node = g / u;
		m->nodes_per_group = 1;
		m->nodes = (o + m->groups_per_node - 1) / m->groups_per_node;
		m->per_node = min64(o, m->groups_per_node) * u;
	} else {
		m->groups_per_node = 0;
		m->nodes_per_group = (u + g - 1) / g;
		m->nodes = o * m->nodes_per_group;
		m->per_node = g;
	}
	m->in_node = min64(m->gpus, g);
	m->grad = grad_group(grid, m->gpus, m->q, g);
	if (m->nest == NEST_MODEL_INNER) {
		m->model = (Group){ m->q, min64(m->q, g), 1 };
		m->split = (Group){ t, min64(t, g), 1 };
	} else if (m->nest == NEST_PIPELINE_OUTER) {
		/* a stage's block: its replicas of t consecutive ranks each;
		 * a shard's replicas one in every t of them, or (dptc) in
		 * every tensor group of them: data x context */
		int64_t cc = grid[DIM_CONTEXT] > 0 ? grid[DIM_CONTEXT] : 1;
		m->split = (Group){ t, min64(t, g), 1 };
		m->model = m->split;
		m->grad = grid[DIM_SPATIAL] > 0 /* dps: whole weights, the block's */
				  ? (Group){ u, min64(u, g), 1 }
				  : strided(m->replicas * cc, t / cc, g);
	} else {
		m->model = strided(m->q, m->replicas, g);
		m->split = strided(t, m->replicas, g);
		if (m->grad.size < m->gpus) /* a shard's replicas: one block */
			m->grad = (Group){ m->replicas, min64(m->replicas, g), 1 };
	}
	/* Megatron's groups: tensor innermost, context next to it (data
	 * innermost under data-inner: both strided over the replicas) */
	{
		int64_t tt = grid[DIM_TENSOR] > 0 ? grid[DIM_TENSOR] : 1,
			cc = grid[DIM_CONTEXT] > 0 ? grid[DIM_CONTEXT] : 1,
			r = m->nest == NEST_DATA_INNER ? m->replicas : 1;
		m->tensor = strided(tt, r, g);
		m->context = strided(cc, tt * r, g);
		/* data-inner: a shard's replicas are its r consecutive ranks in
		 * each of the C ring positions (data x context), the node's
		 * other tensor coordinates' groups beside them */
		if (m->nest == NEST_DATA_INNER && cc > 1) {
			int64_t per = r <= g ? r * m->context.per_node : g;
			m->grad = (Group){ r * cc, per, r * cc > per ? g / per : 1 };
		}
		/* model-inner: the ring's C GPUs in each of the replicas' blocks
		 * of q, a node holding min(r, g / q) whole blocks, or (a block
		 * larger) the ring's GPUs in it */
		if (m->nest == NEST_MODEL_INNER && cc > 1) {
			int64_t per = m->q <= g ? min64(m->replicas, g / m->q) * cc
						: m->context.per_node,
				n = m->replicas * cc;
			m->grad = (Group){ n, per, n > per ? g / per : 1 };
		}
	}
	/* pipeline-outer: the stages are a block apart, their sends across
	 * nodes once the grid spans more than one */
	m->across = m->nest == NEST_PIPELINE_OUTER ? m->gpus > g
						   : m->model.size > m->model.per_node;
}

void
grid_rank(const Mapping *m, int64_t r, int64_t *node, int *gpu)
{
	int64_t o = r / m->inner, i = r % m->inner, g = m->gpus_per_node;

	if (m->inner <= g) {
		*node = o / m->groups_per_node;
		*gpu = (int)((o % m->groups_per_node) * m->inner + i);
	} else {
		*node = o * m->nodes_per_group + i / g;
		*gpu = (int)(i % g);
	}
}
