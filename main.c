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
#include <stdlib.h>
#include <string.h>

#include "backends/backends.h"
#include "frontend/frontend.h"
#include "ir/ir.h"
#include "passes/passes.h"
#include "util/files.h"
#include "util/output.h"

enum { EXIT_OK = 0, EXIT_INPUT = 1, EXIT_USAGE = 2 };

enum {
	OPT_LAYERS = CHAR_MAX + 1,
	OPT_PRECISION,
	OPT_DATASET,
	OPT_DUMP,
	OPT_INPUT_SHAPE,
	OPT_STRICT,
	OPT_NO_BATCH,      /* hidden: for the ONNX conformance test */
	OPT_PRINT_OUTPUTS, /* hidden */
	OPT_TENSOR_DIMS,   /* hidden */
};

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
		"\n"
		"Analyse a neural network for distributed training: layers, parameters,\n"
		"FLOPs and activation memory per sample.  MODEL is an ONNX file (.onnx)\n"
		"or an ODL file (.odl).\n"
		"\n"
		"Options:\n"
		"  -g, --gpus N             GPUs to plan for (default 1)\n"
		"  -f, --format FMT         report format: text, json (default text)\n"
		"  -o, --output FILE        write the report to FILE (atomically)\n"
		"      --layers             include the per-layer table\n"
		"      --precision P        fp32, fp16 or bf16: bytes per item (default fp32)\n"
		"      --dataset-size D     samples per epoch (default: the model's)\n"
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
		"See oraclec(1) for the description language and the JSON keys.\n",
		progname);
}

static _Noreturn void
usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "%s: ", progname);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry '%s --help' for more information.\n", progname);
	exit(EXIT_USAGE);
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

	*o = (Options){ .gpus = 1, .elem_bytes = 4, .backend = backend_find("text") };
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":g:f:o:qvhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'g': o->gpus = number(optarg, "--gpus", (int64_t)1 << 24); break;
		case 'f':
			if (!(o->backend = backend_find(optarg)))
				usage_error("unknown format '%s' (text, json)", optarg);
			break;
		case 'o': o->output = optarg; break;
		case OPT_LAYERS: o->report.layers = true; break;
		case OPT_PRECISION:
			if (strcmp(optarg, "fp32") == 0)
				o->elem_bytes = 4;
			else if (strcmp(optarg, "fp16") == 0 || strcmp(optarg, "bf16") == 0)
				o->elem_bytes = 2;
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
		usage_error("%s", "no model file given");
	if (optind + 1 < argc)
		usage_error("more than one model file given ('%s')", argv[optind + 1]);
	o->model = argv[optind];
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

static int
analyse(const Options *o, Arena *a, FileList *files)
{
	OutFile out;
	Graph *g = frontend_load(o->model, a, files, &o->onnx);
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
	if (!out_open(&out, o->output))
		return EXIT_INPUT;
	ok = o->backend->emit(g, &o->report, out.f);
	if (!ok) {
		out_abort(&out);
		diag_error((Loc){ o->output ? o->output : "<stdout>", 0, 0 }, "write failed");
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
	status = analyse(&o, &arena, &files);
	arena_free(&arena);
	files_free(&files);
	return status;
}
