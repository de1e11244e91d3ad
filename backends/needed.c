/* needed.c -- the kernel keys a run's pricing looked up (--kernels-needed,
 * docs/kernel-table.md, "The keys a run needs"): the kernel table's first
 * five columns, a header and a line per key and batch, in the order the
 * pricing sorted them (by key, then N).  What python3 -m oraclec.probe
 * --model measures. */
#include "backends/backends.h"
#include "ir/kernels.h"

#include <inttypes.h>

bool
kernels_needed_emit(const KernelNeeds *s, FILE *f)
{
	char shape[KEY_TEXT];

	fputs("class,precision,layout,n,shape\n", f);
	for (int i = 0; s && i < s->n; i++) {
		const KernelNeed *e = &s->need[i];
		/* a shape is names, '=', digits, 'x' and spaces: no field to quote */
		kernel_key_text(&e->key, shape, sizeof shape);
		fprintf(f, "%s,%s,%s,%" PRId64 ",%s\n", kernel_class_name(e->key.cls),
			kernel_dtype_name(e->key.dt), kernel_layout_name(e->key.layout), e->n,
			shape);
	}
	return !ferror(f);
}
