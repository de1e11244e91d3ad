/* implementation.c -- the implementation's defaults, its key table and the
 * words its string keys take. */
#include "ir/implementation.h"

#include <stddef.h>
#include <string.h>

void
implementation_defaults(Implementation *im)
{
	*im = (Implementation){
		.base = "",
		.framework = "eager framework on NCCL",
		.dispatch = 10e-6,         /* PyTorch eager: per-operator CPU cost */
		.library_call = 38e-6,     /* builtin_impl.c, pytorch */
		.step_tensor = 0.7e-6,     /* tools/host_costs.py */
		.transport = "device",
		.send_latency = 10e-6,     /* NCCL send/recv */
		.staging_bw = 12e9,        /* PCIe Gen3 x16, pinned copies */
		.halo = "pairwise",
		.strips = "exact",
		.after_gather = "split",
		.model_loader = "process",
		.loader_workers = 16,      /* torchvision references/classification: -j 16 */
		.decode_bw = 49e6,         /* tools/measure_loader.py, "jpeg" */
		.raw_sample = 62e-6,       /* tools/measure_loader.py, "raw" */
		.overlap_grad = true,
		.bucket = 25e6,            /* DDP's bucket_cap_mb = 25 */
		.grad_copies = 2,          /* DDP's reducer: into the bucket, and back */
		.broadcast_buffers = true, /* DDP(broadcast_buffers=True) */
		.depthwise = "aten",       /* PyTorch's convolution selector */
		.conv_tf32 = true,
		.attention = "eager",       /* PyTorch 1.x: MultiheadAttention's operators */
		.nchw_transposes = "each-pass", /* cuDNN 8 */
		.conv_search = "benchmark", /* cudnn.benchmark = True in the references */
		.optimizer_step = "per-op", /* torch.optim's for-loop (PyTorch 1.x) */
		.zero_grad = true,          /* zero_grad(set_to_none=False), 1.x */
		.step_sync = "amp",         /* GradScaler.step reads found_inf */
		.zero_partition = "tensors", /* ZeroRedundancyOptimizer */
		.pipe_checkpoint = "never", /* torch.distributed.pipelining */
		.pipe_driver = "process",   /* torch.distributed.pipelining: a rank a stage */
	};
}

/* Whether v is w0 (*flag false) or w1 (*flag true). */
static bool
word(const char *v, const char *w0, const char *w1, bool *flag)
{
	if (strcmp(v, w0) == 0 || strcmp(v, w1) == 0) {
		*flag = strcmp(v, w1) == 0;
		return true;
	}
	return false;
}

/* The index of v among three words, or -1. */
static int
one_of(const char *v, const char *const w[3])
{
	for (int i = 0; i < 3; i++)
		if (strcmp(v, w[i]) == 0)
			return i;
	return -1;
}

const char *
implementation_check(Implementation *im, const char **want)
{
	int i;

	if (!word(im->transport, "device", "host", &im->staged))
		return *want = "\"device\" or \"host\"", "transport";
	if (!word(im->halo, "pairwise", "chain", &im->chain))
		return *want = "\"pairwise\" or \"chain\"", "halo";
	if (!word(im->strips, "exact", "halo-rows", &im->halo_rows))
		return *want = "\"exact\" or \"halo-rows\"", "strips";
	if (!word(im->after_gather, "split", "replicated", &im->replicated))
		return *want = "\"split\" or \"replicated\"", "after_gather";
	if (!word(im->model_loader, "process", "node", &im->node_loader))
		return *want = "\"process\" or \"node\"", "model_loader";
	if (!word(im->depthwise, "cudnn", "aten", &im->aten_depthwise))
		return *want = "\"cudnn\" or \"aten\"", "depthwise";
	/* in the order of the enums STEP_*, SYNC_* and CKPT_* */
	if ((i = one_of(im->optimizer_step, (const char *[]){ "fused", "per-op", "foreach" })) < 0)
		return *want = "\"fused\", \"per-op\" or \"foreach\"", "optimizer_step";
	im->step = i;
	if (!word(im->nchw_transposes, "each-pass", "once", &im->transposes_once))
		return *want = "\"each-pass\" or \"once\"", "nchw_transposes";
	if (!word(im->conv_search, "heuristic", "benchmark", &im->conv_benchmark))
		return *want = "\"heuristic\" or \"benchmark\"", "conv_search";
	if (!word(im->attention, "eager", "fused", &im->fused_attention))
		return *want = "\"eager\" or \"fused\"", "attention";
	if (!word(im->zero_partition, "tensors", "flat", &im->flat_zero))
		return *want = "\"tensors\" or \"flat\"", "zero_partition";
	if (!word(im->pipe_driver, "process", "threads", &im->pipe_threads))
		return *want = "\"process\" or \"threads\"", "pipe_driver";
	if ((i = one_of(im->step_sync, (const char *[]){ "never", "amp", "always" })) < 0)
		return *want = "\"never\", \"amp\" or \"always\"", "step_sync";
	im->sync = i;
	if ((i = one_of(im->pipe_checkpoint,
			(const char *[]){ "never", "except-last", "always" })) < 0)
		return *want = "\"never\", \"except-last\" or \"always\"", "pipe_checkpoint";
	im->ckpt = i;
	if (im->loader_workers < 1 || im->loader_workers > MAX_LOADER_WORKERS)
		return *want = "1 to 1048576", "loader_workers";
	if (im->grad_copies < 0 || im->grad_copies > 2)
		return *want = "0, 1 or 2", "grad_copies";
	return NULL;
}

Implementation
implementation_resolve(const System *s, const Implementation *chosen)
{
	Implementation im;

	if (chosen)
		im = *chosen;
	else if (s->impl)
		im = *s->impl;
	else {
		implementation_defaults(&im);
		im.name = "default";
		im.source = "built-in";
		implementation_check(&im, &(const char *){ NULL });
	}
	implementation_override(&im, s);
	return im;
}

Implementation
implementation_for(const System *s)
{
	return implementation_resolve(s, NULL);
}

void
implementation_override(Implementation *im, const System *s)
{
	if (s->dispatch >= 0)
		im->dispatch = s->dispatch;
	if (s->p2p_lat >= 0)
		im->send_latency = s->p2p_lat;
	if (s->staging_bw >= 0)
		im->staging_bw = s->staging_bw;
	if (s->decode_bw >= 0)
		im->decode_bw = s->decode_bw;
}

#define IMPLKEY(name, type, unit, field, range, json) \
	{ name, type, unit, offsetof(Implementation, field), false, range, json, SJ_SYSTEM },
const SysKey impl_keys[NIMPL_KEYS] = {
#include "ir/implkeys.def"
};
#undef IMPLKEY
