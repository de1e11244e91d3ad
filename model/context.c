/* context.c -- Megatron-LM's context parallelism (docs/model.md,
 * "context, dc and dtc"): the sequence split over a ring of C GPUs, the
 * attention's keys and values passed round it.
 *
 * Megatron-LM (megatron/core/extensions/transformer_engine.py@d98e8a64,
 * TEDotProductAttention, line 2041, with --cp-comm-type's default "p2p",
 * megatron/training/arguments.py line 3221) runs Transformer
 * Engine's AttnFuncWithCPAndKVP2P (transformer_engine/pytorch/attention/
 * dot_product_attention/context_parallel.py @d0067d0d, line 1356): every
 * GPU holds s/C of each sequence for every layer, so every per-token
 * layer does 1/C of the work, and its queries meet all C blocks of K and
 * V in C steps.  Forward (lines 1690-1717): K and V concatenated in the
 * attention's 16-bit type, sent to the next rank and received from the
 * previous while the step's block is computed, at steps 0..C-2.
 * Backward (lines 2397-2494, non-FP8 attention): step 0 sends K,V;
 * steps 1..C-2 send K,V together with the dK,dV accumulated so far (one
 * buffer of twice the size); step C-1 sends dK,dV only -- 2(C - 1)
 * blocks in all.  With causal masking Megatron gives rank i the chunks i
 * and 2C-1-i of 2C (get_batch_on_this_cp_rank, megatron/core/utils.py
 * @d98e8a64 line 2660), so every rank does the same work: priced even,
 * each step 1/C of the rank's attention core.  A step's send hides
 * behind its block's compute; what is left over is exposed. */
#include "model/reuse.h"

const char *
context_refusal(const Transformer *tf, int64_t ways)
{
	if (tf->layers == 0)
		return "context parallelism splits a transformer's sequence, and the model has "
		       "no attention";
	if (ways > 1 && tf->seq % (2 * ways) != 0)
		return "the sequence does not split into 2 x context equal chunks (Megatron-LM's "
		       "load-balanced causal split)";
	return NULL;
}

int64_t
context_limit(const Transformer *tf)
{
	return tf->layers > 0 && tf->seq >= 2 && tf->seq % 2 == 0 ? tf->seq / 2 : 1;
}

double
context_kv_bytes(const Analysis *an, const Transformer *tf, double n, int64_t tensor,
		 int64_t ways)
{
	Precision p = an->q.set.prec;
	/* q, k and v in the attention's type: autocast's 16 bits, fp8's
	 * bf16 attention, else the stored width */
	double width = precision_low(p) ? precision_low(p) : precision_bytes(p);

	return 2 * n * ((double)tf->seq / (double)ways) *
	       ((double)(tf->kv_groups * tf->head_dim) / (double)tensor) * width;
}

/* What of a send of `send` s is not hidden behind `step` s of compute. */
static double
exposed(double send, double step)
{
	return send > step ? send - step : 0;
}

double
context_ring(const Analysis *an, double step_f, double step_b, double kv, Group ring,
	     double *fwd)
{
	int64_t C = ring.size;
	/* a ring that spans nodes: the node's `sharing` rings cross its
	 * network at once, each with its boundary send */
	bool across = ring.per_node < ring.size;
	double share = across && ring.sharing > 1 ? (double)ring.sharing : 1;
	double one = p2p_time(an, kv * share, across), two = p2p_time(an, 2 * kv * share, across);
	double f, b;

	*fwd = 0;
	if (C <= 1)
		return 0;
	f = (double)(C - 1) * exposed(one, step_f);
	b = 2 * exposed(one, step_b) + (double)(C - 2) * exposed(two, step_b);
	*fwd = f;
	return f + b;
}

double
context_attention(const Analysis *an, const Graph *g, int j, const Times *whole,
		  const Times *part, int64_t t, Group ring, double m, double *fwd, bool *redo)
{
	const Transformer *tf = &an->tf;
	const TensorTable *tt = &layer_table_tensor(an, g)->tensor;
	const Recompute *rc = &an->rc;
	double C = (double)ring.size, f = 0, b = 0;

	*redo = false;
	for (int i = tf->parts[j][0]; i <= tf->parts[j][1]; i++) {
		const Times *r = tensor_share(tt, i, (double)t, false) < 1 ? part : whole;
		f += times_of(r, i, false);
		b += times_of(r, i, true);
		*redo |= rc->k && (rc->redo ? rc->redo[i] : i < rc->first_kept);
	}
	return context_ring(an, f / C, b / C, context_kv_bytes(an, tf, m, t, ring.size), ring,
			    fwd);
}
