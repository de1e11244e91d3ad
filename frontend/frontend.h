/* frontend.h -- turning input files into IR.  A frontend knows file
 * formats and nothing of strategies' costs: it sees the graph, the
 * cluster, grids and measured runs, never ir/analysis.h (the frontend's
 * files are compiled with ORACLEC_FRONTEND, which makes including it an
 * error; Makefile.am, libfrontend.a). */
#ifndef ORACLEC_FRONTEND_FRONTEND_H
#define ORACLEC_FRONTEND_FRONTEND_H

#include <stdint.h>
#include <stdio.h>

#include "ir/graph.h"
#include "ir/grid.h"
#include "ir/measured.h"
#include "ir/implementation.h"
#include "ir/kernels.h"
#include "ir/system.h"
#include "ir/trace.h"
#include "util/files.h"

/* Limits on input files (docs/limits.md). */
#define MAX_ODL_BYTES ((size_t)64 << 20)
/* A profiler's trace (--profile): 256 MiB, some 750 steps of ResNet-18
 * traced on a CPU (340 kB and 2,600 events a step) */
#define MAX_TRACE_BYTES ((size_t)256 << 20)
/* GPU memory a system may declare (keeps byte counts exact in JSON) */
#define MAX_SYSTEM_BYTES 1152921504606846976.0 /* 2^60 */
/* A sequence's tokens (--seq-len, ODL `as tokens`): far beyond any
 * model's context, well inside a dimension's range */
#define MAX_SEQ_LEN ((int64_t)1 << 30)
/* A measured time per sample (profiles, ParaDL tables' time column) */
#define MAX_SAMPLE_SECONDS 1e6

/* dsl.c: read an ODL file (and its includes), expand blocks and repeats,
 * return the model as a Graph in topological order with input shapes set.
 * NULL after reporting errors.  Every file read is added to `files`. */
Graph *dsl_load(const char *path, Arena *a, FileList *files);

/* What the ONNX reader can be told from the command line. */
typedef struct OnnxOptions {
	const Shape *input_shape; /* per-sample shape of the first input, or NULL */
	int64_t seq_len;          /* --seq-len: an integer input's symbolic sequence
	                             axis ([batch, s] token ids, a mask); 0 none */
	bool strict;              /* an unsupported operator is an error */
	bool nobatch;             /* every graph input is one whole sample */
	FILE *print_outputs;      /* print the graph outputs' shapes here */
} OnnxOptions;

/* onnx/read.c: read an ONNX ModelProto (weights never opened), fold shape
 * computations, return the layers as a Graph.  NULL after errors. */
Graph *onnx_load(const char *path, Arena *a, FileList *files, const OnnxOptions *opt);

/* onnx/read.c: print a serialized TensorProto's dims as "name [d0,d1,...]"
 * (the conformance test reads ONNX's expected outputs with it). */
bool onnx_print_tensor_dims(const char *path, FILE *f);

/* onnx/pbstrip.c: the ModelProto in buf without its large weight payloads, as
 * a malloc'd buffer; NULL with *err set when the wire format is broken.
 * Each float matrix with raw data gets the fingerprint of its elements'
 * multiset (16 hex digits) as an external_data entry of this key. */
#define ONNX_FINGERPRINT "oraclec.fingerprint"
uint8_t *onnx_strip(const uint8_t *buf, size_t len, size_t *outlen, const char **err);

/* builtins.c: the built-in systems' ODL text, by name or index (NULL
 * past the end / when unknown). */
extern const char *const default_system;
const char *builtin_system(const char *name);
const char *builtin_system_canonical(const char *name); /* dgx_a100 -> dgx-a100 */
const char *builtin_system_name(int i);
/* Whether name is built-in name b, '_' standing for '-'. */
bool builtin_same_name(const char *b, const char *name);
/* A built-in description: its name and ODL text; the one of t[0..n)
 * called `name`, or NULL. */
typedef struct Builtin {
	const char *name;
	const char *text;
} Builtin;
const Builtin *builtin_lookup(const Builtin *t, size_t n, const char *name);

/* builtin_impl.c: the built-in implementations' ODL text, the same way. */
extern const char *const default_implementation;
const char *builtin_impl(const char *name);
const char *builtin_impl_canonical(const char *name);
const char *builtin_impl_name(int i);

/* implementation.c: a built-in implementation by name or an ODL file with
 * one `implementation` block.  NULL after reporting errors. */
Implementation *implementation_load(const char *name, Arena *a, FileList *files);
/* The same, its errors at `at` (a system file's `implementation` key). */
Implementation *implementation_load_at(const char *name, Loc at, Arena *a, FileList *files);
void implementation_list(FILE *f);  /* --list-implementations */

/* keys.c: one `key = value;` setting of key k into the struct at base
 * (false after an error, reported at loc), and the key of that name. */
struct Expr;
bool key_set(const SysKey *k, void *base, const struct Expr *e, Loc loc);
const SysKey *key_find(const SysKey *keys, size_t n, const char *name);
/* keys.c: the one block of that kind (DeclKind) in ODL text, parsed into
 * a; NULL after reporting errors (none, two, or a parse error), `what`
 * naming the kind in messages. */
struct Decl;
const struct Decl *odl_block(const char *file, const char *text, size_t len, Arena *a, int kind,
			     const char *what);

/* noun.c: the two nouns named by a built-in's name or a file's: what
 * each is called, the option that lists its built-ins, the DeclKind of
 * its block and its table of built-ins. */
typedef struct Noun {
	const char *what;
	const char *list;
	int kind;
	const char *(*builtin)(const char *name); /* the text, NULL: none */
	const char *(*canonical)(const char *name);
	const char *(*name)(int i);
} Noun;
extern const Noun noun_system, noun_implementation;
/* The block *name names: a built-in's (*name then the name as the list
 * says it, *source "built-in") or a file's (read, added to files; *source
 * the file); NULL after an error (reported at `at`: an unknown name with
 * the nearest, an unreadable file, not one block). */
const struct Decl *noun_block(const Noun *n, const char **name, Loc at, Arena *a,
			      FileList *files, const char **source);

/* system.c: a built-in system by name, an ODL file with one `system`
 * block, or a ParaDL .plat file, with the implementation it names (a file
 * beside the system file), else the default one.  NULL after reporting
 * errors. */
System *system_load(const char *name, Arena *a, FileList *files);
/* The same with impl (--implementation) in place of the implementation the
 * system names, which is then not opened, and the kernel table at the path
 * `kernels` (--kernels) in place of the one it names; NULL: the system's.
 * The table (System.table) is read here, once, and never changed after. */
System *system_load_with(const char *name, const Implementation *impl, const char *kernels,
			 Arena *a, FileList *files);
void system_list(FILE *f);  /* --list-systems */

/* plat.c: a ParaDL platform file (.plat) read into s, the default system
 * (system_load does so): its name, memory, speed, links and GPUs per node
 * become the file's.  False after reporting errors.  The file is added to
 * `files`. */
bool plat_read(const char *path, FileList *files, System *s);

/* paradl.c: a ParaDL model table (.net, .net_sc): the table's rows as a
 * chain of layers, every shape a row declares checked against the
 * inferred one, the dataset size set, and the time column as
 * Graph.timing; NULL after reporting errors.  The file is added to
 * `files`. */
Graph *paradl_load_net(const char *path, Arena *a, FileList *files);

/* profile.c: --profile, a CSV of measured layer times (header
 * `layer,forward_s,backward_s`, seconds per sample), or a profiler's
 * trace (JSON: trace_read).  A CSV appends one Timing per row to g, after
 * the model's own; false after reporting errors, and then g is unchanged.
 * The file is added to `files`. */
bool profile_load(const char *path, Graph *g, FileList *files);

/* trace.c: the Chrome trace of `python3 -m oraclec.launch --trace` in
 * text[0..len) (the file at path) as g->trace: each module's seconds per
 * step; false after reporting errors, and then g is unchanged. */
bool trace_read(const char *path, const char *text, size_t len, Graph *g);

/* kernels.c: a kernel table (docs/kernel-table.md) from text[0..len)
 * (the file at path) or from the file, its rows sorted by key then N;
 * NULL after reporting errors (file:line:col; a file that cannot be read
 * at `where`, the system key that names it).  The file is added to
 * `files`. */
KernelTable *kernels_parse(const char *path, const char *text, size_t len, Arena *a);
KernelTable *kernels_load(const char *path, Loc where, Arena *a, FileList *files);

/* collectives.c: a table of measured collectives (docs/systems.md,
 * "Measured collectives"): nccl-tests' output, the runs of every file of
 * a comma list (errors at `where` for a file that cannot be read), or of
 * text read from `path`; NULL after reporting errors.
 * collectives_table sorts n runs (malloc'd, freed) into t. */
CollTable *collectives_load(const char *list, Loc where, Arena *a, FileList *files);
CollTable *collectives_parse(const char *path, const char *text, size_t len, Arena *a);
CollTable *collectives_table(CollTable *t, CollRun *run, int n, Arena *a);
/* A key from its four fields as the table and --layers JSON write them
 * (class, precision, layout, shape); false after reporting at `where`. */
bool kernel_key_read(Loc where, const char *cls, const char *prec, const char *layout,
		     const char *shape, KernelKey *k);

/* measured.c: the rows of a measured-runs CSV (oraclec validate); NULL
 * after reporting errors, *n rows otherwise. */
Measured *measured_load(const char *path, Arena *a, FileList *files, int *n);

/* load.c: pick the frontend from the file name (or content) and run it:
 * ONNX, ODL or a ParaDL table. */
Graph *frontend_load(const char *path, Arena *a, FileList *files, const OnnxOptions *opt);

#endif
