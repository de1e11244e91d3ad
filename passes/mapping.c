/* mapping.c -- a process grid on the cluster's nodes: the groups each
 * collective runs in and each rank's node and GPU (model.h, Mapping).
 * The default cost model (physical.c, pipeline.c) prices the collectives
 * on these groups; a plan (placement.c) places its ranks so. */
#include "passes/model.h"

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

void
grid_map(const System *s, const int64_t grid[DIM_COUNT], Mapping *m)
{
	int64_t g = s->gpus_per_node;

	*m = (Mapping){ .replicas = grid[DIM_DATA] > 0 ? grid[DIM_DATA] : 1, .q = 1,
			.gpus_per_node = g };
	for (int i = 0; i < DIM_COUNT; i++) {
		GridDim d = grid_order[i];
		if (grid[d] <= 0)
			continue;
		m->dim[m->ndim++] = d;
		if (d != DIM_DATA)
			m->q *= grid[d];
	}
	m->gpus = m->replicas * m->q;
	if (m->q <= g) {
		m->groups_per_node = g / m->q;
		m->nodes_per_group = 1;
		m->nodes = (m->replicas + m->groups_per_node - 1) / m->groups_per_node;
		m->per_node = min64(m->replicas, m->groups_per_node) * m->q;
	} else {
		m->groups_per_node = 0;
		m->nodes_per_group = (m->q + g - 1) / g;
		m->nodes = m->replicas * m->nodes_per_group;
		m->per_node = g;
	}
	m->in_node = min64(m->gpus, g);
	m->across = m->q > g;
	m->model = (Group){ m->q, min64(m->q, g), 1 };
	m->grad = grad_group(grid, m->gpus, m->q, g);
}

void
grid_rank(const Mapping *m, int64_t r, int64_t *node, int *gpu)
{
	int64_t o = r / m->q, i = r % m->q, g = m->gpus_per_node;

	if (m->q <= g) {
		*node = o / m->groups_per_node;
		*gpu = (int)((o % m->groups_per_node) * m->q + i);
	} else {
		*node = o * m->nodes_per_group + i / g;
		*gpu = (int)(i % g);
	}
}
