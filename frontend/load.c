/* load.c -- choose the frontend for a model file.
 *
 * By extension: .onnx is ONNX, .odl is ODL.  Otherwise by content: a file
 * whose first byte is a protobuf field key of ModelProto (ir_version,
 * field 1, varint: 0x08) is ONNX, anything else is read as ODL, whose
 * parser gives a clear syntax error on a file that is neither. */
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
	return c == 0x08;
}

Graph *
frontend_load(const char *path, Arena *a, FileList *files, const OnnxOptions *opt)
{
	if (ends_with(path, ".onnx") || (!ends_with(path, ".odl") && looks_like_onnx(path)))
		return onnx_load(path, a, files, opt);
	return dsl_load(path, a, files);
}
