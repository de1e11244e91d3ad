/* optable.c -- every ONNX operator oraclec knows, one row each: the only
 * dispatch on op_type in the frontend.
 *
 * A row gives the lowering rule, run when the node reads an activation
 * (lower_compute.c, lower_shape.c; an operator without one becomes an
 * opaque layer, counted as zero, or an error with --strict), the folding
 * rule, run when every input is a constant (fold.c; without one the value
 * is unknown, an error only if a layer needs it), the IR kind and the
 * fold operator character those rules read, and flags for the graph walk
 * (optable.h, walk.c).  Adding an operator is adding a row, in order. */
#include "frontend/onnx/optable.h"

#include <stdlib.h>
#include <string.h>

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* Sorted by name (strcmp: capitals first), for bsearch; test_onnx checks. */
static const OnnxOp ops[] = {
	/* { op_type, lowering rule, folding rule, IR kind, fold code, flags } */
	{ "Abs", lower_unary, fold_unary, OP_ABS, 'a', 0 },
	{ "Acos", lower_unary, NULL, OP_TRIG, 0, 0 },
	{ "Acosh", lower_unary, NULL, OP_TRIG, 0, 0 },
	{ "Add", lower_elementwise, fold_binary, OP_ADD, '+', OPF_ANY_FIRST },
	{ "And", lower_elementwise, fold_binary, OP_AND, '&', OPF_ANY_FIRST },
	{ "ArgMax", lower_reduce, NULL, OP_ARGMAX, 0, 0 },
	{ "ArgMin", lower_reduce, NULL, OP_ARGMIN, 0, 0 },
	{ "Asin", lower_unary, NULL, OP_TRIG, 0, 0 },
	{ "Asinh", lower_unary, NULL, OP_TRIG, 0, 0 },
	{ "Atan", lower_unary, NULL, OP_TRIG, 0, 0 },
	{ "Atanh", lower_unary, NULL, OP_TRIG, 0, 0 },
	{ "Attention", lower_attention, NULL, OP_OPAQUE, 0, 0 },
	{ "AveragePool", lower_pool, NULL, OP_AVGPOOL, 0, 0 },
	{ "BatchNormalization", lower_channels, NULL, OP_BATCHNORM, 0, 0 },
	{ "Cast", lower_unary, fold_cast, OP_CAST, 0, OPF_VIEW },
	{ "CastLike", lower_unary, NULL, OP_CAST, 0, 0 },
	{ "Ceil", lower_unary, fold_unary, OP_CEIL, 'c', 0 },
	{ "Celu", lower_unary, NULL, OP_CELU, 0, 0 },
	{ "Clip", lower_unary, fold_same_shape, OP_CLIP, '-', 0 },
	{ "Compress", NULL, NULL, OP_OPAQUE, 0, OPF_DATA_SHAPED },
	{ "Concat", lower_concat, fold_concat, OP_OPAQUE, 0,
	  OPF_ANY_FIRST | OPF_VIEW | OPF_VIEW_ALL },
	{ "Constant", NULL, fold_constant, OP_OPAQUE, 0, OPF_CONSTANT },
	{ "ConstantOfShape", NULL, fold_constant_of_shape, OP_CONST, 0,
	  OPF_DATA_SHAPED | OPF_TO_BATCH },
	{ "Conv", lower_conv, NULL, OP_CONV, 0, 0 },
	{ "ConvTranspose", lower_conv, NULL, OP_CONVT, 0, 0 },
	{ "Cos", lower_unary, fold_unary, OP_COS, 'C', 0 },
	{ "Cosh", lower_unary, NULL, OP_TRIG, 0, 0 },
	{ "CumSum", lower_cumsum, fold_cumsum, OP_CUMSUM, 0, 0 },
	{ "DepthToSpace", lower_depth_to_space, NULL, OP_OPAQUE, 0, 0 },
	{ "Div", lower_elementwise, fold_binary, OP_DIV, '/', OPF_ANY_FIRST },
	{ "Dropout", lower_unary, fold_unary, OP_DROPOUT, 'i', OPF_VIEW },
	{ "Einsum", lower_einsum, fold_einsum, OP_OPAQUE, 0, OPF_ANY_FIRST },
	{ "Elu", lower_unary, NULL, OP_ELU, 0, 0 },
	{ "Equal", lower_elementwise, fold_binary, OP_EQUAL, '=', OPF_ANY_FIRST },
	{ "Erf", lower_unary, fold_same_shape, OP_ERF, '-', 0 },
	{ "Exp", lower_unary, fold_same_shape, OP_EXP, '-', 0 },
	{ "Expand", lower_expand, fold_expand, OP_EXPAND, 0, OPF_TO_BATCH | OPF_VIEW },
	{ "Flatten", lower_flatten, fold_flatten, OP_OPAQUE, 0, OPF_VIEW },
	{ "Floor", lower_unary, fold_unary, OP_FLOOR, 'f', 0 },
	{ "Gather", lower_gather, fold_gather, OP_OPAQUE, 0, OPF_ANY_FIRST | OPF_PAIR | OPF_VIEW },
	{ "GatherElements", lower_gather_elements, fold_gather_elements, OP_GATHERELEMENTS, 0,
	  OPF_ANY_FIRST | OPF_VIEW },
	{ "Gelu", lower_unary, NULL, OP_GELU, 0, 0 },
	{ "Gemm", lower_gemm, NULL, OP_OPAQUE, 0, OPF_ANY_FIRST | OPF_PAIR },
	{ "GlobalAveragePool", lower_channels, NULL, OP_GAVGPOOL, 0, 0 },
	{ "GlobalMaxPool", lower_channels, NULL, OP_GMAXPOOL, 0, 0 },
	{ "Greater", lower_elementwise, fold_binary, OP_GREATER, '>', OPF_ANY_FIRST },
	{ "GreaterOrEqual", lower_elementwise, NULL, OP_GREATER, 0, OPF_ANY_FIRST },
	{ "HardSigmoid", lower_unary, NULL, OP_HARDSIGMOID, 0, 0 },
	{ "HardSwish", lower_unary, NULL, OP_HARDSWISH, 0, 0 },
	{ "Hardmax", lower_softmax, NULL, OP_HARDMAX, 0, 0 },
	{ "Identity", lower_unary, fold_unary, OP_IDENTITY, 'i', OPF_VIEW },
	{ "InstanceNormalization", lower_channels, NULL, OP_INSTNORM, 0, 0 },
	{ "LRN", lower_unary, NULL, OP_LRN, 0, 0 },
	{ "LayerNormalization", lower_layernorm, NULL, OP_LAYERNORM, 0, 0 },
	{ "LeakyRelu", lower_unary, fold_same_shape, OP_LEAKYRELU, '-', 0 },
	{ "Less", lower_elementwise, fold_binary, OP_LESS, '<', OPF_ANY_FIRST },
	{ "LessOrEqual", lower_elementwise, NULL, OP_LESS, 0, OPF_ANY_FIRST },
	{ "Log", lower_unary, fold_same_shape, OP_LOG, '-', 0 },
	{ "LogSoftmax", lower_softmax, NULL, OP_LOGSOFTMAX, 0, 0 },
	{ "MatMul", lower_matmul, NULL, OP_OPAQUE, 0, OPF_ANY_FIRST | OPF_PAIR },
	{ "Max", lower_elementwise, fold_binary, OP_MAX, 'M', OPF_ANY_FIRST },
	{ "MaxPool", lower_pool, NULL, OP_MAXPOOL, 0, 0 },
	{ "Mean", lower_elementwise, NULL, OP_MEAN, 0, OPF_ANY_FIRST },
	{ "Min", lower_elementwise, fold_binary, OP_MIN, 'm', OPF_ANY_FIRST },
	{ "Mish", lower_unary, NULL, OP_SILU, 0, 0 },
	{ "Mod", lower_elementwise, fold_binary, OP_MOD, '%', OPF_ANY_FIRST },
	{ "Mul", lower_elementwise, fold_binary, OP_MUL, '*', OPF_ANY_FIRST },
	{ "Neg", lower_unary, fold_unary, OP_NEG, 'n', 0 },
	{ "NonMaxSuppression", NULL, NULL, OP_OPAQUE, 0, OPF_DATA_SHAPED },
	{ "NonZero", NULL, NULL, OP_OPAQUE, 0, OPF_DATA_SHAPED },
	{ "Not", lower_unary, fold_unary, OP_NOT, '!', 0 },
	{ "OneHot", NULL, NULL, OP_OPAQUE, 0, OPF_DATA_SHAPED },
	{ "Or", lower_elementwise, fold_binary, OP_OR, '|', OPF_ANY_FIRST },
	{ "PRelu", lower_elementwise, NULL, OP_PRELU, 0, OPF_ANY_FIRST },
	{ "Pad", lower_pad, NULL, OP_OPAQUE, 0, 0 },
	{ "Pow", lower_elementwise, fold_binary, OP_POWER, 'p', OPF_ANY_FIRST },
	{ "RMSNormalization", lower_layernorm, NULL, OP_RMSNORM, 0, 0 },
	{ "Range", NULL, fold_range, OP_OPAQUE, 0, OPF_DATA_SHAPED },
	{ "Reciprocal", lower_unary, fold_same_shape, OP_RECIPROCAL, '-', 0 },
	{ "ReduceL1", lower_reduce, fold_reduce, OP_REDUCEL1, 0, 0 },
	{ "ReduceL2", lower_reduce, fold_reduce, OP_REDUCEL2, 0, 0 },
	{ "ReduceLogSum", lower_reduce, fold_reduce, OP_REDUCELOGSUM, 0, 0 },
	{ "ReduceLogSumExp", lower_reduce, fold_reduce, OP_REDUCELSE, 0, 0 },
	{ "ReduceMax", lower_reduce, fold_reduce, OP_REDUCEMAX, 0, 0 },
	{ "ReduceMean", lower_reduce, fold_reduce, OP_REDUCEMEAN, 0, 0 },
	{ "ReduceMin", lower_reduce, fold_reduce, OP_REDUCEMIN, 0, 0 },
	{ "ReduceProd", lower_reduce, fold_reduce, OP_REDUCEPROD, 0, 0 },
	{ "ReduceSum", lower_reduce, fold_reduce, OP_REDUCESUM, 0, 0 },
	{ "ReduceSumSquare", lower_reduce, fold_reduce, OP_REDUCESUMSQ, 0, 0 },
	{ "Relu", lower_unary, fold_unary, OP_RELU, 'r', 0 },
	{ "Reshape", lower_reshape, fold_reshape, OP_OPAQUE, 0, OPF_VIEW },
	{ "Resize", lower_resize, NULL, OP_OPAQUE, 0, 0 },
	{ "Round", lower_unary, fold_same_shape, OP_ROUND, '-', 0 },
	{ "ScatterElements", lower_unary, NULL, OP_SCATTER, 0, 0 },
	{ "ScatterND", lower_unary, fold_scatternd, OP_SCATTER, 0, 0 },
	{ "Selu", lower_unary, NULL, OP_SELU, 0, 0 },
	{ "Shape", NULL, fold_shape, OP_OPAQUE, 0, OPF_SHAPE_ONLY },
	{ "Sigmoid", lower_unary, fold_same_shape, OP_SIGMOID, '-', 0 },
	{ "Sign", lower_unary, fold_same_shape, OP_SIGN, '-', 0 },
	{ "Sin", lower_unary, fold_unary, OP_SIN, 'S', 0 },
	{ "Sinh", lower_unary, NULL, OP_TRIG, 0, 0 },
	{ "Size", NULL, fold_size, OP_OPAQUE, 0, OPF_SHAPE_ONLY },
	{ "Slice", lower_slice, fold_slice, OP_OPAQUE, 0, OPF_VIEW },
	{ "Softmax", lower_softmax, fold_same_shape, OP_SOFTMAX, '-', 0 },
	{ "Softplus", lower_unary, NULL, OP_SOFTPLUS, 0, 0 },
	{ "Softsign", lower_unary, NULL, OP_SOFTSIGN, 0, 0 },
	{ "SpaceToDepth", lower_space_to_depth, NULL, OP_OPAQUE, 0, 0 },
	{ "Split", lower_split, NULL, OP_OPAQUE, 0, OPF_VIEW },
	{ "Sqrt", lower_unary, fold_unary, OP_SQRT, 's', 0 },
	{ "Squeeze", lower_squeeze, fold_squeeze, OP_OPAQUE, 0, OPF_VIEW },
	{ "StringSplit", NULL, NULL, OP_OPAQUE, 0, OPF_DATA_SHAPED },
	{ "Sub", lower_elementwise, fold_binary, OP_SUB, '-', OPF_ANY_FIRST },
	{ "Sum", lower_elementwise, NULL, OP_ADD, 0, OPF_ANY_FIRST },
	{ "Tan", lower_unary, NULL, OP_TRIG, 0, 0 },
	{ "Tanh", lower_unary, fold_same_shape, OP_TANH, '-', 0 },
	{ "ThresholdedRelu", lower_unary, NULL, OP_THRELU, 0, 0 },
	{ "Tile", lower_tile, fold_tile, OP_TILE, 0, OPF_VIEW },
	{ "TopK", NULL, NULL, OP_OPAQUE, 0, OPF_DATA_SHAPED },
	{ "Transpose", lower_transpose, fold_transpose, OP_OPAQUE, 0, OPF_VIEW },
	{ "Trilu", lower_unary, fold_trilu, OP_TRILU, 0, 0 },
	{ "Unique", NULL, NULL, OP_OPAQUE, 0, OPF_DATA_SHAPED },
	{ "Unsqueeze", lower_unsqueeze, fold_unsqueeze, OP_OPAQUE, 0, OPF_VIEW },
	{ "Upsample", lower_upsample, NULL, OP_OPAQUE, 0, 0 },
	{ "Where", lower_elementwise, fold_where, OP_WHERE, 0, OPF_ANY_FIRST },
	{ "Xor", lower_elementwise, NULL, OP_XOR, 0, OPF_ANY_FIRST },
};

/* bsearch's comparison: a name against a row's. */
static int
by_name(const void *key, const void *row)
{
	return strcmp(key, ((const OnnxOp *)row)->name);
}

const OnnxOp *
onnx_op(const char *op_type)
{
	return bsearch(op_type, ops, NELEM(ops), sizeof ops[0], by_name);
}

const OnnxOp *
onnx_ops(size_t *n)
{
	*n = NELEM(ops);
	return ops;
}
