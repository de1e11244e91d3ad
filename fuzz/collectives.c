/* collectives.c -- libFuzzer harness: tables of measured collectives
 * (nccl-tests' output, docs/systems.md "Measured collectives") read by
 * collectives_load, then every run looked up (model/colltable.c) at its
 * own sizes, between them and past them, and each collective found at
 * rank counts around its runs: the runs sorted by collective and ranks,
 * every size ascending, every time finite and positive where a run covers
 * the size, no time where it does not. */
#include "fuzz/common.h"
#include "frontend/frontend.h"
#include "model/colltable.h"

#include <math.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check(const CollRun *r, double bytes)
{
	double t = -1;
	bool in = r->n > 0 && bytes >= r->bytes[0] && bytes <= r->bytes[r->n - 1];

	if (colltable_time(r, bytes, &t) != in || (in && !(t > 0 && isfinite(t))))
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Arena a;
	FileList files = { 0 };
	const CollTable *t;

	fuzz_init();
	arena_init(&a);
	fuzz_input(data, size);
	t = collectives_load(fuzz_file("all_reduce_perf.txt", data, size), (Loc){ "sys.odl", 1, 1 },
			     &a, &files);
	for (int i = 0; t && i < t->nrun; i++) {
		const CollRun *r = &t->run[i], *lo, *hi;
		if (i && (t->run[i - 1].coll > r->coll ||
			  (t->run[i - 1].coll == r->coll && t->run[i - 1].ranks >= r->ranks)))
			abort(); /* sorted, one run a collective and rank count */
		for (int j = 0; j < r->n; j++) {
			if (j && !(r->bytes[j] > r->bytes[j - 1]))
				abort();
			check(r, r->bytes[j]);
			check(r, r->bytes[j] * 1.5);
			check(r, r->bytes[j] / 3);
		}
		colltable_runs(t, r->coll, r->ranks, &lo, &hi);
		if (lo != r)
			abort(); /* a run's own rank count finds it */
		colltable_runs(t, r->coll, r->ranks + 1, &lo, &hi);
		if (!lo || lo->ranks > r->ranks + 1 || (hi && hi->ranks <= r->ranks + 1))
			abort();
		(void)colltable_send(t, 8, r->ranks > 8);
	}
	fuzz_done(&a, &files);
	return 0;
}
