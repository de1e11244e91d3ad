/* plan_megatron.c -- Megatron-LM's parallel sizes and batch flags as a
 * bash array to splice into its command line (docs/plans.md):
 *
 *     source plan.sh; torchrun ... pretrain_gpt.py "${ORACLEC_MEGATRON_ARGS[@]}" ...
 *
 * filter and channel splits are Megatron's tensor parallelism beside its
 * own pairs (tensor), context its context parallelism; ParaDL's spatial
 * split (strips of the leading layers, then a gather) is none of
 * Megatron's and is refused.  The data-parallel size is what remains of
 * the world.  The ranks' order is the grid's nesting: pipeline-outer
 * is Megatron's default (tp-cp-ep-dp-pp), model-inner its
 * --use-tp-pp-dp-mapping; data-inner with a split inside a layer has no
 * Megatron order (plan_megatron_places). */
#include "backends/backends.h"
#include "util/escape.h"

#include <inttypes.h>

static int64_t
size(const Placement *pl, GridDim d)
{
	return pl->k->grid[d] > 0 ? pl->k->grid[d] : 1;
}

/* E for the units before the blocks, t per block, L for those after; a
 * shell word like every other argument.  With V model chunks a rank
 * (pl->chunks), pipeline x V stages in the model's order: chunk c of rank
 * r is stage c * pipeline + r (Megatron's order), each rank's blocks
 * split evenly (plan/placement.c checked that they split), E in the first
 * chunk of the first rank, L in the last of the last. */
static void
layout(const Graph *g, const Placement *pl, FILE *f)
{
	size_t n = 0;
	char *s;
	int v = pl->chunks;

	for (int i = 0; i < pl->nstage; i++)
		n += (size_t)v * 3 + (size_t)pl->stage[i].blocks;
	s = arena_alloc(g->arena, n + 1);
	n = 0;
	for (int c = 0; c < v; c++)
		for (int i = 0; i < pl->nstage; i++) {
			const PlaceStage *st = &pl->stage[i];
			if (c || i)
				s[n++] = '|';
			if (st->pre && c == 0)
				s[n++] = 'E';
			for (int b = 0; b < st->blocks / v; b++)
				s[n++] = 't';
			if (st->post && c == v - 1)
				s[n++] = 'L';
		}
	fputs("\t--pipeline-model-parallel-layout ", f);
	esc_shell(f, s);
	fputc('\n', f);
}

bool
plan_megatron_places(const Candidate *k)
{
	return (k->nest != NEST_DATA_INNER || grid_split(k->grid) == 1) &&
	       k->grid[DIM_SPATIAL] <= 1;
}

bool
plan_megatron_model(const Graph *g, const char *any)
{
	if (graph_attention(g, NULL))
		return true;
	diag_error((Loc){ g->source, 0, 0 }, "Megatron-LM trains transformers (--plan %s), and the "
		   "model has no attention (a softmax over the product of two "
		   "activations); the %s plans fit any model; no plan written", "megatron",
		   any);
	return false;
}

bool
plan_megatron_placed(const Graph *g, const Placement *pl)
{
	char grid[GRID_TEXT_MAX];

	if (plan_megatron_places(pl->k))
		return true;
	if (pl->k->grid[DIM_SPATIAL] > 1) {
		diag_error((Loc){ g->source, 0, 0 },
			   "Megatron-LM has no spatial split: the recommended %s grid %s "
			   "splits the leading layers' rows and gathers them, where Megatron's "
			   "context parallelism splits every layer's sequence with ring "
			   "attention (--grid ...,context=C); no plan written",
			   strategy_name[pl->k->kind],
			   grid_format(pl->k->grid, NULL, 0, grid, sizeof grid));
		return false;
	}
	diag_error((Loc){ g->source, 0, 0 },
		   "Megatron-LM numbers its ranks tp-dp-pp, or "
		   "tp-pp-dp with --use-tp-pp-dp-mapping; the recommended %s grid %s is "
		   "nested data-inner (data innermost), which it cannot place; --nesting "
		   "model-inner or pipeline-outer gives one it can; no plan written",
		   strategy_name[pl->k->kind],
		   grid_format(pl->k->grid, NULL, 0, grid, sizeof grid));
	return false;
}

/* The model's flags: its dimensions as graph_transformer read them from
 * the layers (an->tf; docs/plans.md, "megatron"), each flag an argument
 * of megatron/training/arguments.py at NVIDIA/Megatron-LM@d98e8a64 or a
 * field of the configurations it turns into flags (ArgumentGroupFactory:
 * TransformerConfig's num_layers is --num-layers). */
static void
model_flags(const Graph *g, const Analysis *an, FILE *f)
{
	const Transformer *t = &an->tf;

	fprintf(f, "\t--num-layers %d\n", t->layers);
	fprintf(f, "\t--hidden-size %" PRId64 "\n", t->hidden);
	fprintf(f, "\t--ffn-hidden-size %" PRId64 "\n", t->ffn);
	fprintf(f, "\t--num-attention-heads %" PRId64 "\n", t->heads);
	if (t->kv_groups != t->heads)
		fprintf(f, "\t--group-query-attention\n\t--num-query-groups %" PRId64 "\n",
			t->kv_groups);
	fprintf(f, "\t--seq-length %" PRId64 "\n", t->seq);
	fprintf(f, "\t--max-position-embeddings %" PRId64 "\n", t->positions);
	fprintf(f, "\t--position-embedding-type %s\n",
		t->rope ? "rope" : t->learned ? "learned_absolute" : "none");
	fprintf(f, "\t--normalization %s\n", t->rmsnorm ? "RMSNorm" : "LayerNorm");
	if (t->swiglu)
		fputs("\t--swiglu\n", f);
	if (t->untied)
		fputs("\t--untie-embeddings-and-output-weights\n", f);
	(void)g;
}

bool
plan_megatron_emit(const Graph *g, const Analysis *an, const Placement *pl, FILE *f)
{
	const Candidate *k = pl->k;
	const char *other;

	fputs("# oraclec plan (megatron): ", f);
	esc_text(f, g->name);
	fprintf(f, ", %s (%s) on %lld GPUs of ", strategy_name[k->kind], plan_grid(g, pl),
		(long long)pl->gpus);
	esc_text(f, an->q.sys->name);
	fputc('\n', f);
	fprintf(f, "# predicted: %.6g s per iteration, %.0f bytes per GPU\n", k->t.total,
		k->mem.total);
	fprintf(f, "# data-parallel size: %lld\n", (long long)pl->replicas);
	fputs("# checked with: Megatron-LM's megatron/training/arguments.py (the flags); not run: "
	      "Megatron-LM is not packaged in Debian\n", f);
	fprintf(f, "# the model: %d layers, hidden %" PRId64 ", %" PRId64 " heads, ffn %" PRId64
		   ", sequence %" PRId64, an->tf.layers, an->tf.hidden, an->tf.heads, an->tf.ffn,
		an->tf.seq);
	if (an->tf.vocab) /* the tokenizer's (--vocab-size with NullTokenizer) */
		fprintf(f, ", vocabulary %" PRId64 " (the tokenizer's)", an->tf.vocab);
	fputc('\n', f);
	if ((other = plan_other(g, an, pl, 0))) {
		fputs("# not the recommendation: ", f);
		esc_text(f, other);
		fputc('\n', f);
	}
	if (pl->nstage && !pl->layout) { /* the reason may quote a module's name */
		fputs("# no --pipeline-model-parallel-layout: ", f);
		esc_text(f, pl->layout_why);
		fputc('\n', f);
	}
	fputs("ORACLEC_MEGATRON_ARGS=(\n", f);
	model_flags(g, an, f);
	/* Megatron's own pairs (tensor), else ParaDL's split nearest them */
	fprintf(f, "\t--tensor-model-parallel-size %lld\n",
		(long long)(k->grid[DIM_TENSOR] > 0   ? k->grid[DIM_TENSOR]
			    : k->grid[DIM_FILTER] > 0 ? k->grid[DIM_FILTER]
						      : size(pl, DIM_CHANNEL)));
	/* arguments.py@d98e8a64 (validate_args, "disable sequence
	 * parallelism when tp=1") drops it without tensor parallelism */
	if (an->q.set.sequence_parallel && size(pl, DIM_TENSOR) > 1)
		fputs("\t--sequence-parallel\n", f);
	fprintf(f, "\t--pipeline-model-parallel-size %lld\n", (long long)size(pl, DIM_PIPELINE));
	fprintf(f, "\t--context-parallel-size %lld\n", (long long)size(pl, DIM_CONTEXT));
	if (pl->micro_batch == (double)(int64_t)pl->micro_batch)
		fprintf(f, "\t--micro-batch-size %lld\n", (long long)pl->micro_batch);
	else
		fprintf(f, "\t--micro-batch-size %g\n", pl->micro_batch);
	fprintf(f, "\t--global-batch-size %lld\n", (long long)k->global_batch);
	/* Megatron's --fp16 and --bf16 are mixed precision (fp32 master) */
	if (an->q.set.prec == PREC_FP16 || an->q.set.prec == PREC_AMP_FP16)
		fputs("\t--fp16\n", f);
	if (an->q.set.prec == PREC_BF16 || an->q.set.prec == PREC_AMP_BF16)
		fputs("\t--bf16\n", f);
	/* fp8: Transformer Engine's FP8 over bf16 (TransformerConfig's fp8
	 * and fp8_recipe, Megatron-LM@d98e8a64 transformer_config.py:
	 * "hybrid" is E4M3 forward, E5M2 for the gradients; delayed scaling) */
	if (an->q.set.prec == PREC_FP8)
		fputs("\t--bf16\n\t--fp8-format hybrid\n\t--fp8-recipe delayed\n", f);
	/* Megatron takes one of the two: a layout of pipeline x V stages
	 * says V itself */
	if (pl->chunks > 1 && !(pl->nstage && pl->layout))
		fprintf(f, "\t--num-virtual-stages-per-pipeline-rank %d\n", pl->chunks);
	if (an->rc.k == RECOMPUTE_SELECTIVE)
		fputs("\t--recompute-granularity selective\n", f);
	else if (an->rc.k) /* in transformer layers, not the IR's */
		fprintf(f, "\t--recompute-granularity full\n\t--recompute-method uniform\n"
			   "\t--recompute-num-layers %d\n",
			pl->recompute_blocks > 0 ? pl->recompute_blocks : 1);
	if (an->q.set.zero) /* Megatron's distributed optimizer shards the optimizer state */
		fputs("\t--use-distributed-optimizer\n", f);
	/* Megatron numbers its ranks tp-cp-ep-dp-pp (pipeline-outer), or with
	 * this flag tp-cp-ep-pp-dp (data outermost: model-inner); the orders
	 * differ only with both data and pipeline parallelism */
	if (k->nest == NEST_MODEL_INNER && pl->replicas > 1 && size(pl, DIM_PIPELINE) > 1)
		fputs("\t--use-tp-pp-dp-mapping\n", f);
	if (pl->nstage && pl->layout)
		layout(g, pl, f);
	fputs(")\n", f);
	return !ferror(f);
}
