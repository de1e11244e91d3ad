/* dsl.c -- the ODL frontend: files and includes, then elaboration.
 *
 * Loading parses the main file and, depth first and in order, every file
 * it includes (paths relative to the including file; a file already loaded
 * is skipped, one still open is a cycle).  Elaboration then runs the body
 * of the main file's model like a small interpreter: each `t = op(...)`
 * adds a layer, each `t = blk(...)` runs the block's body in a fresh scope
 * (its layers are named "t/inner"), `repeat` runs a body n times.  Names
 * may be rebound (`x = relu(x);`); a layer whose name is taken gets the
 * first free "name_K".  Shapes are not looked at here: passes/shape.c
 * infers them and reports mismatches at the layer's statement.
 *
 * Memory: expressions are evaluated into values on the C stack, a name's
 * value is copied into its scope (rebinding overwrites it), and a block's
 * scope lives in scratch memory taken back when the call returns, so only
 * layers and the names bound at model level stay: elaborating a loop of
 * MAX_STEPS statements that make no layer costs no memory.  The model's
 * body is read into an arena of its own and given back as its statements
 * run (arena_drop_older), and the names bound at model level live in
 * scratch memory freed once the model is made: what stays is the graph,
 * whose strings are copies (a million-layer chain: its statements' trees
 * never all in memory beside its layers). */
#include "frontend/frontend.h"
#include "grammar/ast.h"
#include "util/checked.h"
#include "util/map.h"

#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

enum {
	MAX_BLOCK_DEPTH = 64,            /* nested block calls */
	MAX_INCLUDE_DEPTH = 32,
	MAX_LIST = 2 * MAX_SPATIAL + 2,  /* items in a list value */
};
/* statements executed while expanding: bounds the time however repeats
 * are nested (a few seconds at most) */
#define MAX_STEPS ((int64_t)1 << 23)

/* V_POISON: a name whose definition failed; using it fails quietly, so one
 * mistake gives one diagnostic. */
typedef enum ValKind { V_TENSOR, V_INT, V_FLOAT, V_BOOL, V_LIST, V_POISON } ValKind;

typedef struct Value {
	ValKind kind;
	int64_t i;      /* V_INT, V_BOOL; V_TENSOR: tensor index */
	double f;       /* V_FLOAT */
	int n;          /* V_LIST length */
	int64_t item[MAX_LIST];
} Value;

static const char *const kind_name[] = { "a tensor", "an integer", "a number", "a boolean",
					  "a list", "an error" };

/* The bytes of v that hold it: a list's items, for a list only (a name
 * bound to anything else keeps a smaller copy). */
static size_t
value_size(const Value *v)
{
	return v->kind == V_LIST ? sizeof *v : offsetof(Value, item);
}

/* A scope's binding (Scope.vars' val): a Value of the scope's, or, for a
 * tensor, its index in the pointer itself (odd): a model of a million
 * layers binds a million tensors. */
static bool
is_tensor(const void *slot)
{
	return (uintptr_t)slot & 1;
}

static void *
tensor_slot(int64_t t)
{
	return (void *)(((uintptr_t)t << 1) | 1);
}

/* The value of a binding into *v. */
static const Value *
slot_value(const void *slot, Value *v)
{
	if (is_tensor(slot)) {
		*v = (Value){ .kind = V_TENSOR, .i = (int64_t)((uintptr_t)slot >> 1) };
		return v;
	}
	memcpy(v, slot, value_size(slot));
	return v;
}

typedef struct Scope {
	Map vars;           /* name -> Value*, a copy the scope owns */
	Arena *arena;       /* where those live: scratch freed once the model is
			       made at model level (with copies of their names),
			       inside blocks scratch the call takes back */
	const char *prefix; /* "" at model level, "a/b" inside blocks: NULL
			       until the block makes its first layer */
	struct Scope *caller; /* inside blocks: the caller's scope and the */
	const char *lhs;      /* name it binds, which the prefix is made from */
	const Decl *block;  /* NULL at model level */
	bool returned;      /* `return` ran, and gave ret */
	Value ret;
} Scope;

enum { RECENT = 8 }; /* windows kept for the layers after */

typedef struct Elab {
	Arena *a;
	Arena scratch;      /* block scopes, used as a stack */
	Graph *g;
	Map blocks;         /* name -> Decl* */
	Map names;          /* layer and scope names taken -> counter */
	const Decl *stack[MAX_BLOCK_DEPTH];
	int depth;
	Loc site;           /* the model-level statement being expanded */
	int64_t steps;
	int stop;           /* a limit was hit: unwind without more errors */
	const Window *recent[RECENT]; /* the last windows kept (keep_window) */
	int next_recent;
} Elab;

/* ---- loading ------------------------------------------------------------ */

typedef struct Loader {
	Arena *a;
	Arena *bodies;                    /* models' bodies (dsl_parse_into) */
	FileList *files;
	Map loaded;                       /* realpath -> (void *)1 once done */
	const char *open[MAX_INCLUDE_DEPTH];  /* realpaths being loaded */
	const char *name[MAX_INCLUDE_DEPTH];  /* the same, as named */
	Loc site[MAX_INCLUDE_DEPTH];          /* their include statements */
	int nopen;
	Decl *decls, *tail;               /* every declaration, load order */
} Loader;

static char *
resolve(Arena *a, const char *from, const char *path)
{
	const char *slash = strrchr(from, '/');

	if (path[0] == '/' || !slash)
		return arena_strdup(a, path);
	return arena_printf(a, "%.*s/%s", (int)(slash - from), from, path);
}

static Decl *load_file(Loader *ld, const char *path, Loc where);

/* After errors in the file open at depth d (0: the main file), notes on
 * the include statements that led to it, innermost first, as gcc's "In
 * file included from". */
static void
include_notes(const Loader *ld, int d)
{
	for (; d > 0; d--)
		diag_note(ld->site[d], "'%s' is included from here", ld->name[d]);
}

static void
load_includes(Loader *ld, Decl *d)
{
	for (; d; d = d->next) {
		if (d->kind != D_INCLUDE)
			continue;
		load_file(ld, resolve(ld->a, d->loc.file, d->name), d->loc);
	}
}

static void
append(Loader *ld, Decl *list)
{
	Decl *next;

	for (; list; list = next) {
		next = list->next;
		list->next = NULL;
		if (ld->tail)
			ld->tail->next = list;
		else
			ld->decls = list;
		ld->tail = list;
	}
}

/* Returns the file's own declarations (the main file's are needed to find
 * its model); all of them are also appended to ld->decls. */
static Decl *
load_file(Loader *ld, const char *path, Loc where)
{
	char *real, *text;
	const char *key;
	size_t len;
	Decl *decls;
	int errors;

	real = realpath(path, NULL);
	key = real ? arena_strdup(ld->a, real) : path;
	free(real);
	errors = diag_errors();
	for (int i = 0; i < ld->nopen; i++)
		if (strcmp(ld->open[i], key) == 0)
			diag_error(where, "include cycle: '%s' includes itself", path);
	if (diag_errors() == errors && map_get(&ld->loaded, key))
		return NULL;
	if (diag_errors() == errors && ld->nopen == MAX_INCLUDE_DEPTH)
		diag_error(where, "includes nested deeper than %d", MAX_INCLUDE_DEPTH);
	if (diag_errors() > errors || !(text = file_read(path, &len, MAX_ODL_BYTES, where))) {
		include_notes(ld, ld->nopen - 1); /* the error is at `where` */
		return NULL;
	}
	files_add(ld->files, path);
	ld->open[ld->nopen] = key;
	ld->name[ld->nopen] = path;
	ld->site[ld->nopen++] = where;
	decls = dsl_parse_into(path, text, len, ld->a, ld->bodies);
	free(text);
	if (diag_errors() > errors) {
		include_notes(ld, ld->nopen - 1);
		ld->nopen--;
		return NULL; /* its includes might be garbled too */
	}
	load_includes(ld, decls);
	ld->nopen--;
	map_put(&ld->loaded, key, (void *)1);
	append(ld, decls);
	return decls;
}

/* ---- values ------------------------------------------------------------- */

/* Names in messages are cut at 64 bytes: "..." says so. */
static const char *
ell(const char *s)
{
	return strlen(s) > 64 ? "..." : "";
}

/* Every evaluation writes its value to *v and returns v, or NULL after a
 * diagnostic. */
static const Value *eval(Elab *E, Scope *S, const Expr *e, Value *v);

static const Value *
eval_list(Elab *E, Scope *S, const Expr *e, Value *v)
{
	*v = (Value){ .kind = V_LIST };
	for (const Expr *it = e->list; it; it = it->next) {
		Value x;
		if (!eval(E, S, it, &x))
			return NULL;
		if (x.kind != V_INT) {
			diag_error(it->loc, "list items must be integers, not %s",
				   kind_name[x.kind]);
			return NULL;
		}
		if (v->n == MAX_LIST) {
			diag_error(it->loc, "list longer than %d items", MAX_LIST);
			return NULL;
		}
		v->item[v->n++] = x.i;
	}
	return v;
}

static const char *
opname(int op)
{
	switch (op) {
	case 'e': return "==";
	case 'n': return "!=";
	case 'l': return "<=";
	case 'g': return ">=";
	case '<': return "<";
	case '>': return ">";
	case '+': return "+";
	case '-': return "-";
	case '*': return "*";
	case '/': return "/";
	default: return "%";
	}
}

static const Value *
compare(const Expr *e, int64_t x, int64_t y, Value *v)
{
	*v = (Value){ .kind = V_BOOL };
	switch (e->op) {
	case 'e': v->i = x == y; break;
	case 'n': v->i = x != y; break;
	case 'l': v->i = x <= y; break;
	case 'g': v->i = x >= y; break;
	case '<': v->i = x < y; break;
	default: v->i = x > y; break;
	}
	return v;
}

static const Value *
arith(const Expr *e, int64_t x, int64_t y, Value *v)
{
	bool ok = true;

	if (strchr("enlg<>", e->op))
		return compare(e, x, y, v);
	*v = (Value){ .kind = V_INT };
	switch (e->op) {
	case '+': ok = ck_add(x, y, &v->i); break;
	case '-': ok = !__builtin_sub_overflow(x, y, &v->i); break;
	case '*': ok = ck_mul(x, y, &v->i); break;
	case '/':
	case '%':
		if (y == 0) {
			diag_error(e->loc, "division by zero");
			return NULL;
		}
		if (x == INT64_MIN && y == -1)
			ok = false;
		else
			v->i = e->op == '/' ? x / y : x % y;
		break;
	}
	if (!ok) {
		diag_error(e->loc, "integer overflow in '%s'", opname(e->op));
		return NULL;
	}
	return v;
}

static const Value *
eval(Elab *E, Scope *S, const Expr *e, Value *v)
{
	const void *slot;
	Value y;

	switch (e->kind) {
	case E_INT:
		*v = (Value){ .kind = V_INT, .i = e->ival };
		return v;
	case E_FLOAT:
		if (e->unit) {
			diag_error(e->loc, "quantities with units are only used in system "
				   "descriptions");
			return NULL;
		}
		*v = (Value){ .kind = V_FLOAT, .f = e->fval };
		return v;
	case E_BOOL:
		*v = (Value){ .kind = V_BOOL, .i = e->ival };
		return v;
	case E_NAME:
		slot = map_get(&S->vars, e->name);
		if (!slot)
			diag_error(e->loc, "unknown name '%.64s'%s", e->name, ell(e->name));
		if (!slot || (!is_tensor(slot) && ((const Value *)slot)->kind == V_POISON))
			return NULL;
		return slot_value(slot, v);
	case E_LIST:
		return eval_list(E, S, e, v);
	case E_STRING:
		diag_error(e->loc, "strings are only used in system descriptions");
		return NULL;
	case E_NEG:
		if (!eval(E, S, e->a, v))
			return NULL;
		if (v->kind == V_FLOAT) {
			v->f = -v->f;
			return v;
		}
		if (v->kind != V_INT || v->i == INT64_MIN) {
			diag_error(e->loc, "cannot negate %s", kind_name[v->kind]);
			return NULL;
		}
		v->i = -v->i;
		return v;
	case E_BINOP:
		if (!eval(E, S, e->a, v) || !eval(E, S, e->b, &y))
			return NULL;
		if ((e->op == 'e' || e->op == 'n') && v->kind == V_BOOL && y.kind == V_BOOL)
			return compare(e, v->i, y.i, v);
		if (v->kind != V_INT || y.kind != V_INT) {
			diag_error(e->loc, "'%s' needs integers, not %s and %s", opname(e->op),
				   kind_name[v->kind], kind_name[y.kind]);
			return NULL;
		}
		return arith(e, v->i, y.i, v);
	}
	die("bad expression kind %d", e->kind);
}

/* ---- names -------------------------------------------------------------- */

static const char *fresh_name(Elab *E, Scope *S, const char *lhs);

/* A block's prefix is its call's name, taken when its first layer needs it,
 * so a call that makes no layer uses up no name. */
static const char *
scope_prefix(Elab *E, Scope *S)
{
	if (!S->prefix)
		S->prefix = fresh_name(E, S->caller, S->lhs);
	return S->prefix;
}

/* A unique name under the scope's prefix: "lhs", else "lhs_1", "lhs_2"... */
static const char *
fresh_name(Elab *E, Scope *S, const char *lhs)
{
	const char *prefix = scope_prefix(E, S);
	const char *base = *prefix ? arena_printf(E->a, "%s/%s", prefix, lhs) : lhs;
	MapEntry *e = map_entry(&E->names, base);
	intptr_t k = (intptr_t)e->val;
	const char *name;

	/* a name the graph keeps: lhs is the statement's, given back once
	 * it has run */
	if (!k && !*prefix)
		e->key = base = arena_strndup_packed(E->a, lhs, strlen(lhs));
	name = base;
	while (k > 0 && map_get(&E->names, name = arena_printf(E->a, "%s_%" PRIdPTR, base, k)))
		k++;
	e->val = (void *)(k + 1);
	if (name != base)
		map_put(&E->names, name, (void *)1);
	return name;
}

/* Binds name to a copy of v in scope S; own, when not NULL, is name as a
 * string that outlives the scope (else, at model level, where name is a
 * statement's, a copy is made). */
static void
bind_as(Scope *S, const char *name, const char *own, const Value *v)
{
	MapEntry *e = map_entry(&S->vars, name);
	Value *slot;

	if (!e->val && !S->block) /* new at model level: a name that lasts */
		e->key = own ? own : arena_strndup_packed(S->arena, name, strlen(name));
	if (v->kind == V_TENSOR) {
		e->val = tensor_slot(v->i);
		return;
	}
	slot = e->val;
	if (!slot || is_tensor(slot) || (v->kind == V_LIST && slot->kind != V_LIST))
		e->val = slot = arena_alloc(S->arena, value_size(v));
	memcpy(slot, v, value_size(v));
}

static void
bind(Scope *S, const char *name, const Value *v)
{
	bind_as(S, name, NULL, v);
}

/* ---- layers ------------------------------------------------------------- */

/* How many tensor inputs each class takes, and what a trailing positional
 * number means ("filters" for conv, ...). */
static void
arity(OpKind op, int *min, int *max, const char **poskey)
{
	*min = *max = 1;
	*poskey = NULL;
	switch (op_info[op].cls) {
	case OPC_CONV: *poskey = "filters"; break;
	case OPC_FC: *poskey = "out"; break;
	case OPC_MATMUL: *min = *max = 2; break;
	case OPC_BINARY: *min = 2; *max = op == OP_ADD ? MAX_INPUTS : 2; break;
	case OPC_CONCAT: *max = MAX_INPUTS; break;
	case OPC_RESHAPE: *poskey = "shape"; break;
	case OPC_ADAPTPOOL: *poskey = "size"; break;
	case OPC_TRANSPOSE: *poskey = "perm"; break;
	default: break;
	}
}

static bool
positive_ints(Elab *E, const Arg *g, const Value *v, int64_t *out, int max, int *n,
	      int64_t min)
{
	if (v->kind == V_INT) {
		for (int i = 0; i < max; i++)
			out[i] = v->i;
		*n = 0; /* a scalar fits any rank */
	} else if (v->kind == V_LIST && v->n >= 1 && v->n <= max) {
		memcpy(out, v->item, v->n * sizeof *out);
		*n = v->n;
	} else {
		diag_error(g->loc, "'%s' must be an integer or a list of at most %d", g->key, max);
		return false;
	}
	for (int i = 0; i < (*n ? *n : 1); i++)
		if (out[i] < min || out[i] > MAX_DIM) {
			diag_error(g->loc, "'%s' value %" PRId64 " is out of range", g->key,
				   out[i]);
			return false;
		}
	return true;
}

static bool
want(const Arg *g, const Value *v, ValKind k)
{
	if (v->kind == k || (k == V_FLOAT && v->kind == V_INT))
		return true;
	diag_error(g->loc, "'%s' must be %s, not %s", g->key, kind_name[k], kind_name[v->kind]);
	return false;
}

static bool
one_int(const Arg *g, const Value *v, int64_t lo, int64_t hi, int64_t *out)
{
	if (!want(g, v, V_INT))
		return false;
	if (v->i < lo || v->i > hi) {
		diag_error(g->loc, "'%s' value %" PRId64 " is out of range", g->key, v->i);
		return false;
	}
	*out = v->i;
	return true;
}

/* Records the spatial rank a list-valued attribute implies; all lists of
 * one layer must agree (a pad list may give begins and ends: 2n items). */
static bool
spatial_rank(const Arg *g, int n, int *rank)
{
	if (n == 0)
		return true;
	if (*rank && *rank != n) {
		diag_error(g->loc, "'%s' has %d items where other arguments have %d", g->key, n,
			   *rank);
		return false;
	}
	*rank = n;
	return true;
}

static bool
set_pad(const Arg *g, const Value *v, Window *at, int *rank)
{
	int64_t p[MAX_LIST] = { 0 };
	int n;

	if (v->kind == V_LIST && v->n > MAX_SPATIAL && v->n % 2 == 0 && v->n <= 2 * MAX_SPATIAL) {
		for (int i = 0; i < v->n; i++)
			if (v->item[i] < 0 || v->item[i] > MAX_DIM) {
				diag_error(g->loc, "'pad' value %" PRId64 " is out of range",
					   v->item[i]);
				return false;
			}
		for (int i = 0; i < v->n / 2; i++) {
			at->pad[i] = v->item[i];
			at->pad[MAX_SPATIAL + i] = v->item[v->n / 2 + i];
		}
		return spatial_rank(g, v->n / 2, rank);
	}
	if (!positive_ints(NULL, g, v, p, MAX_SPATIAL, &n, 0))
		return false;
	for (int i = 0; i < MAX_SPATIAL; i++)
		at->pad[i] = at->pad[MAX_SPATIAL + i] = p[i];
	return spatial_rank(g, n, rank);
}

/* A list, or for a size a single integer meaning every spatial dimension
 * (PyTorch's AdaptiveAvgPool2d(1)): kept as rank 0, d[0] = the value. */
static bool
set_shape(const Arg *g, const Value *v, Shape *s)
{
	if (v->kind == V_INT) {
		s->rank = strcmp(g->key, "size") == 0 ? 0 : 1;
		s->d[0] = v->i;
		return true;
	}
	if (v->kind != V_LIST || v->n > MAX_RANK) {
		diag_error(g->loc, "'%s' must be a list of at most %d integers", g->key, MAX_RANK);
		return false;
	}
	s->rank = v->n;
	memcpy(s->d, v->item, v->n * sizeof s->d[0]);
	return true;
}

/* Applies one named argument to the layer (its window and target shape
 * into *win and *target); false after an error. */
static bool
set_attr(Elab *E, Layer *l, const Arg *g, const Value *v, int *rank, unsigned *seen, Window *win,
	 Shape *target)
{
	Attr *at = &l->attr;
	OpClass c = op_info[l->op].cls;
	const char *k = g->key;
	int n;
	int64_t x;

	if ((c == OPC_CONV || c == OPC_POOL) && strcmp(k, "kernel") == 0) {
		*seen |= 1;
		return positive_ints(E, g, v, win->kernel, MAX_SPATIAL, &n, 1) &&
		       spatial_rank(g, n, rank);
	}
	if ((c == OPC_CONV || c == OPC_POOL) && strcmp(k, "stride") == 0)
		return positive_ints(E, g, v, win->stride, MAX_SPATIAL, &n, 1) &&
		       spatial_rank(g, n, rank);
	if ((c == OPC_CONV || c == OPC_POOL) && strcmp(k, "dilation") == 0)
		return positive_ints(E, g, v, win->dilation, MAX_SPATIAL, &n, 1) &&
		       spatial_rank(g, n, rank);
	if ((c == OPC_CONV || c == OPC_POOL) && strcmp(k, "pad") == 0)
		return set_pad(g, v, win, rank);
	if (c == OPC_CONV && strcmp(k, "filters") == 0) {
		*seen |= 2;
		return one_int(g, v, 1, MAX_DIM, &at->filters);
	}
	if (c == OPC_FC && strcmp(k, "out") == 0) {
		*seen |= 2;
		return one_int(g, v, 1, MAX_DIM, &at->filters);
	}
	if (l->op == OP_CONVT && strcmp(k, "out_pad") == 0)
		return positive_ints(E, g, v, win->out_pad, MAX_SPATIAL, &n, 0) &&
		       spatial_rank(g, n, rank);
	if (c == OPC_CONV && strcmp(k, "groups") == 0)
		return one_int(g, v, 1, MAX_DIM, &at->groups);
	if ((c == OPC_CONV || c == OPC_FC) && strcmp(k, "bias") == 0) {
		if (!want(g, v, V_BOOL))
			return false;
		at->bias = v->i;
		return true;
	}
	if ((c == OPC_CONV || c == OPC_POOL) &&
	    (strcmp(k, "halo_forward") == 0 || strcmp(k, "halo_backward") == 0)) {
		if (!want(g, v, V_BOOL))
			return false;
		at->no_halo[k[5] == 'b'] = !v->i;
		return true;
	}
	if (c == OPC_POOL && strcmp(k, "ceil") == 0) {
		if (!want(g, v, V_BOOL))
			return false;
		at->ceil_mode = v->i;
		return true;
	}
	if ((c == OPC_CONCAT || c == OPC_SOFTMAX || c == OPC_FLATTEN || c == OPC_NORM) &&
	    strcmp(k, "axis") == 0) {
		if (!one_int(g, v, -MAX_RANK, MAX_RANK, &x))
			return false;
		at->axis = (int)x;
		return true;
	}
	if ((c == OPC_RESHAPE && strcmp(k, "shape") == 0) ||
	    (c == OPC_ADAPTPOOL && strcmp(k, "size") == 0) ||
	    (c == OPC_TRANSPOSE && strcmp(k, "perm") == 0)) {
		*seen |= 2;
		return set_shape(g, v, target);
	}
	/* accepted for readability; they change no count */
	if ((l->op == OP_DROPOUT && strcmp(k, "p") == 0) ||
	    (c == OPC_NORM && (strcmp(k, "eps") == 0 || strcmp(k, "momentum") == 0)) ||
	    ((l->op == OP_LEAKYRELU || l->op == OP_ELU) && strcmp(k, "alpha") == 0) ||
	    (l->op == OP_CLIP && (strcmp(k, "min") == 0 || strcmp(k, "max") == 0)) ||
	    (l->op == OP_LRN && (strcmp(k, "size") == 0 || strcmp(k, "alpha") == 0 ||
				 strcmp(k, "beta") == 0 || strcmp(k, "k") == 0)))
		return want(g, v, V_FLOAT);
	diag_error(g->loc, "%s: unknown argument '%.64s'%s", op_name(l->op), k, ell(k));
	return false;
}

static void
set_defaults(Layer *l, Window *w)
{
	Attr *at = &l->attr;
	OpClass c = op_info[l->op].cls;

	if (c == OPC_CONV && !at->groups)
		at->groups = 1;
	for (int i = 0; i < MAX_SPATIAL; i++) {
		if (!w->dilation[i])
			w->dilation[i] = 1;
		if (!w->stride[i])
			w->stride[i] = c == OPC_POOL ? w->kernel[i] : 1;
	}
}

/* The window w kept for the model: the one of a recent layer where they
 * are alike (a chain's relus share one, its convolutions another). */
static const Window *
keep_window(Elab *E, const Window *w)
{
	Window *copy;

	for (int i = 0; i < RECENT; i++)
		if (E->recent[i] && memcmp(E->recent[i], w, sizeof *w) == 0)
			return E->recent[i];
	copy = arena_alloc(E->a, sizeof *copy);
	*copy = *w;
	E->recent[E->next_recent++ % RECENT] = copy;
	return copy;
}

/* Defaults an explicit argument may override with any value (bias=false,
 * axis=0) are set before the arguments are read. */
static bool
default_bias(OpKind op)
{
	return op_info[op].cls == OPC_CONV || op_info[op].cls == OPC_FC;
}

static bool
check_required(const Stmt *st, OpKind op, unsigned seen)
{
	OpClass c = op_info[op].cls;
	const char *missing = NULL;

	if ((c == OPC_CONV || c == OPC_POOL) && !(seen & 1))
		missing = "kernel";
	if (c == OPC_CONV && !(seen & 2))
		missing = "filters";
	if (c == OPC_FC && !(seen & 2))
		missing = "out";
	if (c == OPC_RESHAPE && !(seen & 2))
		missing = "shape";
	if (c == OPC_ADAPTPOOL && !(seen & 2))
		missing = "size";
	if (c == OPC_TRANSPOSE && !(seen & 2))
		missing = "perm";
	if (missing)
		diag_error(st->callee_loc, "%s: missing argument '%s'", op_name(op), missing);
	return !missing;
}

static int
new_layer(Elab *E, Scope *S, const Stmt *st, OpKind op)
{
	int l;

	if (E->g->nlayer >= MAX_LAYERS) {
		diag_error(st->loc, "model has more than %d layers", MAX_LAYERS);
		E->stop = 1;
		return -1;
	}
	l = graph_add_layer(E->g, op, fresh_name(E, S, st->lhs), st->loc);
	E->g->layer[l].site = E->site;
	return l;
}

static void
op_layer(Elab *E, Scope *S, const Stmt *st, OpKind op)
{
	int *in = NULL, nin = 0, cap = 0, min, max, rank = 0, l, t;
	const char *posk, *name;
	unsigned seen = 0;
	bool ok = true;
	Layer tmp = { .op = op };
	Window win = { 0 };
	Shape target = { 0 };
	Value val;

	arity(op, &min, &max, &posk);
	tmp.attr.bias = default_bias(op);
	if (op == OP_LAYERNORM || op == OP_RMSNORM || op == OP_SOFTMAX)
		tmp.attr.axis = -1; /* the last dimension, as PyTorch's defaults */
	for (const Arg *g = st->args; g; g = g->next) {
		const Value *v = eval(E, S, g->value, &val);
		if (!v) {
			ok = false;
			continue;
		}
		if (!g->key && v->kind == V_TENSOR) {
			if (seen & 4) {
				diag_error(g->loc, "%s: tensor arguments must come first",
					   op_name(op));
				ok = false;
			} else if (nin == max) {
				diag_error(g->loc, "%s: takes at most %d input tensor%s",
					   op_name(op), max, max == 1 ? "" : "s");
				ok = false;
			} else {
				if (nin == cap) {
					cap = cap ? 2 * cap : 4;
					in = arena_grow(E->a, in, nin, cap, sizeof *in);
				}
				in[nin++] = (int)v->i;
			}
			continue;
		}
		Arg named = *g;
		for (const Arg *p = st->args; g->key && p != g; p = p->next)
			if (p->key && strcmp(p->key, g->key) == 0) {
				diag_error(g->loc, "%s: argument '%s' given twice", op_name(op),
					   g->key);
				ok = false;
			}
		if (!g->key) {
			if (!posk || (seen & 8)) {
				diag_error(g->loc, "%s: unexpected argument (%s)", op_name(op),
					   kind_name[v->kind]);
				ok = false;
				continue;
			}
			named.key = posk;
			seen |= 8;
		}
		seen |= 4;
		if (v->kind == V_TENSOR) {
			diag_error(g->loc, "%s: '%s' must be a value, not a tensor", op_name(op),
				   named.key);
			ok = false;
			continue;
		}
		ok &= set_attr(E, &tmp, &named, v, &rank, &seen, &win, &target);
	}
	if (ok && nin < min) {
		diag_error(st->callee_loc, "%s: expects %s%d input tensor%s, got %d", op_name(op),
			   min == max ? "" : "at least ", min, min == 1 ? "" : "s", nin);
		ok = false;
	}
	ok = ok && check_required(st, op, seen);
	if (!ok || (l = new_layer(E, S, st, op)) < 0)
		return;
	set_defaults(&tmp, &win);
	tmp.attr.nspatial = rank; /* a hint for the shape pass; 0 = any */
	attr_view(&tmp.attr, keep_window(E, &win));
	tmp.attr.target = E->g->layer[l].attr.target;
	tmp.attr.pad_hi = E->g->layer[l].attr.pad_hi;
	E->g->layer[l].attr = tmp.attr;
	if (seen & 2 && (op_info[op].cls == OPC_RESHAPE || op_info[op].cls == OPC_ADAPTPOOL ||
			 op_info[op].cls == OPC_TRANSPOSE))
		*attr_target(E->g, &E->g->layer[l].attr) = target;
	layer_set_inputs(E->g, l, in, nin);
	name = E->g->layer[l].name;
	t = layer_add_output(E->g, l, name);
	/* the layer's name is the statement's where it was free */
	bind_as(S, st->lhs, strcmp(name, st->lhs) == 0 ? name : NULL,
		&(Value){ .kind = V_TENSOR, .i = t });
}

/* ---- blocks ------------------------------------------------------------- */

static void exec(Elab *E, Scope *S, const Stmt *st);
static void exec_one(Elab *E, Scope *S, const Stmt *st);

static int
nparams(const Decl *b)
{
	int n = 0;

	for (const Param *p = b->params; p; p = p->next)
		n++;
	return n;
}

/* Binds the call's arguments to the block's parameters in scope `in`. */
static bool
bind_params(Elab *E, Scope *caller, Scope *in, const Stmt *st, const Decl *b)
{
	const Param *p = b->params;
	const Arg *g;
	bool ok = true;
	int npos = 0;
	Value val;

	for (g = st->args; g && !g->key; g = g->next, p = p ? p->next : NULL) {
		const Value *v = eval(E, caller, g->value, &val);
		npos++;
		if (!p) {
			for (const Arg *r = g->next; r && !r->key; r = r->next)
				npos++;
			diag_error(g->loc, "block '%s' takes %d argument%s, got %d", b->name,
				   nparams(b), nparams(b) == 1 ? "" : "s", npos);
			return false;
		}
		if (!v)
			ok = false;
		else
			bind(in, p->name, v);
	}
	for (; g; g = g->next) {
		const Param *q = b->params;
		const Value *v;
		if (!g->key) {
			diag_error(g->loc, "positional argument after a named one");
			return false;
		}
		while (q && strcmp(q->name, g->key) != 0)
			q = q->next;
		if (!q) {
			diag_error(g->loc, "block '%s' has no parameter '%.64s'%s", b->name, g->key,
				   ell(g->key));
			ok = false;
		} else if (map_get(&in->vars, q->name)) {
			diag_error(g->loc, "parameter '%s' given twice", g->key);
			ok = false;
		} else if (!(v = eval(E, caller, g->value, &val))) {
			ok = false;
		} else {
			bind(in, q->name, v);
		}
	}
	for (p = b->params; p && ok; p = p->next) {
		const Value *v;
		if (map_get(&in->vars, p->name))
			continue;
		if (!p->deflt) {
			diag_error(st->callee_loc, "block '%s': missing argument '%s'", b->name,
				   p->name);
			diag_note(b->loc, "'%s' is declared here", b->name);
			ok = false;
		} else if (!(v = eval(E, in, p->deflt, &val))) {
			ok = false;
		} else {
			bind(in, p->name, v);
		}
	}
	return ok;
}

static void
call_block(Elab *E, Scope *S, const Stmt *st, const Decl *b)
{
	Scope in = { .arena = &E->scratch, .caller = S, .lhs = st->lhs, .block = b };
	ArenaMark mark;
	bool ok;

	for (int i = 0; i < E->depth; i++)
		if (E->stack[i] == b) {
			diag_error(st->callee_loc,
				   "block '%s' calls itself; recursion is not allowed", b->name);
			E->stop = 1;
			return;
		}
	if (E->depth == MAX_BLOCK_DEPTH) {
		diag_error(st->callee_loc, "blocks nested deeper than %d", MAX_BLOCK_DEPTH);
		E->stop = 1;
		return;
	}
	mark = arena_mark(&E->scratch);
	map_init(&in.vars, &E->scratch);
	if ((ok = bind_params(E, S, &in, st, b))) {
		E->stack[E->depth++] = b;
		exec(E, &in, b->body);
		E->depth--;
	}
	arena_release(&E->scratch, mark); /* in.ret is a copy */
	if (!ok || E->stop || diag_errors())
		return;
	if (!in.returned) {
		diag_error(b->loc, "block '%s' ends without 'return'", b->name);
		diag_note(st->loc, "called from here");
		E->stop = 1;
		return;
	}
	bind(S, st->lhs, &in.ret);
}

/* ---- statements --------------------------------------------------------- */

static void
input_stmt(Elab *E, Scope *S, const Stmt *st)
{
	static const Value poison = { .kind = V_POISON };
	const Value *v;
	Value val;
	Shape s = { 0 };
	int64_t n;
	const char *name;

	if (S->block) {
		diag_error(st->loc, "'input' is only allowed in a model");
		return;
	}
	if (!(v = eval(E, S, st->expr, &val)))
		return;
	if (v->kind != V_INT && !(v->kind == V_LIST && v->n >= 1)) {
		diag_error(st->expr->loc, "input shape must be dimensions such as 3x224x224");
		return;
	}
	s.rank = v->kind == V_INT ? 1 : v->n;
	if (s.rank > MAX_RANK) {
		diag_error(st->expr->loc, "input has %d dimensions; at most %d are supported",
			   s.rank, MAX_RANK);
		return;
	}
	for (int i = 0; i < s.rank; i++) {
		s.d[i] = v->kind == V_INT ? v->i : v->item[i];
		if (s.d[i] < 1 || s.d[i] > MAX_DIM) {
			diag_error(st->expr->loc, "input dimension %" PRId64 " is out of range "
				   "(1 to 2^40)", s.d[i]);
			bind(S, st->lhs, &poison);
			return;
		}
	}
	if (!shape_elems(&s, &n)) {
		diag_error(st->expr->loc, "input '%s' has more elements than 64 bits can count",
			   st->lhs);
		bind(S, st->lhs, &poison);
		return;
	}
	if (map_get(&S->vars, st->lhs)) {
		diag_error(st->loc, "'%s' is already defined", st->lhs);
		return;
	}
	/* `as tokens`: a sequence of d0 tokens, the model's (Graph.seq_len) */
	if (st->var && strcmp(st->var, "tokens") != 0) {
		diag_error(st->callee_loc, "'as %.64s'%s: an input may only be 'as tokens'",
			   st->var, ell(st->var));
		bind(S, st->lhs, &poison);
		return;
	}
	if (st->var && E->g->seq_len && E->g->seq_len != s.d[0]) {
		diag_error(st->callee_loc, "input '%s' is a sequence of %" PRId64 " tokens, the "
			   "model's of %" PRId64, st->lhs, s.d[0], E->g->seq_len);
		bind(S, st->lhs, &poison);
		return;
	}
	name = arena_strndup_packed(E->a, st->lhs, strlen(st->lhs)); /* the graph's */
	val = (Value){ .kind = V_TENSOR, .i = graph_add_input(E->g, name, &s) };
	if (st->var) {
		E->g->tensor[val.i].seq = true;
		E->g->seq_len = s.d[0];
	}
	map_put(&E->names, name, (void *)1);
	bind(S, st->lhs, &val);
}

static void
output_stmt(Elab *E, Scope *S, const Stmt *st)
{
	Value val;

	for (const Arg *g = st->args; g; g = g->next) {
		const Value *v = eval(E, S, g->value, &val);
		if (!v)
			continue;
		if (v->kind != V_TENSOR)
			diag_error(g->loc, "'%s' is not a tensor", g->value->name);
		else
			E->g->tensor[v->i].output = true;
	}
}

static void
repeat_stmt(Elab *E, Scope *S, const Stmt *st)
{
	Value val;
	const Value *v = eval(E, S, st->expr, &val);

	if (!v)
		return;
	if (v->kind != V_INT || v->i < 0 || v->i > MAX_LAYERS) {
		diag_error(st->expr->loc, "repeat count must be an integer from 0 to %d",
			   MAX_LAYERS);
		return;
	}
	for (int64_t i = 0; i < v->i && !E->stop && !S->returned; i++) {
		/* every iteration is a step, so empty bodies are bounded too */
		if (++E->steps > MAX_STEPS) {
			diag_error(st->loc, "model expands to more than %" PRId64 " statements",
				   MAX_STEPS);
			E->stop = 1;
			return;
		}
		if (st->var)
			bind(S, st->var, &(Value){ .kind = V_INT, .i = i });
		exec(E, S, st->body);
		if (diag_errors())
			break; /* the same error would repeat n times */
	}
}

static void
if_stmt(Elab *E, Scope *S, const Stmt *st)
{
	Value val;
	const Value *v = eval(E, S, st->expr, &val);

	if (!v)
		return;
	if (v->kind != V_BOOL && v->kind != V_INT) {
		diag_error(st->expr->loc, "a condition must be a boolean or an integer, not %s",
			   kind_name[v->kind]);
		return;
	}
	exec(E, S, v->i ? st->body : st->orelse);
}

static void
layer_stmt(Elab *E, Scope *S, const Stmt *st)
{
	int op = op_lookup(st->callee);
	const Decl *b;

	if (op == OP_PAD || op == OP_OPAQUE)
		diag_error(st->callee_loc, "layer kind '%s' is only made from ONNX files",
			   st->callee);
	else if (op >= 0)
		op_layer(E, S, st, (OpKind)op);
	else if ((b = map_get(&E->blocks, st->callee)))
		call_block(E, S, st, b);
	else
		diag_error(st->callee_loc, "unknown layer kind or block '%.64s'%s", st->callee,
			   ell(st->callee));
}

static void
exec(Elab *E, Scope *S, const Stmt *st)
{
	for (; st && !E->stop && !S->returned; st = st->next)
		exec_one(E, S, st);
}

static void
exec_one(Elab *E, Scope *S, const Stmt *st)
{
	const Value *v;
	Value val;

	{
		if (++E->steps > MAX_STEPS) {
			diag_error(st->loc, "model expands to more than %" PRId64 " statements",
				   MAX_STEPS);
			E->stop = 1;
			return;
		}
		if (!S->block)
			E->site = st->loc;
		switch (st->kind) {
		case ST_LAYER: layer_stmt(E, S, st); break;
		case ST_INPUT: input_stmt(E, S, st); break;
		case ST_OUTPUT: output_stmt(E, S, st); break;
		case ST_REPEAT: repeat_stmt(E, S, st); break;
		case ST_IF: if_stmt(E, S, st); break;
		case ST_LEVEL:
			diag_error(st->loc, "'level' is only allowed in a system");
			break;
		case ST_LET:
			if ((v = eval(E, S, st->expr, &val)))
				bind(S, st->lhs, v);
			break;
		case ST_DATASET:
			if (S->block) {
				diag_error(st->loc, "'dataset' is only allowed in a model");
			} else if ((v = eval(E, S, st->expr, &val))) {
				if (v->kind != V_INT || v->i < 1)
					diag_error(st->expr->loc, "dataset size must be a positive "
						   "integer");
				else
					E->g->dataset_size = v->i;
			}
			break;
		case ST_RETURN:
			if (!S->block) {
				diag_error(st->loc, "'return' is only allowed in a block");
			} else if ((v = eval(E, S, st->expr, &val))) {
				if (v->kind != V_TENSOR) {
					diag_error(st->expr->loc, "a block must return a tensor, "
						   "not %s", kind_name[v->kind]);
				} else {
					S->ret = *v;
					S->returned = true;
				}
			}
			break;
		}
	}
}

/* ---- the model ---------------------------------------------------------- */

static bool
collect_blocks(Elab *E, const Decl *d)
{
	for (; d; d = d->next) {
		const Decl *prev;
		if (d->kind != D_BLOCK)
			continue;
		if (op_lookup(d->name) >= 0) {
			diag_error(d->loc, "block '%s' has the name of a layer kind", d->name);
		} else if ((prev = map_get(&E->blocks, d->name))) {
			diag_error(d->loc, "block '%s' is defined twice", d->name);
			diag_note(prev->loc, "first defined here");
		} else {
			map_put(&E->blocks, d->name, (void *)d);
		}
		for (const Param *p = d->params; p; p = p->next)
			for (const Param *q = p->next; q; q = q->next)
				if (strcmp(p->name, q->name) == 0)
					diag_error(q->loc, "parameter '%s' declared twice",
						   q->name);
	}
	return !diag_errors();
}

static const Decl *
find_model(const char *path, const Decl *own)
{
	const Decl *model = NULL;

	for (; own; own = own->next) {
		if (own->kind != D_MODEL)
			continue;
		if (model) {
			diag_error(own->loc, "a second model '%s' in one file", own->name);
			diag_note(model->loc, "the first is '%s'", model->name);
			return NULL;
		}
		model = own;
	}
	if (!model)
		diag_error((Loc){ path, 0, 0 }, "no model in this file");
	return model;
}

/* Tensors nobody reads are outputs unless `output` named some. */
static void
mark_outputs(Graph *g)
{
	bool *read;

	for (int t = 0; t < g->ntensor; t++)
		if (g->tensor[t].output)
			return;
	read = xcalloc(g->ntensor, sizeof *read);
	for (int l = 0; l < g->nlayer; l++)
		for (int i = 0; i < g->layer[l].nin; i++)
			read[g->layer[l].in[i]] = true;
	for (int t = 0; t < g->ntensor; t++)
		g->tensor[t].output = !read[t] && g->tensor[t].producer >= 0;
	free(read);
}

/* The model's body, statement by statement, the trees of those that have
 * run given back a thousand statements at a time (arena_drop_older). */
static void
run_body(Elab *E, Scope *top, const Stmt *body, Arena *bodies)
{
	unsigned n = 0;

	for (const Stmt *st = body; st && !E->stop; st = st->next) {
		exec_one(E, top, st);
		if (++n % 1024 == 0)
			arena_drop_older(bodies, st);
	}
}

Graph *
dsl_load(const char *path, Arena *a, FileList *files)
{
	Arena bodies, level; /* the models' bodies; the names bound at model level */
	Loader ld = { .a = a, .bodies = &bodies, .files = files };
	Elab E = { .a = a };
	Scope top = { .arena = &level, .prefix = "" };
	const Decl *own, *model = NULL;
	int errors0 = diag_errors();

	arena_init(&bodies);
	arena_init(&level);
	bodies.most = (size_t)8 << 20; /* given back 8 MiB at a time */
	map_init(&ld.loaded, a);
	map_init(&E.blocks, a);
	map_init(&E.names, NULL);
	map_init(&top.vars, NULL);
	arena_init(&E.scratch);
	own = load_file(&ld, path, LOC_NONE);
	if (diag_errors() == errors0 && collect_blocks(&E, ld.decls) &&
	    (model = find_model(path, own))) {
		E.g = graph_new(a, model->name, path, "odl");
		E.g->loc = model->loc;
		run_body(&E, &top, model->body, &bodies);
	}
	arena_free(&E.scratch);
	arena_free(&bodies);
	map_free(&E.names);
	map_free(&top.vars);
	arena_free(&level);
	if (!model || diag_errors() > errors0)
		return NULL;
	if (E.g->ninput == 0) {
		diag_error(model->loc, "model '%s' declares no input", model->name);
		return NULL;
	}
	mark_outputs(E.g);
	return E.g;
}
