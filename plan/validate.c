/* validate.c -- accuracy of predictions against measured runs:
 * 1 - |p - m| / m per row (the ParaDL paper's measure) clamped at 0, and
 * its mean per strategy and over every row, for oraclec and for ParaDL's
 * projections; and whether they order the runs as measured (Kendall's
 * tau).  Peak memory the same way, where the runs measured it. */
#include "plan/plan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double
validation_accuracy(double p, double m)
{
	double a;

	if (isnan(p))
		return NAN;
	a = 1 - fabs(p - m) / m;
	return a > 0 ? a : 0; /* off by 100 % or more (or beyond doubles) */
}

static void
add(Accuracy *a, const Measured *r)
{
	if (!isnan(r->acc)) {
		a->oraclec = a->n ? a->oraclec + r->acc : r->acc;
		a->n++;
	}
	if (!isnan(r->acc_paradl)) {
		a->paradl = a->n_paradl ? a->paradl + r->acc_paradl : r->acc_paradl;
		a->n_paradl++;
	}
}

static void
mean(Accuracy *a)
{
	a->oraclec = a->n ? a->oraclec / a->n : NAN;
	a->paradl = a->n_paradl ? a->paradl / a->n_paradl : NAN;
}

/* Kendall's tau-a over the pairs whose measured times differ and that
 * have both predictions (paradl: ParaDL's): (concordant - discordant) /
 * pairs; a pair the prediction ties counts as neither.  Knight's
 * algorithm, O(n log n): sorted by (measured, predicted), the discordant
 * pairs are the inversions of the predictions that a merge sort counts;
 * C + D is every pair less those tied in either time (plus those tied in
 * both, taken twice).  Comparing every pair took 33 s for 100,000 runs. */
typedef struct Pair {
	double m, p;
} Pair;

static int
by_both(const void *a, const void *b)
{
	const Pair *x = a, *y = b;

	if (x->m != y->m)
		return x->m < y->m ? -1 : 1;
	return (x->p > y->p) - (x->p < y->p);
}

static bool
same_m(const Pair *a, const Pair *b)
{
	return a->m == b->m;
}

static bool
same_p(const Pair *a, const Pair *b)
{
	return a->p == b->p;
}

static bool
same_both(const Pair *a, const Pair *b)
{
	return a->m == b->m && a->p == b->p;
}

/* The pairs in runs of neighbours equal by `same` (v sorted so that
 * equal ones are neighbours): the sum of t(t-1)/2. */
static int64_t
ties(const Pair *v, int n, bool (*same)(const Pair *, const Pair *))
{
	int64_t t = 0, run = 1;

	for (int i = 1; i <= n; i++) {
		if (i < n && same(&v[i], &v[i - 1])) {
			run++;
			continue;
		}
		t += run * (run - 1) / 2;
		run = 1;
	}
	return t;
}

/* Sorts v[0..n) by prediction (stable), tmp the scratch; returns the
 * inversions: pairs i < j with v[i].p > v[j].p. */
static int64_t
inversions(Pair *v, Pair *tmp, int n)
{
	int64_t inv = 0;

	for (int w = 1; w < n; w *= 2) {
		for (int lo = 0; lo < n - w; lo += 2 * w) {
			int mid = lo + w, hi = mid + w < n ? mid + w : n, i = lo, j = mid, k = lo;
			while (i < mid && j < hi) {
				if (v[j].p < v[i].p) {
					inv += mid - i;
					tmp[k++] = v[j++];
				} else {
					tmp[k++] = v[i++];
				}
			}
			while (i < mid)
				tmp[k++] = v[i++];
			while (j < hi)
				tmp[k++] = v[j++];
			memcpy(v + lo, tmp + lo, (size_t)(hi - lo) * sizeof *v);
		}
	}
	return inv;
}

static Ranking
kendall(const Validation *v, bool paradl)
{
	Pair *x = xcalloc((size_t)v->nrow + 1, sizeof *x), *tmp;
	int n = 0;
	int64_t all, tied_m, tied_p, tied_both, disc;
	Ranking r;

	for (int i = 0; i < v->nrow; i++) {
		const Measured *a = &v->row[i];
		double p = paradl ? a->paradl : a->predicted;
		if (!isnan(p))
			x[n++] = (Pair){ a->measured, p };
	}
	tmp = xcalloc((size_t)n + 1, sizeof *tmp);
	qsort(x, (size_t)n, sizeof *x, by_both);
	all = (int64_t)n * (n - 1) / 2;
	tied_m = ties(x, n, same_m);
	tied_both = ties(x, n, same_both);
	disc = inversions(x, tmp, n);
	tied_p = ties(x, n, same_p); /* now sorted by prediction */
	r.pairs = all - tied_m;
	r.tau = r.pairs ? (double)(all - tied_m - tied_p + tied_both - 2 * disc) / (double)r.pairs
			: NAN;
	free(x);
	free(tmp);
	return r;
}

double
validation_memory(const MemUse *m, const System *s)
{
	double v = m->total - m->buffers;

	if (s->host_device)
		v -= m->weights + m->optimizer;
	return v;
}

void
validation_score(Validation *v)
{
	for (int k = 0; k < STRAT_COUNT; k++)
		v->per[k] = (Accuracy){ 0 };
	v->all = (Accuracy){ 0 };
	v->mem = (Accuracy){ 0 };
	for (int i = 0; i < v->nrow; i++) {
		Measured *r = &v->row[i];
		r->acc = validation_accuracy(r->predicted, r->measured);
		r->acc_paradl = validation_accuracy(r->paradl, r->measured);
		r->acc_mem = isnan(r->peak) ? NAN : validation_accuracy(r->predicted_peak, r->peak);
		add(&v->per[r->kind], r);
		add(&v->all, r);
		if (!isnan(r->acc_mem)) {
			v->mem.oraclec = v->mem.n ? v->mem.oraclec + r->acc_mem : r->acc_mem;
			v->mem.n++;
		}
	}
	for (int k = 0; k < STRAT_COUNT; k++)
		mean(&v->per[k]);
	mean(&v->all);
	mean(&v->mem);
	v->rank = kendall(v, false);
	v->rank_paradl = kendall(v, true);
}
