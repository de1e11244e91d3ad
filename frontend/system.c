/* system.c -- cluster descriptions: ODL `system` blocks, built-in or from a
 * file, and ParaDL's .plat files.
 *
 * A system block is a list of `key = value;` settings and `level NAME {
 * ... }` blocks, values being literals (numbers, quantities with units,
 * strings, booleans).  Each key has one dimension; a value in the wrong
 * unit is an error naming the key, and so is a number outside the key's
 * range (docs/limits.md, "Numbers": a constant that makes a time
 * infinite or a memory absurd is refused here, where the file and line
 * are known).  docs/systems.md lists the keys. */
#include "frontend/frontend.h"
#include "grammar/ast.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef SysKey Key;

/* Defaults for what a user's file may leave out: generic values for a
 * current GPU and an eager framework (docs/systems.md says so). */
static void
defaults(System *s)
{
	/* the implementation's (ir/implementation.h) unless a file sets them */
	s->p2p_lat = -1;
	s->staging_bw = -1;
	s->dispatch = -1;
	s->decode_bw = -1;
	s->eff_conv = 0.7;
	s->eff_gemm = 0.8;
	s->eff_mem = 0.8;
	s->eff_norm_nchw = -1;
	s->conv_1x1_scale = s->conv_grouped_scale = -1;
	for (int i = 0; i < DT_COUNT; i++)
		s->eff_conv_dt[i] = s->eff_gemm_dt[i] = s->eff_norm_nchw_dt[i] = -1;
	s->kernel_lat = 5e-6;
	s->reserved = 1024.0 * 1024 * 1024;
	s->cpu_cores = 32;
	s->storage_bw = 10e9;
	s->intra = "nvlink";
	s->gpu = "GPU";
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
			settings(st->body, level_keys, sizeof lseen / sizeof lseen[0], lv, lseen,
				 s);
			for (size_t i = 0; i < sizeof lseen / sizeof lseen[0]; i++)
				if (level_keys[i].required && !lseen[i])
					diag_error(st->loc, "level '%s' does not give '%s'",
						   st->lhs, level_keys[i].name);
			if (lv->oversub < 1)
				lv->oversub = 1;
			continue;
		}
		if (st->kind != ST_LET) {
			diag_error(st->loc, "a system holds only 'key = value;' settings and "
				   "'level' blocks");
			continue;
		}
		if (!(k = key_find(keys, n, st->lhs))) {
			diag_error(st->loc, "unknown %s setting '%.64s'",
				   keys == sys_keys ? "system" : "level", st->lhs);
			continue;
		}
		if (seen[k - keys])
			diag_error(st->loc, "'%s' is set twice", k->name);
		seen[k - keys] = true;
		key_set(k, base, st->expr, st->expr->loc);
		if (keys == sys_keys && k->off == offsetof(System, implementation))
			s->implementation_at = st->expr->loc;
		if (keys == sys_keys && k->off == offsetof(System, kernels))
			s->kernels_at = st->expr->loc;
		if (keys == sys_keys && k->off == offsetof(System, collectives))
			s->collectives_at = st->expr->loc;
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
	/* each real key was checked against its range as it was set */
	if (diag_errors() == errors && s->gpus_per_node < 1)
		diag_error(d->loc, "system '%s': 'gpus_per_node' must be at least 1", d->name);
	if (diag_errors() == errors && s->nlevels == 0) {
		/* one flat switch */
		s->level[0] = (NetLevel){ "switch", 0, 100e-9, 1 };
		s->nlevels = 1;
	}
	return diag_errors() > errors ? NULL : s;
}

static System *load(const char *name, Arena *a, FileList *files);
static const CollTable *collectives_beside(const char *name, System *s, Arena *a,
					   FileList *files);

System *
system_load(const char *name, Arena *a, FileList *files)
{
	return system_load_with(name, NULL, NULL, a, files);
}

/* The system and the implementation it names (else the default one), or
 * impl in its place; the kernel table it names, or `kernels` in its
 * place, read. */
System *
system_load_with(const char *name, const Implementation *impl, const char *kernels, Arena *a,
		 FileList *files)
{
	System *s = load(name, a, files);

	if (!s)
		return NULL;
	if (kernels) {
		s->kernels = kernels;
		s->kernels_at = LOC_NONE;
	}
	if (s->kernels && !(s->table = kernels_load(s->kernels, s->kernels_at, a, files)))
		return NULL;
	if (impl)
		s->impl = impl;
	else if (!(s->impl = implementation_load_at(s->implementation ? s->implementation
								    : default_implementation,
						    s->implementation_at, a, files)))
		return NULL;
	return s;
}

/* A file a system file names (its implementation, its kernel table),
 * from the system file's directory as an include is from its file's (an
 * absolute path and a system file in the current directory as they are;
 * where `builtins`, so is a name, which holds neither a '.' nor a '/'). */
static const char *
beside(const char *file, const char *name, Arena *a, bool builtins)
{
	const char *slash = strrchr(file, '/');

	if ((builtins && (builtin_impl(name) || (!strchr(name, '/') && !strchr(name, '.')))) ||
	    name[0] == '/' || !slash)
		return name;
	return arena_printf(a, "%.*s/%s", (int)(slash - file), file, name);
}

static System *
load(const char *name, Arena *a, FileList *files)
{
	size_t n = strlen(name);
	const char *source;
	const Decl *d;
	System *s;

	if (n > 5 && strcmp(name + n - 5, ".plat") == 0) {
		/* the default system, with the constants the file gives */
		s = load(default_system, a, files);
		return s && plat_read(name, files, s) ? s : NULL;
	}
	if (!(d = noun_block(&noun_system, &name, LOC_NONE, a, files, &source)) ||
	    !(s = elaborate(d, a, source)))
		return NULL;
	if (strcmp(source, "built-in") == 0) {
		s->name = name;
		return s;
	}
	if (s->implementation)
		s->implementation = beside(name, s->implementation, a, true);
	if (s->kernels && !*s->kernels) {
		diag_error(s->kernels_at, "'kernels' is empty (a kernel table's file)");
		return NULL;
	}
	if (s->kernels)
		s->kernels = beside(name, s->kernels, a, false);
	if (s->collectives && !(s->colls = collectives_beside(name, s, a, files)))
		return NULL;
	return s;
}

/* The table of measured collectives the system file names: each file of
 * its comma list from the system file's directory (docs/systems.md). */
static const CollTable *
collectives_beside(const char *name, System *s, Arena *a, FileList *files)
{
	const char *p = s->collectives;
	char *list = NULL;

	if (!*p) {
		diag_error(s->collectives_at, "'collectives' is empty (nccl-tests' output)");
		return NULL;
	}
	for (;;) {
		size_t k = strcspn(p, ",");
		const char *one = beside(name, arena_strndup(a, p, k), a, false);
		list = list ? arena_printf(a, "%s,%s", list, one) : (char *)one;
		if (!p[k])
			break;
		p += k + 1;
	}
	s->collectives = list;
	return collectives_load(list, s->collectives_at, a, files);
}

void
system_list(FILE *f)
{
	const char *name;

	for (int i = 0; (name = builtin_system_name(i)); i++)
		fprintf(f, "%s%s", i ? "\n" : "", builtin_system(name));
}
