/* parse.y -- the grammar of ODL, oraclec's model description language.
 *
 * A pure, reentrant parser with locations.  Actions only build the syntax
 * tree (grammar/ast.h); names, arities and shapes are checked later, by
 * frontend/dsl.c and the passes.  `error ';'` lets one run report several
 * syntax errors.  The language is described in docs/odl.md. */

%code requires {
#include "grammar/ast.h"

/* Shared by the scanner (as its extra data) and the parser. */
typedef struct ParseCtx {
	Arena *arena;       /* where the tree goes now: main, or bodies while
	                       a model's body is read (the scanner switches:
	                       model_body) */
	Arena *main, *bodies; /* bodies NULL: main for everything */
	int model_body;     /* the scanner: 1 after `model`, 2 after its name,
	                       then 3 + the braces open in its body */
	const char *file;
	Decl *decls;        /* result, reversed until the end */
	Loc comment;        /* where the open block comment began */
	bool eof_reported;  /* the scanner reported an early end of input */
} ParseCtx;
}

%code provides {
int yylex(YYSTYPE *lval, YYLTYPE *lloc, void *scanner);
int yyparse(void *scanner, ParseCtx *ctx);
}

%code {
#define L(l) ((Loc){ ctx->file, (l).first_line, (l).first_column })
#define A (ctx->arena)

#include <string.h>

static void
yyerror(YYLTYPE *loc, void *scanner, ParseCtx *ctx, const char *msg)
{
	(void)scanner;
	/* bison's stack (YYMAXDEPTH) ran out: only deep nesting does that */
	if (strcmp(msg, "memory exhausted") == 0)
		msg = "nesting too deep (more than 10000 levels)";
	if (ctx->eof_reported && strstr(msg, "end of file"))
		return; /* the scanner already explained the early end */
	diag_error(L(*loc), "%s", msg);
}
}

%define api.pure full
%define parse.error detailed
%define parse.lac full
%expect 0
%locations
%param {void *scanner}
%parse-param {ParseCtx *ctx}

%union {
	const char *str;
	Expr *expr;
	Stmt *stmt;
	Arg *arg;
	Param *param;
	Decl *decl;
}

%token MODEL "model" BLOCK "block" INCLUDE "include" INPUT "input"
%token OUTPUT "output" DATASET "dataset" RETURN "return" REPEAT "repeat"
%token AS "as" TRUE "true" FALSE "false" IF "if" ELSE "else"
%token SYSTEM "system" LEVEL "level" IMPLEMENTATION "implementation"
%token EQ "==" NE "!=" LE "<=" GE ">="
%token <str> IDENT "identifier" STRING "string"
%token <expr> NUMBER "number" DIMS "dimensions" QUANTITY "quantity"

%type <decl> decl decls
%type <stmt> stmt stmts body
%type <arg> arg args arglist names
%type <param> param params paramlist
%type <expr> expr exprs

%nonassoc EQ NE '<' '>' LE GE
%left '+' '-'
%left '*' '/' '%'
%precedence NEG

%%

file:
	decls                   { ctx->decls = ast_rev_decls($1); }
	;

decls:
	%empty                  { $$ = NULL; }
	| decls decl            { $$ = $2; $$->next = $1; }
	| decls error ';'       { $$ = $1; }
	| decls error '}'       { $$ = $1; }
	;

decl:
	INCLUDE STRING ';'      { $$ = ast_decl(A, D_INCLUDE, $2, L(@1)); }
	| MODEL IDENT body      { $$ = ast_decl(A, D_MODEL, $2, L(@2)); $$->body = $3; }
	| SYSTEM IDENT body     { $$ = ast_decl(A, D_SYSTEM, $2, L(@2)); $$->body = $3; }
	| IMPLEMENTATION IDENT body
	                        { $$ = ast_decl(A, D_IMPLEMENTATION, $2, L(@2)); $$->body = $3; }
	| BLOCK IDENT '(' params ')' body
	                        {
				  $$ = ast_decl(A, D_BLOCK, $2, L(@2));
				  $$->params = ast_rev_params($4);
				  $$->body = $6;
				}
	;

params:
	%empty                  { $$ = NULL; }
	| paramlist
	;

paramlist:
	param
	| paramlist ',' param   { $$ = $3; $$->next = $1; }
	;

param:
	IDENT                   { $$ = ast_param(A, $1, NULL, L(@1)); }
	| IDENT '=' expr        { $$ = ast_param(A, $1, $3, L(@1)); }
	;

body:
	'{' stmts '}'           { $$ = ast_rev_stmts($2); }
	;

stmts:
	%empty                  { $$ = NULL; }
	| stmts stmt            { $$ = $2; $$->next = $1; }
	| stmts error ';'       { $$ = $1; }
	;

stmt:
	IDENT '=' IDENT '(' args ')' ';'
	                        {
				  $$ = ast_stmt(A, ST_LAYER, L(@1));
				  $$->lhs = $1;
				  $$->callee = $3;
				  $$->callee_loc = L(@3);
				  $$->args = ast_rev_args($5);
				}
	| IDENT '=' expr ';'    { $$ = ast_stmt(A, ST_LET, L(@1)); $$->lhs = $1; $$->expr = $3; }
	| IMPLEMENTATION '=' expr ';'
	                        {
				  /* a system's default implementation */
				  $$ = ast_stmt(A, ST_LET, L(@1));
				  $$->lhs = "implementation";
				  $$->expr = $3;
				}
	| IF expr body          { $$ = ast_stmt(A, ST_IF, L(@1)); $$->expr = $2; $$->body = $3; }
	| IF expr body ELSE body
	                        {
				  $$ = ast_stmt(A, ST_IF, L(@1));
				  $$->expr = $2;
				  $$->body = $3;
				  $$->orelse = $5;
				}
	| INPUT IDENT ':' expr ';'
	                        {
				  $$ = ast_stmt(A, ST_INPUT, L(@1));
				  $$->lhs = $2;
				  $$->expr = $4;
				}
	| INPUT IDENT ':' expr AS IDENT ';'
	                        {
				  /* input ids: s as tokens;  a sequence of s tokens */
				  $$ = ast_stmt(A, ST_INPUT, L(@1));
				  $$->lhs = $2;
				  $$->expr = $4;
				  $$->var = $6;
				  $$->callee_loc = L(@6);
				}
	| OUTPUT names ';'      { $$ = ast_stmt(A, ST_OUTPUT, L(@1)); $$->args = ast_rev_args($2); }
	| DATASET expr ';'      { $$ = ast_stmt(A, ST_DATASET, L(@1)); $$->expr = $2; }
	| RETURN expr ';'       { $$ = ast_stmt(A, ST_RETURN, L(@1)); $$->expr = $2; }
	| LEVEL IDENT body      { $$ = ast_stmt(A, ST_LEVEL, L(@1)); $$->lhs = $2; $$->body = $3; }
	| REPEAT expr body      { $$ = ast_stmt(A, ST_REPEAT, L(@1)); $$->expr = $2; $$->body = $3; }
	| REPEAT expr AS IDENT body
	                        {
				  $$ = ast_stmt(A, ST_REPEAT, L(@1));
				  $$->expr = $2;
				  $$->var = $4;
				  $$->body = $5;
				}
	;

names:
	IDENT                   {
				  Expr *e = ast_expr(A, E_NAME, L(@1));
				  e->name = $1;
				  $$ = ast_arg(A, NULL, e, L(@1));
				}
	| names ',' IDENT       {
				  Expr *e = ast_expr(A, E_NAME, L(@3));
				  e->name = $3;
				  $$ = ast_arg(A, NULL, e, L(@3));
				  $$->next = $1;
				}
	;

args:
	%empty                  { $$ = NULL; }
	| arglist
	;

arglist:
	arg
	| arglist ',' arg       { $$ = $3; $$->next = $1; }
	;

arg:
	expr                    { $$ = ast_arg(A, NULL, $1, L(@1)); }
	| IDENT '=' expr        { $$ = ast_arg(A, $1, $3, L(@1)); }
	;

exprs:
	expr
	| exprs ',' expr        { $$ = $3; $$->next = $1; }
	;

expr:
	NUMBER
	| DIMS
	| QUANTITY
	| STRING                { $$ = ast_expr(A, E_STRING, L(@1)); $$->name = $1; }
	| IDENT                 { $$ = ast_expr(A, E_NAME, L(@1)); $$->name = $1; }
	| TRUE                  { $$ = ast_expr(A, E_BOOL, L(@1)); $$->ival = 1; }
	| FALSE                 { $$ = ast_expr(A, E_BOOL, L(@1)); }
	| '[' ']'               { $$ = ast_expr(A, E_LIST, L(@1)); }
	| '[' exprs ']'         { $$ = ast_list(A, ast_rev_exprs($2), L(@1)); }
	| '(' expr ')'          { $$ = $2; }
	| '-' expr %prec NEG    { $$ = ast_unary(A, E_NEG, $2, L(@1)); }
	| expr '+' expr         { $$ = ast_binop(A, '+', $1, $3, L(@2)); }
	| expr '-' expr         { $$ = ast_binop(A, '-', $1, $3, L(@2)); }
	| expr '*' expr         { $$ = ast_binop(A, '*', $1, $3, L(@2)); }
	| expr '/' expr         { $$ = ast_binop(A, '/', $1, $3, L(@2)); }
	| expr '%' expr         { $$ = ast_binop(A, '%', $1, $3, L(@2)); }
	| expr EQ expr          { $$ = ast_binop(A, 'e', $1, $3, L(@2)); }
	| expr NE expr          { $$ = ast_binop(A, 'n', $1, $3, L(@2)); }
	| expr '<' expr         { $$ = ast_binop(A, '<', $1, $3, L(@2)); }
	| expr '>' expr         { $$ = ast_binop(A, '>', $1, $3, L(@2)); }
	| expr LE expr          { $$ = ast_binop(A, 'l', $1, $3, L(@2)); }
	| expr GE expr          { $$ = ast_binop(A, 'g', $1, $3, L(@2)); }
	;

%%
