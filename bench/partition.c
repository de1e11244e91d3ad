/* partition.c -- benchmark of the pipeline partitioner.
 *
 *   partition MODEL...
 *
 * For each model: the per-layer forward+backward times of one micro-batch
 * of 8 samples on the default system (the built-in abci) with the default
 * settings (oraclec's pipeline, plan/analysis.h), then for S = 1..64
 * stages the exact min-max partition (model/pipeline.c), timed all together, and
 * its slowest stage against two common heuristics: the uniform split
 * (equal layer counts) and the parameter-balanced split (contiguous
 * stages of balanced parameter counts, DeepSpeed's default
 * partition_method="parameters").  Prints a table per model. */
#include "frontend/frontend.h"
#include "model/model.h"
#include "plan/analysis.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { MAX_S = 64 };

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* slowest stage when cutting at end[] */
static double
bottleneck(const double *t, int L, const int *end, int n)
{
	double worst = 0;

	for (int i = 0, first = 0; i < n && first < L; first = end[i] + 1, i++) {
		double s = 0;
		for (int j = first; j <= end[i]; j++)
			s += t[j];
		if (s > worst)
			worst = s;
	}
	return worst;
}

static int
uniform(int L, int S, int *end)
{
	int n = 0;

	for (int i = 0; i < S; i++) {
		int e = (int)((long long)(i + 1) * L / S) - 1;
		if (e >= (n ? end[n - 1] + 1 : 0))
			end[n++] = e;
	}
	return n;
}

/* The model at path through oraclec's pipeline with the default settings
 * on the default system; NULL after errors (reported). */
static Graph *
analysed(const char *path, Analysis *an, Engine *eng, Arena *a, FileList *files)
{
	Graph *g = frontend_load(path, a, files, NULL);

	if (!g)
		return NULL;
	analysis_init(g, &settings_default);
	if (!passes_run(g, NULL, PASS_MEMORY, NULL) ||
	    !analysis_setup(an, eng, &settings_default, g, system_load(default_system, a, files)) ||
	    !passes_run(g, an, PASS_TIMING, NULL))
		return NULL;
	return g;
}

static int
bench(const char *path)
{
	Arena a;
	FileList files = { 0 };
	Graph *g;
	Analysis an;
	Engine *eng = engine_new(true);
	double *t, *w, *m, elapsed, t0;
	int *end, n, L;

	arena_init(&a);
	if (!(g = analysed(path, &an, eng, &a, &files))) {
		engine_free(eng);
		arena_free(&a);
		files_free(&files);
		return 1;
	}
	L = g->nlayer;
	t = xcalloc(L, sizeof *t);
	w = xcalloc(L, sizeof *w);
	m = xcalloc(L, sizeof *m);
	end = xcalloc(L + 1, sizeof *end);
	for (int i = 0; i < L; i++) {
		t[i] = span_time(&an, g, i, i, 8, 1, DIM_DATA);
		w[i] = (double)g->layer[i].cost.params;
	}
	t0 = now();
	for (int S = 1; S <= MAX_S; S++)
		pipeline_partition(t, m, L, INFINITY, S, end, &n);
	elapsed = now() - t0;
	printf("%s: %d layers, partitions into 1..%d stages in %.1f ms (target < 100 ms: %s)\n",
	       path, L, MAX_S, elapsed * 1e3, elapsed < 0.1 ? "met" : "NOT met");
	printf("%8s %14s %14s %14s %10s %10s\n", "stages", "optimal s", "uniform s",
	       "params s", "vs uniform", "vs params");
	for (int S = 2; S <= MAX_S && S <= L; S *= 2) {
		double opt = pipeline_partition(t, m, L, INFINITY, S, end, &n), uni, par;
		n = uniform(L, S, end);
		uni = bottleneck(t, L, end, n);
		pipeline_partition(w, m, L, INFINITY, S, end, &n); /* balanced parameters */
		par = bottleneck(t, L, end, n);
		printf("%8d %14.6f %14.6f %14.6f %9.2fx %9.2fx\n", S, opt, uni, par, uni / opt,
		       par / opt);
	}
	putchar('\n');
	free(t);
	free(w);
	free(m);
	free(end);
	engine_free(eng);
	arena_free(&a);
	files_free(&files);
	return 0;
}

int
main(int argc, char **argv)
{
	int status = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: partition MODEL...\n");
		return 2;
	}
	for (int i = 1; i < argc; i++)
		status |= bench(argv[i]);
	return status;
}
