/* ast.c -- constructors for the ODL syntax tree.  Expressions, arguments
 * and statements are packed to their own alignment (a million-statement
 * model's tree). */
#include "grammar/ast.h"

Expr *
ast_expr(Arena *a, ExprKind k, Loc loc)
{
	Expr *e = arena_alloc_aligned(a, sizeof *e, _Alignof(Expr));

	e->kind = k;
	e->loc = loc;
	return e;
}

static int
deeper(int d, const Expr *x)
{
	if (d < 0 || x->depth < 0)
		return -1;
	return x->depth + 1 > d ? x->depth + 1 : d;
}

Expr *
ast_binop(Arena *a, int op, Expr *x, Expr *y, Loc loc)
{
	Expr *e = ast_expr(a, E_BINOP, loc);

	e->op = op;
	e->a = x;
	e->b = y;
	e->depth = deeper(deeper(0, x), y);
	return ast_check_depth(a, e);
}

Expr *
ast_unary(Arena *a, ExprKind k, Expr *x, Loc loc)
{
	Expr *e = ast_expr(a, k, loc);

	e->a = x;
	e->depth = deeper(0, x);
	return ast_check_depth(a, e);
}

Expr *
ast_list(Arena *a, Expr *items, Loc loc)
{
	Expr *e = ast_expr(a, E_LIST, loc);

	e->list = items;
	for (; items; items = items->next)
		e->depth = deeper(e->depth, items);
	return ast_check_depth(a, e);
}

Expr *
ast_check_depth(Arena *a, Expr *e)
{
	Expr *z;

	if (e->depth <= MAX_EXPR_DEPTH)
		return e;
	diag_error(e->loc, "expression nested more than %d levels deep", MAX_EXPR_DEPTH);
	z = ast_expr(a, E_INT, e->loc);
	z->depth = -1; /* reported: nothing above it reports again */
	return z;
}

Stmt *
ast_stmt(Arena *a, StmtKind k, Loc loc)
{
	Stmt *s = arena_alloc_aligned(a, sizeof *s, _Alignof(Stmt));

	s->kind = k;
	s->loc = loc;
	return s;
}

Decl *
ast_decl(Arena *a, DeclKind k, const char *name, Loc loc)
{
	Decl *d = arena_alloc(a, sizeof *d);

	d->kind = k;
	d->name = name;
	d->loc = loc;
	return d;
}

Arg *
ast_arg(Arena *a, const char *key, Expr *value, Loc loc)
{
	Arg *g = arena_alloc_aligned(a, sizeof *g, _Alignof(Arg));

	g->key = key;
	g->value = value;
	g->loc = loc;
	return g;
}

Param *
ast_param(Arena *a, const char *name, Expr *deflt, Loc loc)
{
	Param *p = arena_alloc(a, sizeof *p);

	p->name = name;
	p->deflt = deflt;
	p->loc = loc;
	return p;
}

#define REVERSE(T, fn)                          \
	T *fn(T *x)                             \
	{                                       \
		T *prev = 0, *next;             \
		for (; x; x = next) {           \
			next = x->next;         \
			x->next = prev;         \
			prev = x;               \
		}                               \
		return prev;                    \
	}

REVERSE(Stmt, ast_rev_stmts)
REVERSE(Arg, ast_rev_args)
REVERSE(Param, ast_rev_params)
REVERSE(Expr, ast_rev_exprs)
REVERSE(Decl, ast_rev_decls)
