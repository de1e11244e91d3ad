/* system.c -- cluster descriptions: ODL `system` blocks, built-in or from a
 * file, and ParaDL's .plat files.
 *
 * A system block is a list of `key = value;` settings and `level NAME {
 * ... }` blocks, values being literals (numbers, quantities with units,
 * strings, booleans).  Each key has one dimension; a value in the wrong
 * unit is an error naming the key.  docs/systems.md lists the keys. */
#include "frontend/frontend.h"
#include "grammar/ast.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef enum KeyType { K_REAL, K_INT, K_INT64, K_BOOL, K_STRING } KeyType;

typedef struct Key {
	const char *name;
	KeyType type;
	Unit unit;        /* for K_REAL: the dimension required (U_NONE: a plain number) */
	size_t off;       /* offsetof the field in System (or NetLevel) */
	bool required;
} Key;

#define SYS(f) offsetof(System, f)
#define LVL(f) offsetof(NetLevel, f)

static const Key sys_keys[] = {
	{ "gpu", K_STRING, U_NONE, SYS(gpu), false },
	{ "fp32", K_REAL, U_FLOPS, SYS(peak[PREC_FP32]), true },
	{ "fp16", K_REAL, U_FLOPS, SYS(peak[PREC_FP16]), false },
	{ "bf16", K_REAL, U_FLOPS, SYS(peak[PREC_BF16]), false },
	{ "memory", K_REAL, U_BYTES, SYS(mem), true },
	{ "memory_bw", K_REAL, U_BYTES_PER_S, SYS(mem_bw), true },
	{ "gpus_per_node", K_INT, U_NONE, SYS(gpus_per_node), true },
	{ "intra", K_STRING, U_NONE, SYS(intra), false },
	{ "intra_bw", K_REAL, U_BYTES_PER_S, SYS(intra_bw), true },
	{ "intra_latency", K_REAL, U_SECONDS, SYS(intra_lat), true },
	{ "nic_bw", K_REAL, U_BYTES_PER_S, SYS(nic_bw), true },
	{ "nic_latency", K_REAL, U_SECONDS, SYS(nic_lat), true },
	{ "p2p_latency", K_REAL, U_SECONDS, SYS(p2p_lat), false },
	{ "tree", K_BOOL, U_NONE, SYS(tree), false },
	{ "storage_bw", K_REAL, U_BYTES_PER_S, SYS(storage_bw), false },
	{ "cpu_cores", K_INT, U_NONE, SYS(cpu_cores), false },
	{ "decode_bw", K_REAL, U_BYTES_PER_S, SYS(decode_bw), false },
	{ "eff_conv", K_REAL, U_NONE, SYS(eff_conv), false },
	{ "eff_gemm", K_REAL, U_NONE, SYS(eff_gemm), false },
	{ "eff_memory", K_REAL, U_NONE, SYS(eff_mem), false },
	{ "kernel_latency", K_REAL, U_SECONDS, SYS(kernel_lat), false },
	{ "dispatch", K_REAL, U_SECONDS, SYS(dispatch), false },
	{ "reserved", K_REAL, U_BYTES, SYS(reserved), false },
};

static const Key level_keys[] = {
	{ "fanout", K_INT64, U_NONE, LVL(fanout), true },
	{ "latency", K_REAL, U_SECONDS, LVL(latency), true },
	{ "oversubscription", K_REAL, U_NONE, LVL(oversub), false },
};

static const char *const unit_name[] = { "a plain number", "bytes (e.g. 16GiB)",
					 "seconds (e.g. 9us)", "a bandwidth (e.g. 12.5GB/s)",
					 "FLOP/s (e.g. 15.7TFLOPS)" };

/* Defaults for what a user's file may leave out: generic values for a
 * current GPU and an eager framework (docs/systems.md says so). */
static void
defaults(System *s)
{
	s->p2p_lat = 10e-6;  /* NCCL send/recv */
	s->eff_conv = 0.7;
	s->eff_gemm = 0.8;
	s->eff_mem = 0.8;
	s->kernel_lat = 5e-6;
	s->dispatch = 10e-6; /* PyTorch eager */
	s->reserved = 1024.0 * 1024 * 1024;
	s->cpu_cores = 32;
	s->decode_bw = 30e6;
	s->storage_bw = 10e9;
	s->intra = "nvlink";
	s->gpu = "GPU";
}

static bool
set(const Key *k, void *base, const Expr *e, Loc loc)
{
	char *p = (char *)base + k->off;
	double v = e->kind == E_INT ? (double)e->ival : e->fval;
	bool neg = e->kind == E_NEG;

	if (neg) {
		diag_error(loc, "'%s' must not be negative", k->name);
		return false;
	}
	switch (k->type) {
	case K_STRING:
		if (e->kind != E_STRING)
			break;
		*(const char **)p = e->name;
		return true;
	case K_BOOL:
		if (e->kind != E_BOOL)
			break;
		*(bool *)p = e->ival != 0;
		return true;
	case K_INT:
	case K_INT64:
		if (e->kind != E_INT || e->ival < 0 || e->ival > (int64_t)1 << 30)
			break;
		if (k->type == K_INT64)
			*(int64_t *)p = e->ival;
		else
			*(int *)p = (int)e->ival;
		return true;
	case K_REAL:
		if ((e->kind != E_INT && e->kind != E_FLOAT) || e->unit != k->unit || v < 0)
			break;
		*(double *)p = v;
		return true;
	}
	diag_error(loc, "'%s' must be %s", k->name,
		   k->type == K_STRING ? "a string"
		   : k->type == K_BOOL ? "true or false"
		   : k->type != K_REAL ? "a non-negative integer"
				       : unit_name[k->unit]);
	return false;
}

static const Key *
find_key(const Key *keys, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(keys[i].name, name) == 0)
			return &keys[i];
	return NULL;
}

/* Applies the settings of one block; `seen` marks the keys given. */
static void
settings(const Stmt *st, const Key *keys, size_t n, void *base, bool *seen, System *s)
{
	for (; st; st = st->next) {
		const Key *k;
		if (st->kind == ST_LEVEL && keys == sys_keys) {
			NetLevel *lv;
			bool lseen[sizeof level_keys / sizeof level_keys[0]] = { false };
			if (s->nlevels == MAX_LEVELS) {
				diag_error(st->loc, "more than %d network levels", MAX_LEVELS);
				continue;
			}
			lv = &s->level[s->nlevels++];
			lv->name = st->lhs;
			lv->oversub = 1;
			settings(st->body, level_keys, sizeof lseen / sizeof lseen[0], lv, lseen, s);
			for (size_t i = 0; i < sizeof lseen / sizeof lseen[0]; i++)
				if (level_keys[i].required && !lseen[i])
					diag_error(st->loc, "level '%s' does not give '%s'", st->lhs,
						   level_keys[i].name);
			if (lv->oversub < 1)
				lv->oversub = 1;
			continue;
		}
		if (st->kind != ST_LET) {
			diag_error(st->loc, "a system holds only 'key = value;' settings and "
				   "'level' blocks");
			continue;
		}
		if (!(k = find_key(keys, n, st->lhs))) {
			diag_error(st->loc, "unknown %s setting '%.64s'",
				   keys == sys_keys ? "system" : "level", st->lhs);
			continue;
		}
		if (seen[k - keys])
			diag_error(st->loc, "'%s' is set twice", k->name);
		seen[k - keys] = true;
		set(k, base, st->expr, st->expr->loc);
	}
}

static System *
elaborate(const Decl *d, Arena *a, const char *source)
{
	System *s = arena_alloc(a, sizeof *s);
	bool seen[sizeof sys_keys / sizeof sys_keys[0]] = { false };
	int errors = diag_errors();

	defaults(s);
	s->name = d->name;
	s->source = source;
	settings(d->body, sys_keys, sizeof seen / sizeof seen[0], s, seen, s);
	for (size_t i = 0; i < sizeof seen / sizeof seen[0]; i++)
		if (sys_keys[i].required && !seen[i])
			diag_error(d->loc, "system '%s' does not give '%s'", d->name,
				   sys_keys[i].name);
	if (diag_errors() == errors && (s->gpus_per_node < 1 || s->peak[PREC_FP32] <= 0 ||
					s->mem <= 0 || s->mem_bw <= 0 || s->intra_bw <= 0 ||
					s->nic_bw <= 0))
		diag_error(d->loc, "system '%s': GPUs per node, FLOP/s, memory and bandwidths "
			   "must be positive", d->name);
	if (diag_errors() == errors && (s->mem > MAX_SYSTEM_BYTES || s->reserved > MAX_SYSTEM_BYTES))
		diag_error(d->loc, "system '%s': memory sizes above 2^60 bytes are not supported",
			   d->name);
	if (diag_errors() == errors &&
	    !(s->eff_conv > 0 && s->eff_conv <= 1 && s->eff_gemm > 0 && s->eff_gemm <= 1 &&
	      s->eff_mem > 0 && s->eff_mem <= 1))
		diag_error(d->loc, "system '%s': efficiencies must be above 0 and at most 1",
			   d->name);
	if (diag_errors() == errors && s->nlevels == 0) {
		/* one flat switch */
		s->level[0] = (NetLevel){ "switch", 0, 100e-9, 1 };
		s->nlevels = 1;
	}
	return diag_errors() > errors ? NULL : s;
}

static System *
from_text(const char *file, const char *text, size_t len, Arena *a, const char *source)
{
	char *buf = xcalloc(len + 2, 1);
	const Decl *d, *found = NULL;
	int errors = diag_errors();

	memcpy(buf, text, len);
	d = dsl_parse(file, buf, len, a);
	free(buf);
	if (diag_errors() > errors)
		return NULL;
	for (; d; d = d->next) {
		if (d->kind != D_SYSTEM)
			continue;
		if (found) {
			diag_error(d->loc, "a second system '%s' in one file", d->name);
			return NULL;
		}
		found = d;
	}
	if (!found) {
		diag_error((Loc){ file, 0, 0 }, "no system in this file");
		return NULL;
	}
	return elaborate(found, a, source);
}

System *
system_load(const char *name, Arena *a, FileList *files)
{
	const char *text = builtin_system(name);
	char *buf;
	size_t len;
	System *s;
	size_t n = strlen(name);

	if (text)
		return from_text(arena_printf(a, "<built-in %s>", name), text, strlen(text), a,
				 "built-in");
	if (n > 5 && strcmp(name + n - 5, ".plat") == 0)
		return paradl_load_plat(name, a, files);
	if (!strchr(name, '/') && !strchr(name, '.')) {
		diag_error(LOC_NONE, "unknown system '%.64s' (--list-systems shows the built-in "
			   "ones; a file name needs a '.' or a '/')", name);
		return NULL;
	}
	if (!(buf = file_read(name, &len, MAX_ODL_BYTES, LOC_NONE)))
		return NULL;
	files_add(files, name);
	s = from_text(name, buf, len, a, name);
	free(buf);
	return s;
}

void
system_list(FILE *f)
{
	const char *name;

	for (int i = 0; (name = builtin_system_name(i)); i++)
		fprintf(f, "%s%s", i ? "\n" : "", builtin_system(name));
}
