/* validate.c -- accuracy of predictions against measured runs:
 * 1 - |p - m| / m per row (the ParaDL paper's measure) clamped at 0, and
 * its mean per strategy and over every row, for oraclec and for ParaDL's
 * projections. */
#include "passes/passes.h"

#include <math.h>

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

void
validation_score(Validation *v)
{
	for (int k = 0; k < STRAT_COUNT; k++)
		v->per[k] = (Accuracy){ 0 };
	v->all = (Accuracy){ 0 };
	for (int i = 0; i < v->nrow; i++) {
		Measured *r = &v->row[i];
		r->acc = validation_accuracy(r->predicted, r->measured);
		r->acc_paradl = validation_accuracy(r->paradl, r->measured);
		add(&v->per[r->kind], r);
		add(&v->all, r);
	}
	for (int k = 0; k < STRAT_COUNT; k++)
		mean(&v->per[k]);
	mean(&v->all);
}
