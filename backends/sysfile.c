/* sysfile.c -- a System written back as ODL, e.g. after calibration; the
 * result reads back with --system.  Quantities in base units with their
 * unit, so nothing is lost.  Strings are ODL string literals, names ODL
 * identifiers (a .plat system is named by its path), the comment text
 * that cannot end its line (util/escape.h). */
#include "backends/backends.h"
#include "util/escape.h"

#include <inttypes.h>

static void
real(FILE *f, const char *key, double v, const char *unit)
{
	fprintf(f, "    %s = %.10g%s;\n", key, v, unit);
}

bool
system_emit(const System *s, const char *name, const char *comment, FILE *f)
{
	static const char *const prec[PREC_COUNT] = { "fp32", "fp16", "bf16" };

	fputs("// ", f);
	esc_text(f, comment);
	fputs("\nsystem ", f);
	esc_odl_ident(f, name);
	fputs(" {\n    gpu = ", f);
	esc_odl_string(f, s->gpu);
	fputs(";\n", f);
	for (int p = 0; p < PREC_COUNT; p++)
		if (s->peak[p] > 0)
			real(f, prec[p], s->peak[p], "FLOPS");
	real(f, "memory", s->mem, "B");
	real(f, "memory_bw", s->mem_bw, "B/s");
	fprintf(f, "    gpus_per_node = %d;\n    intra = ", s->gpus_per_node);
	esc_odl_string(f, s->intra);
	fputs(";\n", f);
	real(f, "intra_bw", s->intra_bw, "B/s");
	real(f, "intra_latency", s->intra_lat * 1e9, "ns");
	real(f, "nic_bw", s->nic_bw, "B/s");
	real(f, "nic_latency", s->nic_lat * 1e9, "ns");
	real(f, "p2p_latency", s->p2p_lat * 1e9, "ns");
	fprintf(f, "    tree = %s;\n", s->tree ? "true" : "false");
	for (int i = 0; i < s->nlevels; i++) {
		fputs("    level ", f);
		esc_odl_ident(f, s->level[i].name);
		fprintf(f, " { fanout = %" PRId64 "; latency = %.6gns; "
			   "oversubscription = %.6g; }\n", s->level[i].fanout,
			s->level[i].latency * 1e9, s->level[i].oversub);
	}
	real(f, "storage_bw", s->storage_bw, "B/s");
	fprintf(f, "    cpu_cores = %d;\n", s->cpu_cores);
	real(f, "decode_bw", s->decode_bw, "B/s");
	real(f, "eff_conv", s->eff_conv, "");
	real(f, "eff_gemm", s->eff_gemm, "");
	real(f, "eff_memory", s->eff_mem, "");
	real(f, "kernel_latency", s->kernel_lat * 1e9, "ns");
	real(f, "dispatch", s->dispatch * 1e9, "ns");
	real(f, "reserved", s->reserved, "B");
	fprintf(f, "}\n");
	return !ferror(f);
}
