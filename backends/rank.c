/* rank.c -- the order the text and HTML reports list the strategies in
 * (its own file: backends.c's table calls those reports, and they call
 * this). */
#include "backends/backends.h"


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
