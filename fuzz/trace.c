/* trace.c -- libFuzzer harness: --profile traces (the Chrome trace of
 * python3 -m oraclec.launch --trace, frontend/trace.c) given to a fixed
 * model whose layers are named as the seeds' modules, then the passes
 * (the trace's modules given to the layers, passes/trace.c), an analysis
 * and the reports (fuzz_profile). */
#include "fuzz/common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_profile("in.json", data, size);
	return 0;
}
