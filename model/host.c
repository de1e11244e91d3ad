/* host.c -- the CPU that issues the kernels: the host lane
 * (docs/model.md, "The host lane").
 *
 * An eager framework runs an iteration on two lanes.  The CPU issues one
 * operator after another -- the framework's call, its dispatcher,
 * autograd's record (backward: its engine's node), a library's plan
 * lookup, the kernel's launch -- and goes on without waiting; the GPU runs
 * the kernels in that order, each once the one before has finished and
 * the CPU has issued it.  So the CPU runs ahead where kernels are long,
 * the GPU waits where they are short, and between sync points the
 * iteration takes what the slower lane needs, plus what one lane cannot
 * overlap with the other where they meet: at a sync point the CPU waits
 * for the GPU to finish everything issued (GradScaler's step reads its
 * found_inf flag; a training loop may read the loss), and after it the
 * GPU waits for the CPU's first issues.  Without a sync point in the
 * iteration the CPU runs iterations ahead, and the slower lane alone sets
 * the pace.  On a device that is the CPU itself (a probed CPU:
 * System.host_device) the issuing and the computing share its cores: the
 * lanes do not overlap, and the iteration is both added.
 *
 * What the CPU issues per operator is the implementation's (dispatch,
 * library_call) and the operators per layer follow PyTorch's modules:
 * every layer is a call (a view too, launching nothing), a batch norm in
 * training also counts its batches (num_batches_tracked.add_(1),
 * torch/nn/modules/batchnorm.py), a convolution's and a batch norm's
 * kernels come from cuDNN (but the depthwise ones ATen runs itself), each
 * autocast cast and each gradient accumulation is an operator of its own;
 * backward runs a node per layer, a convolution's two cuDNN calls (data
 * and weight gradients; the first layer's weight gradient only).  A layer
 * fused into another's kernel issues nothing of its own.  Under CUDA
 * graphs (the implementation's cuda_graphs) the CPU issues no operator:
 * it launches the captured step, one graph, at one operator's cost. */
#include "model/model.h"


double
layer_host(const Analysis *an, const Graph *g, const Layer *l, bool bwd)
{
	const Cost *c = &l->cost;
	bool amp = precision_low(an->q.set.prec) > 0; /* autocast's casts */
	double ops;

	if ((bwd && an->q.set.forward_only) || an->q.impl.cuda_graphs)
		return 0;
	if ((an->q.impl.fused_attention && l->attn > ATTN_QK) || l->pattern == PAT_PART ||
	    layer_fused_away(an, l))
		return 0; /* one operator's call, counted at its first layer */
	if (op_info[l->op].save & S_VIEW)
		return bwd ? 0 : an->q.impl.dispatch; /* a call that launches nothing */
	if (!bwd)
		ops = 1 + (l->op == OP_BATCHNORM) + (amp ? c->cast_wn + c->cast_inn : 0);
	else
		ops = 1 + (amp ? c->cast_gradn : 0) +
		      (an->q.impl.zero_grad && an->q.set.zero < 2 && c->params > 0 ? l->nw : 0);
	return ops * an->q.impl.dispatch + library_calls(an, g, l, bwd) * an->q.impl.library_call;
}

/* The operators the optimizer's step issues per tensor operation: one
 * per tensor in torch.optim's loop or fused, one call over them all in a
 * foreach step. */
double
step_host(const Analysis *an, double arrays)
{
	const Implementation *im = &an->q.impl;
	double ops = im->step == STEP_FOREACH ? step_ops(an->q.set.opt)
		     : im->step == STEP_PER_OP ? arrays * step_ops(an->q.set.opt)
					       : arrays;

	double loops = im->step == STEP_FOREACH; /* the Python loops over the tensors */

	if (im->cuda_graphs)
		return im->dispatch; /* the step's graph launched */
	/* zero_grad(set_to_none=False) zeroes each gradient; GradScaler
	 * scales the loss, unscales the gradients (a loop over them too)
	 * and updates its scale */
	if (im->zero_grad)
		ops += im->step == STEP_FOREACH ? 1 : arrays;
	if (precision_info[an->q.set.prec].matmul == DT_FP16)
		ops += 3, loops++;
	return ops * im->dispatch + loops * arrays * im->step_tensor;
}

/* Whether the CPU waits for the GPU once an iteration, before the
 * optimizer's step: GradScaler reads found_inf (fp16), or the framework
 * always does (a loss read after backward, a communicator that
 * synchronizes its stream before the exchange). */
static bool
synced(const Analysis *an)
{
	return an->q.impl.sync == SYNC_ALWAYS ||
	       (an->q.impl.sync == SYNC_AMP && precision_info[an->q.set.prec].matmul == DT_FP16);
}

/* The two lanes: the CPU's clock and the GPU's. */
typedef struct Lanes {
	double cpu, gpu;
} Lanes;

/* The CPU issues an operator for `host` seconds; its kernels then run for
 * `gpu` once the GPU is free. */
static void
issue(Lanes *z, double host, double gpu)
{
	z->cpu += host;
	z->gpu = (z->gpu > z->cpu ? z->gpu : z->cpu) + gpu;
}

/* The forward and backward of layers first..last, scaled so that the
 * GPU's part sums to `gpu`; ln: each layer's own GPU and CPU times. */
static void
passes(int first, int last, const Lane *ln, double scale, Lanes *z)
{
	for (int i = first; i <= last; i++)
		issue(z, ln->hf[i], ln->f[i] * scale);
	for (int i = last; i >= first; i--)
		issue(z, ln->hb[i], ln->b[i] * scale);
}

void
host_lane(const Analysis *an, const Graph *g, int first, int last, const Lane *ln, double arrays,
	  Candidate *k)
{
	IterTime *t = &k->t;
	int64_t M = k->micro_batches > 1 ? k->micro_batches : 1;
	double own = 0, host = 0, busy, scale, tail, step;
	Lanes z = { 0, 0 };

	for (int i = first; i <= last; i++) {
		own += ln->f[i] + ln->b[i];
		host += ln->hf[i] + ln->hb[i];
	}
	t->dispatch = 0;
	busy = iteration_busy(t);
	/* the layers' work as the strategy priced it (their shares, their
	 * collectives and recomputation) spread over them as their own
	 * times are; the exchange after backward and the step apart */
	tail = t->grad + t->reducer + t->feed + t->bubble;
	scale = own > 0 ? (busy - tail - t->update) / ((double)M * own) : 0;
	/* FSDP's hooks and views run on the CPU each iteration, the first
	 * before the forward's first kernel */
	step = step_host(an, arrays) + fsdp_host(an, arrays);
	t->host = (double)M * host + step;
	if (an->q.sys->host_device) { /* one lane: issuing, then computing */
		t->dispatch = t->host;
	} else if (!synced(an)) { /* the CPU runs iterations ahead */
		t->dispatch = t->host > busy ? t->host - busy : 0;
	} else {
		/* from one sync point to the next: the step, then the
		 * micro-batches and what follows backward on the GPU */
		issue(&z, step, t->update);
		for (int64_t m = 0; m < M; m++)
			passes(first, last, ln, scale, &z);
		z.gpu = (z.gpu > z.cpu ? z.gpu : z.cpu) + tail;
		t->dispatch = z.gpu > busy ? z.gpu - busy : 0;
	}
}
