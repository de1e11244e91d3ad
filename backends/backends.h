/* backends.h -- writing results.  A backend reads the annotated IR and
 * formats it; it computes nothing, so every format says the same thing. */
#ifndef ORACLEC_BACKENDS_BACKENDS_H
#define ORACLEC_BACKENDS_BACKENDS_H

#include <stdio.h>

#include "ir/ir.h"
#include "ir/kernels.h"
#include "plan/plan.h"
#include "util/files.h"

typedef struct ReportOpts {
	bool layers;          /* --layers: the per-layer table */
	const char *plot;     /* -f svg --plot: the chart (charts.h); NULL: scaling */
	const char *command;  /* the command line, for the HTML page; NULL: none */
} ReportOpts;

typedef struct Backend {
	const char *name;  /* the --format value */
	bool plots;        /* takes --plot: one chart (charts.h) */
	bool sweeps;       /* draws the scaling chart: the run sweeps the GPUs */
	bool command;      /* shows the command line (ReportOpts.command) */
	bool layers;       /* may draw the per-layer chart, which reads each
	                      layer's bytes (Analysis.layer_bytes) as
	                      ReportOpts.layers does */
	/* false on an I/O error (the caller reports it) */
	bool (*emit)(const Graph *g, const Analysis *an, const ReportOpts *o, FILE *f);
	/* validate's and calibrate's report of measured runs in this format;
	 * NULL: the format has none */
	bool (*runs)(const Validation *v, FILE *f);
} Backend;

/* backends.c */
const Backend *backend_find(const char *name); /* NULL if unknown */
const char *backend_name(int i); /* the i-th format; NULL past the last */
/* The analysed candidates in rank order (Candidate.rank) into idx; how
 * many.  The text and HTML reports list them so. */
int rank_order(const Analysis *an, int idx[STRAT_COUNT]);
/* rank.c: configuration c in words, into buf[n]: "data parallelism
 * (data=1024), amp-bf16, ZeRO stage 2" (its schedule, ZeRO stage and
 * recomputation where it has them). */
enum { CONFIG_TEXT_MAX = 320 };
const char *config_text(const SearchConfig *c, char *buf, size_t n);

/* parts.c: the columns of the reports' "iteration by part", in order:
 * the parts the iteration adds, the iteration, the overlapped input.  An
 * optional column (synchronised batch norm, the slowest of N) is shown
 * where some computable strategy of the analysis has it. */
typedef struct IterColumn {
	const char *head;     /* the text's header, 9 wide */
	const char *html;     /* the HTML's */
	const char *name;     /* in the sum the header line spells */
	bool optional;
} IterColumn;
enum { ITER_COLUMNS = 14 };
extern const IterColumn iter_column[ITER_COLUMNS];
double iter_column_value(const IterTime *t, int j);
bool iter_column_shown(const Analysis *an, int j);

/* text.c */
bool text_emit(const Graph *g, const Analysis *an, const ReportOpts *o, FILE *f);

/* json.c */
bool json_emit(const Graph *g, const Analysis *an, const ReportOpts *o, FILE *f);

/* csv.c */
bool csv_emit(const Graph *g, const Analysis *an, const ReportOpts *o, FILE *f);

/* html.c: the visual report (-f html) and one of its charts (-f svg) */
bool html_emit(const Graph *g, const Analysis *an, const ReportOpts *o, FILE *f);
bool svg_emit(const Graph *g, const Analysis *an, const ReportOpts *o, FILE *f);

/* depfile.c: the make rule for -M / -MD.  depfile_check() is false, after
 * an error naming it, when a name cannot be written in a make rule;
 * depfile_emit() checks too, so false is that or an I/O error. */
bool depfile_check(const FileList *files, const char *target);
bool depfile_emit(const FileList *files, const char *target, bool phony, FILE *f);

/* needed.c: the kernel keys and batches a run's pricing looked up
 * (--kernels-needed), as CSV: class,precision,layout,n,shape */
bool kernels_needed_emit(const KernelNeeds *s, FILE *f);

/* sysfile.c: a system as an ODL `system NAME` block */
bool system_emit(const System *s, const char *name, const char *comment, FILE *f);

/* validation.c: the `oraclec validate` report, "text" or "csv" */
bool validation_text(const Validation *v, FILE *f);
bool validation_csv(const Validation *v, FILE *f);
bool validation_json(const Validation *v, FILE *f);

/* backends.c: the kinds of plan (--plan), each formatting a Placement */
typedef struct PlanKind {
	const char *name;  /* the --plan value */
	bool transformer;  /* the framework trains transformers only */
	/* false on an I/O error (the caller reports it); an is the planned
	 * configuration's analysis (Placement.an: the decision's, whose
	 * settings the plan states) */
	bool (*emit)(const Graph *g, const Analysis *an, const Placement *pl, FILE *f);
	/* Whether the framework trains the model (`any`: the kinds that fit
	 * any model, as a message lists them), and runs the placement; false
	 * after an error saying why (NULL: any model, any placement). */
	bool (*fits_model)(const Graph *g, const char *any);
	bool (*fits_placement)(const Graph *g, const Placement *pl);
} PlanKind;
const PlanKind *plan_find(const char *name); /* NULL if unknown */
const char *plan_kind_name(int i); /* the i-th kind; NULL past the last */
/* Whether kind k's framework trains g: false after an error saying why
 * and which kinds fit any model. */
bool plan_fits_model(const PlanKind *k, const Graph *g);

/* plan.c: what the kinds share */
/* "data=4,spatial=4": the grid, outer to inner */
const char *plan_grid(const Graph *g, const Placement *pl);
/* Writes a JSON plan (and releases root) in the reports' number format. */
struct json_t;
bool plan_dump(struct json_t *root, FILE *f);
/* What a kind of plan states of a configuration (plan_other): the
 * per-layer splits, parameters sharded (ZeRO stage 3, FSDP), TF32 matrix
 * products. */
enum { PLAN_STATES_PER_LAYER = 1, PLAN_STATES_ZERO3 = 2, PLAN_STATES_TF32 = 4 };
/* Why a plan of a kind that states `states` is of another configuration
 * than the recommendation (an->decision), in a sentence for its header;
 * NULL when it is the recommendation's. */
const char *plan_other(const Graph *g, const Analysis *an, const Placement *pl, unsigned states);
/* --per-layer's assignment (null without one): over a mesh of all the
 * GPUs, each module with its split (data, filter, channel, spatial), in
 * order, a module whose layers change split listed at each change. */
struct json_t *plan_per_layer(const Graph *g, const Analysis *an, const Placement *pl);

/* plan_generic.c, plan_pytorch.c, plan_deepspeed.c, plan_megatron.c,
 * plan_slurm.c: the formats of docs/plans.md */
bool plan_generic_emit(const Graph *g, const Analysis *an, const Placement *pl, FILE *f);
bool plan_pytorch_emit(const Graph *g, const Analysis *an, const Placement *pl, FILE *f);
bool plan_deepspeed_emit(const Graph *g, const Analysis *an, const Placement *pl, FILE *f);
bool plan_megatron_emit(const Graph *g, const Analysis *an, const Placement *pl, FILE *f);
/* Whether Megatron-LM can number k's ranks as its nesting does (it has no
 * order with data innermost and a split inside the layers). */
bool plan_megatron_places(const Candidate *k);
/* The kind's fits_model and fits_placement: a model with attention, a
 * placement plan_megatron_places. */
bool plan_megatron_model(const Graph *g, const char *any);
bool plan_megatron_placed(const Graph *g, const Placement *pl);
bool plan_slurm_emit(const Graph *g, const Analysis *an, const Placement *pl, FILE *f);

#endif
