/* csv.c -- the report as CSV: a stable header, one row per strategy (per
 * GPU count and strategy with --sweep, whose last count is --gpus), for
 * spreadsheets and Makefile-driven batch analysis.  Times in seconds,
 * memory in bytes; an empty field where a value cannot be computed.
 * Names are RFC 4180 fields (util/escape.h); grid and reason are always
 * quoted. */
#include "backends/backends.h"
#include "util/escape.h"

#include <inttypes.h>

static void
field(FILE *f, bool ok, double v)
{
	if (ok)
		fprintf(f, ",%.6g", v);
	else
		fputc(',', f);
}

static void
rows(const Graph *g, const Analysis *an, FILE *f)
{
	for (int i = 0; i < STRAT_COUNT; i++) {
		const Candidate *k = &an->cand[i];
		bool c = k->computable;
		char grid[GRID_TEXT_MAX];
		if (!k->analysed)
			continue;
		esc_csv(f, g->name);
		fputc(',', f);
		esc_csv(f, an->q.sys->name);
		fprintf(f, ",%" PRId64 ",%s,\"", an->q.set.gpus, strategy_name[k->kind]);
		fputs(grid_format(k->grid, NULL, 0, grid, sizeof grid), f);
		fprintf(f, "\",%s,", k->feasible ? "true" : "false");
		esc_csv_quoted(f, k->reason ? k->reason : "");
		fprintf(f, ",%" PRId64, k->global_batch);
		field(f, c, k->t.compute);
		field(f, c, k->t.communication);
		field(f, c, k->t.total);
		field(f, c, k->epoch);
		if (c)
			fprintf(f, ",%.0f", k->mem.total);
		else
			fputc(',', f);
		fprintf(f, ",%" PRId64 ",", k->max_gpus);
		esc_csv(f, k->bottleneck ? k->bottleneck : "");
		field(f, c, k->throughput);
		field(f, c, k->mfu);
		if (an->max_batch)
			fprintf(f, ",%" PRId64, k->max_batch);
		else
			fputc(',', f);
		fprintf(f, ",%d", k->rank);
		/* the parts the iteration adds, and the overlapped input */
		field(f, c, k->t.bubble);
		field(f, c, k->t.grad);
		field(f, c, k->t.reducer);
		field(f, c, k->t.layer);
		field(f, c, k->t.p2p);
		field(f, c, k->t.update);
		field(f, c, k->t.recompute);
		field(f, c, k->t.feed);
		field(f, c, k->t.dispatch);
		field(f, c, k->t.input);
		field(f, c, k->t.sync_bn);
		field(f, c, k->t.skew);
		fputc('\n', f);
	}
}

bool
csv_emit(const Graph *g, const Analysis *an, const ReportOpts *o, FILE *f)
{
	(void)o;
	fprintf(f, "model,system,gpus,strategy,grid,feasible,reason,global_batch,compute_s,"
		   "communication_s,total_s,epoch_s,memory_per_gpu_bytes,max_gpus,bottleneck,"
		   "throughput_samples_per_s,mfu,max_batch_per_gpu,rank,bubble_s,"
		   "gradient_allreduce_s,reducer_s,layer_collectives_s,p2p_s,weight_update_s,"
		   "recompute_s,input_copies_s,dispatch_s,input_s,sync_bn_s,skew_s\n");
	if (!an->nsweep)
		rows(g, an, f);
	for (int i = 0; i < an->nsweep; i++)
		rows(g, &an->sweep[i], f);
	return !ferror(f);
}
