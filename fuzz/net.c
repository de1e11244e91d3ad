/* net.c -- libFuzzer harness: ParaDL's .net/.net_sc model tables (as a
 * model file is read), then the passes, an analysis on abci and the
 * reports. */
#include "fuzz/common.h"

#include "frontend/frontend.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FileList files = { 0 };
	const System *s;
	Arena a;
	Graph *g;

	fuzz_init();
	arena_init(&a);
	g = paradl_load_net(fuzz_file("in.net", data, size), &a, &files);
	if (g && fuzz_passes(g) && (s = system_load("abci", &a, &files)))
		fuzz_analyse(g, s, 16, &a, &files);
	fuzz_done(&a, &files);
	return 0;
}
