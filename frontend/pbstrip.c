/* pbstrip.c -- copy an ONNX ModelProto without its bulk weight data.
 *
 * protobuf-c unpacks a message whole, copying every bytes field, so a model
 * with 500 MB of embedded weights would be held twice.  oraclec needs only
 * the weights' dims.  This pass walks the protobuf wire format of the
 * mmap'd file and writes a copy in which the data fields of large
 * initializers (float_data, int32_data, int64_data, raw_data, double_data,
 * uint64_data) are left out; small tensors keep their data, since shape
 * tensors (Reshape targets, pads) are read.  The copy is what gets
 * unpacked; the file is never copied whole.  Malformed wire data is
 * rejected here with a reason. */
#include "frontend/frontend.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Data fields longer than this are dropped (values of shape tensors and
 * other constants oraclec reads are far smaller). */
enum { KEEP_DATA_BYTES = 1 << 16, MAX_NESTING = 64 };

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_I32 = 5 };

/* which message a buffer holds, for the fields that need a closer look */
typedef enum Msg { M_OTHER, M_MODEL, M_GRAPH, M_TENSOR } Msg;

typedef struct Buf {
	uint8_t *p;
	size_t len, cap;
} Buf;

static void
put(Buf *b, const void *p, size_t n)
{
	if (b->cap - b->len < n) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap - b->len < n)
			cap *= 2;
		b->p = xrealloc(b->p, cap);
		b->cap = cap;
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

static void
put_varint(Buf *b, uint64_t v)
{
	uint8_t tmp[10];
	int n = 0;

	do {
		tmp[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	put(b, tmp, n);
}

/* false on a truncated or over-long varint */
static bool
get_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; shift < 64; shift += 7) {
		if (*p == end)
			return false;
		uint8_t c = *(*p)++;
		*v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return true;
	}
	return false;
}

static Msg
child(Msg m, uint64_t field)
{
	if (m == M_MODEL && field == 7)
		return M_GRAPH;   /* ModelProto.graph */
	if (m == M_GRAPH && field == 5)
		return M_TENSOR;  /* GraphProto.initializer */
	return M_OTHER;
}

static bool
bulk(Msg m, uint64_t field)
{
	return m == M_TENSOR && (field == 4 || field == 5 || field == 7 || field == 9 ||
				 field == 10 || field == 11);
}

static const char *
strip(const uint8_t *p, const uint8_t *end, Msg m, int depth, Buf *out)
{
	if (depth > MAX_NESTING)
		return "messages nested too deeply";
	while (p < end) {
		const uint8_t *start = p;
		uint64_t key, len;

		if (!get_varint(&p, end, &key))
			return "truncated field key";
		if ((key >> 3) == 0)
			return "field number 0";
		switch (key & 7) {
		case WT_VARINT:
			if (!get_varint(&p, end, &len))
				return "truncated varint";
			break;
		case WT_I64:
		case WT_I32:
			len = (key & 7) == WT_I64 ? 8 : 4;
			if ((uint64_t)(end - p) < len)
				return "truncated fixed-size field";
			p += len;
			break;
		case WT_LEN:
			if (!get_varint(&p, end, &len) || len > (uint64_t)(end - p))
				return "truncated length-delimited field";
			if (bulk(m, key >> 3) && len > KEEP_DATA_BYTES) {
				p += len;
				continue; /* dropped */
			}
			if (child(m, key >> 3) != M_OTHER) {
				Buf sub = { 0 };
				const char *err = strip(p, p + len, child(m, key >> 3), depth + 1,
							&sub);
				if (err) {
					free(sub.p);
					return err;
				}
				put_varint(out, key);
				put_varint(out, sub.len);
				if (sub.len)
					put(out, sub.p, sub.len);
				free(sub.p);
				p += len;
				continue;
			}
			p += len;
			break;
		default:
			return "unsupported wire type (groups)";
		}
		put(out, start, (size_t)(p - start));
	}
	return NULL;
}

uint8_t *
onnx_strip(const uint8_t *buf, size_t len, size_t *outlen, const char **err)
{
	Buf out = { 0 };

	*err = strip(buf, buf + len, M_MODEL, 0, &out);
	if (*err) {
		free(out.p);
		return NULL;
	}
	*outlen = out.len;
	if (!out.p)
		out.p = xcalloc(1, 1);
	return out.p;
}
