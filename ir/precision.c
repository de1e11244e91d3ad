/* precision.c -- the training precisions of ir/precision.def. */
#include <string.h>

#include "ir/ir.h"

const PrecisionInfo precision_info[PREC_COUNT] = {
#define PRECISION(id, name, bytes, matmul, other, low) [id] = { name, bytes, matmul, other, low },
#include "ir/precision.def"
#undef PRECISION
};

const char *
precision_name(Precision p)
{
	return (unsigned)p < PREC_COUNT ? precision_info[p].name : "?";
}

bool
precision_parse(const char *s, Precision *p)
{
	for (int i = 0; i < PREC_COUNT; i++)
		if (strcmp(s, precision_info[i].name) == 0) {
			*p = (Precision)i;
			return true;
		}
	return false;
}

/* The rate a layer of class c runs at. */
Dtype
precision_dtype(Precision p, bool matmul)
{
	return matmul ? precision_info[p].matmul : precision_info[p].other;
}

int
precision_widest(void)
{
	int w = 0;

	for (int i = 0; i < PREC_COUNT; i++) {
		if (precision_info[i].bytes > w)
			w = precision_info[i].bytes;
		if (precision_info[i].low > w)
			w = precision_info[i].low;
	}
	return w;
}

bool
system_runs(const System *s, Precision p)
{
	Dtype dt = precision_dtype(p, true);

	return dt == DT_TF32 || s->peak[dt] > 0;
}

double
layer_measured(const Graph *g, int i, Precision p, bool bwd)
{
	return g->measured[i][p][bwd];
}

KeepRegime
precision_regime(Precision p)
{
	return precision_low(p) ? KEEP_AUTOCAST : KEEP_PLAIN;
}

const Keeps *
graph_keeps(const Graph *g, Precision p, bool fused)
{
	KeepRegime r = precision_regime(p);

	return &g->keep[fused && g->keep[1][r].layer][r];
}
