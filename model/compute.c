/* compute.c -- how long one GPU takes for a layer, an optimizer step, and
 * the input pipeline of a node.
 *
 * A layer's kernel time is a roofline: the larger of its FLOPs over the
 * GPU's peak times the efficiency of its class (convolutions, matrix
 * products) and the activation bytes it moves over the memory bandwidth
 * times the element-wise efficiency, plus a fixed cost per kernel (launch
 * and tail: the reason small layers, and layers split many ways, stop
 * scaling).  These are the GPU's times; the CPU that issues the kernels is
 * the host lane's (host.c).  Backward moves the bytes autograd's kernels move
 * (Cost.elems_bwd, passes/cost.c).  Around a layer's own kernels run those
 * the framework adds, each a kernel and a dispatch: autocast's casts
 * (cast_time) and, where the gradients stay allocated, the addition of
 * each new weight gradient into the kept one (accumulate_time).
 *
 * Batch norm in training is two-pass in both directions, as cuDNN's and
 * PyTorch's kernels are written (batch_norm_collect_statistics, then
 * batch_norm_transform_input; backward batch_norm_backward_reduce, then
 * batch_norm_backward_elemt): a channel's statistics span the whole batch,
 * more than a kernel keeps on chip, so forward reads x twice and writes y
 * (3 passes, where an element-wise layer makes 2) and backward reads dy
 * and x twice and writes dx (5, where the rule above gives 4).
 *
 * A stack's fusions (the implementation's fuse_bn_relu, fuse_bn_add_relu,
 * conv_bn_stats; the patterns are the memory pass's, Layer.fuse) are
 * priced by what the fused kernel reads and writes (fused_passes).
 *
 * A layer with a measured time (Layer.timed: a ParaDL table's time column,
 * --profile) takes that time per sample instead of the roofline, scaled
 * by the samples it works on.  A
 * time measured for a span of layers (ParaDL's whole-network time) is
 * shared out over them in proportion to their estimates. */
#include "model/model.h"

#include <math.h>

/* Whether layer l is a 2-D depthwise convolution that PyTorch runs in its
 * own kernels (aten/src/ATen/native/cuda/DepthwiseConv2d.cu) rather than in
 * cuDNN.  Depthwise as ATen's ConvParams::is_depthwise: groups > 1, one
 * input channel per group.  ATen's use_cudnn_depthwise takes cuDNN for
 * channels-last tensors and for fp16 ones (after a workload table that picks
 * cuDNN for most shapes at batches of 32 and more; oraclec takes cuDNN for
 * every fp16 one), its own kernels for fp32, TF32 runs and bf16. */
static bool
aten_depthwise(const Analysis *an, const Graph *g, const Layer *l, bool fp16)
{
	const Shape *x;

	if (!an->q.impl.aten_depthwise || l->op != OP_CONV || l->attr.nspatial != 2 ||
	    l->attr.groups <= 1 || an->q.set.channels_last || fp16)
		return false;
	x = &g->tensor[l->in[0]].shape;
	return x->rank > l->attr.lead && x->d[l->attr.lead] == l->attr.groups;
}

/* Whether layer l is a depthwise convolution (one input channel a group),
 * in whichever library: a product of one channel by its filter, no matrix
 * for tensor cores (cuDNN's depthwise kernels run on the CUDA cores too). */
static bool
depthwise(const Graph *g, const Layer *l)
{
	const Shape *x = &g->tensor[l->in[0]].shape;

	return op_info[l->op].cls == OPC_CONV && l->attr.groups > 1 &&
	       x->rank > l->attr.lead && x->d[l->attr.lead] == l->attr.groups;
}

bool
layer_on_aten(const Analysis *an, const Graph *g, const Layer *l)
{
	return aten_depthwise(an, g, l, precision_dtype(an->q.set.prec, true) == DT_FP16);
}

/* The precision's format for products is TF32 (--precision tf32): both
 * switches on.  Else matmul's stays off, PyTorch's default since 1.12, and
 * cudnn's is the implementation's conv_tf32: PyTorch's default on (since
 * 1.7), off for a stack without TF32 (CUDA 9, cuDNN 7).  The defaults are
 * ATen's (aten/src/ATen/Context.h: allow_tf32_cudnn = true,
 * allow_tf32_cublas = false); Debian's torch 1.13 reports True and
 * False. */
void
tf32_switches(const Analysis *an, bool *cudnn, bool *matmul)
{
	*matmul = precision_dtype(an->q.set.prec, true) == DT_TF32;
	*cudnn = *matmul || an->q.impl.conv_tf32;
}

int
library_calls(const Analysis *an, const Graph *g, const Layer *l, bool bwd)
{
	bool cudnn = op_info[l->op].cls == OPC_CONV && !layer_on_aten(an, g, l);

	if (l->op == OP_BATCHNORM)
		return 1;
	if (!cudnn)
		return 0;
	return bwd && !reads_input(g, l) ? 2 : 1;
}

double
layer_call_host(const Analysis *an, const Graph *g, const Layer *l, bool bwd)
{
	return an->q.impl.dispatch + library_calls(an, g, l, bwd) * an->q.impl.library_call;
}

/* The number format layer l computes in: the precision's, but for the
 * convolutions of an fp32 run on a GPU with TF32 where cuDNN's switch is
 * on (tf32_switches) -- cuDNN's, not the depthwise kernels ATen runs on
 * the CUDA cores -- and under fp8 for all but the linear layers:
 * Transformer Engine runs te.Linear's GEMMs (and LayerNormLinear's,
 * LayerNormMLP's) in FP8, the attention's products and any convolution in
 * bf16 (transformer_engine/pytorch/module/linear.py). */
Dtype
layer_dtype(const Analysis *an, const Graph *g, const Layer *l)
{
	Dtype dt = precision_dtype(an->q.set.prec, l->cost.macs > 0);
	bool cudnn, matmul;

	if (dt == DT_FP8 && op_info[l->op].cls != OPC_FC)
		return precision_dtype(an->q.set.prec, false);
	tf32_switches(an, &cudnn, &matmul);
	if (dt == DT_FP32 && cudnn && op_info[l->op].cls == OPC_CONV &&
	    an->q.sys->peak[DT_TF32] > 0 && !aten_depthwise(an, g, l, false))
		return DT_TF32;
	return dt;
}

/* Whether convolution l is a 1x1 one (pointwise: every kernel dimension
 * 1, ungrouped), a plain product of its channels. */
static bool
pointwise(const Layer *l)
{
	if (l->attr.groups > 1 || l->attr.nspatial < 1)
		return false;
	for (int i = 0; i < l->attr.nspatial; i++)
		if (l->attr.kernel[i] > 1)
			return false;
	return true;
}

/* The fraction of the peak layer l's kernels reach at number format dt:
 * convolutions eff_conv, products (and the element-wise FLOPs, never the
 * bound) eff_gemm, each the system's value for dt where it gives one;
 * 1x1 and grouped (depthwise among them) convolutions times their class's
 * scale where the system gives one (conv_1x1_scale, conv_grouped_scale:
 * what a probe or a calibration found of the class), at most the peak. */
static double
efficiency(const System *s, const Layer *l, Dtype dt)
{
	double e, scale = -1;

	if (op_info[l->op].cls != OPC_CONV)
		return s->eff_gemm_dt[dt] > 0 ? s->eff_gemm_dt[dt] : s->eff_gemm;
	e = s->eff_conv_dt[dt] > 0 ? s->eff_conv_dt[dt] : s->eff_conv;
	if (l->attr.groups > 1)
		scale = s->conv_grouped_scale;
	else if (pointwise(l))
		scale = s->conv_1x1_scale;
	if (scale > 0)
		e = e * scale < 1 ? e * scale : 1;
	return e;
}

/* The fraction of the memory bandwidth layer l's kernels reach: batch
 * norm's on NCHW tensors eff_norm_nchw (cuDNN's per-channel kernels), or
 * on 16-bit ones (autocast's output, Layer.low) eff_norm_nchw_fp16 or
 * _bf16, where the system gives it; the rest eff_memory. */
static double
bandwidth(const Analysis *an, const Layer *l)
{
	const System *s = an->q.sys;
	Dtype dt = l->low && precision_low(an->q.set.prec) ? precision_dtype(an->q.set.prec, true)
							    : DT_FP32;

	if (l->op == OP_BATCHNORM && !an->q.set.channels_last) {
		if ((dt == DT_FP16 || dt == DT_BF16) && s->eff_norm_nchw_dt[dt] > 0)
			return s->mem_bw * s->eff_norm_nchw_dt[dt];
		if (s->eff_norm_nchw > 0)
			return s->mem_bw * s->eff_norm_nchw;
	}
	return s->mem_bw * s->eff_mem;
}

/* An attention run as one kernel (the implementation's attention =
 * "fused", Layer.attn; FlashAttention-2, Dao 2023, as PyTorch's
 * scaled_dot_product_attention runs it): the two products at their
 * tiles' pace, nothing between them moved through memory, only Q, K, V
 * read and O written (and in backward their gradients); backward
 * computes the scores QK^T again before its four products.  The layers
 * between the products take no time of their own.  Seconds of layer l's
 * part, or -1 when l is not part of a fused attention. */
static double
fused_attention(const Analysis *an, const Graph *g, const Layer *l, double n, double share,
		bool bwd, Dtype dt, double peak, double u)
{
	const System *s = an->q.sys;
	int low = precision_low(an->q.set.prec);
	double io = 0, b = low ? low : elem_bytes(an), flops;

	if (!an->q.impl.fused_attention || !l->attn)
		return -1;
	if (l->attn == ATTN_CORE)
		return 0;
	/* Q and K, or V and O: what crosses the kernel's edge */
	for (int k = 0; k < l->nin; k++) {
		int p = g->tensor[l->in[k]].producer;
		if (p < 0 || !g->layer[p].attn)
			io += (double)g->tensor[l->in[k]].elems;
	}
	if (l->attn == ATTN_PV)
		io += (double)g->tensor[l->out[0]].elems;
	flops = (double)(bwd ? l->cost.flops_bwd : l->cost.flops_fwd) * n * share;
	if (bwd && l->attn == ATTN_QK)
		flops += (double)l->cost.flops_fwd * n * share; /* the scores again */
	double tc = kernel_compute(an, g, l, n, share, bwd, dt, peak, u, flops);
	double tm = (bwd ? 2 : 1) * io * b * n * share / (s->mem_bw * s->eff_mem);
	return (tc > tm ? tc : tm) + (l->attn == ATTN_QK ? (bwd ? 2 : 1) * s->kernel_lat : 0);
}

bool
layer_fused_away(const Analysis *an, const Layer *l)
{
	const Implementation *im = &an->q.impl;

	if ((l->fuse & FUSE_RELU_OF_BN) &&
	    (im->fuse_bn_relu || (im->conv_bn_stats && (l->fuse & FUSE_RELU_INTO_CONV))))
		return true;
	return (l->fuse & (FUSE_ADD_OF_BN | FUSE_RELU_OF_ADD)) && im->fuse_bn_add_relu;
}

/* What a stack's fusions change of batch norm l's kernels, in passes over
 * its output (docs/model.md, "Fused kernels"): the ReLU after it
 * (fuse_bn_relu) costs its backward a read of the output, the ReLU's mask;
 * the residual add and ReLU after it (fuse_bn_add_relu) cost its forward
 * a read of the other addend and its backward the mask's read and the
 * addend's gradient written (the add passed it on); statistics summed in
 * the convolution before it (conv_bn_stats) spare its forward one read,
 * and where the next convolution applies the norm and its ReLU as it
 * reads (NVIDIA's NormalizedConvolution), its forward writes nothing and
 * reads nothing: *none. */
static int
fused_passes(const Analysis *an, const Layer *l, bool bwd, bool *none)
{
	const Implementation *im = &an->q.impl;
	bool stats = im->conv_bn_stats && (l->fuse & FUSE_BN_OF_CONV);
	bool apply = stats && (l->fuse & FUSE_BN_INTO_CONV);
	int passes = 0;

	*none = !bwd && apply;
	if (l->op != OP_BATCHNORM)
		return 0;
	if (bwd) {
		if ((l->fuse & FUSE_BN_RELU) && im->fuse_bn_relu && !apply)
			passes++; /* the mask; NormConv's comes from x and the norm */
		if ((l->fuse & FUSE_BN_ADD) && im->fuse_bn_add_relu)
			passes += 2;
		return passes;
	}
	if (stats)
		passes--;
	if ((l->fuse & FUSE_BN_ADD) && im->fuse_bn_add_relu)
		passes++;
	return passes;
}

/* The roofline of one pass: the larger of compute and memory time, for n
 * samples at a share; `weights` counts the weights' read.  The bytes are
 * the layer's own (passes/cost.c): forward's, or what backward's kernels
 * move. */
static double
roofline(const Analysis *an, const Graph *g, const Layer *l, double n, double share, bool bwd,
	 bool weights)
{
	const System *s = an->q.sys;
	const Cost *c = &l->cost;
	Dtype dt = layer_dtype(an, g, l);
	bool aten = aten_depthwise(an, g, l, dt == DT_FP16);
	/* depthwise kernels, ATen's and cuDNN's, run on the CUDA cores */
	double peak = s->peak[dt] > 0 && !depthwise(g, l) ? s->peak[dt] : s->peak[DT_FP32];
	double flops = (double)(bwd ? c->flops_bwd : c->flops_fwd) * n * share;
	/* elems_fwd counts the weights once per sample; they are read once */
	int elem = elem_bytes(an), low = precision_low(an->q.set.prec);
	double wbytes = (double)c->params * elem;
	/* autocast: a layer whose output is 16-bit moves about that many
	 * bytes per activation item (its inputs are mostly 16-bit too) */
	double narrow = l->low && low ? (double)low / elem : 1;
	double fwd = ((double)c->elems_fwd * elem - wbytes) * narrow * n * share;
	double act = bwd ? (double)c->elems_bwd * elem * narrow * n * share : fwd;
	double bytes,
		fused = fused_attention(an, g, l, n, share, bwd, dt, peak, efficiency(s, l, dt));
	bool none;
	int more = fused_passes(an, l, bwd, &none);

	if (fused >= 0)
		return fused;
	if (none)
		fwd = act = 0;
	else if (more)
		act += more * (double)g->tensor[l->out[0]].elems * elem * narrow * n * share;
	/* ATen's depthwise backward: the input gradient, where the input
	 * needs one, as any layer's (read dy, write dx: the forward's bytes),
	 * and a weight gradient of one
	 * thread block per channel and filter tap, each reading the tap's
	 * input and the output gradient over the whole batch: 2 k_h k_w
	 * reads of the output's size (conv_depthwise2d_grad_weight_kernel) */
	if (aten && bwd)
		act = (c->flops_bwd_data > 0 ? fwd : 0) +
		      2.0 * l->attr.kernel[0] * l->attr.kernel[1] *
			      (double)g->tensor[l->out[0]].elems * elem * narrow * n * share;
	bytes = (act > 0 ? act : 0) + (weights ? wbytes * share : 0);
	double tc = aten ? flops / (peak * efficiency(s, l, dt))
			 : kernel_compute(an, g, l, n, share, bwd, dt, peak, efficiency(s, l, dt),
					  flops);
	double tm = bytes / bandwidth(an, l);
	/* Tensor cores work on NHWC: on PyTorch's default NCHW tensors cuDNN
	 * transposes a convolution's operands in kernels of their own, a read
	 * and a write of each -- the overhead channels_last removes (NVIDIA's
	 * convolution performance guide, "Tensor Layouts In Memory").  cuDNN
	 * 8 every pass's input and output (nchw_transposes "each-pass");
	 * cuDNN 9 forward's input and output and backward's output gradient
	 * ("once": the H100 profile of ResNet-50 in TF32, validation/h100/,
	 * runs 157 nchwToNhwc and 65 nhwcToNchw kernels a step for its 53
	 * convolutions) */
	double dy = (double)g->tensor[l->out[0]].elems * elem * narrow * n * share;
	double tt = op_info[l->op].cls == OPC_CONV && dt != DT_FP32 && s->peak[dt] > 0 &&
				    !an->q.set.channels_last && !aten && act > 0
			    ? 2 * (bwd && an->q.impl.transposes_once ? dy : act) /
				      (s->mem_bw * s->eff_mem)
			    : 0;

	if (op_info[l->op].save & S_VIEW)
		return 0; /* a view launches nothing */
	return (tc > tm ? tc : tm) + tt;
}

/* Autocast's casts for layer l (Cost.cast_*, passes/memory.c), each a
 * kernel reading 4 bytes an element and writing 2, or the other way: the
 * cached copies of its trained tensors, then its activation inputs of the
 * other width (n samples at a share); backward casts the gradients back,
 * but for a graph input's.  *ops: the operators the CPU dispatches. */
static double
cast_time(const Analysis *an, const Layer *l, double n, double share, bool bwd)
{
	const Cost *c = &l->cost;
	double elems =
		(double)c->cast_w * share + (double)(bwd ? c->cast_grad : c->cast_in) * n * share;
	int ops = c->cast_wn + (bwd ? c->cast_gradn : c->cast_inn);

	if (!precision_low(an->q.set.prec)) /* no autocast: no cast */
		return 0;
	return ops * an->q.sys->kernel_lat + elems * 6 / (an->q.sys->mem_bw * an->q.sys->eff_mem);
}

/* Transformer Engine's FP8 around a linear layer whose GEMM runs in FP8
 * (transformer_engine/pytorch/module/linear.py, 1.x, _Linear): forward
 * casts its input and its weight with fp8_cast_transpose_fused, a kernel
 * each reading the bf16 tensor (2 bytes an element) and writing it in FP8
 * and transposed in FP8 for the backward (1 + 1), its amax found in the
 * same pass; backward casts the output gradient the same way
 * (grad_output_preprocess).  Delayed scaling then updates each module's
 * amax history and scales once a pass (amax_and_scale_update): one kernel
 * forward, one backward.  Nothing for other layers and precisions. */
static double
fp8_time(const Analysis *an, const Graph *g, const Layer *l, double n, double share, bool bwd)
{
	const System *s = an->q.sys;
	double elems;

	if (layer_dtype(an, g, l) != DT_FP8 || op_info[l->op].cls != OPC_FC)
		return 0;
	elems = bwd ? (double)g->tensor[l->out[0]].elems * n * share
		    : ((double)g->tensor[l->in[0]].elems * n + (double)l->cost.params) * share;
	return (bwd ? 2 : 3) * s->kernel_lat + elems * 4 / (s->mem_bw * s->eff_mem);
}

/* Where the gradients stay allocated between iterations (zero_grad =
 * true: zero_grad(set_to_none=False)), autograd's AccumulateGrad adds each
 * new weight gradient into its parameter's: an add_ per trained tensor,
 * reading two and writing one (tools/accumulate_grad.py); without, it
 * takes the new one as it is.  Under ZeRO stages 2 and 3 the gradients
 * are flat shards, not the layers' tensors (left out, as reducer_time
 * leaves their copies). */
static double
accumulate_time(const Analysis *an, const Graph *g, const Layer *l, double share)
{
	const System *s = an->q.sys;
	int ops = an->q.impl.zero_grad && an->q.set.zero < 2 && l->cost.params > 0 ? l->nw : 0;

	if (!ops)
		return 0;
	return ops * s->kernel_lat +
	       3.0 * (double)l->cost.params * share * elem_bytes(an) / (s->mem_bw * s->eff_mem);
}

/* The operator an ONNX decomposition spells (Layer.pattern), at its first
 * layer, as PyTorch runs it: one kernel reading the input and writing the
 * output; backward reads the output gradient and the input and writes
 * the input gradient, LayerNorm's in two kernels (its data gradient, then
 * gamma's and beta's, which read both again: layer_norm_backward_kernel
 * in ATen's layer_norm_kernel.cu).  Its other layers run nothing. */
static double
pattern_time(const Analysis *an, const Graph *g, const Layer *l, double n, double share,
	     bool bwd)
{
	const System *s = an->q.sys;
	int elem = elem_bytes(an), low = precision_low(an->q.set.prec);
	double narrow = l->low && low ? (double)low / elem : 1;
	double e = (double)g->tensor[l->in[0]].elems * n * share * elem * narrow;
	bool ln = l->pattern == PAT_LAYERNORM;

	if (l->pattern == PAT_PART)
		return 0;
	if (!bwd)
		return 2 * e / (s->mem_bw * s->eff_mem) + s->kernel_lat;
	return (ln ? 5 : 3) * e / (s->mem_bw * s->eff_mem) + (ln ? 2 : 1) * s->kernel_lat;
}

double
layer_time_of(const Analysis *an, const Graph *g, const Layer *l, double n, double share,
	      GridDim how, bool bwd, bool profile, TimeSource *src)
{
	int kernels = 1;
	bool fused = an->q.impl.fused_attention && l->attn; /* one kernel for the attention */
	bool pattern = l->pattern && !(profile && l->timed); /* one operator (a measured
	                                                        one: a fused attention's) */
	double own, table, gpu;
	KernelSource ks;

	*src = TS_MODEL;
	if (bwd && l->cost.params > 0)
		kernels = 2; /* data and weight gradients */
	else if (bwd && l->cost.elems_bwd == 0 && l->cost.flops_bwd == 0)
		kernels = 0; /* an add passes its gradient on */
	if (bwd && an->q.set.forward_only)
		return 0; /* no backward pass, no dispatch */
	if (layer_fused_away(an, l) && !l->timed)
		return 0; /* in the kernel of the batch norm before it */
	if (profile && l->timed && !fused) { /* measured, launches and all */
		*src = TS_PROFILE;
		return layer_measured(g, (int)(l - g->layer), an->q.set.prec, bwd) * n * share;
	}
	/* the layer's own kernels: the model's, else the table's */
	own = pattern ? pattern_time(an, g, l, n, share, bwd)
	      : fused ? roofline(an, g, l, n, share, bwd, true)
		      : roofline(an, g, l, n, share, bwd, true) + kernels * an->q.sys->kernel_lat;
	table = table_time(an, g, l, n, share, how, bwd, own,
			   an->q.sys->host_device ? layer_call_host(an, g, l, bwd) : 0, &ks);
	if (ks != KS_NONE) {
		own = table;
		*src = ks == KS_TABLE ? TS_TABLE : TS_INTERPOLATED;
	}
	if (pattern)
		return own + cast_time(an, l, n, share, bwd);
	if (fused)
		return own + (l->attn == ATTN_QK ? cast_time(an, l, n, share, bwd) : 0);
	gpu = own + cast_time(an, l, n, share, bwd) + fp8_time(an, g, l, n, share, bwd);
	if (bwd)
		gpu += accumulate_time(an, g, l, share);
	if (op_info[l->op].save & S_VIEW)
		return 0; /* a view launches nothing */
	return gpu;
}

double
layer_time(const Analysis *an, const Graph *g, const Layer *l, double n, double share,
	   GridDim how, bool bwd)
{
	TimeSource src;

	return layer_time_of(an, g, l, n, share, how, bwd, true, &src);
}

/* The weight of each layer in its span: the roofline per sample at a
 * large batch (no fixed costs, the weights' read spread thin), so the
 * shares do not depend on the batch.  Spans of layers the roofline gives
 * no time (views only) share equally.  At the precision of an, into
 * Graph.measured. */
static void
spread(const Analysis *an, Graph *g, const Timing *t)
{
	double est[2] = { 0, 0 };
	int n = t->last - t->first + 1;
	Precision p = an->q.set.prec;

	for (int i = t->first; i <= t->last; i++)
		for (int b = 0; b < 2; b++)
			est[b] += roofline(an, g, &g->layer[i], 1, 1, b, false);
	for (int i = t->first; i <= t->last; i++) {
		Layer *l = &g->layer[i];
		double f = roofline(an, g, l, 1, 1, false, false);
		double b = roofline(an, g, l, 1, 1, true, false);
		l->timed = true;
		g->measured[i][p][0] = t->fwd * (est[0] > 0 ? f / est[0] : 1.0 / n);
		g->measured[i][p][1] = t->bwd * (est[1] > 0 ? b / est[1] : 1.0 / n);
	}
}

/* At every precision the system runs, as an analysis of it would share
 * the spans out (the search asks for the others without running the
 * pass again): an's settings, the precision changed. */
bool
timing_spread(Graph *g, const Analysis *an)
{
	for (int i = 0; i < g->nlayer; i++)
		g->layer[i].timed = false;
	g->measured = NULL;
	if (g->ntiming || g->trace)
		g->measured = arena_array(g->arena, (size_t)g->nlayer + 1, sizeof *g->measured);
	for (int p = 0; p < PREC_COUNT && g->ntiming; p++) {
		Analysis at = *an;
		if (!system_runs(an->q.sys, (Precision)p))
			continue;
		at.q.set.prec = (Precision)p;
		for (int i = 0; i < g->ntiming; i++)
			spread(&at, g, &g->timing[i]);
	}
	g->done |= PASS_TIMING;
	return true;
}

double
span_time(const Analysis *an, const Graph *g, int first, int last, double n, double share,
	  GridDim how)
{
	double t = 0;

	for (int i = first; i <= last; i++)
		t += layer_time(an, g, &g->layer[i], n, share, how, false) +
		     layer_time(an, g, &g->layer[i], n, share, how, true);
	return t;
}

/* Reads and writes per parameter element, 4-byte values: SGD reads the
 * weight and gradient and writes the weight (12 B); momentum adds the
 * velocity (20 B); Adam, AdamW and RMSprop (with momentum) their two
 * state tensors (28 B). */
static double
update_bytes(Optimizer opt)
{
	return optimizer_bytes(opt) * 2 + 12;
}

double
optimizer_bytes(Optimizer opt)
{
	return opt == OPT_ADAM || opt == OPT_ADAMW || opt == OPT_RMSPROP ? 8
	       : opt == OPT_MOMENTUM				       ? 4
								       : 0;
}

/* The tensor operations torch.optim's loop runs per parameter tensor
 * (PyTorch 1.x, torch/optim/_functional.py, with weight decay): SGD the
 * decay and the step; momentum also the velocity's mul_ and add_; Adam
 * the decay, two per moment, the denominator's sqrt, division and add_,
 * and the addcdiv_ (AdamW decays the weight with a mul_ instead);
 * RMSprop with momentum the decay, two for the square average, sqrt and
 * add_, two for the buffer and the step.  A foreach step (torch.optim's
 * _multi_tensor_* functions) runs each as one call over all tensors. */
int
step_ops(Optimizer opt)
{
	switch (opt) {
	case OPT_SGD: return 2;
	case OPT_MOMENTUM: return 4;
	case OPT_ADAM:
	case OPT_ADAMW: return 9;
	case OPT_RMSPROP: return 8;
	}
	return 1;
}

/* Tensors one foreach kernel takes: multi_tensor_apply's lists hold at
 * most 110, 64, 48, 36 tensors for depths 1 to 4 (an optimizer's step
 * reads the parameter, its gradient and its state: 64) and at most 320
 * blocks of 65,536 elements (ATen's native/cuda/MultiTensorApply.cuh). */
#define FOREACH_TENSORS 64
#define FOREACH_ELEMS (320.0 * 65536)

/* The optimizer step over `arrays` parameter tensors of `params`
 * elements, on the GPU: its bytes at the memory bandwidth, and its
 * kernels -- one per tensor fused, the optimizer's operations per tensor
 * in torch.optim's loop, per chunk of tensors in a foreach step -- and
 * the kernels zero_grad(set_to_none=False) runs to clear the gradients.
 * The CPU that issues them is the host lane's (host.c). */
double
update_time(const Analysis *an, double params, double arrays)
{
	const System *s = an->q.sys;
	const Implementation *im = &an->q.impl;
	double chunks = ceil(arrays / FOREACH_TENSORS), big = ceil(params / FOREACH_ELEMS);
	double per = im->step == STEP_FOREACH ? (chunks > big ? chunks : big) : arrays;
	double kernels =
		(im->step == STEP_PER_OP || im->step == STEP_FOREACH ? step_ops(an->q.set.opt)
								     : 1) +
		(im->zero_grad ? 1 : 0);

	return params * update_bytes(an->q.set.opt) / (s->mem_bw * s->eff_mem) +
	       per * kernels * s->kernel_lat;
}

/* CPU seconds one loader worker spends on a sample: decoding and
 * augmenting a JPEG, augmenting a raw image, nothing for data used as
 * stored (docs/model.md, "Input pipeline"). */
static double
sample_cpu(const Analysis *an)
{
	switch (an->q.set.data) {
	case DATA_JPEG:
		return an->q.impl.decode_bw > 0 ? an->q.set.sample_bytes / an->q.impl.decode_bw : 0;
	case DATA_RAW: return an->q.impl.raw_sample;
	default: return 0;
	}
}

/* Files the whole job reads from the shared file system per iteration:
 * each of `nodes` nodes reads `node_samples` from its fixed shard of the
 * dataset (dataset / nodes files), of which its page cache keeps
 * cache_files from one epoch to the next. */
static double
shared_reads(const Analysis *an, double node_samples, double nodes)
{
	double shard = (double)an->q.set.dataset_size / (nodes > 1 ? nodes : 1);
	double miss = shard > an->q.sys->cache_files ? 1 - an->q.sys->cache_files / shard : 0;

	return node_samples * nodes * miss;
}

/* A loader process prepares `samples` per iteration with its workers, at
 * most the cores it has (`cores`); the node reads `node_samples` from
 * storage, at its bandwidth and at its share of the shared file system's
 * file rate.  Both run ahead of the GPUs (prefetching): the slower one
 * sets the loader's pace.  Synthetic data is on the GPU already: none. */
double
input_time(const Analysis *an, double samples, double cores, double node_samples, double nodes)
{
	const System *s = an->q.sys;
	double workers = an->q.impl.loader_workers < cores ? an->q.impl.loader_workers : cores;
	double bytes =
		s->storage_bw > 0 ? node_samples * an->q.set.sample_bytes / s->storage_bw : 0;
	double files = s->fs_file_rate > 0 ? shared_reads(an, node_samples, nodes) / s->fs_file_rate
					   : 0;
	double read = bytes > files ? bytes : files;
	double cpu = workers > 0 ? samples * sample_cpu(an) / workers : 0;

	if (an->q.set.data == DATA_SYNTHETIC)
		return 0;

	return read > cpu ? read : cpu;
}
