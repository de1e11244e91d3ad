/* analysis.c -- the one analysis pipeline (analysis.h): the settings'
 * defaults, the pass table and its runner.
 *
 * As in QBE's main.c, the passes run in one fixed order, each followed by
 * the IR verifier; here the order is a table, so that what each pass
 * requires and provides (passes.h, Graph.done) is checked as it runs,
 * and a run can stop after any pass (--dump-after) or run in two steps:
 * the passes on the model alone, then, once the system is read, those
 * that need it. */
#include "model/model.h"
#include "plan/analysis.h"
#include "util/clock.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

/* Defaults (documented in oraclec(1)): ImageNet-1k's 1,281,167 training
 * images when the model gives no dataset size. */
enum { DEFAULT_DATASET = 1281167 };
/* A sequence model's epoch when nothing gives it: GPT-3's 300 billion
 * training tokens (Brown et al., "Language Models are Few-Shot
 * Learners", 2020, section 2.2), the T of Narayanan et al.'s end-to-end
 * estimate (SC'21, section 5.1). */
#define DEFAULT_TOKENS 300e9
/* Megatron-LM's indexed datasets store a token id in 2 bytes for a
 * vocabulary of fewer than 65,500 ids, else 4
 * (megatron/core/datasets/indexed_dataset.py, DType.optimal_dtype,
 * NVIDIA/Megatron-LM@d98e8a64) */
enum { SMALL_VOCAB = 65500 };
/* Stored size of an ImageNet training image: ILSVRC-2012's 138 GB of JPEG
 * over its 1,281,167 images.  Used for 3-channel image inputs. */
#define IMAGENET_JPEG_BYTES 110e3

const Settings settings_default = {
#define SETTING(type, name, dflt, shown, layer, plan) .name = dflt,
#include "ir/settings.def"
#undef SETTING
};

/* --seq-len S against the model: a sequence model's own length must be
 * S; a model without a sequence input becomes one of S tokens only where
 * an input is S positions by their features ([S, H], as ODL's `as tokens`
 * declares one): its graph computes over those positions.  An input of
 * one dimension is a vector of features, one of three or more an image's
 * or a volume's channels and sides: neither is positions (an image's 3
 * channels or a GPT of another length would be priced at one length and
 * counted at another). */
bool
seq_len_fits(const Graph *g, const Settings *set)
{
	const Tensor *t = NULL;
	Loc at = { g->source, 0, 0 };
	char dims[MAX_RANK * 21];

	if (!set->seq_len)
		return true;
	if (g->seq_len && g->seq_len != set->seq_len) {
		const char *in = "";
		for (int i = 0; i < g->ninput; i++)
			if (g->tensor[g->input[i]].seq)
				in = g->tensor[g->input[i]].name;
		diag_error(at, "--seq-len %" PRId64 ": the model's sequence input '%s' is of "
			   "%" PRId64 " tokens", set->seq_len, in, g->seq_len);
		return false;
	}
	if (g->seq_len)
		return true;
	for (int i = 0; i < g->ninput; i++) {
		const Tensor *in = &g->tensor[g->input[i]];
		if (in->shape.rank != 2)
			continue;
		if (in->shape.d[0] == set->seq_len)
			return true;
		if (!t)
			t = in;
	}
	if (t) {
		diag_error(at, "--seq-len %" PRId64 ": the model has no sequence input, and no "
			   "input of %" PRId64 " positions to take as one (input '%s' begins with "
			   "%" PRId64 ")", set->seq_len, set->seq_len, t->name, t->shape.d[0]);
		return false;
	}
	t = g->ninput ? &g->tensor[g->input[0]] : NULL;
	diag_error(at, "--seq-len %" PRId64 ": the model has no sequence input, and no input of "
		   "positions by features to take as one (input '%s' is %s: %s)", set->seq_len,
		   t ? t->name : "", t ? shape_str(&t->shape, dims, sizeof dims) : "-",
		   t && t->shape.rank == 1 ? "a vector of features"
					   : "an image's or a volume's channels and sides");
	return false;
}

bool
analysis_init(Graph *g, const Settings *set)
{
	if (!seq_len_fits(g, set))
		return false;
	if (set->seq_len)
		g->seq_len = set->seq_len;
	g->as_exported = set->as_exported;
	/* only an ONNX export has a graph that differs from the one trained */
	if (set->as_exported && strcmp(g->format, "onnx") != 0)
		diag_warn((Loc){ g->source, 0, 0 }, "--as-exported applies to ONNX files; this "
			  "%s model is analysed as it is written, as without it", g->format);
	g->dropout_after = set->dropout_after;
	g->conv_bias = set->conv_bias;
	if (set->conv_bias && strcmp(g->format, "onnx") != 0)
		diag_warn((Loc){ g->source, 0, 0 }, "--conv-bias applies to ONNX files; this "
			  "%s model is analysed as it is written, as without it", g->format);
	if (set->dataset_size)
		g->dataset_size = set->dataset_size;
	return true;
}

/* What g's (first) input is as stored, when the settings do not say: an
 * RGB image of ImageNet's size or larger (3 channels, at least 64 pixels
 * high) a JPEG; a smaller one (CIFAR's 32 x 32) raw bytes; anything else
 * used as stored (docs/model.md, "Input pipeline"). */
static DataKind
data_kind(const Graph *g)
{
	const Tensor *in = g->ninput ? &g->tensor[g->input[0]] : NULL;

	if (!in || in->shape.rank != 3 || in->shape.d[0] != 3)
		return DATA_STORED;
	return in->shape.d[1] >= 64 ? DATA_JPEG : DATA_RAW;
}

/* The stored size of one sample: a sequence's s token ids at the width
 * Megatron-LM's datasets store them in (vocabulary V: 0 unknown); else
 * ImageNet's JPEG average for a JPEG, a byte per item for a raw image,
 * else the input tensor at 4 bytes per item (none without an input: ONNX
 * graphs read with the hidden --no-batch may have none). */
static double
sample_bytes(const Graph *g, DataKind k, int64_t V)
{
	double items = g->ninput ? (double)g->tensor[g->input[0]].elems : 0;

	if (g->seq_len)
		return (double)g->seq_len * (V > 0 && V < SMALL_VOCAB ? 2 : 4);
	return k == DATA_JPEG ? IMAGENET_JPEG_BYTES : k == DATA_RAW ? items : items * 4;
}

/* The samples of an epoch when the settings and the model give none: a
 * sequence model's tokens (--dataset-tokens, else DEFAULT_TOKENS) over
 * its length, at least one; else ImageNet-1k's images. */
static int64_t
default_dataset(const Graph *g, const Settings *set)
{
	double tokens = set->dataset_tokens ? (double)set->dataset_tokens : DEFAULT_TOKENS;

	if (!g->seq_len)
		return DEFAULT_DATASET;
	return tokens >= (double)g->seq_len ? (int64_t)(tokens / (double)g->seq_len) : 1;
}

/* The implementation the analysis runs: --implementation, else the one
 * the system names, else the defaults; then what the system file still
 * sets of the software's keys (dispatch, p2p_latency, staging_bw,
 * decode_bw). */
static Implementation
implementation(const Settings *set, const System *s)
{
	Implementation im = implementation_resolve(s, set->impl);

	if (set->loader_workers > 0)
		im.loader_workers = set->loader_workers;
	return im;
}

/* The peak s lacks for precision p (its key), or NULL: a GPU without
 * TF32 runs tf32 at the fp32 rate, as PyTorch does; 16-bit formats it
 * lacks are an error. */
static const char *
missing_peak(const System *s, Precision p)
{
	static const char *const key[DT_COUNT] = { "fp32", "tf32", "fp16", "bf16", "fp8" };

	return system_runs(s, p) ? NULL : key[precision_dtype(p, true)];
}

bool
analysis_setup(Analysis *an, Engine *eng, const Settings *set, const Graph *g, const System *s)
{
	int64_t dataset = set->dataset_size ? set->dataset_size
			  : set->dataset_tokens && g->seq_len ? 0
							      : g->dataset_size;
	DataKind kind = set->data != DATA_AUTO ? set->data : data_kind(g);
	const char *peak;

	if (!s)
		return false;
	if (set->dataset_tokens && !g->seq_len) {
		diag_error((Loc){ g->source, 0, 0 }, "--dataset-tokens: the model has no sequence "
			   "input to count tokens by (ODL: `as tokens`; or give its length with "
			   "--seq-len)");
		return false;
	}
	if ((peak = missing_peak(s, set->prec))) {
		/* a built-in system has no file to point at: the option is the
		 * place */
		if (strcmp(s->source, "built-in") == 0)
			diag_error(LOC_NONE, "--precision %s: %s (built-in) has no %s peak",
				   precision_name(set->prec), s->name, peak);
		else
			diag_error((Loc){ s->source, 0, 0 }, "--precision %s: system '%s' gives no "
				   "%s peak", precision_name(set->prec), s->name, peak);
		return false;
	}
	*an = (Analysis){ .q = { .sys = s, .impl = implementation(set, s), .set = *set },
			  .eng = eng };
	an->q.set.virtual_stages = set->virtual_stages > 1 ? set->virtual_stages : 1;
	an->q.set.batch_per_gpu = set->global_batch ? 0 : set->batch_per_gpu;
	graph_transformer(g, &an->tf);
	an->q.set.dataset_size = dataset ? dataset : default_dataset(g, set);
	an->q.set.sample_bytes =
		set->sample_bytes > 0 ? set->sample_bytes : sample_bytes(g, kind, an->tf.vocab);
	an->q.set.data = kind;
	if (set->recompute == RECOMPUTE_ATTENTION)
		recompute_selective(g, set->prec, &an->rc);
	else if (set->recompute != RECOMPUTE_NONE)
		recompute_plan(g, set->recompute == RECOMPUTE_FULL ? 0 : set->recompute, set->prec,
			       &an->rc);
	if (g->seq_len) {
		int redo = an->rc.k == RECOMPUTE_SELECTIVE ? TF_REDO_CORE
			   : an->rc.k                      ? TF_REDO_FULL
							   : TF_REDO_NONE;
		an->tf_flops[0] = transformer_flops(&an->tf, TF_REDO_NONE);
		an->tf_flops[1] = transformer_flops(&an->tf, redo);
	}
	return true;
}

void
analysis_report_bytes(Analysis *an, const Graph *g, bool layers, Arena *a)
{
	an->bytes = model_bytes(an, g);
	an->layer_bytes = NULL;
	an->layer_times = NULL;
	if (layers) {
		LayerBytes *b = arena_array(a, (size_t)g->nlayer + 1, sizeof *b);
		LayerTime *t = arena_array(a, (size_t)g->nlayer + 1, sizeof *t);
		const Settings *s = &an->q.set;
		double n = s->global_batch ? (double)s->global_batch / (double)s->gpus
					   : (double)s->batch_per_gpu;
		for (int i = 0; i < g->nlayer; i++) {
			const Layer *l = &g->layer[i];
			TimeSource f, w;
			b[i] = layer_bytes(an, g, i);
			t[i].time_s = layer_time_of(an, g, l, n, 1, DIM_DATA, false, true, &f) +
				      layer_time_of(an, g, l, n, 1, DIM_DATA, true, true, &w);
			t[i].src = f == TS_MODEL ? w : f;
			t[i].predicted_s = NAN;
			t[i].predicted_src = TS_MODEL;
			if (t[i].src != TS_PROFILE)
				continue;
			t[i].predicted_s =
				layer_time_of(an, g, l, n, 1, DIM_DATA, false, false, &f) +
				layer_time_of(an, g, l, n, 1, DIM_DATA, true, false, &w);
			t[i].predicted_src = f == TS_MODEL ? w : f;
		}
		an->layer_bytes = b;
		an->layer_times = t;
	}
}

/* ---- the passes ----------------------------------------------------------- */

/* One pass over the IR.  run is NULL for "parse": the frontend's graph,
 * verified and printed like a pass's. */
typedef struct Pass {
	const char *name;
	bool (*run)(Graph *g, const Analysis *an);
	unsigned requires, provides; /* PASS_* bits of Graph.done */
	bool system;                 /* needs the analysis: its system, precision */
} Pass;

static bool
training(Graph *g, const Analysis *an)
{
	return training_graph(g);
}

static bool
shape(Graph *g, const Analysis *an)
{
	return shape_infer(g);
}

static bool
cost(Graph *g, const Analysis *an)
{
	return cost_annotate(g);
}

static bool
memory(Graph *g, const Analysis *an)
{
	return memory_annotate(g);
}

/* The samples a GPU takes an iteration (a profiler's trace that does not
 * give its batch is taken at it). */
static int64_t
per_gpu(const Analysis *an)
{
	if (an->q.set.batch_per_gpu > 0)
		return an->q.set.batch_per_gpu;
	return an->q.set.gpus > 0 ? an->q.set.global_batch / an->q.set.gpus
				  : an->q.set.global_batch;
}

/* The measured times: a ParaDL table's and a CSV profile's, then a
 * profiler's trace's modules over them. */
static bool
timing(Graph *g, const Analysis *an)
{
	return timing_spread(g, an) && trace_times(g, an->q.sys, per_gpu(an));
}

/* In the order they run (passes.h says what each fills). */
static const Pass passes[] = {
	/* name      run     requires    provides     system */
	{ "parse",  NULL,   0,          0,           false },
	{ "training", training, 0,        0,           false },
	{ "shape",  shape,  0,          PASS_SHAPE,  false },
	{ "cost",   cost,   PASS_SHAPE, PASS_COST,   false },
	{ "memory", memory, PASS_SHAPE, PASS_MEMORY, false },
	{ "timing", timing, PASS_COST,  PASS_TIMING, true },
};
enum { NPASS = sizeof passes / sizeof passes[0] };

/* Whether p has run on g: what it provides is done ("parse", which
 * provides nothing, has run once any pass has). */
static bool
ran(const Graph *g, const Pass *p)
{
	return g->done && (g->done & p->provides) == p->provides;
}

/* Runs one pass with its checks; false after an input error. */
static bool
pass_run(Graph *g, const Analysis *an, const Pass *p)
{
	double t0 = clock_ms();
	bool ok;

	if ((g->done & p->requires) != p->requires)
		die("pass '%s' runs before what it requires", p->name);
	if (p->system && (!an || !an->q.sys))
		die("pass '%s' runs before the analysis is set up", p->name);
	ok = !p->run || p->run(g, an);
	graph_touch(g); /* what it changed is priced anew */
	if (!ok)
		return false;
	if ((g->done & p->provides) != p->provides)
		die("pass '%s' did not provide what it says", p->name);
	if (p->run)
		diag_verbose_note("pass %s: %.2f ms", p->name, clock_ms() - t0);
#ifdef ORACLEC_CHECKING
	if (ir_verify(g))
		die("IR invariants broken after pass '%s'", p->name);
#endif
	return true;
}

bool
passes_run(Graph *g, const Analysis *an, unsigned want, const char *dump_after)
{
	for (int i = 0; i < NPASS && (g->done & want) != want; i++) {
		if (ran(g, &passes[i]))
			continue;
		if (!pass_run(g, an, &passes[i]))
			return false;
		if (dump_after && strcmp(dump_after, passes[i].name) == 0) {
			ir_print(g, stdout);
			return true;
		}
	}
	if ((g->done & want) != want)
		die("no pass provides what is wanted (%#x)", want);
	return true;
}

const char *
pass_dumpable_name(int i)
{
	for (int k = 0; k < NPASS; k++)
		if (!passes[k].system && i-- == 0)
			return passes[k].name;
	return NULL;
}

bool
pass_dumpable(const char *name)
{
	for (int i = 0; i < NPASS; i++)
		if (strcmp(passes[i].name, name) == 0)
			return !passes[i].system;
	return false;
}

Settings
analysis_run_settings(const Settings *set, const Measured *r)
{
	Settings rs = *set;

	rs.gpus = r->gpus;
	rs.global_batch = r->global_batch;
	rs.dataset_size = r->dataset_size;
	if (r->has_prec)
		rs.prec = r->prec;
	if (!set->impl && r->implementation)
		rs.impl = r->implementation;
	return rs;
}

bool
analysis_measured(Analysis *an, Engine *eng, const Settings *set, Graph *g, const System *s,
		  const Measured *r)
{
	Settings rs = analysis_run_settings(set, r);
	const char *peak;

	if (s && r->has_prec && (peak = missing_peak(s, r->prec))) {
		diag_error(r->prec_loc, "precision %s: system '%s' gives no %s peak",
			   precision_name(r->prec), s->name, peak);
		return false;
	}
	return analysis_setup(an, eng, &rs, g, s) && passes_run(g, an, PASS_TIMING, NULL);
}

void
analysis_row(CalibRow *row, const Graph *g, Analysis *an, const Measured *r)
{
	row->g = g;
	row->an = an;
	row->kind = r->kind;
	memcpy(row->grid, r->grid, sizeof r->grid);
	row->measured = r->measured;
	row->predicted = NAN;
}
