/* test_strategy.c -- the strategy table and grid text (ir/grid.c), the
 * mapping of a grid onto nodes (model/mapping.c), the cost-model
 * interface as strategy.c uses it (model/costmodel.h), and pipelines
 * whose plan lists the stage costs the prediction made (pipeline.c,
 * placement.c). */
#include "harness.h"
#include "plan/analysis.h"
#include "model/model.h"
#include "model/reuse.h"

#include <math.h>


/* ---- the table and the grid text ----------------------------------------- */

static void
the_table_names_strategies_and_their_grids(void **state)
{
	char buf[512];

	(void)state;
	assert_int_equal(strategy_lookup("df"), STRAT_DF);
	assert_int_equal(strategy_lookup("dp"), STRAT_DP);
	assert_int_equal(strategy_lookup("pd"), STRAT_COUNT);
	assert_int_equal(grid_strategy(DIM_BIT(DIM_DATA) | DIM_BIT(DIM_SPATIAL)), STRAT_DS);
	assert_int_equal(grid_strategy(DIM_BIT(DIM_PIPELINE)), STRAT_PIPELINE);
	assert_int_equal(grid_strategy(DIM_BIT(DIM_DATA) | DIM_BIT(DIM_PIPELINE)), STRAT_DP);
	assert_int_equal(grid_strategy(DIM_BIT(DIM_PIPELINE) | DIM_BIT(DIM_FILTER)), STRAT_COUNT);
	assert_true(STRATEGY_PIPELINED(STRAT_DP) && !STRATEGY_PIPELINED(STRAT_DS));
	assert_int_equal(strategy_info[STRAT_DF].grids, GRID_FACTORS);
	assert_int_equal(strategy_info[STRAT_CHANNEL].grids, GRID_WHOLE);
	assert_string_equal(strategy_list(buf, sizeof buf),
			    "data, spatial, pipeline, filter, channel, df, ds, dp, dpf, dpc, dps, "
			    "tensor, dt, dpt, context, dc, dtc, dptc");
	assert_string_equal(grid_shape_list(buf, sizeof buf),
			    "data, spatial, pipeline, filter, channel, data+filter, data+spatial, "
			    "data+pipeline, data+pipeline+filter, data+pipeline+channel, "
			    "data+spatial+pipeline, tensor, data+tensor, data+pipeline+tensor, "
			    "context, data+context, data+tensor+context, "
			    "data+pipeline+tensor+context");
	assert_int_equal(grid_strategy(DIM_BIT(DIM_DATA) | DIM_BIT(DIM_CONTEXT)), STRAT_DC);
	assert_int_equal(grid_strategy(DIM_BIT(DIM_DATA) | DIM_BIT(DIM_TENSOR) |
				       DIM_BIT(DIM_CONTEXT)),
			 STRAT_DTC);
	assert_int_equal(grid_strategy(DIM_BIT(DIM_DATA) | DIM_BIT(DIM_PIPELINE) |
				       DIM_BIT(DIM_TENSOR)),
			 STRAT_DPT);
	assert_int_equal(grid_strategy(DIM_BIT(DIM_DATA) | DIM_BIT(DIM_PIPELINE) |
				       DIM_BIT(DIM_TENSOR) | DIM_BIT(DIM_CONTEXT)),
			 STRAT_DPTC);
	assert_int_equal(strategy_info[STRAT_DPTC].grids, GRID_FACTORS4);
	/* --grid naming some dimensions: the smallest strategy with them
	 * all, never two as small (every set of dimensions, the table as it
	 * is: a row that made two would make --grid ambiguous) */
	for (unsigned dims = 1; dims < DIM_BIT(DIM_COUNT); dims++) {
		StrategyKind tie, k = grid_cover(dims, &tie);
		assert_int_equal(tie, STRAT_COUNT);
		if (grid_strategy(dims) != STRAT_COUNT)
			assert_int_equal(k, grid_strategy(dims));
	}
	{
		StrategyKind tie;
		assert_int_equal(grid_cover(DIM_BIT(DIM_PIPELINE) | DIM_BIT(DIM_CONTEXT), &tie),
				 STRAT_DPTC);
		assert_int_equal(grid_cover(DIM_BIT(DIM_TENSOR) | DIM_BIT(DIM_CONTEXT), &tie),
				 STRAT_DTC);
		assert_int_equal(grid_cover(DIM_BIT(DIM_PIPELINE) | DIM_BIT(DIM_TENSOR), &tie),
				 STRAT_DPT);
		assert_int_equal(grid_cover(DIM_BIT(DIM_FILTER) | DIM_BIT(DIM_SPATIAL), &tie),
				 STRAT_COUNT);
		assert_int_equal(grid_cover(0, &tie), STRAT_COUNT);
	}
	/* a plan's rank order, outer to inner */
	assert_int_equal(grid_order[0], DIM_DATA);
	assert_int_equal(grid_order[1], DIM_PIPELINE);
	assert_int_equal(grid_order[2], DIM_SPATIAL);
	assert_int_equal(grid_order[3], DIM_CHANNEL);
	assert_int_equal(grid_order[4], DIM_FILTER);
	/* Megatron's tp-cp-ep-dp-pp: tensor fastest, context next */
	assert_int_equal(grid_order[5], DIM_CONTEXT);
	assert_int_equal(grid_order[6], DIM_TENSOR);
	assert_true(grid_dim_info[DIM_FILTER].shards);
	assert_false(grid_dim_info[DIM_SPATIAL].shards);
	/* context parallelism keeps the weights whole */
	assert_false(grid_dim_info[DIM_CONTEXT].shards);
}

/* dptc's grids of p GPUs are every p = data x pipeline x tensor x context
 * with all four above 1, once each, in increasing order of (pipeline,
 * tensor, context), as a brute-force count finds them for every p up to
 * 96: 64 has 10 (powers of two 2^i, 2^j, 2^k with i, j, k >= 1 and
 * i + j + k <= 5), 16 one (2 x 2 x 2 x 2). */
static void
dptc_grids_are_every_four_factorization(void **state)
{
	(void)state;
	for (int64_t p = 2; p <= 96; p++) {
		int64_t grid[DIM_COUNT], it = 0, want = 0, got = 0, last = 0;
		for (int64_t a = 2; a <= p; a++)
			for (int64_t b = 2; a * b <= p; b++)
				for (int64_t c = 2; a * b * c <= p; c++)
					want += p % (a * b * c) == 0 && p / (a * b * c) > 1;
		while (grid_next(STRAT_DPTC, p, &it, grid)) {
			int64_t key = (grid[DIM_PIPELINE] * 128 + grid[DIM_TENSOR]) * 128 +
				      grid[DIM_CONTEXT];
			assert_int_equal(grid_gpus(grid), p);
			assert_int_equal(grid_dims(grid), strategy_info[STRAT_DPTC].dims);
			assert_true(grid[DIM_DATA] > 1 && grid[DIM_PIPELINE] > 1 &&
				    grid[DIM_TENSOR] > 1 && grid[DIM_CONTEXT] > 1);
			assert_true(key > last);
			last = key;
			got++;
		}
		assert_int_equal(got, want);
		if (p == 64)
			assert_int_equal(got, 10);
		if (p == 16)
			assert_int_equal(got, 1);
	}
}

static void
grid_text_reads_and_writes(void **state)
{
	int64_t g[DIM_COUNT];
	char bad[8], buf[GRID_TEXT_MAX];

	(void)state;
	assert_int_equal(grid_parse("spatial=4,,data=16,", g, bad, sizeof bad), GRID_OK);
	assert_int_equal(g[DIM_DATA], 16);
	assert_int_equal(g[DIM_SPATIAL], 4);
	assert_int_equal(g[DIM_FILTER], 0);
	assert_int_equal(grid_dims(g), DIM_BIT(DIM_DATA) | DIM_BIT(DIM_SPATIAL));
	assert_int_equal(grid_gpus(g), 64);
	assert_string_equal(grid_format(g, NULL, 0, buf, sizeof buf), "data=16,spatial=4");
	/* reports in dimension order, plans outer to inner */
	assert_int_equal(grid_parse("spatial=2,pipeline=3,filter=5,channel=7", g, bad, sizeof bad),
			 GRID_OK);
	assert_string_equal(grid_format(g, NULL, 0, buf, sizeof buf),
			    "spatial=2,pipeline=3,filter=5,channel=7");
	assert_string_equal(grid_format(g, grid_order, DIM_COUNT, buf, sizeof buf),
			    "pipeline=3,spatial=2,channel=7,filter=5");
	assert_string_equal(grid_format(g, grid_order, DIM_COUNT, buf, 12), "pipeline=3,");
	assert_int_equal(grid_parse("", g, bad, sizeof bad), GRID_OK);
	assert_string_equal(grid_format(g, NULL, 0, buf, sizeof buf), "");
	/* the first problem from the left */
	assert_int_equal(grid_parse("data", g, bad, sizeof bad), GRID_SYNTAX);
	assert_int_equal(grid_parse("data=4,data=2", g, bad, sizeof bad), GRID_SYNTAX);
	assert_int_equal(grid_parse("dat=4", g, bad, sizeof bad), GRID_SYNTAX);
	assert_int_equal(grid_parse("=4", g, bad, sizeof bad), GRID_SYNTAX);
	assert_int_equal(grid_parse("bogus=1,data=0", g, bad, sizeof bad), GRID_SYNTAX);
	assert_int_equal(grid_parse("data=0,bogus=1", g, bad, sizeof bad), GRID_VALUE);
	assert_string_equal(bad, "0");
	assert_int_equal(grid_parse("data=4x,spatial=2", g, bad, sizeof bad), GRID_VALUE);
	assert_string_equal(bad, "4x");
	assert_int_equal(grid_parse("data=", g, bad, sizeof bad), GRID_VALUE);
	assert_string_equal(bad, "");
	assert_int_equal(grid_parse("data=16777217", g, bad, sizeof bad), GRID_VALUE);
	assert_string_equal(bad, "1677721"); /* truncated to fit */
	assert_int_equal(grid_parse("data=16777216", g, bad, sizeof bad), GRID_OK);
	assert_int_equal(grid_parse("data=4096,spatial=8192", g, bad, sizeof bad), GRID_TOO_MANY);
	assert_int_equal(grid_parse("data=16777216,spatial=16777216,pipeline=16777216,"
				    "filter=16777216,channel=16777216", g, bad, sizeof bad),
			 GRID_TOO_MANY);
}

/* ---- the mapping --------------------------------------------------------- */

static void
assert_group(Group g, int64_t size, int64_t per_node, int64_t sharing)
{
	assert_int_equal(g.size, size);
	assert_int_equal(g.per_node, per_node);
	assert_int_equal(g.sharing, sharing);
}

/* abci: 4 GPUs per node. */
static void
mapping_places_groups_inside_nodes(void **state)
{
	Fx *fx = *state;
	const System *s = fx_abci(fx);
	int64_t data16[DIM_COUNT] = { [DIM_DATA] = 16 };
	int64_t df[DIM_COUNT] = { [DIM_DATA] = 8, [DIM_FILTER] = 2 };
	int64_t df1[DIM_COUNT] = { [DIM_DATA] = 2, [DIM_FILTER] = 2 };
	int64_t ds[DIM_COUNT] = { [DIM_DATA] = 2, [DIM_SPATIAL] = 8 };
	int64_t odd[DIM_COUNT] = { [DIM_DATA] = 3, [DIM_CHANNEL] = 3 };
	int64_t dpf[DIM_COUNT] = { [DIM_DATA] = 2, [DIM_PIPELINE] = 2, [DIM_FILTER] = 2 };
	int64_t dp[DIM_COUNT] = { [DIM_DATA] = 4, [DIM_PIPELINE] = 2 };
	Mapping m;
	int64_t node;
	int gpu;

	grid_map(s, data16, NEST_MODEL_INNER, &m);
	assert_int_equal(m.gpus, 16);
	assert_int_equal(m.q, 1);
	assert_int_equal(m.nodes, 4);
	assert_int_equal(m.per_node, 4);
	assert_int_equal(m.in_node, 4);
	assert_false(m.across);
	assert_group(m.grad, 16, 4, 1);
	assert_group(m.model, 1, 1, 1);

	/* filter shards the weights: one replica per node, the node's two
	 * positions sharing its links (the published model) */
	grid_map(s, df, NEST_MODEL_INNER, &m);
	assert_int_equal(m.ndim, 2);
	assert_int_equal(m.dim[0], DIM_DATA);
	assert_int_equal(m.dim[1], DIM_FILTER);
	assert_int_equal(m.groups_per_node, 2);
	assert_int_equal(m.nodes, 4);
	assert_group(m.grad, 8, 1, 2);
	assert_group(m.model, 2, 2, 1);
	grid_map(s, df1, NEST_MODEL_INNER, &m); /* all in one node */
	assert_group(m.grad, 2, 2, 1);

	/* spatial replicates the weights: every GPU all-reduces */
	grid_map(s, ds, NEST_MODEL_INNER, &m);
	assert_true(m.across);
	assert_int_equal(m.nodes_per_group, 2);
	assert_int_equal(m.nodes, 4);
	assert_group(m.grad, 16, 4, 1);
	assert_group(m.model, 8, 4, 1);
	grid_rank(&m, 13, &node, &gpu); /* group 1, member 5 */
	assert_int_equal(node, 3);
	assert_int_equal(gpu, 1);

	/* 3 does not divide 4: one group to a node, its last GPU idle */
	grid_map(s, odd, NEST_MODEL_INNER, &m);
	assert_int_equal(m.groups_per_node, 1);
	assert_int_equal(m.nodes, 3);
	assert_int_equal(m.per_node, 3);
	grid_rank(&m, 4, &node, &gpu);
	assert_int_equal(node, 1);
	assert_int_equal(gpu, 1);

	/* data-inner: df's 8 replicas of a shard on 2 nodes of their own, one
	 * ring to a NIC; the filter pairs one GPU on each of them, the 4
	 * positions of a node each running such a pair through its links */
	grid_map(s, df, NEST_DATA_INNER, &m);
	assert_int_equal(m.nest, NEST_DATA_INNER);
	assert_int_equal(m.dim[0], DIM_FILTER);
	assert_int_equal(m.dim[1], DIM_DATA);
	assert_int_equal(m.inner, 8);
	assert_int_equal(m.nodes, 4);
	assert_group(m.grad, 8, 4, 1);
	assert_group(m.model, 2, 1, 4);
	assert_true(m.across);
	grid_rank(&m, 9, &node, &gpu); /* filter 1, replica 1 */
	assert_int_equal(node, 2);
	assert_int_equal(gpu, 1);
	/* 2 replicas of a 2-way split: both pairs share the node */
	grid_map(s, df1, NEST_DATA_INNER, &m);
	assert_group(m.grad, 2, 2, 1);
	assert_group(m.model, 2, 2, 1);
	assert_false(m.across);
	/* ds keeps its all-reduce over every GPU; data alone nests one way */
	grid_map(s, ds, NEST_DATA_INNER, &m);
	assert_group(m.grad, 16, 4, 1);
	assert_group(m.model, 8, 2, 2);
	grid_map(s, data16, NEST_DATA_INNER, &m);
	assert_int_equal(m.nest, NEST_MODEL_INNER);

	/* pipeline-outer (Megatron's tp-dp-pp): dpf's data=2 x filter=2
	 * block of a stage fills a node, so a shard's 2 replicas all-reduce
	 * inside it, where model-inner puts them on 2 nodes, one ring to
	 * each of the node's 4 positions; stage 1 is the second node */
	grid_map(s, dpf, NEST_PIPELINE_OUTER, &m);
	assert_int_equal(m.nest, NEST_PIPELINE_OUTER);
	assert_int_equal(m.dim[0], DIM_PIPELINE);
	assert_int_equal(m.dim[1], DIM_DATA);
	assert_int_equal(m.dim[2], DIM_FILTER);
	assert_int_equal(m.inner, 4);
	assert_int_equal(m.nodes, 2);
	assert_group(m.split, 2, 2, 1);
	assert_group(m.grad, 2, 2, 1);
	assert_true(m.across);
	grid_rank(&m, 5, &node, &gpu); /* stage 1, replica 0, filter 1 */
	assert_int_equal(node, 1);
	assert_int_equal(gpu, 1);
	grid_map(s, dpf, NEST_MODEL_INNER, &m);
	assert_group(m.grad, 2, 1, 4);
	/* without a split it is data-inner, without a pipeline model-inner */
	grid_map(s, dp, NEST_PIPELINE_OUTER, &m);
	assert_int_equal(m.nest, NEST_DATA_INNER);
	grid_map(s, df, NEST_PIPELINE_OUTER, &m);
	assert_int_equal(m.nest, NEST_MODEL_INNER);
}

/* ---- the cost-model interface -------------------------------------------- */

enum { MAX_CALLS = 64 };
static struct {
	int n;
	StrategyKind kind[MAX_CALLS];
	int64_t grid[MAX_CALLS][DIM_COUNT];
	const bool *cut_after;
} calls;

/* A model of round numbers: whole-grid strategies take 10 + kind
 * seconds; a hybrid 1 + |p2 - 3|, so p2 = 3 is its best; ds does not
 * fit. */
static void
fake_predict(const PredictCtx *c, StrategyKind kind, const int64_t grid[DIM_COUNT],
	     Candidate *k)
{
	int64_t p2 = 0;

	assert_true(calls.n < MAX_CALLS);
	calls.kind[calls.n] = kind;
	memcpy(calls.grid[calls.n++], grid, sizeof calls.grid[0]);
	calls.cut_after = c->cut_after;
	for (int d = 0; d < DIM_COUNT; d++)
		if (d != DIM_DATA && grid[d])
			p2 = grid[d];
	memcpy(k->grid, grid, sizeof k->grid);
	k->global_batch = 64;
	k->max_gpus = 1000;
	k->t.compute = strategy_info[kind].grids == GRID_FACTORS ? 1.0 + fabs((double)p2 - 3)
								  : 10.0 + kind;
	k->t.grad = 0.5;
	k->mem.total = kind == STRAT_DS || kind == STRAT_DP ? 2 * c->an->q.sys->mem : 1;
}

static const CostModel fake = { "fake", fake_predict, false, false, NULL, NULL };

/* Megatron's context rings: C GPUs one in every tensor group (tensor
 * innermost, context next), inside a node while tensor x context fits
 * one; the gradients all-reduced over data x context. abci: 4 GPUs a
 * node. */
static void
context_rings_sit_next_to_tensor_groups(void **state)
{
	Fx *fx = *state;
	const System *s = fx_abci(fx);
	int64_t dtc[DIM_COUNT] = { [DIM_DATA] = 2, [DIM_TENSOR] = 2, [DIM_CONTEXT] = 2 };
	int64_t wide[DIM_COUNT] = { [DIM_DATA] = 1, [DIM_TENSOR] = 4, [DIM_CONTEXT] = 2 };
	int64_t dc[DIM_COUNT] = { [DIM_DATA] = 2, [DIM_CONTEXT] = 4 };
	int64_t dptc[DIM_COUNT] = { [DIM_DATA] = 2, [DIM_PIPELINE] = 2, [DIM_TENSOR] = 2,
				    [DIM_CONTEXT] = 2 };
	Mapping m;

	grid_map(s, dtc, NEST_MODEL_INNER, &m);
	assert_int_equal(m.q, 4);
	assert_group(m.tensor, 2, 2, 1);
	assert_group(m.context, 2, 2, 1);
	/* data x context: each replica's block of 4 a node, the ring's two
	 * GPUs in it, the node's two tensor coordinates' groups beside */
	assert_group(m.grad, 4, 2, 2);
	/* data-inner: the 2 replicas consecutive at each ring position, a
	 * node one ring position */
	grid_map(s, dtc, NEST_DATA_INNER, &m);
	assert_group(m.context, 2, 1, 4);
	assert_group(m.grad, 4, 2, 2);
	/* dptc pipeline-outer (tp-cp-dp-pp): a stage's split is tensor x
	 * context, its block of 8 two nodes; a shard's data x context
	 * replicas one in every tensor group of it */
	grid_map(s, dptc, NEST_PIPELINE_OUTER, &m);
	assert_group(m.split, 4, 4, 1);
	assert_group(m.tensor, 2, 2, 1);
	assert_group(m.context, 2, 2, 1);
	assert_group(m.grad, 4, 2, 2);
	/* tensor=4 fills a node: each ring's two GPUs on two nodes, the
	 * node's four rings crossing its network at once */
	grid_map(s, wide, NEST_MODEL_INNER, &m);
	assert_group(m.tensor, 4, 4, 1);
	assert_group(m.context, 2, 1, 4);
	/* no tensor dimension: a ring of 4 is a node; every GPU holds the
	 * whole weights, all 8 reduce them */
	grid_map(s, dc, NEST_MODEL_INNER, &m);
	assert_group(m.context, 4, 4, 1);
	assert_group(m.grad, 8, 4, 1);
}

static void
strategies_enumerate_grids_and_rank_any_model(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_run(fx, "model m { input x: 3x8x8; c = conv(x, 4, kernel=3, pad=1); }",
			  PASS_MEMORY);
	Analysis an = { .eng = fx->eng,
			.q.sys = fx_abci(fx),
			.q.impl = fx_impl(fx_abci(fx)),
			.q.set.gpus = 12,
			.q.set.batch_per_gpu = 2,
			.q.set.dataset_size = 640 };
	bool cuts[1] = { true };
	StrategyOpts o = { .mask = (1u << STRAT_COUNT) - 1, .model = &fake, .cut_after = cuts };
	const Candidate *df = &an.cand[STRAT_DF];

	calls.n = 0;
	assert_true(strategies_run(g, &an, &o));
	/* five whole grids of 12, then 12 = 6x2, 4x3, 3x4, 2x6 for each hybrid */
	assert_int_equal(calls.n, 5 + 4 + 4 + 4 + 3 + 3 + 3);
	assert_int_equal(calls.kind[2], STRAT_PIPELINE);
	assert_int_equal(calls.grid[2][DIM_PIPELINE], 12);
	assert_int_equal(grid_dims(calls.grid[2]), DIM_BIT(DIM_PIPELINE));
	assert_int_equal(calls.kind[5], STRAT_DF);
	assert_int_equal(calls.grid[5][DIM_DATA], 6);
	assert_int_equal(calls.grid[5][DIM_FILTER], 2);
	assert_int_equal(calls.grid[8][DIM_DATA], 2);
	assert_int_equal(calls.grid[8][DIM_FILTER], 6);
	assert_int_equal(calls.grid[12][DIM_SPATIAL], 6);
	assert_int_equal(calls.kind[13], STRAT_DP);
	assert_int_equal(calls.grid[16][DIM_DATA], 2);
	assert_int_equal(calls.grid[16][DIM_PIPELINE], 6);
	/* dpf: 12 = 3x2x2, 2x2x3, 2x3x2 (data x pipeline x filter) */
	assert_int_equal(calls.kind[17], STRAT_DPF);
	assert_int_equal(calls.grid[17][DIM_DATA], 3);
	assert_int_equal(calls.grid[18][DIM_FILTER], 3);
	assert_int_equal(calls.grid[19][DIM_PIPELINE], 3);
	/* dpc: the same three, data x pipeline x channel */
	assert_int_equal(calls.kind[20], STRAT_DPC);
	assert_int_equal(calls.grid[20][DIM_CHANNEL], 2);
	assert_int_equal(calls.grid[21][DIM_CHANNEL], 3);
	assert_int_equal(calls.grid[21][DIM_FILTER], 0);
	assert_ptr_equal(calls.cut_after, cuts);
	/* the hybrid keeps its best factorization; strategy.c adds the parts */
	assert_int_equal(df->grid[DIM_DATA], 4);
	assert_int_equal(df->grid[DIM_FILTER], 3);
	assert_true(df->analysed && df->computable && df->feasible);
	NEAR(df->t.communication, 0.5);
	NEAR(df->t.total, 1.5);
	NEAR(df->epoch, 1.5 * 10);
	assert_string_equal(df->bottleneck, "compute");
	assert_false(an.cand[STRAT_DS].feasible);
	assert_string_equal(an.cand[STRAT_DS].reason, "does not fit in GPU memory");
	assert_int_equal(an.best, STRAT_DF);
	NEAR(an.decision.runner_up, 10.5 / 1.5); /* data: 10 + 0.5 */

	/* p prime: a hybrid has no grid */
	an.q.set.gpus = 7;
	calls.n = 0;
	assert_true(strategies_run(g, &an, &o));
	assert_int_equal(calls.n, 5);
	assert_false(df->computable);
	assert_true(df->analysed);
	assert_string_equal(df->reason, "needs two factors above 1 (p = p1 x p2)");

	/* --grid: that grid only */
	o.forced = true;
	o.kind = STRAT_DS;
	memset(o.grid, 0, sizeof o.grid);
	o.grid[DIM_DATA] = o.grid[DIM_SPATIAL] = 2;
	calls.n = 0;
	assert_true(strategies_run(g, &an, &o));
	assert_int_equal(calls.n, 1);
	assert_int_equal(an.best, -1);
	assert_false(an.cand[STRAT_DATA].analysed);
}

static void
cost_models_are_found_by_name(void **state)
{
	char buf[64];

	(void)state;
	assert_ptr_equal(cost_model_find("default"), &cost_model_physical);
	assert_ptr_equal(cost_model_find("paper"), &cost_model_paper);
	assert_null(cost_model_find("physical"));
	assert_string_equal(cost_model_list(buf, sizeof buf), "default, paper");
}

/* ---- a pipeline's stage costs, predicted once ----------------------------- */

static const char four_convs[] =
	"model m { input x: 3x32x32;\n"
	"  a = conv(x, 64, kernel=3, pad=1); b = conv(a, 64, kernel=3, pad=1);\n"
	"  c = conv(b, 64, kernel=3, pad=1); d = conv(c, 64, kernel=3, pad=1); }";

static void
a_pipeline_keeps_each_stage_cost(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_run(fx, four_convs, PASS_MEMORY);
	Analysis an = { .eng = fx->eng,
			.q.sys = fx_abci(fx),
			.q.impl = fx_impl(fx_abci(fx)),
			.q.set.gpus = 2,
			.q.set.batch_per_gpu = 8,
			.q.set.dataset_size = 800,
			.q.set.sample_bytes = 1000 };
	StrategyOpts o = { 0 };
	int64_t grid[DIM_COUNT] = { [DIM_PIPELINE] = 2 };
	Candidate k;
	double t = 0, m = 0;

	assert_true(strategy_predict(g, &an, &o, STRAT_PIPELINE, grid, &k));
	assert_int_equal(k.stages, 2);
	assert_non_null(k.stage_time);
	assert_non_null(k.stage_mem);
	for (int i = 0; i < k.stages; i++) {
		t = fmax(t, k.stage_time[i]);
		m = fmax(m, k.stage_mem[i]);
	}
	/* GPipe: M + S - 1 steps of the slowest stage; the fullest GPU */
	NEAR(t * (double)(k.micro_batches + 1), k.t.compute + k.t.bubble);
	NEAR(m, k.mem.total);
	/* Table III gives no stage times */
	o.model = &cost_model_paper;
	assert_true(strategy_predict(g, &an, &o, STRAT_PIPELINE, grid, &k));
	assert_null(k.stage_time);
}

/* allreduce = "hierarchical" (NVIDIA's Horovod, HOROVOD_ALLREDUCE_MODE=1):
 * data parallelism over 16 nodes of abci's 4 GPUs exchanges its gradients
 * as a reduce-scatter inside the node, an all-reduce of a quarter over
 * the 16 GPUs of one local rank (the node's 4 such communicators sharing
 * its links) and an all-gather inside; on NCCL 2.3's rings that is 2 x 15
 * + 2 x 3 steps and three base latencies where the flat ring takes 2 x 63
 * (396 against 629 us here), so it is cheaper; inside
 * one node it is the flat all-reduce. */
static void
a_hierarchical_allreduce_is_three_collectives(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_run(fx, four_convs, PASS_MEMORY);
	Analysis an = { .eng = fx->eng,
			.q.sys = fx_abci(fx),
			.q.impl = fx_impl(fx_abci(fx)),
			.q.set.gpus = 64,
			.q.set.batch_per_gpu = 8,
			.q.set.dataset_size = 6400,
			.q.set.sample_bytes = 1000 };
	StrategyOpts o = { 0 };
	int64_t grid[DIM_COUNT] = { [DIM_DATA] = 64 }, one[DIM_COUNT] = { [DIM_DATA] = 4 };
	Group node = { 4, 4, 1 }, across = { 16, 1, 4 };
	Candidate flat, hier;
	double b = 0;

	for (int i = 0; i < g->nlayer; i++)
		b += (double)g->layer[i].cost.params * 4;
	an.q.impl.overlap_grad = false;
	an.q.impl.nccl = 20307;
	assert_true(strategy_predict(g, &an, &o, STRAT_DATA, grid, &flat));
	NEAR(flat.t.grad, coll_allreduce(&an, (Group){ 64, 4, 1 }, b));
	an.q.impl.hier_allreduce = true;
	assert_true(strategy_predict(g, &an, &o, STRAT_DATA, grid, &hier));
	NEAR(hier.t.grad, coll_reduce_scatter(&an, node, b) + coll_allreduce(&an, across, b / 4) +
				  coll_allgather(&an, node, b));
	assert_true(hier.t.grad < flat.t.grad);
	an.q.set.gpus = 4;
	assert_true(strategy_predict(g, &an, &o, STRAT_DATA, one, &hier));
	NEAR(hier.t.grad, coll_allreduce(&an, node, b));
}

/* dp: two copies of the 2-stage pipeline, each on its own batch of b = 8
 * (the global batch 16): the same stages, compute and bubble as the
 * pipeline alone on 8 samples, plus each stage's gradients all-reduced
 * over its two copies, the larger stage's exchange exposed. */
static void
dp_is_the_pipeline_twice_with_a_stage_exchange(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_run(fx, four_convs, PASS_MEMORY);
	Analysis an = { .eng = fx->eng,
			.q.sys = fx_abci(fx),
			.q.impl = fx_impl(fx_abci(fx)),
			.q.set.gpus = 2,
			.q.set.batch_per_gpu = 8,
			.q.set.dataset_size = 800,
			.q.set.sample_bytes = 1000 };
	StrategyOpts o = { 0 };
	int64_t pg[DIM_COUNT] = { [DIM_PIPELINE] = 2 };
	int64_t dg[DIM_COUNT] = { [DIM_DATA] = 2, [DIM_PIPELINE] = 2 };
	Candidate pp, dp;
	Mapping map;
	double most = 0;

	assert_true(strategy_predict(g, &an, &o, STRAT_PIPELINE, pg, &pp));
	an.q.set.gpus = 4;
	assert_true(strategy_predict(g, &an, &o, STRAT_DP, dg, &dp));
	assert_int_equal(dp.global_batch, 16);
	assert_int_equal(dp.grid[DIM_DATA], 2);
	assert_int_equal(dp.stages, pp.stages);
	assert_int_equal(dp.micro_batches, pp.micro_batches);
	NEAR(dp.t.compute, pp.t.compute);
	NEAR(dp.t.bubble, pp.t.bubble);
	assert_true(pp.t.grad == 0 && dp.t.grad > 0);
	grid_map(an.q.sys, dg, NEST_MODEL_INNER, &map);
	assert_int_equal(map.grad.size, 2); /* the copies of a stage */
	for (int i = 0, first = 0; i < dp.stages; first = dp.stage_end[i] + 1, i++) {
		double w = 0;
		for (int j = first; j <= dp.stage_end[i]; j++)
			w += (double)g->layer[j].cost.params;
		most = fmax(most, coll_allreduce(&an, map.grad, w * 4));
	}
	NEAR(dp.t.grad, most);
}

/* dpf and dpc, Megatron's three dimensions: inside each of the 2 pipeline
 * stages the convolutions split by filter (dpf; column-parallel) or by
 * input channel (dpc; row-parallel) over 2 GPUs, each doing half a layer's
 * work plus the layer's collectives; the 2 copies of the pipeline exchange
 * each stage's half of the weights (dpc: the biases whole).  The stage times, the GPipe schedule
 * over them and the exchange, from the layers' times and collectives
 * computed here. */
static void
stages_split(Fx *fx, const Graph *g, StrategyKind kind, GridDim dim, bool channel)
{
	Analysis an = { .eng = fx->eng,
			.q.sys = fx_abci(fx),
			.q.impl = fx_impl(fx_abci(fx)),
			.q.set.gpus = 8,
			.q.set.batch_per_gpu = 8,
			.q.set.dataset_size = 800,
			.q.set.sample_bytes = 1000,
			.q.set.micro_batches = 4 };
	StrategyOpts o = { 0 };
	int64_t grid[DIM_COUNT] = { [DIM_DATA] = 2, [DIM_PIPELINE] = 2 };
	Group tp = { 2, 2, 1 };
	Mapping map;
	Candidate k;
	double slow = 0, col = 0, most = 0, n = 8.0 / 4;

	grid[dim] = 2;
	assert_true(strategy_predict(g, &an, &o, kind, grid, &k));
	assert_true(k.computable);
	assert_int_equal(k.stages, 2);
	assert_int_equal(k.grid[dim], 2);
	assert_int_equal(k.global_batch, 16);
	grid_map(an.q.sys, grid, NEST_MODEL_INNER, &map);
	for (int i = 0, first = 0; i < k.stages; first = k.stage_end[i] + 1, i++) {
		double t = 0, c = 0, w = 0, kernel;
		for (int j = first; j <= k.stage_end[i]; j++) {
			const Layer *l = &g->layer[j];
			int64_t most_ways;
			bool split = model_split_layer(g, l, channel, &most_ways);
			double share = split ? 0.5 : 1;
			double cj = split ? split_collective(&an, g, l, tp, n, channel) : 0;
			t += layer_time(&an, g, l, n, share, dim, false) +
			     layer_time(&an, g, l, n, share, dim, true) + cj;
			c += cj;
			/* dpc keeps a split layer's bias whole (added after the
			 * partial sums) */
			kernel = channel ? (double)layer_kernel_params(l) : (double)l->cost.params;
			w += split ? kernel * share + ((double)l->cost.params - kernel)
				   : (double)l->cost.params;
		}
		if (t > slow)
			slow = t, col = c;
		most = fmax(most, coll_allreduce(&an, map.grad, w * 4));
	}
	NEAR(k.t.compute + k.t.layer + k.t.bubble, (4 + 2 - 1) * slow);
	NEAR(k.t.layer, 4 * col);
	assert_true(k.t.layer > 0);
	NEAR(k.t.grad, most);
}

/* dps: inside each of the 2 stages the convolutions split by rows over 2
 * GPUs of a node, each doing half a layer's work plus its halo exchange;
 * the last conv (the last layer with 2 rows or more) gathers the strips.
 * The stage times and the schedule from halo_time and spatial_gather; the
 * halos are point-to-point time, the gather a layer collective. */
static void
dps_splits_each_stage_by_rows(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_run(fx, four_convs, PASS_MEMORY);
	Analysis an = { .eng = fx->eng,
			.q.sys = fx_abci(fx),
			.q.impl = fx_impl(fx_abci(fx)),
			.q.set.gpus = 8,
			.q.set.batch_per_gpu = 8,
			.q.set.dataset_size = 800,
			.q.set.sample_bytes = 1000,
			.q.set.micro_batches = 4 };
	StrategyOpts o = { 0 };
	int64_t grid[DIM_COUNT] = { [DIM_DATA] = 2, [DIM_PIPELINE] = 2, [DIM_SPATIAL] = 2 };
	Group strip = { 2, 2, 1 };
	Candidate k;
	double slow = 0, hal = 0, gat = 0, n = 8.0 / 4;

	assert_int_equal(spatial_limit(g, 2), 3);
	assert_true(strategy_predict(g, &an, &o, STRAT_DPS, grid, &k));
	assert_true(k.computable);
	assert_int_equal(k.stages, 2);
	assert_int_equal(k.grid[DIM_SPATIAL], 2);
	for (int i = 0, first = 0; i < k.stages; first = k.stage_end[i] + 1, i++) {
		double t = 0, h = 0, c = 0;
		for (int j = first; j <= k.stage_end[i]; j++) {
			const Layer *l = &g->layer[j];
			double hj = halo_time(&an, g, l, n, 2, false);
			double cj = j == 3 ? spatial_gather(&an, g, 3, n, strip) : 0;
			assert_true(hj > 0);
			t += layer_time(&an, g, l, n, 0.5, DIM_SPATIAL, false) +
			     layer_time(&an, g, l, n, 0.5, DIM_SPATIAL, true) + hj + cj;
			h += hj, c += cj;
		}
		if (t > slow)
			slow = t, hal = h, gat = c;
	}
	NEAR(k.t.compute + k.t.layer + 4 * hal + k.t.bubble, (4 + 2 - 1) * slow);
	NEAR(k.t.layer, 4 * gat);
	assert_true(k.t.p2p > 4 * hal * (1 - 1e-9));
	/* more strips than rows: beyond the limit */
	grid[DIM_DATA] = 1, grid[DIM_SPATIAL] = 64;
	assert_true(strategy_predict(g, &an, &o, STRAT_DPS, grid, &k));
	assert_false(k.computable);
	assert_string_equal(k.reason, "more GPUs than rows in the first layer's output");
}

/* The pipeline's lower bound (pipeline.c) never prunes a grid that would
 * beat the epoch asked for: every pipelined strategy's grids of 8 GPUs,
 * micro-batches free or fixed, predicted with `beat` just above their own
 * epoch, are predicted as without it; with `beat` below the bound they
 * are pruned, named. */
static void
pipeline_bound_keeps_what_could_win(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_run(fx, four_convs, PASS_MEMORY);
	Analysis an = { .eng = fx->eng,
			.q.sys = fx_abci(fx),
			.q.impl = fx_impl(fx_abci(fx)),
			.q.set.gpus = 8,
			.q.set.batch_per_gpu = 8,
			.q.set.dataset_size = 800,
			.q.set.sample_bytes = 1000 };
	static const StrategyKind kinds[] = { STRAT_PIPELINE, STRAT_DP, STRAT_DPF, STRAT_DPC,
					      STRAT_DPS };
	int checked = 0;

	for (int m = 0; m <= 4; m += 4)
		for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
			int64_t grid[DIM_COUNT], it = 0;
			an.q.set.micro_batches = m;
			while (grid_next(kinds[i], 8, &it, grid)) {
				StrategyOpts o = { 0 };
				Candidate k, b;
				assert_true(strategy_predict(g, &an, &o, kinds[i], grid, &k));
				if (!k.computable)
					continue;
				o.beat = k.epoch * (1 + 1e-9);
				assert_true(strategy_predict(g, &an, &o, kinds[i], grid, &b));
				assert_true(b.computable);
				NEAR(b.epoch, k.epoch);
				o.beat = k.epoch * 1e-6;
				assert_true(strategy_predict(g, &an, &o, kinds[i], grid, &b));
				assert_ptr_equal(b.reason, pipeline_bounded);
				checked++;
			}
		}
	assert_true(checked >= 10);
}

static void
dpf_and_dpc_split_each_stage(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_run(fx, four_convs, PASS_MEMORY);
	Analysis an = { .eng = fx->eng,
			.q.sys = fx_abci(fx),
			.q.impl = fx_impl(fx_abci(fx)),
			.q.set.gpus = 8,
			.q.set.batch_per_gpu = 8,
			.q.set.dataset_size = 800,
			.q.set.sample_bytes = 1000,
			.q.set.micro_batches = 4 };
	StrategyOpts o = { 0 };
	int64_t grid[DIM_COUNT] = { [DIM_DATA] = 1, [DIM_PIPELINE] = 2, [DIM_FILTER] = 128 };
	Candidate k;

	stages_split(fx, g, STRAT_DPF, DIM_FILTER, false);
	stages_split(fx, g, STRAT_DPC, DIM_CHANNEL, true);
	/* more ways than a layer has filters or input channels: beyond the
	 * limit */
	assert_true(strategy_predict(g, &an, &o, STRAT_DPF, grid, &k));
	assert_false(k.computable);
	assert_string_equal(k.reason, "more GPUs than the fewest filters of a layer");
	grid[DIM_FILTER] = 0, grid[DIM_CHANNEL] = 128;
	assert_true(strategy_predict(g, &an, &o, STRAT_DPC, grid, &k));
	assert_false(k.computable);
	assert_string_equal(k.reason, "more GPUs than the fewest input channels of a layer");
}

/* Recomputation inside pipeline stages, on a chain of 16 ReLUs of 4,000
 * B each (each saves its output), 2 stages of 8, one sample, segments of
 * 4: a stage keeps what enters each of its segments (stage 2: the tensors
 * into layers 8 and 12, 8,000 B), holds one segment while recomputing it
 * (16,000 B), and runs its forward again (8 layers' forward).  ZeRO-1
 * over dp's 2 copies halves each GPU's optimizer state; stages 2 and 3
 * do not combine with a pipeline. */
static void
pipelines_recompute_and_shard_the_optimizer(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_relu_chain(fx, 16);
	Settings set = settings_default;
	Analysis an;
	StrategyOpts o = { 0 };
	int64_t grid[DIM_COUNT] = { [DIM_PIPELINE] = 2 };
	int64_t dpg[DIM_COUNT] = { [DIM_DATA] = 2, [DIM_PIPELINE] = 2 };
	Candidate k, z0, z1;
	double fwd = 0;

	assert_non_null(g);
	set.recompute = 4;
	set.gpus = 2;
	set.batch_per_gpu = 1;
	set.micro_batches = 1;
	assert_true(analysis_setup(&an, fx->eng, &set, g, fx_abci(fx)));
	assert_true(strategy_predict(g, &an, &o, STRAT_PIPELINE, grid, &k));
	assert_int_equal(k.stages, 2);
	assert_int_equal(k.stage_end[0], 7);
	NEAR(k.mem.activations, 8000 + 16000);
	for (int i = 8; i < 16; i++)
		fwd += layer_time(&an, g, &g->layer[i], 1, 1, DIM_DATA, false);
	NEAR(k.t.recompute, fwd);

	set = settings_default;
	set.gpus = 4;
	set.opt = OPT_ADAM;
	assert_true(analysis_setup(&an, fx->eng, &set, g, fx_abci(fx)));
	an.q.set.zero = 0;
	assert_true(strategy_predict(g, &an, &o, STRAT_DP, dpg, &z0));
	an.q.set.zero = 1;
	assert_true(strategy_predict(g, &an, &o, STRAT_DP, dpg, &z1));
	NEAR(z1.mem.optimizer, z0.mem.optimizer / 2);
	NEAR(z1.mem.weights, z0.mem.weights);
	an.q.set.zero = 2;
	assert_true(strategy_predict(g, &an, &o, STRAT_DP, dpg, &k));
	assert_false(k.computable);
	assert_string_equal(k.reason,
			    "ZeRO stages 2 and 3 do not combine with pipeline parallelism");
}

/* --sync-bn 2 in dp: each stage's batch norms (64 channels each) share
 * their statistics with the stage's other copy, for every micro-batch:
 * forward an all-gather of 2 x (2 x 64 + 1) fp32 values, backward an
 * all-reduce of 2 x 64, a kernel after each (torch/nn/modules/
 * _functions.py, SyncBatchNorm, PyTorch 1.13).  Every step of the
 * schedule, M + S - 1 of them, takes the larger stage's; without
 * --sync-bn, nothing. */
static void
dp_prices_each_stage_sync_bn(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_run(fx,
			  "model m { input x: 3x32x32;\n"
			  "  a = conv(x, 64, kernel=3, pad=1); p = batchnorm(a);\n"
			  "  b = conv(p, 64, kernel=3, pad=1); q = batchnorm(b);\n"
			  "  c = conv(q, 64, kernel=3, pad=1); r = batchnorm(c);\n"
			  "  d = conv(r, 64, kernel=3, pad=1); }",
			  PASS_MEMORY);
	const System *s = fx_abci(fx);
	Analysis an = { .eng = fx->eng,
			.q.sys = s,
			.q.impl = fx_impl(s),
			.q.set.gpus = 4,
			.q.set.batch_per_gpu = 8,
			.q.set.dataset_size = 800,
			.q.set.sample_bytes = 1000 };
	StrategyOpts o = { 0 };
	int64_t dg[DIM_COUNT] = { [DIM_DATA] = 2, [DIM_PIPELINE] = 2 };
	double gather = 2 * (2 * 64 + 1) * 4, sums = 2 * 64 * 4, most = 0;
	Candidate off, on;
	Mapping map;
	Group two;

	assert_true(strategy_predict(g, &an, &o, STRAT_DP, dg, &off));
	assert_true(off.t.sync_bn == 0);
	an.q.set.sync_bn = 2;
	assert_true(strategy_predict(g, &an, &o, STRAT_DP, dg, &on));
	assert_int_equal(on.stages, 2);
	grid_map(s, dg, NEST_MODEL_INNER, &map);
	two = (Group){ 2, map.grad.per_node < 2 ? map.grad.per_node : 2, 1 };
	for (int i = 0, first = 0; i < on.stages; first = on.stage_end[i] + 1, i++) {
		double t = 0;
		for (int j = first; j <= on.stage_end[i]; j++)
			if (g->layer[j].op == OP_BATCHNORM)
				t += coll_allgather(&an, two, gather) +
				     coll_allreduce(&an, two, sums) + 2 * s->kernel_lat;
		most = fmax(most, t);
	}
	assert_true(most > 0);
	NEAR(on.t.sync_bn, ((double)on.micro_batches + 1) * most);
	NEAR(on.t.compute, off.t.compute);
}

/* --sync-bn K whose groups would not be of one size: a data dimension K
 * does not divide is a grid beyond a limit with the reason naming K and
 * the dimension, no times, in data as in dp and df; K at most the data
 * dimension (clamped, as priced: 3 over 2 ranks is one group of 2) and a
 * K that divides it are priced. */
static void
sync_bn_groups_of_one_size(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_run(fx,
			  "model m { input x: 3x32x32;\n"
			  "  a = conv(x, 64, kernel=3, pad=1); p = batchnorm(a);\n"
			  "  b = conv(p, 64, kernel=3, pad=1); q = batchnorm(b);\n"
			  "  c = conv(q, 64, kernel=3, pad=1); }",
			  PASS_MEMORY);
	const System *s = fx_abci(fx);
	Analysis an = { .eng = fx->eng,
			.q.sys = s,
			.q.impl = fx_impl(s),
			.q.set.gpus = 12,
			.q.set.batch_per_gpu = 8,
			.q.set.dataset_size = 960,
			.q.set.sample_bytes = 1000,
			.q.set.sync_bn = 8 };
	StrategyOpts o = { 0 };
	int64_t data12[DIM_COUNT] = { [DIM_DATA] = 12 };
	int64_t dp6[DIM_COUNT] = { [DIM_DATA] = 6, [DIM_PIPELINE] = 2 };
	int64_t df4[DIM_COUNT] = { [DIM_DATA] = 4, [DIM_FILTER] = 3 };
	int64_t df2[DIM_COUNT] = { [DIM_DATA] = 2, [DIM_FILTER] = 6 };
	Candidate k;

	assert_null(sync_bn_refusal(g, &an, 16));
	assert_null(sync_bn_refusal(g, &an, 4)); /* one group of 4 */
	assert_int_equal(sync_bn_group(&an, 4), 4);
	assert_string_equal(sync_bn_refusal(g, &an, 12),
			    "--sync-bn 8 does not divide the data dimension's 12 ranks "
			    "into groups of equal size");
	assert_true(strategy_predict(g, &an, &o, STRAT_DATA, data12, &k));
	assert_false(k.computable);
	assert_false(k.feasible);
	assert_int_equal(k.grid[DIM_DATA], 12);
	assert_int_equal(k.global_batch, 96);
	assert_string_equal(k.reason, sync_bn_refusal(g, &an, 12));
	assert_true(k.t.total == 0 && k.t.sync_bn == 0 && k.mem.total == 0);
	an.q.set.sync_bn = 4;
	assert_true(strategy_predict(g, &an, &o, STRAT_DP, dp6, &k));
	assert_false(k.computable);
	assert_string_equal(k.reason, "--sync-bn 4 does not divide the data dimension's 6 "
				      "ranks into groups of equal size");
	assert_true(strategy_predict(g, &an, &o, STRAT_DF, df4, &k));
	assert_true(k.computable);
	assert_true(k.t.sync_bn > 0);
	an.q.set.sync_bn = 3;
	assert_true(strategy_predict(g, &an, &o, STRAT_DF, df4, &k));
	assert_false(k.computable);
	assert_string_equal(k.reason, "--sync-bn 3 does not divide the data dimension's 4 "
				      "ranks into groups of equal size");
	assert_true(strategy_predict(g, &an, &o, STRAT_DF, df2, &k));
	assert_true(k.computable);
	assert_int_equal(sync_bn_group(&an, 2), 2);
	assert_true(strategy_predict(g, &an, &o, STRAT_DATA, data12, &k));
	assert_true(k.computable && k.feasible);
	assert_true(k.t.sync_bn > 0);
}

/* 1F1B: stage i of S holds min(M, S - i) micro-batches where GPipe holds
 * all M.  Same grid, same stages and times (memory does not bind here;
 * 4,096 samples make the best M 8 > S = 2): the fullest stage's
 * activations shrink by 2 / M, every stage's memory drops. */
static void
one_f_one_b_holds_fewer_micro_batches(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_run(fx, four_convs, PASS_MEMORY);
	Analysis an = { .eng = fx->eng,
			.q.sys = fx_abci(fx),
			.q.impl = fx_impl(fx_abci(fx)),
			.q.set.gpus = 2,
			.q.set.batch_per_gpu = 4096,
			.q.set.dataset_size = 800000,
			.q.set.sample_bytes = 1000 };
	StrategyOpts o = { 0 };
	int64_t grid[DIM_COUNT] = { [DIM_PIPELINE] = 2 };
	Candidate gp, ob;

	assert_true(strategy_predict(g, &an, &o, STRAT_PIPELINE, grid, &gp));
	an.q.set.schedule = SCHED_1F1B;
	assert_true(strategy_predict(g, &an, &o, STRAT_PIPELINE, grid, &ob));
	assert_int_equal(gp.micro_batches, ob.micro_batches);
	assert_true(gp.micro_batches > 2); /* else both hold the same */
	NEAR(gp.t.total, ob.t.total);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(gp.stage_end[i], ob.stage_end[i]);
		assert_true(ob.stage_mem[i] < gp.stage_mem[i]);
	}
	/* the fullest stage is stage 0 both times (it holds the input too) */
	NEAR(ob.mem.activations * (double)gp.micro_batches / 2, gp.mem.activations);
}

/* Megatron-LM's bubble (Narayanan et al., SC'21): with p stages and m
 * micro-batches the bubble is (p - 1) / m of the ideal time under GPipe
 * and 1F1B, (p - 1) / (v m) with v interleaved chunks per GPU.  Two
 * stages, --micro-batches 8: 1/8, and 1/16 with v = 2; interleaving adds
 * (p - 1) / (p v) to the first stage's micro-batches in flight
 * (Korthikanti et al., MLSys'23): 2 (1 + 1/4) = 2.5 of 1F1B's 2. */
static void
pipeline_bubbles_are_megatrons(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_run(fx, four_convs, PASS_MEMORY);
	Analysis an = { .eng = fx->eng,
			.q.sys = fx_abci(fx),
			.q.impl = fx_impl(fx_abci(fx)),
			.q.set.gpus = 2,
			.q.set.batch_per_gpu = 64,
			.q.set.dataset_size = 6400,
			.q.set.sample_bytes = 1000,
			.q.set.micro_batches = 8,
			.q.set.virtual_stages = 1,
			.q.set.schedule = SCHED_1F1B };
	StrategyOpts o = { 0 };
	int64_t grid[DIM_COUNT] = { [DIM_PIPELINE] = 2 };
	Candidate ob, il;

	assert_true(strategy_predict(g, &an, &o, STRAT_PIPELINE, grid, &ob));
	assert_int_equal(ob.micro_batches, 8);
	NEAR(ob.t.bubble / ob.t.compute, 1.0 / 8);
	an.q.set.schedule = SCHED_INTERLEAVED;
	an.q.set.virtual_stages = 2;
	assert_true(strategy_predict(g, &an, &o, STRAT_PIPELINE, grid, &il));
	NEAR(il.t.bubble / il.t.compute, 1.0 / 16);
	NEAR(il.mem.activations, ob.mem.activations * 2.5 / 2);
	an.q.set.micro_batches = 65; /* more than the batch */
	assert_true(strategy_predict(g, &an, &o, STRAT_PIPELINE, grid, &il));
	assert_false(il.computable);
}

/* The joint search: with every dimension fixed (schedule, ZeRO 0, no
 * recomputation) it is the analysis over every grid (each evaluated, or
 * pruned by the pipeline's bound), so its best is the analysis's best;
 * opening ZeRO and recomputation multiplies the
 * configurations (4 x 2 per grid, but what the bound prunes) and never
 * loses the best: a ZeRO variant can only be as fast or faster. */
static void
search_finds_the_analysis_best(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_run(fx, four_convs, PASS_MEMORY);
	/* the generic implementation, which runs every choice */
	Analysis an = { .eng = fx->eng,
			.q.sys = fx_abci(fx),
			.q.impl = fx_impl(NULL),
			.q.set.gpus = 8,
			.q.set.batch_per_gpu = 8,
			.q.set.dataset_size = 800,
			.q.set.sample_bytes = 1000,
			.q.set.virtual_stages = 1 };
	StrategyOpts o = { .mask = (1u << STRAT_COUNT) - 1 };
	SearchFix all = { .schedule = true, .zero = true, .recompute = true, .precision = true },
		  none = { .precision = true };
	Search s, t;
	int grids = 0;

	for (int k = 0; k < STRAT_COUNT; k++) {
		int64_t grid[DIM_COUNT], it = 0;
		/* no attention: not Megatron's tensor parallelism */
		while (strategy_asked(&an, &o, (StrategyKind)k) &&
		       grid_next((StrategyKind)k, 8, &it, grid))
			grids++;
	}
	assert_true(strategies_run(g, &an, &o));
	assert_true(an.best >= 0);
	search_begin(&s, 0);
	assert_true(search_run(g, &an, &o, &all, &s));
	search_end(&s);
	assert_true(s.ntop > 0 && s.top[0].feasible);
	NEAR(s.top[0].epoch, an.cand[an.best].epoch);
	assert_int_equal(s.evaluated + s.pruned, grids);
	search_begin(&t, 0);
	assert_true(search_run(g, &an, &o, &none, &t));
	search_end(&t);
	assert_true(t.evaluated + t.pruned > s.evaluated * 8 - 1);
	/* the first: the fastest, or within 3 % of it and simpler */
	assert_true(t.top[0].epoch <= s.top[0].epoch * (1 + SIMPLER_WITHIN));
	for (int i = 1; i < t.ntop; i++)
		assert_true(!t.top[i].feasible ||
			    t.top[i].epoch >= t.top[0].epoch / (1 + SIMPLER_WITHIN));
}

/* What an implementation runs bounds what oraclec proposes: under abci's
 * chainermn-paradl (fp32, no ZeRO, GPipe, no recomputation, the paper's
 * seven strategies) the search varies nothing an option leaves open but
 * the grid, dp and the other pipelined hybrids keep their times but are
 * not feasible, and a per-layer split never takes a mode the
 * implementation lacks. */
static void
implementations_bound_the_proposals(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_run(fx, four_convs, PASS_MEMORY);
	Analysis an = { .eng = fx->eng,
			.q.sys = fx_abci(fx),
			.q.impl = fx_impl(fx_abci(fx)),
			.q.set.gpus = 8,
			.q.set.batch_per_gpu = 8,
			.q.set.dataset_size = 800,
			.q.set.sample_bytes = 1000,
			.q.set.virtual_stages = 1 };
	StrategyOpts o = { .mask = (1u << STRAT_COUNT) - 1 };
	SearchFix all = { .schedule = true, .zero = true, .recompute = true, .precision = true },
		  none = { .precision = true };
	Search s, t;
	const Candidate *dp = &an.cand[STRAT_DP];
	Implementation im = fx_impl(NULL);
	const char *want;
	PerLayer pl;

	assert_string_equal(an.q.impl.name, "chainermn-paradl");
	assert_false(impl_runs_zero(&an.q.impl, 1, false));
	assert_false(impl_runs_precision(&an.q.impl, PREC_AMP_FP16));
	assert_false(impl_runs_schedule(&an.q.impl, SCHED_1F1B));
	assert_false(impl_runs_recompute(&an.q.impl, 4));
	assert_true(impl_runs_recompute(&an.q.impl, 0));
	assert_true(strategies_run(g, &an, &o));
	assert_true(dp->computable && dp->t.total > 0 && dp->epoch > 0);
	assert_false(dp->feasible);
	assert_string_equal(dp->bottleneck, "implementation");
	assert_string_equal(dp->reason, "chainermn-paradl does not run dp parallelism (it runs "
					"data, spatial, pipeline, filter, channel, df, ds)");
	assert_true(an.best != STRAT_DP && an.best != STRAT_DPF && an.best != STRAT_DPC &&
		    an.best != STRAT_DPS);
	search_begin(&s, 0);
	assert_true(search_run(g, &an, &o, &all, &s));
	search_end(&s);
	search_begin(&t, 0);
	assert_true(search_run(g, &an, &o, &none, &t));
	search_end(&t);
	assert_int_equal(t.evaluated, s.evaluated);
	for (int i = 0; i < t.ntop; i++) {
		assert_int_equal(t.top[i].zero, 0);
		assert_int_equal(t.top[i].recompute, 0);
		assert_false(t.top[i].kind == STRAT_DP || t.top[i].kind >= STRAT_DPF);
	}
	/* a list key: its words only, never empty; a pipeline needs a schedule */
	im.precisions = "fp32, amp-fp16";
	assert_null(implementation_check(&im, &want));
	assert_true(impl_runs_precision(&im, PREC_AMP_FP16) &&
		    !impl_runs_precision(&im, PREC_TF32));
	im.precisions = "fp32,fp4";
	assert_string_equal(implementation_check(&im, &want), "precisions");
	im.precisions = "";
	assert_string_equal(implementation_check(&im, &want), "precisions");
	im.precisions = "fp32";
	im.schedules = "";
	assert_string_equal(implementation_check(&im, &want), "schedules");
	im.strategies = "data,filter";
	assert_null(implementation_check(&im, &want));
	/* per layer: no spatial mode without spatial or ds */
	an.q.impl = im;
	an.q.set.gpus = 4;
	assert_true(per_layer_run(g, &an, &cost_model_physical, &pl));
	assert_true(isinf(pl.uniform[PL_SPATIAL]) && isinf(pl.uniform[PL_CHANNEL]));
	for (int i = 0; i < g->nlayer; i++)
		assert_true(pl.mode[i] == PL_DATA || pl.mode[i] == PL_FILTER);
}

/* Throughput is the global batch over the iteration; MFU the model's
 * forward and backward FLOPs per second per GPU over the peak its matrix
 * products run at: a V100's fp32 (no TF32), an A100's TF32 for an fp32
 * run's convolutions where the implementation lets cuDNN use it (fp32
 * where it does not), its fp16 under autocast; recomputation is not
 * counted, and a forward-only run counts the forward. */
static void
throughput_and_mfu_by_hand(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_run(fx, four_convs, PASS_MEMORY);
	const System *a100 = system_load("dgx-a100", &fx->arena, &fx->files);
	Analysis an = { .eng = fx->eng,
			.q.sys = fx_abci(fx),
			.q.impl = fx_impl(fx_abci(fx)),
			.q.set.gpus = 8,
			.q.set.prec = PREC_FP32 };
	Candidate k = { .computable = true, .global_batch = 256, .grid = { [DIM_DATA] = 8 },
			.t = { .total = 0.5, .recompute = 0.1 } };
	double flops = (double)g->total.flops_fwd + (double)g->total.flops_bwd;

	assert_non_null(a100);
	assert_true(g->total.flops_bwd > 0);
	candidate_rates(g, &an, &k);
	NEAR(k.throughput, 512);
	NEAR(k.mfu, flops * 512 / 8 / an.q.sys->peak[DT_FP32]);
	an.q.sys = a100, an.q.impl = fx_impl(a100);
	candidate_rates(g, &an, &k);
	NEAR(k.mfu, flops * 512 / 8 / a100->peak[DT_TF32]);
	an.q.impl.conv_tf32 = false;
	candidate_rates(g, &an, &k);
	NEAR(k.mfu, flops * 512 / 8 / a100->peak[DT_FP32]);
	an.q.set.prec = PREC_AMP_FP16;
	candidate_rates(g, &an, &k);
	NEAR(k.mfu, flops * 512 / 8 / a100->peak[DT_FP16]);
	an.q.set.forward_only = true;
	candidate_rates(g, &an, &k);
	NEAR(k.mfu, (double)g->total.flops_fwd * 512 / 8 / a100->peak[DT_FP16]);
	k.computable = false;
	candidate_rates(g, &an, &k);
	assert_true(k.throughput == 0 && k.mfu == 0);
}

/* --max-batch: whether a batch fits is monotone in it on every strategy
 * (one batch after another, 1 to 1,024, on a GPU that holds about 40
 * samples of data parallelism), and the search's answer is the largest
 * batch that fits with whole micro-batches, as counting up finds it; a
 * fixed micro-batch count takes its multiples only; a GPU too small for
 * one sample gives 0 with the reason. */
static void
max_batch_is_the_largest_that_fits(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_run(fx, four_convs, PASS_MEMORY);
	System s = *fx_abci(fx);
	Analysis an = { .eng = fx->eng,
			.q.sys = &s,
			.q.impl = fx_impl(NULL),
			.q.set.gpus = 8,
			.q.set.batch_per_gpu = 1,
			.q.set.dataset_size = 1000000,
			.q.set.sample_bytes = 1000,
			.q.set.virtual_stages = 1 };
	StrategyOpts o = { .mask = (1u << STRAT_COUNT) - 1 };
	Candidate one, two, t;
	int64_t grid[DIM_COUNT] = { [DIM_DATA] = 8 };

	assert_true(strategy_predict(g, &an, &o, STRAT_DATA, grid, &one));
	an.q.set.batch_per_gpu = 2;
	assert_true(strategy_predict(g, &an, &o, STRAT_DATA, grid, &two));
	s.mem = one.mem.total + 40 * (two.mem.total - one.mem.total);
	for (int m = 0; m < 2; m++) {
		an.q.set.micro_batches = m ? 4 : 0;
		an.q.set.batch_per_gpu = m ? 4 : 1;
		assert_true(strategies_run(g, &an, &o));
		assert_true(max_batch_run(g, &an, &o));
		for (int k = 0; k < STRAT_COUNT; k++) {
			const Candidate *c = &an.cand[k];
			Analysis a = an;
			StrategyOpts so = o;
			int64_t largest = 0;
			bool fitted = true;
			if (!c->computable)
				continue;
			so.nest = (int)c->nest;
			/* micro-batches of 4 keep a quarter: spatial's strips of
			 * them fit more than 1,024 samples on 8 GPUs */
			int64_t most = m ? 4096 : 1024;
			for (int64_t b = m ? 4 : 1; b <= most; b += m ? 4 : 1) {
				bool fit, whole;
				a.q.set.batch_per_gpu = b;
				strategy_predict(g, &a, &so, c->kind, c->grid, &t);
				fit = t.computable && t.feasible;
				if (fit && !fitted)
					fail_msg("%s fits %" PRId64 " samples but not fewer",
						 strategy_name[k], b);
				fitted = fit;
				whole = t.global_batch %
						((t.grid[DIM_DATA] > 0 ? t.grid[DIM_DATA] : 1) *
						 (t.micro_batches > 1 ? t.micro_batches : 1)) ==
					0;
				if (fit && whole)
					largest = b;
			}
			if (largest >= most)
				fail_msg("%s fits %" PRId64 " samples", strategy_name[k], most);
			if (c->max_batch != largest)
				fail_msg("%s: max batch %" PRId64 ", counting %" PRId64,
					 strategy_name[k], c->max_batch, largest);
		}
	}
	assert_true(an.cand[STRAT_DATA].max_batch >= 36 && an.cand[STRAT_DATA].max_batch % 4 == 0);
	/* nothing fits */
	s.mem = one.mem.total / 2;
	an.q.set.micro_batches = 0, an.q.set.batch_per_gpu = 1;
	assert_true(strategies_run(g, &an, &o));
	assert_true(max_batch_run(g, &an, &o));
	assert_int_equal(an.cand[STRAT_DATA].max_batch, 0);
	assert_string_equal(an.cand[STRAT_DATA].max_batch_why, "does not fit in GPU memory");
}

/* A model of two strategies: data at `data_s`, dp at 1 s, the rest out. */
static double data_s;

static void
two_predict(const PredictCtx *c, StrategyKind kind, const int64_t grid[DIM_COUNT], Candidate *k)
{
	memcpy(k->grid, grid, sizeof k->grid);
	k->global_batch = 64;
	k->t.compute = kind == STRAT_DATA ? data_s : kind == STRAT_DP ? 1.0 : 100.0;
	k->mem.total = kind == STRAT_DATA || kind == STRAT_DP ? 1 : 2 * c->an->q.sys->mem;
}

static const CostModel two = { "two", two_predict, false, false, NULL, NULL };

/* Within 3 % of the fastest the simpler is recommended: data (one grid
 * dimension) 2 % behind dp (two) is; 4 % behind it is not.  The search
 * puts the simplest configuration within 3 % first (ZeRO 0 before 3,
 * one grid dimension before two, no recomputation before some) and says
 * why. */
static void
within_three_percent_the_simpler_wins(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_run(fx, four_convs, PASS_MEMORY);
	Analysis an = { .eng = fx->eng,
			.q.sys = fx_abci(fx),
			.q.impl = fx_impl(NULL),
			.q.set.gpus = 4,
			.q.set.batch_per_gpu = 16,
			.q.set.dataset_size = 640 };
	StrategyOpts o = { .mask = (1u << STRAT_COUNT) - 1, .model = &two };
	Search s;
	SearchConfig fast = { .kind = STRAT_DATA, .grid = { [DIM_DATA] = 8 }, .zero = 3,
			      .epoch = 10, .feasible = true, .bottleneck = "compute" };
	SearchConfig plain = fast, hybrid = fast;

	data_s = 1.02;
	assert_true(strategies_run(g, &an, &o));
	assert_int_equal(an.best, STRAT_DATA);
	assert_int_equal(an.fastest, STRAT_DP);
	NEAR(an.decision.runner_up, 1 / 1.02);
	data_s = 1.04;
	assert_true(strategies_run(g, &an, &o));
	assert_int_equal(an.best, STRAT_DP);
	assert_int_equal(an.fastest, STRAT_DP);

	plain.zero = 0, plain.epoch = 10.2;
	hybrid.kind = STRAT_DP, hybrid.grid[DIM_PIPELINE] = 2, hybrid.zero = 0, hybrid.epoch = 10.1;
	search_begin(&s, 0);
	s.top[0] = fast, s.top[1] = hybrid, s.top[2] = plain, s.ntop = 3;
	s.simplest[3][0][0] = fast, s.has_simplest[3][0][0] = true;
	s.simplest[0][1][0] = hybrid, s.has_simplest[0][1][0] = true;
	s.simplest[0][0][0] = plain, s.has_simplest[0][0][0] = true;
	search_end(&s);
	assert_int_equal(s.top[0].zero, 0);
	assert_int_equal(s.top[0].kind, STRAT_DATA);
	NEAR(s.top[1].epoch, 10);
	assert_string_equal(s.simpler, "the first is within 3 % of the fastest (data, 10 s per "
				       "epoch) and simpler: no ZeRO against ZeRO 3");
	assert_string_equal(s.top[1].why, "2.0 % faster, within 3 %: the first is simpler");
	/* 4 % behind: the fastest stays first */
	plain.epoch = 10.4, hybrid.epoch = 10.35;
	search_begin(&s, 0);
	s.top[0] = fast, s.top[1] = hybrid, s.top[2] = plain, s.ntop = 3;
	s.simplest[3][0][0] = fast, s.has_simplest[3][0][0] = true;
	s.simplest[0][1][0] = hybrid, s.has_simplest[0][1][0] = true;
	s.simplest[0][0][0] = plain, s.has_simplest[0][0][0] = true;
	search_end(&s);
	assert_int_equal(s.top[0].zero, 3);
	assert_string_equal(s.simpler, "");
	/* four grid dimensions (dptc: data, pipeline, tensor, context) are
	 * a class of their own: its plain configuration within 3 % of its
	 * ZeRO 3 one goes first (the classes once stopped at three, and a
	 * four-dimension grid was written past them) */
	fast.kind = STRAT_DPTC, fast.grid[DIM_PIPELINE] = 2, fast.grid[DIM_TENSOR] = 2;
	fast.grid[DIM_CONTEXT] = 2, fast.epoch = 10;
	plain = fast, plain.zero = 0, plain.epoch = 10.2;
	search_begin(&s, 0);
	s.top[0] = fast, s.top[1] = plain, s.ntop = 2;
	s.simplest[3][3][0] = fast, s.has_simplest[3][3][0] = true;
	s.simplest[0][3][0] = plain, s.has_simplest[0][3][0] = true;
	search_end(&s);
	assert_int_equal(s.top[0].zero, 0);
	assert_int_equal(s.top[0].kind, STRAT_DPTC);
}

/* Per-layer splits: never slower than the best uniform assignment under
 * the same model, and for a network of convolutions and a large fully
 * connected layer Krizhevsky's "one weird trick" (2014): data parallelism
 * for the convolutions, model parallelism for the fully connected layer,
 * whose weights dwarf its activations.  On 64 GPUs a layer may split over
 * d of them with 64 / d groups sharing the samples: the 67M-weight fc
 * split over all 64 would see every sample on every GPU; over fewer it
 * trades sample work for a gradient all-reduce of its shard, and the
 * programme picks a degree between the two ends. */
static void
per_layer_splits_convs_by_data_and_the_big_fc_by_model(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_run(fx, "model m { input x: 3x32x32;\n"
			      "  a = conv(x, 64, kernel=3, pad=1); r = relu(a);\n"
			      "  b = conv(r, 64, kernel=3, pad=1); s = relu(b);\n"
			      "  f = flatten(s); h = fc(f, 4096); q = relu(h); o = fc(q, 1000); }",
			  PASS_MEMORY);
	Analysis an = { .eng = fx->eng,
			.q.sys = fx_abci(fx),
			.q.impl = fx_impl(fx_abci(fx)),
			.q.set.gpus = 16,
			.q.set.batch_per_gpu = 32,
			.q.set.dataset_size = 1000000,
			.q.set.sample_bytes = 1000,
			.q.set.virtual_stages = 1 };
	PerLayer pl;
	int fc = g->nlayer - 3;

	assert_non_null(g);
	for (int run = 0; run < 2; run++, an.q.set.gpus = 64) {
		assert_true(per_layer_run(g, &an, &cost_model_physical, &pl));
		assert_true(pl.done);
		for (int m = 0; m < PL_MODES; m++)
			assert_true(pl.time <= pl.uniform[m] * (1 + 1e-12));
		assert_true(pl.time < pl.uniform[PL_DATA]);
		assert_int_equal(pl.mode[0], PL_DATA); /* the first conv */
		assert_int_equal(pl.degree[0], 1);
		assert_true(pl.mode[fc] == PL_FILTER || pl.mode[fc] == PL_CHANNEL);
	}
	assert_int_equal(pl.nstates, 1 + 3 * 6); /* data; 3 modes x d = 2..64 */
	assert_true(pl.degree[fc] > 1 && pl.degree[fc] < 64);
	assert_int_equal(64 % pl.degree[fc], 0);
}

/* One seam: the per-layer planner prices through the cost model, so its
 * uniform data assignment is the data strategy to the bit on the grid's
 * GPUs -- the exchange overlapped with the backward, the optimizer step
 * over all tensors at once, the host lane -- where the programme's
 * separable prices (the whole exchange, a step per layer) are slower; on
 * abci under ChainerMN and on an H100 under PyTorch 2, whose host lane
 * sets the pace of a small model. */
static void
per_layer_uniform_data_is_the_data_strategy(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_run(fx, "model m { input x: 3x32x32;\n"
			      "  a = conv(x, 64, kernel=3, pad=1); r = relu(a);\n"
			      "  b = conv(r, 64, kernel=3, pad=1); s = relu(b);\n"
			      "  f = flatten(s); h = fc(f, 512); q = relu(h); o = fc(q, 10); }",
			  PASS_MEMORY);
	const char *sys[] = { "abci", "dgx-h100" };

	assert_non_null(g);
	for (int i = 0; i < 2; i++) {
		const System *s = system_load(sys[i], &fx->arena, &fx->files);
		Analysis an = { .eng = fx->eng,
				.q.sys = s,
				.q.impl = fx_impl(s),
				.q.set.gpus = 16,
				.q.set.batch_per_gpu = 32,
				.q.set.dataset_size = 1000000,
				.q.set.sample_bytes = 1000,
				.q.set.virtual_stages = 1 };
		StrategyOpts o = { 0 };
		int64_t grid[DIM_COUNT] = { [DIM_DATA] = 16 };
		PerLayer pl;
		Candidate k;

		assert_true(strategy_predict(g, &an, &o, STRAT_DATA, grid, &k));
		assert_true(per_layer_run(g, &an, &cost_model_physical, &pl));
		assert_true(pl.done);
		NEAR(pl.uniform[PL_DATA], k.t.total);
		assert_true(pl.time <= k.t.total * (1 + 1e-12));
		assert_true(i == 0 || k.t.grad_hidden > 0); /* PyTorch overlaps, ChainerMN not */
	}
	/* the paper's model prices whole strategies: no per-layer splits */
	{
		Analysis an = { .eng = fx->eng,
				.q.sys = fx_abci(fx),
				.q.impl = fx_impl(fx_abci(fx)),
				.q.set.gpus = 16,
				.q.set.batch_per_gpu = 32,
				.q.set.dataset_size = 1000000,
				.q.set.sample_bytes = 1000,
				.q.set.virtual_stages = 1 };
		PerLayer pl;
		assert_true(per_layer_run(g, &an, &cost_model_paper, &pl));
		assert_false(pl.done);
	}
}

/* Per-layer splits inside a block: the branches of a series-parallel
 * block choose apart.  An Inception-like block on 2 GPUs whose 5x5 conv
 * to 4,096 filters holds 52 M weights (its gradient exchange dwarfs its
 * 4x4 outputs) beside a small 1x1 + 3x3 branch: under PyTorch's NCCL
 * gathers the big conv splits by filter, the small branch stays data
 * parallel.  The programme's time is the least over all 4^11 assignments
 * (enumerated), and for a residual block on 4 GPUs over all 7^8 (abci's
 * host-staged gathers). */
static void
per_layer_branches_choose_apart_and_the_programme_is_exact(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_run(
		fx,
		"model m { input x: 512x4x4;\n"
		"  a = conv(x, 512, kernel=1); r = relu(a);\n"
		"  b1 = conv(r, 4096, kernel=5, pad=2);\n"
		"  b2 = conv(r, 64, kernel=1); b2r = relu(b2); b2c = conv(b2r, 64, kernel=3, "
		"pad=1);\n"
		"  cat = concat(b1, b2c); o = relu(cat); p = globalavgpool(o);\n"
		"  f = flatten(p); h = fc(f, 10); }",
		PASS_MEMORY);
	Analysis an = { .eng = fx->eng,
			.q.sys = fx_abci(fx),
			.q.impl = fx_impl(fx_abci(fx)),
			.q.set.gpus = 2,
			.q.set.batch_per_gpu = 32,
			.q.set.dataset_size = 1000000,
			.q.set.sample_bytes = 1000,
			.q.set.virtual_stages = 1 };
	PerLayer pl;
	double all, dp;

	assert_non_null(g);
	an.q.impl = fx_impl(NULL); /* pytorch's */
	assert_true(per_layer_run(g, &an, &cost_model_physical, &pl));
	assert_true(pl.done && pl.fits && !pl.limited);
	assert_true(pl.nblocks < g->nlayer); /* the branches share a block */
	assert_int_equal(pl.mode[2], PL_FILTER);  /* b1 */
	assert_int_equal(pl.mode[3], PL_DATA);    /* b2 */
	all = per_layer_exhaustive(g, &an, &dp);
	NEAR(pl.separable, all);
	NEAR(dp, all);

	g = fx_run(fx, "model m { input x: 256x8x8;\n"
		       "  a = conv(x, 256, kernel=1); r = relu(a);\n"
		       "  c = conv(r, 256, kernel=3, pad=1); s = conv(r, 256, kernel=1);\n"
		       "  y = add(c, s); o = relu(y); p = globalavgpool(o); f = flatten(p); }",
		   PASS_MEMORY);
	an.q.set.gpus = 4;
	an.q.impl = fx_impl(fx_abci(fx));
	assert_non_null(g);
	assert_true(per_layer_run(g, &an, &cost_model_physical, &pl));
	assert_true(pl.done && pl.fits);
	all = per_layer_exhaustive(g, &an, &dp);
	NEAR(pl.separable, all);
	NEAR(dp, all);
}

/* Per-layer splits under a memory limit: with room the fastest stands;
 * on a GPU too small for it, the assignment that fits (time + lambda x
 * memory) is slower but within the memory; on one too small for any, the
 * fastest is reported as not fitting. */
static void
per_layer_splits_fit_the_memory(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_run(
		fx,
		"model m { input x: 3x32x32;\n"
		"  a = conv(x, 16, kernel=3, pad=1); r = relu(a); p = maxpool(r, kernel=2);\n"
		"  f = flatten(p); h = fc(f, 4096); q = relu(h); o = fc(q, 1000); }",
		PASS_MEMORY);
	System small = *fx_abci(fx);
	Analysis an = { .eng = fx->eng,
			.q.sys = &small,
			.q.impl = fx_impl(fx_abci(fx)),
			.q.set.gpus = 4,
			.q.set.batch_per_gpu = 64,
			.q.set.dataset_size = 1000000,
			.q.set.sample_bytes = 1000,
			.q.set.virtual_stages = 1 };
	PerLayer free_run, tight, none;

	assert_non_null(g);
	assert_true(per_layer_run(g, &an, &cost_model_physical, &free_run));
	assert_true(free_run.done && free_run.fits && !free_run.limited);
	/* 5 % less room than the fastest needs: the fc's 16.8 M weights split
	 * by filter fit, at some time */
	small.mem = small.reserved + (free_run.memory - small.reserved) * 0.95;
	assert_true(per_layer_run(g, &an, &cost_model_physical, &tight));
	assert_true(tight.limited && tight.fits);
	assert_true(tight.memory <= small.mem);
	assert_true(tight.separable > free_run.separable);
	small.mem = small.reserved + 1; /* nothing fits */
	assert_true(per_layer_run(g, &an, &cost_model_physical, &none));
	assert_false(none.fits);
	assert_false(none.limited);
	NEAR(none.time, free_run.time);
}

/* With --plan the analysis cuts only where the modules allow, and the plan
 * lists that prediction's stages and costs. */
static void
a_pipeline_plan_lists_the_prediction(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_run(fx, four_convs, PASS_MEMORY);
	Analysis an = { .eng = fx->eng,
			.q.sys = fx_abci(fx),
			.q.impl = fx_impl(fx_abci(fx)),
			.q.set.gpus = 2,
			.q.set.batch_per_gpu = 8,
			.q.set.dataset_size = 800,
			.q.set.sample_bytes = 1000 };
	StrategyOpts o = { .forced = true, .kind = STRAT_PIPELINE,
			   .grid = { [DIM_PIPELINE] = 2 } };
	bool only_after_c[4] = { false, false, true, true };
	const Candidate *k = &an.cand[STRAT_PIPELINE];
	Modules mod;
	Placement pl;

	modules_derive(g, &mod);
	assert_null(plan_cuts(g, &mod)); /* ODL: every layer is a block */
	o.cut_after = only_after_c;
	assert_true(strategies_run(g, &an, &o));
	assert_int_equal(k->stage_end[0], 2);
	assert_true(placement_run(g, &an, &o, &mod, &pl));
	assert_true(pl.recut);
	assert_int_equal(pl.nstage, 2);
	assert_int_equal(pl.stage[0].last, 2);
	for (int i = 0; i < pl.nstage; i++) {
		assert_true(pl.stage[i].time == k->stage_time[i]);
		assert_true(pl.stage[i].mem == k->stage_mem[i]);
	}
	assert_int_equal(pl.nodes, 1);
	assert_int_equal(pl.rank[1].gpu, 1);

	/* the paper's model gives no stage times: no pipeline plan */
	o.model = &cost_model_paper;
	assert_true(strategies_run(g, &an, &o));
	assert_false(placement_run(g, &an, &o, &mod, &pl));
	assert_non_null(strstr(fx_diags(fx), "a pipeline plan needs the default cost model"));
}

/* The ranking's decision of strategy s, as strategies_run makes it. */
static void
recommend(Analysis *an, StrategyKind s)
{
	an->best = s;
	an->decision = (Decision){ .from = DECIDED_RANKING, .k = &an->cand[s], .at = an };
	an->decision.c.kind = s;
}

/* pass advice on a hand-made analysis: ds wins by 3 % over data at 64
 * GPUs (a spatial split for little gain), the strategies ran at different
 * global batches, data's batch of 2048 exceeds a 1,000-sample dataset and
 * 64 GPUs exceed its limit of 31; 16 GPUs are within 2 % of the best. */
static void
advice_warns_with_stable_codes(void **state)
{
	Analysis an = { .q.set.gpus = 64, .q.set.dataset_size = 1000, .best = STRAT_DS };
	Analysis fewer[2];
	const char *want[] = { "fewer-gpus-as-fast", "different-global-batches",
			       "needs-unsupported-split" };

	(void)state;
	an.cand[STRAT_DATA] = (Candidate){ .kind = STRAT_DATA, .analysed = true, .feasible = true,
					   .global_batch = 2048, .epoch = 103, .max_gpus = 31,
					   .grid = { [DIM_DATA] = 64 } };
	an.cand[STRAT_DS] = (Candidate){ .kind = STRAT_DS, .analysed = true, .feasible = true,
					 .global_batch = 512, .epoch = 100, .max_gpus = 112,
					 .grid = { [DIM_DATA] = 16, [DIM_SPATIAL] = 4 } };
	fewer[0] = (Analysis){ .q.set.gpus = 8, .best = STRAT_DATA };
	fewer[0].cand[STRAT_DATA] = (Candidate){ .kind = STRAT_DATA, .epoch = 150 };
	fewer[1] = (Analysis){ .q.set.gpus = 16, .best = STRAT_DATA };
	fewer[1].cand[STRAT_DATA] = (Candidate){ .kind = STRAT_DATA, .epoch = 101.5 };
	recommend(&an, STRAT_DS);
	advise(NULL, &an, fewer, 2);
	assert_int_equal(an.nwarning, 3);
	for (int i = 0; i < 3; i++)
		assert_string_equal(an.warning[i].code, want[i]);
	assert_string_equal(
		an.warning[0].message,
		"16 GPUs (data parallelism) would take 101.5 s per epoch, against 100 s "
		"on 64: the other GPUs add nothing");
	assert_non_null(strstr(an.warning[2].message, "for 3.0 % over data parallelism"));
	/* data recommended: its batch and its limit */
	recommend(&an, STRAT_DATA);
	advise(NULL, &an, NULL, 0);
	assert_string_equal(an.warning[0].code, "global-batch-exceeds-dataset");
	assert_string_equal(an.warning[1].code, "beyond-strategy-limit");
	assert_string_equal(an.warning[1].message,
			    "data parallelism is recommended on 64 GPUs, beyond its limit of 31 "
			    "for this model and batch");
	/* past the literature's batch for the optimizer: momentum SGD 8,192
	 * (Goyal et al.), Adam 8,192, RMSProp 4,096 */
	an.q.set.dataset_size = 1 << 30;
	for (int i = 0; i < 5; i++) {
		static const struct { Optimizer opt; int64_t batch; bool warns; } c[] = {
			{ OPT_MOMENTUM, 8192, false }, { OPT_MOMENTUM, 8193, true },
			{ OPT_ADAMW, 16384, true }, { OPT_RMSPROP, 4096, false },
			{ OPT_RMSPROP, 8192, true },
		};
		an.q.set.opt = c[i].opt;
		an.cand[STRAT_DATA].global_batch = c[i].batch;
		advise(NULL, &an, NULL, 0);
		assert_int_equal(strcmp(an.warning[0].code, "large-global-batch") == 0, c[i].warns);
	}
	/* within 3 % of the fastest, the simpler: said in a note */
	an.q.set.opt = OPT_MOMENTUM, an.cand[STRAT_DATA].global_batch = 64;
	an.fastest = STRAT_DS;
	advise(NULL, &an, NULL, 0);
	assert_int_equal(an.nnote, 1);
	assert_string_equal(an.note[0],
			    "data parallelism (data=64) is within 3 % of the fastest, ds "
			    "parallelism (data=16,spatial=4) at 100 s per epoch, and "
			    "simpler: 1 grid dimension against 2");
	an.fastest = STRAT_DATA;
	an.cand[STRAT_DATA].global_batch = 32768;
	advise(NULL, &an, NULL, 0);
	assert_non_null(strstr(an.warning[0].message, "32,768 samples, is past 8,192, the largest "
						      "ResNet-50 trains to full accuracy"));
	assert_non_null(strstr(an.warning[0].message, "(Goyal et al. 2017)"));
}

/* ---- reuse (model/reuse.c, model/pipeline.c) ----------------------------- */

/* What every strategy and the search make of a model, kept to compare. */
typedef struct Outcome {
	IterTime t[STRAT_COUNT];
	MemUse mem[STRAT_COUNT];
	double epoch[STRAT_COUNT];
	int64_t grid[STRAT_COUNT][DIM_COUNT];
	bool feasible[STRAT_COUNT];
	int evaluated, pruned, ntop;
	double top[SEARCH_TOP];
} Outcome;

static void
outcome(const Graph *g, Analysis *an, Outcome *o)
{
	StrategyOpts so = { .mask = (1u << STRAT_COUNT) - 1 };
	SearchFix fix = { .precision = true };
	Search s;

	memset(o, 0, sizeof *o);
	assert_true(strategies_run(g, an, &so));
	for (int k = 0; k < STRAT_COUNT; k++) {
		o->t[k] = an->cand[k].t;
		o->mem[k] = an->cand[k].mem;
		o->epoch[k] = an->cand[k].epoch;
		memcpy(o->grid[k], an->cand[k].grid, sizeof o->grid[k]);
		o->feasible[k] = an->cand[k].feasible;
	}
	search_begin(&s, 0);
	assert_true(search_run(g, an, &so, &fix, &s));
	search_end(&s);
	o->evaluated = s.evaluated;
	o->pruned = s.pruned;
	o->ntop = s.ntop;
	for (int i = 0; i < s.ntop; i++)
		o->top[i] = s.top[i].epoch;
}

/* The reuse changes no figure: a chain of 64 convolutions and ReLUs (a
 * few classes of layers alike, rows and partitions met again across
 * grids, nestings, micro-batch counts and the search's configurations)
 * predicts bit for bit what it predicts with every figure computed on
 * every read, no classes and no partition kept (an engine without its
 * memos: engine_new(false)). */
static void
reuse_changes_no_figure(void **state)
{
	Fx *fx = *state;
	char *src = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&src, &len);
	Graph *g;
	Analysis an = { .eng = fx->eng,
			.q.sys = fx_abci(fx),
			.q.impl = fx_impl(NULL),
			.q.set.gpus = 64,
			.q.set.batch_per_gpu = 8,
			.q.set.dataset_size = 64000,
			.q.set.sample_bytes = 1000,
			.q.set.virtual_stages = 1 };
	const LayerTable *tb;
	Outcome kept, again;
	int feasible = 0;

	assert_non_null(f);
	fprintf(f, "model chain { input x: 16x16x16;\n  r0 = relu(x);\n");
	for (int i = 1; i <= 64; i++)
		fprintf(f, "  c%d = conv(r%d, 16, kernel=3, pad=1); r%d = relu(c%d);\n", i, i - 1,
			i, i);
	fprintf(f, "}\n");
	fclose(f);
	g = fx_run(fx, src, PASS_MEMORY);
	free(src);

	tb = layer_classes(&an, g);
	assert_true(g->nlayer >= 129);
	assert_true(tb->ncls > 1 && tb->ncls <= g->nlayer / 8);
	/* layers alike are one class; a ReLU is not a convolution, and the
	 * first ReLU, which reads the graph's input, is not the others' */
	assert_int_equal(tb->cls[fx_index(g, "c2")], tb->cls[fx_index(g, "c3")]);
	assert_int_equal(tb->cls[fx_index(g, "r2")], tb->cls[fx_index(g, "r3")]);
	assert_int_not_equal(tb->cls[fx_index(g, "c2")], tb->cls[fx_index(g, "r2")]);
	assert_int_not_equal(tb->cls[fx_index(g, "r0")], tb->cls[fx_index(g, "r1")]);
	outcome(g, &an, &kept);
	outcome(g, &an, &again); /* everything found again */
	assert_memory_equal(&kept, &again, sizeof kept);

	an.eng = engine_new(false);
	assert_int_equal(layer_classes(&an, g)->ncls, 0);
	outcome(g, &an, &again);
	engine_free(an.eng);
	an.eng = fx->eng;
	for (int k = 0; k < STRAT_COUNT; k++)
		feasible += kept.feasible[k];
	assert_true(feasible >= 4 && kept.evaluated > 50);
	assert_memory_equal(&kept, &again, sizeof kept);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(the_table_names_strategies_and_their_grids),
		cmocka_unit_test(dptc_grids_are_every_four_factorization),
		cmocka_unit_test(grid_text_reads_and_writes),
		FX_TEST(mapping_places_groups_inside_nodes),
		FX_TEST(context_rings_sit_next_to_tensor_groups),
		FX_TEST(strategies_enumerate_grids_and_rank_any_model),
		cmocka_unit_test(cost_models_are_found_by_name),
		FX_TEST(a_pipeline_keeps_each_stage_cost),
		FX_TEST(a_pipeline_plan_lists_the_prediction),
		FX_TEST(a_hierarchical_allreduce_is_three_collectives),
		FX_TEST(dp_is_the_pipeline_twice_with_a_stage_exchange),
		FX_TEST(dp_prices_each_stage_sync_bn),
		FX_TEST(sync_bn_groups_of_one_size),
		FX_TEST(dpf_and_dpc_split_each_stage),
		FX_TEST(dps_splits_each_stage_by_rows),
		FX_TEST(pipeline_bound_keeps_what_could_win),
		FX_TEST(pipelines_recompute_and_shard_the_optimizer),
		FX_TEST(one_f_one_b_holds_fewer_micro_batches),
		FX_TEST(pipeline_bubbles_are_megatrons),
		FX_TEST(search_finds_the_analysis_best),
		FX_TEST(implementations_bound_the_proposals),
		FX_TEST(within_three_percent_the_simpler_wins),
		FX_TEST(throughput_and_mfu_by_hand),
		FX_TEST(max_batch_is_the_largest_that_fits),
		FX_TEST(per_layer_splits_convs_by_data_and_the_big_fc_by_model),
		FX_TEST(per_layer_uniform_data_is_the_data_strategy),
		FX_TEST(per_layer_branches_choose_apart_and_the_programme_is_exact),
		FX_TEST(per_layer_splits_fit_the_memory),
		cmocka_unit_test(advice_warns_with_stable_codes),
		FX_TEST(reuse_changes_no_figure),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
