/* frontend.h -- turning input files into IR.  A frontend knows file
 * formats and nothing of strategies or costs. */
#ifndef ORACLEC_FRONTEND_FRONTEND_H
#define ORACLEC_FRONTEND_FRONTEND_H

#include "ir/ir.h"
#include "util/files.h"

/* Limits on input files (docs/limits.md). */
#define MAX_ODL_BYTES ((size_t)64 << 20)

/* dsl.c: read an ODL file (and its includes), expand blocks and repeats,
 * return the model as a Graph in topological order with input shapes set.
 * NULL after reporting errors.  Every file read is added to `files`. */
Graph *dsl_load(const char *path, Arena *a, FileList *files);

/* load.c: pick the frontend from the file name (or content) and run it. */
Graph *frontend_load(const char *path, Arena *a, FileList *files);

#endif
