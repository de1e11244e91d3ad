/* optable.h -- the ONNX operators oraclec knows, one row each (optable.c):
 * the only place an op_type string picks a rule. */
#ifndef ORACLEC_FRONTEND_ONNX_OPTABLE_H
#define ORACLEC_FRONTEND_ONNX_OPTABLE_H

#include "frontend/onnx/fold.h"
#include "frontend/onnx/lower.h"

/* What the graph walk does with a node besides calling the row's rules. */
enum {
	/* lowered when any input is the activation (the first may be a
	 * constant); without it, the first input must be the activation */
	OPF_ANY_FIRST = 1 << 0,
	/* with OPF_ANY_FIRST: lowered so only when the first two inputs are
	 * given; otherwise as an operator with no lowering rule */
	OPF_PAIR = 1 << 1,
	/* the output's shape is computed from data: reading an activation
	 * is an error */
	OPF_DATA_SHAPED = 1 << 2,
	/* reads only its input's shape: folded even when that is an
	 * activation (Shape, Size) */
	OPF_SHAPE_ONLY = 1 << 3,
	/* of constants, to a shape that may hold the batch: then a const
	 * layer (onnx_batch_const) instead of a folded value */
	OPF_TO_BATCH = 1 << 4,
	/* Constant: folded without inputs; a float tensor in it (not a
	 * scalar) is a trained weight, as a float initializer is */
	OPF_CONSTANT = 1 << 5,
	/* a view or a copy of its first input (a Cast to a float type):
	 * a weight folded through it is still the weight; through any other
	 * operator, or as another input, it is derived (values.h, Src) */
	OPF_VIEW = 1 << 6,
	/* with OPF_VIEW: of every input (Concat) */
	OPF_VIEW_ALL = 1 << 7,
};

/* One operator. */
typedef struct OnnxOp {
	const char *name;   /* the op_type; the table is sorted by it (strcmp) */
	LowerRule *lower;   /* when it reads an activation; NULL: an opaque layer */
	FoldRule *fold;     /* when every input is a constant; NULL: unknown value */
	OpKind kind;        /* the layer kind, for the rules that make one of
	                       several; OP_OPAQUE in the rows of the others */
	char code;          /* the folding rule's operator character (fold.h) */
	unsigned flags;     /* OPF_* */
} OnnxOp;

/* The row of op_type, NULL for an operator oraclec does not know. */
const OnnxOp *onnx_op(const char *op_type);
/* The table: its rows, *n of them (tests check its order). */
const OnnxOp *onnx_ops(size_t *n);

#endif
