/* options.c -- the command line.  One table, `rows`, holds every option:
 * its names, argument, help and default, the list of choices it takes
 * (from the table that defines them: the backends', the strategies', the
 * passes'...) and its handler.  getopt_long's array, --help and each
 * "unknown WHAT 'x' (a, b, c)" message are made from it, so none of them
 * can name a choice the others do not. */
#include "config.h"

#include "options.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/charts.h"
#include "util/escape.h"

typedef struct Row Row;

/* The i-th name of a list of choices, NULL past the last. */
typedef const char *ChoiceFn(int i);

struct Row {
	const char *name; /* the long name */
	int letter;       /* the short option, or 0 */
	const char *dash; /* gcc's spelling: "MD" is -MD; NULL: none */
	const char *arg;  /* the argument as --help names it; NULL: none */
	const char *help; /* lines, '\n' between; NULL: a hidden option */
	const char *dflt; /* "(default ...)", ending the entry ('\n': a line
	                     break); NULL: none */
	const char *const *shown; /* a setting's default as its table,
	                     ir/settings.def, says it: in place of dflt */
	const char *what; /* what the choices are ("unknown WHAT 'x'") */
	ChoiceFn *choice; /* the choices; NULL: none */
	const char *hint; /* after the list in the message, or NULL */
	bool runs;        /* applies to the measured runs of validate and
	                     calibrate (their --help lists it) */
	void (*handle)(Options *o, const char *arg, const Row *r);
};

/* What --help says of each setting's default, from its table. */
static const struct {
#define SETTING(type, name, dflt, shown, layer, plan) const char *name;
#include "ir/settings.def"
#undef SETTING
} shown = {
#define SETTING(type, name, dflt, shown, layer, plan) .name = shown,
#include "ir/settings.def"
#undef SETTING
};

enum { HELP_COLUMN = 27, HELP_WIDTH = 80 };

/* A macro's value as a string literal, for a limit a message states */
#define TEXT_(x) #x
#define TEXT(x) TEXT_(x)

/* A malloc'd copy of s */
static char *
copy(const char *s)
{
	size_t n = strlen(s) + 1;

	return memcpy(xcalloc(n, 1), s, n);
}

/* A usage error: the message with arg (a value from the command line)
 * escaped and cut at NAME_SHOWN bytes, so that it can neither reach the
 * terminal as control bytes nor forge a line nor fill the screen
 * (docs/limits.md), then the hint; exit status 2. */
static _Noreturn void
usage_error(const char *fmt, const char *arg)
{
	char *shown = esc_text_cut(arg, strlen(arg), NAME_SHOWN);

	fprintf(stderr, "%s: ", progname);
	fprintf(stderr, fmt, shown);
	fprintf(stderr, "\nTry '%s --help' for more information.\n", progname);
	free(shown);
	exit(EXIT_USAGE);
}

int
flush_stdout(void)
{
	if (fflush(stdout) == 0 && !ferror(stdout))
		return EXIT_OK;
	diag_error((Loc){ "<stdout>", 0, 0 }, "write failed: %s", strerror(errno ? errno : EIO));
	return EXIT_INPUT;
}

/* "a, b, c": r's choices into buf[n] */
static char *
choices(const Row *r, char *buf, size_t n)
{
	size_t len = 0;
	const char *c;

	buf[0] = '\0';
	for (int i = 0; (c = r->choice(i)) && len < n; i++)
		len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? ", " : "", c);
	return buf;
}

/* "unknown WHAT 'arg' (CHOICES)": arg is none of r's choices. */
static _Noreturn void
unknown(const Row *r, const char *arg)
{
	char names[512], fmt[768]; /* the names hold no '%' */

	snprintf(fmt, sizeof fmt, "unknown %s '%%s' (%s%s)", r->what,
		 choices(r, names, sizeof names), r->hint ? r->hint : "");
	usage_error(fmt, arg);
}

/* The index of arg among r's choices; a usage error when it is none. */
static int
choice_index(const Row *r, const char *arg)
{
	const char *c;

	for (int i = 0; (c = r->choice(i)); i++)
		if (strcmp(c, arg) == 0)
			return i;
	unknown(r, arg);
}

static int64_t
number(const char *s, const char *opt, int64_t max)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < 1 || v > max) {
		char fmt[160];
		snprintf(fmt, sizeof fmt, "invalid value '%%s' for %s (expected 1 to %" PRId64 ")",
			 opt, max); /* opt: an option's name, no '%' */
		usage_error(fmt, s);
	}
	return v;
}

/* The lists of choices, each from the table that defines it. */
static const char *
format_choice(int i)
{
	return backend_name(i);
}

static const char *
plan_choice(int i)
{
	return plan_kind_name(i);
}

static const char *
plot_choice(int i)
{
	return i < CHART_COUNT ? charts[i].name : NULL;
}

static const char *
precision_choice(int i)
{
	return i < PREC_COUNT ? precision_name((Precision)i) : NULL;
}

static const char *
pass_choice(int i)
{
	return pass_dumpable_name(i);
}

static const char *
data_choice(int i)
{
	return i < DATA_COUNT ? data_kind_name((DataKind)i) : NULL;
}

static const char *
strategy_choice(int i)
{
	return i < STRAT_COUNT ? strategy_name[i] : NULL;
}

/* optimizer_name says "?" past its table's last */
static const char *
optimizer_choice(int i)
{
	const char *name = optimizer_name((Optimizer)i);

	return strcmp(name, "?") != 0 ? name : NULL;
}

static const char *
nesting_choice(int i)
{
	return i < NEST_COUNT ? nesting_name[i] : NULL;
}

/* The cost models' table is model/costmodel.c's, read through its list
 * ("default, paper"). */
static const char *
cost_model_choice(int i)
{
	static char list[256], name[64];
	const char *p = cost_model_list(list, sizeof list), *end;

	for (; i > 0 && p; i--)
		if ((p = strstr(p, ", ")))
			p += 2;
	if (!p || !*p)
		return NULL;
	end = strstr(p, ", ");
	snprintf(name, sizeof name, "%.*s", (int)(end ? (size_t)(end - p) : strlen(p)), p);
	return name;
}

/* interleaved takes its chunks per GPU: "interleaved:V" */
static const char *
schedule_choice(int i)
{
	return i >= SCHED_COUNT         ? NULL
	       : i == SCHED_INTERLEAVED ? "interleaved:V"
					: schedule_name((Schedule)i);
}

/* --spatial-split, indexed by SPLIT_AUTO, SPLIT_ALL */
static const char *const split_name[] = { [SPLIT_AUTO] = "auto", [SPLIT_ALL] = "all" };

static const char *
split_choice(int i)
{
	return i < (int)(sizeof split_name / sizeof split_name[0]) ? split_name[i] : NULL;
}

/* --recompute: none, full, selective, every:K, as recompute_option reads
 * them */
static const char *const recompute_name[] = { "none", "full", "selective", "every:K" };

static const char *
recompute_choice(int i)
{
	return i < (int)(sizeof recompute_name / sizeof recompute_name[0]) ? recompute_name[i]
									   : NULL;
}

/* The handlers, in the order of the table. */
static void
opt_gpus(Options *o, const char *arg, const Row *r)
{
	(void)r;
	o->set.gpus = number(arg, "--gpus", (int64_t)1 << 24);
	o->gpus_given = true;
}

static void
opt_sweep(Options *o, const char *arg, const Row *r)
{
	(void)arg, (void)r;
	o->sweep = true;
}

static void
opt_search(Options *o, const char *arg, const Row *r)
{
	(void)arg, (void)r;
	o->search = true;
}

static void
opt_search_time(Options *o, const char *arg, const Row *r)
{
	(void)r; /* milliseconds, up to an hour */
	o->search_time = (double)number(arg, "--search-time", 3600000) / 1e3;
}

static void
opt_max_batch(Options *o, const char *arg, const Row *r)
{
	(void)arg, (void)r;
	o->max_batch = true;
}

static void
opt_per_layer(Options *o, const char *arg, const Row *r)
{
	(void)arg, (void)r;
	o->per_layer = true;
}

static void
opt_format(Options *o, const char *arg, const Row *r)
{
	if (!(o->backend = backend_find(arg)))
		unknown(r, arg);
	o->format_given = true;
}

static void
opt_plot(Options *o, const char *arg, const Row *r)
{
	if (!chart_find(arg))
		unknown(r, arg);
	o->report.plot = arg;
}

static void
opt_output(Options *o, const char *arg, const Row *r)
{
	(void)r;
	o->output = arg;
}

static void
opt_plan(Options *o, const char *arg, const Row *r)
{
	if (!(o->plan = plan_find(arg)))
		unknown(r, arg);
}

static void
opt_layers(Options *o, const char *arg, const Row *r)
{
	(void)arg, (void)r;
	o->report.layers = true;
}

static void
opt_precision(Options *o, const char *arg, const Row *r)
{
	if (!precision_parse(arg, &o->set.prec))
		unknown(r, arg);
	o->fix.precision = true;
}

static void
opt_dataset(Options *o, const char *arg, const Row *r)
{
	(void)r;
	if (o->set.dataset_tokens)
		usage_error("--dataset-size and --dataset-tokens both give the epoch; give one, "
			    "not '%s' too", arg);
	o->set.dataset_size = number(arg, "--dataset-size", (int64_t)1 << 50);
}

/* --seq-len S: the sequence model's length where the input leaves it
 * open (docs/model.md, "Transformers") */
static void
opt_seq_len(Options *o, const char *arg, const Row *r)
{
	(void)r;
	o->set.seq_len = number(arg, "--seq-len", MAX_SEQ_LEN);
	o->onnx.seq_len = o->set.seq_len;
}

/* --dataset-tokens N: an epoch of N tokens, N / s samples */
static void
opt_dataset_tokens(Options *o, const char *arg, const Row *r)
{
	(void)r;
	if (o->set.dataset_size)
		usage_error("--dataset-size and --dataset-tokens both give the epoch; give one, "
			    "not '%s' too", arg);
	o->set.dataset_tokens = number(arg, "--dataset-tokens", (int64_t)1 << 60);
}

static void
opt_system(Options *o, const char *arg, const Row *r)
{
	(void)r;
	o->system = arg;
}

static void
opt_list_systems(Options *o, const char *arg, const Row *r)
{
	(void)o, (void)arg, (void)r;
	system_list(stdout);
	exit(flush_stdout());
}

static void
opt_implementation(Options *o, const char *arg, const Row *r)
{
	(void)r;
	o->implementation = arg;
}

static void
opt_list_implementations(Options *o, const char *arg, const Row *r)
{
	(void)o, (void)arg, (void)r;
	implementation_list(stdout);
	exit(flush_stdout());
}

static void
opt_loader_workers(Options *o, const char *arg, const Row *r)
{
	(void)r;
	o->set.loader_workers = (int)number(arg, "--loader-workers", MAX_LOADER_WORKERS);
	if (o->set.loader_workers < 1)
		usage_error("--loader-workers must be at least 1, not %s", arg);
}

static void
opt_data(Options *o, const char *arg, const Row *r)
{
	if (!data_kind_parse(arg, &o->set.data))
		unknown(r, arg);
}

static void
opt_forward_only(Options *o, const char *arg, const Row *r)
{
	(void)arg, (void)r;
	o->set.forward_only = true;
}

static void
opt_zero(Options *o, const char *arg, const Row *r)
{
	(void)r;
	if (strlen(arg) != 1 || arg[0] < '0' || arg[0] > '3')
		usage_error("--zero takes a stage 0, 1, 2 or 3, not '%s'", arg);
	if (o->fsdp && arg[0] != '3')
		usage_error("--fsdp shards as ZeRO stage 3, not --zero %s", arg);
	o->set.zero = arg[0] - '0';
	o->fix.zero = true;
}

/* --sync-bn K: groups of K GPUs (1: each its own, as without) */
static void
opt_sync_bn(Options *o, const char *arg, const Row *r)
{
	(void)r;
	o->set.sync_bn = (int)number(arg, "--sync-bn", (int64_t)1 << 24);
}

/* FULL_SHARD is stage 3; HYBRID_SHARD shards in a node */
static void
opt_sequence_parallel(Options *o, const char *arg, const Row *r)
{
	(void)arg, (void)r;
	o->set.sequence_parallel = true;
	o->fix.sequence_parallel = true;
}

static void
opt_fsdp(Options *o, const char *arg, const Row *r)
{
	(void)r;
	if (strcmp(arg, "full") != 0 && strcmp(arg, "hybrid") != 0)
		usage_error("--fsdp takes full or hybrid, not '%s'", arg);
	if (o->fix.zero && o->set.zero != 3)
		usage_error("--fsdp shards as ZeRO stage 3, not --zero %s",
			    (const char[]){ (char)('0' + o->set.zero), '\0' });
	o->fsdp = true;
	o->set.zero = 3;
	o->set.zero_node = strcmp(arg, "hybrid") == 0;
	o->fix.zero = true;
}

/* --recompute none|full|selective|every:K */
static void
opt_recompute(Options *o, const char *arg, const Row *r)
{
	Settings *set = &o->set;

	if (strcmp(arg, "none") == 0)
		set->recompute = RECOMPUTE_NONE;
	else if (strcmp(arg, "full") == 0)
		set->recompute = RECOMPUTE_FULL;
	else if (strncmp(arg, "every:", 6) == 0)
		set->recompute = (int)number(arg + 6, "--recompute every:", 1 << 24);
	else if (strcmp(arg, "selective") == 0)
		set->recompute = RECOMPUTE_ATTENTION;
	else
		unknown(r, arg);
	if (set->recompute == 0 && strcmp(arg, "none") != 0)
		usage_error("--recompute every:K needs K of 1 or more, not '%s'", arg);
	o->fix.recompute = true;
}

static void
opt_batch_per_gpu(Options *o, const char *arg, const Row *r)
{
	(void)r;
	o->set.batch_per_gpu = number(arg, "--batch-per-gpu", (int64_t)1 << 30);
}

static void
opt_global_batch(Options *o, const char *arg, const Row *r)
{
	(void)r;
	o->set.global_batch = number(arg, "--global-batch", (int64_t)1 << 40);
}

/* "data,df" -> the bits of those strategies (a list of any length: none
 * is cut off) */
static void
opt_strategies(Options *o, const char *list, const Row *r)
{
	unsigned mask = 0;
	char *buf = copy(list), *tok, *save = NULL;

	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		StrategyKind k = strategy_lookup(tok);
		if (k == STRAT_COUNT) {
			char *name = copy(tok);
			free(buf);
			unknown(r, name); /* exits; name is the message's */
		}
		mask |= 1u << k;
	}
	free(buf);
	if (!mask)
		usage_error("no strategy in '%s'", list);
	o->strat.mask = mask;
	o->strat.listed = true;
}

/* --grid data=64,spatial=4: the strategy its dimensions make, and the GPU
 * count their product gives.  A grid naming some of a strategy's
 * dimensions is the smallest strategy's that has them all, the others at
 * 1 (Megatron's defaults: pipeline=2,context=8 is dptc's
 * data=1,pipeline=2,tensor=1,context=8); two as small: a usage error.
 * pipeline=1 beside other dimensions names none. */
static void
opt_grid(Options *o, const char *text, const Row *r)
{
	char bad[256], shapes[512], fmt[640];
	StrategyKind k, tie;

	(void)r;
	switch (grid_parse(text, o->strat.grid, bad, sizeof bad)) {
	case GRID_OK: break;
	case GRID_SYNTAX: usage_error("bad --grid '%s' (e.g. data=256,spatial=4)", text);
	case GRID_VALUE:
		number(bad, "--grid", GRID_MAX_GPUS); /* reports it and exits */
		usage_error("bad --grid '%s' (e.g. data=256,spatial=4)", text); /* bad cut short */
	case GRID_TOO_MANY: usage_error("--grid '%s' has too many GPUs", text);
	}
	/* pipeline=1 runs no pipeline (Megatron's default size): beside
	 * other dimensions the grid is theirs, data=8,pipeline=1 data's,
	 * priced as such; the 1 comes back where the strategy has a
	 * pipeline (dpc) */
	if (o->strat.grid[DIM_PIPELINE] == 1 &&
	    grid_dims(o->strat.grid) != DIM_BIT(DIM_PIPELINE))
		o->strat.grid[DIM_PIPELINE] = 0;
	k = grid_cover(grid_dims(o->strat.grid), &tie);
	if (tie != STRAT_COUNT) { /* the names hold no '%' */
		snprintf(fmt, sizeof fmt,
			 "--grid '%%s' is a grid of %s and of %s: name the dimension that tells "
			 "them apart",
			 strategy_name[k], strategy_name[tie]);
		usage_error(fmt, text);
	}
	if (k != STRAT_COUNT) {
		for (int d = 0; d < DIM_COUNT; d++)
			if ((strategy_info[k].dims & DIM_BIT(d)) && !o->strat.grid[d])
				o->strat.grid[d] = 1;
		o->strat.forced = true;
		o->strat.kind = k;
		o->grid_gpus = grid_gpus(o->strat.grid);
		return;
	}
	snprintf(fmt, sizeof fmt, "--grid '%%s' is not a strategy's grid (%s)",
		 grid_shape_list(shapes, sizeof shapes)); /* the names hold no '%' */
	usage_error(fmt, text);
}

static void
opt_nesting(Options *o, const char *arg, const Row *r)
{
	o->strat.nest = choice_index(r, arg);
}

static void
opt_optimizer(Options *o, const char *arg, const Row *r)
{
	if (!optimizer_parse(arg, &o->set.opt))
		unknown(r, arg);
}

static void
opt_cost_model(Options *o, const char *arg, const Row *r)
{
	if (!(o->strat.model = cost_model_find(arg)))
		unknown(r, arg);
}

static void
opt_spatial_split(Options *o, const char *arg, const Row *r)
{
	o->strat.spatial_split = choice_index(r, arg);
}

static void
opt_profile(Options *o, const char *arg, const Row *r)
{
	(void)r;
	o->profile = arg;
}

static void
opt_kernels(Options *o, const char *arg, const Row *r)
{
	(void)r;
	o->kernels = arg;
}

static void
opt_kernels_needed(Options *o, const char *arg, const Row *r)
{
	(void)arg, (void)r;
	o->kernels_needed = true;
}

static void
opt_sample_bytes(Options *o, const char *arg, const Row *r)
{
	(void)r;
	o->set.sample_bytes = (double)number(arg, "--sample-bytes", (int64_t)1 << 40);
}

/* "3x224x224" -> shape; exits with a usage error when malformed */
static void
opt_input_shape(Options *o, const char *s, const Row *r)
{
	const char *p = s;
	Shape *out = &o->input_shape;

	(void)r;
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
	o->onnx.input_shape = out;
}

static void
opt_strict(Options *o, const char *arg, const Row *r)
{
	(void)arg, (void)r;
	o->onnx.strict = true;
}

static void
opt_as_exported(Options *o, const char *arg, const Row *r)
{
	(void)arg, (void)r;
	o->set.as_exported = true;
}

static void
opt_conv_bias(Options *o, const char *arg, const Row *r)
{
	(void)arg, (void)r;
	o->set.conv_bias = true;
}

/* --dropout L1,L2,...: every layer named, none empty ('', ',', 'a,,b'),
 * else a usage error quoting the list escaped and cut. */
static void
opt_dropout(Options *o, const char *list, const Row *r)
{
	(void)r;
	if (!*list || *list == ',' || list[strlen(list) - 1] == ',' || strstr(list, ",,"))
		usage_error("--dropout: an empty layer name in '%s' (give LAYER,LAYER,...)", list);
	o->set.dropout_after = list;
}

static void
opt_schedule(Options *o, const char *arg, const Row *r)
{
	o->fix.schedule = true;
	if (!schedule_parse(arg, &o->set.schedule, &o->set.virtual_stages))
		unknown(r, arg);
}

static void
opt_micro_batches(Options *o, const char *arg, const Row *r)
{
	(void)r;
	o->set.micro_batches = number(arg, "--micro-batches", (int64_t)1 << 30);
}

static void
opt_channels_last(Options *o, const char *arg, const Row *r)
{
	(void)arg, (void)r;
	o->set.channels_last = true;
}

static void
opt_dump_after(Options *o, const char *arg, const Row *r)
{
	if (!pass_dumpable(arg))
		unknown(r, arg);
	o->dump_after = arg;
}

static void
opt_deps_only(Options *o, const char *arg, const Row *r)
{
	(void)arg, (void)r;
	o->deps = o->deps_only = true;
}

static void
opt_deps(Options *o, const char *arg, const Row *r)
{
	(void)arg, (void)r;
	o->deps = true;
}

static void
opt_dep_file(Options *o, const char *arg, const Row *r)
{
	(void)r;
	o->dep_file = arg;
}

static void
opt_dep_target(Options *o, const char *arg, const Row *r)
{
	(void)r;
	o->dep_target = arg;
}

static void
opt_dep_phony(Options *o, const char *arg, const Row *r)
{
	(void)arg, (void)r;
	o->dep_phony = true;
}

static void
opt_models(Options *o, const char *arg, const Row *r)
{
	(void)r;
	o->models = arg;
}

static void
opt_quiet(Options *o, const char *arg, const Row *r)
{
	(void)o, (void)arg, (void)r;
	diag_quiet = 1;
}

static void
opt_verbose(Options *o, const char *arg, const Row *r)
{
	(void)o, (void)arg, (void)r;
	diag_verbose = 1;
}

static void usage(FILE *f, const Options *o);

static void
opt_help(Options *o, const char *arg, const Row *r)
{
	(void)arg, (void)r;
	usage(stdout, o);
	exit(flush_stdout());
}

static void
opt_version(Options *o, const char *arg, const Row *r)
{
	(void)o, (void)arg, (void)r;
	printf("%s %s\n", PACKAGE_NAME, PACKAGE_VERSION);
	exit(flush_stdout());
}

static void
opt_no_batch(Options *o, const char *arg, const Row *r)
{
	(void)arg, (void)r;
	o->onnx.nobatch = true;
}

static void
opt_print_outputs(Options *o, const char *arg, const Row *r)
{
	(void)arg, (void)r;
	o->onnx.print_outputs = stdout;
}

static void list_options(void);

static void
opt_no_memos(Options *o, const char *arg, const Row *r)
{
	(void)arg, (void)r;
	o->no_memos = true;
}

static void
opt_list_options(Options *o, const char *arg, const Row *r)
{
	(void)o, (void)arg, (void)r;
	list_options();
	exit(flush_stdout());
}

/* ends the parse: parse_options returns at once */
static void
opt_tensor_dims(Options *o, const char *arg, const Row *r)
{
	(void)r;
	o->tensor_dims = arg;
}

/* Every option, in --help's order.  A row without help is hidden. */
static const Row rows[] = {
	{ .name = "gpus",
	  .letter = 'g',
	  .arg = "N",
	  .help = "GPUs to plan for",
	  .shown = &shown.gpus,
	  .handle = opt_gpus },
	{ .name = "sweep",
	  .help = "also analyse 1, 2, 4, ... GPUs up to N",
	  .handle = opt_sweep },
	{ .name = "search",
	  .help = "search every grid with the schedules, ZeRO stages,\n"
	          "recomputation and precisions no option fixes;\n"
	          "the best 10",
	  .handle = opt_search },
	{ .name = "search-time",
	  .arg = "MS",
	  .help = "stop the search after MS milliseconds",
	  .handle = opt_search_time },
	{ .name = "max-batch",
	  .help = "per strategy, the largest --batch-per-gpu that\n"
	          "fits with the other settings",
	  .handle = opt_max_batch },
	{ .name = "per-layer",
	  .help = "let each block of layers choose its own split\n"
	          "(data, filter, channel, spatial) by dynamic\n"
	          "programming",
	  .handle = opt_per_layer },
	{ .name = "format",
	  .runs = true,
	  .letter = 'f',
	  .arg = "FMT",
	  .help = "report format: text, json, csv, html (a page with\n"
	          "charts) or svg (one chart; default text)",
	  .what = "format",
	  .choice = format_choice,
	  .handle = opt_format },
	{ .name = "plot",
	  .arg = "NAME",
	  .help = "with -f svg: scaling (default), breakdown, memory\n"
	          "or layers",
	  .what = "plot",
	  .choice = plot_choice,
	  .handle = opt_plot },
	{ .name = "output",
	  .runs = true,
	  .letter = 'o',
	  .arg = "FILE",
	  .help = "write the report to FILE (atomically)",
	  .handle = opt_output },
	{ .name = "plan",
	  .arg = "KIND",
	  .help = "write, for the recommended strategy, a plan instead\n"
	          "of a report: generic, pytorch, deepspeed, megatron,\n"
	          "slurm (docs/plans.md)",
	  .what = "plan",
	  .choice = plan_choice,
	  .handle = opt_plan },
	{ .name = "layers",
	  .help = "include the per-layer table",
	  .handle = opt_layers },
	{ .name = "precision",
	  .runs = true,
	  .arg = "P",
	  .help = "fp32, tf32, amp-fp16, amp-bf16, fp16, bf16 or fp8",
	  .shown = &shown.prec,
	  .what = "precision",
	  .choice = precision_choice,
	  .handle = opt_precision },
	{ .name = "dataset-size",
	  .arg = "D",
	  .help = "samples per epoch",
	  .shown = &shown.dataset_size,
	  .handle = opt_dataset },
	{ .name = "dataset-tokens",
	  .arg = "N",
	  .help = "a sequence model's epoch in tokens (N / s samples)",
	  .shown = &shown.dataset_tokens,
	  .handle = opt_dataset_tokens },
	{ .name = "seq-len",
	  .runs = true,
	  .arg = "S",
	  .help = "a sequence model's tokens per sample where its input\n"
	          "leaves them open (an ONNX input's symbolic axis)",
	  .shown = &shown.seq_len,
	  .handle = opt_seq_len },
	{ .name = "system",
	  .runs = true,
	  .letter = 's',
	  .arg = "NAME|FILE",
	  .help = "the cluster: a built-in name, an ODL file with a\n"
	          "system block, or a ParaDL .plat",
	  .dflt = "(default dgx-h100)",
	  .handle = opt_system },
	{ .name = "list-systems",
	  .help = "print the built-in systems and exit",
	  .handle = opt_list_systems },
	{ .name = "implementation",
	  .runs = true,
	  .arg = "NAME|FILE",
	  .help = "the software stack: a built-in name or an\n"
	          "ODL file with an implementation block",
	  .shown = &shown.impl,
	  .handle = opt_implementation },
	{ .name = "list-implementations",
	  .help = "print the built-in implementations and exit",
	  .handle = opt_list_implementations },
	{ .name = "loader-workers",
	  .runs = true,
	  .arg = "N",
	  .help = "data-loader workers per loading process",
	  .shown = &shown.loader_workers,
	  .handle = opt_loader_workers },
	{ .name = "data",
	  .runs = true,
	  .arg = "KIND",
	  .help = "what a sample is as stored: jpeg, raw, stored,\n"
	          "synthetic (already on the GPU: no loader, no\n"
	          "copy) or auto",
	  .shown = &shown.data,
	  .what = "data kind",
	  .choice = data_choice,
	  .handle = opt_data },
	{ .name = "forward-only",
	  .runs = true,
	  .help = "iterations without backward (gradients still\n"
	          "exchanged, weights still updated)",
	  .handle = opt_forward_only },
	{ .name = "zero",
	  .runs = true,
	  .arg = "N",
	  .help = "ZeRO stage 0-3: optimizer state (1), gradients (2)\n"
	          "and parameters (3) sharded over the data-parallel GPUs",
	  .handle = opt_zero },
	{ .name = "sequence-parallel",
	  .runs = true,
	  .help = "with tensor parallelism: Megatron's sequence\n"
	          "parallelism (norms and dropouts on 1/t of the tokens,\n"
	          "each all-reduce a reduce-scatter and an all-gather)",
	  .handle = opt_sequence_parallel },
	{ .name = "fsdp",
	  .runs = true,
	  .arg = "full|hybrid",
	  .help = "PyTorch FSDP: full is stage 3; hybrid shards inside\n"
	          "each node and replicates across nodes",
	  .handle = opt_fsdp },
	{ .name = "recompute",
	  .runs = true,
	  .arg = "R",
	  .help = "activation recomputation: none (default), every:K\n"
	          "(checkpoints every K layers), full (the K that\n"
	          "keeps least) or selective (attention's softmax)",
	  .what = "recomputation",
	  .choice = recompute_choice,
	  .handle = opt_recompute },
	{ .name = "batch-per-gpu",
	  .letter = 'b',
	  .arg = "N",
	  .help = "weak scaling: samples per GPU",
	  .shown = &shown.batch_per_gpu,
	  .handle = opt_batch_per_gpu },
	{ .name = "global-batch",
	  .letter = 'B',
	  .arg = "N",
	  .help = "strong scaling: a fixed global batch",
	  .handle = opt_global_batch },
	{ .name = "strategies",
	  .arg = "LIST",
	  .help = "comma list of data,spatial,pipeline,filter,\n"
	          "channel,df,ds,dp,dpf,dpc,dps,tensor,dt,dpt,\n"
	          "context,dc,dtc,dptc (the last four only when\n"
	          "named)",
	  .dflt = "(default all)",
	  .what = "strategy",
	  .choice = strategy_choice,
	  .handle = opt_strategies },
	{ .name = "grid",
	  .arg = "DIM=N[,...]",
	  .help = "analyse only this process grid, e.g. data=256,spatial=4\n"
	          "(dimensions data, spatial, pipeline, filter,\n"
	          "channel, tensor, context; those of the smallest\n"
	          "strategy with them all left out are 1; their\n"
	          "product is the GPU count)",
	  .handle = opt_grid },
	{ .name = "nesting",
	  .runs = true,
	  .arg = "N",
	  .help = "model-inner (data outermost), data-inner (data\n"
	          "innermost) or pipeline-outer (stages outermost,\n"
	          "then data, the split inside: Megatron's order)\n"
	          "ranks on the nodes; default: the fastest for each\n"
	          "grid (measured runs: model-inner)",
	  .what = "nesting",
	  .choice = nesting_choice,
	  .handle = opt_nesting },
	{ .name = "optimizer",
	  .runs = true,
	  .arg = "OPT",
	  .help = "sgd, momentum, adam, adamw or rmsprop",
	  .shown = &shown.opt,
	  .what = "optimizer",
	  .choice = optimizer_choice,
	  .handle = opt_optimizer },
	{ .name = "cost-model",
	  .runs = true,
	  .arg = "M",
	  .help = "default, or paper: the tech report's Table III\n"
	          "formulas exactly",
	  .what = "cost model",
	  .choice = cost_model_choice,
	  .handle = opt_cost_model },
	{ .name = "spatial-split",
	  .runs = true,
	  .arg = "S",
	  .help = "auto (the best split point) or all (every layer\n"
	          "with spatial extent, as ParaDL's runs)",
	  .what = "spatial split",
	  .choice = split_choice,
	  .handle = opt_spatial_split },
	{ .name = "profile",
	  .arg = "FILE",
	  .help = "measured layer times replace the estimate for\n"
	          "the layers the file names: a CSV (columns\n"
	          "layer,forward_s,backward_s: seconds per sample)\n"
	          "or the trace of python3 -m oraclec.launch --trace",
	  .handle = opt_profile },
	{ .name = "kernels",
	  .runs = true,
	  .arg = "FILE",
	  .help = "a kernel table (measured kernels by shape,\n"
	          "docs/kernel-table.md) in place of the one the\n"
	          "system names: exact rows, else interpolated\n"
	          "along the batch, else the model",
	  .handle = opt_kernels },
	{ .name = "kernels-needed",
	  .help = "write, instead of a report, the kernel keys and\n"
	          "batches pricing the strategies looks up (CSV:\n"
	          "class,precision,layout,n,shape): what a probe\n"
	          "measures",
	  .handle = opt_kernels_needed },
	{ .name = "sample-bytes",
	  .runs = true,
	  .arg = "N",
	  .help = "stored bytes of one training sample",
	  .shown = &shown.sample_bytes,
	  .handle = opt_sample_bytes },
	{ .name = "input-shape",
	  .runs = true,
	  .arg = "DIMS",
	  .help = "per-sample input shape where the model leaves it\n"
	          "open, e.g. 3x224x224",
	  .handle = opt_input_shape },
	{ .name = "strict",
	  .runs = true,
	  .help = "an operator of unknown cost is an error",
	  .handle = opt_strict },
	{ .name = "as-exported",
	  .runs = true,
	  .help = "ONNX: analyse an eval-mode export's graph as it is",
	  .dflt = "(default: BatchNormalization folded into\n"
	          "convolutions is put back)",
	  .handle = opt_as_exported },
	{ .name = "conv-bias",
	  .runs = true,
	  .help = "ONNX: the convolutions before a folded\n"
	          "BatchNormalization had a bias (VGG-BN): kept",
	  .handle = opt_conv_bias },
	{ .name = "dropout",
	  .arg = "L1,L2,...",
	  .help = "a dropout after each named layer (the export removed it)",
	  .handle = opt_dropout },
	{ .name = "schedule",
	  .runs = true,
	  .arg = "S",
	  .help = "pipeline schedule: gpipe (default), 1f1b or\n"
	          "interleaved:V (V model chunks per GPU)",
	  .what = "schedule",
	  .choice = schedule_choice,
	  .hint = " with V of 2 to " TEXT(MAX_VIRTUAL_STAGES),
	  .handle = opt_schedule },
	{ .name = "micro-batches",
	  .runs = true,
	  .arg = "M",
	  .help = "micro-batches per iteration: the pipeline's, or\n"
	          "gradient accumulation steps",
	  .shown = &shown.micro_batches,
	  .handle = opt_micro_batches },
	{ .name = "channels-last",
	  .runs = true,
	  .help = "activations in NHWC (PyTorch's channels_last): tensor-core\n"
	          "convolutions need no layout transposes",
	  .handle = opt_channels_last },
	{ .name = "sync-bn",
	  .runs = true,
	  .arg = "K",
	  .help = "synchronised batch norm: statistics all-reduced over\n"
	          "groups of K data-parallel GPUs (torch's SyncBatchNorm)",
	  .handle = opt_sync_bn },
	{ .name = "dump-after",
	  .arg = "PASS",
	  .help = "print the IR after PASS (parse, training, shape,\n"
	          "cost, memory) instead of a report",
	  .what = "pass",
	  .choice = pass_choice,
	  .handle = opt_dump_after },
	{ .name = "deps-only",
	  .runs = true,
	  .dash = "M",
	  .help = "write the make rule of the files read, no report",
	  .handle = opt_deps_only },
	{ .name = "deps",
	  .runs = true,
	  .dash = "MD",
	  .help = "write the report and the make rule (to -MF,\n"
	          "else the -o file's name with .d)",
	  .handle = opt_deps },
	{ .name = "dep-file",
	  .runs = true,
	  .dash = "MF",
	  .arg = "FILE",
	  .help = "where the make rule goes",
	  .handle = opt_dep_file },
	{ .name = "dep-target",
	  .runs = true,
	  .dash = "MT",
	  .arg = "T",
	  .help = "the rule's target",
	  .dflt = "(default: the -o file)",
	  .handle = opt_dep_target },
	{ .name = "dep-phony",
	  .runs = true,
	  .dash = "MP",
	  .help = "add an empty rule for every file but the model",
	  .handle = opt_dep_phony },
	{ .name = "models",
	  .runs = true,
	  .arg = "DIR",
	  .help = "validate: where MODEL.odl or MODEL.onnx are",
	  .dflt = "(default examples)",
	  .handle = opt_models },
	{ .name = "quiet",
	  .runs = true,
	  .letter = 'q',
	  .help = "no warnings or notes",
	  .handle = opt_quiet },
	{ .name = "verbose",
	  .runs = true,
	  .letter = 'v',
	  .help = "say what is read, run (with timings) and written",
	  .handle = opt_verbose },
	{ .name = "help",
	  .runs = true,
	  .letter = 'h',
	  .help = "display this help and exit",
	  .handle = opt_help },
	{ .name = "version",
	  .runs = true,
	  .letter = 'V',
	  .help = "output version information and exit",
	  .handle = opt_version },
	/* Hidden options for tests/onnx-conformance.sh: each graph input is
	 * one whole sample (an implicit batch of 1 outside it); print the
	 * graph outputs' full shapes instead of a report; print a serialized
	 * TensorProto's dims.  For tests/cli.sh: list the options.  For
	 * tests/strategies.sh: every figure computed on every read (an engine
	 * without its memos), to compare whole reports with and without. */
	{ .name = "no-batch",
	  .handle = opt_no_batch },
	{ .name = "print-outputs",
	  .handle = opt_print_outputs },
	{ .name = "print-tensor-dims",
	  .arg = "FILE",
	  .handle = opt_tensor_dims },
	{ .name = "list-options",
	  .handle = opt_list_options },
	{ .name = "no-memos",
	  .runs = true,
	  .handle = opt_no_memos },
	{ 0 },
};
static const int nrows = sizeof rows / sizeof rows[0] - 1;

/* --list-options: every option of the table, one a line, the hidden ones
 * marked (tests/cli.sh checks --help against it) */
static void
list_options(void)
{
	for (int i = 0; i < nrows; i++)
		printf("--%s%s\n", rows[i].name, rows[i].help ? "" : " (hidden)");
}

/* One line of a default, its words wrapped at `width` columns: the
 * length of the part of d to print on this line. */
static size_t
default_line(const char *d, int width)
{
	size_t n = strcspn(d, "\n"), fit = 0;

	if (n <= (size_t)width)
		return n;
	for (size_t i = 0; i <= (size_t)width; i++) /* the last space that fits */
		if (d[i] == ' ')
			fit = i;
	return fit ? fit : n;
}

/* One entry of --help: "  -g, --gpus N", the help from column 27 (or two
 * spaces after a longer head), its lines under it, then the default:
 * its first line beside the help's last where it fits in 80 columns, the
 * rest on lines of their own, its words wrapped at 80 ('\n' in it: a
 * line break). */
static void
usage_row(FILE *f, const Row *r)
{
	char head[64];
	const char *p = r->help, *d = r->shown ? *r->shown : r->dflt, *nl;
	int len, col;

	if (r->letter)
		len = snprintf(head, sizeof head, "  -%c, --%s", r->letter, r->name);
	else if (r->dash)
		len = snprintf(head, sizeof head, "  -%s, --%s", r->dash, r->name);
	else
		len = snprintf(head, sizeof head, "      --%s", r->name);
	if (r->arg)
		len += snprintf(head + len, sizeof head - (size_t)len, " %s", r->arg);
	fprintf(f, "%s%*s", head, len + 2 > HELP_COLUMN ? 2 : HELP_COLUMN - len, "");
	for (;;) {
		nl = strchr(p, '\n');
		col = HELP_COLUMN + (int)(nl ? (size_t)(nl - p) : strlen(p));
		fprintf(f, "%.*s", (int)(nl ? (size_t)(nl - p) : strlen(p)), p);
		if (!nl)
			break;
		fprintf(f, "\n%*s", HELP_COLUMN, "");
		p = nl + 1;
	}
	for (bool first = true; d && *d; first = false) {
		size_t n = default_line(d, HELP_WIDTH - HELP_COLUMN);
		if (first && col + 1 + (int)n <= HELP_WIDTH)
			fputc(' ', f);
		else
			fprintf(f, "\n%*s", HELP_COLUMN, "");
		fprintf(f, "%.*s", (int)n, d);
		d += n + (d[n] == '\n' || d[n] == ' ');
	}
	fputc('\n', f);
}

/* Whether the help names choice c as a word of its own: not a part of a
 * longer name ("dp" is not named by "dpf"; a ':' ends a word unless a
 * letter or digit follows, as in "every:K"). */
static bool
names(const char *help, const char *c)
{
	static const char word[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
				   "0123456789_:-";
	size_t n = strlen(c);

	for (const char *p = help; (p = strstr(p, c)); p++)
		if ((p == help || !strchr(word, p[-1])) &&
		    (!p[n] || !strchr(word, p[n]) ||
		     (p[n] == ':' && !isalnum((unsigned char)p[n + 1]))))
			return true;
	return false;
}

/* The head of --help: oraclec's, validate's or calibrate's. */
static const char *const usage_head[] = {
	"Usage: %1$s [options] MODEL\n"
	"       %1$s validate [options] MEASURED.csv\n"
	"       %1$s calibrate [options] MEASURED.csv -o SYSTEM.odl\n"
	"\n"
	"Analyse a neural network for distributed training: layers, parameters,\n"
	"FLOPs and activation memory per sample.  MODEL is an ONNX file (.onnx),\n"
	"an ODL file (.odl) or a ParaDL model table (.net, .net_sc).\n",
	"Usage: %1$s validate [options] MEASURED.csv\n"
	"\n"
	"Predict every measured run of MEASURED.csv (columns model, strategy, gpus,\n"
	"grid, global_batch, dataset_size, measured_iteration_s, and optionally\n"
	"precision, implementation, peak_memory_bytes, paradl_iteration_s) and\n"
	"print predicted against measured, the accuracy 1 - |p - m| / m of each run,\n"
	"the mean per strategy and overall, and Kendall's tau of the ranking.  The\n"
	"options describe every run its columns leave open (docs/cli.md).\n",
	"Usage: %1$s calibrate [options] MEASURED.csv -o SYSTEM.odl\n"
	"\n"
	"Fit the system's free parameters (docs/model.md, \"Calibration\") to the\n"
	"measured runs of MEASURED.csv (validate's columns), write the calibrated\n"
	"system to SYSTEM.odl with what was fitted in its comment, and print the\n"
	"runs as validate does, predicted by the calibrated system.  The options\n"
	"describe every run its columns leave open.\n",
};

static void
usage(FILE *f, const Options *o)
{
	int mode = o->calibrate ? 2 : o->validate ? 1 : 0;

	fprintf(f, usage_head[mode], progname);
	fprintf(f, "\nOptions:\n");
	for (int i = 0; i < nrows; i++) {
		const char *c;
		if (!rows[i].help || (mode && !rows[i].runs))
			continue;
		/* the help names each choice the option's table has */
		for (int k = 0; rows[i].choice && (c = rows[i].choice(k)); k++)
			if (!names(rows[i].help, c))
				die("--help of --%s does not name its choice '%s'", rows[i].name,
				    c);
		usage_row(f, &rows[i]);
	}
	fprintf(f, "\n"
		   "Exit status: 0 %s, 1 bad input, 2 usage error.\n",
		mode ? "predicted" : "analysed");
	if (!mode)
		fprintf(f,
			"validate predicts every measured run of the CSV (columns as in the\n"
			"calibration set) and prints the accuracy 1 - |p - m| / m; --models DIR\n"
			"says where MODEL.odl or MODEL.onnx are (default examples).\n"
			"%s validate --help and %s calibrate --help say more.\n",
			progname, progname);
	fprintf(f, "See oraclec(1) for the description language and the JSON keys.\n");
}

/* getopt_long cannot parse gcc's multi-letter -MD -MF -MT -MP -M: they
 * become their long names before it runs. */
static void
gcc_dep_spellings(int argc, char **argv, char long_name[][32])
{
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		for (int k = 0; k < nrows; k++)
			if (rows[k].dash && argv[i][0] == '-' &&
			    strcmp(argv[i] + 1, rows[k].dash) == 0) {
				snprintf(long_name[k], 32, "--%s", rows[k].name);
				argv[i] = long_name[k];
			}
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

/* The options that do not go together, and what follows from the rest. */
static void
options_agree(int argc, char **argv, Options *o)
{
	const Chart *chart = o->backend->plots
				     ? chart_find(o->report.plot ? o->report.plot : charts[0].name)
				     : NULL;

	if (o->sweep && (o->strat.forced || o->validate))
		usage_error("--sweep does not go with %s", o->validate ? "validate" : "--grid");
	if (o->per_layer && (o->strat.forced || o->validate))
		usage_error("--per-layer does not go with %s", o->validate ? "validate" : "--grid");
	if (o->per_layer && o->set.micro_batches > 1)
		usage_error("--per-layer prices one pass of the batch a layer: %s does not go "
			    "with it",
			    "--micro-batches");
	if (o->per_layer && o->strat.model && !o->strat.model->layer)
		usage_error("--per-layer prices single layers: the %s cost model prices whole "
			    "strategies only", o->strat.model->name);
	if (o->max_batch && (o->validate || o->set.global_batch))
		usage_error("--max-batch finds the largest --batch-per-gpu: it does not go with %s",
			    o->validate ? "validate" : "--global-batch");
	if (o->search_time && !o->search)
		usage_error("%s", "--search-time limits --search: give --search too");
	if (o->search && (o->strat.forced || o->validate))
		usage_error("--search does not go with %s", o->validate ? "validate" : "--grid");
	if (o->kernels_needed && (o->validate || o->plan || o->format_given))
		usage_error("--kernels-needed writes the kernel keys of one model's pricing as "
			    "CSV, not %s",
			    o->validate ? "validate" : o->plan ? "a plan" : "-f's report");
	if (o->validate && !o->backend->runs)
		usage_error("-f %s draws a model's report: measured runs are written as text, json "
			    "or csv", o->backend->name);
	if (o->report.plot && !o->backend->plots)
		usage_error("--plot %s draws a chart of -f svg", o->report.plot);
	/* the page's scaling chart, and -f svg's, run the sweep themselves */
	if ((o->backend->sweeps || (chart && chart->sweeps)) && !o->strat.forced && !o->validate)
		o->sweep = true;
	if (chart && chart->sweeps && o->strat.forced)
		usage_error("--plot %s needs a sweep, which --grid excludes", chart->name);
	if (o->backend->command) /* the page shows it */
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
		usage_error("%s", o->validate
					  ? "--plan applies to a model, not to measured runs"
					  : "--plan writes a plan, not a report: drop --format");
	if (o->calibrate && !o->output)
		usage_error("%s", "calibrate writes the calibrated system: give -o FILE.odl");
	file_names(o);
}

void
parse_options(int argc, char **argv, Options *o)
{
	static char long_name[sizeof rows / sizeof rows[0]][32];
	struct option longopts[sizeof rows / sizeof rows[0] + 1] = { 0 };
	char shorts[2 + 2 * sizeof rows / sizeof rows[0]] = ":";
	size_t ns = 1;
	int c;

	*o = (Options){ .backend = backend_find("text"),
			.system = default_system,
			.set = settings_default,
			.strat = { .mask = (1u << STRAT_COUNT) - 1,
				   .spatial_split = SPLIT_AUTO,
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
	for (int i = 0; i < nrows; i++) {
		longopts[i] = (struct option){ rows[i].name,
					       rows[i].arg ? required_argument : no_argument, NULL,
					       CHAR_MAX + 1 + i };
		if (rows[i].letter) {
			shorts[ns++] = (char)rows[i].letter;
			if (rows[i].arg)
				shorts[ns++] = ':';
		}
	}
	gcc_dep_spellings(argc, argv, long_name);
	opterr = 0;
	while ((c = getopt_long(argc, argv, shorts, longopts, NULL)) != -1) {
		const Row *r = NULL;
		if (c > CHAR_MAX)
			r = &rows[c - CHAR_MAX - 1];
		for (int i = 0; !r && c != ':' && c != '?' && i < nrows; i++)
			if (rows[i].letter == c)
				r = &rows[i];
		if (r) {
			r->handle(o, optarg, r);
			if (o->tensor_dims)
				return;
		} else if (c == ':')
			usage_error("option '%s' requires an argument", argv[optind - 1]);
		else
			usage_error("unrecognized option '%s'", argv[optind - 1]);
	}
	if (optind == argc)
		usage_error("%s",
			    o->validate ? "no measured-runs CSV given" : "no model file given");
	if (optind + 1 < argc)
		usage_error("more than one model file given ('%s')", argv[optind + 1]);
	o->model = argv[optind];
	options_agree(argc, argv, o);
}
