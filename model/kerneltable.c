/* kerneltable.c -- a kernel table looked up (model/kerneltable.h). */
#include "model/kerneltable.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/arena.h"

const KernelRow *
kernel_rows(const KernelTable *t, const KernelKey *k, int *n)
{
	int lo = 0, hi = t ? t->nrow : 0, first;

	*n = 0;
	if (!t)
		return NULL;
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

/* ---- the keys looked up ------------------------------------------------ */

KernelNeeds *
kernel_needs_new(void)
{
	return xcalloc(1, sizeof(KernelNeeds));
}

void
kernel_needs_free(KernelNeeds *s)
{
	if (!s)
		return;
	free(s->need);
	free(s->slot);
	free(s);
}

/* The fields of a key and its batch hashed (not its bytes: a key's
 * padding is nobody's). */
static uint64_t
need_hash(const KernelKey *k, int64_t n)
{
	int64_t v[5 + KEY_DIMS] = { k->cls, k->dt, k->layout, k->op, n };
	uint64_t h = 1469598103934665603u;

	memcpy(v + 5, k->d, sizeof k->d);
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
		h = (h ^ (uint64_t)v[i]) * 0x100000001b3u;
	return h ^ h >> 29;
}

static void
need_put(KernelNeeds *s, const KernelKey *k, int64_t n)
{
	size_t mask, at;

	if ((size_t)(s->n + 1) * 2 > s->nslot) { /* grow: every entry again */
		size_t size = s->nslot ? 2 * s->nslot : 256;
		free(s->slot);
		s->slot = xcalloc(size, sizeof *s->slot);
		s->nslot = size;
		for (int i = 0; i < s->n; i++) {
			at = need_hash(&s->need[i].key, s->need[i].n) & (size - 1);
			while (s->slot[at])
				at = (at + 1) & (size - 1);
			s->slot[at] = i + 1;
		}
	}
	mask = s->nslot - 1;
	for (at = need_hash(k, n) & mask; s->slot[at]; at = (at + 1) & mask) {
		const KernelNeed *e = &s->need[s->slot[at] - 1];
		if (e->n == n && kernel_key_cmp(&e->key, k) == 0)
			return;
	}
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 64;
		s->need = xrealloc(s->need, (size_t)s->cap * sizeof *s->need);
	}
	s->need[s->n] = (KernelNeed){ *k, n };
	s->slot[at] = ++s->n;
}

void
kernel_needs_add(KernelNeeds *s, const KernelKey *k, double n)
{
	double lo = floor(n), hi = ceil(n);

	if (!s || !(n > 0) || !isfinite(n) || hi > 2147483647.0)
		return;
	need_put(s, k, lo < 1 ? 1 : (int64_t)lo);
	if (hi != lo)
		need_put(s, k, (int64_t)hi);
}

static int
need_cmp(const void *a, const void *b)
{
	const KernelNeed *x = a, *y = b;
	int c = kernel_key_cmp(&x->key, &y->key);

	return c ? c : (x->n > y->n) - (x->n < y->n);
}

void
kernel_needs_sort(KernelNeeds *s)
{
	if (!s || !s->n)
		return;
	qsort(s->need, (size_t)s->n, sizeof *s->need, need_cmp);
	free(s->slot); /* the order changed: a later add hashes them again */
	s->slot = NULL;
	s->nslot = 0;
}
