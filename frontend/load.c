/* load.c -- choose the frontend for a model file.
 *
 * By extension: .onnx is ONNX, .odl is ODL, .net and .net_* (ParaDL's
 * .net_sc, COSMOFLOW.net_256) are ParaDL tables.  Otherwise by content: a
 * file that starts with "Dataset|" is a ParaDL table; a file
 * whose first byte is a protobuf field key of ModelProto that no text file
 * starts with is ONNX -- ir_version (field 1, varint: 0x08), which every
 * writer puts first, or, when a writer left it out, producer_name (0x12),
 * producer_version (0x1a) or graph (0x3a, ':').  A gzip'd file (0x1f
 * 0x8b) is ONNX gzip'd, which the ONNX frontend inflates.  A file that
 * starts with the magic of a format people take for a model (an image, an
 * archive, a checkpoint), or, without an extension that says what it is,
 * with bytes no text file has, is neither, and is refused so, by what it
 * is; anything else is read as ODL, whose parser gives a clear syntax
 * error on a text file that is not. */
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

/* What a file is, by its first n bytes b, when it is not a model oraclec
 * reads: a format by its magic; with `text`, also "a binary file" for a
 * byte no text file has (NUL, a control character but tab, newline,
 * carriage return, form feed); NULL otherwise. */
static const char *
not_a_model(const unsigned char *b, long n, bool text)
{
	static const struct {
		const char *magic;
		size_t len;
		const char *what;
	} kind[] = {
		{ "\x89PNG\r\n\x1a\n", 8, "a PNG image" },
		{ "\xff\xd8\xff", 3, "a JPEG image" },
		{ "GIF8", 4, "a GIF image" },
		{ "%PDF", 4, "a PDF document" },
		{ "PK\x03\x04", 4, "a ZIP archive (torch.save writes one: export the model "
				  "with torch.onnx.export)" },
		{ "\x89HDF\r\n\x1a\n", 8, "an HDF5 file (a Keras .h5 model: convert it to ONNX)" },
		{ "\x80\x02", 2, "a Python pickle (torch.save's legacy format: export the model "
			       "with torch.onnx.export)" },
		{ "\x7f" "ELF", 4, "an executable" },
	};

	for (size_t i = 0; i < sizeof kind / sizeof kind[0]; i++)
		if ((size_t)n >= kind[i].len && memcmp(b, kind[i].magic, kind[i].len) == 0)
			return kind[i].what;
	if (n >= 8 && memcmp(b + 4, "TFL3", 4) == 0)
		return "a TensorFlow Lite model (convert it to ONNX)";
	for (long i = 0; text && i < n; i++)
		if (b[i] == 0 || (b[i] < 0x20 && !strchr("\t\n\r\f", b[i])) || b[i] == 0x7f)
			return "a binary file";
	return NULL;
}

/* Refuses a file that is neither model kind; true when it is one. */
static bool
a_model(const char *path, const unsigned char *b, long n, bool text)
{
	const char *what = not_a_model(b, n, text);

	if (what)
		diag_error((Loc){ path, 0, 0 }, "neither an ONNX model nor an ODL file nor a "
			   "ParaDL table: it is %s", what);
	return !what;
}

Graph *
frontend_load(const char *path, Arena *a, FileList *files, const OnnxOptions *opt)
{
	/* enough bytes to tell text from binary */
	unsigned char b[512];
	long n;
	int c;

	if ((n = head(path, (char *)b, sizeof b)) < 0)
		return NULL;
	c = n ? b[0] : EOF;
	/* a file named so: refused only for another format's magic (else its
	 * frontend says what is wrong with it, an ODL file's bytes at their
	 * columns) */
	if (ends_with(path, ".onnx"))
		return a_model(path, b, n, false) ? onnx_load(path, a, files, opt) : NULL;
	if (ends_with(path, ".odl"))
		return a_model(path, b, n, false) ? dsl_load(path, a, files) : NULL;
	if (paradl_name(path))
		return paradl_load_net(path, a, files);
	if (c == 0x08 || c == 0x12 || c == 0x1a || c == 0x3a ||
	    (n >= 2 && c == 0x1f && b[1] == 0x8b))
		return onnx_load(path, a, files, opt);
	if (n >= (long)sizeof paradl_magic - 1 &&
	    memcmp(b, paradl_magic, sizeof paradl_magic - 1) == 0)
		return paradl_load_net(path, a, files);
	return a_model(path, b, n, true) ? dsl_load(path, a, files) : NULL;
}
