/* rank.c -- the order the text and HTML reports list the strategies in,
 * and the words every format says the decision's configuration in (its
 * own file: backends.c's table calls those reports, and they call
 * this). */
#include "backends/backends.h"

#include <string.h>


int
rank_order(const Analysis *an, int idx[STRAT_COUNT])
{
	int n = 0;

	for (int r = 1; r <= STRAT_COUNT; r++)
		for (int i = 0; i < STRAT_COUNT; i++)
			if (an->cand[i].analysed && an->cand[i].rank == r)
				idx[n++] = i;
	return n;
}

/* A configuration's sharding in words. */
static const char *
zero_words(const SearchConfig *c)
{
	if (c->zero_node)
		return "FSDP's hybrid shard (ZeRO stage 3 inside each node)";
	return c->zero == 3 ? "ZeRO stage 3 (FSDP's full shard)"
	       : c->zero == 2 ? "ZeRO stage 2"
			      : "ZeRO stage 1";
}

const char *
config_text(const SearchConfig *c, char *buf, size_t n)
{
	char grid[GRID_TEXT_MAX], b[32];
	size_t len;

	if (!*grid_format(c->grid, NULL, 0, grid, sizeof grid))
		snprintf(grid, sizeof grid, "-");
	len = (size_t)snprintf(buf, n, "%s parallelism (%s), %s", strategy_name[c->kind], grid,
			       precision_name(c->prec));
	if (len < n && STRATEGY_PIPELINED(c->kind)) {
		schedule_label(c->schedule, c->virtual_stages, b, sizeof b);
		len += (size_t)snprintf(buf + len, n - len, ", the %s schedule", b);
	}
	if (len < n && c->zero)
		len += (size_t)snprintf(buf + len, n - len, ", %s", zero_words(c));
	if (len < n && c->sequence_parallel)
		len += (size_t)snprintf(buf + len, n - len, ", sequence parallel");
	if (len < n && c->recompute == RECOMPUTE_SELECTIVE)
		len += (size_t)snprintf(buf + len, n - len, ", selective recomputation");
	else if (len < n && c->recompute)
		snprintf(buf + len, n - len, ", recomputation every %d layers", c->recompute);
	return buf;
}
