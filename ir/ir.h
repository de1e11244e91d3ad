/* ir.h -- the whole IR, for passes/, backends/ and main.c: the layer
 * graph (graph.h), the cluster (system.h), strategies and grids
 * (grid.h), measured runs (measured.h) and the analysis (analysis.h).
 * Frontends include frontend/frontend.h, which gives them all but the
 * analysis. */
#ifndef ORACLEC_IR_IR_H
#define ORACLEC_IR_IR_H

#include "ir/analysis.h"
#include "ir/graph.h"
#include "ir/grid.h"
#include "ir/measured.h"
#include "ir/implementation.h"
#include "ir/system.h"
#include "ir/trace.h"

#endif
