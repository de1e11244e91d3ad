/* kernels.h -- measured kernel times keyed by shape: the kernel table a
 * probe writes (docs/kernel-table.md) and the key of a layer that finds
 * its row.
 *
 * A key is what a kernel's time depends on and nothing else: the class
 * of operator, the number format it ran in, the memory layout where the
 * class has one, and the shape of one sample (the items of the class,
 * below).  The batch N is kept apart from the key: a row is a key
 * measured at one N, and the rows of one key are its measurements along
 * N.  A layer's key never holds its name, so two layers of one shape
 * share a row, and a model renamed finds the same rows.
 *
 * Who makes what: ir/kernelkey.c gives a layer its key and writes and
 * compares keys; frontend/kernels.c reads a table into a KernelTable,
 * sorted by key then N; model/kerneltable.c looks a key up in one
 * (model/kerneltable.h). */
#ifndef ORACLEC_IR_KERNELS_H
#define ORACLEC_IR_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/graph.h"
#include "ir/grid.h"
#include "ir/system.h"
#include "util/diag.h"

/* The classes of kernels, each with the items of its key (kernelkey.c's
 * schema, docs/kernel-table.md):
 *   conv         c h w k r s stride(2) pad(4) groups dilation(2)
 *   gemm         m n k batch (m: rows of one sample)
 *   attention    heads s kv d
 *   elementwise  op elements [other]          (other: binary operators)
 *   norm         op c elements
 *   pool         op c h w [r s stride(2) pad(4) ceil | oh ow] */
typedef enum KernelClass {
	KC_CONV, KC_GEMM, KC_ATTENTION, KC_ELEMENTWISE, KC_NORM, KC_POOL, KC_COUNT
} KernelClass;

/* The memory layout of the activations, where the class has one (conv,
 * norm, pool); KL_ANY for the others. */
typedef enum KernelLayout { KL_ANY, KL_NCHW, KL_NHWC, KL_COUNT } KernelLayout;

enum {
	KEY_DIMS = 16,          /* numbers in a key's shape, at most */
	KEY_TEXT = 256,         /* bytes of a key's shape as text, at most */
};

typedef struct KernelKey {
	KernelClass cls;
	Dtype dt;               /* the number format the kernel ran in */
	KernelLayout layout;
	int op;                 /* elementwise, norm, pool: the OpKind (ops.def
	                           names it in the table); -1 for the others */
	int nd;                 /* numbers in d (the class's schema) */
	int64_t d[KEY_DIMS];    /* the shape of one sample, in schema order;
	                           zeros past nd */
} KernelKey;

/* One measured kernel: a key at N, seconds per call, NAN where none. */
typedef struct KernelRow {
	KernelKey key;
	int64_t n;              /* the batch the kernel ran at (conv, pool, norm:
	                           images; the others: samples) */
	double fwd;             /* forward */
	double bwd_data;        /* the gradient of the (first) input */
	double bwd_weight;      /* the gradient of the weights (gemm: of the
	                           second operand); NAN: none, or measured
	                           with bwd_data (docs/kernel-table.md) */
	double spread;          /* (max - min) / median of the repeats, the
	                           largest of the three times' */
	int repeats;
	const char *kernel;     /* what the library ran; "" unknown */
	Loc loc;                /* the row in its file */
} KernelRow;

typedef struct KernelTable {
	const char *file;
	KernelRow *row;         /* sorted by key (kernel_key_cmp), then n */
	int nrow;
	const char **note;      /* the provenance comments, '#' taken off */
	int nnote;
} KernelTable;

/* The keys and batches a pricing looked a table up at (--kernels-needed:
 * what a probe must measure for the strategies asked for), each once
 * (model/kerneltable.c fills it; backends/needed.c writes it). */
typedef struct KernelNeed {
	KernelKey key;
	int64_t n;
} KernelNeed;
typedef struct KernelNeeds {
	KernelNeed *need;
	int n, cap;
	int *slot;              /* open addressing: index + 1 into need, 0 empty */
	size_t nslot;           /* a power of two, at least twice n */
} KernelNeeds;

/* ---- kernelkey.c ----------------------------------------------------- */

const char *kernel_class_name(KernelClass c);
bool kernel_class_parse(const char *s, KernelClass *c);
const char *kernel_layout_name(KernelLayout l);
bool kernel_layout_parse(const char *s, KernelLayout *l);
const char *kernel_dtype_name(Dtype dt);
bool kernel_dtype_parse(const char *s, Dtype *dt);

/* An item of a key's shape: its name and how many numbers it holds
 * (stride=2x1: 2). */
typedef struct KernelItem {
	const char *name;
	int arity;
} KernelItem;

/* The items of a key of class c (and op, for the classes that have one),
 * *n of them; NULL where the op has no key in that class. */
const KernelItem *kernel_schema(KernelClass c, int op, int *n);

/* The class of the key an operator has (ops.def), or -1 for none: the
 * operators of elementwise, norm and pool keys ("relu", "batchnorm"). */
int kernel_op_class(int op);

/* Layer i's key at training precision prec (its kernels' number format
 * follows it: precision.def) and activations in NHWC or not; *per_sample
 * the row's N for one sample (a convolution's leading dimensions: images
 * a sample holds).  False: the layer has no key of its own (a view, a
 * copy, a part of another layer's key: docs/kernel-table.md). */
bool kernel_key(const Graph *g, int i, Precision prec, bool channels_last, KernelKey *k,
		int64_t *per_sample);

/* The operator layer l stands for: its kind, or the whole operator at the
 * first layer of an ONNX decomposition (Layer.pattern: LayerNorm's
 * reduction, GELU's, a gated unit's sigmoid for SiLU or hard sigmoid for
 * Hardswish). */
int layer_operator(const Layer *l);

/* The key of one GPU's part of a layer of key k split `ways` ways along
 * `how` into *part: DIM_FILTER its output channels (a convolution's k, a
 * linear layer's n), DIM_CHANNEL its input channels (c; k), a grouped
 * convolution whole groups (c, k and groups over ways, where ways divides
 * the groups); DIM_SPATIAL the rows of its strip (a convolution's or
 * pooling's h, an element-wise or norm layer's elements, at least `ways`
 * rows).  A part's size is the largest GPU's: ceil(size / ways).  False
 * where the split cannot divide the layer that way (the model prices
 * it).  docs/kernel-table.md, "The keys a run needs". */
bool kernel_key_shard(const KernelKey *k, GridDim how, int64_t ways, KernelKey *part);

/* Order of keys: class, format, layout, op, then the shape. */
int kernel_key_cmp(const KernelKey *a, const KernelKey *b);

/* The shape as the table writes it ("c=64 h=56 ... dilation=1x1"),
 * NUL-terminated into buf (KEY_TEXT bytes suffice). */
void kernel_key_text(const KernelKey *k, char *buf, size_t size);

#endif
