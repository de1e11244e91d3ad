/* load.c -- choose the frontend for a model file.
 *
 * By extension: .onnx is ONNX, .odl is ODL.  Otherwise by content: a file
 * whose first byte is a protobuf field key of ModelProto that no text file
 * starts with is ONNX -- ir_version (field 1, varint: 0x08), which every
 * writer puts first, or, when a writer left it out, producer_name (0x12),
 * producer_version (0x1a) or graph (0x3a, ':').  Anything else is read as
 * ODL, whose parser gives a clear syntax error on a file that is neither. */
#include "frontend/frontend.h"

#include <stdio.h>
#include <string.h>

static bool
ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

static bool
looks_like_onnx(const char *path)
{
	FILE *f = fopen(path, "rb");
	int c = f ? fgetc(f) : EOF;

	if (f)
		fclose(f);
	return c == 0x08 || c == 0x12 || c == 0x1a || c == 0x3a;
}

Graph *
frontend_load(const char *path, Arena *a, FileList *files, const OnnxOptions *opt)
{
	if (ends_with(path, ".onnx") || (!ends_with(path, ".odl") && looks_like_onnx(path)))
		return onnx_load(path, a, files, opt);
	return dsl_load(path, a, files);
}
