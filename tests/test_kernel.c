/* test_kernel.c -- one matrix product as model/kernel.c prices it: the
 * mechanisms that hold whatever a data set says (docs/model.md, "One
 * kernel").  tests/test_neusight and tests/test_deepbench judge the
 * model's figures on measured kernels. */
#include "harness.h"
#include "model/model.h"

#include <math.h>

/* An SM of 128 FP32 lanes (compute capability 9.0) issues an FFMA every
 * clock, and the main loop's 5.25 other instructions a step of the
 * thread's 64 take their clocks from it (docs/model.md, "One kernel"); a
 * 64-lane SM (8.0) issues them between its FFMAs, and tensor cores (the
 * fp16 peak) either way. */
static void
fp32_products_share_the_issue_slots_on_128_lanes(void **state)
{
	System a = { .sms = 132, .tile_overhead = 36, .mem_bw = 3.35e12, .eff_mem = 0.85,
		     .compute_capability = 8.0 };
	System h = a;
	Gemm p = { 4096, 4096, 4096, 1 };

	(void)state;
	h.compute_capability = 9.0;
	a.peak[DT_FP32] = h.peak[DT_FP32] = 67e12;
	a.peak[DT_FP16] = h.peak[DT_FP16] = 989e12;
	NEAR(gemm_time(NULL, &h, &p, 67e12, 0.8) / gemm_time(NULL, &a, &p, 67e12, 0.8),
	     69.25 / 64);
	NEAR(gemm_time(NULL, &h, &p, 989e12, 0.8), gemm_time(NULL, &a, &p, 989e12, 0.8));
	/* the Programming Guide's table: 128 lanes on 5.x, 6.1-6.2 and from
	 * 8.6, 64 on 6.0, 7.x and 8.0; no limit priced without a capability
	 * or below 5.0 */
	static const struct {
		double cc, ratio;
	} t[] = { { 0, 1 },    { 3.7, 1 },   { 5.2, 69.25 / 64 }, { 6.0, 1 },
		  { 6.1, 69.25 / 64 }, { 7.0, 1 }, { 7.5, 1 },     { 8.0, 1 },
		  { 8.6, 69.25 / 64 }, { 8.9, 69.25 / 64 }, { 10.0, 69.25 / 64 } };
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		h.compute_capability = t[i].cc;
		a.compute_capability = 8.0;
		NEAR(gemm_time(NULL, &h, &p, 67e12, 0.8) / gemm_time(NULL, &a, &p, 67e12, 0.8),
		     t[i].ratio);
	}
}

/* A tile's overhead is seconds of fp32 steps (docs/model.md, "One
 * kernel"): a 1024 x 1024 product on an A100 (3 waves of 64 x 64 tiles,
 * the same choice at every K) takes (K + k0) steps a tile, k0 = 5 at the
 * fp32 peak and 5 x 312 / 19.5 = 80 at the fp16 one. */
static void
a_tiles_overhead_is_fp32_seconds_at_every_format(void **state)
{
	System s = { .sms = 108, .tile_overhead = 5, .mem_bw = 2039e9, .eff_mem = 0.85 };
	Gemm shortk = { 1024, 1024, 64, 1 }, longk = { 1024, 1024, 4096, 1 };

	(void)state;
	s.peak[DT_FP32] = 19.5e12;
	s.peak[DT_FP16] = 312e12;
	NEAR(gemm_time(NULL, &s, &shortk, 19.5e12, 0.8) / gemm_time(NULL, &s, &longk, 19.5e12, 0.8),
	     (64.0 + 5) / (4096 + 5));
	NEAR(gemm_time(NULL, &s, &shortk, 312e12, 0.8) / gemm_time(NULL, &s, &longk, 312e12, 0.8),
	     (64.0 + 80) / (4096 + 80));
	/* the overhead, k0 / (K + k0) of a product's time, is the same
	 * seconds at both */
	NEAR(gemm_time(NULL, &s, &longk, 312e12, 0.8) * 80 / 4176,
	     gemm_time(NULL, &s, &longk, 19.5e12, 0.8) * 5 / 4101);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fp32_products_share_the_issue_slots_on_128_lanes),
		cmocka_unit_test(a_tiles_overhead_is_fp32_seconds_at_every_format),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
