/* common.c -- the harnesses' shared set-up and analysis (common.h). */
#define _GNU_SOURCE /* fopencookie, memmem */
#include "fuzz/common.h"

#include "backends/backends.h"
#include "frontend/frontend.h"
#include "plan/analysis.h"
#include "util/diag.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[64];
static FILE *devnull;

/* The diagnostics stream.  Messages are dropped, but a line that reports
 * an internal error ("internal:", as in "internal: ir_verify: ..." or a
 * frontend's "internal: ..." error; die()'s "internal error:" aborts
 * anyway) is a bug whatever the input, so it aborts: a finding.  Unless
 * the input itself holds "internal", which a quoted name could carry
 * into a message. */
static struct {
	char tail[16];    /* the end of the current line */
	bool own_text;    /* the input holds "internal" */
} diag_line;

static const char marker[] = "internal:";

/* Keeps the last bytes of the line in diag_line.tail, checking each
 * position for the marker; aborts on it. */
static ssize_t
diag_write(void *cookie, const char *buf, size_t n)
{
	char *t = diag_line.tail;
	size_t m = sizeof marker - 1;

	(void)cookie;
	for (size_t i = 0; i < n; i++) {
		if (buf[i] == '\n') {
			memset(t, 0, sizeof diag_line.tail);
			continue;
		}
		memmove(t, t + 1, sizeof diag_line.tail - 2);
		t[sizeof diag_line.tail - 2] = buf[i];
		if (!diag_line.own_text &&
		    memcmp(t + sizeof diag_line.tail - 1 - m, marker, m) == 0) {
			fprintf(stderr, "fuzz: a diagnostic reports an internal error\n");
			abort();
		}
	}
	return (ssize_t)n;
}

static void
cleanup(void)
{
	/* the harness files are the only ones ever made there */
	static const char *const names[] = { "in.onnx", "in.odl", "in.plat", "in.csv",
					     "model.odl" };
	char path[128];

	if (!dir[0])
		return;
	for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		unlink(path);
	}
	rmdir(dir);
}

void
fuzz_init(void)
{
	const char *tmp = getenv("TMPDIR");

	if (devnull)
		return;
	if (!(devnull = fopen("/dev/null", "w"))) {
		perror("fuzz: /dev/null");
		abort();
	}
	diag_out = fopencookie(NULL, "w", (cookie_io_functions_t){ .write = diag_write });
	if (!diag_out) {
		perror("fuzz: fopencookie");
		abort();
	}
	setvbuf(diag_out, NULL, _IONBF, 0); /* abort where the message is made */
	snprintf(dir, sizeof dir, "%s/oraclec-fuzz.XXXXXX",
		 tmp && *tmp && strlen(tmp) < 32 ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		perror("fuzz: mkdtemp");
		abort();
	}
	atexit(cleanup);
}

void
fuzz_input(const uint8_t *data, size_t size)
{
	if (memmem(data, size, "internal", 8))
		diag_line.own_text = true;
}

const char *
fuzz_file(const char *name, const uint8_t *data, size_t size)
{
	static char path[128];
	int fd;

	fuzz_input(data, size);
	snprintf(path, sizeof path, "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0) {
		perror(path);
		abort();
	}
	while (size > 0) {
		ssize_t n = write(fd, data, size);
		if (n <= 0) {
			perror(path);
			abort();
		}
		data += n;
		size -= (size_t)n;
	}
	close(fd);
	return path;
}

const char *
fuzz_model(const char *src)
{
	static char *path;

	if (!path)
		path = strdup(fuzz_file("model.odl", (const uint8_t *)src, strlen(src)));
	if (!path)
		abort();
	return path;
}

bool
fuzz_passes(Graph *g)
{
	analysis_init(g, &settings_default);
	return passes_run(g, NULL, PASS_MEMORY, NULL);
}

/* The plan of the analysis's best strategy (none when nothing fits, or
 * when the plan cannot be made), in every format, as oraclec --plan
 * makes it: pipelines priced at the modules' cut points. */
static void
plans(Graph *g, const System *s, const Settings *set, StrategyOpts o, Engine *eng)
{
	static const char *const kind[] = { "generic", "pytorch", "deepspeed", "megatron",
					    "slurm" };
	Analysis an;
	Modules mod;
	Placement pl;

	modules_derive(g, &mod);
	o.cut_after = plan_cuts(g, &mod);
	if (!analysis_setup(&an, eng, set, g, s) || !strategies_run(g, &an, &o) ||
	    !placement_run(g, &an, &o, &mod, &pl))
		return;
	for (size_t i = 0; i < sizeof kind / sizeof *kind; i++)
		plan_find(kind[i])->emit(g, &an, &pl, devnull);
}

enum { FUZZ_MAX_ANALYSED_LAYERS = 2000 };

void
fuzz_analyse(Graph *g, const System *s, int64_t gpus, Arena *a, FileList *files)
{
	static const ReportOpts layers = { .layers = true };
	StrategyOpts o = { .mask = (1u << STRAT_COUNT) - 1, .spatial_split = SPLIT_AUTO };
	Settings set = settings_default;
	Analysis an;
	Engine *eng;

	/* the analysis is linear in the layers but runs many times (the
	 * strategies, the advice's fewer GPUs, the plans, paper mode): a model
	 * of tens of thousands of layers takes a second without sanitizers,
	 * the fuzzer's timeout; they are parsed and checked, not analysed */
	if (g->nlayer > FUZZ_MAX_ANALYSED_LAYERS)
		return;
	set.gpus = gpus;
	if (!s)
		s = system_load(default_system, a, files);
	eng = engine_new(true);
	if (!analysis_setup(&an, eng, &set, g, s) || !passes_run(g, &an, PASS_TIMING, NULL)) {
		engine_free(eng);
		return;
	}
	if (strategies_run(g, &an, &o)) {
		text_emit(g, &an, &layers, devnull);
		json_emit(g, &an, &layers, devnull);
		csv_emit(g, &an, &layers, devnull);
		plans(g, s, &set, o, eng);
	}
	o.model = &cost_model_paper;
	o.spatial_split = SPLIT_ALL;
	if (analysis_setup(&an, eng, &set, g, s) && strategies_run(g, &an, &o))
		csv_emit(g, &an, &layers, devnull);
	engine_free(eng);
}

void
fuzz_done(Arena *a, FileList *files)
{
	arena_free(a);
	files_free(files);
	diag_reset();
	fflush(diag_out);
	memset(&diag_line, 0, sizeof diag_line);
}

void
fuzz_profile(const char *name, const uint8_t *data, size_t size)
{
	static const char model[] =
		"model m { input x: 3x32x32; conv1 = conv(x, 8, kernel=3, pad=1);"
		" relu = relu(conv1); f = flatten(relu); fc = fc(f, 10); }\n";
	FileList files = { 0 };
	const System *s;
	Arena a;
	Graph *g;

	fuzz_init();
	arena_init(&a);
	g = dsl_load(fuzz_model(model), &a, &files);
	if (!g)
		abort(); /* the fixed model must load */
	if (profile_load(fuzz_file(name, data, size), g, &files) && fuzz_passes(g) &&
	    (s = system_load("abci", &a, &files)))
		fuzz_analyse(g, s, 8, &a, &files);
	fuzz_done(&a, &files);
}
