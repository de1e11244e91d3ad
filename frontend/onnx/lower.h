/* lower.h -- lowering ONNX nodes that read an activation to IR layers:
 * what the lowering rules share (layer.c) and the rules themselves
 * (lower_compute.c, lower_shape.c), which the operator table names.
 *
 * Each rule turns one node into one layer (a few into two or more) and
 * says where the batch goes: ONNX shapes are full, the IR is per sample
 * (values.h, Val).  A rule never calls the graph walk or the table; the
 * composite rules (lower_composite.c) call the steps the others export,
 * never the other way. */
#ifndef ORACLEC_FRONTEND_ONNX_LOWER_H
#define ORACLEC_FRONTEND_ONNX_LOWER_H

#include "frontend/onnx/values.h"

/* A lowering rule: the node o->np, which reads an activation; in[i] are
 * its inputs (NULL for one left out), kind the layer kind its table row
 * gives.  False after an error. */
typedef bool LowerRule(Onnx *o, OpKind kind, const Val **in, int nin);

/* layer.c: a layer of kind op reading the activations in, its output the
 * node's output `out` (-1: a tensor of the lowering's own), or its first;
 * the layer's shapes inferred and its outputs bound as activations of
 * full rank `rank`, batch on axis `bax`, or x's; the note on renamed
 * layers, after the last node. */
Layer *onnx_layer_out(Onnx *o, OpKind op, const Val **in, int nin, int out);
Layer *onnx_layer(Onnx *o, OpKind op, const Val **in, int nin);
bool onnx_finish(Onnx *o, Layer *l, int rank, int bax);
bool onnx_finish_like(Onnx *o, Layer *l, const Val *x);
void onnx_note_renamed(Onnx *o);
/* After the last node: one note for the initializers counted once per
 * module that reads them (the exporter's merges), into the graph too. */
void onnx_note_merged(Onnx *o);
/* layer.c, the helpers of the rules: an axis attribute normalised (-1
 * after an error); the per-sample axis of one that must not be the
 * batch's (-2 after an error); a const layer of per-sample shape s; a
 * constant operand as a const layer; a one-input layer of kind op; a
 * transpose of x by the full permutation p (*out, when given, is the
 * result, a tensor of the lowering's own, else the node's output) */
int onnx_full_axis(Onnx *o, int64_t axis, int rank);
int onnx_sample_axis(Onnx *o, const Val *x, int64_t axis);
const Val *onnx_const_layer(Onnx *o, const Shape *per_sample);
const Val *onnx_const_operand(Onnx *o, const Val *c);
bool onnx_lower_unary(Onnx *o, const Val *x, OpKind op);
bool onnx_transpose(Onnx *o, const Val *x, const int64_t *p, const Val **out);
/* The steps of a node lowered to several layers (lower_composite.c),
 * each its output the node's output `out` or (-1) a tensor of its own,
 * *res (when given) the result: a reshape of x to the full shape
 * full[rank], its batch factor on axis bax (lower_shape.c); the matrix
 * product of two activations, NumPy matmul (lower_compute.c); x times a
 * constant k x f matrix, a fully connected layer (lower_compute.c). */
bool onnx_reshape(Onnx *o, const Val *x, const int64_t *full, int rank, int bax, int out,
		  const Val **res);
bool onnx_matmul(Onnx *o, const Val *a, const Val *b, int out, const Val **res);
bool onnx_fc(Onnx *o, const Val *x, int64_t k, int64_t f, int out, const Val **res);

/* lower_compute.c: convolutions, pools, norms, matrix products,
 * element-wise and unary operators.  The first input of MatMul, Gemm and
 * the element-wise rules may be a constant; every other rule's is the
 * activation. */
LowerRule lower_conv, lower_pool, lower_channels, lower_layernorm;
LowerRule lower_matmul, lower_gemm, lower_elementwise, lower_unary;

/* lower_shape.c: data movement and reductions.  Concat's and Gather's
 * first input may be a constant. */
LowerRule lower_reshape, lower_flatten, lower_squeeze, lower_unsqueeze, lower_transpose;
LowerRule lower_concat, lower_pad, lower_softmax, lower_depth_to_space;
LowerRule lower_space_to_depth, lower_gather, lower_slice, lower_split, lower_expand;
LowerRule lower_resize, lower_upsample, lower_reduce;
LowerRule lower_cumsum, lower_tile, lower_gather_elements;
/* lower_composite.c: operators lowered to the several layers that
 * compute them, with the steps above: Einsum, Attention (opset 23). */
LowerRule lower_einsum, lower_attention;
/* lower_shape.c: Expand or ConstantOfShape (kind OP_EXPAND or OP_CONST) of
 * constants to a shape that holds the batch: a const layer, the tensor
 * repeated for every sample (a class token).  *done false when the shape
 * does not hold the batch; false after an error. */
bool onnx_batch_const(Onnx *o, OpKind kind, const Val **in, int nin, bool *done);

#endif
