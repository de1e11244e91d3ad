/* test_model.c -- the cluster descriptions (frontend/system.c) and the
 * performance model (model/comm.c, compute.c, strategy.c, pipeline.c,
 * validate.c), on numbers worked out by hand in the comments. */
#include "harness.h"
#include "onnxbuild.h"
#include "plan/analysis.h"
#include "model/model.h"
#include "model/reuse.h"
#include "backends/backends.h"

#include <math.h>


static void
every_builtin_system_parses(void **state)
{
	Fx *fx = *state;
	const char *name;

	for (int i = 0; (name = builtin_system_name(i)); i++)
		assert_non_null(system_load(name, &fx->arena, &fx->files));
	assert_int_equal(diag_errors(), 0);
}

static void
abci_constants_are_in_si_units(void **state)
{
	Fx *fx = *state;
	const System *s = fx_abci(fx);

	NEAR(s->peak[DT_FP32], 15.7e12);
	NEAR(s->mem, 16.0 * 1024 * 1024 * 1024);
	NEAR(s->intra_lat, 9e-6);
	NEAR(s->level[2].latency, 400e-9);
	assert_int_equal(s->nlevels, 3);
	assert_int_equal(s->level[0].fanout, 17);
	NEAR(s->level[1].oversub, 3);
	assert_int_equal(s->gpus_per_node, 4);
}

static void
system_file_errors_name_the_key(void **state)
{
	Fx *fx = *state;
	const char *path = fx_write(fx, "s.odl",
				    "system s {\n  fp32 = 10GB;\n  memory = 16GiB;\n"
				    "  colour = 3;\n  level l { latency = 1us; }\n}\n");

	assert_null(system_load(path, &fx->arena, &fx->files));
	assert_string_equal(fx_diags(fx),
			    "s.odl:2:10: error: 'fp32' must be FLOP/s (e.g. 15.7TFLOPS)\n"
			    "s.odl:4:3: error: unknown system setting 'colour'\n"
			    "s.odl:5:3: error: level 'l' does not give 'fanout'\n"
			    "s.odl:1:8: error: system 's' does not give 'gpus_per_node'\n"
			    "s.odl:1:8: error: system 's' does not give 'memory_bw'\n"
			    "s.odl:1:8: error: system 's' does not give 'intra_bw'\n"
			    "s.odl:1:8: error: system 's' does not give 'intra_latency'\n"
			    "s.odl:1:8: error: system 's' does not give 'nic_bw'\n"
			    "s.odl:1:8: error: system 's' does not give 'nic_latency'\n");
}

/* A system written as ODL (calibrate -o) reads back to the same doubles:
 * every real key and level key, at values no short decimal gives (a
 * third of each), 16 GiB, and 5 us (5 * 1e-6, not the double 5e-6). */
static void
written_systems_read_back_exactly(void **state)
{
	Fx *fx = *state;
	System s = *fx_abci(fx);
	const System *back;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	for (int i = 0; i < NSYS_KEYS; i++)
		if (sys_keys[i].type == SK_REAL && *(double *)((char *)&s + sys_keys[i].off) > 0)
			*(double *)((char *)&s + sys_keys[i].off) *= 1 / 3.0;
	for (int l = 0; l < s.nlevels; l++)
		s.level[l].latency *= 1 / 3.0;
	s.mem = 16.0 * 1024 * 1024 * 1024;
	s.kernel_lat = 5 * 1e-6;
	assert_non_null(f);
	assert_true(system_emit(&s, "back", "a round trip", f));
	assert_int_equal(fclose(f), 0);
	assert_non_null(strstr(text, "    memory = 17179869184B;\n"));
	assert_non_null(strstr(text, "    kernel_latency = 5us;\n"));
	back = system_load(fx_write(fx, "back.odl", text), &fx->arena, &fx->files);
	free(text);
	assert_non_null(back);
	for (int i = 0; i < NSYS_KEYS; i++)
		if (sys_keys[i].type == SK_REAL) {
			double a = *(const double *)((const char *)&s + sys_keys[i].off);
			double b = *(const double *)((const char *)back + sys_keys[i].off);
			if (a >= 0 && a != b)
				fail_msg("'%s': %.17g written, %.17g read", sys_keys[i].name, a, b);
		}
	for (int l = 0; l < s.nlevels; l++)
		assert_true(back->level[l].latency == s.level[l].latency);
}

static void
unknown_system_name_is_an_error(void **state)
{
	Fx *fx = *state;

	assert_null(system_load("summit", &fx->arena, &fx->files));
	assert_non_null(strstr(fx_diags(fx), "unknown system 'summit'"));
}

static void
paradl_plat_file_sets_speed_bandwidth_and_latency(void **state)
{
	Fx *fx = *state;
	const char *path = fx_write(fx, "A.plat",
				    "MEM_PER_NODE|16e9|Bytes\nNODE_SPEED|7.8E12|FLOPS\n"
				    "BANDWIDTH|12.5E9|Bps\nLATENCY|500E-9|second \n"
				    "MAX_NODE|4096|GPUs\nGPU_PER_NODE|4|GPUs\n");
	const System *s = system_load(path, &fx->arena, &fx->files);

	assert_non_null(s);
	NEAR(s->peak[DT_FP32], 7.8e12);
	NEAR(s->eff_conv, 1);
	NEAR(s->nic_bw, 12.5e9);
	NEAR(s->intra_lat, 500e-9);
	NEAR(s->mem, 16e9);
}

/* Ring inside one node: 4 GPUs, 100 MB: 2 (4 - 1) steps of 25 MB over
 * NVLink's 50 GB/s plus 9 us each: 6 * (9e-6 + 5e-4) = 3.054e-3 s. */
static void
allreduce_inside_a_node_is_a_ring_over_nvlink(void **state)
{
	Fx *fx = *state;
	const System *s = fx_abci(fx);

	NEAR(allreduce_time(s, (Group){ 4, 4, 1 }, 100e6), 3.054e-3);
	NEAR(allreduce_time(s, (Group){ 1, 1, 1 }, 100e6), 0);
}

/* 8 GPUs on 2 nodes under one leaf: 14 steps of 12.5 MB at the NIC's
 * 7 GB/s, each paying 10 us plus the leaf switch twice (2 x 90 ns):
 * 14 * (10.18e-6 + 12.5e6 / 7e9). */
static void
allreduce_across_nodes_waits_for_the_network(void **state)
{
	Fx *fx = *state;
	const System *s = fx_abci(fx);

	NEAR(allreduce_time(s, (Group){ 8, 4, 1 }, 100e6), 14 * (10.18e-6 + 12.5e6 / 7e9));
	/* four rings sharing each node's NIC get a quarter of it each */
	NEAR(allreduce_time(s, (Group){ 8, 1, 4 }, 100e6), 14 * (10.18e-6 + 12.5e6 / 1.75e9));
	/* an all-gather is half the steps */
	NEAR(allgather_time(s, (Group){ 8, 4, 1 }, 100e6), 7 * (10.18e-6 + 12.5e6 / 7e9));
}

/* NCCL's tuning model (model/nccl.c, v2.5.6-1's constants for 2.4.6) on
 * one DGX-1 node (8 V100s, 75 GB/s of NVLink, compute capability 7.0, no
 * LL128 before 2.5): 100 MB runs a ring in Simple, 8.4 us + 14 steps x 5.7
 * us and 100 MB at 75 x 8 / 14 GB/s, the tree at 0.9 x 75 x 1/2 being
 * slower; 1 KB a ring in LL, 3.6 us + 14 x 0.4 us and a quarter of the
 * bandwidth, the tree's chain of 7 NVLink hops (4.4 + 2 x 7 x 0.5 us)
 * slower; 1 MB on 2.5.6 in LL128.  Across 64 and 128 nodes, a small message's time doubles with
 * NCCL 2.3.7's rings (latency in N) and grows by one tree level on
 * 2.4.6's (latency in log N). */
static void
nccl_picks_algorithm_and_protocol_by_size_and_ranks(void **state)
{
	Fx *fx = *state;
	const System *s = system_load("dgx-1", &fx->arena, &fx->files);
	Group node = { 8, 8, 1 };
	NcclPath link = { 75e9, 0 };
	NcclPick pick;
	double t;

	assert_non_null(s);
	t = nccl_time(s, 20406, COLL_ALLREDUCE, node, link, 100e6, &pick);
	assert_string_equal(nccl_algo_name(pick.algo), "ring");
	assert_string_equal(nccl_proto_name(pick.proto), "Simple");
	/* NCCL keeps its constants as floats, so does nccl.c: 1e-6 apart */
	assert_true(fabs(t - ((8.4 + 14 * 5.7) * 1e-6 + 100e6 / (75e9 * 8 / 14))) <= 1e-6 * t);
	t = nccl_time(s, 20406, COLL_ALLREDUCE, node, link, 1024, &pick);
	assert_string_equal(nccl_algo_name(pick.algo), "ring");
	assert_string_equal(nccl_proto_name(pick.proto), "LL");
	assert_true(fabs(t - ((3.6 + 14 * 0.4) * 1e-6 + 1024 / (75e9 / 4 * 8 / 14))) <= 1e-6 * t);
	/* 2.5 brings LL128 on NVLink between Volta GPUs (120 of 128 bytes,
	 * 3.6 + 14 x 2.5 us): 1 MB in 65 us, where Simple takes 112 and LL
	 * 102; 2.4.6 has no LL128 */
	t = nccl_time(s, 20506, COLL_ALLREDUCE, node, link, 1 << 20, &pick);
	assert_string_equal(nccl_proto_name(pick.proto), "LL128");
	assert_true(fabs(t - ((3.6 + 14 * 2.5) * 1e-6 + (1 << 20) / (75e9 * 120 / 128 * 8 / 14))) <=
		    1e-6 * t);
	nccl_time(s, 20406, COLL_ALLREDUCE, node, link, 1 << 20, &pick);
	assert_string_equal(nccl_proto_name(pick.proto), "LL");
	{
		Analysis an = { .eng = fx->eng, .q.sys = s, .q.impl = fx_impl(s) };
		double r23, r24;
		an.q.impl.nccl = 20307;
		r23 = coll_allreduce(&an, (Group){ 1024, 8, 1 }, 8) /
		      coll_allreduce(&an, (Group){ 512, 8, 1 }, 8);
		an.q.impl.nccl = 20406;
		r24 = coll_allreduce(&an, (Group){ 1024, 8, 1 }, 8) /
		      coll_allreduce(&an, (Group){ 512, 8, 1 }, 8);
		assert_true(r23 > 1.9 && r23 < 2.1);
		assert_true(r24 > 1 && r24 < 1.2);
	}
}

/* Data parallelism on one GPU: no communication; its compute is the sum
 * of the layers' forward and backward times. */
static void
data_parallel_on_one_gpu_has_no_communication(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_run(fx, "model m { input x: 3x32x32;\n"
			      "  c = conv(x, 16, kernel=3, pad=1); r = relu(c);\n"
			      "  f = flatten(r); o = fc(f, 10); }", PASS_MEMORY);
	Analysis an = { .eng = fx->eng,
			.q.sys = fx_abci(fx),
			.q.impl = fx_impl(fx_abci(fx)),
			.q.set.gpus = 1,
			.q.set.batch_per_gpu = 8,
			.q.set.dataset_size = 800,
			.q.set.sample_bytes = 1000 };
	StrategyOpts o = { .mask = 1u << STRAT_DATA };
	const Candidate *k = &an.cand[STRAT_DATA];

	assert_non_null(g);
	assert_true(strategies_run(g, &an, &o));
	assert_true(k->feasible);
	NEAR(k->t.grad, 0);
	NEAR(k->t.compute, span_time(&an, g, 0, g->nlayer - 1, 8, 1, DIM_DATA));
	assert_int_equal(k->global_batch, 8);
	NEAR(k->epoch, k->t.total * 100);
	assert_int_equal(an.best, STRAT_DATA);
}

/* A forward-only run (the ParaDL CosmoFlow runs): no backward compute,
 * the gradients still all-reduced; on 4 strips only the forward halo of
 * the conv's input, one row of 3 x 32 floats for each of the 8 samples
 * (3,072 B), in abci's chain of 2 x 3 staged sends: 6 x (300 us +
 * 2 x 3,072 / 3 GB/s). */
static void
forward_only_runs_have_no_backward(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_run(fx, "model m { input x: 3x32x32;\n"
			      "  c = conv(x, 16, kernel=3, pad=1); r = relu(c);\n"
			      "  f = flatten(r); o = fc(f, 10); }", PASS_MEMORY);
	Analysis an = { .eng = fx->eng,
			.q.sys = fx_abci(fx),
			.q.impl = fx_impl(fx_abci(fx)),
			.q.set.gpus = 4,
			.q.set.batch_per_gpu = 8,
			.q.set.dataset_size = 800,
			.q.set.sample_bytes = 1000,
			.q.set.forward_only = true };
	Analysis train = an;
	StrategyOpts o = { .mask = 1u << STRAT_DATA | 1u << STRAT_SPATIAL,
			   .spatial_split = SPLIT_ALL };
	const Candidate *k = &an.cand[STRAT_DATA];
	double fwd = 0;

	assert_non_null(g);
	train.q.set.forward_only = false;
	assert_true(strategies_run(g, &an, &o));
	assert_true(strategies_run(g, &train, &o));
	for (int i = 0; i < g->nlayer; i++)
		fwd += layer_time(&an, g, &g->layer[i], 8, 1, DIM_DATA, false);
	NEAR(k->t.compute, fwd);
	NEAR(k->t.grad, train.cand[STRAT_DATA].t.grad);
	NEAR(an.cand[STRAT_SPATIAL].t.p2p, 6 * (300e-6 + 2 * 3072 / 3e9));
	assert_true(train.cand[STRAT_SPATIAL].t.p2p > an.cand[STRAT_SPATIAL].t.p2p);
}

/* ZeRO against DeepSpeed's statement of it (ZeRO paper, Figure 1; the
 * DeepSpeed docs): with mixed precision and Adam a parameter costs 2 + 2
 * + K bytes, K = 12 (fp32 master weights and both moments); stage 1
 * divides K by Nd, stage 2 also the gradients' 2, stage 3 everything.
 * Data parallelism over 8 abci GPUs, Nd = 8. */
static void
zero_shards_as_deepspeed_states(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_run(fx, "model m { input x: 3x32x32;\n"
			      "  c = conv(x, 16, kernel=3, pad=1); r = relu(c);\n"
			      "  f = flatten(r); o = fc(f, 10); }", PASS_MEMORY);
	double W, want[4][3] = { { 0 } };

	assert_non_null(g);
	W = (double)g->total.params;
	for (int z = 1; z <= 3; z++) {
		Analysis an = { .eng = fx->eng,
				.q.sys = fx_abci(fx),
				.q.impl = fx_impl(fx_abci(fx)),
				.q.set.gpus = 8,
				.q.set.batch_per_gpu = 8,
				.q.set.dataset_size = 800,
				.q.set.sample_bytes = 1000,
				.q.set.prec = PREC_AMP_FP16,
				.q.set.opt = OPT_ADAM,
				.q.set.zero = z };
		StrategyOpts o = { .mask = 1u << STRAT_DATA };
		const MemUse *m = &an.cand[STRAT_DATA].mem;
		want[1][0] = 2 * W, want[1][1] = 2 * W, want[1][2] = 12 * W / 8;
		want[2][0] = 2 * W, want[2][1] = 2 * W / 8, want[2][2] = 12 * W / 8;
		want[3][0] = 2 * W / 8, want[3][1] = 2 * W / 8, want[3][2] = 12 * W / 8;
		assert_true(strategies_run(g, &an, &o));
		NEAR(m->weights, want[z][0]);
		NEAR(m->grads, want[z][1]);
		NEAR(m->optimizer, want[z][2]);
		/* stage 3 gathers the parameters forward and backward */
		if (z == 3)
			assert_true(an.cand[STRAT_DATA].t.grad + an.cand[STRAT_DATA].t.grad_hidden >
				    coll_allreduce(&an, (Group){ 8, 4, 1 }, W * 4) *
					    (1 - 1e-12));
	}
}

/* ZeRO's exchange as DeepSpeed runs it over NCCL (zero_partition "flat";
 * a PyTorch stack runs stages 2 and 3 as FSDP: below): a reduce-scatter in
 * the backward, in the window DDP's all-reduce had, and under stages 1 and
 * 2 an all-gather of the updated parameters after the step, exposed --
 * each as coll_reduce_scatter and coll_allgather price them (NCCL's model
 * at the implementation's version: rings, no tree for either). */
static void
zero_exchanges_in_two_rings(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_run(fx, "model m { input x: 3x32x32;\n"
			      "  c = conv(x, 64, kernel=3, pad=1); r = relu(c);\n"
			      "  f = flatten(r); o = fc(f, 1000); }", PASS_MEMORY);
	const System *s = system_load("dgx-a100", &fx->arena, &fx->files);
	Candidate k[4];
	Group grp;
	Analysis one = { 0 };

	assert_non_null(g);
	assert_non_null(s);
	for (int z = 0; z <= 3; z++) {
		Analysis an = { .eng = fx->eng,
				.q.sys = s,
				.q.impl = fx_impl(s),
				.q.set.gpus = 1024,
				.q.set.batch_per_gpu = 8,
				.q.set.dataset_size = 800000,
				.q.set.sample_bytes = 1000,
				.q.set.prec = PREC_AMP_FP16,
				.q.set.opt = OPT_MOMENTUM,
				.q.set.zero = z };
		StrategyOpts o = { 0 };
		int64_t grid[DIM_COUNT] = { [DIM_DATA] = 1024 };
		Mapping m;
		an.q.impl.flat_zero = true; /* DeepSpeed's */
		assert_false(zero_fsdp(&an));
		assert_true(strategy_predict(g, &an, &o, STRAT_DATA, grid, &k[z]));
		grid_map(s, grid, NEST_MODEL_INNER, &m);
		grp = m.grad;
		one = an;
	}
	{
		double W = (double)g->total.params, ring = coll_reduce_scatter(&one, grp, W * 2);
		double window = k[0].t.grad_hidden, hid = ring < window ? ring : window;
		double gather = coll_allgather(&one, grp, W * 2);
		/* stage 1 hides the reduce-scatter in DDP's window; stage 2's
		 * backward, without the gradients added into kept ones, is
		 * shorter: a window of its own */
		NEAR(k[1].t.grad_hidden, hid);
		for (int z = 1; z <= 2; z++) {
			NEAR(k[z].t.grad + k[z].t.grad_hidden, ring + gather);
			assert_true(k[z].t.grad_hidden <= hid * (1 + 1e-12));
		}
		/* stage 3: the reduce-scatter, and the gathers beside it */
		assert_true(k[3].t.grad + k[3].t.grad_hidden > ring * (1 - 1e-12));
	}
}

/* FSDP's HYBRID_SHARD against its statement (PyTorch's ShardingStrategy
 * docs: "shard within a node, replicate across nodes"): on 16 abci GPUs (4
 * nodes of 4) the states divide by the node's 4, not by 16; the exchange
 * is the flat parameter gathered inside the node before the forward, its
 * gradient reduce-scattered inside the node after the backward, then each
 * 1/4 shard all-reduced across the 4 nodes by the node's 4 GPUs at once
 * (_runtime_utils.py's _post_backward_hook: allreduce_hook on the inter-node
 * state), in fp32 (no MixedPrecision: autocast's parameters are fp32), and
 * none of it hidden: the one unit's gradient is whole only at the end of
 * the backward. */
static void
fsdp_hybrid_shards_inside_a_node(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_run(fx, "model m { input x: 3x32x32;\n"
			      "  c = conv(x, 16, kernel=3, pad=1); r = relu(c);\n"
			      "  f = flatten(r); o = fc(f, 10); }", PASS_MEMORY);
	Analysis an = { .eng = fx->eng,
			.q.sys = fx_abci(fx),
			.q.impl = fx_impl(fx_abci(fx)),
			.q.set.gpus = 16,
			.q.set.batch_per_gpu = 8,
			.q.set.dataset_size = 800,
			.q.set.sample_bytes = 1000,
			.q.set.prec = PREC_AMP_FP16,
			.q.set.opt = OPT_ADAM,
			.q.set.zero = 3,
			.q.set.zero_node = true };
	StrategyOpts o = { .mask = 1u << STRAT_DATA };
	const Candidate *k = &an.cand[STRAT_DATA];
	double W, b, exchange;

	assert_non_null(g);
	W = (double)g->total.params;
	b = 4 * W;
	assert_true(strategies_run(g, &an, &o));
	NEAR(k->mem.weights, 2 * W / 4);
	NEAR(k->mem.grads, 2 * W / 4);
	NEAR(k->mem.optimizer, 12 * W / 4);
	exchange = coll_allgather(&an, (Group){ 4, 4, 1 }, b) +
		   coll_reduce_scatter(&an, (Group){ 4, 4, 1 }, b) +
		   coll_allreduce(&an, (Group){ 4, 1, 4 }, b / 4);
	assert_true(zero_fsdp(&an));
	NEAR(k->t.grad, exchange);
	assert_true(k->t.grad_hidden == 0);
}

/* FSDP's FULL_SHARD as the plan runs it (one unit, the whole model: the
 * launcher's FsdpJob), against PyTorch 2.0's _runtime_utils.py: the unit
 * issues one all-gather an iteration -- before the forward; the root is
 * not freed after it, so the backward gathers nothing again -- and its
 * gradient's reduce-scatter after the backward, 2 rings of the fp32 flat
 * parameter over the 16 GPUs with nothing to hide behind, where DeepSpeed's
 * stage 3 gathers twice and hides behind the compute; its hooks and the
 * views of each parameter tensor, twice, cost the CPU (12 + 2 x tensors)
 * dispatches an iteration. */
static void
fsdp_full_shard_gathers_once_per_unit(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_run(fx, "model m { input x: 3x32x32;\n"
			      "  c = conv(x, 16, kernel=3, pad=1); r = relu(c);\n"
			      "  f = flatten(r); o = fc(f, 10); }", PASS_MEMORY);
	const System *s = system_load("dgx-a100", &fx->arena, &fx->files);
	Analysis an = { .eng = fx->eng,
			.q.sys = s,
			.q.impl = fx_impl(s),
			.q.set.gpus = 16,
			.q.set.batch_per_gpu = 8,
			.q.set.dataset_size = 800,
			.q.set.sample_bytes = 1000,
			.q.set.prec = PREC_AMP_BF16,
			.q.set.opt = OPT_MOMENTUM,
			.q.set.zero = 3 };
	StrategyOpts o = { 0 };
	int64_t grid[DIM_COUNT] = { [DIM_DATA] = 16 };
	Candidate k, ds;
	Mapping m;
	double W, ring, arrays;
	int gathers;

	assert_non_null(g);
	assert_non_null(s);
	W = (double)g->total.params;
	arrays = layer_table(&an, g)->arrays;
	grid_map(s, grid, NEST_MODEL_INNER, &m);
	ring = coll_allgather(&an, m.grad, 4 * W) + coll_reduce_scatter(&an, m.grad, 4 * W);
	assert_true(zero_fsdp(&an));
	NEAR(fsdp_exchange(&an, g, m.grad, W, &gathers), ring);
	assert_int_equal(gathers, 1);
	assert_true(strategy_predict(g, &an, &o, STRAT_DATA, grid, &k));
	NEAR(k.t.grad, ring);
	assert_true(k.t.grad_hidden == 0);
	NEAR(fsdp_host(&an, arrays), (12 + 2 * arrays) * an.q.impl.dispatch);
	/* DeepSpeed's stage 3 on the same grid: a 16-bit reduce-scatter and
	 * two gathers, each hidden as far as the compute lasts, and no hooks
	 * on the CPU */
	an.q.impl.flat_zero = true;
	assert_true(strategy_predict(g, &an, &o, STRAT_DATA, grid, &ds));
	NEAR(ds.t.grad + ds.t.grad_hidden,
	     coll_reduce_scatter(&an, m.grad, 2 * W) + 2 * coll_allgather(&an, m.grad, 2 * W));
	assert_true(fsdp_host(&an, arrays) == 0);
	NEAR(k.t.host - ds.t.host, (12 + 2 * arrays) * an.q.impl.dispatch);
}

/* Layer i's kept bytes per sample at fp32, as autograd keeps them. */
static double
act_at(const Graph *g, int i)
{
	return (double)kept_bytes(&g->keep[0][KEEP_PLAIN].layer[i], PREC_FP32);
}

/* Recomputation against Chen et al.'s sqrt(L) rule: a chain of 16 equal
 * layers (ReLUs of 1,000 items, each saving its output, 4,000 B) keeps,
 * with segments of K, the input, the 16 / K - 1 boundaries and one
 * segment: 4,000 (1 + 16 / K - 1 + K) B per sample, least at K = 4
 * (32,000 B of 68,000); forward again for the 12 layers before the last
 * segment. */
static void
recompute_keeps_sqrt_of_a_chain(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_relu_chain(fx, 16);
	Settings set = settings_default;
	Analysis an;

	assert_non_null(g);
	assert_int_equal(g->nlayer, 16);
	NEAR(act_at(g, 0), 4000);
	set.recompute = RECOMPUTE_FULL;
	assert_true(analysis_setup(&an, fx->eng, &set, g, fx_abci(fx)));
	assert_int_equal(an.rc.k, 4);
	assert_int_equal(an.rc.first_kept, 12);
	NEAR(an.rc.fraction, 32000.0 / 68000);
	set.recompute = 8;
	assert_true(analysis_setup(&an, fx->eng, &set, g, fx_abci(fx)));
	NEAR(an.rc.fraction, 40000.0 / 68000);
}

/* Selective recomputation against Korthikanti et al. (MLSys'23, section
 * 4.1): it frees the softmax output, the dropout mask and the dropout
 * output, 2as^2 + as^2 + 2as^2 bytes per sample in fp16 -- here fp32, so
 * (4 + 1 + 4) a s^2 -- for a = 4 heads over s = 16 tokens: 9,216 B, and
 * recomputes QK^T, the softmax and dropout in backward.  Q, K and V stay
 * (graph inputs here). */
static void
selective_recomputes_the_attention_core(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_run(fx, "model m { input q: 4x16x8; input k: 4x8x16; input v: 4x16x8;\n"
			      "  s = matmul(q, k); p = softmax(s, axis=2); d = dropout(p);\n"
			      "  o = matmul(d, v); }", PASS_MEMORY);
	Settings set = settings_default;
	Analysis an;
	double full = 0, core = 0;
	bool marks[4] = { false };

	assert_non_null(g);
	assert_int_equal(graph_attention(g, marks), 1);
	assert_true(marks[0] && marks[1] && marks[2] && !marks[3]);
	for (int i = 0; i < g->ninput; i++)
		full += (double)g->tensor[g->input[i]].elems * 4;
	for (int i = 0; i < g->nlayer; i++)
		full += act_at(g, i);
	for (int i = 0; i < 3; i++)
		core += act_at(g, i);
	NEAR(core, 9.0 * 4 * 16 * 16);
	set.recompute = RECOMPUTE_ATTENTION;
	assert_true(analysis_setup(&an, fx->eng, &set, g, fx_abci(fx)));
	assert_int_equal(an.rc.k, RECOMPUTE_SELECTIVE);
	NEAR(an.rc.fraction, (full - 9216) / full);
}

/* An attention a fused kernel can run (PyTorch 2's scaled_dot_product_
 * attention: no trained term added before the softmax) keeps Q, K and V
 * and a log-sum-exp per query row, not the scores' softmax (4 heads x 128
 * x 128 floats), the dropout's mask (bytes) nor its output (floats):
 * 589,824 bytes a sample fewer, 4 x 128 x 4 more.  The layers between the
 * products run nothing of their own, and at a large batch the fused
 * kernel, moving no scores through memory, is faster than the operators
 * one by one.  With a trained bias added to the scores (Swin's relative
 * position bias) nothing is fused. */
static void
fused_attention_keeps_q_k_v_and_the_row_statistics(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_run(fx, "model m { input q: 4x128x16; input k: 4x16x128; input v: 4x128x16;\n"
			      "  s = matmul(q, k); p = softmax(s, axis=2); d = dropout(p);\n"
			      "  o = matmul(d, v); }", PASS_MEMORY);
	const System *s = system_load("dgx-h100", &fx->arena, &fx->files);
	Analysis an = {
		.eng = fx->eng, .q.sys = s, .q.impl = fx_impl(NULL), .q.set.prec = PREC_FP32
	};
	double eager = 0, fused = 0;
	int64_t kept_eager;

	assert_non_null(g);
	assert_int_equal(g->layer[0].attn, ATTN_QK);
	assert_int_equal(g->layer[1].attn, ATTN_CORE);
	assert_int_equal(g->layer[2].attn, ATTN_CORE);
	assert_int_equal(g->layer[3].attn, ATTN_PV);
	assert_non_null(g->keep[1][KEEP_PLAIN].layer);
	assert_false(an.q.impl.fused_attention);
	kept_eager = kept(&an, g).act;
	assert_int_equal(kept_eager, act_at(g, 0) + act_at(g, 1) + act_at(g, 2) + act_at(g, 3) +
					     3 * 4 * 128 * 16 * 4);
	for (int i = 0; i < g->nlayer; i++)
		eager += layer_time(&an, g, &g->layer[i], 256, 1, DIM_DATA, false) +
			 layer_time(&an, g, &g->layer[i], 256, 1, DIM_DATA, true);
	an.q.impl.attention = "fused";
	assert_null(implementation_check(&an.q.impl, &(const char *){ NULL }));
	assert_true(an.q.impl.fused_attention);
	assert_int_equal(kept(&an, g).act, kept_eager - 589824 + 4 * 128 * 4);
	NEAR(kept_layer(&an, g, 1), 4 * 128 * 4);
	for (int i = 0; i < g->nlayer; i++)
		fused += layer_time(&an, g, &g->layer[i], 256, 1, DIM_DATA, false) +
			 layer_time(&an, g, &g->layer[i], 256, 1, DIM_DATA, true);
	NEAR(layer_time(&an, g, &g->layer[1], 256, 1, DIM_DATA, false), 0);
	NEAR(layer_time(&an, g, &g->layer[2], 256, 1, DIM_DATA, true), 0);
	assert_true(fused < eager);
	/* the fused scores' product runs as FlashAttention tiles it: a block
	 * of queries' 16-wide output reduced over the 128 keys (M 128, N 16,
	 * K 128), not 128 x 128 scores reduced over 16 (docs/model.md, "One
	 * kernel") */
	{
		const Layer *qk = &g->layer[0];
		double fl = (double)qk->cost.flops_fwd * 256, own = 2.0 * 128 * 16 * 128 * 1024;
		double peak = s->peak[DT_FP32];
		Gemm flash = { 128, 16, 128, 1024 }, scores = { 128, 128, 16, 1024 };
		NEAR(kernel_compute(&an, g, qk, 256, 1, false, DT_FP32, peak, 0.8, fl),
		     gemm_time(an.eng, s, &flash, peak, 0.8) * fl / own);
		an.q.impl.fused_attention = false;
		NEAR(kernel_compute(&an, g, qk, 256, 1, false, DT_FP32, peak, 0.8, fl),
		     gemm_time(an.eng, s, &scores, peak, 0.8) * fl / own);
		an.q.impl.fused_attention = true;
	}

	g = fx_run(fx, "model m { input q: 4x16x8; input k: 4x8x16; input v: 4x16x8;\n"
		       "  s = matmul(q, k); b = scale(s); p = softmax(b, axis=2);\n"
		       "  o = matmul(p, v); }", PASS_COST);
	assert_non_null(g);
	g->layer[1].cost.params = 16 * 16; /* the bias a table gives, trained */
	assert_true(memory_annotate(g));
	assert_int_equal(graph_attention(g, NULL), 1);
	assert_null(g->keep[1][KEEP_PLAIN].layer);
	for (int i = 0; i < g->nlayer; i++)
		assert_int_equal(g->layer[i].attn, ATTN_NONE);
}

/* A GPT of two layers as SC'21's models are written (pre-LN; Q, K and V
 * three fc; heads by reshape and transpose; the output layer over the
 * vocabulary), s = 32 tokens, h = 64, a = 4 heads of 16, V = 128. */
static const char gpt_two[] =
	"block layer(x, s, h, a) { d = h / a; ln1 = layernorm(x);\n"
	"  q = fc(ln1, h); k = fc(ln1, h); v = fc(ln1, h);\n"
	"  qh = reshape(q, [s, a, d]); qh = transpose(qh, [1, 0, 2]);\n"
	"  kh = reshape(k, [s, a, d]); kh = transpose(kh, [1, 2, 0]);\n"
	"  vh = reshape(v, [s, a, d]); vh = transpose(vh, [1, 0, 2]);\n"
	"  sc = matmul(qh, kh); pr = softmax(sc); pr = dropout(pr, p=0.1);\n"
	"  ctx = matmul(pr, vh); ctx = transpose(ctx, [1, 0, 2]); ctx = reshape(ctx, [s, h]);\n"
	"  pj = fc(ctx, h); pj = dropout(pj, p=0.1); r1 = add(x, pj); ln2 = layernorm(r1);\n"
	"  f1 = fc(ln2, 4 * h); ac = gelu(f1); f2 = fc(ac, h); f2 = dropout(f2, p=0.1);\n"
	"  out = add(r1, f2); return out; }\n"
	"model gpt { s = 32; h = 64; a = 4; V = 128; input x: [s, h] as tokens; input pos: s;\n"
	"  wpe = fc(pos, h, bias=false); e = add(x, wpe); e = dropout(e, p=0.1);\n"
	"  repeat 2 { e = layer(e, s, h, a); } lf = layernorm(e);\n"
	"  lg = fc(lf, V, bias=false); loss = softmax(lg); }";

/* Megatron's tensor parallelism found on the layers (model/tensor.c): in
 * each transformer layer Q, K, V and the MLP's first fc column-parallel,
 * the projection and the MLP's second row-parallel -- two all-reduces of
 * the s x h output forward (their g), two of an s x h input's gradient
 * backward (the f before Q, K and V, read from one layer norm, and before
 * the MLP) -- the attention core split over its heads between them, the
 * norms, dropouts after the row-parallel layers and residual adds whole,
 * the position table (an fc of the graph input) whole, the output layer
 * over the vocabulary and its cross-entropy.  Heads of 4 split 2 or 4
 * ways, not 3 (Megatron divides them evenly) nor 8. */
static void
tensor_parallel_pairs_reduce_twice_each_way(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_run(fx, gpt_two, PASS_MEMORY);
	Settings set = settings_default;
	Analysis an;
	const TensorTable *t;
	int fwd = 0, bwd = 0, ce = 0, split = 0;

	assert_non_null(g);
	assert_true(analysis_setup(&an, fx->eng, &set, g, fx_abci(fx)));
	assert_int_equal(an.tf.layers, 2);
	t = &layer_table_tensor(&an, g)->tensor;
	for (int i = 0; i < g->nlayer; i++) {
		const char *n = g->layer[i].name, *b = strrchr(n, '/') ? strrchr(n, '/') + 1 : n;
		bool cut = strcmp(b, "pj") == 0 || strcmp(b, "f2") == 0;
		bool col = !strcmp(b, "q") || !strcmp(b, "k") || !strcmp(b, "v") ||
			   !strcmp(b, "f1") || !strcmp(b, "lg");
		fwd += (t->tp[i] & TP_REDUCE) != 0;
		bwd += t->bwd[i] >= 0;
		ce += (t->tp[i] & TP_CE) != 0;
		split += (t->tp[i] & TP_SPLIT) != 0;
		if (cut && g->layer[i].op == OP_FC)
			assert_int_equal(t->tp[i], TP_SPLIT | TP_REDUCE | TP_ROWPAR);
		if (col)
			assert_int_equal(t->tp[i], TP_SPLIT);
		if (!strcmp(b, "ln1") || !strcmp(b, "ln2") || !strcmp(b, "r1") ||
		    !strcmp(b, "out") || !strcmp(b, "wpe") || !strcmp(b, "lf"))
			assert_int_equal(t->tp[i], 0);
		if (!strcmp(b, "sc") || !strcmp(b, "pr") || !strcmp(b, "ctx") || !strcmp(b, "ac"))
			assert_true(t->tp[i] & TP_SPLIT);
	}
	/* per layer: 2 forward, 2 backward; the output layer's input 1 more
	 * backward; its softmax the cross-entropy */
	assert_int_equal(fwd, 2 * 2);
	assert_int_equal(bwd, 2 * 2 + 1);
	assert_int_equal(ce, 1);
	assert_true(split > 2 * 12);
	assert_null(tensor_refusal(t, 2));
	assert_null(tensor_refusal(t, 4));
	assert_non_null(tensor_refusal(t, 3));
	assert_non_null(tensor_refusal(t, 8));
}

/* Megatron's context parallelism (model/context.c): one block is the
 * GPU's K and V of its s/C tokens; Transformer Engine's ring sends one
 * block at each of C-1 forward steps and 2(C-1) blocks backward (K,V;
 * then K,V with dK,dV at once; then dK,dV), each hidden behind its step's
 * compute; the refusals. */
static void
context_ring_sends_what_transformer_engine_sends(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_run(fx, gpt_two, PASS_MEMORY);
	Settings set = settings_default;
	Transformer tf = { .layers = 24, .heads = 24, .head_dim = 96, .hidden = 2304,
			   .kv_groups = 24, .seq = 2048 };
	Group ring = { 4, 4, 1 };
	Analysis an;
	double kv, one, two, fwd, t;

	assert_non_null(g);
	set.prec = PREC_AMP_FP16;
	assert_true(analysis_setup(&an, fx->eng, &set, g, fx_abci(fx)));
	/* SC'21's 1.7 B GPT, 8 samples over 2: 2 x 8 x 1024 x 2304 x 2 bytes */
	assert_true(context_kv_bytes(&an, &tf, 8, 1, 2) == 75497472.0);
	/* a tensor group of 2 holds half the heads' */
	assert_true(context_kv_bytes(&an, &tf, 8, 2, 2) == 75497472.0 / 2);
	kv = context_kv_bytes(&an, &tf, 8, 1, 4);
	one = p2p_time(&an, kv, false);
	two = p2p_time(&an, 2 * kv, false);
	/* nothing to hide behind: every send exposed */
	t = context_ring(&an, 0, 0, kv, ring, &fwd);
	assert_true(fabs(fwd - 3 * one) <= 1e-12 * fwd);
	assert_true(fabs(t - (3 * one + 2 * one + 2 * two)) <= 1e-12 * t);
	/* a step longer than the doubled send: all hidden */
	assert_true(context_ring(&an, two, two, kv, ring, &fwd) == 0 && fwd == 0);
	/* forward hidden, backward's doubled sends half exposed */
	t = context_ring(&an, two, one, kv, ring, &fwd);
	assert_true(fwd == 0 && fabs(t - 2 * (two - one)) <= 1e-12 * t);
	/* one GPU: no ring */
	ring.size = 1;
	assert_true(context_ring(&an, 0, 0, kv, ring, &fwd) == 0);
	assert_null(context_refusal(&tf, 4));
	assert_non_null(context_refusal(&tf, 3)); /* 2048 in 6 chunks */
	tf.layers = 0;
	assert_non_null(context_refusal(&tf, 2));
}

/* The activation memory of a transformer layer as Korthikanti et al.
 * (MLSys'23, section 4) derive it, from the layers: in 16 bits, s b h
 * (34 + 5 a s / h) bytes a layer -- 11 s b h + 5 a s^2 b in the
 * attention, 19 s b h in the MLP, 4 s b h the two norms' inputs -- plus
 * the norms' fp32 statistics (16 bytes a token, which the paper leaves
 * out); split t ways, s b h (10 + 24/t + 5 a s / (h t)) (their eq. 2: the
 * norms' inputs, the QKV and MLP inputs and the two dropout masks stay
 * whole); with sequence parallelism all of it over t (eq. 4). */
static void
tensor_parallel_keeps_the_papers_activations(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_run(fx, gpt_two, PASS_MEMORY);
	Settings set = settings_default;
	const double s = 32, h = 64, a = 4, stats = 2 * 2 * s * 4;
	Analysis an;
	const TensorTable *t;
	int first = -1, last = -1;

	assert_non_null(g);
	set.prec = PREC_FP16;
	assert_true(analysis_setup(&an, fx->eng, &set, g, fx_abci(fx)));
	t = &layer_table_tensor(&an, g)->tensor;
	/* the second layer: from its first norm to its residual add */
	for (int i = 0; i < g->nlayer; i++) {
		if (strstr(g->layer[i].name, "/ln1") && first < 0 && i > 10)
			first = i;
		if (first >= 0 && last < 0 && strstr(g->layer[i].name, "/out"))
			last = i;
	}
	assert_true(first > 0 && last > first);
	for (int ways = 1; ways <= 4; ways *= 2)
		for (int sp = 0; sp < 2; sp++) {
			double got = 0, want;
			for (int i = first; i <= last; i++)
				got += kept_layer(&an, g, i) * tensor_share(t, i, ways, sp);
			want = sp ? (s * h * 34 + 5 * a * s * s + stats) / ways
				  : s * h * (10 + 24.0 / ways) + 5 * a * s * s / ways + stats;
			NEAR(got, want);
		}
}

/* One matrix product as tiles in waves (model/kernel.c), on a made-up GPU
 * of one SM at 1 TFLOPS, its main loop at the peak: a 128 x 128 x 128
 * product is one tile of 128 x 128, 2 x 128^3 FLOPs; one more row
 * (129) pads a second row of such tiles, where ten tiles of 32 x 64 at
 * r(32, 64) / r(128, 128) of the rate take least; a tile's overhead of
 * 32 steps adds 32 / 128 to the first.  On 4 SMs a single tile's K is
 * split 4 ways, the parts summed through memory. */
static void
tiles_run_in_waves_over_the_sms(void **state)
{
	(void)state;
	System s = { .sms = 1, .mem_bw = 1e21, .eff_mem = 1 };
	Gemm p = { 128, 128, 128, 1 }, q = { 129, 128, 128, 1 };
	double r = (32.0 * 64 / (32 * 64 + 10 * 96)) / (128.0 * 128 / (128 * 128 + 10 * 256));

	NEAR(gemm_time(NULL, &s, &p, 1e12, 1), 2 * 128.0 * 128 * 128 / 1e12);
	NEAR(gemm_time(NULL, &s, &q, 1e12, 1), 10 * 2 * 32.0 * 64 * 128 / (r * 1e12));
	s.tile_overhead = 32;
	NEAR(gemm_time(NULL, &s, &p, 1e12, 1), 2 * 128.0 * 128 * 160 / 1e12);
	s.tile_overhead = 0;
	s.sms = 4;
	p.k = 1024;
	assert_true(fabs(gemm_time(NULL, &s, &p, 4e12, 1) - 2 * 128.0 * 128 * 256 / 1e12) < 1e-12);
	s.sms = 0; /* no SMs given: the plain rate */
	NEAR(gemm_time(NULL, &s, &p, 4e12, 0.5), 2 * 128.0 * 128 * 1024 / 2e12);
}

/* cuDNN's Winograd F(4x4, 3x3) for a 3 x 3, stride-1 convolution in true
 * fp32 on an H100: 36 products where direct convolution has 144, worth
 * its transforms at 64 channels of 56 x 56 on 64 samples, faster than its
 * implicit GEMM; in TF32 (tensor cores) cuDNN runs the implicit GEMM, and
 * so does it where nothing times the algorithms (conv_search "heuristic");
 * a stride-2 convolution has no Winograd. */
static void
winograd_runs_three_by_three_convolutions_in_fp32(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_run(
		fx,
		"model m { input x: 64x56x56;\n"
		"  c = conv(x, 64, kernel=3, pad=1); d = conv(x, 64, kernel=3, pad=1, stride=2); }",
		PASS_MEMORY);
	const System *s = system_load("dgx-h100", &fx->arena, &fx->files);
	Analysis an = { .eng = fx->eng, .q.sys = s, .q.impl = fx_impl(NULL) };
	const Layer *c, *d;
	Gemm p[3];
	double flops, direct;

	assert_non_null(g);
	c = fx_layer(g, "c"), d = fx_layer(g, "d");
	assert_int_equal(layer_gemms(g, c, 64, false, p), 1);
	NEAR(p[0].m, 64.0 * 56 * 56);
	NEAR(p[0].n, 64);
	NEAR(p[0].k, 64.0 * 9);
	flops = (double)c->cost.flops_fwd * 64;
	direct = gemm_time(NULL, s, &p[0], s->peak[DT_FP32], s->eff_conv) * flops /
		 (2 * p[0].m * p[0].n * p[0].k);
	assert_true(kernel_compute(&an, g, c, 64, 1, false, DT_FP32, s->peak[DT_FP32], s->eff_conv,
				   flops) < 0.7 * direct);
	direct = gemm_time(NULL, s, &p[0], s->peak[DT_TF32], s->eff_conv) * flops /
		 (2 * p[0].m * p[0].n * p[0].k);
	NEAR(kernel_compute(&an, g, c, 64, 1, false, DT_TF32, s->peak[DT_TF32], s->eff_conv, flops),
	     direct);
	an.q.impl.conv_search = "heuristic"; /* no algorithms timed: the implicit GEMM */
	assert_null(implementation_check(&an.q.impl, &(const char *){ NULL }));
	NEAR(kernel_compute(&an, g, c, 64, 1, false, DT_FP32, s->peak[DT_FP32], s->eff_conv, flops),
	     gemm_time(NULL, s, &p[0], s->peak[DT_FP32], s->eff_conv) * flops /
		     (2 * p[0].m * p[0].n * p[0].k));
	assert_int_equal(layer_gemms(g, d, 64, true, p), 1); /* reads the input: no data gradient */
	flops = (double)d->cost.flops_fwd * 64;
	assert_int_equal(layer_gemms(g, d, 64, false, p), 1);
	NEAR(kernel_compute(&an, g, d, 64, 1, false, DT_FP32, s->peak[DT_FP32], s->eff_conv, flops),
	     gemm_time(NULL, s, &p[0], s->peak[DT_FP32], s->eff_conv) * flops /
		     (2 * p[0].m * p[0].n * p[0].k));
}

/* Tensor cores on NCHW data: a convolution run in TF32 on dgx-a100 adds
 * the transposes of its input and output, a read and a write of each: 2 x
 * its activation bytes over memory_bw x eff_memory.  The conv reads
 * 3x32x32 and writes 16x32x32 floats per sample, (3,072 + 16,384) x 4 =
 * 77,824 bytes; at 512 samples (large enough to beat the dispatch time),
 * forward: 2 x 39,845,888 / (2039e9 x 0.85).
 * channels_last, and fp32 (no tensor cores), add nothing; an fp32 run
 * under an implementation with TF32 convolutions (PyTorch's default) is
 * a TF32 run for its convolutions. */
static void
tensor_core_convolutions_pay_nchw_transposes(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_run(fx, "model m { input x: 3x32x32;\n"
			      "  c = conv(x, 16, kernel=3, pad=1); }", PASS_MEMORY);
	const System *s = system_load("dgx-a100", &fx->arena, &fx->files);
	Analysis an = { .eng = fx->eng, .q.sys = s, .q.impl = fx_impl(s), .q.set.prec = PREC_TF32 };
	double nchw, nhwc;

	assert_non_null(g);
	assert_non_null(s);
	assert_int_equal(g->layer[0].cost.elems_fwd - g->layer[0].cost.params, 19456);
	nchw = layer_time(&an, g, &g->layer[0], 512, 1, DIM_DATA, false);
	an.q.set.channels_last = true;
	nhwc = layer_time(&an, g, &g->layer[0], 512, 1, DIM_DATA, false);
	NEAR(nchw - nhwc, 2 * 512.0 * 77824 / (2039e9 * 0.85));
	an.q.set.channels_last = false;
	an.q.set.prec = PREC_FP32;
	assert_true(an.q.impl.conv_tf32);
	NEAR(layer_time(&an, g, &g->layer[0], 512, 1, DIM_DATA, false), nchw);
	an.q.impl.conv_tf32 = false;
	an.q.set.channels_last = true;
	nhwc = layer_time(&an, g, &g->layer[0], 512, 1, DIM_DATA, false);
	an.q.set.channels_last = false;
	NEAR(layer_time(&an, g, &g->layer[0], 512, 1, DIM_DATA, false), nhwc);
}

/* ATen's depthwise weight gradient (PyTorch, NCHW, fp32/TF32): one block
 * per channel and tap reads the tap's input and the output gradient, so
 * backward moves the input gradient's bytes (read dy, write dx: the
 * forward's (16,384 + 16,384) x 4 = 131,072 per sample) plus 2 x 3 x 3 x
 * 16,384 x 4 = 1,179,648; cuDNN's TF32 kernels move 2 x 131,072 and
 * transpose twice that (test below): 786,432.  At 512 samples on
 * dgx-a100 the difference is 512 x (1,310,720 - 786,432) bytes over
 * 2039e9 x 0.85 B/s.  ATen's kernels skip the transposes: forward, the
 * cuDNN time less 2 x 131,072 x 512 bytes.  Channels-last, fp16 and a
 * grouped conv of 4 channels a group are cuDNN's.  (The depthwise conv
 * follows a 1x1 conv: its input needs a gradient.)  On the image itself
 * (no input gradient) ATen moves only the weight gradient's bytes, cuDNN
 * the forward's once. */
static void
aten_depthwise_weight_gradient_rereads_per_tap(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_run(fx, "model m { input x: 16x32x32; a = conv(x, 16, kernel=1);\n"
			      "  c = conv(a, 16, kernel=3, pad=1, groups=16); }", PASS_MEMORY);
	const System *s = system_load("dgx-a100", &fx->arena, &fx->files);
	Analysis an = { .eng = fx->eng, .q.sys = s, .q.impl = fx_impl(s), .q.set.prec = PREC_TF32 };
	double bw = 2039e9 * 0.85, aten, cudnn, fwd;

	assert_non_null(g);
	assert_non_null(s);
	assert_true(an.q.impl.aten_depthwise);
	assert_int_equal(g->layer[1].cost.elems_fwd - g->layer[1].cost.params, 32768);
	aten = layer_time(&an, g, &g->layer[1], 512, 1, DIM_DATA, true);
	fwd = layer_time(&an, g, &g->layer[1], 512, 1, DIM_DATA, false);
	an.q.impl.aten_depthwise = false;
	cudnn = layer_time(&an, g, &g->layer[1], 512, 1, DIM_DATA, true);
	NEAR(aten - cudnn, 512.0 * (1310720 - 786432) / bw);
	NEAR(layer_time(&an, g, &g->layer[1], 512, 1, DIM_DATA, false) - fwd,
	     2 * 512.0 * 131072 / bw);
	an.q.impl.aten_depthwise = true;
	an.q.set.channels_last = true;
	NEAR(layer_time(&an, g, &g->layer[1], 512, 1, DIM_DATA, true),
	     cudnn - 512.0 * 4 * 131072 / bw);
	an.q.set.channels_last = false;
	an.q.set.prec = PREC_AMP_FP16;
	an.q.impl.aten_depthwise = false;
	cudnn = layer_time(&an, g, &g->layer[1], 512, 1, DIM_DATA, true);
	an.q.impl.aten_depthwise = true;
	NEAR(layer_time(&an, g, &g->layer[1], 512, 1, DIM_DATA, true), cudnn);

	g = fx_run(fx, "model m { input x: 16x32x32; a = conv(x, 16, kernel=1);\n"
		       "  c = conv(a, 16, kernel=3, pad=1, groups=4); }", PASS_MEMORY);
	an.q.set.prec = PREC_TF32;
	aten = layer_time(&an, g, &g->layer[1], 512, 1, DIM_DATA, true);
	an.q.impl.aten_depthwise = false;
	NEAR(layer_time(&an, g, &g->layer[1], 512, 1, DIM_DATA, true), aten);

	g = fx_run(fx, "model m { input x: 16x32x32;\n"
		       "  c = conv(x, 16, kernel=3, pad=1, groups=16); }", PASS_MEMORY);
	assert_int_equal(g->layer[0].cost.elems_bwd, 32768);
	an.q.impl.aten_depthwise = true;
	aten = layer_time(&an, g, &g->layer[0], 512, 1, DIM_DATA, true);
	an.q.impl.aten_depthwise = false;
	NEAR(aten - layer_time(&an, g, &g->layer[0], 512, 1, DIM_DATA, true),
	     512.0 * (1179648 - 3 * 131072) / bw);
}

/* Halos are the rows a strip reads beyond its own (exact strips, PyTorch's
 * pairwise sends on 4 strips, 2 samples): a 3x3 stride-1 conv (pad 1)
 * one input row from each neighbour and one output-gradient row back
 * from each; a 3x3 stride-2 conv one input row from above and one
 * output-gradient row from below; a 2x2 stride-2 pooling none.  Rows:
 * 16 x 32 floats of the input, 16 x 16 (stride 2) or 16 x 32 of the
 * output, x 2 samples x 4 bytes.  chainermnx (abci's implementation)
 * exchanges floor(K/2) rows each way in a chain of 3 sends a direction,
 * and its pooling exchange has no backward: 6 sends of 1 input row.  A
 * layer whose implemented model calls no exchange in a pass (ParaDL's
 * ResNet bottlenecks: halo_forward=false) sends nothing in it: d only its
 * output gradient's rows, e only its input's (rows of 16 x 8 floats). */
static void
halos_are_the_rows_a_strip_reads(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_run(
		fx,
		"model m { input x: 16x32x32;\n"
		"  a = conv(x, 16, kernel=3, pad=1); b = conv(a, 16, kernel=3, stride=2, pad=1);\n"
		"  c = maxpool(b, kernel=2);\n"
		"  d = conv(c, 16, kernel=3, pad=1, halo_forward=false);\n"
		"  e = conv(d, 16, kernel=3, pad=1, halo_backward=false); }",
		PASS_MEMORY);
	const System *s = fx_abci(fx);
	Implementation py = fx_impl(NULL); /* pytorch's */
	Analysis an = { .eng = fx->eng, .q.sys = s, .q.impl = fx_impl(s) };
	double in = 16 * 32 * 2 * 4.0, out2 = 16 * 16 * 2 * 4.0;

	assert_non_null(g);
	{
		Analysis pa = { .eng = fx->eng, .q.sys = s, .q.impl = py };
		NEAR(halo_time(&pa, g, &g->layer[0], 2, 4, false),
		     2 * p2p_time(&pa, in, false) + 2 * p2p_time(&pa, in, false));
		NEAR(halo_time(&pa, g, &g->layer[1], 2, 4, false),
		     p2p_time(&pa, in, false) + p2p_time(&pa, out2, false));
		NEAR(halo_time(&pa, g, &g->layer[2], 2, 4, false), 0);
		/* two strips: the two sends cross at once */
		NEAR(halo_time(&pa, g, &g->layer[1], 2, 2, false),
		     p2p_time(&pa, in, false) + p2p_time(&pa, out2, false));
		NEAR(halo_time(&pa, g, &g->layer[3], 2, 4, false),
		     2 * p2p_time(&pa, 16 * 8 * 2 * 4.0, false));
		NEAR(halo_time(&pa, g, &g->layer[4], 2, 4, false),
		     2 * p2p_time(&pa, 16 * 8 * 2 * 4.0, false));
		assert_true(halo_time(&pa, g, &g->layer[3], 2, 4, false) > 0);
	}
	assert_true(an.q.impl.halo_rows && an.q.impl.chain);
	NEAR(halo_time(&an, g, &g->layer[2], 2, 4, false), 6 * p2p_time(&an, out2, false));
	NEAR(halo_time(&an, g, &g->layer[0], 2, 4, false),
	     6 * p2p_time(&an, in, false) + 6 * p2p_time(&an, in, false));
}

/* Filter parallelism stops at the fewest filters (16 here), channel at
 * the fewest input channels after the first layer (16). */
static void
filter_and_channel_are_limited_by_the_narrowest_layer(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_run(fx, "model m { input x: 3x32x32;\n"
			      "  a = conv(x, 32, kernel=3, pad=1);\n"
			      "  b = conv(a, 16, kernel=3, pad=1);\n"
			      "  c = conv(b, 64, kernel=3, pad=1); }", PASS_MEMORY);
	Analysis an = { .eng = fx->eng,
			.q.sys = fx_abci(fx),
			.q.impl = fx_impl(fx_abci(fx)),
			.q.set.gpus = 32,
			.q.set.batch_per_gpu = 8,
			.q.set.dataset_size = 800,
			.q.set.sample_bytes = 1000 };
	StrategyOpts o = { .mask = (1u << STRAT_FILTER) | (1u << STRAT_CHANNEL) };

	assert_true(strategies_run(g, &an, &o));
	assert_false(an.cand[STRAT_FILTER].computable);
	assert_int_equal(an.cand[STRAT_FILTER].max_gpus, 16);
	assert_string_equal(an.cand[STRAT_FILTER].reason,
			    "more GPUs than the fewest filters of a layer");
	assert_int_equal(an.cand[STRAT_CHANNEL].max_gpus, 16);
	assert_int_equal(an.best, -1);
}

/* An ONNX file that merges 8 frames with the batch ([N, 8, 16, 32, 32] to
 * [N*8, 16, 32, 32]): the convolutions' per-sample inputs are 8 x C x H x W
 * (attr.lead 1).  Channel parallelism counts C, not the frames; spatial
 * parallelism, which splits the rows of [C, H, W], is not modelled. */
static void
layers_with_leading_dimensions_are_split_by_their_channels(void **state)
{
	Fx *fx = *state;
	Arena *a = &fx->arena;
	Onnx__GraphProto *og = ob_graph(a);
	Analysis an = { .eng = fx->eng,
			.q.sys = fx_abci(fx),
			.q.impl = fx_impl(fx_abci(fx)),
			.q.set.gpus = 32,
			.q.set.batch_per_gpu = 8,
			.q.set.dataset_size = 800,
			.q.set.sample_bytes = 1000 };
	StrategyOpts o = { .mask = (1u << STRAT_SPATIAL) | (1u << STRAT_CHANNEL) };
	const char *path = fx_write(fx, "frames.onnx", "");
	uint8_t *buf;
	size_t len;
	FILE *f;
	Graph *g;

	ob_input(a, og, ob_vinfo(a, "x", DIMS(SYM, 8, 16, 32, 32)));
	ob_init(a, og, ob_ints(a, "shape", DIMS(-1, 16, 32, 32)));
	ob_init(a, og, ob_tensor(a, "w1", FLOAT, DIMS(32, 16, 3, 3)));
	ob_init(a, og, ob_tensor(a, "w2", FLOAT, DIMS(64, 32, 3, 3)));
	ob_add(a, og, ob_node(a, "Reshape", "frames", "x,shape", "f"));
	ob_attr_ints(a, ob_add(a, og, ob_node(a, "Conv", "a", "f,w1", "y1")), "pads",
		     DIMS(1, 1, 1, 1));
	ob_attr_ints(a, ob_add(a, og, ob_node(a, "Conv", "b", "y1,w2", "y2")), "pads",
		     DIMS(1, 1, 1, 1));
	len = ob_pack(a, ob_model(a, og), &buf);
	assert_non_null(f = fopen(path, "wb"));
	assert_int_equal(fwrite(buf, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
	assert_non_null(g = onnx_load(path, a, &fx->files, NULL));
	assert_true(shape_infer(g) && cost_annotate(g) && memory_annotate(g));
	assert_int_equal(g->layer[1].attr.lead, 1);

	assert_true(strategies_run(g, &an, &o));
	assert_int_equal(an.cand[STRAT_CHANNEL].max_gpus, 16);
	assert_string_equal(an.cand[STRAT_CHANNEL].reason,
			    "more GPUs than the fewest input channels of a layer");
	assert_false(an.cand[STRAT_SPATIAL].computable);
	assert_int_equal(an.cand[STRAT_SPATIAL].max_gpus, 1);
	assert_string_equal(an.cand[STRAT_SPATIAL].reason,
			    "layers with dimensions before the channels are not split spatially");
	assert_string_equal(fx_diags(fx), "");
}

/* Four equal layers on two stages: the partitioner splits them 2 + 2. */
static void
pipeline_partition_balances_equal_layers(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_run(fx,
			  "model m { input x: 64x32x32;\n"
			  "  a = conv(x, 64, kernel=3, pad=1); b = conv(a, 64, kernel=3, pad=1);\n"
			  "  c = conv(b, 64, kernel=3, pad=1); d = conv(c, 64, kernel=3, pad=1); }",
			  PASS_MEMORY);
	Analysis an = { .eng = fx->eng,
			.q.sys = fx_abci(fx),
			.q.impl = fx_impl(fx_abci(fx)),
			.q.set.gpus = 2,
			.q.set.batch_per_gpu = 8,
			.q.set.dataset_size = 800,
			.q.set.sample_bytes = 1000 };
	StrategyOpts o = { .mask = 1u << STRAT_PIPELINE };
	const Candidate *k = &an.cand[STRAT_PIPELINE];

	assert_true(strategies_run(g, &an, &o));
	assert_int_equal(k->stages, 2);
	assert_int_equal(k->stage_end[0], 1);
	assert_int_equal(k->stage_end[1], 3);
	/* GPipe: (M + S - 1) steps of the slowest stage */
	NEAR(k->t.compute + k->t.bubble,
	     (k->micro_batches + 1) * k->t.compute / k->micro_batches);
}

/* Two convolutions of 64 channels on 64 x 32 x 32, one a stage on two
 * GPUs, 8 samples in M micro-batches, under an->impl (checked). */
static Graph *
two_convs(Fx *fx)
{
	return fx_run(fx, "model m { input x: 64x32x32;\n"
			  "  a = conv(x, 64, kernel=3, pad=1); b = conv(a, 64, kernel=3, pad=1); }",
		      PASS_MEMORY);
}

static const Candidate *
two_stages(Fx *fx, Graph *g, Analysis *an, int64_t M)
{
	StrategyOpts o = { .mask = 1u << STRAT_PIPELINE };
	const char *want;

	*an = (Analysis){ .eng = fx->eng,
			  .q.sys = fx_abci(fx),
			  .q.impl = an->q.impl,
			  .q.set.gpus = 2,
			  .q.set.batch_per_gpu = 8,
			  .q.set.micro_batches = M,
			  .q.set.dataset_size = 800,
			  .q.set.sample_bytes = 1000 };
	assert_null(implementation_check(&an->q.impl, &want));
	assert_true(strategies_run(g, an, &o));
	assert_int_equal(an->cand[STRAT_PIPELINE].stages, 2);
	assert_int_equal(an->cand[STRAT_PIPELINE].micro_batches, M);
	return &an->cand[STRAT_PIPELINE];
}

/* torchgpipe's checkpointing (pipe_checkpoint; tools/pipe_checkpoint.py
 * measured Pipe keep exactly this): of M micro-batches a stage keeps the
 * activations A of each ("never"), of the last only and the input I of
 * the others ("except-last", Pipe's default), or the inputs of all plus
 * the one it recomputes in backward ("always").  The checkpointed ones
 * run the stage's forward again: M - 1 forwards of the slowest stage.
 * 4 micro-batches of 2 samples. */
static void
pipeline_checkpoint_keeps_the_inputs(void **state)
{
	Fx *fx = *state;
	Graph *g = two_convs(fx);
	double n = 2, M = 4, A[2], I[2], never[2], in_act;

	assert_non_null(g);
	in_act = (double)g->keep[0][KEEP_PLAIN].input * 4;
	A[0] = (act_at(g, 0) + in_act) * n;
	A[1] = act_at(g, 1) * n;
	I[0] = 64 * 32 * 32 * 4 * n;
	I[1] = (double)fx_out(g, "a")->elems * 4 * n;
	for (int mode = 0; mode < 3; mode++) {
		Analysis an = { .eng = fx->eng, .q.impl = fx_impl(NULL) };
		const Candidate *k;
		an.q.impl.pipe_checkpoint =
			(const char *[]){ "never", "except-last", "always" }[mode];
		k = two_stages(fx, g, &an, 4);
		/* stage 0 holds the most: the graph input besides */
		NEAR(k->mem.activations, mode == 0   ? M * A[0]
					 : mode == 1 ? A[0] + (M - 1) * I[0]
						     : A[0] + M * I[0]);
		for (int i = 0; i < 2; i++) {
			if (mode == 0)
				never[i] = k->stage_mem[i] - M * A[i];
			else
				NEAR(k->stage_mem[i] - never[i],
				     mode == 1 ? A[i] + (M - 1) * I[i] : A[i] + M * I[i]);
		}
		/* the two stages are alike: either is the slowest */
		NEAR(k->t.recompute,
		     (mode == 0 ? 0 : mode == 1 ? M - 1 : M) *
			     layer_time(&an, g, &g->layer[0], n, 1, DIM_DATA, false));
	}
}

/* One process driving every stage (pipe_driver "threads", torchgpipe's
 * Pipe): its CPU issues the forward of each layer of every micro-batch
 * and of the recomputed ones, at `dispatch` each; what that takes beyond
 * the GPUs' path the GPUs wait (the host lane).  8 micro-batches, 7
 * recomputed: 15 x 2 calls.  A process per stage issues its own layer,
 * forward (again for 7 of 8) and backward, 1 + 7/8 + 1 calls a
 * micro-batch: longer than the stage's GPU time, it paces each of the
 * schedule's 8 + 1 steps.  (Gradients set to None: a backward call a
 * layer, no accumulating add; no cuDNN cost on top.) */
static void
one_process_issues_every_stage(void **state)
{
	Fx *fx = *state;
	Graph *g = two_convs(fx);

	assert_non_null(g);
	for (int threads = 0; threads < 2; threads++) {
		Analysis an = { .eng = fx->eng, .q.impl = fx_impl(NULL) };
		const Candidate *k;
		double gpu;
		an.q.impl.pipe_checkpoint = "except-last";
		an.q.impl.pipe_driver = threads ? "threads" : "process";
		an.q.impl.dispatch = 1e-3;
		an.q.impl.library_call = 0;
		an.q.impl.zero_grad = false;
		k = two_stages(fx, g, &an, 8);
		gpu = k->t.compute + k->t.bubble + k->t.recompute + k->t.layer;
		NEAR(k->t.dispatch, threads ? 15 * 2 * 1e-3 - gpu
					    : 9 * (2.875e-3 - (k->t.compute + k->t.recompute) / 8));
		assert_true(k->t.dispatch > 1e-3);
	}
}

/* Paper mode reproduces Table III: data and spatial on a one-conv model,
 * checked against the formulas written out here from the layer counts.
 * Four GPUs are one node of abci: alpha and beta are NVLink's (9 us,
 * 50 GB/s), the slowest link the ring crosses. */
static void
paper_mode_is_table_iii(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_run(fx, "model m { input x: 3x8x8;\n"
			      "  c = conv(x, 4, kernel=3, pad=1, bias=false); }", PASS_MEMORY);
	Analysis an = { .eng = fx->eng,
			.q.sys = fx_abci(fx),
			.q.impl = fx_impl(fx_abci(fx)),
			.q.set.gpus = 4,
			.q.set.batch_per_gpu = 2,
			.q.set.dataset_size = 80,
			.q.set.sample_bytes = 1000 };
	StrategyOpts o = { .mask = (1u << STRAT_DATA) | (1u << STRAT_SPATIAL),
			   .model = &cost_model_paper };
	const Layer *l;
	double peak = 15.7e12, a = 9e-6, beta = 1 / 50e9, d = 4, c, wu, W, B;

	assert_true(strategies_run(g, &an, &o));
	l = &g->layer[0];
	c = (double)(l->cost.flops_fwd + l->cost.flops_bwd) / peak;
	wu = 2.0 * 108 / peak;     /* |w| = 4 x 3 x 3 x 3 = 108 */
	W = 108;
	B = 8;                     /* 2 per GPU x 4 data replicas */
	NEAR(an.cand[STRAT_DATA].t.total, (B / 4) * c + wu + 2 * 3 * (a + d * W * beta / 4));
	/* spatial: B = 2 (no data dimension); halos of the 3x3 conv:
	 * h_x = 2 * 1 * 3 * 8 = 48, h_dy = 2 * 1 * 4 * 8 = 64 elements */
	NEAR(an.cand[STRAT_SPATIAL].t.total,
	     (2.0 / 4) * c + wu + 2 * 3 * (a + d * W * beta / 4) +
		     2 * (2 * a + 2 * d * beta * (48 + 64)));
	/* memory: 2 delta (b (|x| + |y|) + |w|), b = B/p */
	NEAR(an.cand[STRAT_DATA].mem.total, 2 * d * (2 * (192 + 256) + 108));
}

/* accuracy = 1 - |p - m| / m, and its means */
static void
validation_means_are_per_strategy_and_overall(void **state)
{
	Measured row[3] = {
		{ .kind = STRAT_DATA, .measured = 2, .predicted = 1.5, .paradl = 1 },
		{ .kind = STRAT_DATA, .measured = 1, .predicted = 1.2, .paradl = NAN },
		{ .kind = STRAT_DS, .measured = 1, .predicted = NAN, .paradl = 0.5 },
	};
	Validation v = { .row = row, .nrow = 3 };

	(void)state;
	validation_score(&v);
	NEAR(row[0].acc, 0.75);
	NEAR(row[1].acc, 0.8);
	NEAR(v.per[STRAT_DATA].oraclec, 0.775);
	NEAR(v.per[STRAT_DATA].paradl, 0.5);
	assert_int_equal(v.per[STRAT_DS].n, 0);
	NEAR(v.per[STRAT_DS].paradl, 0.5);
	assert_int_equal(v.all.n, 2);
	NEAR(v.all.paradl, 0.5);
	/* ranking: one pair each (the others lack a prediction or tie in
	 * the measurement), in the measured order */
	assert_int_equal(v.rank.pairs, 1);
	NEAR(v.rank.tau, 1);
	assert_int_equal(v.rank_paradl.pairs, 1);
	NEAR(v.rank_paradl.tau, 1);
	row[1].predicted = 1.6; /* now ranked against the measurement */
	validation_score(&v);
	NEAR(v.rank.tau, -1);
}

/* Kendall's tau by merge sort equals the count over every pair, ties in
 * either time or both included, on runs drawn with many ties. */
static void
kendall_tau_counts_every_pair_with_ties(void **state)
{
	enum { N = 600 };
	Measured *row = calloc(N, sizeof *row);
	Validation v = { .row = row, .nrow = N };
	unsigned seed = 12345;
	int64_t pairs = 0;
	double s = 0;

	(void)state;
	for (int i = 0; i < N; i++) {
		seed = seed * 1103515245u + 12345u;
		row[i].kind = STRAT_DATA;
		row[i].measured = 1 + (seed >> 16) % 40;
		seed = seed * 1103515245u + 12345u;
		row[i].predicted = (seed >> 16) % 7 == 0 ? NAN : 1 + (seed >> 16) % 30;
		row[i].paradl = NAN;
	}
	for (int i = 0; i < N; i++)
		for (int j = i + 1; j < N; j++) {
			const Measured *a = &row[i], *b = &row[j];
			if (isnan(a->predicted) || isnan(b->predicted) ||
			    a->measured == b->measured)
				continue;
			pairs++;
			s += ((a->measured > b->measured) - (a->measured < b->measured)) *
			     ((a->predicted > b->predicted) - (a->predicted < b->predicted));
		}
	validation_score(&v);
	assert_true(pairs > 1000);
	assert_true(v.rank.pairs == pairs);
	NEAR(v.rank.tau, s / (double)pairs);
	assert_true(v.rank_paradl.pairs == 0 && isnan(v.rank_paradl.tau));
	free(row);
}

/* Sends as the implementation makes them (docs/model.md,
 * "Implementations"): NCCL on abci's NVLink, 10 us + 1 MB / 50 GB/s;
 * ChainerMN on managed memory, staged through the host, 300 us + a copy
 * out and one in at 3 GB/s each, and the network between nodes (7 GB/s). */
static void
sends_are_staged_through_the_host_where_the_implementation_does(void **state)
{
	Fx *fx = *state;
	const System *s = fx_abci(fx);
	Analysis an = { .eng = fx->eng, .q.sys = s, .q.impl = fx_impl(s) };
	Implementation py;

	assert_string_equal(an.q.impl.name, "chainermn-paradl");
	NEAR(p2p_time(&an, 1e6, false), 300e-6 + 2 * 1e6 / 3e9);
	NEAR(p2p_time(&an, 1e6, true), 300e-6 + 2 * 1e6 / 3e9 + 1e6 / 7e9);
	/* a gather over 4 GPUs of a node: 3 sends, the result through the host */
	NEAR(gather_time(&an, (Group){ 4, 4, 1 }, 8e6), 3 * 300e-6 + 8e6 / 3e9);
	implementation_defaults(&py);
	py.staged = false;
	an.q.impl = py;
	NEAR(p2p_time(&an, 1e6, false), 10e-6 + 1e6 / 50e9);
	NEAR(gather_time(&an, (Group){ 4, 4, 1 }, 8e6), allgather_time(s, (Group){ 4, 4, 1 }, 8e6));
}

/* The optimizer step on the GPU and on the CPU that issues it (docs/model.md,
 * "Optimizer update", "The host lane"), 10 tensors of 1,000 elements on
 * abci (kernel latency 5 us).  torch.optim's RMSprop loop (8 operations)
 * and zero_grad launch 9 kernels a tensor whatever the precision, each
 * issued at PyTorch's 10 us; fp16 loss scaling adds GradScaler's 3
 * operators and its Python loop over the tensors (0.7 us each).  A
 * foreach step launches a kernel per operation for up to 64 tensors and
 * issues one call per operation, after its own loop over the tensors;
 * chainermn-paradl's fused update one kernel a tensor at its 30 us;
 * momentum's loop 4 + 1.  The bytes: 28 per element at 720 GB/s. */
static void
the_step_launches_what_the_optimizer_loops_over(void **state)
{
	Fx *fx = *state;
	const System *s = fx_abci(fx);
	Analysis an = {
		.eng = fx->eng, .q.sys = s, .q.impl = fx_impl(NULL), .q.set.opt = OPT_RMSPROP
	};
	double bytes = 1e4 * 28 / (s->mem_bw * s->eff_mem);

	assert_true(an.q.impl.step == STEP_PER_OP && an.q.impl.zero_grad &&
		    an.q.impl.sync == SYNC_AMP);
	NEAR(s->kernel_lat, 5e-6);
	NEAR(an.q.impl.step_tensor, 0.7e-6);
	an.q.set.prec = PREC_FP32;
	NEAR(update_time(&an, 1e4, 10), bytes + 10 * 9 * 5e-6);
	NEAR(step_host(&an, 10), 10 * 9 * 10e-6);
	an.q.set.prec = PREC_AMP_FP16; /* the GPU's work is the same */
	NEAR(update_time(&an, 1e4, 10), bytes + 10 * 9 * 5e-6);
	NEAR(step_host(&an, 10), (10 * 9 + 3) * 10e-6 + 10 * 0.7e-6);
	an.q.set.prec = PREC_AMP_BF16; /* no loss scaling */
	NEAR(step_host(&an, 10), 10 * 9 * 10e-6);
	an.q.impl.optimizer_step = "foreach";
	assert_null(implementation_check(&an.q.impl, &(const char *){ NULL }));
	assert_int_equal(an.q.impl.step, STEP_FOREACH);
	an.q.set.prec = PREC_FP32;
	NEAR(update_time(&an, 1e4, 10), bytes + 1 * 9 * 5e-6);
	NEAR(update_time(&an, 1e4, 130), bytes + 3 * 9 * 5e-6); /* 130 tensors: 3 chunks */
	NEAR(step_host(&an, 10), 9 * 10e-6 + 10 * 0.7e-6);
	an.q.set.prec = PREC_AMP_FP16;
	NEAR(step_host(&an, 10), 12 * 10e-6 + 2 * 10 * 0.7e-6);
	an.q.impl = fx_impl(NULL);
	an.q.set.opt = OPT_MOMENTUM;
	an.q.set.prec = PREC_FP32;
	NEAR(update_time(&an, 1e4, 10), 1e4 * 20 / (s->mem_bw * s->eff_mem) + 10 * 5 * 5e-6);
	an.q.impl = fx_impl(s);
	an.q.set.opt = OPT_RMSPROP;
	assert_string_equal(an.q.impl.name, "chainermn-paradl");
	NEAR(update_time(&an, 1e4, 10), bytes + 10 * 1 * 5e-6);
	NEAR(step_host(&an, 10), 10 * 30e-6);
}

/* The host lane (model/host.c) on a chain of 16 ReLUs of 1,000 elements
 * at one sample: each kernel a few microseconds on abci, each operator
 * 10 us to issue (PyTorch).  Without a sync point (fp32) the CPU runs
 * iterations ahead: the iteration takes the CPU's issue time, the GPU
 * waiting the rest of it.  With GradScaler's (fp16) the CPU waits once an
 * iteration for the GPU, which then waits for each operator as it is
 * issued: the iteration is the issue time and the last kernel's time
 * after the last issue (the first layer's backward).  With operators
 * that cost nothing to issue, the GPU never waits. */
static void
the_gpu_waits_for_the_host_that_issues_it(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_relu_chain(fx, 16);
	Settings set = settings_default;
	Analysis an;
	Candidate k = { .micro_batches = 1 };
	double host = 0, gpu = 0, busy, arrays = 0;
	Lane ln;

	assert_true(analysis_setup(&an, fx->eng, &set, g, fx_abci(fx)));
	an.q.impl = fx_impl(NULL);
	for (int i = 0; i < g->nlayer; i++) {
		gpu += layer_time(&an, g, &g->layer[i], 1, 1, DIM_DATA, false) +
		       layer_time(&an, g, &g->layer[i], 1, 1, DIM_DATA, true);
		host += layer_host(&an, g, &g->layer[i], false) +
			layer_host(&an, g, &g->layer[i], true);
		NEAR(layer_host(&an, g, &g->layer[i], false), 10e-6);
	}
	assert_true(gpu < host);
	k.t.compute = gpu;
	k.t.update = update_time(&an, 0, arrays);
	busy = k.t.compute + k.t.update;
	ln = lane_times(&an, g, 0, g->nlayer - 1, 1);
	host_lane(&an, g, 0, g->nlayer - 1, &ln, arrays, &k);
	NEAR(k.t.host, host + step_host(&an, arrays));
	NEAR(k.t.dispatch, k.t.host - busy);
	an.q.set.prec = PREC_AMP_FP16;
	k.t.dispatch = 0;
	ln = lane_times(&an, g, 0, g->nlayer - 1, 1);
	host_lane(&an, g, 0, g->nlayer - 1, &ln, arrays, &k);
	NEAR(k.t.dispatch, step_host(&an, arrays) + host +
				   layer_time(&an, g, &g->layer[0], 1, 1, DIM_DATA, true) - busy);
	an.q.impl.dispatch = 0;
	an.q.impl.step_tensor = 0;
	ln = lane_times(&an, g, 0, g->nlayer - 1, 1);
	host_lane(&an, g, 0, g->nlayer - 1, &ln, arrays, &k);
	NEAR(k.t.host, 0);
	NEAR(k.t.dispatch, 0);
}

/* Under ZeRO a GPU's step runs over its shard (zero_step_arrays, the rule
 * data parallelism and pipelines share): 10 tensors over 4 ranks are 2.5
 * whole tensors a rank at stage 1 under ZeroRedundancyOptimizer (pytorch's
 * zero_partition "tensors"), at least 1 over 20 ranks; one flat slice at
 * stage 1 under DeepSpeed ("flat") and at stages 2 and 3 under both. */
static void
zero_steps_its_share_of_the_tensors(void **state)
{
	Fx *fx = *state;
	Analysis an = { .eng = fx->eng, .q.sys = fx_abci(fx), .q.impl = fx_impl(NULL) };

	assert_false(an.q.impl.flat_zero);
	NEAR(zero_step_arrays(&an, 10, 4), 10);
	an.q.set.zero = 1;
	NEAR(zero_step_arrays(&an, 10, 4), 2.5);
	NEAR(zero_step_arrays(&an, 10, 20), 1);
	NEAR(zero_step_arrays(&an, 10, 1), 10);
	an.q.set.zero = 2;
	NEAR(zero_step_arrays(&an, 10, 4), 1);
	an.q.set.zero = 1;
	an.q.impl.zero_partition = "flat";
	assert_null(implementation_check(&an.q.impl, &(const char *){ NULL }));
	assert_true(an.q.impl.flat_zero);
	NEAR(zero_step_arrays(&an, 10, 4), 1);
}

/* master_weights = "fp32" (Megatron's --fp16 and --bf16): a parameter's
 * bytes with Adam are Megatron-LM's docs/user-guide/features/
 * dist_optimizer.md's table, 20 with fp16 (2 + 2 + 4 main + 4 main
 * gradient + 8), 18 with bf16 (fp32 main gradients), 16 in fp32, and with
 * the distributed optimizer (--zero 1) over d = 8: 4 + 16/d, 6 + 12/d,
 * 8 + 8/d.  Without the key a 16-bit model is cast whole: 2 + 2 + 8. */
static void
master_weights_count_megatrons_bytes_per_parameter(void **state)
{
	Fx *fx = *state;
	Analysis an = { .eng = fx->eng, .q.sys = fx_abci(fx), .q.impl = fx_impl(NULL) };
	const Precision prec[3] = { PREC_FP16, PREC_BF16, PREC_FP32 };
	const double whole[3] = { 20, 18, 16 }, fixed[3] = { 4, 6, 8 }, shard[3] = { 16, 12, 8 };
	MemUse m;

	an.q.set.opt = OPT_ADAM;
	an.q.set.prec = PREC_FP16;
	assert_false(master_weights(&an));
	zero_memory(&an, NULL, 1, 1, &m);
	NEAR(m.weights + m.grads + m.optimizer, 12);
	an.q.impl.master_weights = "fp32";
	assert_null(implementation_check(&an.q.impl, &(const char *){ NULL }));
	for (int i = 0; i < 3; i++) {
		an.q.set.prec = prec[i];
		an.q.set.zero = 0;
		assert_true(master_weights(&an) == (i < 2));
		zero_memory(&an, NULL, 1, 8, &m);
		NEAR(m.weights + m.grads + m.optimizer, whole[i]);
		an.q.set.zero = 1;
		zero_memory(&an, NULL, 1, 8, &m);
		NEAR(m.weights + m.grads + m.optimizer, fixed[i] + shard[i] / 8);
	}
	an.q.impl.master_weights = "fp64";
	assert_non_null(implementation_check(&an.q.impl, &(const char *){ NULL }));
}

/* Megatron all-reduces bf16 models' gradients in fp32 (--accumulate-
 * allreduce-grads-in-fp32, on under --bf16: arguments.py@d98e8a64 lines
 * 1204-1217): with master_weights = "fp32" the data-parallel exchange
 * moves 4 bytes a parameter at bf16, 2 at fp16 (copied into fp32 after
 * it), and 2 at bf16 without the key; the distributed optimizer's
 * reduce-scatter likewise, its parameter all-gather at 2. */
static void
bf16_master_weights_exchange_fp32_gradients(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_run(fx, "model m { input x: 1024; h = fc(x, 1024); o = fc(h, 10); }",
			  PASS_MEMORY);
	const System *s = fx_abci(fx);
	Analysis an = { .eng = fx->eng, .q.sys = s, .q.impl = fx_impl(s) };
	Group grp = { 8, 4, 1 };
	double hidden, W, rs, window;

	assert_non_null(g);
	W = (double)g->total.params;
	an.q.impl.overlap_grad = false;
	an.q.set.prec = PREC_BF16;
	assert_int_equal(grad_bytes(&an), 2);
	NEAR(grad_time(&an, g, grp, 8, NULL, &hidden), coll_allreduce(&an, grp, W * 2));
	an.q.impl.master_weights = "fp32";
	assert_null(implementation_check(&an.q.impl, &(const char *){ NULL }));
	assert_int_equal(grad_bytes(&an), 4);
	NEAR(grad_time(&an, g, grp, 8, NULL, &hidden), coll_allreduce(&an, grp, W * 4));
	assert_true(coll_allreduce(&an, grp, W * 4) > coll_allreduce(&an, grp, W * 2));
	an.q.set.zero = 1;
	window = 0;
	zero_exchange(&an, g, grp, W, &rs, &window);
	NEAR(rs, coll_reduce_scatter(&an, grp, W * 4) + coll_allgather(&an, grp, W * 2));
	an.q.set.zero = 0;
	an.q.set.prec = PREC_FP16;
	assert_int_equal(grad_bytes(&an), 2);
	NEAR(grad_time(&an, g, grp, 8, NULL, &hidden), coll_allreduce(&an, grp, W * 2));
}

/* The gradient exchange in buckets (model/overlap.c).  One bucket
 * holding every gradient starts when backward ends: nothing is hidden,
 * as without overlap.  A bucket per layer starts as each layer's backward
 * ends: the exposed and hidden parts add up to the buckets' all-reduces,
 * and at least the last (the first layer's) is exposed.  On a host device
 * every bucket is exposed. */
static void
buckets_hide_the_gradient_exchange_behind_backward(void **state)
{
	Fx *fx = *state;
	Graph *g =
		fx_run(fx,
		       "model m { input x: 3x32x32;\n"
		       "  c1 = conv(x, 64, kernel=3, pad=1); c2 = conv(c1, 64, kernel=3, pad=1);\n"
		       "  c3 = conv(c2, 64, kernel=3, pad=1); f = flatten(c3); o = fc(f, 10); }",
		       PASS_MEMORY);
	const System *s = fx_abci(fx);
	Analysis an = { .eng = fx->eng, .q.sys = s, .q.impl = fx_impl(s) };
	Group grp = { 8, 4, 1 };
	double hidden, exposed, all, sum = 0, first;

	assert_non_null(g);
	all = (double)g->total.params * 4;
	an.q.impl.overlap_grad = false;
	NEAR(grad_time(&an, g, grp, 32, NULL, &hidden), coll_allreduce(&an, grp, all));
	NEAR(hidden, 0);
	an.q.impl.overlap_grad = true;
	an.q.impl.bucket = 1e12;
	NEAR(grad_time(&an, g, grp, 32, NULL, &hidden), coll_allreduce(&an, grp, all));
	NEAR(hidden, 0);
	an.q.impl.bucket = 1;
	exposed = grad_time(&an, g, grp, 32, NULL, &hidden);
	for (int i = 0; i < g->nlayer; i++)
		if (g->layer[i].cost.params)
			sum += coll_allreduce(&an, grp, (double)g->layer[i].cost.params * 4);
	first = coll_allreduce(&an, grp, (double)g->layer[0].cost.params * 4);
	NEAR(exposed + hidden, sum);
	assert_true(hidden > 0);
	assert_true(exposed >= first * (1 - 1e-12));
	/* a host device's cores run the collective and the backward both:
	 * the same buckets, none hidden */
	{
		System h = *s;

		h.host_device = true;
		an.q.sys = &h;
		NEAR(grad_time(&an, g, grp, 32, NULL, &hidden), sum);
		NEAR(hidden, 0);
	}
}

/* Gradient groups close buckets (model/overlap.c): five fc layers of a
 * weight and a bias each, tensors 0-9 in the model's order, r 0-9 from
 * the output's end (fc5 holds r 0 and 1, fc1 r 8 and 9), buckets never
 * full by size.  A group is all-reduced once its last tensor in backward
 * (its lowest in the model's order) is ready, so the buckets are:
 *   grad_groups 2 (MXNet's num_groups: tensors 0-4, 5-9): fc5..fc3, fc2..fc1
 *   fixed, 1 tensor a group: every layer a bucket
 *   cubic, 1 (Fujitsu's: r 0, 1-7, 8-26): fc5, fc4..fc2, fc1
 *   quadratic, 1 (r 0, 1-3, 4-8, 9-15): fc5, fc4, fc3..fc1
 *   cubic, 10 (one group: r 0-9): all five at once
 * and the exposed and hidden parts add up to those buckets' all-reduces. */
static void
gradient_groups_close_buckets(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_run(fx,
			  "model m { input x: 64;\n"
			  "  f1 = fc(x, 64); f2 = fc(f1, 64); f3 = fc(f2, 64); f4 = fc(f3, 64);\n"
			  "  f5 = fc(f4, 64); }",
			  PASS_MEMORY);
	const System *s = fx_abci(fx);
	Analysis an = { .eng = fx->eng, .q.sys = s, .q.impl = fx_impl(s) };
	Group grp = { 8, 4, 1 };
	double w[5], hidden, exposed;
	int n = 0;

	assert_non_null(g);
	for (int i = 0; i < g->nlayer; i++)
		if (g->layer[i].cost.params) {
			assert_int_equal(g->layer[i].nw, 2);
			w[n++] = (double)g->layer[i].cost.params * 4;
		}
	assert_int_equal(n, 5);
	an.q.impl.overlap_grad = true;
	an.q.impl.bucket = 1e12;
#define AR(b) coll_allreduce(&an, grp, (b))
#define BUCKETS(expected)                                            \
	do {                                                         \
		exposed = grad_time(&an, g, grp, 32, NULL, &hidden); \
		NEAR(exposed + hidden, (expected));                  \
	} while (0)
	an.q.impl.grad_groups = 2;
	BUCKETS(AR(w[4] + w[3] + w[2]) + AR(w[1] + w[0]));
	an.q.impl.grad_groups = 0;
	an.q.impl.grad_group_tensors = 1;
	an.q.impl.grad_group_power = 1;
	BUCKETS(AR(w[4]) + AR(w[3]) + AR(w[2]) + AR(w[1]) + AR(w[0]));
	an.q.impl.grad_group_power = 3;
	BUCKETS(AR(w[4]) + AR(w[3] + w[2] + w[1]) + AR(w[0]));
	an.q.impl.grad_group_power = 2;
	BUCKETS(AR(w[4]) + AR(w[3]) + AR(w[2] + w[1] + w[0]));
	an.q.impl.grad_group_tensors = 10;
	an.q.impl.grad_group_power = 3;
	BUCKETS(AR(w[4] + w[3] + w[2] + w[1] + w[0]));
#undef BUCKETS
#undef AR
}

/* What DDP launches around the exchange (model/overlap.c): a copy of each
 * gradient tensor into its bucket and one back, each a kernel reading and
 * writing the gradient, and every forward a broadcast of the buffers
 * flattened into one tensor and copied back, three tensors per batch norm
 * -- the operators tools/ddp_kernels.py counts in a real DDP iteration
 * (tests/data/autograd/ddp_kernels.txt).  Nothing on one replica, nothing
 * under ZeRO stage 2's flat shards. */
static void
the_reducer_copies_each_gradient_and_buffer(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_run(fx,
			  "model m { input x: 3x32x32;\n"
			  "  c = conv(x, 64, kernel=3, pad=1); b = batchnorm(c); f = flatten(b);\n"
			  "  o = fc(f, 10); }",
			  PASS_MEMORY);
	const System *s = fx_abci(fx);
	Analysis an = { .eng = fx->eng, .q.sys = s, .q.impl = fx_impl(NULL) };
	Group grp = { 8, 4, 1 }, one = { 1, 1, 1 };
	double bw = s->mem_bw * s->eff_mem, W, arrays = 0, bytes = 2 * 64 * 4 + 8, half[8];
	int last;

	assert_non_null(g);
	assert_true(g->nlayer <= 8);
	last = g->nlayer - 1;
	W = (double)g->total.params;
	for (int i = 0; i < g->nlayer; i++)
		arrays += g->layer[i].nw, half[i] = 0.5;
	assert_int_equal(an.q.impl.grad_copies, 2);
	assert_true(an.q.impl.broadcast_buffers);
	NEAR(reducer_time(&an, g, grp, 0, last, NULL),
	     2 * (arrays * s->kernel_lat + 2 * W * 4 / bw) + coll_broadcast(&an, grp, bytes) +
		     4 * s->kernel_lat + 4 * bytes / bw);
	an.q.impl.broadcast_buffers = false;
	NEAR(reducer_time(&an, g, grp, 0, last, NULL),
	     2 * (arrays * s->kernel_lat + 2 * W * 4 / bw));
	NEAR(reducer_time(&an, g, grp, 0, last, half), 2 * (arrays * s->kernel_lat + W * 4 / bw));
	an.q.impl.grad_copies = 1;
	NEAR(reducer_time(&an, g, grp, 0, last, NULL), arrays * s->kernel_lat + 2 * W * 4 / bw);
	NEAR(reducer_time(&an, g, one, 0, last, NULL), 0);
	an.q.set.zero = 2;
	NEAR(reducer_time(&an, g, grp, 0, last, NULL), 0);
}

/* Autocast's casts (passes/memory.c), in the CIFAR ResNet-18 as the real
 * autocast makes them (tools/autocast_casts.py, its output in
 * tests/data/autograd/autocast_casts.tsv): forward, 22 trained tensors of
 * 11,210,532 elements (20 convolutions' weights, the linear's weight and
 * bias: all but batch norm's) and one activation, the image, 3,072
 * elements a sample; backward the 22 again and no activation.  Each is a
 * kernel that reads 4 bytes an element and writes 2. */
static void
autocast_casts_each_weight_once_and_the_image(void **state)
{
	Fx *fx = *state;
	const char *top = getenv("srcdir") ? getenv("srcdir") : ".";
	Graph *g = dsl_load(arena_printf(&fx->arena, "%s/examples/resnet18_cifar.odl", top),
			    &fx->arena, &fx->files);
	const System *s = fx_abci(fx);
	Analysis an = { .eng = fx->eng, .q.sys = s, .q.impl = fx_impl(NULL),
			.q.set.prec = PREC_AMP_FP16 };
	int64_t w = 0, in = 0, grad = 0;
	int wn = 0, inn = 0, gradn = 0;
	Layer *conv1;
	double with;

	assert_non_null(g);
	assert_true(shape_infer(g) && cost_annotate(g));
	assert_true(memory_annotate(g));
	for (int i = 0; i < g->nlayer; i++) {
		const Cost *c = &g->layer[i].cost;
		w += c->cast_w, wn += c->cast_wn, in += c->cast_in, inn += c->cast_inn;
		grad += c->cast_grad, gradn += c->cast_gradn;
	}
	assert_int_equal(wn, 22);
	assert_int_equal(w, 11210532);
	assert_int_equal(inn, 1);
	assert_int_equal(in, 3072);
	assert_int_equal(gradn, 0);
	assert_int_equal(grad, 0);
	conv1 = &g->layer[0];
	assert_int_equal(conv1->cost.cast_wn, 1);
	/* an operator each for the CPU to issue, beside the convolution's own
	 * (a cuDNN call) */
	NEAR(layer_host(&an, g, conv1, false), 3 * an.q.impl.dispatch + an.q.impl.library_call);
	with = layer_time(&an, g, conv1, 512, 1, DIM_DATA, false);
	conv1->cost.cast_w = conv1->cost.cast_in = 0;
	conv1->cost.cast_wn = conv1->cost.cast_inn = 0;
	NEAR(with - layer_time(&an, g, conv1, 512, 1, DIM_DATA, false),
	     2 * s->kernel_lat + (64.0 * 3 * 3 * 3 + 512.0 * 3072) * 6 / (s->mem_bw * s->eff_mem));
}

/* zero_grad(set_to_none=False) leaves the gradients allocated, so every
 * backward adds each new weight gradient into its parameter's: one add_
 * per trained tensor, reading two and writing one, and one more operator
 * to dispatch (tools/accumulate_grad.py: 62 add_ for ResNet-18's 62
 * tensors, none with set_to_none=True; tests/data/autograd/
 * accumulate_grad.tsv).  The forward is unchanged. */
static void
gradients_left_allocated_are_added_into(void **state)
{
	Fx *fx = *state;
	Graph *g = fx_run(fx, "model m { input x: 64x32x32; b = batchnorm(x); }", PASS_MEMORY);
	const System *s = fx_abci(fx);
	Analysis an = { .eng = fx->eng, .q.sys = s, .q.impl = fx_impl(NULL) };
	const Layer *bn;
	double with, fwd;

	assert_non_null(g);
	bn = &g->layer[0];
	assert_int_equal(bn->nw, 2);
	assert_true(an.q.impl.zero_grad);
	with = layer_time(&an, g, bn, 512, 1, DIM_DATA, true);
	fwd = layer_time(&an, g, bn, 512, 1, DIM_DATA, false);
	/* operators the CPU issues: the backward (a cuDNN call) and two adds */
	NEAR(layer_host(&an, g, bn, true), 3 * an.q.impl.dispatch + an.q.impl.library_call);
	an.q.impl.zero_grad = false;
	NEAR(layer_host(&an, g, bn, true), an.q.impl.dispatch + an.q.impl.library_call);
	NEAR(with - layer_time(&an, g, bn, 512, 1, DIM_DATA, true),
	     2 * s->kernel_lat + 3.0 * 128 * 4 / (s->mem_bw * s->eff_mem));
	NEAR(layer_time(&an, g, bn, 512, 1, DIM_DATA, false), fwd);
}

/* The shared file system (docs/model.md, "Input pipeline"): abci's GPFS
 * serves 14,000 files/s and a node keeps 8,500 files of its shard.  64
 * nodes of 256 samples over ImageNet's 1,281,167 files: shards of
 * 20,018.2 files, 1 - 8,500 / 20,018.2 of the reads from GPFS; 256 nodes:
 * shards of 5,004.6 files, all cached, only the bytes over storage_bw. */
static void
the_shared_file_system_serves_what_the_cache_misses(void **state)
{
	Fx *fx = *state;
	const System *s = fx_abci(fx);
	Analysis an = { .eng = fx->eng,
			.q.sys = s,
			.q.impl = fx_impl(s),
			.q.set.data = DATA_STORED,
			.q.set.sample_bytes = 110e3,
			.q.set.dataset_size = 1281167 };
	double shard = 1281167.0 / 64;

	NEAR(input_time(&an, 64, 10, 256, 64), 256 * 64 * (1 - 8500 / shard) / 14000);
	NEAR(input_time(&an, 64, 10, 256, 256), 256 * 110e3 / 12.5e9);
}

/* The input pipeline (docs/model.md, "Input pipeline"): a process's
 * samples over its workers, at most its cores.  PyTorch's 16 workers on
 * dgx-a100's 16 cores per GPU, a 110 KB JPEG at 49 MB/s each:
 * 256 x 110e3 / 49e6 / 16 s; with 5 workers, / 5. */
static void
the_loader_divides_the_samples_over_its_workers(void **state)
{
	Fx *fx = *state;
	const System *s = system_load("dgx-a100", &fx->arena, &fx->files);
	Analysis an = { .eng = fx->eng,
			.q.sys = s,
			.q.impl = fx_impl(s),
			.q.set.data = DATA_JPEG,
			.q.set.sample_bytes = 110e3 };

	assert_non_null(s);
	assert_string_equal(an.q.impl.name, "pytorch");
	NEAR(input_time(&an, 256, 16, 0, 1), 256 * 110e3 / 49e6 / 16);
	an.q.impl.loader_workers = 5;
	NEAR(input_time(&an, 256, 16, 0, 1), 256 * 110e3 / 49e6 / 5);
	an.q.set.data = DATA_RAW;
	NEAR(input_time(&an, 256, 16, 0, 1), 256 * 62e-6 / 5);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		FX_TEST(every_builtin_system_parses),
		FX_TEST(abci_constants_are_in_si_units),
		FX_TEST(system_file_errors_name_the_key),
		FX_TEST(written_systems_read_back_exactly),
		FX_TEST(unknown_system_name_is_an_error),
		FX_TEST(paradl_plat_file_sets_speed_bandwidth_and_latency),
		FX_TEST(allreduce_inside_a_node_is_a_ring_over_nvlink),
		FX_TEST(allreduce_across_nodes_waits_for_the_network),
		FX_TEST(data_parallel_on_one_gpu_has_no_communication),
		FX_TEST(filter_and_channel_are_limited_by_the_narrowest_layer),
		FX_TEST(pipeline_partition_balances_equal_layers),
		FX_TEST(pipeline_checkpoint_keeps_the_inputs),
		FX_TEST(one_process_issues_every_stage),
		FX_TEST(paper_mode_is_table_iii),
		FX_TEST(aten_depthwise_weight_gradient_rereads_per_tap),
		FX_TEST(halos_are_the_rows_a_strip_reads),
		FX_TEST(tensor_core_convolutions_pay_nchw_transposes),
		FX_TEST(layers_with_leading_dimensions_are_split_by_their_channels),
		FX_TEST(sends_are_staged_through_the_host_where_the_implementation_does),
		FX_TEST(the_step_launches_what_the_optimizer_loops_over),
		FX_TEST(the_gpu_waits_for_the_host_that_issues_it),
		FX_TEST(fused_attention_keeps_q_k_v_and_the_row_statistics),
		FX_TEST(tiles_run_in_waves_over_the_sms),
		FX_TEST(winograd_runs_three_by_three_convolutions_in_fp32),
		FX_TEST(zero_steps_its_share_of_the_tensors),
		FX_TEST(buckets_hide_the_gradient_exchange_behind_backward),
		FX_TEST(gradient_groups_close_buckets),
		FX_TEST(the_reducer_copies_each_gradient_and_buffer),
		FX_TEST(autocast_casts_each_weight_once_and_the_image),
		FX_TEST(gradients_left_allocated_are_added_into),
		FX_TEST(the_loader_divides_the_samples_over_its_workers),
		FX_TEST(the_shared_file_system_serves_what_the_cache_misses),
		FX_TEST(forward_only_runs_have_no_backward),
		FX_TEST(zero_shards_as_deepspeed_states),
		FX_TEST(zero_exchanges_in_two_rings),
		FX_TEST(fsdp_full_shard_gathers_once_per_unit),
		FX_TEST(fsdp_hybrid_shards_inside_a_node),
		FX_TEST(selective_recomputes_the_attention_core),
		FX_TEST(recompute_keeps_sqrt_of_a_chain),
		FX_TEST(tensor_parallel_pairs_reduce_twice_each_way),
		FX_TEST(tensor_parallel_keeps_the_papers_activations),
		FX_TEST(context_ring_sends_what_transformer_engine_sends),
		FX_TEST(master_weights_count_megatrons_bytes_per_parameter),
		FX_TEST(bf16_master_weights_exchange_fp32_gradients),
		cmocka_unit_test(validation_means_are_per_strategy_and_overall),
		cmocka_unit_test(kendall_tau_counts_every_pair_with_ties),
		FX_TEST(nccl_picks_algorithm_and_protocol_by_size_and_ranks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
