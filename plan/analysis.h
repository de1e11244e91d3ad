/* analysis.h -- the one analysis pipeline: what an analysis is asked for
 * (Settings, with every default), the passes over the IR in the order
 * they run (a table in analysis.c: name, requires, provides) and their
 * runner.  oraclec's modes (analyse, validate, calibrate), the fuzz
 * harnesses and the benches all go through here, in this order:
 *
 *   analysis_init(g, set)            before any pass: what the settings
 *                                    change in the model (no precision)
 *   passes_run(g, NULL, PASS_MEMORY) the passes that need the model only
 *   analysis_setup(&an, eng, set, g, s)  the analysis on system s
 *   passes_run(g, &an, PASS_TIMING)  the passes that need the system
 *   strategies_run(g, &an, ...)      (passes.h)
 *
 * docs/internals.md, "The analysis pipeline". */
#ifndef ORACLEC_PLAN_ANALYSIS_H
#define ORACLEC_PLAN_ANALYSIS_H

#include "model/engine.h"
#include "plan/plan.h"

/* The defaults of Settings (ir/analysis.h), documented in oraclec(1). */
extern const Settings settings_default;

/* Before any pass runs on g: what the settings change in the model
 * itself (--as-exported, --dropout: the training pass reads them), the
 * dataset size when they give one, and the sequence's length (--seq-len)
 * of a model whose input fixes none.  No precision: the passes count
 * elements, whatever an analysis will price them at.  false (reported)
 * when --seq-len contradicts the model's sequence. */
bool analysis_init(Graph *g, const Settings *set);
/* Whether --seq-len (if any) fits g: its sequence's length, or an input
 * of S positions by their features to take as one; false, reported,
 * otherwise (oraclec: a usage error). */
bool seq_len_fits(const Graph *g, const Settings *set);

/* The analysis of g (PASS_MEMORY done: the sample size comes from the
 * input, a transformer's dimensions from the layers) on system s with
 * these settings, its figures kept in engine eng (model/engine.h: the
 * analyses of one run share one), every other field
 * zero.  false when s is NULL (its error was reported) or has no peak for
 * the precision (reported). */
bool analysis_setup(Analysis *an, Engine *eng, const Settings *set, const Graph *g,
		    const System *s);

/* What the report of an prints of g's bytes at its precision, which the
 * backends do not compute: an->bytes, and with `layers` each layer's
 * (an->layer_bytes, in a) and its time forward and backward, whole, at
 * the analysis's samples a GPU, with where it comes from and, where a
 * profile measured it, what the table or the model predicts
 * (an->layer_times). */
void analysis_report_bytes(Analysis *an, const Graph *g, bool layers, Arena *a);

/* Runs on g, in the table's order, each pass that has not run on it yet,
 * until those that provide `want` (PASS_* bits) have.  Before a pass its
 * requires must be in g->done, after it its provides (else an internal
 * error: die()); the IR verifier runs after each pass in checking builds
 * (ORACLEC_CHECKING); -v notes each pass's time.  dump_after: the name of
 * a pass after which the IR is printed on stdout and the run stops (true
 * is returned; the caller ends the run), or NULL.  an: the analysis, for
 * the passes that need its system and precision; NULL until it is set up.
 * false after an input error (reported). */
bool passes_run(Graph *g, const Analysis *an, unsigned want, const char *dump_after);

/* The joint search (search.c), over the precisions the GPU has too
 * unless fix->precision: each an analysis of g set up for it
 * (analysis_setup), g read only -- the passes count elements and the
 * measured times are shared out at every precision, so nothing of g is
 * counted again; stops after budget_s seconds when it is above 0
 * (Search.stopped). */
bool search_all(const Graph *g, const Analysis *an, const Settings *set,
		const StrategyOpts *o, const SearchFix *fix, double budget_s, Search *s);

/* Whether --dump-after may name the pass: one of the table that needs
 * the model only (parse, training, shape, cost, memory); the i-th of
 * them, NULL past the last. */
bool pass_dumpable(const char *name);
const char *pass_dumpable_name(int i);

/* The settings of measured run r: its GPUs, global batch and dataset
 * size; its precision where it gives one; its implementation where it
 * gives one and set does not (--implementation describes every run);
 * the rest set's. */
Settings analysis_run_settings(const Settings *set, const Measured *r);

/* The analysis of a measured run r of oraclec validate and calibrate,
 * set up in an on g and s with analysis_run_settings, with the passes
 * that need the system run on g.  Runs of g alike in those settings may share it.  false
 * after an input error (reported; a precision of the run that s has no
 * peak for at the run's column). */
bool analysis_measured(Analysis *an, Engine *eng, const Settings *set, Graph *g,
		       const System *s, const Measured *r);
/* The row of run r, its model g analysed in an (analysis_measured). */
void analysis_row(CalibRow *row, const Graph *g, Analysis *an, const Measured *r);

#endif
