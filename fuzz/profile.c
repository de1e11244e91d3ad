/* profile.c -- libFuzzer harness: --profile CSVs of measured layer times
 * applied to a fixed model, then the passes, an analysis and the reports
 * (fuzz_profile). */
#include "fuzz/common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_profile("in.csv", data, size);
	return 0;
}
