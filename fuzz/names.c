/* names.c -- libFuzzer harness: names in generated files (util/escape.h,
 * docs/limits.md).  The input is a flag byte and up to 8 names separated
 * by NUL bytes.  They name an ONNX model built in memory (its input, node
 * and operator names, scoped as PyTorch's exporter does or raw, as the
 * flag says), the model, the system and its GPU and link, files read and
 * a make target; the model is read, analysed as a 4-stage pipeline on
 * 4 GPUs, and every output is written to memory and checked:
 *
 *   - text report and validation text: no control byte but newline;
 *   - JSON report and plans: parse, the names there (invalid UTF-8 as
 *     U+FFFD), PyTorch's split_spec has every stage's first module;
 *   - CSV report and validation CSV: every record has the header's field
 *     count, the names read back exactly;
 *   - Megatron and Slurm plans: no control byte but newline and tab;
 *   - the -MD rule (unless refused): no control byte but newline, one
 *     line per name;
 *   - the system as ODL (calibrate's writer) reads back with the same
 *     GPU and link strings.
 *
 * A broken invariant aborts, so libFuzzer reports it. */
#include "fuzz/common.h"

#include "backends/backends.h"
#include "frontend/frontend.h"
#include "plan/analysis.h"
#include "plan/plan.h"
#include "tests/onnxbuild.h"
#include "util/escape.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NAMES = 8, D = 16 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                                           \
	do {                                                                               \
		if (!(c)) {                                                                \
			fprintf(stderr, "fuzz_names: %s:%d: %s\n", __FILE__, __LINE__, #c); \
			abort();                                                           \
		}                                                                          \
	} while (0)

/* ---- the model ------------------------------------------------------------ */

static void
gemm(Arena *a, Onnx__GraphProto *g, const char *name, const char *x, const char *y)
{
	const char *w = arena_printf(a, "\x01w%zu", g->n_node);
	const char *b = arena_printf(a, "\x01" "b%zu", g->n_node);
	Onnx__NodeProto *n = ob_node(a, "Gemm", name, "x,w,b", y);

	n->input[0] = arena_strdup(a, x);
	n->input[1] = (char *)w;
	n->input[2] = (char *)b;
	ob_init(a, g, ob_tensor(a, w, FLOAT, DIMS(D, D)));
	ob_init(a, g, ob_tensor(a, b, FLOAT, DIMS(D)));
	ob_attr_i(a, n, "transB", 1);
	ob_add(a, g, n);
}

/* Node i's name: scoped, a stack of blocks with the unit nm[1] between
 * them; else the names themselves. */
static const char *
node_name(Arena *a, char **nm, bool scoped, int i, const char *scope)
{
	return scoped ? arena_printf(a, "/%s/%s", scope, i == 6 ? "Relu" : "Gemm") : nm[i % NAMES];
}

/* The model as ONNX bytes: input nm[0], Gemm and Relu nodes, a node of
 * the unknown operator nm[2] (its output declared). */
static size_t
model(Arena *a, char **nm, bool scoped, uint8_t **buf)
{
	static const char *const scope[] = { "embed", "layers.0", NULL, "layers.1", "layers.2",
					     "head" };
	Onnx__GraphProto *g = ob_graph(a);
	const char *x = *nm[0] ? nm[0] : "x";

	ob_input(a, g, ob_vinfo(a, x, DIMS(SYM, D)));
	for (int i = 0; i < 6; i++) {
		const char *y = arena_printf(a, "\x01t%d", i);
		gemm(a, g, node_name(a, nm, scoped, i, scope[i] ? scope[i] : nm[1]), x, y);
		x = y;
	}
	ob_add(a, g, ob_node(a, "Relu", node_name(a, nm, scoped, 6, "tail"), x, "\x01r"));
	if (*nm[2]) {
		ob_add(a, g, ob_node(a, nm[2], scoped ? arena_printf(a, "/tail/%s", nm[2]) : nm[2],
				     "\x01r", "\x01y"));
		ob_value_info(a, g, ob_vinfo(a, "\x01y", DIMS(SYM, D)));
	}
	return ob_pack(a, ob_model(a, g), buf);
}

/* ---- checking outputs ------------------------------------------------------- */

typedef struct Out {
	char *buf;
	size_t len;
	FILE *f;
} Out;

static void
out_begin(Out *o)
{
	o->buf = NULL;
	o->len = 0;
	CHECK((o->f = open_memstream(&o->buf, &o->len)));
}

static void
out_end(Out *o)
{
	CHECK(fclose(o->f) == 0);
}

/* No control byte in the output but those in `allowed`. */
static void
no_control(const Out *o, const char *allowed)
{
	for (size_t i = 0; i < o->len; i++) {
		unsigned char c = (unsigned char)o->buf[i];
		CHECK(!(c < 0x20 || c == 0x7f) || (c && strchr(allowed, c)));
	}
}

/* s as JSON holds it */
static bool
json_is(json_t *j, const char *s)
{
	char *fixed = utf8_fix(s);
	bool same = json_is_string(j) && strcmp(json_string_value(j), fixed) == 0;

	free(fixed);
	return same;
}

static json_t *
json_of(const Out *o)
{
	json_error_t err;
	json_t *j = json_loadb(o->buf, o->len, 0, &err);

	CHECK(j);
	return j;
}

/* At buf[i], a quote that ends a quoted field (not a doubled one). */
static bool
closing(const Out *o, size_t i)
{
	return o->buf[i] == '"' && !(i + 1 < o->len && o->buf[i + 1] == '"');
}

/* One RFC 4180 field from buf[*i] on, its value to f; *i is left at the
 * byte after it, which must be a comma or a newline. */
static void
csv_field(const Out *o, size_t *i, FILE *f)
{
	size_t j = *i;

	if (o->buf[j] == '"') {
		for (j++; j < o->len && !closing(o, j); j++) {
			if (o->buf[j] == '"')
				j++; /* a doubled quote */
			fputc(o->buf[j], f);
		}
		CHECK(j < o->len);
		j++;
	} else {
		for (; j < o->len && o->buf[j] != ',' && o->buf[j] != '\n'; j++) {
			CHECK(o->buf[j] != '"' && o->buf[j] != '\r');
			fputc(o->buf[j], f);
		}
	}
	CHECK(j < o->len && (o->buf[j] == ',' || o->buf[j] == '\n'));
	*i = j;
}

/* RFC 4180: the number of records, each of `fields` fields (0: as many
 * as the header's); the first `nfirst` fields of record `row` (1: the
 * first after the header) must be first[]. */
static int
csv_records(const Out *o, int fields, int row, const char **first, int nfirst)
{
	size_t i = 0;
	int records = 0;

	while (i < o->len) {
		int n = 0;
		char end;
		do {
			char *v = NULL;
			size_t vl = 0;
			FILE *f = open_memstream(&v, &vl);
			CHECK(f);
			csv_field(o, &i, f);
			CHECK(fclose(f) == 0);
			if (records == row && n < nfirst)
				CHECK(vl == strlen(first[n]) && memcmp(v, first[n], vl) == 0);
			free(v);
			n++;
			end = o->buf[i++];
		} while (end == ',');
		if (fields == 0)
			fields = n;
		CHECK(n == fields);
		records++;
	}
	return records;
}

static void
reports(const Graph *g, const Analysis *an)
{
	static const ReportOpts layers = { .layers = true };
	const char *first[2] = { g->name, an->q.sys->name };
	json_t *j;
	Out o;

	out_begin(&o);
	CHECK(text_emit(g, an, &layers, o.f));
	out_end(&o);
	no_control(&o, "\n");
	free(o.buf);

	out_begin(&o);
	CHECK(json_emit(g, an, &layers, o.f));
	out_end(&o);
	j = json_of(&o);
	CHECK(json_is(json_object_get(json_object_get(j, "model"), "name"), g->name));
	CHECK(json_is(json_object_get(json_object_get(j, "system"), "name"), an->q.sys->name));
	CHECK(json_is(json_object_get(json_object_get(json_object_get(j, "system"), "gpu"), "name"),
		      an->q.sys->gpu));
	CHECK(json_array_size(json_object_get(j, "layers")) == (size_t)g->nlayer);
	json_decref(j);
	free(o.buf);

	out_begin(&o);
	CHECK(csv_emit(g, an, &layers, o.f));
	out_end(&o);
	CHECK(csv_records(&o, 0, 1, first, 2) >= 2);
	free(o.buf);
}

static void
plans(const Graph *g, const Analysis *an, const Placement *pl)
{
	json_t *j, *p;
	Out o;

	out_begin(&o);
	CHECK(plan_generic_emit(g, an, pl, o.f));
	out_end(&o);
	j = json_of(&o);
	CHECK(json_is(json_object_get(json_object_get(j, "model"), "name"), g->name));
	p = json_object_get(j, "pipeline");
	CHECK(!pl->nstage || json_array_size(json_object_get(p, "stages")) == (size_t)pl->nstage);
	json_decref(j);
	free(o.buf);

	out_begin(&o);
	CHECK(plan_pytorch_emit(g, an, pl, o.f));
	out_end(&o);
	j = json_of(&o);
	CHECK(json_is(json_object_get(j, "model"), g->name));
	p = json_object_get(j, "pipeline");
	for (int i = 1; i < pl->nstage; i++) {
		char *key = utf8_fix(pl->mod.unit[pl->stage[i].ufirst].name);
		CHECK(json_object_get(json_object_get(p, "split_spec"), key));
		free(key);
	}
	CHECK(!pl->nstage ||
	      json_array_size(json_object_get(p, "module_names_per_stage")) == (size_t)pl->nstage);
	json_decref(j);
	free(o.buf);

	out_begin(&o);
	CHECK(plan_deepspeed_emit(g, an, pl, o.f));
	out_end(&o);
	j = json_of(&o);
	CHECK(json_is(json_object_get(json_object_get(j, "oraclec"), "model"), g->name));
	json_decref(j);
	free(o.buf);

	out_begin(&o);
	CHECK(plan_megatron_emit(g, an, pl, o.f));
	out_end(&o);
	no_control(&o, "\n\t");
	free(o.buf);

	out_begin(&o);
	CHECK(plan_slurm_emit(g, an, pl, o.f));
	out_end(&o);
	no_control(&o, "\n\t");
	free(o.buf);
}

/* The make rule: refused, or one line per name (two more per -MP rule). */
static void
depfile(char **nm)
{
	char *paths[3] = { nm[6], nm[7], nm[5] };
	FileList files = { .path = paths, .n = 3, .cap = 3 };
	size_t lines = 0;
	Out o;

	if (!depfile_check(&files, nm[7]))
		return;
	for (int i = 0; i < 3; i++)
		if (!*nm[i + 5])
			return; /* no file is named "" */
	out_begin(&o);
	CHECK(depfile_emit(&files, nm[7], true, o.f));
	out_end(&o);
	no_control(&o, "\n");
	for (size_t i = 0; i < o.len; i++)
		lines += o.buf[i] == '\n';
	CHECK(lines == 1 + 3 + 2 * 2);
	CHECK(!memchr(o.buf, ';', o.len));
	free(o.buf);
}

/* The system as calibrate writes it, read back. */
static void
sysfile(const System *s, char **nm, Arena *a)
{
	FileList files = { 0 };
	const System *back;
	Out o;

	out_begin(&o);
	CHECK(system_emit(s, arena_printf(a, "%s_calibrated", s->name), nm[6], o.f));
	out_end(&o);
	back = system_load(fuzz_file("in.odl", (const uint8_t *)o.buf, o.len), a, &files);
	CHECK(back);
	CHECK(strcmp(back->gpu, s->gpu) == 0 && strcmp(back->intra, s->intra) == 0);
	files_free(&files);
	free(o.buf);
}

static void
validation(char **nm)
{
	Measured row[2] = {
		{ .model = nm[7], .kind = STRAT_DATA, .grid_text = nm[6], .gpus = 4,
		  .measured = 0.1, .paradl = NAN, .predicted = 0.2, .note = nm[5], .acc = 0.5,
		  .acc_paradl = NAN, .peak = NAN, .predicted_peak = NAN, .acc_mem = NAN,
		  .impl_used = nm[4] },
		{ .model = nm[3], .kind = STRAT_PIPELINE, .grid_text = "pipeline=4", .gpus = 4,
		  .measured = 0.1, .paradl = NAN, .predicted = NAN, .note = NULL, .acc = NAN,
		  .acc_paradl = NAN, .peak = NAN, .predicted_peak = NAN, .acc_mem = NAN },
	};
	Validation v = { .row = row, .nrow = 2 };
	const char *first[1] = { nm[7] };
	Out o;

	validation_score(&v);
	out_begin(&o);
	CHECK(validation_text(&v, o.f));
	out_end(&o);
	no_control(&o, "\n");
	free(o.buf);
	out_begin(&o);
	CHECK(validation_csv(&v, o.f));
	out_end(&o);
	/* no precision, no peak; the implementation's name last */
	CHECK(csv_records(&o, 11, 1, first, 1) == 3);
	free(o.buf);
}

/* ---- the input ------------------------------------------------------------------ */

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	StrategyOpts opt = { .mask = 1u << STRAT_PIPELINE, .spatial_split = SPLIT_AUTO,
			     .forced = true, .kind = STRAT_PIPELINE,
			     .grid = { [DIM_PIPELINE] = 4 } };
	OnnxOptions onnx = { 0 };
	FileList files = { 0 };
	char *nm[NAMES];
	const char *p, *end;
	bool scoped;
	uint8_t *buf;
	size_t len;
	const System *abci;
	Analysis an;
	Settings set = settings_default;
	Placement pl;
	Modules mod;
	System *s;
	Graph *g;
	Arena a;

	if (size < 1)
		return 0;
	fuzz_init();
	fuzz_input(data, size); /* names become file names in messages */
	arena_init(&a);
	scoped = !(data[0] & 1);
	p = (const char *)data + 1;
	end = (const char *)data + size;
	for (int i = 0; i < NAMES; i++) {
		const char *z = p < end ? memchr(p, '\0', (size_t)(end - p)) : NULL;
		size_t n = p < end ? (z ? (size_t)(z - p) : (size_t)(end - p)) : 0;
		nm[i] = arena_strndup(&a, p, n);
		p += n + (p < end);
	}
	validation(nm);
	depfile(nm);
	len = model(&a, nm, scoped, &buf);
	g = onnx_load(fuzz_file("in.onnx", buf, len), &a, &files, &onnx);
	abci = g && fuzz_passes(g) ? system_load("abci", &a, &files) : NULL;
	if (abci) {
		s = arena_alloc(&a, sizeof *s);
		*s = *abci;
		g->name = nm[3];
		g->source = nm[7];
		s->name = nm[4];
		s->gpu = nm[5];
		s->intra = nm[6];
		s->source = nm[7];
		sysfile(s, nm, &a);
		set.gpus = 4;
		set.dataset_size = 1000;
		set.sample_bytes = 4.0 * D;
		modules_derive(g, &mod);
		opt.cut_after = plan_cuts(g, &mod);
		Engine *eng = engine_new(true);
		if (analysis_setup(&an, eng, &set, g, s) && passes_run(g, &an, PASS_TIMING, NULL) &&
		    strategies_run(g, &an, &opt)) {
			analysis_report_bytes(&an, g, true, &a);
			reports(g, &an);
			if (placement_run(g, &an, &opt, &mod, &pl))
				plans(g, &an, &pl);
		}
		engine_free(eng);
	}
	fuzz_done(&a, &files);
	return 0;
}
