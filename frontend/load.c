/* load.c -- choose the frontend for a model file.
 *
 * By extension: .onnx is ONNX, .odl is ODL, .net and .net_* (ParaDL's
 * .net_sc, COSMOFLOW.net_256) are ParaDL tables.  Otherwise by content: a
 * file that starts with "Dataset|" is a ParaDL table; a file
 * whose first byte is a protobuf field key of ModelProto that no text file
 * starts with is ONNX -- ir_version (field 1, varint: 0x08), which every
 * writer puts first, or, when a writer left it out, producer_name (0x12),
 * producer_version (0x1a) or graph (0x3a, ':').  A gzip'd file (0x1f
 * 0x8b) is ONNX gzip'd, which the ONNX frontend inflates.  Anything else is
 * read as ODL, whose parser gives a clear syntax error on a file that is
 * neither. */
#include "frontend/frontend.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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

/* The file's first bytes, fewer at its end; -1 after reporting that the
 * file cannot be read (not a regular file: a FIFO must not block). */
static long
head(const char *path, char *buf, size_t n)
{
	int fd = file_open(path, LOC_NONE);
	size_t got = 0;
	ssize_t r = 1;

	if (fd < 0)
		return -1;
	while (got < n && (r = read(fd, buf + got, n - got)) > 0)
		got += (size_t)r;
	close(fd);
	if (r < 0) {
		diag_error((Loc){ path, 0, 0 }, "cannot read file: %s", strerror(errno));
		return -1;
	}
	return (long)got;
}

Graph *
frontend_load(const char *path, Arena *a, FileList *files, const OnnxOptions *opt)
{
	unsigned char b[sizeof paradl_magic - 1];
	long n;
	int c;

	if (ends_with(path, ".onnx"))
		return onnx_load(path, a, files, opt);
	if (ends_with(path, ".odl"))
		return dsl_load(path, a, files);
	if (paradl_name(path))
		return paradl_load_net(path, a, files);
	if ((n = head(path, (char *)b, sizeof b)) < 0)
		return NULL;
	c = n ? b[0] : EOF;
	if (c == 0x08 || c == 0x12 || c == 0x1a || c == 0x3a || (n >= 2 && c == 0x1f && b[1] == 0x8b))
		return onnx_load(path, a, files, opt);
	if (n >= (long)sizeof paradl_magic - 1 &&
	    memcmp(b, paradl_magic, sizeof paradl_magic - 1) == 0)
		return paradl_load_net(path, a, files);
	return dsl_load(path, a, files);
}
