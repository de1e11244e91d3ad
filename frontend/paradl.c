/* paradl.c -- ParaDL's input formats, so the same inputs run through both
 * tools.  A .plat file is six `KEY|value|unit` lines read by position:
 * MEM_PER_NODE (bytes per GPU in practice), NODE_SPEED (FLOP/s per GPU),
 * BANDWIDTH (bytes/s), LATENCY (s), MAX_NODE (GPUs), GPU_PER_NODE.  ParaDL
 * reads BANDWIDTH and LATENCY but never uses them (its alpha and beta are
 * hard-coded); oraclec uses them, for every link.  NODE_SPEED is already an
 * achieved speed, so the efficiencies are 1 and the other constants are
 * those of the built-in abci system. */
#include "frontend/frontend.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { PLAT_KEYS = 6 };

static bool
plat_value(const char *path, int lineno, char *line, const char *want, double *v)
{
	char *bar = strchr(line, '|'), *end;

	if (!bar || (size_t)(bar - line) != strlen(want) || strncmp(line, want, bar - line) != 0) {
		diag_error((Loc){ path, lineno, 1 }, "expected '%s|value|unit'", want);
		return false;
	}
	errno = 0;
	*v = strtod(bar + 1, &end);
	if (errno || end == bar + 1 || (*end != '|' && *end != '\0' && *end != '\n') ||
	    !isfinite(*v) || *v <= 0) {
		diag_error((Loc){ path, lineno, (int)(bar - line) + 2 }, "bad value for %s", want);
		return false;
	}
	return true;
}

System *
paradl_load_plat(const char *path, Arena *a, FileList *files)
{
	static const char *const keys[PLAT_KEYS] = { "MEM_PER_NODE", "NODE_SPEED", "BANDWIDTH",
						     "LATENCY", "MAX_NODE", "GPU_PER_NODE" };
	double v[PLAT_KEYS];
	size_t len;
	char *text = file_read(path, &len, 1 << 20, LOC_NONE), *line, *save = NULL;
	int n = 0;
	System *s;

	if (!text)
		return NULL;
	files_add(files, path);
	for (line = strtok_r(text, "\n", &save); line && n < PLAT_KEYS;
	     line = strtok_r(NULL, "\n", &save)) {
		line[strcspn(line, "\r")] = '\0';
		if (!plat_value(path, n + 1, line, keys[n], &v[n])) {
			free(text);
			return NULL;
		}
		n++;
	}
	free(text);
	if (n < PLAT_KEYS) {
		diag_error((Loc){ path, n + 1, 1 }, "expected '%s|value|unit'", keys[n]);
		return NULL;
	}
	if (!(s = system_load(default_system, a, files)))
		return NULL;
	s->name = path;
	s->source = path;
	s->mem = v[0];
	s->peak[PREC_FP32] = v[1];
	s->eff_conv = s->eff_gemm = 1;
	s->intra_bw = s->nic_bw = v[2];
	s->intra_lat = s->nic_lat = v[3];
	/* check before converting: a double outside int's range does not convert */
	if (v[5] < 1 || v[5] > 1 << 20 || v[5] != floor(v[5])) {
		diag_error((Loc){ path, 6, 1 }, "GPU_PER_NODE must be a positive integer");
		return NULL;
	}
	s->gpus_per_node = (int)v[5];
	if (v[0] > MAX_SYSTEM_BYTES) {
		diag_error((Loc){ path, 1, 1 }, "MEM_PER_NODE is larger than 2^60 bytes");
		return NULL;
	}
	return s;
}
