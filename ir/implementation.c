/* implementation.c -- the implementation's defaults, its key table and the
 * words its string keys take. */
#include "ir/implementation.h"
#include "ir/analysis.h"

#include <stdio.h>
#include <stddef.h>
#include <string.h>

static const char *capabilities_check(Implementation *im, const char **want);

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
		.master_weights = "none",   /* the model as the precision casts it */
		.step_sync = "amp",         /* GradScaler.step reads found_inf */
		.zero_partition = "tensors", /* ZeroRedundancyOptimizer */
		.pipe_checkpoint = "never", /* torch.distributed.pipelining */
		.pipe_driver = "process",   /* torch.distributed.pipelining: a rank a stage */
		/* a description that does not say what it runs restricts
		 * nothing: every option oraclec models */
		.precisions = "fp32,tf32,amp-fp16,amp-bf16,fp16,bf16,fp8",
		.zero_stages = "0,1,2,3,hybrid",
		.schedules = "gpipe,1f1b,interleaved",
		.strategies = "data,spatial,pipeline,filter,channel,df,ds,dp,dpf,dpc,dps,"
		              "tensor,dt,dpt,context,dc,dtc,dptc",
		.recompute = "none,segments,selective",
		/* builtin_impl.c's pytorch: no fusion in eager mode */
		.allreduce = "flat",        /* DDP: one NCCL all-reduce a bucket */
		.grad_group_growth = "fixed",
		.nccl_version = "2.14.3",   /* builtin_impl.c, pytorch */
	};
}

int
nccl_version_parse(const char *s)
{
	long part[3] = { 0, 0, 0 };
	int n = 0;

	if (strcmp(s, "none") == 0)
		return 0;
	/* 2.MINOR or 2.MINOR.PATCH, each part at most two digits */
	for (const char *p = s; n < 3; n++) {
		int digits = 0;
		while (*p >= '0' && *p <= '9' && digits < 3)
			part[n] = part[n] * 10 + (*p++ - '0'), digits++;
		if (!digits || digits > 2)
			return -1;
		if (!*p)
			break;
		if (*p++ != '.' || n == 2)
			return -1;
	}
	if (n < 1 || part[0] != 2)
		return -1;
	return (int)(part[0] * 10000 + part[1] * 100 + part[2]);
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
	if (!word(im->master_weights, "none", "fp32", &im->master_fp32))
		return *want = "\"none\" or \"fp32\"", "master_weights";
	if (!word(im->allreduce, "flat", "hierarchical", &im->hier_allreduce))
		return *want = "\"flat\" or \"hierarchical\"", "allreduce";
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
	/* one way of cutting the gradients into groups: grad_groups equal
	 * runs from the input's end, or runs from the output's end that
	 * grow (grad_group_tensors) */
	if ((i = one_of(im->grad_group_growth,
			(const char *[]){ "fixed", "quadratic", "cubic" })) < 0)
		return *want = "\"fixed\", \"quadratic\" or \"cubic\"", "grad_group_growth";
	im->grad_group_power = i + 1;
	if (im->grad_group_tensors < 0 || (im->grad_group_tensors > 0 && im->grad_groups > 0))
		return *want = "0 or more, and 0 where grad_groups is set", "grad_group_tensors";
	if (i > 0 && im->grad_group_tensors == 0)
		return *want = "1 or more with grad_group_growth \"quadratic\" or \"cubic\"",
		       "grad_group_tensors";
	if ((im->nccl = nccl_version_parse(im->nccl_version)) < 0)
		return *want = "\"none\" or a version of NCCL 2, \"2.MINOR\" or \"2.MINOR.PATCH\"",
		       "nccl_version";
	return capabilities_check(im, want);
}

/* The i-th word a list key takes. */
typedef const char *Namer(int i);

static const char *
prec_word(int i)
{
	return precision_name((Precision)i);
}

static const char *
zero_word(int i)
{
	return (const char *[]){ "0", "1", "2", "3", "hybrid" }[i];
}

static const char *
sched_word(int i)
{
	return schedule_name((Schedule)i);
}

static const char *
strat_word(int i)
{
	return strategy_name[i];
}

static const char *
rc_word(int i)
{
	return (const char *[]){ "segments", "selective", "none" }[i];
}

/* The comma list `list` of words among name(0) .. name(n - 1) (and
 * `none`, ignored, where `none` >= 0 names it): the bits of those it
 * leaves out into *no; false on an unknown word or an empty list. */
static bool
word_list(const char *list, Namer *name, int n, int none, unsigned *no)
{
	unsigned yes = 0;
	const char *p = list;

	if (!*p)
		return false;
	for (;;) {
		size_t len = strcspn(p, ",");
		int i;
		while (len && *p == ' ')
			p++, len--;
		for (i = 0; i < n + (none >= 0); i++) {
			const char *w = i < n ? name(i) : name(none);
			if (strlen(w) == len && strncmp(p, w, len) == 0)
				break;
		}
		if (i == n + (none >= 0))
			return false;
		if (i < n)
			yes |= 1u << i;
		if (!p[len])
			break;
		p += len + 1;
	}
	*no = ((1u << n) - 1) & ~yes;
	return true;
}

/* The words of a list, for a message: "a comma list of fp32, tf32, ..."
 * (the result lives until the next call). */
static const char *
words(Namer *name, int n, int none)
{
	static char buf[256];
	size_t len = (size_t)snprintf(buf, sizeof buf, "a comma list of");

	for (int i = 0; i < n + (none >= 0) && len < sizeof buf; i++)
		len += (size_t)snprintf(buf + len, sizeof buf - len, "%s \"%s\"",
					i ? "," : "", i < n ? name(i) : name(none));
	return buf;
}

static const char *
capabilities_check(Implementation *im, const char **want)
{
	if (!word_list(im->precisions, prec_word, PREC_COUNT, -1, &im->no_prec))
		return *want = words(prec_word, PREC_COUNT, -1), "precisions";
	if (!word_list(im->zero_stages, zero_word, 5, -1, &im->no_zero))
		return *want = words(zero_word, 5, -1), "zero_stages";
	if (!word_list(im->strategies, strat_word, STRAT_COUNT, -1, &im->no_strat))
		return *want = words(strat_word, STRAT_COUNT, -1), "strategies";
	if (!word_list(im->recompute, rc_word, 2, 2, &im->no_rc))
		return *want = words(rc_word, 2, 2), "recompute";
	/* no schedule: no pipeline either */
	if (!*im->schedules) {
		im->no_sched = (1u << SCHED_COUNT) - 1;
		for (int k = 0; k < STRAT_COUNT; k++)
			if (STRATEGY_PIPELINED(k) && !(im->no_strat >> k & 1))
				return *want = "a comma list of \"gpipe\", \"1f1b\", "
					       "\"interleaved\" (one at least where 'strategies' "
					       "lists a pipeline)",
				       "schedules";
	} else if (!word_list(im->schedules, sched_word, SCHED_COUNT, -1, &im->no_sched))
		return *want = words(sched_word, SCHED_COUNT, -1), "schedules";
	return NULL;
}

bool
impl_runs_precision(const Implementation *im, Precision p)
{
	return !(im->no_prec >> p & 1);
}

bool
impl_runs_zero(const Implementation *im, int zero, bool hybrid)
{
	return !(im->no_zero >> (hybrid ? 4 : zero) & 1);
}

bool
impl_runs_schedule(const Implementation *im, int sched)
{
	return !(im->no_sched >> sched & 1);
}

bool
impl_runs_strategy(const Implementation *im, StrategyKind k)
{
	return !(im->no_strat >> k & 1);
}

bool
impl_runs_recompute(const Implementation *im, int k_rc)
{
	return k_rc == 0 || !(im->no_rc >> (k_rc > 0 ? 0 : 1) & 1);
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

const char *
implementation_named(const Implementation *im)
{
	return !im->source || strcmp(im->source, "built-in") == 0 ? im->name : im->source;
}
