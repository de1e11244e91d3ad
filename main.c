/* main.c -- the oraclec driver: options, the pipeline, exit statuses.
 *
 * The only file that sees every layer.  Each mode (analyse, validate,
 * calibrate) reads top to bottom: frontend -> the passes and the analysis
 * settings (plan/analysis.h, one pipeline for all) -> strategies ->
 * backend.  Exit status: 0 the analysis ran, 1 the input is wrong
 * (diagnostics on stderr), 2 usage. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "backends/backends.h"
#include "backends/charts.h"
#include "frontend/frontend.h"
#include "ir/ir.h"
#include "plan/analysis.h"
#include "util/files.h"
#include "util/map.h"
#include "util/clock.h"
#include "util/escape.h"
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
	OPT_IMPLEMENTATION,
	OPT_LIST_IMPLEMENTATIONS,
	OPT_LOADER_WORKERS,
	OPT_DATA,
	OPT_FORWARD_ONLY,
	OPT_ZERO,
	OPT_FSDP,
	OPT_SEARCH_TIME,
	OPT_MICRO_BATCHES,
	OPT_PLOT,
	OPT_SEARCH,
	OPT_PER_LAYER,
	OPT_RECOMPUTE,
	OPT_STRATEGIES,
	OPT_OPTIMIZER,
	OPT_SPATIAL_SPLIT,
	OPT_SAMPLE_BYTES,
	OPT_MODELS,
	OPT_GRID,
	OPT_COST_MODEL,
	OPT_DEPS,       /* -MD */
	OPT_DEPS_ONLY,  /* -M */
	OPT_DEP_FILE,   /* -MF */
	OPT_DEP_TARGET, /* -MT */
	OPT_DEP_PHONY,  /* -MP */
	OPT_PROFILE,
	OPT_SWEEP,
	OPT_AS_EXPORTED,
	OPT_CHANNELS_LAST,
	OPT_DROPOUT,
	OPT_SCHEDULE,
	OPT_NESTING,
	OPT_PLAN,
	OPT_MAX_BATCH,
	OPT_NO_BATCH,      /* hidden: for the ONNX conformance test */
	OPT_PRINT_OUTPUTS, /* hidden */
	OPT_TENSOR_DIMS,   /* hidden */
};

typedef struct Options {
	const char *model;
	const char *output;
	const Backend *backend;
	const PlanKind *plan;   /* --plan: a plan instead of a report */
	bool format_given;
	const char *dump_after; /* a pass name, or NULL */
	const char *tensor_dims;/* --print-tensor-dims FILE, or NULL */
	Shape input_shape;      /* rank 0: from the model */
	OnnxOptions onnx;
	ReportOpts report;
	const char *system;
	const char *implementation; /* --implementation, or NULL */
	Settings set;           /* precision, optimizer, GPUs, batch, dataset */
	StrategyOpts strat;
	bool validate;          /* `oraclec validate MEASURED.csv` (or calibrate) */
	bool calibrate;         /* `oraclec calibrate MEASURED.csv -o SYSTEM.odl` */
	bool deps, deps_only, dep_phony; /* -MD, -M, -MP */
	const char *dep_file, *dep_target; /* -MF, -MT */
	int64_t grid_gpus;      /* --grid: the product of its dimensions */
	bool gpus_given;        /* -g/--gpus was given */
	bool fsdp;              /* --fsdp was given */
	const char *models;     /* validate: where MODEL.odl / MODEL.onnx live */
	const char *profile;    /* --profile: measured layer times (CSV) */
	bool sweep;             /* --sweep: also 1, 2, 4, ... GPUs up to gpus */
	bool search;            /* --search */
	bool per_layer;         /* --per-layer */
	bool max_batch;         /* --max-batch */
	double search_time;     /* --search-time MS, in seconds; 0 none */
	SearchFix fix;          /* what the options fix for --search */
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
	{ "implementation", required_argument, NULL, OPT_IMPLEMENTATION },
	{ "list-implementations", no_argument, NULL, OPT_LIST_IMPLEMENTATIONS },
	{ "loader-workers", required_argument, NULL, OPT_LOADER_WORKERS },
	{ "data",         required_argument, NULL, OPT_DATA },
	{ "forward-only", no_argument,       NULL, OPT_FORWARD_ONLY },
	{ "zero",         required_argument, NULL, OPT_ZERO },
	{ "fsdp",         required_argument, NULL, OPT_FSDP },
	{ "search-time",  required_argument, NULL, OPT_SEARCH_TIME },
	{ "micro-batches", required_argument, NULL, OPT_MICRO_BATCHES },
	{ "plot",         required_argument, NULL, OPT_PLOT },
	{ "search",       no_argument,       NULL, OPT_SEARCH },
	{ "per-layer",    no_argument,       NULL, OPT_PER_LAYER },
	{ "recompute",    required_argument, NULL, OPT_RECOMPUTE },
	{ "batch-per-gpu", required_argument, NULL, 'b' },
	{ "global-batch", required_argument, NULL, 'B' },
	{ "strategies",   required_argument, NULL, OPT_STRATEGIES },
	{ "optimizer",    required_argument, NULL, OPT_OPTIMIZER },
	{ "spatial-split", required_argument, NULL, OPT_SPATIAL_SPLIT },
	{ "sample-bytes", required_argument, NULL, OPT_SAMPLE_BYTES },
	{ "models",       required_argument, NULL, OPT_MODELS },
	{ "grid",         required_argument, NULL, OPT_GRID },
	{ "cost-model",   required_argument, NULL, OPT_COST_MODEL },
	{ "deps",         no_argument,       NULL, OPT_DEPS },
	{ "deps-only",    no_argument,       NULL, OPT_DEPS_ONLY },
	{ "dep-file",     required_argument, NULL, OPT_DEP_FILE },
	{ "dep-target",   required_argument, NULL, OPT_DEP_TARGET },
	{ "dep-phony",    no_argument,       NULL, OPT_DEP_PHONY },
	{ "profile",      required_argument, NULL, OPT_PROFILE },
	{ "sweep",        no_argument,       NULL, OPT_SWEEP },
	{ "as-exported",  no_argument,       NULL, OPT_AS_EXPORTED },
	{ "channels-last", no_argument,      NULL, OPT_CHANNELS_LAST },
	{ "dropout",      required_argument, NULL, OPT_DROPOUT },
	{ "schedule",     required_argument, NULL, OPT_SCHEDULE },
	{ "nesting",      required_argument, NULL, OPT_NESTING },
	{ "plan",         required_argument, NULL, OPT_PLAN },
	{ "max-batch",    no_argument,       NULL, OPT_MAX_BATCH },
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
		"       %s calibrate [options] MEASURED.csv -o SYSTEM.odl\n"
		"\n"
		"Analyse a neural network for distributed training: layers, parameters,\n"
		"FLOPs and activation memory per sample.  MODEL is an ONNX file (.onnx),\n"
		"an ODL file (.odl) or a ParaDL model table (.net, .net_sc).\n"
		"\n"
		"Options:\n"
		"  -g, --gpus N             GPUs to plan for (default 1)\n"
		"      --sweep              also analyse 1, 2, 4, ... GPUs up to N\n"
		"      --search             search every grid with the schedules, ZeRO stages,\n"
		"                           recomputation and precisions no option fixes;\n"
		"                           the best 10\n"
		"      --search-time MS     stop the search after MS milliseconds\n"
		"      --max-batch          per strategy, the largest --batch-per-gpu that\n"
		"                           fits with the other settings\n"
		"      --per-layer          let each block of layers choose its own split\n"
		"                           (data, filter, channel, spatial) by dynamic\n"
		"                           programming\n"
		"  -f, --format FMT         report format: text, json, csv, html (a page with\n"
		"                           charts) or svg (one chart; default text)\n"
		"      --plot NAME          with -f svg: scaling (default), breakdown, memory\n"
		"                           or layers\n"
		"  -o, --output FILE        write the report to FILE (atomically)\n"
		"      --plan KIND          write, for the recommended strategy, a plan instead\n"
		"                           of a report: generic, pytorch, deepspeed, megatron,\n"
		"                           slurm (docs/plans.md)\n"
		"      --layers             include the per-layer table\n"
		"      --precision P        fp32, tf32, amp-fp16, amp-bf16, fp16 or bf16\n"
		"                           (default fp32; docs/model.md, \"Precision\")\n"
		"      --dataset-size D     samples per epoch (default: the model's)\n"
		"  -s, --system NAME|FILE   the cluster: a built-in name, an ODL file with a\n"
		"                           system block, or a ParaDL .plat (default abci)\n"
		"      --list-systems       print the built-in systems and exit\n"
		"      --implementation NAME|FILE  the software stack: a built-in name or an\n"
		"                           ODL file with an implementation block (default:\n"
		"                           the system's, else pytorch)\n"
		"      --list-implementations  print the built-in implementations and exit\n"
		"      --loader-workers N   data-loader workers per loading process (default:\n"
		"                           the implementation's)\n"
		"      --data KIND          what a sample is as stored: jpeg, raw, stored,\n"
		"                           synthetic (already on the GPU: no loader, no\n"
		"                           copy) or auto (default: jpeg for images of 64\n"
		"                           pixels or more, raw for smaller ones, else stored)\n"
		"      --forward-only       iterations without backward (gradients still\n"
		"                           exchanged, weights still updated)\n"
		"      --zero N             ZeRO stage 0-3: optimizer state (1), gradients (2)\n"
		"                           and parameters (3) sharded over the data-parallel GPUs\n"
		"      --fsdp full|hybrid   PyTorch FSDP: full is stage 3; hybrid shards inside\n"
		"                           each node and replicates across nodes\n"
		"      --recompute R        activation recomputation: none (default), every:K\n"
		"                           (checkpoints every K layers), full (the K that\n"
		"                           keeps least) or selective (attention's softmax)\n"
		"  -b, --batch-per-gpu N    weak scaling: samples per GPU (default 32)\n"
		"  -B, --global-batch N     strong scaling: a fixed global batch\n"
		"      --strategies LIST    comma list of data,spatial,pipeline,filter,\n"
		"                           channel,df,ds,dp,dpf,dpc,dps (default all)\n"
		"      --grid DIM=N[,...]   analyse only this process grid, e.g. data=256,spatial=4\n"
		"                           (dimensions data, spatial, pipeline, filter,\n"
		"                           channel; their product is the GPU count)\n"
		"      --nesting N          model-inner (data outermost), data-inner (data\n"
		"                           innermost) or pipeline-outer (stages outermost,\n"
		"                           then data, the split inside: Megatron's order)\n"
		"                           ranks on the nodes; default: the fastest for each\n"
		"                           grid (measured runs: model-inner)\n"
		"      --optimizer OPT      sgd, momentum, adam, adamw or rmsprop (default\n"
		"                           momentum)\n"
		"      --cost-model M       default, or paper: the tech report's Table III\n"
		"                           formulas exactly\n"
		"      --spatial-split S    auto (the best split point) or all (every layer\n"
		"                           with spatial extent, as ParaDL's runs)\n"
		"      --profile FILE       measured layer times replace the estimate for\n"
		"                           the layers the file names: a CSV (columns\n"
		"                           layer,forward_s,backward_s: seconds per sample)\n"
		"                           or the trace of python3 -m oraclec.launch --trace\n"
		"      --sample-bytes N     stored bytes of one training sample (default:\n"
		"                           110000 for images, else the input's size)\n"
		"      --input-shape DIMS   per-sample input shape where the model leaves it\n"
		"                           open, e.g. 3x224x224\n"
		"      --strict             an operator of unknown cost is an error\n"
		"      --as-exported        ONNX: analyse an eval-mode export's graph as it is\n"
		"      --dropout L1,L2,...  a dropout after each named layer (the export removed it)\n"
		"      --schedule S         pipeline schedule: gpipe (default), 1f1b or\n"
		"                           interleaved:V (V model chunks per GPU)\n"
		"      --micro-batches M    micro-batches per iteration: the pipeline's, or\n"
		"                           gradient accumulation steps (default: chosen)\n"
		"      --channels-last      activations in NHWC (PyTorch's channels_last): tensor-core\n"
		"                           convolutions need no layout transposes\n"
		"                           (default: BatchNormalization folded into\n"
		"                           convolutions is put back)\n"
		"      --dump-after PASS    print the IR after PASS (parse, shape, cost,\n"
		"                           memory) instead of a report\n"
		"  -M, --deps-only          write the make rule of the files read, no report\n"
		"  -MD, --deps              write the report and the make rule (to -MF,\n"
		"                           else the -o file's name with .d)\n"
		"  -MF, --dep-file FILE     where the make rule goes\n"
		"  -MT, --dep-target T      the rule's target (default: the -o file)\n"
		"  -MP, --dep-phony         add an empty rule for every file but the model\n"
		"  -q, --quiet              no warnings or notes\n"
		"  -v, --verbose            say what is read, run (with timings) and written\n"
		"  -h, --help               display this help and exit\n"
		"  -V, --version            output version information and exit\n"
		"\n"
		"Exit status: 0 analysed, 1 bad input, 2 usage error.\n"
		"validate predicts every measured run of the CSV (columns as in the\n"
		"calibration set) and prints the accuracy 1 - |p - m| / m; --models DIR\n"
		"says where MODEL.odl or MODEL.onnx are (default examples).\n"
		"See oraclec(1) for the description language and the JSON keys.\n",
		progname, progname, progname);
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

/* --dropout L1,L2,...: every layer named, none empty ('', ',', 'a,,b'),
 * else a usage error quoting the list escaped and cut. */
static void
dropout_option(const char *list)
{
	char *shown;

	if (*list && *list != ',' && list[strlen(list) - 1] != ',' && !strstr(list, ",,"))
		return;
	shown = esc_text_cut(list, strlen(list), NAME_SHOWN);
	usage_error("--dropout: an empty layer name in '%s' (give LAYER,LAYER,...)", shown);
}

/* "data,df" -> the bits of those strategies */
static unsigned
strategy_mask(const char *list)
{
	unsigned mask = 0;
	char buf[256], *tok, *save = NULL;

	snprintf(buf, sizeof buf, "%s", list);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		StrategyKind k = strategy_lookup(tok);
		char names[256], fmt[512];
		if (k == STRAT_COUNT) { /* the names hold no '%' */
			snprintf(fmt, sizeof fmt, "unknown strategy '%%s' (%s)",
				 strategy_list(names, sizeof names));
			usage_error(fmt, tok);
		}
		mask |= 1u << k;
	}
	if (!mask)
		usage_error("no strategy in '%s'", list);
	return mask;
}

static int64_t number(const char *s, const char *opt, int64_t max);

/* getopt_long cannot parse gcc's multi-letter -MD -MF -MT -MP -M: they
 * become their long names before it runs. */
static void
gcc_dep_spellings(int argc, char **argv)
{
	static const char *const map[][2] = { { "-M", "--deps-only" }, { "-MD", "--deps" },
					       { "-MF", "--dep-file" }, { "-MT", "--dep-target" },
					       { "-MP", "--dep-phony" } };

	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		for (size_t k = 0; k < sizeof map / sizeof map[0]; k++)
			if (strcmp(argv[i], map[k][0]) == 0)
				argv[i] = (char *)map[k][1];
}

/* --grid data=64,spatial=4: the strategy its dimensions make, and the GPU
 * count their product gives. */
static void
grid_option(const char *text, Options *o)
{
	char bad[256], shapes[512], fmt[640];
	StrategyKind k;

	switch (grid_parse(text, o->strat.grid, bad, sizeof bad)) {
	case GRID_OK: break;
	case GRID_SYNTAX: usage_error("bad --grid '%s' (e.g. data=256,spatial=4)", text);
	case GRID_VALUE:
		number(bad, "--grid", GRID_MAX_GPUS); /* reports it and exits */
		usage_error("bad --grid '%s' (e.g. data=256,spatial=4)", text); /* bad cut short */
	case GRID_TOO_MANY: usage_error("--grid '%s' has too many GPUs", text);
	}
	if ((k = grid_strategy(grid_dims(o->strat.grid))) != STRAT_COUNT) {
		o->strat.forced = true;
		o->strat.kind = k;
		o->grid_gpus = grid_gpus(o->strat.grid);
		return;
	}
	snprintf(fmt, sizeof fmt, "--grid '%%s' is not a strategy's grid (%s)",
		 grid_shape_list(shapes, sizeof shapes)); /* the names hold no '%' */
	usage_error(fmt, text);
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

/* The checks of the file names: none is empty, and a make rule beside a
 * report on stdout needs its own name. */
static void
file_names(const Options *o)
{
	static const char *const what[] = { "-o", "-MF", "-MT" };
	const char *name[] = { o->output, o->dep_file, o->dep_target };

	for (int i = 0; i < 3; i++)
		if (name[i] && !*name[i])
			usage_error("an empty file name for %s", what[i]);
	if (o->deps && !o->deps_only && !o->validate && !o->dep_file &&
	    (!o->output || strcmp(o->output, "-") == 0))
		usage_error("%s", "-MD with the report on standard output: give -MF FILE for "
			    "the make rule");
}

/* --recompute none|full|every:K */
static void
recompute_option(const char *arg, Settings *set)
{
	if (strcmp(arg, "none") == 0)
		set->recompute = RECOMPUTE_NONE;
	else if (strcmp(arg, "full") == 0)
		set->recompute = RECOMPUTE_FULL;
	else if (strncmp(arg, "every:", 6) == 0)
		set->recompute = (int)number(arg + 6, "--recompute every:", 1 << 24);
	else if (strcmp(arg, "selective") == 0)
		set->recompute = RECOMPUTE_ATTENTION;
	else
		usage_error("unknown recomputation '%s' (none, full, selective, every:K)", arg);
	if (set->recompute == 0 && strcmp(arg, "none") != 0)
		usage_error("--recompute every:K needs K of 1 or more, not '%s'", arg);
}

/* The command line as a shell would read it back (each word quoted when
 * it holds more than [A-Za-z0-9_./=:,+-]), for the HTML page. */
static const char *
command_line(int argc, char **argv)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	for (int i = 0; i < argc; i++) {
		const char *a = i ? argv[i] : progname;
		if (i)
			fputc(' ', f);
		if (*a && strspn(a, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
				    "0123456789_./=:,+-") == strlen(a))
			fputs(a, f);
		else
			esc_shell(f, a);
	}
	fclose(f);
	return buf;
}

static void
parse_options(int argc, char **argv, Options *o)
{
	int c;

	*o = (Options){ .backend = backend_find("text"), .system = default_system,
			.set = settings_default,
			.strat = { .mask = (1u << STRAT_COUNT) - 1, .spatial_split = SPLIT_AUTO,
				   .nest = NEST_COUNT } };
	if (argc > 1 && (strcmp(argv[1], "validate") == 0 || strcmp(argv[1], "calibrate") == 0)) {
		o->validate = true;
		o->calibrate = argv[1][0] == 'c';
		/* validation models the runs as measured: ParaDL's spatial runs
		 * split every layer with spatial extent (its .lc masks) */
		o->strat.spatial_split = SPLIT_ALL;
		o->models = "examples";
		argv[1] = argv[0];
		argc--, argv++;
	}
	gcc_dep_spellings(argc, argv);
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":g:f:o:s:b:B:qvhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'g':
			o->set.gpus = number(optarg, "--gpus", (int64_t)1 << 24);
			o->gpus_given = true;
			break;
		case 'f':
			if (!(o->backend = backend_find(optarg)))
				usage_error("unknown format '%s' (text, json, csv)", optarg);
			o->format_given = true;
			break;
		case OPT_PLAN:
			if (!(o->plan = plan_find(optarg)))
				usage_error("unknown plan '%s' (generic, pytorch, deepspeed, megatron, "
					    "slurm)", optarg);
			break;
		case 'o': o->output = optarg; break;
		case OPT_LAYERS: o->report.layers = true; break;
		case OPT_PLOT:
			if (!chart_find(optarg))
				usage_error("unknown plot '%s' (scaling, breakdown, memory, layers)",
					    optarg);
			o->report.plot = optarg;
			break;
		case OPT_PRECISION:
			if (!precision_parse(optarg, &o->set.prec))
				usage_error("unknown precision '%s' (fp32, tf32, amp-fp16, amp-bf16, "
					    "fp16, bf16)", optarg);
			o->fix.precision = true;
			break;
		case OPT_DATASET:
			o->set.dataset_size = number(optarg, "--dataset-size", (int64_t)1 << 50);
			break;
		case OPT_DUMP:
			if (!pass_dumpable(optarg))
				usage_error("unknown pass '%s' (parse, training, shape, cost, memory)", optarg);
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
		case OPT_IMPLEMENTATION: o->implementation = optarg; break;
		case OPT_LIST_IMPLEMENTATIONS:
			implementation_list(stdout);
			exit(flush_stdout());
		case OPT_LOADER_WORKERS:
			o->set.loader_workers =
				(int)number(optarg, "--loader-workers", MAX_LOADER_WORKERS);
			if (o->set.loader_workers < 1)
				usage_error("--loader-workers must be at least 1, not %s", optarg);
			break;
		case OPT_FORWARD_ONLY: o->set.forward_only = true; break;
		case OPT_ZERO:
			if (strlen(optarg) != 1 || optarg[0] < '0' || optarg[0] > '3')
				usage_error("--zero takes a stage 0, 1, 2 or 3, not '%s'", optarg);
			if (o->fsdp && optarg[0] != '3')
				usage_error("--fsdp shards as ZeRO stage 3, not --zero %s", optarg);
			o->set.zero = optarg[0] - '0';
			o->fix.zero = true;
			break;
		case OPT_FSDP: /* FULL_SHARD is stage 3; HYBRID_SHARD shards in a node */
			if (strcmp(optarg, "full") != 0 && strcmp(optarg, "hybrid") != 0)
				usage_error("--fsdp takes full or hybrid, not '%s'", optarg);
			if (o->fix.zero && o->set.zero != 3)
				usage_error("--fsdp shards as ZeRO stage 3, not --zero %s",
					    o->set.zero == 0 ? "0" : o->set.zero == 1 ? "1" : "2");
			o->fsdp = true;
			o->set.zero = 3;
			o->set.zero_node = strcmp(optarg, "hybrid") == 0;
			o->fix.zero = true;
			break;
		case OPT_RECOMPUTE:
			recompute_option(optarg, &o->set);
			o->fix.recompute = true;
			break;
		case OPT_MICRO_BATCHES:
			o->set.micro_batches = number(optarg, "--micro-batches", (int64_t)1 << 30);
			break;
		case OPT_DATA:
			if (!data_kind_parse(optarg, &o->set.data))
				usage_error("unknown data kind '%s' (jpeg, raw, stored, synthetic, auto)",
				    optarg);
			break;
		case 'b': o->set.batch_per_gpu = number(optarg, "--batch-per-gpu", (int64_t)1 << 30); break;
		case 'B': o->set.global_batch = number(optarg, "--global-batch", (int64_t)1 << 40); break;
		case OPT_STRATEGIES: o->strat.mask = strategy_mask(optarg); break;
		case OPT_OPTIMIZER:
			if (!optimizer_parse(optarg, &o->set.opt))
				usage_error("unknown optimizer '%s' (sgd, momentum, adam, adamw, rmsprop)", optarg);
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
		case OPT_DEPS: o->deps = true; break;
		case OPT_DEPS_ONLY: o->deps = o->deps_only = true; break;
		case OPT_DEP_FILE: o->dep_file = optarg; break;
		case OPT_DEP_TARGET: o->dep_target = optarg; break;
		case OPT_DEP_PHONY: o->dep_phony = true; break;
		case OPT_COST_MODEL:
			if (!(o->strat.model = cost_model_find(optarg))) {
				char names[256], fmt[512]; /* the names hold no '%' */
				snprintf(fmt, sizeof fmt, "unknown cost model '%%s' (%s)",
					 cost_model_list(names, sizeof names));
				usage_error(fmt, optarg);
			}
			break;
		case OPT_PROFILE: o->profile = optarg; break;
		case OPT_SWEEP: o->sweep = true; break;
		case OPT_SEARCH: o->search = true; break;
		case OPT_SEARCH_TIME: /* milliseconds, up to an hour */
			o->search_time = (double)number(optarg, "--search-time", 3600000) / 1e3;
			break;
		case OPT_PER_LAYER: o->per_layer = true; break;
		case OPT_MAX_BATCH: o->max_batch = true; break;
		case OPT_AS_EXPORTED: o->set.as_exported = true; break;
		case OPT_CHANNELS_LAST: o->set.channels_last = true; break;
		case OPT_DROPOUT:
			dropout_option(optarg);
			o->set.dropout_after = optarg;
			break;
		case OPT_NESTING:
			for (o->strat.nest = 0; o->strat.nest < NEST_COUNT &&
						strcmp(nesting_name[o->strat.nest], optarg) != 0;
			     o->strat.nest++)
				;
			if (o->strat.nest == NEST_COUNT)
				usage_error("unknown nesting '%s' (model-inner, data-inner, pipeline-outer)", optarg);
			break;
		case OPT_SCHEDULE:
			o->fix.schedule = true;
			if (!schedule_parse(optarg, &o->set.schedule, &o->set.virtual_stages))
				usage_error("unknown schedule '%s' (gpipe, 1f1b, interleaved:V with V "
					    "of 2 or more)", optarg);
			break;
		case OPT_SAMPLE_BYTES:
			o->set.sample_bytes = (double)number(optarg, "--sample-bytes", (int64_t)1 << 40);
			break;
		case OPT_NO_BATCH: o->onnx.nobatch = true; break;
		case OPT_PRINT_OUTPUTS: o->onnx.print_outputs = stdout; break;
		case OPT_TENSOR_DIMS: o->tensor_dims = optarg; return;
		case 'q': diag_quiet = 1; break;
		case 'v': diag_verbose = 1; break;
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
	if (o->sweep && (o->strat.forced || o->validate))
		usage_error("--sweep does not go with %s", o->validate ? "validate" : "--grid");
	if (o->per_layer && (o->strat.forced || o->validate))
		usage_error("--per-layer does not go with %s", o->validate ? "validate" : "--grid");
	if (o->max_batch && (o->validate || o->set.global_batch))
		usage_error("--max-batch finds the largest --batch-per-gpu: it does not go with %s",
			    o->validate ? "validate" : "--global-batch");
	if (o->search_time && !o->search)
		usage_error("%s", "--search-time limits --search: give --search too");
	if (o->search && (o->strat.forced || o->validate))
		usage_error("--search does not go with %s", o->validate ? "validate" : "--grid");
	if (o->report.plot && strcmp(o->backend->name, "svg") != 0)
		usage_error("--plot %s draws a chart of -f svg", o->report.plot);
	/* the page's scaling chart, and -f svg's, run the sweep themselves */
	if ((strcmp(o->backend->name, "html") == 0 ||
	     (strcmp(o->backend->name, "svg") == 0 &&
	      (!o->report.plot || strcmp(o->report.plot, "scaling") == 0))) &&
	    !o->strat.forced && !o->validate)
		o->sweep = true;
	if (strcmp(o->backend->name, "svg") == 0 && o->strat.forced &&
	    (!o->report.plot || strcmp(o->report.plot, "scaling") == 0))
		usage_error("--plot %s needs a sweep, which --grid excludes", "scaling");
	if (strcmp(o->backend->name, "html") == 0) /* the page shows it */
		o->report.command = command_line(argc, argv);
	if (o->profile && o->validate)
		usage_error("--profile names the layers of one model, not %s", "validate");
	if (o->strat.forced && o->gpus_given && o->set.gpus != o->grid_gpus) {
		char both[96];
		snprintf(both, sizeof both, "--grid has %" PRId64 " GPUs and --gpus %" PRId64,
			 o->grid_gpus, o->set.gpus);
		usage_error("%s: give one of them, or make them agree", both);
	}
	if (o->strat.forced)
		o->set.gpus = o->grid_gpus; /* the grid says how many */
	if (o->plan && (o->validate || o->format_given))
		usage_error("%s", o->validate ? "--plan applies to a model, not to measured runs"
					      : "--plan writes a plan, not a report: drop --format");
	if (o->calibrate && !o->output)
		usage_error("%s", "calibrate writes the calibrated system: give -o FILE.odl");
	file_names(o);
}

/* One file a run reads or writes, as messages name it. */
typedef struct Role {
	const char *what, *path;
} Role;

/* Where the make rule goes: -MF, else (-MD) the -o file's name with .d;
 * NULL: standard output (-M), or no rule at all. */
static const char *
dep_output(const Options *o, Arena *a)
{
	if (!o->deps || o->validate)
		return NULL;
	if (o->dep_file || o->deps_only)
		return o->dep_file;
	return arena_printf(a, "%s.d", o->output);
}

/* The files the run writes through a temporary file and a rename (not
 * stdout, not devices): the report (or plan, or system) and the rule. */
static int
outputs(const Options *o, Arena *a, Role *r)
{
	const char *dep = dep_output(o, a);
	int n = 0;

	if (o->output && !(o->deps_only && !o->validate) && !out_in_place(o->output))
		r[n++] = (Role){ "-o", o->output };
	if (dep && !out_in_place(dep))
		r[n++] = (Role){ o->dep_file ? "-MF" : "the -MD file", dep };
	return n;
}

/* The files known to be read before reading: the model (or the measured
 * runs), a system file, a profile; those that exist (one that does not is
 * an input error later, whatever the outputs are). */
enum { NAMED_INPUTS = 4 };

static int
named_inputs(const Options *o, Role r[NAMED_INPUTS])
{
	Role all[NAMED_INPUTS] = {
		{ o->validate ? "the measured runs" : "the model", o->model },
		{ "the system", builtin_system(o->system) ? NULL : o->system },
		{ "the implementation",
		  !o->implementation || builtin_impl(o->implementation) ? NULL : o->implementation },
		{ "the profile", o->profile },
	};
	struct stat st;
	int n = 0;

	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
		if (all[i].path && stat(all[i].path, &st) == 0)
			r[n++] = all[i];
	return n;
}

/* false after a usage error when out and in name one file. */
static bool
distinct(Role out, Role in, const char *why)
{
	if (!file_same(out.path, in.path))
		return true;
	fprintf(stderr, "%s: %s '%s' and %s '%s' are the same file: %s\n", progname, out.what,
		out.path, in.what, in.path, why);
	fprintf(stderr, "Try '%s --help' for more information.\n", progname);
	return false;
}

/* Outputs never overwrite an input, nor each other: before reading, the
 * outputs against the inputs the options name and against each other;
 * after reading (files != NULL), against every file read, includes and
 * the models of measured runs among them.  false after a usage error. */
static bool
inputs_kept(const Options *o, Arena *a, const FileList *files)
{
	Role out[2], in[NAMED_INPUTS];
	int nout = outputs(o, a, out), nin = named_inputs(o, in);
	static const char overwrite[] = "an output never replaces an input";

	for (int i = 0; i < nout; i++) {
		for (int k = 0; !files && k < nin; k++)
			if (!distinct(out[i], in[k], overwrite))
				return false;
		for (int k = 0; files && k < files->n; k++)
			if (!distinct(out[i], (Role){ "the input", files->path[k] }, overwrite))
				return false;
		for (int k = i + 1; !files && k < nout; k++)
			if (!distinct(out[i], out[k], "each output needs a file of its own"))
				return false;
	}
	return true;
}

/* The make rule's target: -MT, else the -o file, else the model. */
static const char *
dep_target(const Options *o)
{
	if (o->dep_target)
		return o->dep_target;
	return o->output && strcmp(o->output, "-") != 0 ? o->output : o->model;
}

/* -M: the make rule naming every file read, atomically to -MF (stdout
 * when NULL). */
static int
write_deps(const Options *o, const FileList *files, const char *path)
{
	OutFile out;

	if (!depfile_check(files, dep_target(o)) || !out_open(&out, path))
		return EXIT_INPUT;
	if (!depfile_emit(files, dep_target(o), o->dep_phony, out.f)) {
		out_abort(&out);
		diag_error((Loc){ path ? path : "<stdout>", 0, 0 }, "write failed: %s",
			   strerror(errno ? errno : EIO));
		return EXIT_INPUT;
	}
	return out_commit(&out) ? EXIT_OK : EXIT_INPUT;
}

/* Grids a sweep evaluates: every strategy's grids (the table's, as the
 * analysis enumerates them) on 1, 2, 4, ... GPUs. */
static int64_t
configurations(int counts)
{
	int64_t c = 0, grid[DIM_COUNT];

	for (int i = 0; i < counts; i++)
		for (int k = 0; k < STRAT_COUNT; k++)
			for (int64_t it = 0; grid_next((StrategyKind)k, (int64_t)1 << i, &it, grid);)
				c++;
	return c;
}

/* A progress bar on stderr for sweeps of more than a few hundred grids,
 * only when stderr is a terminal (logs and pipes stay clean). */
static void
progress(int done, int total, int64_t grids)
{
	enum { WIDTH = 40 };
	int fill = total ? done * WIDTH / total : WIDTH;

	if (grids < 300 || !isatty(STDERR_FILENO) || diag_quiet)
		return;
	fprintf(stderr, "\r%s: sweep [%.*s%*s] %d/%d GPU counts", progname, fill,
		"########################################", WIDTH - fill, "", done, total);
	if (done == total)
		fputc('\n', stderr);
	fflush(stderr);
}

/* --sweep: the analysis again on 1, 2, 4, ... GPUs up to an->gpus, and
 * on an->gpus itself when it is not a power of two. */
static bool
sweep(const Options *o, const Graph *g, Analysis *an, Arena *a)
{
	bool pow2 = (an->gpus & (an->gpus - 1)) == 0;
	int n = pow2 ? 0 : 1;

	for (int64_t p = 1; p <= an->gpus; p *= 2)
		n++;
	an->sweep = arena_array(a, n, sizeof *an->sweep);
	for (int i = 0; i < n; i++) {
		Analysis *s = &an->sweep[i];
		*s = *an;
		s->sweep = NULL;
		s->nsweep = 0;
		s->gpus = i == n - 1 ? an->gpus : (int64_t)1 << i;
		progress(i, n, configurations(n));
		if (!strategies_run(g, s, &o->strat))
			return false;
	}
	progress(n, n, configurations(n));
	an->nsweep = n;
	return true;
}

/* The report (or plan) to -o and, with -MD, the make rule to `dep`: both
 * or neither.  Both files are created before either is written, and
 * renamed into place only once both are complete. */
static int
write_report(const Options *o, const Graph *g, const Analysis *an, const Placement *pl,
	     const FileList *files, const char *dep)
{
	OutFile out[2], *failed = &out[0];
	int n = 1, err;
	bool ok;

	if (!out_open(&out[0], o->output))
		return EXIT_INPUT;
	if (dep && !out_open(&out[n++], dep)) {
		out_abort(&out[0]);
		return EXIT_INPUT;
	}
	errno = 0;
	ok = o->plan ? o->plan->emit(g, an, pl, out[0].f) : o->backend->emit(g, an, &o->report,
									   out[0].f);
	if (ok && dep && !depfile_emit(files, dep_target(o), o->dep_phony, out[1].f))
		ok = false, failed = &out[1];
	if (!ok) {
		err = errno;
		diag_error((Loc){ failed->path ? failed->path : "<stdout>", 0, 0 },
			   "write failed: %s", strerror(err ? err : EIO));
		for (int i = 0; i < n; i++)
			out_abort(&out[i]);
		return EXIT_INPUT;
	}
	if (!out_commit_all(out, n))
		return EXIT_INPUT;
	diag_verbose_note("wrote %s: %s", out[0].path ? out[0].path : "<stdout>",
			  o->plan ? "a plan" : "a report");
	if (dep)
		diag_verbose_note("wrote %s: the make rule", out[1].path ? out[1].path : "<stdout>");
	return EXIT_OK;
}

/* The model of the run, read, with its profile; NULL after errors. */
static Graph *
model_read(const Options *o, Arena *a, FileList *files)
{
	double t0 = clock_ms();
	Graph *g = frontend_load(o->model, a, files, &o->onnx);

	if (!g)
		return NULL;
	diag_verbose_note("read %s: %s model '%s', %d layers, %d tensors, %d file%s (%.2f ms)",
			  o->model, g->format, g->name, g->nlayer, g->ntensor, files->n,
			  files->n == 1 ? "" : "s", clock_ms() - t0);
	if (o->profile && !profile_load(o->profile, g, files))
		return NULL;
	return g;
}

/* The passes on the model alone, up to the one --dump-after names. */
static bool
model_passes(const Options *o, Graph *g)
{
	if (g->nlayer == 0) {
		/* an ONNX graph whose nodes all fold away, an ODL model that only
		 * declares its input: nothing to analyse, rather than zeros */
		diag_error((Loc){ o->model, 0, 0 }, "the model has no layers");
		return false;
	}
	analysis_init(g, &o->set);
	return passes_run(g, NULL, PASS_MEMORY, o->dump_after);
}

/* Fewer GPUs the advice compares with: halvings down to 1/64 of them. */
enum { ADVICE_HALVINGS = 6 };

/* The warnings on the recommendation (pass advice), against the same
 * analysis on fewer GPUs: the sweep's counts when there is one, else
 * gpus/64, ..., gpus/4, gpus/2 (fewest first); none under --grid, whose
 * grid is of all the GPUs. */
static bool
advice(const Options *o, const Graph *g, Analysis *an, Arena *a)
{
	Analysis *fewer = an->sweep;
	int n = an->nsweep;

	if (!fewer && !o->strat.forced) {
		int64_t p = an->gpus;
		n = 0;
		fewer = arena_array(a, ADVICE_HALVINGS, sizeof *fewer);
		for (int i = 0; i < ADVICE_HALVINGS && (p /= 2) >= 1; i++)
			n++;
		for (int i = 0; i < n; i++) {
			Analysis *f = &fewer[i];
			*f = *an;
			f->sweep = NULL;
			f->nsweep = 0;
			f->gpus = an->gpus >> (n - i);
			if (!strategies_run(g, f, &o->strat))
				return false;
		}
	}
	advise(g, an, fewer, n);
	return true;
}

/* The analysis of g on the system sys: the passes that need it, every
 * strategy, and with --sweep every GPU count. */
static bool
strategies(const Options *o, const StrategyOpts *so, Graph *g, Analysis *an, Arena *a,
	   const System *sys)
{
	double t0;

	if (!analysis_setup(an, &o->set, g, sys))
		return false;
	diag_verbose_note("system %s (%s): %d GPUs per node", an->sys->name, an->sys->source,
			  an->sys->gpus_per_node);
	if (!passes_run(g, an, PASS_TIMING, NULL))
		return false;
	t0 = clock_ms();
	if (!strategies_run(g, an, so))
		return false;
	diag_verbose_note("strategies on %" PRId64 " GPUs: best %s (%.2f ms)", an->gpus,
			  an->best >= 0 ? strategy_name[an->cand[an->best].kind] : "none",
			  clock_ms() - t0);

	if (o->search) {
		Search *s = arena_alloc(a, sizeof *s);
		t0 = clock_ms();
		if (!search_all(g, an, &o->set, so, &o->fix, o->search_time, s))
			return false;
		an->search = s;
		diag_verbose_note("search: %d configurations evaluated, %d pruned (%.2f ms)",
				  s->evaluated, s->pruned, clock_ms() - t0);
	}
	if (o->per_layer) {
		PerLayer *pl = arena_alloc(a, sizeof *pl);
		t0 = clock_ms();
		if (!per_layer_run(g, an, pl))
			return false;
		per_layer_recommend(an, pl);
		an->per_layer = pl;
		diag_verbose_note("per-layer: %d blocks (%d not series-parallel) x %d choices (%.2f ms)",
				  pl->nblocks, pl->nwhole, pl->nstates, clock_ms() - t0);
	}
	t0 = clock_ms();
	if (o->sweep && !sweep(o, g, an, a))
		return false;
	if (o->sweep)
		diag_verbose_note("sweep: %d GPU counts (%.2f ms)", an->nsweep, clock_ms() - t0);
	if (o->max_batch) { /* the GPU count asked for only, not the sweep's */
		t0 = clock_ms();
		max_batch_run(g, an, so);
		diag_verbose_note("max batch: %.2f ms", clock_ms() - t0);
	}
	return advice(o, g, an, a);
}

/* oraclec MODEL: the model, its passes, the strategies, then the report
 * (or the plan, or only the make rule). */
static int
analyse(const Options *o, Arena *a, FileList *files)
{
	/* the system first: a wrong name or file is said before a model of
	 * minutes is read; its files are listed after the model's */
	FileList sysfiles = { 0 };
	const System *sys = system_load_with(o->system, o->set.impl, a, &sysfiles);
	Graph *g = sys ? model_read(o, a, files) : NULL;
	Analysis an;
	Placement pl;
	Modules mod;
	StrategyOpts so = o->strat;

	for (int i = 0; g && i < sysfiles.n; i++)
		files_add(files, sysfiles.path[i]);
	files_free(&sysfiles);
	if (!g)
		return EXIT_INPUT;
	if (o->onnx.print_outputs)
		return flush_stdout();
	if (!model_passes(o, g))
		return EXIT_INPUT;
	if (o->dump_after)
		return flush_stdout();
	if (o->plan && o->plan->transformer && !graph_attention(g, NULL)) {
		diag_error((Loc){ g->source, 0, 0 }, "Megatron-LM trains transformers (--plan %s), and the "
			   "model has no attention (a softmax over the product of two "
			   "activations); the generic, pytorch, deepspeed and slurm plans fit any "
			   "model; no plan written", o->plan->name);
		return EXIT_INPUT;
	}
	if (o->plan) { /* a plan's pipeline stages begin at blocks: price those */
		modules_derive(g, &mod);
		so.cut_after = plan_cuts(g, &mod);
		so.megatron = o->plan->transformer;
	}
	if (!strategies(o, &so, g, &an, a, sys))
		return EXIT_INPUT;
	if (!inputs_kept(o, a, files))
		return EXIT_USAGE;
	if (o->deps_only)
		return write_deps(o, files, o->dep_file);
	if (o->plan && !placement_run(g, &an, &so, &mod, &pl))
		return EXIT_INPUT;
	if (o->plan && o->plan->transformer && !plan_megatron_places(pl.k)) {
		char grid[GRID_TEXT_MAX];
		diag_error((Loc){ g->source, 0, 0 }, "Megatron-LM numbers its ranks tp-dp-pp, or "
			   "tp-pp-dp with --use-tp-pp-dp-mapping; the recommended %s grid %s is "
			   "nested data-inner (data innermost), which it cannot place; --nesting "
			   "model-inner or pipeline-outer gives one it can; no plan written",
			   strategy_name[pl.k->kind], grid_format(pl.k->grid, NULL, 0, grid, sizeof grid));
		return EXIT_INPUT;
	}
	if (o->deps && !depfile_check(files, dep_target(o))) /* -MD: no report either */
		return EXIT_INPUT;
	return write_report(o, g, &an, &pl, files, dep_output(o, a));
}

/* The model of a measured run: MODELS/<name>.odl, else .onnx, loaded and
 * through the passes on the model alone once per name and precision (the
 * run's settings, analysis_run_settings). */
static Graph *
validation_model(const Options *o, const Settings *set, Map *cache, const char *name, Arena *a,
		 FileList *files, Loc where)
{
	/* the precision's number first: it ends at the first newline */
	const char *key = arena_printf(a, "%d\n%s", (int)set->prec, name);
	Graph *g = map_get(cache, key);
	const char *path;
	struct stat st;

	if (g)
		return g;
	/* stat, not open: what is there but is no regular file (a FIFO) is
	 * refused by the frontend without being opened for long */
	path = arena_printf(a, "%s/%s.odl", o->models, name);
	if (stat(path, &st) != 0)
		path = arena_printf(a, "%s/%s.onnx", o->models, name);
	if (stat(path, &st) != 0) {
		diag_error(where, "no model '%s' in '%s' (looked for %s.odl and %s.onnx)", name,
			   o->models, name, name);
		return NULL;
	}
	if (!(g = frontend_load(path, a, files, &o->onnx)))
		return NULL;
	analysis_init(g, set);
	if (!passes_run(g, NULL, PASS_MEMORY, NULL))
		return NULL;
	diag_verbose_note("model %s: %s, %d layers", name, path, g->nlayer);
	map_put(cache, key, g);
	return g;
}

/* The implementation run r names, loaded once per name, where
 * --implementation does not describe every run; false after errors. */
static bool
run_implementation(const Options *o, Measured *r, Map *impls, Arena *a, FileList *files)
{
	if (o->set.impl || !r->impl)
		return true;
	if (!(r->implementation = map_get(impls, r->impl))) {
		if (!(r->implementation = implementation_load_at(r->impl, r->impl_loc, a, files)))
			return false;
		map_put(impls, r->impl, (void *)r->implementation);
	}
	return true;
}

/* The options a measured run is predicted with: o's, placed model-inner
 * as the runs were (ParaDL's scripts make a node's GPUs the model-parallel
 * group) unless --nesting says otherwise. */
static StrategyOpts
measured_strat(const Options *o)
{
	StrategyOpts so = o->strat;

	if (so.nest == NEST_COUNT)
		so.nest = NEST_MODEL_INNER;
	return so;
}

/* The measured runs of o->model with their models loaded and analyses set
 * up on system s, one analysis for the runs of a model with the same GPUs,
 * global batch and dataset size (an Analysis is 6.6 kB: one a run took
 * 700 MB for 100,000 runs); NULL after errors. */
static CalibRow *
measured_rows(const Options *o, Validation *v, const System *s, Arena *a, FileList *files)
{
	Map cache, analyses, impls;
	CalibRow *cr;

	map_init(&cache, a);
	map_init(&analyses, a);
	map_init(&impls, a);
	if (!s || !(v->row = measured_load(o->model, a, files, &v->nrow)))
		return NULL;
	diag_verbose_note("read %s: %d measured run%s; system %s (%s)", o->model, v->nrow,
			  v->nrow == 1 ? "" : "s", s->name, s->source);
	cr = arena_array(a, v->nrow, sizeof *cr);
	for (int i = 0; i < v->nrow; i++) {
		Measured *r = &v->row[i];
		Settings rs;
		Graph *g;
		const char *key;
		Analysis *an;
		if (!run_implementation(o, r, &impls, a, files))
			return NULL;
		rs = analysis_run_settings(&o->set, r);
		if (!(g = validation_model(o, &rs, &cache, r->model, a, files, r->loc)))
			return NULL;
		/* the numbers first: they hold no ',', so no two runs share a key */
		key = arena_printf(a, "%" PRId64 ",%" PRId64 ",%" PRId64 ",%d,%p,%s", r->gpus,
				   r->global_batch, r->dataset_size, (int)rs.prec, (void *)rs.impl,
				   r->model);
		if (!(an = map_get(&analyses, key))) {
			an = arena_alloc(a, sizeof *an);
			if (!analysis_measured(an, &o->set, g, s, r))
				return NULL;
			map_put(&analyses, key, an);
		}
		analysis_row(&cr[i], g, an, r);
	}
	return cr;
}

static int
emit_validation(const Options *o, const Validation *v, const char *path)
{
	OutFile out;

	if (!out_open(&out, path))
		return EXIT_INPUT;
	if (!validation_emit(v, o->backend->name, out.f)) {
		out_abort(&out);
		return EXIT_INPUT;
	}
	return out_commit(&out) ? EXIT_OK : EXIT_INPUT;
}

/* The calibrated system's comment: what was fitted on what, each
 * parameter's factor with its standard error or why it was left, the
 * pairs the runs see only together (their errors' correlation 0.9 or more
 * in size: a factor on one is undone by the other), and how well the fit
 * does. */
static void
calibration_note(const Options *o, const System *orig, const Calibration *cal, int nrow,
		 Arena *a, char *buf, size_t size)
{
	size_t len = (size_t)snprintf(buf, size, "%s calibrated on %s (%d run%s):", orig->name,
				      o->model, nrow, nrow == 1 ? "" : "s");

	for (int j = 0; j < CALIB_PARAMS && len < size; j++) {
		const char *sep = j ? "," : "";
		if (!cal->fitted[j])
			len += (size_t)snprintf(buf + len, size - len, "%s %s not set", sep,
						calib_param_name[j]);
		else if (!cal->constrained[j])
			len += (size_t)snprintf(buf + len, size - len, "%s %s kept (the runs do "
						"not see it)", sep, calib_param_name[j]);
		else if (isnan(cal->rel_error[j]))
			len += (size_t)snprintf(buf + len, size - len, "%s %s x%.3f", sep,
						calib_param_name[j], cal->factor[j]);
		else
			len += (size_t)snprintf(buf + len, size - len, "%s %s x%.3f (+-%.0f%%)", sep,
						calib_param_name[j], cal->factor[j],
						100 * cal->rel_error[j]);
	}
	for (int j = 0; j < CALIB_PARAMS; j++)
		for (int q = j + 1; q < CALIB_PARAMS && len < size; q++)
			if (fabs(cal->corr[j][q]) >= 0.9)
				len += (size_t)snprintf(buf + len, size - len,
							"; %s and %s seen only together "
							"(correlation %+.2f)",
							calib_param_name[j], calib_param_name[q],
							cal->corr[j][q]);
	if (len < size)
		snprintf(buf + len, size - len, "; mean accuracy %.3f before, %.3f after, %s",
			 cal->before, cal->after,
			 isnan(cal->loo) ? "no leave-one-out with one run"
					 : arena_printf(a, "%.3f leave-one-out", cal->loo));
}

/* The implementation file a system names, as the calibrated system
 * writes it: absolute, as the file may be written elsewhere and reads it
 * from its own directory (a built-in's name, or a file that cannot be
 * resolved, as it is). */
static const char *
written_path(const char *name, Arena *a)
{
	char *real;
	const char *path;

	if (!name || builtin_impl(name) || name[0] == '/' || !(real = realpath(name, NULL)))
		return name;
	path = arena_strdup(a, real);
	free(real);
	return path;
}

/* Whether any run of v can be predicted on s: a fit on none would write
 * the system unchanged as "calibrated" (an error at the first run, with
 * why it cannot be). */
static bool
predictable(const Validation *v, CalibRow *cr, const StrategyOpts *so, const System *s)
{
	Candidate k, first = { 0 };

	for (int i = 0; i < v->nrow; i++) {
		strategy_predict(cr[i].g, cr[i].an, so, cr[i].kind, cr[i].grid, &k);
		if (k.computable)
			return true;
		if (i == 0)
			first = k;
	}
	if (v->nrow == 1)
		diag_error(v->row[0].loc, "the run cannot be predicted on %s (%s): nothing to "
			   "calibrate on", s->name, first.reason ? first.reason : "no prediction");
	else
		diag_error(v->row[0].loc, "none of the %d runs can be predicted on %s (this one: "
			   "%s): nothing to calibrate on", v->nrow, s->name,
			   first.reason ? first.reason : "no prediction");
	return false;
}

/* oraclec calibrate: fit, write the system to -o, report on stdout. */
static int
calibrate(const Options *o, Arena *a, FileList *files)
{
	Validation v = { 0 };
	const System *orig = system_load_with(o->system, o->set.impl, a, files);
	System *s = orig ? arena_alloc(a, sizeof *s) : NULL;
	CalibRow *cr;
	Calibration cal;
	OutFile out;
	char comment[1024];
	int status;
	double t0;
	StrategyOpts so = measured_strat(o);

	if (s) {
		*s = *orig;
		s->implementation = written_path(s->implementation, a);
	}
	if (!(cr = measured_rows(o, &v, s, a, files)) || !predictable(&v, cr, &so, s))
		return EXIT_INPUT;
	t0 = clock_ms();
	calibrate_run(s, cr, v.nrow, &so, &cal);
	diag_verbose_note("fit: %d runs, with leave-one-out (%.2f ms)", v.nrow, clock_ms() - t0);
	for (int i = 0; i < v.nrow; i++) {
		v.row[i].predicted = cr[i].predicted;
		v.row[i].note = isnan(cr[i].predicted) ? "not predicted" : "calibrated";
	}
	validation_score(&v);
	calibration_note(o, orig, &cal, v.nrow, a, comment, sizeof comment);
	if (!inputs_kept(o, a, files))
		return EXIT_USAGE;
	if (!out_open(&out, o->output))
		return EXIT_INPUT;
	if (!system_emit(s, arena_printf(a, "%s_calibrated", orig->name), comment, out.f)) {
		out_abort(&out);
		return EXIT_INPUT;
	}
	if (!out_commit(&out))
		return EXIT_INPUT;
	if ((status = emit_validation(o, &v, NULL)) != EXIT_OK)
		return status;
	putchar('\n');
	esc_text(stdout, comment); /* names a file and a system */
	putchar('\n');
	return flush_stdout();
}

static int
validate(const Options *o, Arena *a, FileList *files)
{
	Validation v = { 0 };
	const System *s = system_load_with(o->system, o->set.impl, a, files);
	CalibRow *cr;
	StrategyOpts so = measured_strat(o);

	if (!(cr = measured_rows(o, &v, s, a, files)))
		return EXIT_INPUT;
	for (int i = 0; i < v.nrow; i++) {
		Candidate k;
		strategy_predict(cr[i].g, cr[i].an, &so, cr[i].kind, cr[i].grid, &k);
		v.row[i].predicted = k.computable ? k.t.total : NAN;
		v.row[i].note = k.computable ? k.bottleneck : k.reason;
		if (k.computable && !isnan(v.row[i].peak))
			v.row[i].predicted_peak = validation_memory(&k.mem, s);
	}
	validation_score(&v);
	if (!inputs_kept(o, a, files))
		return EXIT_USAGE;
	return emit_validation(o, &v, o->output);
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
	if (o.tensor_dims) {
		free((char *)o.report.command);
		return onnx_print_tensor_dims(o.tensor_dims, stdout) ? flush_stdout() : EXIT_INPUT;
	}
	arena_init(&arena);
	status = !inputs_kept(&o, &arena, NULL) ? EXIT_USAGE
		 : o.implementation &&
				 !(o.set.impl = implementation_load(o.implementation, &arena, &files))
			 ? EXIT_INPUT
		 : o.calibrate ? calibrate(&o, &arena, &files)
		 : o.validate ? validate(&o, &arena, &files)
		 : analyse(&o, &arena, &files);
	arena_free(&arena);
	files_free(&files);
	free((char *)o.report.command);
	return status;
}
