/* main.c -- the oraclec driver: options, the pipeline, exit statuses.
 *
 * The only file that sees every layer.  The pipeline reads top to bottom:
 * frontend -> shape -> cost -> memory -> backend.  Exit status: 0 the
 * analysis ran, 1 the input is wrong (diagnostics on stderr), 2 usage. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backends.h"
#include "frontend/frontend.h"
#include "ir/ir.h"
#include "passes/passes.h"
#include "util/files.h"
#include "util/map.h"
#include "util/output.h"

enum { EXIT_OK = 0, EXIT_INPUT = 1, EXIT_USAGE = 2 };

enum {
	OPT_LAYERS = CHAR_MAX + 1,
	OPT_PRECISION,
	OPT_DATASET,
	OPT_DUMP,
	OPT_INPUT_SHAPE,
	OPT_STRICT,
	OPT_LIST_SYSTEMS,
	OPT_STRATEGIES,
	OPT_OPTIMIZER,
	OPT_SPATIAL_SPLIT,
	OPT_SAMPLE_BYTES,
	OPT_MODELS,
	OPT_GRID,
	OPT_NO_BATCH,      /* hidden: for the ONNX conformance test */
	OPT_PRINT_OUTPUTS, /* hidden */
	OPT_TENSOR_DIMS,   /* hidden */
};

/* Defaults (documented in oraclec(1)): 32 samples per GPU, the common
 * per-GPU batch of ImageNet CNN training; SGD with momentum, the usual
 * optimizer for CNNs; ImageNet-1k's 1,281,167 training images. */
enum { DEFAULT_BATCH_PER_GPU = 32, DEFAULT_DATASET = 1281167 };
/* Stored size of an ImageNet training image: ILSVRC-2012's 138 GB of JPEG
 * over its 1,281,167 images.  Used for 3-channel image inputs. */
#define IMAGENET_JPEG_BYTES 110e3

typedef struct Options {
	const char *model;
	const char *output;
	const Backend *backend;
	const char *dump_after; /* a pass name, or NULL */
	const char *tensor_dims;/* --print-tensor-dims FILE, or NULL */
	int64_t gpus;
	int64_t dataset_size;   /* 0: the model's, if any */
	int elem_bytes;
	Shape input_shape;      /* rank 0: from the model */
	OnnxOptions onnx;
	ReportOpts report;
	const char *system;
	Precision prec;
	Optimizer opt;
	int64_t batch_per_gpu, global_batch;
	double sample_bytes;    /* 0: from the input's kind */
	StrategyOpts strat;
	bool validate;          /* `oraclec validate MEASURED.csv` */
	int64_t grid_gpus;      /* --grid: the product of its dimensions */
	const char *models;     /* validate: where MODEL.odl / MODEL.onnx live */
} Options;

static const struct option longopts[] = {
	{ "gpus",         required_argument, NULL, 'g' },
	{ "format",       required_argument, NULL, 'f' },
	{ "output",       required_argument, NULL, 'o' },
	{ "layers",       no_argument,       NULL, OPT_LAYERS },
	{ "precision",    required_argument, NULL, OPT_PRECISION },
	{ "dataset-size", required_argument, NULL, OPT_DATASET },
	{ "dump-after",   required_argument, NULL, OPT_DUMP },
	{ "input-shape",  required_argument, NULL, OPT_INPUT_SHAPE },
	{ "strict",       no_argument,       NULL, OPT_STRICT },
	{ "system",       required_argument, NULL, 's' },
	{ "list-systems", no_argument,       NULL, OPT_LIST_SYSTEMS },
	{ "batch-per-gpu", required_argument, NULL, 'b' },
	{ "global-batch", required_argument, NULL, 'B' },
	{ "strategies",   required_argument, NULL, OPT_STRATEGIES },
	{ "optimizer",    required_argument, NULL, OPT_OPTIMIZER },
	{ "spatial-split", required_argument, NULL, OPT_SPATIAL_SPLIT },
	{ "sample-bytes", required_argument, NULL, OPT_SAMPLE_BYTES },
	{ "models",       required_argument, NULL, OPT_MODELS },
	{ "grid",         required_argument, NULL, OPT_GRID },
	/* Hidden options for tests/onnx-conformance.sh: each graph input is
	 * one whole sample (an implicit batch of 1 outside it); print the
	 * graph outputs' full shapes instead of a report; print a serialized
	 * TensorProto's dims. */
	{ "no-batch",     no_argument,       NULL, OPT_NO_BATCH },
	{ "print-outputs", no_argument,      NULL, OPT_PRINT_OUTPUTS },
	{ "print-tensor-dims", required_argument, NULL, OPT_TENSOR_DIMS },
	{ "quiet",        no_argument,       NULL, 'q' },
	{ "verbose",      no_argument,       NULL, 'v' },
	{ "help",         no_argument,       NULL, 'h' },
	{ "version",      no_argument,       NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

static void
usage(FILE *f)
{
	fprintf(f,
		"Usage: %s [options] MODEL\n"
		"       %s validate [options] MEASURED.csv\n"
		"\n"
		"Analyse a neural network for distributed training: layers, parameters,\n"
		"FLOPs and activation memory per sample.  MODEL is an ONNX file (.onnx)\n"
		"or an ODL file (.odl).\n"
		"\n"
		"Options:\n"
		"  -g, --gpus N             GPUs to plan for (default 1)\n"
		"  -f, --format FMT         report format: text, json, csv (default text)\n"
		"  -o, --output FILE        write the report to FILE (atomically)\n"
		"      --layers             include the per-layer table\n"
		"      --precision P        fp32, fp16 or bf16: bytes per item (default fp32)\n"
		"      --dataset-size D     samples per epoch (default: the model's)\n"
		"  -s, --system NAME|FILE   the cluster: a built-in name, an ODL file with a\n"
		"                           system block, or a ParaDL .plat (default abci)\n"
		"      --list-systems       print the built-in systems and exit\n"
		"  -b, --batch-per-gpu N    weak scaling: samples per GPU (default 32)\n"
		"  -B, --global-batch N     strong scaling: a fixed global batch\n"
		"      --strategies LIST    comma list of data,spatial,pipeline,filter,\n"
		"                           channel,df,ds (default all)\n"
		"      --grid DIM=N[,...]   analyse only this process grid, e.g. data=256,spatial=4\n"
		"                           (dimensions data, spatial, pipeline, filter,\n"
		"                           channel; their product is the GPU count)\n"
		"      --optimizer OPT      sgd, momentum or adam (default momentum)\n"
		"      --spatial-split S    auto (the best split point) or all (every layer\n"
		"                           with spatial extent, as ParaDL's runs)\n"
		"      --sample-bytes N     stored bytes of one training sample (default:\n"
		"                           110000 for images, else the input's size)\n"
		"      --input-shape DIMS   per-sample input shape where the model leaves it\n"
		"                           open, e.g. 3x224x224\n"
		"      --strict             an operator of unknown cost is an error\n"
		"      --dump-after PASS    print the IR after PASS (parse, shape, cost,\n"
		"                           memory) instead of a report\n"
		"  -q, --quiet              no warnings or notes\n"
		"  -v, --verbose            more diagnostics\n"
		"  -h, --help               display this help and exit\n"
		"  -V, --version            output version information and exit\n"
		"\n"
		"Exit status: 0 analysed, 1 bad input, 2 usage error.\n"
		"validate predicts every measured run of the CSV (columns as in the\n"
		"calibration set) and prints the accuracy 1 - |p - m| / m; --models DIR\n"
		"says where MODEL.odl or MODEL.onnx are (default examples).\n"
		"See oraclec(1) for the description language and the JSON keys.\n",
		progname, progname);
}

static _Noreturn void
usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "%s: ", progname);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry '%s --help' for more information.\n", progname);
	exit(EXIT_USAGE);
}

static _Noreturn void usage_error(const char *fmt, const char *arg);

/* "data,df" -> the bits of those strategies */
static unsigned
strategy_mask(const char *list)
{
	unsigned mask = 0;
	char buf[256], *tok, *save = NULL;

	snprintf(buf, sizeof buf, "%s", list);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int k = 0;
		while (k < STRAT_COUNT && strcmp(strategy_name[k], tok) != 0)
			k++;
		if (k == STRAT_COUNT)
			usage_error("unknown strategy '%s' (data, spatial, pipeline, filter, "
				    "channel, df, ds)", tok);
		mask |= 1u << k;
	}
	if (!mask)
		usage_error("no strategy in '%s'", list);
	return mask;
}

static int64_t number(const char *s, const char *opt, int64_t max);

/* --grid data=64,spatial=4: the strategy its dimensions make, and the GPU
 * count their product gives. */
static void
grid_option(const char *text, Options *o)
{
	static const struct { unsigned dims; StrategyKind kind; } shapes[] = {
		{ 1u << DIM_DATA, STRAT_DATA },
		{ 1u << DIM_SPATIAL, STRAT_SPATIAL },
		{ 1u << DIM_PIPELINE, STRAT_PIPELINE },
		{ 1u << DIM_FILTER, STRAT_FILTER },
		{ 1u << DIM_CHANNEL, STRAT_CHANNEL },
		{ (1u << DIM_DATA) | (1u << DIM_FILTER), STRAT_DF },
		{ (1u << DIM_DATA) | (1u << DIM_SPATIAL), STRAT_DS },
	};
	char buf[256], *tok, *save = NULL;
	unsigned dims = 0;
	int64_t p = 1;

	snprintf(buf, sizeof buf, "%s", text);
	memset(o->strat.grid, 0, sizeof o->strat.grid);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		int d = 0;
		if (!eq)
			usage_error("bad --grid '%s' (e.g. data=256,spatial=4)", text);
		*eq = '\0';
		while (d < DIM_COUNT && strcmp(grid_dim_name[d], tok) != 0)
			d++;
		if (d == DIM_COUNT || (dims & (1u << d)))
			usage_error("bad --grid '%s' (e.g. data=256,spatial=4)", text);
		o->strat.grid[d] = number(eq + 1, "--grid", (int64_t)1 << 24);
		dims |= 1u << d;
		p *= o->strat.grid[d];
		if (p > (int64_t)1 << 24)
			usage_error("--grid '%s' has too many GPUs", text);
	}
	for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
		if (shapes[i].dims == dims) {
			o->strat.forced = true;
			o->strat.kind = shapes[i].kind;
			o->grid_gpus = p;
			return;
		}
	usage_error("--grid '%s' is not a strategy's grid (data, spatial, pipeline, filter, "
		    "channel, data+filter, data+spatial)", text);
}

/* Exit status after writing to stdout: a full disk is an error. */
static int
flush_stdout(void)
{
	if (fflush(stdout) == 0 && !ferror(stdout))
		return EXIT_OK;
	diag_error((Loc){ "<stdout>", 0, 0 }, "write failed: %s", strerror(errno ? errno : EIO));
	return EXIT_INPUT;
}

static int64_t
number(const char *s, const char *opt, int64_t max)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < 1 || v > max) {
		fprintf(stderr, "%s: invalid value '%s' for %s (expected 1 to %" PRId64 ")\n",
			progname, s, opt, max);
		fprintf(stderr, "Try '%s --help' for more information.\n", progname);
		exit(EXIT_USAGE);
	}
	return v;
}

/* "3x224x224" -> shape; exits with a usage error when malformed */
static void
dims(const char *s, Shape *out)
{
	const char *p = s;

	out->rank = 0;
	while (*p) {
		char *end;
		long long v;
		errno = 0;
		v = strtoll(p, &end, 10);
		if (errno || end == p || v < 1 || v > MAX_DIM || out->rank == MAX_RANK ||
		    (*end && *end != 'x') || (*end == 'x' && !end[1]))
			usage_error("invalid shape '%s' for --input-shape (e.g. 3x224x224)", s);
		out->d[out->rank++] = v;
		p = *end ? end + 1 : end;
	}
	if (!out->rank)
		usage_error("invalid shape '%s' for --input-shape (e.g. 3x224x224)", s);
}

static void
parse_options(int argc, char **argv, Options *o)
{
	int c;

	*o = (Options){ .gpus = 1, .elem_bytes = 4, .backend = backend_find("text"),
			.system = default_system, .opt = OPT_MOMENTUM,
			.batch_per_gpu = DEFAULT_BATCH_PER_GPU,
			.strat = { .mask = (1u << STRAT_COUNT) - 1, .spatial_split = SPLIT_AUTO } };
	if (argc > 1 && strcmp(argv[1], "validate") == 0) {
		o->validate = true;
		/* validation models the runs as measured: ParaDL's spatial runs
		 * split every layer with spatial extent (its .lc masks) */
		o->strat.spatial_split = SPLIT_ALL;
		o->models = "examples";
		argv[1] = argv[0];
		argc--, argv++;
	}
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":g:f:o:s:b:B:qvhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'g': o->gpus = number(optarg, "--gpus", (int64_t)1 << 24); break;
		case 'f':
			if (!(o->backend = backend_find(optarg)))
				usage_error("unknown format '%s' (text, json, csv)", optarg);
			break;
		case 'o': o->output = optarg; break;
		case OPT_LAYERS: o->report.layers = true; break;
		case OPT_PRECISION:
			if (strcmp(optarg, "fp32") == 0)
				o->elem_bytes = 4, o->prec = PREC_FP32;
			else if (strcmp(optarg, "fp16") == 0)
				o->elem_bytes = 2, o->prec = PREC_FP16;
			else if (strcmp(optarg, "bf16") == 0)
				o->elem_bytes = 2, o->prec = PREC_BF16;
			else
				usage_error("unknown precision '%s' (fp32, fp16, bf16)", optarg);
			break;
		case OPT_DATASET:
			o->dataset_size = number(optarg, "--dataset-size", (int64_t)1 << 50);
			break;
		case OPT_DUMP:
			if (strcmp(optarg, "parse") && strcmp(optarg, "shape") &&
			    strcmp(optarg, "cost") && strcmp(optarg, "memory"))
				usage_error("unknown pass '%s' (parse, shape, cost, memory)", optarg);
			o->dump_after = optarg;
			break;
		case OPT_INPUT_SHAPE:
			dims(optarg, &o->input_shape);
			o->onnx.input_shape = &o->input_shape;
			break;
		case OPT_STRICT: o->onnx.strict = true; break;
		case 's': o->system = optarg; break;
		case OPT_LIST_SYSTEMS:
			system_list(stdout);
			exit(flush_stdout());
		case 'b': o->batch_per_gpu = number(optarg, "--batch-per-gpu", (int64_t)1 << 30); break;
		case 'B': o->global_batch = number(optarg, "--global-batch", (int64_t)1 << 40); break;
		case OPT_STRATEGIES: o->strat.mask = strategy_mask(optarg); break;
		case OPT_OPTIMIZER:
			if (strcmp(optarg, "sgd") == 0)
				o->opt = OPT_SGD;
			else if (strcmp(optarg, "momentum") == 0)
				o->opt = OPT_MOMENTUM;
			else if (strcmp(optarg, "adam") == 0)
				o->opt = OPT_ADAM;
			else
				usage_error("unknown optimizer '%s' (sgd, momentum, adam)", optarg);
			break;
		case OPT_SPATIAL_SPLIT:
			if (strcmp(optarg, "auto") == 0)
				o->strat.spatial_split = SPLIT_AUTO;
			else if (strcmp(optarg, "all") == 0)
				o->strat.spatial_split = SPLIT_ALL;
			else
				usage_error("unknown spatial split '%s' (auto, all)", optarg);
			break;
		case OPT_MODELS: o->models = optarg; break;
		case OPT_GRID: grid_option(optarg, o); break;
		case OPT_SAMPLE_BYTES:
			o->sample_bytes = (double)number(optarg, "--sample-bytes", (int64_t)1 << 40);
			break;
		case OPT_NO_BATCH: o->onnx.nobatch = true; break;
		case OPT_PRINT_OUTPUTS: o->onnx.print_outputs = stdout; break;
		case OPT_TENSOR_DIMS: o->tensor_dims = optarg; return;
		case 'q': diag_quiet = 1; break;
		case 'v': break;
		case 'h': usage(stdout); exit(flush_stdout());
		case 'V':
			printf("%s %s\n", PACKAGE_NAME, PACKAGE_VERSION);
			exit(flush_stdout());
		case ':': usage_error("option '%s' requires an argument", argv[optind - 1]);
		default: usage_error("unrecognized option '%s'", argv[optind - 1]);
		}
	}
	if (optind == argc)
		usage_error("%s", o->validate ? "no measured-runs CSV given" : "no model file given");
	if (optind + 1 < argc)
		usage_error("more than one model file given ('%s')", argv[optind + 1]);
	o->model = argv[optind];
	if (o->strat.forced)
		o->gpus = o->grid_gpus; /* the grid says how many */
}

/* Runs one pass, then (in checking builds) the IR verifier. */
static bool
run(Graph *g, bool (*pass)(Graph *), const char *name, const Options *o)
{
	if (pass && !pass(g))
		return false;
#ifdef ORACLEC_CHECKING
	if (ir_verify(g))
		die("IR invariants broken after pass '%s'", name);
#endif
	if (o->dump_after && strcmp(o->dump_after, name) == 0) {
		ir_print(g, stdout);
		return true;
	}
	return true;
}

/* The stored size of one sample: ImageNet's JPEG average for 3-channel
 * images, else the input tensor at 4 bytes per item. */
static double
sample_bytes(const Graph *g)
{
	const Tensor *in = &g->tensor[g->input[0]];

	if (in->shape.rank == 3 && in->shape.d[0] == 3 && in->shape.d[1] >= 32)
		return IMAGENET_JPEG_BYTES;
	return (double)in->elems * 4;
}

static bool
setup_analysis(const Options *o, const Graph *g, Analysis *an, Arena *a, FileList *files)
{
	const System *s = system_load(o->system, a, files);

	if (!s)
		return false;
	if (s->peak[o->prec] <= 0) {
		diag_error((Loc){ s->source, 0, 0 }, "system '%s' gives no peak for %s",
			   s->name, precision_name(o->prec));
		return false;
	}
	an->sys = s;
	an->prec = o->prec;
	an->opt = o->opt;
	an->gpus = o->gpus;
	an->global_batch = o->global_batch;
	an->batch_per_gpu = o->global_batch ? 0 : o->batch_per_gpu;
	an->dataset_size = g->dataset_size ? g->dataset_size : DEFAULT_DATASET;
	an->sample_bytes = o->sample_bytes > 0 ? o->sample_bytes : sample_bytes(g);
	an->decode = sample_bytes(g) == IMAGENET_JPEG_BYTES; /* an image input */
	return true;
}

static int
analyse(const Options *o, Arena *a, FileList *files)
{
	OutFile out;
	Graph *g = frontend_load(o->model, a, files, &o->onnx);
	Analysis an = { 0 };
	bool ok;

	if (!g)
		return EXIT_INPUT;
	if (o->onnx.print_outputs)
		return flush_stdout();
	g->elem_bytes = o->elem_bytes;
	if (o->dataset_size)
		g->dataset_size = o->dataset_size;
	if (!run(g, NULL, "parse", o) || !run(g, shape_infer, "shape", o) ||
	    !run(g, cost_annotate, "cost", o) || !run(g, memory_annotate, "memory", o))
		return EXIT_INPUT;
	if (o->dump_after)
		return flush_stdout();
	if (!setup_analysis(o, g, &an, a, files) || !strategies_run(g, &an, &o->strat))
		return EXIT_INPUT;
	if (!out_open(&out, o->output))
		return EXIT_INPUT;
	ok = o->backend->emit(g, &an, &o->report, out.f);
	if (!ok) {
		out_abort(&out);
		diag_error((Loc){ o->output ? o->output : "<stdout>", 0, 0 }, "write failed");
		return EXIT_INPUT;
	}
	return out_commit(&out) ? EXIT_OK : EXIT_INPUT;
}

/* The model of a measured run: MODELS/<name>.odl, else .onnx, loaded and
 * analysed once per name. */
static Graph *
validation_model(const Options *o, Map *cache, const char *name, Arena *a, FileList *files,
		 Loc where)
{
	Graph *g = map_get(cache, name);
	const char *path;
	FILE *f;

	if (g)
		return g;
	path = arena_printf(a, "%s/%s.odl", o->models, name);
	if (!(f = fopen(path, "r")))
		path = arena_printf(a, "%s/%s.onnx", o->models, name);
	else
		fclose(f);
	if (!(f = fopen(path, "r"))) {
		diag_error(where, "no model '%s' in '%s' (looked for %s.odl and %s.onnx)", name,
			   o->models, name, name);
		return NULL;
	}
	fclose(f);
	g = frontend_load(path, a, files, &o->onnx);
	if (!g || !shape_infer(g) || !cost_annotate(g) || !memory_annotate(g))
		return NULL;
	g->elem_bytes = o->elem_bytes;
	map_put(cache, name, g);
	return g;
}

static int
validate(const Options *o, Arena *a, FileList *files)
{
	Validation v = { 0 };
	Map cache;
	OutFile out;
	bool ok;

	map_init(&cache, a);
	if (!(v.row = measured_load(o->model, a, files, &v.nrow)))
		return EXIT_INPUT;
	for (int i = 0; i < v.nrow; i++) {
		Measured *r = &v.row[i];
		Graph *g = validation_model(o, &cache, r->model, a, files, r->loc);
		Analysis an = { 0 };
		Candidate k;
		Options ro = *o;
		if (!g)
			return EXIT_INPUT;
		ro.gpus = r->gpus;
		ro.global_batch = r->global_batch;
		g->dataset_size = r->dataset_size;
		if (!setup_analysis(&ro, g, &an, a, files))
			return EXIT_INPUT;
		strategy_predict(g, &an, &o->strat, r->kind, r->grid, &k);
		r->predicted = k.computable ? k.t.total : NAN;
		r->note = k.computable ? k.bottleneck : k.reason;
	}
	validation_score(&v);
	if (!out_open(&out, o->output))
		return EXIT_INPUT;
	ok = validation_emit(&v, o->backend->name, out.f);
	if (!ok) {
		out_abort(&out);
		return EXIT_INPUT;
	}
	return out_commit(&out) ? EXIT_OK : EXIT_INPUT;
}

int
main(int argc, char **argv)
{
	Options o;
	Arena arena;
	FileList files = { 0 };
	int status;
	const char *slash = strrchr(argv[0] ? argv[0] : "", '/');

	progname = slash ? slash + 1 : (argv[0] && *argv[0] ? argv[0] : "oraclec");
	parse_options(argc, argv, &o);
	if (o.tensor_dims)
		return onnx_print_tensor_dims(o.tensor_dims, stdout) ? flush_stdout() : EXIT_INPUT;
	arena_init(&arena);
	status = o.validate ? validate(&o, &arena, &files) : analyse(&o, &arena, &files);
	arena_free(&arena);
	files_free(&files);
	return status;
}
