/* plan_slurm.c -- an sbatch script: the header (nodes, tasks, GPUs per
 * node), the rank file placing each rank on a node and GPU as the cost
 * model assumed, and an srun line that starts the training command given
 * to sbatch once per rank in that order (docs/plans.md):
 *
 *     sbatch plan.sbatch python train.py --plan plan.json
 *
 * The rank file's nodes are indices into the job's node list (scontrol
 * show hostnames order); the script turns them into SLURM_HOSTFILE for
 * srun's arbitrary distribution.  Ranks on a node are in order from GPU 0,
 * so SLURM_LOCALID is the rank file's GPU. */
#include "backends/backends.h"
#include "util/escape.h"

/* A job name: the model's name with anything unusual made '_' (sbatch
 * reads #SBATCH lines itself; the shell sees a comment). */
static void
job_name(const char *s, FILE *f)
{
	for (; *s; s++)
		fputc((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
				      (*s >= '0' && *s <= '9') || *s == '-' || *s == '.' ||
				      *s == '_'
			      ? *s
			      : '_',
		      f);
}

/* The CPUs a rank's loader uses as the cost model prices it
 * (model/compute.c, input_time): the implementation's workers, at most
 * the node's cores over its GPUs where the system gives them; 1 at least. */
static int
plan_loader_cpus(const Analysis *an)
{
	const System *s = an->q.sys;
	int64_t cores =
		s->cpu_cores > 0 && s->gpus_per_node > 0 ? s->cpu_cores / s->gpus_per_node : 0;
	int64_t w = an->q.impl.loader_workers;

	if (cores > 0 && w > cores)
		w = cores;
	return w < 1 ? 1 : (int)w;
}

static void
header(const Graph *g, const Analysis *an, const Placement *pl, FILE *f)
{
	const Candidate *k = pl->k;
	const char *other;

	fputs("#!/bin/bash\n", f);
	fputs("#SBATCH --job-name=", f);
	job_name(g->name, f);
	fprintf(f, "-%s\n", strategy_name[k->kind]);
	fprintf(f, "#SBATCH --nodes=%lld\n", (long long)pl->nodes);
	fprintf(f, "#SBATCH --ntasks=%lld\n", (long long)pl->gpus);
	fprintf(f, "#SBATCH --ntasks-per-node=%d\n", pl->per_node);
	fprintf(f, "#SBATCH --gpus-per-node=%d\n", pl->gpus_per_node);
	fprintf(f, "#SBATCH --cpus-per-task=%d\n", plan_loader_cpus(an));
	if (pl->span == 0) /* the model put the nodes under one leaf switch */
		fputs("#SBATCH --switches=1\n", f);
	fputs("# oraclec plan (slurm): ", f);
	esc_text(f, g->name);
	fprintf(f, ", %s (%s) on %lld GPUs of ", strategy_name[k->kind], plan_grid(g, pl),
		(long long)pl->gpus);
	esc_text(f, an->q.sys->name);
	fputc('\n', f);
	fputs("# checked with: Slurm 22.05 (Debian 12's slurm-wlm): sbatch and srun run it on a "
	      "local cluster (tests/slurm.sh)\n", f);
	fprintf(f, "# --cpus-per-task: each rank's data loader, %d worker%s as the cost model took "
		   "them (%s's loader_workers, at most the node's cores over its GPUs)\n",
		plan_loader_cpus(an), plan_loader_cpus(an) == 1 ? "" : "s", an->q.impl.name);
	fprintf(f, "# predicted: %.6g s per iteration, %.0f bytes per GPU\n", k->t.total,
		k->mem.total);
	/* the command it starts states the rest: all but the per-layer
	 * splits, which its rank file does not place */
	if ((other = plan_other(g, an, pl, PLAN_STATES_ZERO3 | PLAN_STATES_TF32))) {
		fputs("# not the recommendation: ", f);
		esc_text(f, other);
		fputc('\n', f);
	}
}

static void
rankfile(const Placement *pl, FILE *f)
{
	fputs("\n# The rank file: rank, node (index into the job's nodes), GPU in the node,\n"
	      "# and the rank's coordinate along each grid dimension:\n# rank node gpu", f);
	for (int d = 0; d < pl->ndim; d++)
		fprintf(f, " %s", grid_dim_name[pl->dim[d]]);
	fputs("\nranks=$(cat <<'RANKS'\n", f);
	for (int64_t r = 0; r < pl->gpus; r++) {
		const PlaceRank *k = &pl->rank[r];
		fprintf(f, "%lld %lld %d", (long long)r, (long long)k->node, k->gpu);
		for (int d = 0; d < pl->ndim; d++)
			fprintf(f, " %lld", (long long)k->coord[pl->dim[d]]);
		fputc('\n', f);
	}
	fputs("RANKS\n)\n", f);
}

bool
plan_slurm_emit(const Graph *g, const Analysis *an, const Placement *pl, FILE *f)
{
	header(g, an, pl, f);
	rankfile(pl, f);
	fprintf(f,
		"\nset -eu\n"
		"[ $# -gt 0 ] || { echo \"usage: sbatch $0 COMMAND [ARG...]\" >&2; exit 2; }\n"
		"[ -n \"${SLURM_JOB_NODELIST:-}\" ] ||\n"
		"\t{ echo \"oraclec plan: run it with sbatch (no SLURM_JOB_NODELIST)\" >&2; "
		"exit 2; }\n"
		"mapfile -t hosts < <(scontrol show hostnames \"$SLURM_JOB_NODELIST\")\n"
		"[ ${#hosts[@]} -eq %lld ] || {\n"
		"\techo \"oraclec plan: the job has ${#hosts[@]} node(s); this plan places its "
		"%lld ranks on %lld: write the plan for the job's size (oraclec MODEL "
		"--gpus N --plan slurm) rather than editing --nodes\" >&2\n"
		"\texit 1\n"
		"}\n"
		"SLURM_HOSTFILE=$(mktemp)\n"
		"trap 'rm -f \"$SLURM_HOSTFILE\"' EXIT\n"
		"while read -r rank node rest; do\n"
		"\techo \"${hosts[$node]}\"\n"
		"done <<<\"$ranks\" >\"$SLURM_HOSTFILE\"\n"
		"export SLURM_HOSTFILE\n"
		"export MASTER_ADDR=\"${hosts[0]}\" MASTER_PORT=\"${MASTER_PORT:-29500}\" "
		"WORLD_SIZE=%lld\n"
		"srun --distribution=arbitrary --ntasks=%lld --kill-on-bad-exit=1 \\\n"
		"\tbash -c 'export RANK=$SLURM_PROCID LOCAL_RANK=$SLURM_LOCALID; exec \"$@\"' "
		"rank \"$@\"\n",
		(long long)pl->nodes, (long long)pl->gpus, (long long)pl->nodes,
		(long long)pl->gpus, (long long)pl->gpus);
	return !ferror(f);
}
