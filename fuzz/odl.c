/* odl.c -- libFuzzer harness: the ODL lexer, parser and elaboration
 * (blocks, repeats, includes relative to the input's directory), the
 * passes, the strategies and the reports; and the same file read as a
 * `system` block, analysed with when it is one (on 512 GPUs). */
#include "fuzz/common.h"

#include "frontend/frontend.h"


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FileList files = { 0 };
	const char *path;
	const System *s;
	Arena a;
	Graph *g;

	static const char model[] =
		"model m { input x: 3x32x32; c = conv(x, 8, kernel=3, pad=1);"
		" r = relu(c); f = flatten(r); o = fc(f, 10); }\n";
	const char *mpath;

	fuzz_init();
	mpath = fuzz_model(model); /* before the input, which may include it */
	arena_init(&a);
	path = fuzz_file("in.odl", data, size);
	g = dsl_load(path, &a, &files);
	if (g && fuzz_passes(g))
		fuzz_analyse(g, NULL, 64, &a, &files);
	fuzz_done(&a, &files);

	/* a system file: analysed with a fixed small model */
	arena_init(&a);
	s = system_load(path, &a, &files);
	if (s) {
		g = dsl_load(mpath, &a, &files);
		if (g && fuzz_passes(g))
			fuzz_analyse(g, s, 512, &a, &files);
	}
	fuzz_done(&a, &files);
	return 0;
}
