/* walk.h -- the walk over an ONNX graph (walk.c), which read.c runs. */
#ifndef ORACLEC_FRONTEND_ONNX_WALK_H
#define ORACLEC_FRONTEND_ONNX_WALK_H

#include "frontend/onnx/values.h"

/* The model m's graph as IR, into o (its maps initialised): initializers
 * and graph inputs, then every node folded or lowered through the
 * operator table.  `override`, when given, is the first input's
 * per-sample shape.  NULL after errors. */
Graph *onnx_walk(Onnx *o, const Onnx__ModelProto *m, const char *path, const Shape *override);

#endif
