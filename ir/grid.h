/* grid.h -- the vocabulary of parallel training: the dimensions of a
 * process grid, the strategies made of them (one table,
 * ir/strategies.def), and a grid's text form ("data=64,spatial=4") as
 * --grid, measured runs, reports and plans spell it.  ir.h includes it;
 * a frontend, pass or backend that names a strategy or a dimension uses
 * only what is here. */
#ifndef ORACLEC_IR_GRID_H
#define ORACLEC_IR_GRID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The dimensions of a process grid, in the order reports print them. */
typedef enum GridDim {
#define DIM(id, name, place, shards) id,
#include "ir/strategies.def"
	DIM_COUNT
} GridDim;

#define DIM_BIT(d) (1u << (d))

typedef enum StrategyKind {
#define STRATEGY(id, name, dims, grids) id,
#include "ir/strategies.def"
	STRAT_COUNT
} StrategyKind;

/* Which grids of p GPUs a strategy is analysed on (strategies.def). */
typedef enum GridEnum {
	GRID_WHOLE,   /* its one dimension takes all p */
	GRID_FACTORS, /* data p1 x another dimension p2, every p1 p2 = p with both > 1 */
	GRID_FACTORS3,/* data p1 x two others p2 x p3, every p1 p2 p3 = p, all > 1 */
	GRID_FACTORS4,/* data p1 x three others, every p1 p2 p3 p4 = p, all > 1 */
} GridEnum;

typedef struct StrategyInfo {
	const char *name;
	unsigned dims;     /* DIM_BIT of each dimension of its grid */
	GridEnum grids;
} StrategyInfo;

typedef struct DimInfo {
	const char *name;
	int place;         /* position in a plan's rank order, 0 outermost */
	bool shards;       /* splits the weights */
} DimInfo;

extern const StrategyInfo strategy_info[STRAT_COUNT];
extern const DimInfo grid_dim_info[DIM_COUNT];
extern const char *const strategy_name[STRAT_COUNT];
extern const char *const grid_dim_name[DIM_COUNT];
/* The dimensions outer to inner: the order of a plan's ranks. */
extern const GridDim grid_order[DIM_COUNT];

/* How a grid nests on the nodes (docs/model.md, "Placement").
 * Model-inner numbers the ranks in grid_order: data outermost, then
 * pipeline, then the split inside a layer, so a model-parallel group's
 * GPUs are consecutive and share a node where they fit.  Data-inner
 * moves data innermost: a shard's replicas are consecutive, their
 * gradient all-reduce stays inside a node where they fit, and the
 * model-parallel groups span nodes.  Pipeline-outer (grids of data,
 * pipeline and a split) moves the pipeline outermost: the split
 * innermost, then data, then the stages -- Megatron-LM's default order
 * (tp-dp-pp), a stage's replicas beside each other and the stages'
 * sends across nodes. */
typedef enum Nesting { NEST_MODEL_INNER, NEST_DATA_INNER, NEST_PIPELINE_OUTER, NEST_COUNT } Nesting;
extern const char *const nesting_name[NEST_COUNT]; /* "model-inner", "data-inner",
                                                       "pipeline-outer" */

/* The dimensions outer to inner under a nesting. */
void nest_order(Nesting n, GridDim order[DIM_COUNT]);

/* The most GPUs of a grid, and of each of its dimensions. */
#define GRID_MAX_GPUS ((int64_t)1 << 24)
/* Room for any grid's text, its terminating NUL included. */
enum { GRID_TEXT_MAX = 160 };

/* A strategy with a pipeline dimension (pipeline, dp): stages, a
 * schedule, micro-batches. */
#define STRATEGY_PIPELINED(k) ((strategy_info[k].dims & DIM_BIT(DIM_PIPELINE)) != 0)

/* The strategy named `name`, or STRAT_COUNT. */
StrategyKind strategy_lookup(const char *name);

/* The strategy whose grid has exactly the dimensions `dims` (DIM_BITs),
 * or STRAT_COUNT. */
StrategyKind grid_strategy(unsigned dims);

/* The strategy with the fewest dimensions whose grid has all of `dims`
 * (DIM_BITs, at least one): `dims`' own where one has exactly them
 * (grid_strategy); STRAT_COUNT where none has.  *tie: another with as
 * few (the choice is then ambiguous), else STRAT_COUNT. */
StrategyKind grid_cover(unsigned dims, StrategyKind *tie);

/* The grids of p GPUs strategy k is analysed on, one per call into
 * grid[]: its one dimension of p (GRID_WHOLE), or every factorization
 * with each dimension above 1, data outermost, in increasing order of the
 * inner sizes.  *it is 0 before the first call; false when there are no
 * more. */
bool grid_next(StrategyKind k, int64_t p, int64_t *it, int64_t grid[DIM_COUNT]);

/* The DIM_BITs of the dimensions above 0, and their product. */
unsigned grid_dims(const int64_t grid[DIM_COUNT]);
int64_t grid_gpus(const int64_t grid[DIM_COUNT]);
/* The product of the dimensions that split a layer (spatial, filter,
 * channel): 1 for a grid of data and pipeline only. */
int64_t grid_split(const int64_t grid[DIM_COUNT]);

typedef enum GridError {
	GRID_OK,
	GRID_SYNTAX,   /* a part without '=', an unknown or a repeated dimension */
	GRID_VALUE,    /* a size not a whole number from 1 to GRID_MAX_GPUS */
	GRID_TOO_MANY, /* the sizes' product above GRID_MAX_GPUS */
} GridError;

/* Reads "data=64,spatial=4": comma-separated DIM=N parts in any order
 * (empty parts skipped) into grid[], 0 for the dimensions not named.
 * Returns the first problem from the left; for GRID_VALUE the value as
 * written goes to bad[nbad] (truncated to fit). */
GridError grid_parse(const char *text, int64_t grid[DIM_COUNT], char *bad, size_t nbad);

/* Writes "data=16,spatial=4" to buf[n] (truncated to fit): the
 * dimensions above 0 among order[0..norder-1], or in DIM order (reports)
 * when order is NULL.  "" for an empty grid; returns buf. */
char *grid_format(const int64_t grid[DIM_COUNT], const GridDim *order, int norder, char *buf,
		  size_t n);

/* The strategies' names, "data, spatial, ..., ds", and the grids they
 * take, "data, ..., data+filter, data+spatial", for messages; into
 * buf[n], returned. */
char *strategy_list(char *buf, size_t n);
char *grid_shape_list(char *buf, size_t n);

#endif
