/* engine.h -- what the cost model computes once and reads many times, and
 * the buffers it works in, owned by one context: an Engine.  Every
 * analysis points to the engine its figures are kept in (Analysis.eng);
 * the analyses of one run (its sweep, search, advice, validation rows)
 * share one, so that what one computed the others find.  Nothing of it is
 * static: two engines, and the analyses on each, live side by side.
 *
 * Each memo keys on the query (model/key.h: the graph by its identity and
 * version, the system, the implementation, and the settings as
 * ir/settings.def says each keys) and on its own arguments:
 *
 *   reuse.c     per-layer rows: times, issue times, a split's
 *               collectives, halos and gathers; the layer table and its
 *               classes of layers alike
 *   pipeline.c  a pipeline's partitions
 *   memuse.c    what training keeps in bytes at a precision, with the
 *               backward pass's peak and each layer's (by the graph, its
 *               count and the widths: what they read)
 *   kernel.c    a matrix product's tiling
 *   peak.c      the dense peak the model's matrix products run at (MFU)
 *
 * docs/internals.md, "What the engine computes once". */
#ifndef ORACLEC_MODEL_ENGINE_H
#define ORACLEC_MODEL_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/key.h"

/* The scratch buffers, one slot each: a buffer kept from one call to the
 * next and grown as asked, its contents what the last user left.  One
 * list, so no two users share a slot. */
typedef enum ScratchSlot {
	/* pipeline.c: a partition's per-layer arrays */
	SC_PIPE_T, SC_PIPE_F, SC_PIPE_A, SC_PIPE_HELD, SC_PIPE_IN, SC_PIPE_INS, SC_PIPE_COL,
	SC_PIPE_REDO, SC_PIPE_HALO, SC_PIPE_END, SC_PIPE_PRE, SC_PIPE_ITEMS, SC_PIPE_IT_T,
	SC_PIPE_IT_F, SC_PIPE_IT_A, SC_PIPE_IT_IN, SC_PIPE_BEST_END, SC_PIPE_BEST_TIME,
	SC_PIPE_PLAN_END, SC_PIPE_PLAN_SUM, SC_PIPE_CLASS_COST, SC_PIPE_CLASS_HAVE,
	SC_PIPE_CLASS_W, SC_PIPE_CUT, SC_PIPE_LAST, SC_PIPE_CROSS, SC_PIPE_WSHARE,
	/* physical.c: the gradients' shares, a spatial split's rows */
	SC_PHYS_WSHARE, SC_PHYS_ROWS, SC_PHYS_REST, SC_PHYS_SHARE,
	/* reuse.c: the host lane's arrays where rows keep classes */
	SC_REUSE_LANE,
	/* memuse.c: each layer's kept bytes where the memos are off */
	SC_MEM_KEPT,
	SC_COUNT
} ScratchSlot;

struct Rows;
struct Plans;
struct TileMemo;
struct KernelNeeds;

typedef struct Engine {
	bool reuse;              /* false: every figure computed on every read,
	                            no layers classed, no partition kept (what
	                            the strategies compute without the memos,
	                            for tests that compare the two bit for bit) */
	unsigned reads;          /* figures read back: one in 1,024 is computed
	                            again and compared (reuse.c) */
	KeyStamps stamps;        /* the queries met, each with its stamp */
	struct Rows *rows;       /* reuse.c's, made on first use */
	struct Plans *plans;     /* pipeline.c's */
	struct TileMemo *tiles;  /* kernel.c's */
	struct {                 /* peak.c: the last answer */
		uint64_t stamp;
		double peak;
	} peak;
	struct KeptMemo *kept;   /* memuse.c's: what training keeps at a
	                            precision, the last few answers */
	struct {                 /* skew.c: the expected largest of n
	                            standard normals, a slot by n's hash
	                            (n = 0: empty) */
		int64_t n;
		double v;
	} slowest[64];
	void *scratch[SC_COUNT];
	size_t scratch_size[SC_COUNT];
	struct KernelNeeds *needs; /* --kernels-needed: every kernel key and
	                            batch the pricing looks up, recorded where
	                            it looks (model/tabletime.c); NULL: none
	                            recorded.  The engine frees it */
} Engine;

/* A new engine (reuse false: the memos switched off); freed with all it
 * keeps by engine_free (NULL is nothing). */
Engine *engine_new(bool reuse);
void engine_free(Engine *e);

/* Slot's buffer in e for n items of `size` bytes. */
void *engine_scratch(Engine *e, ScratchSlot slot, size_t n, size_t size);

#endif
