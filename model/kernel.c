/* kernel.c -- one matrix-product kernel as the GPU runs it
 * (docs/model.md, "One kernel").
 *
 * A library (cuBLAS, cuDNN's implicit GEMM) computes a product of B
 * batches of M x N over K in tiles of tm x tn outputs, one tile to an SM
 * at a time; the tiles run in waves over the GPU's `sms` SMs, the last
 * wave partly empty (wave quantization), and a tile of a small product
 * is partly padding (tile quantization).  A tile's main loop runs over K
 * at the fraction u of its SM's share of the peak that the library
 * reaches (the system's eff_gemm or eff_conv for the number format), and
 * spends `tile_overhead` reduction steps more outside it (loading its
 * first operands, writing its result), so short reductions reach less.
 * Smaller tiles reuse their operands less: a tile of a x b reaches u
 * r(a, b) / r(128, 128), r(a, b) = ab / (ab + 10 (a + b)), NeuSight's fit
 * on its microbenchmarks (tests/data/kernels/README.md).  On SMs of 128
 * FP32 lanes (compute capability 8.6 on, 6.1, 5.x) a CUDA-core product's
 * multiply-adds share the schedulers' issue slots with its loads and
 * bookkeeping, which 64-lane SMs issue between them.  Where the tiles
 * do not fill the SMs the library splits K over more of them (split-K),
 * the partial products summed in a pass over memory.  Of the menu of
 * tiles and splits the library takes the fastest, as cuBLAS's heuristics
 * and cuDNN's benchmark mode do.  The same loops give a convolution's
 * three products (implicit GEMM); at fp32 without tensor cores cuDNN may
 * run a 3 x 3, stride-1 convolution by Winograd's F(4x4, 3x3) (where it
 * times the algorithms, cudnn.benchmark: Implementation.conv_search; a
 * CPU's oneDNN convolutions are direct): 36
 * products of the transformed tiles where direct convolution has 144, at
 * the cost of transforming the input and the output in passes of their
 * own. */
#include "model/model.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The tiles a library chooses from (cuBLAS's and cuDNN's kernel names:
 * tests/data/kernels/, validation/h100/profile_*.txt), as indices into
 * their sides. */
static const double side[] = { 32, 64, 128, 256 };
static const int tile[][2] = {
	{ 3, 2 }, { 2, 3 }, { 3, 1 }, { 1, 3 }, { 2, 2 }, { 2, 1 },
	{ 1, 2 }, { 1, 1 }, { 1, 0 }, { 0, 1 }, { 0, 0 },
};
enum { TILES = sizeof tile / sizeof tile[0] };

/* A tile's operand reuse: its outputs over the operands it loads. */
static double
reuse(double a, double b)
{
	return a * b / (a * b + 10 * (a + b));
}

/* A tile's time outside its main loop, in steps of K at the peak the
 * product runs at.  `tile_overhead` is in steps of the fp32 main loop
 * (NeuSight's fp32 microbenchmarks); the time it stands for -- loading
 * the first operands, writing the result -- is latency and memory, which
 * the tensor cores do not speed up, so at a faster format the same
 * seconds are more steps. */
static double
overhead_steps(const System *s, double peak)
{
	double f = s->peak[DT_FP32];

	return f > 0 && peak > f ? s->tile_overhead * peak / f : s->tile_overhead;
}

/* The library's choice for product p: the fastest of the menu's tiles
 * and splits, chosen as if the main loop ran at half the peak (where no
 * tile reaches the SM's full rate, every tile's time scales alike with
 * u, so the choice holds for any u below that).  Returned: the tile's
 * work in FLOPs an SM runs one after another (waves x 2 tm tn (k +
 * overhead)), its reuse relative to 128 x 128 (*r), and the bytes its
 * split's partial sums move (*red). */
typedef struct Choice {
	double work, r, red;
} Choice;

static Choice
choose(const System *s, const Gemm *p, double peak)
{
	double best = INFINITY, per_sm = peak / s->sms, r128 = reuse(128, 128), u = 0.5;
	double cm[4], cn[4], k0 = overhead_steps(s, peak), bw = s->mem_bw * s->eff_mem;
	Choice c = { 0, 1, 0 };

	for (int i = 0; i < 4; i++)
		cm[i] = ceil(p->m / side[i]), cn[i] = ceil(p->n / side[i]);
	for (int i = 0; i < TILES; i++) {
		double tm = side[tile[i][0]], tn = side[tile[i][1]], r = reuse(tm, tn) / r128;
		double tiles = p->batch * cm[tile[i][0]] * cn[tile[i][1]];
		double work = ceil(tiles / s->sms) * 2 * tm * tn * (p->k + k0), t;
		if ((t = work / (u * r * per_sm)) < best)
			best = t, c = (Choice){ work, r, 0 };
		/* split-K while the tiles leave SMs idle, each part at least a
		 * few steps of the main loop; the partial products summed in
		 * fp32, read and written */
		for (double split = 2; split <= 16 && tiles * split <= s->sms; split *= 2) {
			double k = ceil(p->k / split),
			       red = (split + 1) * p->batch * p->m * p->n * 4;
			if (k < 64)
				break;
			work = 2 * tm * tn * (k + k0);
			if ((t = work / (u * r * per_sm) + red / bw) < best)
				best = t, c = (Choice){ work, r, red };
		}
	}
	return c;
}

/* FP32 lanes (CUDA cores) of an SM of compute capability cc: the CUDA C++
 * Programming Guide's table of arithmetic instruction throughput (32-bit
 * floating-point add, multiply, multiply-add per clock per SM): 128 on
 * 5.x, 6.1-6.2 and from 8.6 on (Maxwell, the smaller Pascals, GA10x, Ada,
 * Hopper), 64 on 6.0, 7.x and 8.0; 0 -- no limit priced -- below 5.0
 * (Kepler's schedulers issue two instructions a clock) and where the
 * system names no capability. */
static int
fp32_lanes(double cc)
{
	if (cc < 5)
		return 0;
	return cc < 6 || (cc >= 6.05 && cc < 6.95) || cc >= 8.55 ? 128 : 64;
}

/* The share of an SM's issue slots a CUDA-core (fp32) product's FFMAs get.
 * A warp scheduler issues one instruction a clock (docs/model.md, "One
 * kernel").  With 16 FP32 lanes behind it (64 an SM) a warp's FFMA keeps
 * them busy two clocks, and the main loop's other instructions issue in
 * the clocks between; with 32 (128 an SM) an FFMA issues every clock and
 * each other instruction takes one from it.  cuBLAS's SIMT kernels give a
 * thread an 8 x 8 outer product a step of K (ampere_sgemm_128x128: 256
 * threads; tests/data/kernels' block_x): 64 FFMAs against 4 shared-memory
 * loads of its 8 + 8 operands (128-bit), 0.5 of the tile's global loads
 * and stores (a 128 x 128 x 8 stage holds 2,048 operands, 8 a thread: two
 * 128-bit loads and two stores for 8 steps) and 0.75 of the stage's
 * barrier, loop and address arithmetic (6 instructions, counted from the
 * loop's structure, not measured): 64 / 69.25.  Tensor-core products
 * (a peak above the fp32 one) issue one instruction for many products: 1. */
enum { FFMA_PER_STEP = 64 };
static const double other_per_step = 4 + 0.5 + 0.75;

static double
issue_share(const System *s, double peak)
{
	double f = s->peak[DT_FP32];

	if ((f > 0 && peak > f) || fp32_lanes(s->compute_capability) <= 64)
		return 1;
	return FFMA_PER_STEP / (FFMA_PER_STEP + other_per_step);
}

/* A product's choice depends on its shape and the GPU only, and the
 * strategies ask for the same layers at the same sizes again and again
 * (every grid, every nesting, every configuration of the search, every
 * step of a calibration): an engine remembers the choices, by the exact
 * value of everything they depend on, in a table of a fixed size (a newer
 * one takes an older one's slot).  A pure function's memo: the answer is
 * the same either way. */
enum { MEMO = 1 << 14, KEY = 9 };
typedef struct Memo {
	double key[KEY];
	Choice c;
} Memo;
typedef struct TileMemo {
	Memo memo[MEMO];
} TileMemo;

void
tiles_free(TileMemo *m)
{
	free(m);
}

/* The choice for p on s at the peak: e's, found or made. */
static Choice
tiling(Engine *e, const System *s, const Gemm *p, double peak)
{
	double key[KEY] = { p->m, p->n, p->k, p->batch, peak, s->sms, s->tile_overhead,
			    s->peak[DT_FP32], s->mem_bw * s->eff_mem };
	uint64_t h = 1469598103934665603u, bits;
	Memo *m;

	if (!e || !e->reuse)
		return choose(s, p, peak);
	if (!e->tiles)
		e->tiles = xcalloc(1, sizeof *e->tiles);
	/* a double's low bits are mostly zeros: the words multiplied in, the
	 * high bits then mixed down (splitmix64's finalizer) */
	for (int i = 0; i < KEY; i++) {
		memcpy(&bits, &key[i], sizeof bits);
		h = (h ^ bits) * 0x9e3779b97f4a7c15u;
	}
	h = (h ^ h >> 30) * 0xbf58476d1ce4e5b9u;
	h = (h ^ h >> 27) * 0x94d049bb133111ebu;
	m = &e->tiles->memo[(h ^ h >> 31) & (MEMO - 1)];
	if (memcmp(m->key, key, sizeof key) != 0) {
		memcpy(m->key, key, sizeof key);
		m->c = choose(s, p, peak);
	}
	return m->c;
}

double
gemm_time(Engine *e, const System *s, const Gemm *p, double peak, double u)
{
	double ut;
	Choice c;

	if (s->sms <= 0 || p->m <= 0 || p->n <= 0 || p->k <= 0 || p->batch <= 0)
		return 2 * p->m * p->n * p->k * p->batch / (peak * u);
	c = tiling(e, s, p, peak);
	/* the tile's main loop at u and its reuse, at most the SM's peak,
	 * at the share of the issue slots its multiply-adds get */
	ut = (u * c.r < 1 ? u * c.r : 1) * issue_share(s, peak);
	return c.work / (ut * peak / s->sms) + c.red / (s->mem_bw * s->eff_mem);
}

/* The element count of shape x from dimension `from` on. */
static double
elems_from(const Shape *x, int from)
{
	double e = 1;

	for (int i = from; i < x->rank; i++)
		e *= (double)x->d[i];
	return e;
}

int
layer_gemms(const Graph *g, const Layer *l, double n, bool bwd, Gemm *out)
{
	const Shape *x = &g->tensor[l->in[0]].shape, *y = &g->tensor[l->out[0]].shape;
	const Cost *c = &l->cost;
	int k = 0;

	switch (op_info[l->op].cls) {
	case OPC_CONV: {
		/* [lead..., C, spatial...]: the leading dimensions are images */
		int ch = l->attr.lead;
		double grp = l->attr.groups > 1 ? (double)l->attr.groups : 1;
		double imgs = n, taps = 1, cin, cout, pin, pout;
		if (l->op != OP_CONV || x->rank <= ch || y->rank <= ch || grp > 1)
			return 0; /* transposed and grouped: not by tiles (docs) */
		for (int i = 0; i < ch; i++)
			imgs *= (double)x->d[i];
		for (int i = 0; i < l->attr.nspatial; i++)
			taps *= (double)(l->attr.kernel[i] > 0 ? l->attr.kernel[i] : 1);
		cin = (double)x->d[ch], cout = (double)y->d[ch];
		pin = elems_from(x, ch + 1), pout = elems_from(y, ch + 1);
		if (!bwd) {
			out[k++] = (Gemm){ imgs * pout, cout, cin * taps, 1 };
		} else {
			if (c->flops_bwd_data > 0)
				out[k++] = (Gemm){ imgs * pin, cin, cout * taps, 1 };
			if (c->flops_bwd_weight > 0)
				out[k++] = (Gemm){ cout, cin * taps, imgs * pout, 1 };
		}
		return k;
	}
	case OPC_FC: {
		double in = (double)x->d[x->rank - 1], o = (double)y->d[y->rank - 1];
		double rows = n * elems_from(x, 0) / in;
		if (!bwd) {
			out[k++] = (Gemm){ rows, o, in, 1 };
		} else {
			if (c->flops_bwd_data > 0)
				out[k++] = (Gemm){ rows, in, o, 1 };
			if (c->flops_bwd_weight > 0)
				out[k++] = (Gemm){ o, in, rows, 1 };
		}
		return k;
	}
	case OPC_MATMUL: {
		/* two activations: [..., m, k] x [..., k, n] */
		const Shape *b = l->nin > 1 ? &g->tensor[l->in[1]].shape : NULL;
		double m, kk, nn, batch;
		if (!b || x->rank < 2 || b->rank < 2 || y->rank < 2)
			return 0;
		m = (double)x->d[x->rank - 2], kk = (double)x->d[x->rank - 1];
		nn = (double)b->d[b->rank - 1];
		batch = n * elems_from(y, 0) / (m * nn);
		if (!bwd) {
			out[k++] = (Gemm){ m, nn, kk, batch };
		} else { /* dA = dC B^T, dB = A^T dC */
			out[k++] = (Gemm){ m, kk, nn, batch };
			out[k++] = (Gemm){ kk, nn, m, batch };
		}
		return k;
	}
	default:
		return 0;
	}
}

/* Winograd's F(4x4, 3x3) for a convolution's product g whose output has
 * `pout` positions an image: 36 products of (output tiles) x C by C x F,
 * the input transformed (read x, write 36/16 of it) and the output (read
 * 36/16 of y, write y). */
static double
winograd_time(Engine *e, const System *s, const Gemm *p, double in_bytes, double out_bytes,
	      double peak, double u)
{
	Gemm w = { ceil(p->m / 16), p->n, p->k / 9, 36 };

	return gemm_time(e, s, &w, peak, u) +
	       3.25 * (in_bytes + out_bytes) / (s->mem_bw * s->eff_mem) + 2 * s->kernel_lat;
}

/* Whether cuDNN may run product i of conv l's pass by Winograd: a 2-D 3 x
 * 3 convolution of stride and dilation 1 in true fp32 (its tensor-core
 * kernels are implicit GEMMs), forward or data gradient. */
static bool
winograd(const Layer *l, Dtype dt, bool bwd, int i)
{
	if (dt != DT_FP32 || l->op != OP_CONV || l->attr.nspatial != 2 || (bwd && i > 0))
		return false;
	if (bwd && l->cost.flops_bwd_data <= 0)
		return false;
	for (int d = 0; d < 2; d++)
		if (l->attr.kernel[d] != 3 || l->attr.stride[d] > 1 || l->attr.dilation[d] > 1)
			return false;
	return true;
}

double
kernel_compute(const Analysis *an, const Graph *g, const Layer *l, double n, double share,
	       bool bwd, Dtype dt, double peak, double u, double flops)
{
	const System *s = an->q.sys;
	Gemm p[3];
	int np = layer_gemms(g, l, n * share, bwd, p);
	double t = 0, own = 0, elem = elem_bytes(an);

	if (s->sms <= 0 || np == 0 || flops <= 0)
		return flops / (peak * u);
	for (int i = 0; i < np; i++) {
		double ti;
		/* a fused attention's products (FlashAttention's tiling): a block
		 * of queries' output, the head dimension wide, accumulates over
		 * every key, so a tile's first loads and last writes come once
		 * a block of queries, not once a block of scores */
		if (an->q.impl.fused_attention && l->attn && p[i].n > p[i].k)
			p[i] = (Gemm){ p[i].m, p[i].k, p[i].n, p[i].batch };
		ti = gemm_time(an->eng, s, &p[i], peak, u);
		if (an->q.impl.conv_benchmark && !s->host_device && winograd(l, dt, bwd, i)) {
			double x = (double)g->tensor[l->in[0]].elems * n * share * elem;
			double y = (double)g->tensor[l->out[0]].elems * n * share * elem;
			double tw = winograd_time(an->eng, s, &p[i], bwd ? y : x, bwd ? x : y, peak,
						  u);
			if (tw < ti)
				ti = tw;
		}
		t += ti;
		own += 2 * p[i].m * p[i].n * p[i].k * p[i].batch;
	}
	/* the counted FLOPs (bias and all: passes/cost.c) at the products'
	 * pace */
	return own > 0 ? t * flops / own : flops / (peak * u);
}
