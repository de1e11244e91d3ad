/* load.c -- choose the frontend for a model file.
 *
 * By extension: .onnx is ONNX, .odl is ODL, .net and .net_* (ParaDL's
 * .net_sc, COSMOFLOW.net_256) are ParaDL tables.  Otherwise by content: a
 * file that starts with "Dataset|" is a ParaDL table; a file
 * whose first byte is a protobuf field key of ModelProto that no text file
 * starts with is ONNX -- ir_version (field 1, varint: 0x08), which every
 * writer puts first, or, when a writer left it out, producer_name (0x12),
 * producer_version (0x1a) or graph (0x3a, ':').  Anything else is read as
 * ODL, whose parser gives a clear syntax error on a file that is neither. */
#include "frontend/frontend.h"

#include <stdio.h>
#include <string.h>

static const char paradl_magic[] = "Dataset|";

static bool
ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

static bool
paradl_name(const char *path)
{
	const char *base = strrchr(path, '/'), *dot;

	dot = strrchr(base ? base : path, '.');
	return dot && strncmp(dot, ".net", 4) == 0 && (dot[4] == '\0' || dot[4] == '_');
}

/* The file's first bytes (fewer at its end or when it cannot be read: the
 * frontend then reports why). */
static size_t
head(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "rb");
	size_t got = f ? fread(buf, 1, n, f) : 0;

	if (f)
		fclose(f);
	return got;
}

Graph *
frontend_load(const char *path, Arena *a, FileList *files, const OnnxOptions *opt)
{
	char b[sizeof paradl_magic - 1];
	size_t n;
	int c;

	if (ends_with(path, ".onnx"))
		return onnx_load(path, a, files, opt);
	if (ends_with(path, ".odl"))
		return dsl_load(path, a, files);
	if (paradl_name(path))
		return paradl_load_net(path, a, files);
	n = head(path, b, sizeof b);
	c = n ? (unsigned char)b[0] : EOF;
	if (c == 0x08 || c == 0x12 || c == 0x1a || c == 0x3a)
		return onnx_load(path, a, files, opt);
	if (n == sizeof b && memcmp(b, paradl_magic, n) == 0)
		return paradl_load_net(path, a, files);
	return dsl_load(path, a, files);
}
