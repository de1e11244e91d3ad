/* chaingen.c -- write a long straight-line ODL model, for the benchmarks.
 *
 *     chaingen N [H]
 *
 * prints to stdout a model "chainN" of exactly N layers on a 64xHxH input
 * (H defaults to 32): residual units of seven layers,
 *
 *     conv 3x3, batchnorm, relu, conv 3x3, batchnorm, add (shortcut), relu
 *
 * every conv with 64 filters, pad 1 and no bias, so every tensor stays
 * 64xHxH.  The last N mod 7 layers are relus.  Every statement names a new
 * tensor (t1, t2, ...), so the file is one straight line of N statements
 * that bench/run.sh can time without repeat or block expansion in the way.
 * Exit status: 0, or 2 on a bad argument, 1 on a write error. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

static long
arg(const char *s, long lo, long hi, const char *what)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi) {
		fprintf(stderr, "chaingen: bad %s '%s' (expected %ld to %ld)\n", what, s, lo, hi);
		exit(2);
	}
	return v;
}

int
main(int argc, char **argv)
{
	long n, h = 32, unit = 0;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: chaingen N [H]\n"
				"writes an ODL model of exactly N layers to stdout\n");
		return 2;
	}
	n = arg(argv[1], 1, 1L << 22, "layer count");
	if (argc == 3)
		h = arg(argv[2], 1, 4096, "height");
	printf("// chain%ld -- %ld layers, written by bench/chaingen\n", n, n);
	printf("model chain%ld {\n", n);
	printf("    input t0: 64x%ldx%ld;\n", h, h);
	for (long i = 1; i <= n; i++) {
		long k = (i - 1) % 7;

		if (k == 0)
			unit = i - 1; /* the unit's input: its shortcut */
		if (i > n - n % 7) {
			printf("    t%ld = relu(t%ld);\n", i, i - 1);
			continue;
		}
		switch (k) {
		case 0:
		case 3:
			printf("    t%ld = conv(t%ld, 64, kernel=3, pad=1, bias=false);\n", i,
			       i - 1);
			break;
		case 1:
		case 4:
			printf("    t%ld = batchnorm(t%ld);\n", i, i - 1);
			break;
		case 5:
			printf("    t%ld = add(t%ld, t%ld);\n", i, i - 1, unit);
			break;
		default:
			printf("    t%ld = relu(t%ld);\n", i, i - 1);
			break;
		}
	}
	printf("}\n");
	if (fflush(stdout) != 0 || ferror(stdout)) {
		perror("chaingen: write error");
		return 1;
	}
	return 0;
}
