/* charts.h -- the report's charts (charts.c), each a complete SVG. */
#ifndef ORACLEC_BACKENDS_CHARTS_H
#define ORACLEC_BACKENDS_CHARTS_H

#include <stdio.h>
#include <string.h>

#include "ir/ir.h"

enum { CHART_COUNT = 4 };

typedef struct Chart {
	const char *name;  /* the --plot value; the first is the default */
	bool sweeps;       /* draws a sweep: the run sweeps the GPUs */
	/* false on an I/O error, or when the analysis lacks what it needs
	 * (scaling: a sweep) */
	bool (*emit)(FILE *f, const Graph *g, const Analysis *an);
} Chart;

extern const Chart charts[CHART_COUNT];
const Chart *chart_find(const char *name); /* NULL if unknown */

bool chart_scaling(FILE *f, const Graph *g, const Analysis *an);
bool chart_breakdown(FILE *f, const Graph *g, const Analysis *an);
bool chart_memory(FILE *f, const Graph *g, const Analysis *an);
bool chart_layers(FILE *f, const Graph *g, const Analysis *an);

#endif
