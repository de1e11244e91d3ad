/* main.c -- the oraclec driver: the options (options.c), then each mode
 * (analyse, validate, calibrate) top to bottom: frontend -> the passes
 * and the analysis settings (plan/analysis.h, one pipeline for all) ->
 * the planning steps (plan/) -> backend.
 *
 * The only file that sees every layer, with options.c.  Exit status: 0
 * the analysis ran, 1 the input is wrong (diagnostics on stderr), 2
 * usage. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backends/backends.h"
#include "frontend/frontend.h"
#include "ir/ir.h"
#include "model/engine.h"
#include "model/kerneltable.h"
#include "options.h"
#include "plan/analysis.h"
#include "util/clock.h"
#include "util/escape.h"
#include "util/files.h"
#include "util/map.h"
#include "util/output.h"

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
 * runs), a system file, a profile, a kernel table; those that exist (one that does not is
 * an input error later, whatever the outputs are). */
enum { NAMED_INPUTS = 5 };

static int
named_inputs(const Options *o, Role r[NAMED_INPUTS])
{
	Role all[NAMED_INPUTS] = {
		{ o->validate ? "the measured runs" : "the model", o->model },
		{ "the system", builtin_system(o->system) ? NULL : o->system },
		{ "the implementation", !o->implementation || builtin_impl(o->implementation)
						? NULL
						: o->implementation },
		{ "the profile", o->profile },
		{ "the kernel table", o->kernels },
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
	ok = o->kernels_needed ? kernels_needed_emit(an->eng->needs, out[0].f)
	     : o->plan	       ? o->plan->emit(g, pl->an, pl, out[0].f)
			       : o->backend->emit(g, an, &o->report, out[0].f);
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
		diag_verbose_note("wrote %s: the make rule",
				  out[1].path ? out[1].path : "<stdout>");
	return EXIT_OK;
}

/* The implementation as a plan written to `output` names it, so that its
 * reader finds it (python/oraclec/launch.py looks as the plan names it,
 * then beside the plan): a built-in's name; a file as a path from the
 * plan's folder (from the working directory on standard output). */
static const char *
plan_implementation(const Implementation *im, const char *output, Arena *a)
{
	char *rel;
	const char *path;

	if (strcmp(im->source, "built-in") == 0)
		return im->name;
	if (!(rel = file_relative(im->source, output && strcmp(output, "-") != 0 ? output : NULL)))
		return im->source;
	path = arena_strdup(a, rel);
	free(rel);
	return path;
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

/* The passes on the model alone, up to the one --dump-after names: an
 * exit status.  An option the model contradicts (--seq-len) is a usage
 * error. */
static int
model_passes(const Options *o, Graph *g)
{
	if (g->nlayer == 0) {
		/* an ONNX graph whose nodes all fold away, an ODL model that only
		 * declares its input: nothing to analyse, rather than zeros */
		diag_error((Loc){ o->model, 0, 0 }, "the model has no layers");
		return EXIT_INPUT;
	}
	if (!seq_len_fits(g, &o->set))
		return EXIT_USAGE;
	return analysis_init(g, &o->set) && passes_run(g, NULL, PASS_MEMORY, o->dump_after)
		       ? EXIT_OK
		       : EXIT_INPUT;
}

/* The analysis of g on the system sys: the passes that need it, then the
 * planning steps of plan/ the options ask for: every strategy, the
 * search, per-layer splits, the sweep over GPU counts, the largest batch
 * and the advice. */
static bool
planning(const Options *o, const StrategyOpts *so, Graph *g, Analysis *an, Engine *eng,
	 Arena *a, const System *sys)
{
	double t0;

	if (!analysis_setup(an, eng, &o->set, g, sys))
		return false;
	diag_verbose_note("system %s (%s): %d GPUs per node", an->q.sys->name, an->q.sys->source,
			  an->q.sys->gpus_per_node);
	if (!passes_run(g, an, PASS_TIMING, NULL))
		return false;
	t0 = clock_ms();
	if (!strategies_run(g, an, so))
		return false;
	diag_verbose_note("strategies on %" PRId64 " GPUs: best %s (%.2f ms)", an->q.set.gpus,
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
		if (!per_layer_run(g, an, strategy_cost_model(so), pl))
			return false;
		an->per_layer = pl;
		diag_verbose_note(
			"per-layer: %d blocks (%d not series-parallel) x %d choices (%.2f ms)",
			pl->nblocks, pl->nwhole, pl->nstates, clock_ms() - t0);
	}
	if (o->kernels_needed) /* what pricing the strategies asked for looks up */
		return true;
	/* the one answer: the search's, the ranking's or the per-layer
	 * splits' */
	if (!decide(g, an, so, &o->set, &o->fix, a))
		return false;
	t0 = clock_ms();
	if (o->sweep && !sweep_run(g, an, &o->strat, a, progress))
		return false;
	if (o->sweep)
		diag_verbose_note("sweep: %d GPU counts (%.2f ms)", an->nsweep, clock_ms() - t0);
	if (o->max_batch) { /* the GPU count asked for only, not the sweep's */
		t0 = clock_ms();
		max_batch_run(g, an, so);
		diag_verbose_note("max batch: %.2f ms", clock_ms() - t0);
	}
	analysis_report_bytes(an, g, o->report.layers || o->backend->layers, a);
	return advice_run(g, an, &o->strat, a);
}

/* Whether --grid's context dimension fits the model: Megatron's context
 * parallelism splits a transformer's sequence; on a model without
 * attention it is a usage error, said once. */
static bool
context_fits(const Options *o, const Graph *g)
{
	Transformer tf;

	if (!o->strat.forced || o->strat.grid[DIM_CONTEXT] <= 0 || graph_transformer(g, &tf))
		return true;
	diag_error((Loc){ o->model, 0, 0 },
		   "--grid context=%lld: context parallelism splits a transformer's sequence "
		   "over the GPUs (ring attention), and the model has no attention (a softmax "
		   "over the product of two activations)",
		   (long long)o->strat.grid[DIM_CONTEXT]);
	return false;
}

/* oraclec MODEL: the model, its passes, the planning, then the report
 * (or the plan, or only the make rule). */
static int
analyse(const Options *o, Engine *eng, Arena *a, FileList *files)
{
	/* the system first: a wrong name or file is said before a model of
	 * minutes is read; its files are listed after the model's */
	FileList sysfiles = { 0 };
	const System *sys = system_load_with(o->system, o->set.impl, o->kernels, a, &sysfiles);
	Graph *g = sys ? model_read(o, a, files) : NULL;
	Analysis an;
	Placement pl;
	Modules mod;
	StrategyOpts so = o->strat;
	int status;

	for (int i = 0; g && i < sysfiles.n; i++)
		files_add(files, sysfiles.path[i]);
	files_free(&sysfiles);
	if (!g)
		return EXIT_INPUT;
	if (o->onnx.print_outputs)
		return flush_stdout();
	if ((status = model_passes(o, g)) != EXIT_OK)
		return status;
	if (o->dump_after)
		return flush_stdout();
	if (!context_fits(o, g))
		return EXIT_USAGE;
	if (o->plan && !plan_fits_model(o->plan, g))
		return EXIT_INPUT;
	if (o->plan) { /* a plan's pipeline stages begin at blocks: price those */
		modules_derive(g, &mod);
		so.cut_after = plan_cuts(g, &mod);
		so.megatron = o->plan->transformer;
	}
	if (o->kernels_needed) /* the pricing records what it looks up */
		eng->needs = kernel_needs_new();
	if (!planning(o, &so, g, &an, eng, a, sys))
		return EXIT_INPUT;
	kernel_needs_sort(eng->needs);
	if (!inputs_kept(o, a, files))
		return EXIT_USAGE;
	if (o->deps_only)
		return write_deps(o, files, o->dep_file);
	if (o->plan && !placement_run(g, &an, &so, &mod, &pl))
		return EXIT_INPUT;
	if (o->plan)
		pl.implementation = plan_implementation(&pl.an->q.impl, o->output, a);
	if (o->plan && o->plan->fits_placement && !o->plan->fits_placement(g, &pl))
		return EXIT_INPUT;
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
	if (!analysis_init(g, set) || !passes_run(g, NULL, PASS_MEMORY, NULL))
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
		if (!(r->implementation = implementation_load_at(r->impl, r->impl_loc, a, files))) {
			/* an error inside a file it names (a name unknown or a file
			 * unread is said at the row): which row named it */
			if ((strchr(r->impl, '/') || strchr(r->impl, '.')) &&
			    access(r->impl, R_OK) == 0) {
				char *name = esc_text_cut(r->impl, strlen(r->impl), NAME_SHOWN);
				diag_note(r->impl_loc, "'%s' is the implementation this run names",
					  name);
				free(name);
			}
			return false;
		}
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
measured_rows(const Options *o, Validation *v, const System *s, Engine *eng, Arena *a,
	      FileList *files)
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
			if (!analysis_measured(an, eng, &o->set, g, s, r))
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
	if (!o->backend->runs(v, out.f)) {
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
calibration_note(const Options *o, const System *orig, const Calibration *cal, int nrow, Arena *a,
		 char *buf, size_t size)
{
	size_t len = (size_t)snprintf(buf, size, "%s calibrated on %s (%d run%s):", orig->name,
				      o->model, nrow, nrow == 1 ? "" : "s");

	for (int j = 0; j < CALIB_PARAMS && len < size; j++) {
		const char *sep = j ? "," : "";
		if (!cal->fitted[j])
			len += (size_t)snprintf(buf + len, size - len, "%s %s not set", sep,
						calib_param_name[j]);
		else if (!cal->constrained[j])
			len += (size_t)snprintf(buf + len, size - len, "%s %s kept (%s)", sep,
						calib_param_name[j],
						cal->too_few[j] ? "too few runs to fit it too"
								: "the runs do not see it");
		else if (isnan(cal->rel_error[j]))
			len += (size_t)snprintf(buf + len, size - len, "%s %s x%.3f", sep,
						calib_param_name[j], cal->factor[j]);
		else
			len += (size_t)snprintf(buf + len, size - len, "%s %s x%.3f (+-%.0f%%)",
						sep, calib_param_name[j], cal->factor[j],
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
		diag_error(v->row[0].loc,
			   "the run cannot be predicted on %s (%s): nothing to "
			   "calibrate on",
			   s->name, first.reason ? first.reason : "no prediction");
	else
		diag_error(v->row[0].loc,
			   "none of the %d runs can be predicted on %s (this one: "
			   "%s): nothing to calibrate on",
			   v->nrow, s->name, first.reason ? first.reason : "no prediction");
	return false;
}

/* oraclec calibrate: fit, write the system to -o, report on stdout. */
static int
calibrate(const Options *o, Engine *eng, Arena *a, FileList *files)
{
	Validation v = { 0 };
	const System *orig = system_load_with(o->system, o->set.impl, o->kernels, a, files);
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
		s->kernels = written_path(s->kernels, a);
	}
	if (!(cr = measured_rows(o, &v, s, eng, a, files)) || !predictable(&v, cr, &so, s))
		return EXIT_INPUT;
	t0 = clock_ms();
	calibrate_run(s, cr, v.nrow, &so, &cal);
	diag_verbose_note("fit: %d runs, with leave-one-out (%.2f ms)", v.nrow, clock_ms() - t0);
	for (int i = 0; i < v.nrow; i++) {
		v.row[i].predicted = cr[i].predicted;
		v.row[i].note = isnan(cr[i].predicted) ? "not predicted" : "calibrated";
		v.row[i].impl_used = implementation_named(&cr[i].an->q.impl);
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
validate(const Options *o, Engine *eng, Arena *a, FileList *files)
{
	Validation v = { 0 };
	const System *s = system_load_with(o->system, o->set.impl, o->kernels, a, files);
	CalibRow *cr;
	StrategyOpts so = measured_strat(o);

	if (!(cr = measured_rows(o, &v, s, eng, a, files)))
		return EXIT_INPUT;
	for (int i = 0; i < v.nrow; i++) {
		Candidate k;
		v.row[i].impl_used = implementation_named(&cr[i].an->q.impl);
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
	Engine *eng;
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
	eng = engine_new(!o.no_memos);
	status = !inputs_kept(&o, &arena, NULL) ? EXIT_USAGE
		 : o.implementation && !(o.set.impl = implementation_load(o.implementation, &arena,
									  &files))
			 ? EXIT_INPUT
		 : o.calibrate ? calibrate(&o, eng, &arena, &files)
		 : o.validate  ? validate(&o, eng, &arena, &files)
			       : analyse(&o, eng, &arena, &files);
	engine_free(eng);
	arena_free(&arena);
	files_free(&files);
	free((char *)o.report.command);
	return status;
}
