/* kernels.c -- libFuzzer harness: kernel tables (docs/kernel-table.md)
 * read by kernels_load, then every layer of a small fixed model looked
 * up in what was read (model/kerneltable.c) at batches around its rows,
 * every time finite and positive or none. */
#include "fuzz/common.h"
#include "frontend/frontend.h"
#include "model/kerneltable.h"

#include <math.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char model[] =
	"model m { input x: 3x8x8; c = conv(x, 4, kernel=3, pad=1); b = batchnorm(c);"
	" r = relu(b); p = maxpool(r, kernel=2); f = flatten(p); y = fc(f, 10); }";

static void
check(double t)
{
	if (!isnan(t) && !(t > 0 && isfinite(t)))
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Arena a;
	FileList files = { 0 };
	KernelTable *t;
	Graph *g;

	fuzz_init();
	arena_init(&a);
	fuzz_input(data, size);
	t = kernels_load(fuzz_file("in.csv", data, size), LOC_NONE, &a, &files);
	g = t ? dsl_load(fuzz_model(model), &a, &files) : NULL;
	if (g && fuzz_passes(g)) {
		for (int i = 0; i < t->nrow; i++)
			if (i && kernel_key_cmp(&t->row[i - 1].key, &t->row[i].key) > 0)
				abort(); /* the rows sorted by key */
		for (int i = 0; i < g->nlayer; i++) {
			KernelKey k;
			int64_t per;
			for (int p = 0; p < PREC_COUNT; p++) {
				if (!kernel_key(g, i, (Precision)p, p & 1, &k, &per))
					continue;
				for (int n = 1; n <= 64; n *= 2) {
					KernelTime r = kernel_lookup(t, &k, n * 0.75 * (double)per);
					check(r.fwd), check(r.bwd_data), check(r.bwd_weight);
				}
			}
		}
		/* every row's own key finds it */
		for (int i = 0; i < t->nrow; i++) {
			KernelTime r = kernel_lookup(t, &t->row[i].key, (double)t->row[i].n);
			if (r.src != KS_TABLE || r.lo->n != t->row[i].n)
				abort();
		}
	}
	fuzz_done(&a, &files);
	return 0;
}
