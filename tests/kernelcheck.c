/* kernelcheck -- a kernel table against oraclec's layers, for the shell
 * tests (tests/probe.sh):
 *
 *   kernelcheck TABLE LAYERS.json BATCH
 *
 * reads TABLE as oraclec does (frontend/kernels.c; exit 1 with its
 * diagnostic when it does not read), reads each layer's "kernel" object of
 * `oraclec M --layers -f json` back into a key (its shape must read back
 * to the same text: the text is canonical), looks it up at BATCH samples
 * (model/kerneltable.c) and prints
 *
 *   layers L keyed K table T interpolated I none N
 *
 * then one line per layer found in none ("none NAME SHAPE").  Exit 2 on a
 * bad command line or JSON, 3 when a key does not read back. */
#include "frontend/frontend.h"
#include "model/kerneltable.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

int
main(int argc, char **argv)
{
	Arena a;
	FileList files = { 0 };
	KernelTable *t;
	json_t *root, *layers, *l;
	json_error_t e;
	size_t i;
	int keyed = 0, count[3] = { 0 }, bad = 0;
	double batch;

	if (argc != 4 || (batch = atof(argv[3])) <= 0) {
		fprintf(stderr, "usage: kernelcheck TABLE LAYERS.json BATCH\n");
		return 2;
	}
	arena_init(&a);
	if (!(t = kernels_load(argv[1], LOC_NONE, &a, &files)))
		return 1;
	if (!(root = json_load_file(argv[2], 0, &e)) ||
	    !json_is_array(layers = json_object_get(root, "layers"))) {
		fprintf(stderr, "kernelcheck: %s: not oraclec's --layers JSON\n", argv[2]);
		return 2;
	}
	json_array_foreach(layers, i, l) {
		json_t *k = json_object_get(l, "kernel");
		const char *shape = json_string_value(json_object_get(k, "shape"));
		KernelKey key;
		KernelTime r;
		char text[KEY_TEXT];
		if (!json_is_object(k) || !shape)
			continue;
		keyed++;
		const char *cls = json_string_value(json_object_get(k, "class"));
		const char *prec = json_string_value(json_object_get(k, "precision"));
		const char *layout = json_string_value(json_object_get(k, "layout"));
		if (!kernel_key_read((Loc){ argv[2], 0, 0 }, cls, prec, layout, shape, &key)) {
			bad++;
			continue;
		}
		kernel_key_text(&key, text, sizeof text);
		if (strcmp(text, shape) != 0) {
			fprintf(stderr, "kernelcheck: '%s' reads back as '%s'\n", shape, text);
			bad++;
		}
		r = kernel_lookup(t, &key, batch * (double)json_integer_value(
						      json_object_get(k, "per_sample")));
		count[r.src]++;
		if (r.src == KS_NONE)
			printf("none %s %s\n", json_string_value(json_object_get(l, "name")),
			       shape);
	}
	printf("layers %zu keyed %d table %d interpolated %d none %d\n", json_array_size(layers),
	       keyed, count[KS_TABLE], count[KS_INTERPOLATED], count[KS_NONE]);
	json_decref(root);
	files_free(&files);
	arena_free(&a);
	return bad ? 3 : 0;
}
