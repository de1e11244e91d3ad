/* plat.c -- libFuzzer harness: ParaDL's .plat platform files (through
 * system_load, as --system reads them), then an analysis on the system
 * read: a small fixed model on 64 GPUs, both cost models, the reports. */
#include "fuzz/common.h"

#include "frontend/frontend.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char model[] =
		"model m { input x: 3x64x64; c = conv(x, 16, kernel=3, pad=1); r = relu(c);"
		" p = maxpool(r, kernel=2, stride=2); d = conv(p, 32, kernel=3, pad=1);"
		" f = flatten(d); o = fc(f, 10); }\n";
	FileList files = { 0 };
	const System *s;
	Arena a;
	Graph *g;

	fuzz_init();
	arena_init(&a);
	s = system_load(fuzz_file("in.plat", data, size), &a, &files);
	if (s) {
		g = dsl_load(fuzz_model(model), &a, &files);
		if (!g || !fuzz_passes(g))
			abort(); /* the fixed model must load */
		fuzz_analyse(g, s, 64, &a, &files);
	}
	fuzz_done(&a, &files);
	return 0;
}
