/* measured.h -- measured training runs (oraclec validate and calibrate):
 * what frontend/measured.c reads, and what validation adds to each row. */
#ifndef ORACLEC_IR_MEASURED_H
#define ORACLEC_IR_MEASURED_H

#include "ir/grid.h"
#include "util/diag.h"

/* One measured run (oraclec validate), and what oraclec predicts for it. */
typedef struct Measured {
	Loc loc;                  /* its line in the CSV */
	const char *model;        /* model name: MODELS/<model>.odl or .onnx */
	StrategyKind kind;
	int64_t grid[DIM_COUNT];
	const char *grid_text;
	int64_t gpus, global_batch, dataset_size;
	double measured;          /* seconds per iteration */
	double paradl;            /* ParaDL's projection; NAN when absent */
	double predicted;         /* oraclec; NAN when it could not predict */
	const char *note;         /* why not, or the limiting factor */
	double acc, acc_paradl;   /* 1 - |p - m| / m; NAN when no prediction */
} Measured;

#endif
