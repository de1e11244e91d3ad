/* common.h -- what the libFuzzer harnesses share (fuzz/README.md).
 *
 * Each harness writes its input to a file in a private temporary
 * directory (the readers take paths), loads it, runs the passes and the
 * strategy analysis as oraclec does, writes every report to /dev/null,
 * then frees the arena and resets the diagnostics.  An internal error
 * (die(), an IR invariant broken after a pass, a diagnostic that says
 * "internal:") aborts, so the fuzzer reports it as a crash. */
#ifndef ORACLEC_FUZZ_COMMON_H
#define ORACLEC_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"
#include "util/arena.h"
#include "util/files.h"

/* Once per process: diag_out to a stream that drops messages but aborts
 * on an internal error's, the temporary directory. */
void fuzz_init(void);

/* The harness's raw input: when it holds "internal", a message may quote
 * it (a name used as a file name: "internal: note: ..."), and the
 * "internal:" check is off for this input.  fuzz_file() does it for the
 * data it writes. */
void fuzz_input(const uint8_t *data, size_t size);

/* Writes data to NAME inside the temporary directory (replacing what was
 * there); returns its path, or aborts. */
const char *fuzz_file(const char *name, const uint8_t *data, size_t size);

/* The harness's fixed model: src (the same text at every call) written to
 * model.odl in the temporary directory the first time, so that an ODL
 * input can include it too; returns its path. */
const char *fuzz_model(const char *src);

/* The passes on the model alone, on a loaded graph, with oraclec's
 * default settings, through oraclec's runner (plan/analysis.h: each
 * checked and verified); false when one reported an input error. */
bool fuzz_passes(Graph *g);

/* The analysis of a graph through fuzz_passes on system s (the default
 * built-in when NULL) with `gpus` GPUs and otherwise the default
 * settings: the passes that need the system, both cost models, every
 * report written to /dev/null. */
void fuzz_analyse(Graph *g, const System *s, int64_t gpus, Arena *a, FileList *files);

/* A measured-times input (--profile: a CSV, or a trace as `name` says)
 * given to a fixed model whose layers are named as the seeds' modules,
 * then the passes and an analysis on 8 abci GPUs, as one fuzz input. */
void fuzz_profile(const char *name, const uint8_t *data, size_t size);

/* After each input: the arena and file list freed, the diagnostics reset. */
void fuzz_done(Arena *a, FileList *files);

#endif
