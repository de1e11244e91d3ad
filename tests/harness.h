/* harness.h -- what the cmocka unit tests share.
 *
 * A test that needs an arena, diagnostics or files gets a fixture (Fx)
 * through cmocka_unit_test_setup_teardown(test, fx_setup, fx_teardown):
 * an arena, diag_out pointed at a memory stream (the OpenVPN mock idea,
 * without link tricks), and a scratch directory for ODL files, removed
 * afterwards.  fx_diags() returns what was reported with the scratch
 * directory cut out of every path, so tests compare whole messages such
 * as "t.odl:3:5: error: unknown name 'z'".
 *
 * Every helper is static inline, so a test file uses what it needs and
 * -Wall stays quiet about the rest. */
#ifndef ORACLEC_TESTS_HARNESS_H
#define ORACLEC_TESTS_HARNESS_H

/* cmocka.h needs these first */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "frontend/frontend.h"
#include "grammar/ast.h"
#include "ir/ir.h"
#include "model/engine.h"
#include "plan/plan.h"
#include "util/arena.h"
#include "util/diag.h"
#include "util/files.h"

/* A file shipped in tests/data, found through $srcdir, which automake's
 * test harness exports (VPATH builds and make distcheck). */
static inline const char *
data_path(const char *name)
{
	static char buf[4096];
	const char *srcdir = getenv("srcdir");

	snprintf(buf, sizeof buf, "%s/tests/data/%s", srcdir ? srcdir : ".", name);
	return buf;
}

/* Field i (from 0) of a CSV line without quoted commas (the reference
 * data's files), copied into buf. */
static inline const char *
csv_field(const char *line, int i, char *buf, size_t n)
{
	const char *p = line;
	size_t k = 0;

	while (i > 0 && (p = strchr(p, ',')))
		p++, i--;
	if (!p)
		return "";
	while (p[k] && p[k] != ',' && p[k] != '\n' && k + 1 < n)
		buf[k] = p[k], k++;
	buf[k] = 0;
	return buf;
}

enum { FX_MAXMADE = 32 };

typedef struct Fx {
	Arena arena;
	FileList files;          /* what dsl_load read */
	FILE *diag;              /* diag_out while the test runs */
	char *diag_buf;
	size_t diag_len;
	char *text;              /* the last fx_diags() result */
	char dir[256];           /* scratch directory, "" until fx_write */
	char *made[FX_MAXMADE];  /* files and directories made there, in order */
	int nmade;
	Engine *eng;             /* the test's analyses keep their figures here */
} Fx;

static inline int
fx_setup(void **state)
{
	Fx *fx = xcalloc(1, sizeof *fx);

	arena_init(&fx->arena);
	fx->eng = engine_new(true);
	fx->diag = open_memstream(&fx->diag_buf, &fx->diag_len);
	if (!fx->diag)
		return -1;
	diag_out = fx->diag;
	diag_reset();
	*state = fx;
	return 0;
}

static inline int
fx_teardown(void **state)
{
	Fx *fx = *state;

	diag_out = NULL;
	diag_reset();
	engine_free(fx->eng);
	fclose(fx->diag);
	free(fx->diag_buf);
	free(fx->text);
	for (int i = fx->nmade - 1; i >= 0; i--) {
		remove(fx->made[i]);
		free(fx->made[i]);
	}
	if (fx->dir[0])
		rmdir(fx->dir);
	files_free(&fx->files);
	arena_free(&fx->arena);
	free(fx);
	return 0;
}

/* Everything reported since fx_setup, with "<scratch dir>/" removed. */
static inline const char *
fx_diags(Fx *fx)
{
	size_t dn = strlen(fx->dir);
	const char *s;
	char *q;

	fflush(fx->diag);
	free(fx->text);
	fx->text = xcalloc(fx->diag_len + 1, 1);
	q = fx->text;
	for (s = fx->diag_buf ? fx->diag_buf : ""; *s;) {
		if (dn && strncmp(s, fx->dir, dn) == 0 && s[dn] == '/') {
			s += dn + 1;
			continue;
		}
		*q++ = *s++;
	}
	*q = '\0';
	return fx->text;
}

static inline void
fx_made(Fx *fx, const char *path)
{
	if (fx->nmade == FX_MAXMADE)
		fail_msg("harness: more than %d scratch files", FX_MAXMADE);
	fx->made[fx->nmade] = xcalloc(strlen(path) + 1, 1);
	strcpy(fx->made[fx->nmade++], path);
}

/* Writes `text` to `name` (which may hold directories) in the scratch
 * directory and returns the full path, valid until teardown. */
static inline const char *
fx_write(Fx *fx, const char *name, const char *text)
{
	char *path;
	FILE *f;

	if (!fx->dir[0]) {
		const char *tmp = getenv("TMPDIR");
		snprintf(fx->dir, sizeof fx->dir, "%s/oraclec-test.XXXXXX",
			 tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(fx->dir))
			fail_msg("harness: cannot make a scratch directory in %s", fx->dir);
	}
	path = arena_printf(&fx->arena, "%s/%s", fx->dir, name);
	for (char *p = path + strlen(fx->dir) + 1; (p = strchr(p, '/')); p++) {
		struct stat st;
		*p = '\0';
		if (stat(path, &st) != 0) {
			if (mkdir(path, 0700) != 0)
				fail_msg("harness: cannot make %s", path);
			fx_made(fx, path);
		}
		*p = '/';
	}
	f = fopen(path, "w");
	if (!f)
		fail_msg("harness: cannot write %s", path);
	fputs(text, f);
	fclose(f);
	for (int i = 0; i < fx->nmade; i++)
		if (strcmp(fx->made[i], path) == 0)
			return path;
	fx_made(fx, path);
	return path;
}

/* ODL text -> Graph through the real frontend (the text is written to
 * t.odl in the scratch directory, since dsl_load reads a file); NULL
 * after diagnostics. */
static inline Graph *
fx_load(Fx *fx, const char *odl)
{
	return dsl_load(fx_write(fx, "t.odl", odl), &fx->arena, &fx->files);
}

/* The pipeline main.c runs, each pass followed by ir_verify as in a
 * checking build.  `upto` is the last pass: PASS_SHAPE, PASS_COST or
 * PASS_MEMORY.  NULL as soon as a step reports an error. */
static inline Graph *
fx_run(Fx *fx, const char *odl, unsigned upto)
{
	Graph *g = fx_load(fx, odl);

	if (!g)
		return NULL;
	assert_int_equal(ir_verify(g), 0);
	if (!shape_infer(g))
		return NULL;
	assert_int_equal(ir_verify(g), 0);
	if (upto >= PASS_COST) {
		if (!cost_annotate(g))
			return NULL;
		assert_int_equal(ir_verify(g), 0);
	}
	if (upto >= PASS_MEMORY) {
		if (!memory_annotate(g))
			return NULL;
		assert_int_equal(ir_verify(g), 0);
	}
	return g;
}

/* A chain of n ReLUs over an input of 1,000 (each saves its output:
 * 4,000 B per sample), through the memory pass. */
static inline Graph *
fx_relu_chain(Fx *fx, int n)
{
	char src[2048];
	int len = snprintf(src, sizeof src, "model m { input x: 1000; y0 = relu(x);");

	for (int i = 1; i < n && len < (int)sizeof src - 64; i++)
		len += snprintf(src + len, sizeof src - (size_t)len, " y%d = relu(y%d);", i, i - 1);
	snprintf(src + len, sizeof src - (size_t)len, " }");
	return fx_run(fx, src, PASS_MEMORY);
}

/* dsl_parse() on a string: it scans in place and wants two NULs after
 * the text, so the text is copied into the arena first. */
static inline Decl *
fx_parse(Fx *fx, const char *text)
{
	size_t n = strlen(text);
	char *buf = arena_alloc(&fx->arena, n + 2); /* zeroed: the two NULs */

	memcpy(buf, text, n);
	return dsl_parse("t.odl", buf, n, &fx->arena);
}

/* Equal to 1e-9 relative (and 1e-15 absolute, for zeros). */
#define NEAR(a, b) assert_true(fabs((double)(a) - (double)(b)) <= 1e-9 * fabs((double)(b)) + 1e-15)

/* The built-in abci system, in the fixture's arena; fails the test when
 * it does not load. */
static inline const System *
fx_abci(Fx *fx)
{
	const System *s = system_load("abci", &fx->arena, &fx->files);

	assert_non_null(s);
	return s;
}

/* The implementation system s runs by default (its impl, else the
 * defaults), for an Analysis a test builds by hand. */
static inline Implementation
fx_impl(const System *s)
{
	Implementation im;
	const char *want;

	if (s && s->impl)
		return *s->impl;
	implementation_defaults(&im);
	implementation_check(&im, &want);
	return im;
}

/* The layer called `name`; fails the test when there is none. */
static inline const Layer *
fx_layer(const Graph *g, const char *name)
{
	for (int i = 0; i < g->nlayer; i++)
		if (g->layer[i].name && strcmp(g->layer[i].name, name) == 0)
			return &g->layer[i];
	fail_msg("no layer named '%s'", name);
	return NULL;
}

/* The index of the layer called `name`; fails the test when there is none. */
static inline int
fx_index(const Graph *g, const char *name)
{
	return (int)(fx_layer(g, name) - g->layer);
}

/* The first output tensor of layer `name`. */
static inline const Tensor *
fx_out(const Graph *g, const char *name)
{
	return &g->tensor[fx_layer(g, name)->out[0]];
}

/* "64x112x112": the output shape of layer `name` (a static buffer). */
static inline const char *
fx_shape(const Graph *g, const char *name)
{
	static char buf[128];

	return shape_str(&fx_out(g, name)->shape, buf, sizeof buf);
}

/* "64x3x7x7": weight i of layer `name` (a static buffer). */
static inline const char *
fx_weight(const Graph *g, const char *name, int i)
{
	static char buf[128];
	const Layer *l = fx_layer(g, name);

	if (i >= l->nw)
		fail_msg("layer '%s' has %d weights, not %d", name, l->nw, i + 1);
	return shape_str(&l->w[i].shape, buf, sizeof buf);
}

/* Every layer name in IR order, separated by spaces (arena string). */
static inline const char *
fx_names(Fx *fx, const Graph *g)
{
	char *s = "";

	for (int i = 0; i < g->nlayer; i++)
		s = arena_printf(&fx->arena, "%s%s%s", s, i ? " " : "", g->layer[i].name);
	return s;
}

#define FX_TEST(f) cmocka_unit_test_setup_teardown(f, fx_setup, fx_teardown)

#endif
