/* measured.h -- measured training runs (oraclec validate and calibrate):
 * what frontend/measured.c reads, and what validation adds to each row. */
#ifndef ORACLEC_IR_MEASURED_H
#define ORACLEC_IR_MEASURED_H

#include "ir/grid.h"
#include "ir/system.h"
#include "util/diag.h"

struct Implementation;

/* One measured run (oraclec validate), and what oraclec predicts for it. */
typedef struct Measured {
	Loc loc;                  /* its line in the CSV */
	const char *model;        /* model name: MODELS/<model>.odl or .onnx */
	StrategyKind kind;
	int64_t grid[DIM_COUNT];
	const char *grid_text;
	int64_t gpus, global_batch, dataset_size;
	double measured;          /* seconds per iteration */
	/* what the runner writes after those (docs/model.md, "Validation") */
	bool has_prec;            /* a precision column gave one */
	Precision prec;           /* the run's; else --precision's */
	Loc prec_loc;
	const char *impl;         /* the implementation column: a built-in's
	                             name, or a file's path from the directory
	                             oraclec runs in (written relative to the
	                             CSV's); NULL when none */
	Loc impl_loc;
	const struct Implementation *implementation; /* impl loaded; main.c */
	double peak;              /* measured peak memory, bytes; NAN none */
	double paradl;            /* ParaDL's projection; NAN when absent */
	double predicted;         /* oraclec; NAN when it could not predict */
	const char *note;         /* why not, or the limiting factor */
	const char *impl_used;    /* the implementation the prediction ran under:
	                             a built-in's name or the file's path */
	double acc, acc_paradl;   /* 1 - |p - m| / m; NAN when no prediction */
	double predicted_peak;    /* the memory compared with peak; NAN none */
	double acc_mem;           /* its accuracy; NAN when none */
} Measured;

#endif
