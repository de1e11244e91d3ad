/* ast.h -- the syntax tree of an ODL file, built by parse.y.
 *
 * The tree keeps what was written (blocks are expanded later, by
 * frontend/dsl.c, which turns a model into IR).  Lists are singly linked
 * through `next`, in source order.  Everything lives in the arena. */
#ifndef ORACLEC_GRAMMAR_AST_H
#define ORACLEC_GRAMMAR_AST_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/system.h" /* Unit */
#include "util/arena.h"
#include "util/diag.h"

typedef enum ExprKind {
	E_INT,    /* ival */
	E_FLOAT,  /* fval */
	E_BOOL,   /* ival: 0 or 1 */
	E_NAME,   /* name: a tensor, block parameter or loop variable */
	E_LIST,   /* list: [a, b, c] or 3x224x224 */
	E_BINOP,  /* op: + - * / % < >, e (==), n (!=), l (<=), g (>=); a, b */
	E_NEG,    /* a */
	E_STRING, /* name: the text */
} ExprKind;

/* The dimension of a quantity written with a unit (12.5GB/s); its value is
 * kept in SI base units: bytes, seconds, bytes per second, FLOP/s. */

typedef struct Expr Expr;
struct Expr {
	ExprKind kind;
	int depth;    /* nesting below this node; -1: an error was reported */
	Loc loc;
	union {       /* by kind, as ExprKind says: a model's body holds a
	                 million of them */
		int64_t ival;
		double fval;
		const char *name;
		Expr *list;   /* E_LIST items, linked by next */
		struct {
			Expr *a, *b;
		};
	};
	Expr *next;
	int op;
	Unit unit;    /* E_FLOAT written with a unit */
};

/* Deeper expressions are refused: evaluation recurses (docs/limits.md). */
enum { MAX_EXPR_DEPTH = 256 };

typedef struct Arg Arg;
struct Arg {
	const char *key; /* NULL for a positional argument */
	Loc loc;
	Expr *value;
	Arg *next;
};

typedef enum StmtKind {
	ST_LAYER,   /* lhs = callee(args); */
	ST_LET,     /* lhs = expr;  (a name for a value or tensor, no layer) */
	ST_IF,      /* if expr { body } [else { orelse }] */
	ST_INPUT,   /* input lhs: expr; */
	ST_OUTPUT,  /* output names...;  (names in args, positional E_NAME) */
	ST_DATASET, /* dataset expr; */
	ST_RETURN,  /* return expr; */
	ST_REPEAT,  /* repeat expr [as var] { body } */
	ST_LEVEL,   /* level lhs { body }  (in a system: one network level) */
} StmtKind;

typedef struct Stmt Stmt;
struct Stmt {
	StmtKind kind;
	Loc loc;
	const char *lhs;
	const char *callee;
	Loc callee_loc;
	Arg *args;
	Expr *expr;
	const char *var;      /* repeat N as VAR; input x: S as VAR (tokens) */
	Stmt *body;
	Stmt *orelse;
	Stmt *next;
};

typedef struct Param Param;
struct Param {
	const char *name;
	Loc loc;
	Expr *deflt;  /* NULL: required */
	Param *next;
};

typedef enum DeclKind { D_MODEL, D_BLOCK, D_INCLUDE, D_SYSTEM, D_IMPLEMENTATION } DeclKind;

typedef struct Decl Decl;
struct Decl {
	DeclKind kind;
	Loc loc;
	const char *name;  /* model, block or system name; include: the path */
	Param *params;     /* block */
	Stmt *body;        /* model, block, system */
	Decl *next;
};

Expr *ast_expr(Arena *a, ExprKind k, Loc loc);
Expr *ast_binop(Arena *a, int op, Expr *x, Expr *y, Loc loc);
Expr *ast_unary(Arena *a, ExprKind k, Expr *x, Loc loc);   /* E_NEG */
Expr *ast_list(Arena *a, Expr *items, Loc loc);            /* E_LIST */
/* e, or a placeholder after reporting when e is nested too deeply */
Expr *ast_check_depth(Arena *a, Expr *e);
Stmt *ast_stmt(Arena *a, StmtKind k, Loc loc);
Decl *ast_decl(Arena *a, DeclKind k, const char *name, Loc loc);
Arg *ast_arg(Arena *a, const char *key, Expr *value, Loc loc);
Param *ast_param(Arena *a, const char *name, Expr *deflt, Loc loc);

/* The parser builds lists reversed (O(1) per item); these put them back. */
Stmt *ast_rev_stmts(Stmt *s);
Arg *ast_rev_args(Arg *a);
Param *ast_rev_params(Param *p);
Expr *ast_rev_exprs(Expr *e);
Decl *ast_rev_decls(Decl *d);

/* lex.l: parse one file's text (NUL-terminated twice, as file_read gives).
 * Returns the declarations in source order; syntax errors are reported
 * through diag and counted there. */
Decl *dsl_parse(const char *file, char *text, size_t len, Arena *a);
/* The same, a model's body (its statements, their expressions and
 * names) into `bodies`: an arena the caller may free as it is done with
 * them (frontend/dsl.c); the rest into a. */
Decl *dsl_parse_into(const char *file, char *text, size_t len, Arena *a, Arena *bodies);

#endif
