/* validate.c -- accuracy of predictions against measured runs:
 * 1 - |p - m| / m per row (the ParaDL paper's measure) clamped at 0, and
 * its mean per strategy and over every row, for oraclec and for ParaDL's
 * projections; and whether they order the runs as measured (Kendall's
 * tau). */
#include "plan/plan.h"

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

static double
sign(double x)
{
	return (x > 0) - (x < 0);
}

/* Kendall's tau-a over the pairs whose measured times differ and that
 * have both predictions (paradl: ParaDL's): (concordant - discordant) /
 * pairs; a pair the prediction ties counts as neither. */
static Ranking
kendall(const Validation *v, bool paradl)
{
	Ranking r = { 0, 0 };

	for (int i = 0; i < v->nrow; i++)
		for (int j = i + 1; j < v->nrow; j++) {
			const Measured *a = &v->row[i], *b = &v->row[j];
			double pa = paradl ? a->paradl : a->predicted;
			double pb = paradl ? b->paradl : b->predicted;
			if (isnan(pa) || isnan(pb) || a->measured == b->measured)
				continue;
			r.pairs++;
			r.tau += sign(a->measured - b->measured) * sign(pa - pb);
		}
	r.tau = r.pairs ? r.tau / r.pairs : NAN;
	return r;
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
	v->rank = kendall(v, false);
	v->rank_paradl = kendall(v, true);
}
