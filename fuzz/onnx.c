/* onnx.c -- libFuzzer harness: the ONNX reader (pbstrip, protobuf-c
 * decode, folding, layer building) and everything after it: shape, cost
 * and memory passes, the strategies on 64 GPUs of abci, the reports.
 * Odd-sized inputs are read with --strict. */
#include "fuzz/common.h"

#include "frontend/frontend.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	OnnxOptions opt = { .strict = size & 1 };
	FileList files = { 0 };
	Arena a;
	Graph *g;

	fuzz_init();
	arena_init(&a);
	g = onnx_load(fuzz_file("in.onnx", data, size), &a, &files, &opt);
	if (g && fuzz_passes(g))
		fuzz_analyse(g, NULL, 64, &a, &files);
	fuzz_done(&a, &files);
	return 0;
}
