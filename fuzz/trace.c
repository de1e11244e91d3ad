/* trace.c -- libFuzzer harness: --profile traces (the Chrome trace of
 * python3 -m oraclec.launch --trace, frontend/trace.c) given to a fixed
 * model whose layers are named as the seeds' modules, then the passes
 * (the trace's modules given to the layers, passes/trace.c), an analysis
 * and the reports. */
#include "fuzz/common.h"

#include "frontend/frontend.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
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
	if (profile_load(fuzz_file("in.json", data, size), g, &files) && fuzz_passes(g) &&
	    (s = system_load("abci", &a, &files)))
		fuzz_analyse(g, s, 8, &a, &files);
	fuzz_done(&a, &files);
	return 0;
}
