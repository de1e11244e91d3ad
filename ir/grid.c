/* grid.c -- the strategy and dimension tables (made from
 * ir/strategies.def) and a grid's text form. */
#include "ir/analysis.h"
#include "ir/grid.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const StrategyInfo strategy_info[STRAT_COUNT] = {
#define STRATEGY(id, name, dims, grids) [id] = { name, dims, grids },
#include "ir/strategies.def"
};

const DimInfo grid_dim_info[DIM_COUNT] = {
#define DIM(id, name, place, shards) [id] = { name, place, shards },
#include "ir/strategies.def"
};

const char *const strategy_name[STRAT_COUNT] = {
#define STRATEGY(id, name, dims, grids) [id] = name,
#include "ir/strategies.def"
};

const char *const grid_dim_name[DIM_COUNT] = {
#define DIM(id, name, place, shards) [id] = name,
#include "ir/strategies.def"
};

const GridDim grid_order[DIM_COUNT] = {
#define DIM(id, name, place, shards) [place] = id,
#include "ir/strategies.def"
};

const char *const nesting_name[NEST_COUNT] = { "model-inner", "data-inner", "pipeline-outer" };

void
nest_order(Nesting n, GridDim order[DIM_COUNT])
{
	int k = 0;

	if (n == NEST_PIPELINE_OUTER) { /* pipeline, data, the split */
		order[k++] = DIM_PIPELINE;
		order[k++] = DIM_DATA;
	}
	for (int i = 0; i < DIM_COUNT; i++)
		if ((n != NEST_DATA_INNER || grid_order[i] != DIM_DATA) &&
		    (n != NEST_PIPELINE_OUTER ||
		     (grid_order[i] != DIM_DATA && grid_order[i] != DIM_PIPELINE)))
			order[k++] = grid_order[i];
	if (n == NEST_DATA_INNER)
		order[k++] = DIM_DATA;
}

StrategyKind
strategy_lookup(const char *name)
{
	int k = 0;

	while (k < STRAT_COUNT && strcmp(strategy_name[k], name) != 0)
		k++;
	return (StrategyKind)k;
}

StrategyKind
grid_strategy(unsigned dims)
{
	int k = 0;

	while (k < STRAT_COUNT && strategy_info[k].dims != dims)
		k++;
	return (StrategyKind)k;
}

StrategyKind
grid_cover(unsigned dims, StrategyKind *tie)
{
	int best = STRAT_COUNT, fewest = DIM_COUNT + 1;

	*tie = STRAT_COUNT;
	for (int k = 0; k < STRAT_COUNT && dims; k++) {
		unsigned d = strategy_info[k].dims;
		int n = 0;
		if ((d & dims) != dims)
			continue;
		for (int i = 0; i < DIM_COUNT; i++)
			n += (d & DIM_BIT(i)) != 0;
		if (n < fewest)
			best = k, fewest = n, *tie = STRAT_COUNT;
		else if (n == fewest && *tie == STRAT_COUNT)
			*tie = (StrategyKind)k;
	}
	return (StrategyKind)best;
}

enum { F4_MASK = (1 << 21) - 1 };

bool
grid_next(StrategyKind k, int64_t p, int64_t *it, int64_t grid[DIM_COUNT])
{
	GridDim in[3];
	int n = 0;

	for (int d = 0; d < DIM_COUNT; d++)
		if ((strategy_info[k].dims & DIM_BIT(d)) && d != DIM_DATA && n < 3)
			in[n++] = (GridDim)d;
	memset(grid, 0, DIM_COUNT * sizeof *grid);
	switch (strategy_info[k].grids) {
	case GRID_WHOLE:
		if (*it)
			return false;
		*it = 1;
		grid[n ? in[0] : DIM_DATA] = p;
		return true;
	case GRID_FACTORS: /* *it: the last p2 */
		for (int64_t p2 = *it ? *it + 1 : 2; p2 < p; p2++)
			if (p % p2 == 0) {
				*it = p2;
				grid[DIM_DATA] = p / p2;
				grid[in[0]] = p2;
				return true;
			}
		return false;
	case GRID_FACTORS3: /* *it: the last p2 * p + p3 */
		for (int64_t p2 = *it ? *it / p : 2; p2 * 4 <= p; p2++)
			for (int64_t p3 = *it && p2 == *it / p ? *it % p + 1 : 2; p2 * p3 * 2 <= p;
			     p3++)
				if (p % (p2 * p3) == 0) {
					*it = p2 * p + p3;
					grid[DIM_DATA] = p / (p2 * p3);
					grid[in[0]] = p2;
					grid[in[1]] = p3;
					return true;
				}
		return false;
	case GRID_FACTORS4: /* *it: the last p2 - 1, p3 - 1 and p4 - 1, 21 bits
			       each (each size at most p / 8 <= 2^21) */
	{
		int64_t a = (*it >> 42) + 1, b = (*it >> 21 & F4_MASK) + 1, c = (*it & F4_MASK) + 1;
		for (int64_t p2 = *it ? a : 2; p2 * 8 <= p; p2++)
			for (int64_t p3 = *it && p2 == a ? b : 2; p2 * p3 * 4 <= p; p3++)
				for (int64_t p4 = *it && p2 == a && p3 == b ? c + 1 : 2;
				     p2 * p3 * p4 * 2 <= p; p4++)
					if (p % (p2 * p3 * p4) == 0) {
						*it = (p2 - 1) << 42 | (p3 - 1) << 21 | (p4 - 1);
						grid[DIM_DATA] = p / (p2 * p3 * p4);
						grid[in[0]] = p2;
						grid[in[1]] = p3;
						grid[in[2]] = p4;
						return true;
					}
		return false;
	}
	}
	return false;
}

unsigned
grid_dims(const int64_t grid[DIM_COUNT])
{
	unsigned dims = 0;

	for (int d = 0; d < DIM_COUNT; d++)
		if (grid[d] > 0)
			dims |= DIM_BIT(d);
	return dims;
}

int64_t
grid_gpus(const int64_t grid[DIM_COUNT])
{
	int64_t p = 1;

	for (int d = 0; d < DIM_COUNT; d++)
		if (grid[d] > 0)
			p *= grid[d];
	return p;
}

int64_t
grid_split(const int64_t grid[DIM_COUNT])
{
	int64_t t = 1;

	for (int d = 0; d < DIM_COUNT; d++)
		if (d != DIM_DATA && d != DIM_PIPELINE && grid[d] > 0)
			t *= grid[d];
	return t;
}

/* The dimension spelled by the len bytes at s, or DIM_COUNT. */
static int
dim_lookup(const char *s, size_t len)
{
	int d = 0;

	while (d < DIM_COUNT &&
	       (strlen(grid_dim_name[d]) != len || strncmp(grid_dim_name[d], s, len) != 0))
		d++;
	return d;
}

/* One part, NAME=N, of len bytes at s: N a whole number from 1 to
 * GRID_MAX_GPUS as strtoll reads it, p the product so far. */
static GridError
part(const char *s, size_t len, int64_t grid[DIM_COUNT], int64_t *p, char *bad, size_t nbad)
{
	const char *eq = memchr(s, '=', len), *v;
	char *end;
	long long n;
	int d;

	if (!eq || (d = dim_lookup(s, (size_t)(eq - s))) == DIM_COUNT || grid[d])
		return GRID_SYNTAX;
	v = eq + 1;
	errno = 0;
	n = strtoll(v, &end, 10);
	if (errno || end == v || end != s + len || n < 1 || n > GRID_MAX_GPUS) {
		snprintf(bad, nbad, "%.*s", (int)(s + len - v), v);
		return GRID_VALUE;
	}
	grid[d] = n;
	*p *= n;
	return *p > GRID_MAX_GPUS ? GRID_TOO_MANY : GRID_OK;
}

GridError
grid_parse(const char *text, int64_t grid[DIM_COUNT], char *bad, size_t nbad)
{
	int64_t p = 1;

	memset(grid, 0, DIM_COUNT * sizeof grid[0]);
	while (*text) {
		size_t len = strcspn(text, ",");
		GridError e = len ? part(text, len, grid, &p, bad, nbad) : GRID_OK;
		if (e != GRID_OK)
			return e;
		text += len + (text[len] == ',');
	}
	return GRID_OK;
}

char *
grid_format(const int64_t grid[DIM_COUNT], const GridDim *order, int norder, char *buf,
	    size_t n)
{
	size_t len = 0;

	if (!order)
		norder = DIM_COUNT;
	buf[0] = '\0';
	for (int i = 0; i < norder && len < n; i++) {
		GridDim d = order ? order[i] : (GridDim)i;
		if (grid[d] > 0)
			len += (size_t)snprintf(buf + len, n - len, "%s%s=%lld", len ? "," : "",
						grid_dim_name[d], (long long)grid[d]);
	}
	return buf;
}

/* Appends s to buf[n] after a ", " unless buf is empty. */
static void
append(char *buf, size_t n, const char *s)
{
	size_t len = strlen(buf);

	if (len < n)
		snprintf(buf + len, n - len, "%s%s", len ? ", " : "", s);
}

char *
strategy_list(char *buf, size_t n)
{
	buf[0] = '\0';
	for (int k = 0; k < STRAT_COUNT; k++)
		append(buf, n, strategy_name[k]);
	return buf;
}

char *
grid_shape_list(char *buf, size_t n)
{
	buf[0] = '\0';
	for (int k = 0; k < STRAT_COUNT; k++) {
		char shape[GRID_TEXT_MAX] = "";
		size_t len = 0;
		for (int d = 0; d < DIM_COUNT; d++)
			if (strategy_info[k].dims & DIM_BIT(d))
				len += (size_t)snprintf(shape + len, sizeof shape - len, "%s%s",
							len ? "+" : "", grid_dim_name[d]);
		append(buf, n, shape);
	}
	return buf;
}

/* ir/analysis.h: a layer's own split under --per-layer, by its name */
const char *const per_layer_mode_name[PL_MODES] = { "data", "filter", "channel", "spatial" };
const char *const time_source_name[TS_COUNT] = { "model", "table", "interpolated", "profile" };
