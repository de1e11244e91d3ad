/* print.c -- ir_print: the stable text form of a Graph, for golden tests
 * and --dump-after.  One line per tensor input and per layer, IR order;
 * names through esc_text, so none can break a line. */
#include "ir/ir.h"
#include "util/escape.h"

#include <inttypes.h>

static void
ints(FILE *f, const char *key, const int64_t *v, int n)
{
	fprintf(f, " %s=", key);
	for (int i = 0; i < n; i++)
		fprintf(f, "%s%" PRId64, i ? "x" : "", v[i]);
}

static void
attrs(FILE *f, const Layer *l)
{
	const Attr *a = &l->attr;
	int n = a->nspatial;

	switch (op_info[l->op].cls) {
	case OPC_CONV:
	case OPC_POOL:
		if (n == 0) /* before shape inference: as written, every dimension */
			n = 1;
		ints(f, "k", a->kernel, n);
		ints(f, "s", a->stride, n);
		ints(f, "p", a->pad, n); /* begins, then ends after a '+' */
		for (int i = 0; i < n; i++)
			fprintf(f, "%s%" PRId64, i ? "x" : "+", a->pad[MAX_SPATIAL + i]);
		ints(f, "d", a->dilation, n);
		if (op_info[l->op].cls == OPC_CONV)
			fprintf(f, " g=%" PRId64 "%s", a->groups, a->bias ? " bias" : "");
		if (a->ceil_mode)
			fprintf(f, " ceil");
		if (a->lead)
			fprintf(f, " lead=%d", a->lead);
		break;
	case OPC_FC:
		fprintf(f, " out=%" PRId64 "%s", a->filters, a->bias ? " bias" : "");
		break;
	case OPC_CONCAT:
	case OPC_SOFTMAX:
	case OPC_FLATTEN:
	case OPC_NORM:
	case OPC_GATHER:
		fprintf(f, " axis=%d", a->axis);
		break;
	case OPC_REDUCE:
		ints(f, "axes", a->target->d, a->target->rank);
		if (a->keepdims)
			fprintf(f, " keep");
		break;
	default:
		break;
	}
}

static void
costs(FILE *f, const Graph *g, const Layer *l)
{
	const Cost *c = &l->cost;
	char buf[128];

	for (int i = 0; i < l->nw; i++)
		fprintf(f, " w%d=%s", i, shape_str(&l->w[i].shape, buf, sizeof buf));
	if (g->done & PASS_COST)
		fprintf(f, " params=%" PRId64 " macs=%" PRId64 " fwd=%" PRId64 " bwd_d=%" PRId64
			   " bwd_w=%" PRId64,
			c->params, c->macs, c->flops_fwd, c->flops_bwd_data, c->flops_bwd_weight);
	if (g->done & PASS_MEMORY)
		fprintf(f, " saved=%" PRId64, c->act_elems);
}

void
ir_print(const Graph *g, FILE *f)
{
	char buf[128];

	fputs("graph ", f);
	esc_text(f, g->name);
	fprintf(f, " (%s)\n", g->format);
	for (int i = 0; i < g->ninput; i++) {
		const Tensor *t = &g->tensor[g->input[i]];
		fputs("input ", f);
		esc_text(f, t->name);
		fprintf(f, ": %s", shape_str(&t->shape, buf, sizeof buf));
		if (t->seq) /* the model's sequence: its length first */
			fprintf(f, " tokens=%" PRId64, t->shape.d[0]);
		fputc('\n', f);
	}
	for (int i = 0; i < g->nlayer; i++) {
		const Layer *l = &g->layer[i];
		fprintf(f, "%d ", i);
		esc_text(f, l->name);
		fprintf(f, " = %s(", op_name(l->op));
		for (int j = 0; j < l->nin; j++) {
			fputs(j ? ", " : "", f);
			esc_text(f, g->tensor[l->in[j]].name);
		}
		fprintf(f, ")");
		for (int j = 0; j < l->nout; j++) {
			const Tensor *t = &g->tensor[l->out[j]];
			fputs(" -> ", f);
			esc_text(f, t->name);
			if (g->done & PASS_SHAPE)
				fprintf(f, ":%s", shape_str(&t->shape, buf, sizeof buf));
		}
		attrs(f, l);
		costs(f, g, l);
		fputc('\n', f);
	}
}
