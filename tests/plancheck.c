/* plancheck.c -- checks the plans of --plan for consistency, for
 * tests/plans.sh.  It knows the formats (docs/plans.md), not how oraclec
 * makes them: module names are derived here on their own.
 *
 *   plancheck generic PLAN LAYERS     the rank table against the grid and
 *                                     the nodes; the stages against the
 *                                     layers (one name a line, in order)
 *   plancheck pytorch PLAN LAYERS     the mesh; every stage's modules cover
 *                                     the layers once, contiguously, in
 *                                     order, and name modules of the model
 *   plancheck deepspeed PLAN          batch sizes; PipelineModule's parts
 *   plancheck ranks PLAN              prints the generic rank table as
 *                                     "rank node gpu coord..." lines
 *   plancheck get PLAN KEY[.KEY...]   prints one value of a JSON plan (a
 *                                     number for a KEY indexes an array)
 *   plancheck modules PLAN            prints a pytorch plan's module names
 *
 * Exit status 0 when consistent, 1 with the reasons on stderr, 2 usage. */
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int bad;

static void
fail(const char *fmt, const char *a, long long x)
{
	fprintf(stderr, "plancheck: ");
	fprintf(stderr, fmt, a, x);
	fputc('\n', stderr);
	bad = 1;
}

static json_t *
load(const char *path)
{
	json_error_t e;
	json_t *j = json_load_file(path, 0, &e);

	if (!j) {
		fprintf(stderr, "plancheck: %s:%d: %s\n", path, e.line, e.text);
		exit(1);
	}
	return j;
}

static long long
num(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	if (!json_is_integer(v)) {
		fail("'%s' is not an integer (%lld)", key, 0);
		return -1;
	}
	return json_integer_value(v);
}

static double
real(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	if (!json_is_number(v)) {
		fail("'%s' is not a number (%lld)", key, 0);
		return -1;
	}
	return json_number_value(v);
}

/* ---- layers and their modules -------------------------------------------- */

typedef struct Layers {
	char **name;
	int n;
} Layers;

static void
free_layers(Layers *l)
{
	for (int i = 0; i < l->n; i++)
		free(l->name[i]);
	free(l->name);
}

static Layers
read_layers(const char *path)
{
	Layers l = { NULL, 0 };
	char buf[4096];
	FILE *f = fopen(path, "r");

	if (!f) {
		perror(path);
		exit(1);
	}
	while (fgets(buf, sizeof buf, f)) {
		buf[strcspn(buf, "\n")] = '\0';
		l.name = realloc(l.name, (size_t)(l.n + 1) * sizeof *l.name);
		l.name[l.n++] = strdup(buf);
	}
	fclose(f);
	return l;
}

/* The names a layer's modules may have.  The parts of its name: for
 * PyTorch's exporter ("/a/b.0/c/Op") every part but the operator, for ODL
 * ("a/b/c") every part; a module is named by the parts down to it, joined
 * by '.', each part written whole or as its last atom (the exporter writes
 * "layer2.0" for layer2.0 under layer2, "h.0" for transformer.h.0).
 * Fills c with every such name; deepest: those of all the parts. */
enum { MAX_NAMES = 256 };
typedef struct Names {
	char s[MAX_NAMES][512];
	bool deepest[MAX_NAMES];
	int n;
} Names;

static void
expand(const char **part, const size_t *len, int np, int d, const char *cur, Names *c)
{
	for (int opt = 0; opt < 2; opt++) {
		const char *p = part[d], *dot = NULL;
		size_t n = len[d];
		char next[512];
		if (opt) { /* the last atom */
			for (size_t i = 0; i < n; i++)
				if (p[i] == '.')
					dot = p + i;
			if (!dot)
				break;
			n = (size_t)(p + n - dot - 1);
			p = dot + 1;
		}
		snprintf(next, sizeof next, "%s%s%.*s", cur, d ? "." : "", (int)n, p);
		if (c->n < MAX_NAMES) {
			strcpy(c->s[c->n], next);
			c->deepest[c->n++] = d + 1 == np;
		}
		if (d + 1 < np)
			expand(part, len, np, d + 1, next, c);
	}
}

static void
module_names(const char *name, Names *c)
{
	bool scoped = name[0] == '/';
	const char *s = scoped ? name + 1 : name, *part[16];
	size_t len[16];
	int np = 0;

	c->n = 0;
	for (;;) {
		const char *slash = strchr(s, '/');
		if (scoped && !slash)
			break; /* the operator */
		if (np == 16)
			return;
		part[np] = s;
		len[np++] = slash ? (size_t)(slash - s) : strlen(s);
		if (!slash)
			break;
		s = slash + 1;
	}
	if (np)
		expand(part, len, np, 0, "", c);
}

/* Does module m contain the layer of names c? */
static bool
covers(const Names *c, const char *m)
{
	size_t n = strlen(m);

	for (int i = 0; i < c->n; i++)
		if (c->deepest[i] && strncmp(c->s[i], m, n) == 0 &&
		    (c->s[i][n] == '\0' || c->s[i][n] == '.'))
			return true;
	return false;
}

/* ---- generic ------------------------------------------------------------ */

static void
check_ranks(json_t *plan)
{
	json_t *grid = json_object_get(plan, "grid"), *ranks = json_object_get(plan, "ranks");
	long long p = num(plan, "gpus"), nodes = num(plan, "nodes");
	long long per = num(plan, "ranks_per_node");
	long long gpn = num(json_object_get(plan, "system"), "gpus_per_node");
	long long prod = 1, inner = 1, *count;
	size_t nd = json_array_size(grid);
	char *seen;

	for (size_t d = 0; d < nd; d++)
		prod *= num(json_array_get(grid, d), "size");
	if (nd)
		inner = num(json_array_get(grid, nd - 1), "size");
	if (prod != p)
		fail("the grid's product is not the %sGPU count %lld", "", p);
	if ((long long)json_array_size(ranks) != p)
		fail("the rank table has %s%lld ranks", "", (long long)json_array_size(ranks));
	if (per > gpn)
		fail("%smore ranks per node than GPUs per node (%lld)", "", per);
	seen = calloc((size_t)(nodes * gpn + 1), 1);
	count = calloc((size_t)nodes + 1, sizeof *count);
	for (size_t r = 0; r < json_array_size(ranks); r++) {
		json_t *k = json_array_get(ranks, r), *c = json_object_get(k, "coord");
		long long node = num(k, "node"), gpu = num(k, "gpu"), idx = 0, outer = 0;
		if (num(k, "rank") != (long long)r)
			fail("%srank %lld is out of order or repeated", "", num(k, "rank"));
		if (node < 0 || node >= nodes || gpu < 0 || gpu >= gpn) {
			fail("%srank %lld is on no GPU of the nodes", "", (long long)r);
			continue;
		}
		if (seen[node * gpn + gpu]++)
			fail("%stwo ranks on one GPU (rank %lld)", "", (long long)r);
		if (++count[node] > per)
			fail("%snode %lld holds more than ranks_per_node", "", node);
		if (json_object_size(c) != nd)
			fail("%srank %lld's coordinates are not the grid's", "", (long long)r);
		for (size_t d = 0; d < nd; d++) { /* row-major, the last fastest */
			json_t *dim = json_array_get(grid, d);
			long long size = num(dim, "size");
			long long x = num(c, json_string_value(json_object_get(dim, "name")));
			if (x < 0 || x >= size)
				fail("%srank %lld has a coordinate outside the grid", "",
				     (long long)r);
			idx = idx * size + x;
			if (d + 1 < nd)
				outer = outer * size + x;
		}
		if (idx != (long long)r)
			fail("%srank %lld is not its coordinates row-major", "", (long long)r);
		/* an inner group that fits in a node is inside one node */
		if (inner <= gpn && r % inner && node != num(json_array_get(ranks, r - 1), "node"))
			fail("%srank %lld's inner group spans nodes", "", (long long)r);
		(void)outer;
	}
	free(seen);
	free(count);
}

static void
check_stages(json_t *plan, const Layers *L)
{
	json_t *pl = json_object_get(plan, "pipeline"), *st = json_object_get(pl, "stages");
	json_t *grid = json_object_get(plan, "grid");
	long long next = 0, pipes = 0, maxmem = 0;

	if (json_is_null(pl))
		return;
	for (size_t d = 0; d < json_array_size(grid); d++)
		if (strcmp(json_string_value(json_object_get(json_array_get(grid, d), "name")),
			   "pipeline") == 0)
			pipes = num(json_array_get(grid, d), "size");
	if ((long long)json_array_size(st) != pipes)
		fail("%s%lld stages, not one per pipeline rank", "",
		     (long long)json_array_size(st));
	for (size_t i = 0; i < json_array_size(st); i++) {
		json_t *s = json_array_get(st, i);
		long long a = num(s, "first_index"), b = num(s, "last_index");
		if (num(s, "stage") != (long long)i || a != next || b < a || b >= L->n) {
			fail("%sstage %lld does not follow the previous one", "", (long long)i);
			return;
		}
		if (strcmp(json_string_value(json_object_get(s, "first")), L->name[a]) ||
		    strcmp(json_string_value(json_object_get(s, "last")), L->name[b]))
			fail("%sstage %lld names other layers than its indices", "", (long long)i);
		if (num(s, "memory_bytes") > maxmem)
			maxmem = num(s, "memory_bytes");
		next = b + 1;
	}
	if (next != L->n)
		fail("%sthe stages end at layer %lld, not the last", "", next - 1);
	if (maxmem != num(json_object_get(plan, "predicted"), "memory_per_gpu_bytes"))
		fail("%sthe largest stage's memory is not the prediction (%lld)", "", maxmem);
}

static void
check_batch(json_t *plan)
{
	json_t *b = json_object_get(plan, "batch");
	double global = (double)num(b, "global"), reps = (double)num(b, "replicas");
	double per = real(b, "per_replica"), micro = real(b, "micro_batch");
	double m = (double)num(b, "micro_batches");

	if (reps * per != global || micro * m != per)
		fail("%sthe batch does not split: %lld", "", (long long)global);
}

/* ---- pytorch ------------------------------------------------------------ */

static void
check_pytorch(json_t *plan, const Layers *L)
{
	json_t *mesh = json_object_get(plan, "device_mesh"),
	       *pp = json_object_get(plan, "pipeline");
	json_t *shape = json_object_get(mesh, "mesh_shape"), *stages, *split;
	long long world = 1, stage = 0, covered = 0;
	static Names c;

	for (size_t d = 0; d < json_array_size(shape); d++)
		world *= json_integer_value(json_array_get(shape, d));
	if (world != num(plan, "world_size"))
		fail("%sthe mesh's product is not the world size %lld", "", world);
	if (json_array_size(shape) != json_array_size(json_object_get(mesh, "mesh_dim_names")))
		fail("%sthe mesh has %lld sizes but other names", "",
		     (long long)json_array_size(shape));
	if (json_is_null(pp))
		return;
	stages = json_object_get(pp, "module_names_per_stage");
	split = json_object_get(pp, "split_spec");
	if ((long long)json_object_size(split) != (long long)json_array_size(stages) - 1)
		fail("%s%lld split points for the stages", "", (long long)json_object_size(split));
	/* each module names a module of the model */
	for (size_t s = 0; s < json_array_size(stages); s++) {
		json_t *mods = json_array_get(stages, s);
		if (!json_array_size(mods))
			fail("%sstage %lld has no module", "", (long long)s);
		for (size_t m = 0; m < json_array_size(mods); m++) {
			const char *name = json_string_value(json_array_get(mods, m));
			bool found = false;
			for (int i = 0; i < L->n && !found; i++) {
				module_names(L->name[i], &c);
				for (int d = 0; d < c.n && !found; d++)
					found = strcmp(c.s[d], name) == 0;
			}
			if (!found)
				fail("module '%s' is no module of the layers (stage %lld)", name,
				     (long long)s);
		}
	}
	/* the layers, in order, fall in one module each of stages 0, 1, ... */
	for (int i = 0; i < L->n; i++) {
		int hits = 0, at = -1;
		module_names(L->name[i], &c);
		if (!c.n)
			continue; /* code of the root forward */
		for (size_t s = 0; s < json_array_size(stages); s++) {
			json_t *mods = json_array_get(stages, s);
			for (size_t m = 0; m < json_array_size(mods); m++)
				if (covers(&c, json_string_value(json_array_get(mods, m))))
					hits++, at = (int)s;
		}
		if (hits != 1) {
			fail("layer '%s' is in %lld stages' modules", L->name[i], hits);
			continue;
		}
		if (at < stage || at > stage + 1)
			fail("layer '%s' breaks the stage order at stage %lld", L->name[i], at);
		if (at == stage + 1) { /* a stage begins: at its split point */
			const char *key = NULL;
			json_t *v;
			json_object_foreach(split, key, v) {
				if (covers(&c, key))
					break;
			}
			if (!key)
				fail("layer '%s' begins stage %lld but no split point", L->name[i],
				     at);
		}
		stage = at;
		covered++;
	}
	if (stage != (long long)json_array_size(stages) - 1)
		fail("%sthe layers end in stage %lld, not the last", "", stage);
	if (!covered)
		fail("%sno layer is in a stage (%lld)", "", 0);
}

/* ---- deepspeed ---------------------------------------------------------- */

static void
check_deepspeed(json_t *plan)
{
	json_t *own = json_object_get(plan, "oraclec"), *pp = json_object_get(own, "pipeline");
	long long tb = num(plan, "train_batch_size"),
		  mb = num(plan, "train_micro_batch_size_per_gpu");
	long long gas = num(plan, "gradient_accumulation_steps");
	long long dp = num(own, "data_parallel_size"), prev = -1;
	json_t *parts;

	if (mb * gas * dp != tb)
		fail("%strain_batch_size %lld is not micro x accumulation x data-parallel", "", tb);
	if (!json_object_get(plan, "fp16") || !json_object_get(plan, "bf16"))
		fail("%sno precision sections (%lld)", "", 0);
	if (json_is_null(pp)) {
		if (gas != 1)
			fail("%sgradient accumulation %lld without a pipeline", "", gas);
		return;
	}
	parts = json_object_get(pp, "parts");
	if ((long long)json_array_size(parts) != num(pp, "num_stages") + 1)
		fail("%s%lld parts for the stages", "", (long long)json_array_size(parts));
	for (size_t i = 0; i < json_array_size(parts); i++) {
		long long x = json_integer_value(json_array_get(parts, i));
		if ((i == 0 && x != 0) || x <= prev)
			fail("%sparts do not rise from 0 (%lld)", "", x);
		prev = x;
	}
	if (prev != (long long)json_array_size(json_object_get(pp, "layers")))
		fail("%sthe parts end at %lld, not at the last layer", "", prev);
}

/* ---- printing ----------------------------------------------------------- */

static void
print_ranks(json_t *plan)
{
	json_t *grid = json_object_get(plan, "grid"), *ranks = json_object_get(plan, "ranks");

	for (size_t r = 0; r < json_array_size(ranks); r++) {
		json_t *k = json_array_get(ranks, r), *c = json_object_get(k, "coord");
		printf("%lld %lld %lld", num(k, "rank"), num(k, "node"), num(k, "gpu"));
		for (size_t d = 0; d < json_array_size(grid); d++)
			printf(" %lld", num(c, json_string_value(json_object_get(
						   json_array_get(grid, d), "name"))));
		putchar('\n');
	}
}

static void
print_value(json_t *v, char *path)
{
	for (char *key = strtok(path, "."); key && v; key = strtok(NULL, "."))
		v = json_is_array(v) ? json_array_get(v, strtoul(key, NULL, 10))
				     : json_object_get(v, key);
	if (json_is_integer(v))
		printf("%lld\n", (long long)json_integer_value(v));
	else if (json_is_number(v))
		printf("%.17g\n", json_number_value(v));
	else if (json_is_string(v))
		printf("%s\n", json_string_value(v));
	else if (json_is_boolean(v))
		printf("%s\n", json_is_true(v) ? "true" : "false");
	else
		printf("null\n");
}

int
main(int argc, char **argv)
{
	json_t *plan;
	Layers L;

	if (argc < 3) {
		fprintf(stderr, "usage: plancheck generic|pytorch|deepspeed|ranks|get|modules "
				"PLAN [LAYERS|KEY]\n");
		return 2;
	}
	plan = load(argv[2]);
	if (strcmp(argv[1], "generic") == 0 && argc == 4) {
		L = read_layers(argv[3]);
		check_ranks(plan);
		check_stages(plan, &L);
		check_batch(plan);
		free_layers(&L);
	} else if (strcmp(argv[1], "pytorch") == 0 && argc == 4) {
		L = read_layers(argv[3]);
		check_pytorch(plan, &L);
		free_layers(&L);
	} else if (strcmp(argv[1], "deepspeed") == 0) {
		check_deepspeed(plan);
	} else if (strcmp(argv[1], "ranks") == 0) {
		print_ranks(plan);
	} else if (strcmp(argv[1], "get") == 0 && argc == 4) {
		print_value(plan, argv[3]);
	} else if (strcmp(argv[1], "modules") == 0) {
		json_t *st = json_object_get(json_object_get(plan, "pipeline"),
					     "module_names_per_stage");
		for (size_t s = 0; s < json_array_size(st); s++)
			for (size_t m = 0; m < json_array_size(json_array_get(st, s)); m++)
				puts(json_string_value(json_array_get(json_array_get(st, s), m)));
	} else {
		fprintf(stderr, "plancheck: bad usage\n");
		return 2;
	}
	json_decref(plan);
	return bad;
}
