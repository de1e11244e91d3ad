/* fold.h -- evaluating ONNX nodes whose inputs are all constants (fold.c):
 * the folding rules, which the operator table names, and the integer
 * arithmetic and Slice ranges the lowering rules read too. */
#ifndef ORACLEC_FRONTEND_ONNX_FOLD_H
#define ORACLEC_FRONTEND_ONNX_FOLD_H

#include "frontend/onnx/values.h"

/* A folding rule: evaluates the node o->np, whose inputs are all
 * constants (in[0] is given, but to Constant; in[i] NULL for an input
 * left out), into out: its shape when the rule is known, its values when
 * they are integers or small floats oraclec can compute (n = -1
 * otherwise).  code is the operator character of the table row
 * (fold_binary, fold_unary).  Errors (a bad tensor, an index out of
 * range) are reported; diag_errors() tells. */
typedef void FoldRule(Onnx *o, char code, const Val **in, int nin, Val *out);

/* Constant: the node's own value, no inputs; element-wise operators: x
 * code y for the codes of int_binary and & | p (and, or, pow), the shape
 * and values of a unary operator with code n(eg) a(bs) !(not) s(qrt)
 * r(elu) f(loor) c(eil) S(in) C(os) i(dentity), the shape alone of any
 * other */
FoldRule fold_constant, fold_binary, fold_unary, fold_same_shape;
FoldRule fold_shape, fold_size, fold_gather, fold_squeeze, fold_unsqueeze;
FoldRule fold_concat, fold_slice, fold_range, fold_constant_of_shape;
FoldRule fold_expand, fold_where, fold_scatternd, fold_cast, fold_reshape;
FoldRule fold_flatten, fold_transpose, fold_reduce;
/* Decoders' masks and positions: Trilu, CumSum, Tile, GatherElements,
 * Einsum (values computed when small, as the others') */
FoldRule fold_trilu, fold_cumsum, fold_tile, fold_gather_elements, fold_einsum;

/* An Einsum equation on operands of the given full ranks: each operand's
 * labels and the output's (letters 0-51, then the dimensions an ellipsis
 * stands for, aligned on the right), each label's extent from the
 * operands' shapes (1 broadcasts under an ellipsis).  False with a
 * reason in *why. */
enum { EINSUM_LABELS = 52 + MAX_RANK + 1 };
typedef struct Einsum {
	int n;                               /* operands, 1 or 2 */
	int rank[2], lab[2][MAX_RANK + 1];
	int orank, out[MAX_RANK + 1];
	int64_t size[EINSUM_LABELS];         /* 0: the label is not used */
} Einsum;
bool einsum_parse(const char *eq, const Val **in, int nin, Einsum *e, const char **why);

/* Slice's start, step and extent per axis of a full shape. */
typedef struct Range3 {
	int64_t start[MAX_RANK + 1], step[MAX_RANK + 1], len[MAX_RANK + 1];
} Range3;
/* The extent of x's axis a as Slice sees it: an activation's batch axis
 * holds N * d[a], N the file's batch, or 2^62 (past any bound but "to the
 * end") when the batch is symbolic; any other axis d[a]. */
int64_t slice_extent(const Onnx *o, const Val *x, int a);
/* Reads Slice's inputs (opset >= 10) or attributes (before) for x's full
 * shape into r (the batch axis at slice_extent's); false when they are not
 * constants. */
bool slice_ranges(Onnx *o, const Val **in, int nin, const Val *x, Range3 *r);
/* x op y for op in + - * / % = < > m(in) M(ax), the batch kept
 * symbolic; false when the result is unknown (N * N, N / 7, ...). */
bool int_binary(char op, Int x, Int y, Int *r);

#endif
