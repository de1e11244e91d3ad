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
 * on its microbenchmarks (tests/data/kernels/README.md).  Where the tiles
 * do not fill the SMs the library splits K over more of them (split-K),
 * the partial products summed in a pass over memory.  Of the menu of
 * tiles and splits the library takes the fastest, as cuBLAS's heuristics
 * and cuDNN's benchmark mode do.  The same loops give a convolution's
 * three products (implicit GEMM); at fp32 without tensor cores cuDNN may
 * run a 3 x 3, stride-1 convolution by Winograd's F(4x4, 3x3): 36
 * products of the transformed tiles where direct convolution has 144, at
 * the cost of transforming the input and the output in passes of their
 * own. */
#include "model/model.h"

#include <math.h>

/* The tiles a library chooses from (cuBLAS's and cuDNN's kernel names:
 * tests/data/kernels/, validation/h100/profile_*.txt). */
static const int tile[][2] = {
	{ 256, 128 }, { 128, 256 }, { 256, 64 }, { 64, 256 }, { 128, 128 }, { 128, 64 },
	{ 64, 128 }, { 64, 64 }, { 64, 32 }, { 32, 64 }, { 32, 32 },
};

/* A tile's operand reuse: its outputs over the operands it loads. */
static double
reuse(double a, double b)
{
	return a * b / (a * b + 10 * (a + b));
}

double
gemm_time(const System *s, const Gemm *p, double peak, double u)
{
	double best = INFINITY, per_sm = peak / s->sms;

	if (s->sms <= 0 || p->m <= 0 || p->n <= 0 || p->k <= 0 || p->batch <= 0)
		return 2 * p->m * p->n * p->k * p->batch / (peak * u);
	for (size_t i = 0; i < sizeof tile / sizeof tile[0]; i++) {
		double tm = tile[i][0], tn = tile[i][1];
		double ut = u * reuse(tm, tn) / reuse(128, 128);
		double tiles = p->batch * ceil(p->m / tm) * ceil(p->n / tn);
		if (ut > 1)
			ut = 1;
		/* split-K while the tiles leave SMs idle, each part at least a
		 * few steps of the main loop */
		for (double split = 1; split <= 16; split *= 2) {
			double k = ceil(p->k / split), waves = ceil(tiles * split / s->sms), t;
			if (split > 1 && (tiles * split > s->sms || k < 64))
				break;
			t = waves * 2 * tm * tn * (k + s->tile_overhead) / (ut * per_sm);
			if (split > 1) /* the partial products summed: fp32, read and written */
				t += (split + 1) * p->batch * p->m * p->n * 4 / (s->mem_bw * s->eff_mem);
			if (t < best)
				best = t;
		}
	}
	return best;
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
winograd_time(const System *s, const Gemm *p, double in_bytes, double out_bytes, double peak,
	      double u)
{
	Gemm w = { ceil(p->m / 16), p->n, p->k / 9, 36 };

	return gemm_time(s, &w, peak, u) +
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
kernel_compute(const System *s, const Graph *g, const Layer *l, double n, double share, bool bwd,
	       Dtype dt, double peak, double u, double flops)
{
	Gemm p[3];
	int np = layer_gemms(g, l, n * share, bwd, p);
	double t = 0, own = 0, elem = g->elem_bytes;

	if (s->sms <= 0 || np == 0 || flops <= 0)
		return flops / (peak * u);
	for (int i = 0; i < np; i++) {
		double ti = gemm_time(s, &p[i], peak, u);
		if (winograd(l, dt, bwd, i)) {
			double x = (double)g->tensor[l->in[0]].elems * n * share * elem;
			double y = (double)g->tensor[l->out[0]].elems * n * share * elem;
			double tw = winograd_time(s, &p[i], bwd ? y : x, bwd ? x : y, peak, u);
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
