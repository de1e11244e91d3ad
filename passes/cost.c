/* cost.c -- per-sample compute and parameter counts of every layer.
 *
 * The rules, per op class (E = output elements, E_in = input elements,
 * K = kernel volume, c_* = the per-element constants of ir/ops.def);
 * docs/counting.md states them for users:
 *
 *   conv        MACs = F * out_spatial * (C/groups) * K
 *   convtranspose MACs = C * in_spatial * (F/groups) * K
 *   fc          MACs = E_in * F            (in * out per position)
 *   matmul      MACs = E * K_inner
 *   all three:  fwd = 2 MACs (+E for a bias), bwd_data = 2 MACs
 *               (matmul: 4 MACs, both operands are activations),
 *               bwd_weight = 2 MACs (+E for a bias; matmul: 0)
 *   pool        fwd = c_fwd * E * K; bwd = E * K (avg spreads), E (max routes)
 *   global and adaptive pool: fwd = bwd = E_in
 *   norm        fwd = c_fwd * E, bwd_data = c_bwd * E, bwd_weight = c_w * E
 *   unary, softmax: fwd = c_fwd * E, bwd_data = c_bwd * E
 *   binary      fwd = (inputs - 1) * E, bwd_data = c_bwd * E
 *   reduce      fwd = c_fwd * E_in, bwd_data = c_bwd * E_in
 *   resize      fwd = c_fwd * E, bwd_data = c_bwd * E
 *   concat, flatten, reshape, transpose, pad, gather, slice, expand,
 *   const:      0 (data movement only)
 *   opaque      0: no rule is known; reports list these layers
 *
 * Conv, pools and norms may have leading dimensions before the channels
 * (Attr.lead): E then counts every leading image, so the MACs follow.
 *
 * Parameters are the elements of the layer's weights (Layer.w), except
 * for ONNX layers, which count the file's trained tensors they are the
 * first to read (Layer.fparams): an initializer shared by two layers
 * counts once, and a constant operand such as a position embedding or a
 * class token counts where it is used; the file's untrained tensors
 * (Layer.fbuffers: a causal mask, rotary inv_freq) are buffers, with
 * batch norm's running statistics.
 *
 * Backward-data FLOPs are counted only for layers with an input that needs
 * a gradient, i.e. one downstream of a trained parameter: autograd computes
 * no gradient for the input image, so the first convolution has none.
 *
 * Elements moved, per sample (the roofline's memory side, model/compute.c,
 * which prices them at the analysis's precision):
 * forward reads the inputs and writes the outputs (batch norm reads its
 * input twice: statistics, then normalization) and reads the weights.
 * Backward, in elements of E and E_in, as autograd's kernels move them
 * (derivatives.yaml; docs/model.md, "One layer on one GPU"):
 *
 *   element-wise unary   3 E    read dy and the saved x or y, write dx
 *                               (a cast or a constant operand: 2 E)
 *   add, sub             0      dy passes to both inputs as it is; an
 *                               input broadcast to E gets dy summed down
 *                               (+E read); sub negates its second (+2 E)
 *   mul                  per input: dy times the other input, written at
 *                               full size (2 E + the other's), then summed
 *                               down if the input was broadcast (+E)
 *   global/adaptive pool E + E_in  read dy, write dx
 *   batch norm           5 E    x and dy read for the two reductions and
 *                               again for dx, dx written
 *   others               2 x forward's: a data and a weight gradient
 *                               that each move about what forward moved
 *   a layer whose inputs need no gradient: forward's, when it has weights
 *                               (their gradient reads x and dy), else 0
 *
 * and, on the layer that made a tensor k layers read differentiably,
 * autograd's accumulation of its k gradients: (k - 1) x 3 E.
 *
 * Every product is checked; a model whose counts overflow 64 bits is
 * rejected at the layer where it happens. */
#include "passes/passes.h"
#include "util/checked.h"

#include <stdlib.h>

typedef struct Acc {
	bool ok;
} Acc;

/* r = a * b * c, flagging overflow in acc */
static int64_t
mul3(Acc *acc, int64_t a, int64_t b, int64_t c)
{
	int64_t r;

	if (!ck_mul(a, b, &r) || !ck_mul(r, c, &r)) {
		acc->ok = false;
		return 0;
	}
	return r;
}

/* kernel volume; flags overflow (3-D kernels of 2^40 overflow) */
static int64_t
kvol(Acc *acc, const Layer *l)
{
	int64_t k = 1;

	for (int i = 0; i < l->attr.nspatial; i++)
		if (!ck_mul(k, l->attr.kernel[i], &k)) {
			acc->ok = false;
			return 0;
		}
	return k;
}

static void
mac_layer(Acc *acc, const Graph *g, const Layer *l, Cost *c, int64_t e)
{
	const Shape *x = &g->tensor[l->in[0]].shape;
	int64_t bias = l->attr.bias ? e : 0, groups = l->attr.groups ? l->attr.groups : 1;

	switch (l->op) {
	case OP_CONV:
		c->macs = mul3(acc, e, x->d[l->attr.lead] / groups, kvol(acc, l));
		break;
	case OP_CONVT:
		c->macs = mul3(acc, g->tensor[l->in[0]].elems, l->attr.filters / groups,
			       kvol(acc, l));
		break;
	case OP_FC:
		c->macs = mul3(acc, g->tensor[l->in[0]].elems, l->attr.filters, 1);
		break;
	default: /* matmul: the inner dimension is the first operand's last */
		c->macs = mul3(acc, e, x->rank ? x->d[x->rank - 1] : 1, 1);
		bias = 0;
		break;
	}
	if (!ck_add(mul3(acc, 2, c->macs, 1), bias, &c->flops_fwd))
		acc->ok = false;
	c->flops_bwd_data = mul3(acc, l->op == OP_MATMUL ? 4 : 2, c->macs, 1);
	c->flops_bwd_weight = l->op == OP_MATMUL ? 0 : c->flops_fwd;
}

static void
layer_cost(Acc *acc, const Graph *g, const Layer *l, Cost *c)
{
	const OpInfo *op = &op_info[l->op];
	int64_t e = g->tensor[l->out[0]].elems, ein = l->nin ? g->tensor[l->in[0]].elems : 0;

	switch (op->cls) {
	case OPC_CONV:
	case OPC_FC:
	case OPC_MATMUL:
		mac_layer(acc, g, l, c, e);
		break;
	case OPC_POOL:
		c->flops_fwd = mul3(acc, op->fwd, e, kvol(acc, l));
		c->flops_bwd_data =
			mul3(acc, op->bwd_data, e, l->op == OP_AVGPOOL ? kvol(acc, l) : 1);
		break;
	case OPC_GPOOL:
	case OPC_ADAPTPOOL:
		c->flops_fwd = mul3(acc, op->fwd, ein, 1);
		c->flops_bwd_data = mul3(acc, op->bwd_data, ein, 1);
		break;
	case OPC_NORM:
	case OPC_UNARY:
	case OPC_SOFTMAX:
		c->flops_fwd = mul3(acc, op->fwd, e, 1);
		c->flops_bwd_data = mul3(acc, op->bwd_data, e, 1);
		c->flops_bwd_weight = mul3(acc, op->bwd_weight, e, 1);
		break;
	case OPC_BINARY:
		c->flops_fwd = mul3(acc, op->fwd, l->nin - 1, e);
		c->flops_bwd_data = mul3(acc, op->bwd_data, e, 1);
		break;
	case OPC_REDUCE:
		c->flops_fwd = mul3(acc, op->fwd, ein, 1);
		c->flops_bwd_data = mul3(acc, op->bwd_data, ein, 1);
		break;
	case OPC_RESIZE:
		c->flops_fwd = mul3(acc, op->fwd, e, 1);
		c->flops_bwd_data = mul3(acc, op->bwd_data, e, 1);
		break;
	case OPC_CONCAT:
	case OPC_FLATTEN:
	case OPC_RESHAPE:
	case OPC_TRANSPOSE:
	case OPC_PAD:
	case OPC_OPAQUE:
	case OPC_CONST:
	case OPC_GATHER:
	case OPC_SLICE:
	case OPC_EXPAND:
		break;
	}
}

/* Elements e, noting an overflow where their bytes at the widest
 * element any precision stores (ir/precision.def) would overflow: the
 * counts are elements, priced at the analysis's precision (model/), and
 * a model is refused the same way at every precision. */
static int64_t
at_any_width(Acc *acc, int64_t e)
{
	mul3(acc, e, precision_widest(), 1);
	return e;
}

/* The elements of layer l's inputs and outputs, per sample. */
static int64_t
io_elems(Acc *acc, const Graph *g, const Layer *l)
{
	int64_t moved = 0;

	for (int i = 0; i < l->nin; i++)
		if (!ck_add(moved, g->tensor[l->in[i]].elems, &moved))
			acc->ok = false;
	for (int i = 0; i < l->nout; i++)
		if (!ck_add(moved, g->tensor[l->out[i]].elems, &moved))
			acc->ok = false;
	return moved;
}

/* Parameters, untrained buffers, and the bytes forward reads and writes
 * (views move nothing). */
static void
layer_sizes(Acc *acc, const Graph *g, const Layer *l, Cost *c)
{
	int64_t moved;

	for (int i = 0; i < l->nw && l->fparams < 0; i++)
		if (!ck_add(c->params, l->w[i].elems, &c->params))
			acc->ok = false;
	if (l->fparams >= 0)
		c->params = l->fparams;
	if (l->op == OP_BATCHNORM) /* running mean, var */
		c->buffers = 2 * g->tensor[l->out[0]].shape.d[l->attr.lead];
	if (!ck_add(c->buffers, l->fbuffers, &c->buffers)) /* ONNX: a mask, inv_freq */
		acc->ok = false;
	if (op_info[l->op].save & S_VIEW)
		return;
	moved = io_elems(acc, g, l);
	if (l->op == OP_BATCHNORM && !ck_add(moved, g->tensor[l->in[0]].elems, &moved))
		acc->ok = false; /* the statistics' read */
	if (!ck_add(moved, c->params, &moved))
		acc->ok = false;
	c->elems_fwd = at_any_width(acc, moved);
}

/* Ops through which no gradient flows to their inputs. */
static bool
differentiable(OpKind op)
{
	switch (op) {
	case OP_EQUAL: case OP_LESS: case OP_GREATER: case OP_AND: case OP_OR:
	case OP_XOR: case OP_NOT: case OP_MOD: case OP_FLOOR: case OP_CEIL:
	case OP_ROUND: case OP_SIGN: case OP_HARDMAX:
		return false;
	default:
		return true;
	}
}

/* The elements layer l's backward kernels read and write per sample (the
 * table at the top), its output gradients' accumulation left out. */
static int64_t
backward_elems(Acc *acc, const Graph *g, const Layer *l, const Cost *c, bool in_grad)
{
	int64_t e = g->tensor[l->out[0]].elems, moved, r = 0;

	if (op_info[l->op].save & S_VIEW)
		return 0;
	moved = io_elems(acc, g, l);
	if (!in_grad)
		return c->params > 0 ? moved : 0;
	switch (l->op) {
	case OP_BATCHNORM:
		return mul3(acc, 5, e, 1);
	case OP_ADD:
	case OP_SUB:
	case OP_MUL:
		for (int i = 0; i < l->nin; i++) {
			int64_t part = g->tensor[l->in[i]].elems < e ? e : 0;

			if (l->op == OP_MUL && l->nin == 2)
				part += 2 * e + g->tensor[l->in[1 - i]].elems;
			if (l->op == OP_SUB && i == 1)
				part += 2 * e;
			if (!ck_add(r, part, &r))
				acc->ok = false;
		}
		return r;
	case OP_GAVGPOOL:
	case OP_GMAXPOOL:
	case OP_ADAPTAVGPOOL:
		return moved;
	case OP_CAST:  /* dy cast back */
	case OP_SCALE: /* dy times the constant (an added one passes dy on) */
		return mul3(acc, 2, e, 1);
	case OP_LRN: /* x, the saved scale and dy read, dx written: forward's twice */
		break;
	default:
		if (op_info[l->op].cls == OPC_UNARY)
			return op_info[l->op].bwd_data > 0 ? mul3(acc, 3, e, 1) : 0;
		break;
	}
	return mul3(acc, 2, moved, 1);
}

static bool
sum(int64_t *t, int64_t v)
{
	return ck_add(*t, v, t);
}

/* Does any input of layer l need a gradient?  Marks its outputs as
 * needing one when it does or when the layer has parameters. */
static bool
grad_flow(const Graph *g, const Layer *l, bool *grad)
{
	bool in = false;

	for (int i = 0; i < l->nin; i++)
		in |= grad[l->in[i]];
	for (int i = 0; i < l->nout; i++)
		grad[l->out[i]] = in || l->cost.params > 0;
	return in;
}

bool
cost_annotate(Graph *g)
{
	Totals *t = &g->total;
	int errors = diag_errors();
	bool *grad = xcalloc(g->ntensor ? g->ntensor : 1, sizeof *grad);
	int *reads = xcalloc(g->ntensor ? g->ntensor : 1, sizeof *reads);

	for (int i = 0; i < g->nlayer; i++)
		for (int k = 0; k < g->layer[i].nin; k++)
			reads[g->layer[i].in[k]] += differentiable(g->layer[i].op);
	*t = (Totals){ 0 };
	for (int i = 0; i < g->nlayer; i++) {
		Layer *l = &g->layer[i];
		Cost *c = &l->cost;
		Acc acc = { true };
		int64_t act = c->act_elems, bwd;

		*c = (Cost){ .act_elems = act };
		layer_cost(&acc, g, l, c);
		layer_sizes(&acc, g, l, c);
		bool in_grad = grad_flow(g, l, grad);

		if (!in_grad)
			c->flops_bwd_data = 0;
		bwd = backward_elems(&acc, g, l, c, in_grad);
		for (int k = 0; k < l->nout; k++) /* its gradients summed */
			if (grad[l->out[k]] && reads[l->out[k]] > 1 &&
			    !ck_add(bwd,
				    mul3(&acc, 3, reads[l->out[k]] - 1, g->tensor[l->out[k]].elems),
				    &bwd))
				acc.ok = false;
		c->elems_bwd = at_any_width(&acc, bwd);
		if (!ck_add(c->flops_bwd_data, c->flops_bwd_weight, &c->flops_bwd))
			acc.ok = false;
		acc.ok = acc.ok && sum(&t->params, c->params) && sum(&t->buffers, c->buffers) &&
			 sum(&t->macs, c->macs) && sum(&t->flops_fwd, c->flops_fwd) &&
			 sum(&t->flops_bwd_data, c->flops_bwd_data) &&
			 sum(&t->flops_bwd_weight, c->flops_bwd_weight) &&
			 sum(&t->elems_fwd, c->elems_fwd) && sum(&t->elems_bwd, c->elems_bwd);
		at_any_width(&acc, t->elems_fwd);
		at_any_width(&acc, t->elems_bwd);
		if (!acc.ok) {
			layer_error(g, l, "its operation counts overflow 64 bits");
			free(grad);
			free(reads);
			return false;
		}
	}
	free(grad);
	free(reads);
	if (!ck_add(t->flops_bwd_data, t->flops_bwd_weight, &t->flops_bwd)) {
		diag_error(g->loc, "model backward FLOPs overflow 64 bits");
		return false;
	}
	if (!ck_mul(t->params, precision_widest(), &(int64_t){ 0 }) ||
	    !ck_mul(t->buffers, precision_widest(), &(int64_t){ 0 })) {
		diag_error(g->loc, "model weights overflow 64 bits");
		return false;
	}
	if (diag_errors() > errors)
		return false;
	g->done |= PASS_COST;
	return true;
}
