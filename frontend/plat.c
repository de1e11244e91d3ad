/* plat.c -- ParaDL's platform files (.plat), so the same inputs run
 * through both tools.
 *
 * A .plat file is six `KEY|value|unit` lines read by position:
 * MEM_PER_NODE (bytes per GPU in practice), NODE_SPEED (FLOP/s per GPU),
 * BANDWIDTH (bytes/s), LATENCY (s), MAX_NODE (GPUs), GPU_PER_NODE.  ParaDL
 * reads BANDWIDTH and LATENCY but never uses them (its alpha and beta are
 * hard-coded); oraclec uses them, for every link.  NODE_SPEED is already an
 * achieved speed, so the efficiencies are 1 and the other constants are
 * those of the built-in abci system, which system.c passes in. */
#include "frontend/frontend.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { PLAT_KEYS = 6 };

/* A .plat line: its key, and the range of its value when `text` (which
 * says it for messages) is set; docs/limits.md, "Numbers". */
typedef struct PlatKey {
	const char *name;
	double lo, hi;
	const char *text;
} PlatKey;

static const PlatKey plat_keys[PLAT_KEYS] = {
	{ "MEM_PER_NODE", 1, MAX_SYSTEM_BYTES, "1 to 2^60 bytes" },
	{ "NODE_SPEED", SYS_MIN_RATE, SYS_MAX_RATE, "1 to 1e21 FLOP/s" },
	{ "BANDWIDTH", SYS_MIN_RATE, SYS_MAX_RATE, "1 to 1e21 bytes/s" },
	{ "LATENCY", SYS_MIN_SECONDS, SYS_MAX_SECONDS, "1e-12 to 1000 s" },
	{ "MAX_NODE", 0, 0, NULL },      /* not used: any positive number */
	{ "GPU_PER_NODE", 0, 0, NULL },  /* a whole number: checked below */
};

/* Reads the value of line `lineno`, which must be key k's; false after
 * an error naming the line. */
static bool
plat_value(const char *path, int lineno, char *line, const PlatKey *k, double *v)
{
	const char *want = k->name;
	char *bar = strchr(line, '|'), *end;
	Loc at;

	if (!bar || (size_t)(bar - line) != strlen(want) || strncmp(line, want, bar - line) != 0) {
		diag_error((Loc){ path, lineno, 1 }, "expected '%s|value|unit'", want);
		return false;
	}
	at = (Loc){ path, lineno, (int)(bar - line) + 2 };
	errno = 0;
	*v = strtod(bar + 1, &end);
	if (errno || end == bar + 1 || (*end != '|' && *end != '\0' && *end != '\n') ||
	    !isfinite(*v) || *v <= 0) {
		diag_error(at, "bad value for %s", want);
		return false;
	}
	if (k->text && (*v < k->lo || *v > k->hi)) {
		diag_error(at, "%s %g is out of range (%s)", want, *v, k->text);
		return false;
	}
	return true;
}

bool
plat_read(const char *path, FileList *files, System *s)
{
	const PlatKey *keys = plat_keys;
	double v[PLAT_KEYS];
	size_t len;
	char *text = file_read(path, &len, 1 << 20, LOC_NONE), *line, *save = NULL;
	int n = 0;

	if (!text)
		return false;
	files_add(files, path);
	for (line = strtok_r(text, "\n", &save); line && n < PLAT_KEYS;
	     line = strtok_r(NULL, "\n", &save)) {
		line[strcspn(line, "\r")] = '\0';
		if (!plat_value(path, n + 1, line, &keys[n], &v[n])) {
			free(text);
			return false;
		}
		n++;
	}
	free(text);
	if (n < PLAT_KEYS) {
		diag_error((Loc){ path, n + 1, 1 }, "expected '%s|value|unit'", keys[n].name);
		return false;
	}
	s->name = path;
	s->source = path;
	s->mem = v[0];
	s->peak[DT_FP32] = v[1];
	s->eff_conv = s->eff_gemm = 1;
	s->intra_bw = s->nic_bw = v[2];
	s->intra_lat = s->nic_lat = v[3];
	/* check before converting: a double outside int's range does not convert */
	if (v[5] < 1 || v[5] > 1 << 20 || v[5] != floor(v[5])) {
		diag_error((Loc){ path, 6, 1 }, "GPU_PER_NODE must be a positive integer");
		return false;
	}
	s->gpus_per_node = (int)v[5];
	return true;
}
