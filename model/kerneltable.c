/* kerneltable.c -- a kernel table looked up (model/kerneltable.h). */
#include "model/kerneltable.h"

#include <math.h>

const KernelRow *
kernel_rows(const KernelTable *t, const KernelKey *k, int *n)
{
	int lo = 0, hi = t ? t->nrow : 0, first;

	*n = 0;
	while (lo < hi) { /* the first row whose key is k or after it */
		int mid = lo + (hi - lo) / 2;
		if (kernel_key_cmp(&t->row[mid].key, k) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	first = lo;
	while (lo < t->nrow && kernel_key_cmp(&t->row[lo].key, k) == 0)
		lo++;
	*n = lo - first;
	return *n ? &t->row[first] : NULL;
}

/* Between a at x0 and b at x1, at x, in logs; NAN where either is. */
static double
between(double a, double b, double x0, double x1, double x)
{
	double f;

	if (isnan(a) || isnan(b))
		return NAN;
	f = (log(x) - log(x0)) / (log(x1) - log(x0));
	return exp(log(a) + f * (log(b) - log(a)));
}

KernelTime
kernel_lookup(const KernelTable *t, const KernelKey *k, double n)
{
	KernelTime r = { KS_NONE, NAN, NAN, NAN, NULL, NULL };
	int count, i = 0;
	const KernelRow *row = kernel_rows(t, k, &count);

	if (!row || !(n > 0) || !isfinite(n))
		return r;
	while (i < count && (double)row[i].n < n)
		i++;
	if (i < count && (double)row[i].n == n) {
		r = (KernelTime){ KS_TABLE, row[i].fwd, row[i].bwd_data, row[i].bwd_weight,
				  &row[i], &row[i] };
		return r;
	}
	if (i == 0 || i == count)
		return r; /* outside the rows: no extrapolation */
	r.lo = &row[i - 1], r.hi = &row[i];
	r.src = KS_INTERPOLATED;
	r.fwd = between(r.lo->fwd, r.hi->fwd, (double)r.lo->n, (double)r.hi->n, n);
	r.bwd_data = between(r.lo->bwd_data, r.hi->bwd_data, (double)r.lo->n, (double)r.hi->n, n);
	r.bwd_weight = between(r.lo->bwd_weight, r.hi->bwd_weight, (double)r.lo->n,
			       (double)r.hi->n, n);
	return r;
}
