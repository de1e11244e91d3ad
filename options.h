/* options.h -- the driver's command line: one table of options (options.c)
 * from which getopt_long's array, --help and every message listing an
 * option's choices are made. */
#ifndef ORACLEC_OPTIONS_H
#define ORACLEC_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "backends/backends.h"
#include "frontend/frontend.h"
#include "ir/ir.h"
#include "plan/analysis.h"

enum { EXIT_OK = 0, EXIT_INPUT = 1, EXIT_USAGE = 2 };

typedef struct Options {
	const char *model;
	const char *output;
	const Backend *backend;
	const PlanKind *plan; /* --plan: a plan instead of a report */
	bool format_given;
	const char *dump_after;  /* a pass name, or NULL */
	const char *tensor_dims; /* --print-tensor-dims FILE, or NULL */
	Shape input_shape;       /* rank 0: from the model */
	OnnxOptions onnx;
	ReportOpts report;
	const char *system;
	const char *implementation; /* --implementation, or NULL */
	Settings set;               /* precision, optimizer, GPUs, batch, dataset */
	StrategyOpts strat;
	bool validate;                     /* `oraclec validate MEASURED.csv` (or calibrate) */
	bool calibrate;                    /* `oraclec calibrate MEASURED.csv -o SYSTEM.odl` */
	bool deps, deps_only, dep_phony;   /* -MD, -M, -MP */
	const char *dep_file, *dep_target; /* -MF, -MT */
	int64_t grid_gpus;                 /* --grid: the product of its dimensions */
	bool gpus_given;                   /* -g/--gpus was given */
	bool fsdp;                         /* --fsdp was given */
	const char *models;                /* validate: where MODEL.odl / MODEL.onnx live */
	const char *profile;               /* --profile: measured layer times (CSV) */
	const char *kernels;               /* --kernels: a kernel table in place of
	                                      the system's, or NULL */
	bool kernels_needed;               /* --kernels-needed: the keys the pricing
	                                      looks up, not a report */
	bool sweep;                        /* --sweep: also 1, 2, 4, ... GPUs up to gpus */
	bool search;                       /* --search */
	bool per_layer;                    /* --per-layer */
	bool max_batch;                    /* --max-batch */
	bool no_memos;                     /* --no-memos (hidden): the engine keeps
	                                      nothing, for tests */
	double search_time;                /* --search-time MS, in seconds; 0 none */
	SearchFix fix;                     /* what the options fix for --search */
} Options;

/* The options of argv into o; exits with status 2 after a usage error,
 * and with 0 or 1 after --help, --version and the lists. */
void parse_options(int argc, char **argv, Options *o);

/* Exit status after writing to stdout: a full disk is an error. */
int flush_stdout(void);

#endif
