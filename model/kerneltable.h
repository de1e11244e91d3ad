/* kerneltable.h -- a kernel table looked up (model/kerneltable.c): a
 * layer's key and its batch in, the measured seconds and where they come
 * from out (docs/kernel-table.md, "Lookup").  Pure: it reads the table
 * frontend/kernels.c made and nothing else. */
#ifndef ORACLEC_MODEL_KERNELTABLE_H
#define ORACLEC_MODEL_KERNELTABLE_H

#include "ir/kernels.h"

/* Where a time comes from: a row of the key at that batch, two rows of
 * the key around it, or none (the model prices the layer). */
typedef enum KernelSource { KS_NONE, KS_TABLE, KS_INTERPOLATED } KernelSource;

typedef struct KernelTime {
	KernelSource src;
	double fwd, bwd_data, bwd_weight; /* seconds a call at the batch; NAN
	                                     where the rows have none */
	const KernelRow *lo, *hi;         /* the rows used (hi == lo: exact) */
} KernelTime;

/* The keys a pricing looked up (ir/kernels.h's KernelNeeds): made, freed,
 * filled (model/tabletime.c, where an engine holds one: Engine.needs),
 * sorted by key then N. */
KernelNeeds *kernel_needs_new(void);
void kernel_needs_free(KernelNeeds *s);
/* Key k at the batch n (images for a convolution) recorded: both whole
 * batches around a fractional one (the rows an interpolation reads), at
 * least 1. */
void kernel_needs_add(KernelNeeds *s, const KernelKey *k, double n);
void kernel_needs_sort(KernelNeeds *s);

/* The rows of key k, sorted by N: *n of them (0: NULL). */
const KernelRow *kernel_rows(const KernelTable *t, const KernelKey *k, int *n);

/* The time of key k at batch n (images for a convolution: the layer's
 * samples times kernel_key's per_sample): the row at n; else between the
 * two rows around n, in log time over log n, each time where both rows
 * have it; else none.  Never beyond the rows measured. */
KernelTime kernel_lookup(const KernelTable *t, const KernelKey *k, double n);

#endif
