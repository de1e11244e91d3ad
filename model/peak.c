/* peak.c -- the dense peak a model's matrix products run at: the MFU's
 * denominator (docs/model.md, "Throughput and MFU"). */
#include "model/engine.h"
#include "model/model.h"

double
matmul_peak(const Graph *g, const Analysis *an)
{
	const System *s = an->q.sys;
	double flops = 0, time = 0, peak;
	Dtype dt0 = precision_dtype(an->q.set.prec, true);
	/* the last answer, for the grids of one analysis: a pass over the
	 * layers per grid was a fifth of 100,000 layers' time on 1,024 GPUs;
	 * it keys on the query as a layer's figures do (it reads the graph,
	 * the precision, the implementation and the system's peaks) */
	uint64_t stamp = key_stamp(&an->eng->stamps, &an->q, g, KEY_LAYER);

	if (an->eng->peak.stamp == stamp && an->eng->reuse)
		return an->eng->peak.peak;
	for (int i = 0; i < g->nlayer; i++) {
		const Layer *l = &g->layer[i];
		double f = (double)l->cost.flops_fwd + (double)l->cost.flops_bwd;
		Dtype dt;
		if (l->cost.macs <= 0 || !(f > 0))
			continue;
		/* as the cost model: TF32 for an fp32 run's convolutions where
		 * the implementation lets cuDNN use it, but ATen's depthwise;
		 * under fp8 the linear layers' alone */
		dt = layer_dtype(an, g, l);
		flops += f;
		time += f / (s->peak[dt] > 0 ? s->peak[dt] : s->peak[DT_FP32]);
	}
	peak = time > 0 ? flops / time : s->peak[dt0] > 0 ? s->peak[dt0] : s->peak[DT_FP32];
	an->eng->peak.stamp = stamp;
	an->eng->peak.peak = peak;
	return peak;
}
