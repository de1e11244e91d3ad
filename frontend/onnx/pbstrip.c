/* pbstrip.c -- copy an ONNX ModelProto without its bulk weight data.
 *
 * protobuf-c unpacks a message whole, copying every bytes field, so a model
 * with 500 MB of embedded weights would be held twice.  oraclec needs only
 * the weights' dims.  This pass walks the protobuf wire format of the
 * mmap'd file and writes a copy in which the data of large tensors
 * (float_data, int32_data, int64_data, raw_data, double_data, uint64_data)
 * is left out; small tensors keep their data, since shape tensors (Reshape
 * targets, pads) are read.  The copy is what gets unpacked; the file is
 * never copied whole, and the pages of dropped data are never touched.
 *
 * The walk follows every message-typed field of the ONNX schema (the table
 * in child() below), so it also sees the tensors of Constant nodes and of
 * subgraphs, and it bounds how deeply messages nest: protobuf-c unpacks
 * nested messages by recursion, with no limit of its own, and a 2 MB file
 * of TypeProto sequences nested 200,000 deep would overflow the C stack.
 * Malformed wire data is rejected here with a reason. */
#include "frontend/frontend.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Tensors whose data fields together are longer than this lose them
 * (values of shape tensors and other constants oraclec reads are far
 * smaller).  Messages nest at most MAX_NESTING deep, the recursion limit
 * of Google's own protobuf parsers: a subgraph costs three levels (graph,
 * node, attribute), a sequence type two. */
enum { KEEP_DATA_BYTES = 1 << 16, MAX_NESTING = 100 };

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_I32 = 5 };

/* the messages that hold other messages; M_LEAF: copied as they are */
typedef enum Msg {
	M_LEAF,
	M_MODEL,
	M_GRAPH,
	M_NODE,
	M_ATTR,
	M_TENSOR,
	M_SPARSE,
	M_VALUEINFO,
	M_TYPE,
	M_TYPE_ELEM,  /* TypeProto.Sequence and .Optional: elem_type = 1 */
	M_TYPE_MAP,   /* TypeProto.Map: value_type = 2 */
	M_TRAINING,
	M_FUNCTION,
} Msg;

typedef struct Buf {
	uint8_t *p;
	size_t len, cap;
} Buf;

static void
reserve(Buf *b, size_t n)
{
	size_t cap = b->cap ? b->cap : 4096;

	if (b->cap - b->len >= n)
		return;
	while (cap - b->len < n)
		cap *= 2;
	b->p = xrealloc(b->p, cap);
	b->cap = cap;
}

static void
put(Buf *b, const void *p, size_t n)
{
	reserve(b, n);
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

/* The message held by field `f` of message `m`, by onnx.proto (IR 8). */
static Msg
child(Msg m, uint64_t f)
{
	switch (m) {
	case M_MODEL:
		return f == 7 ? M_GRAPH : f == 20 ? M_TRAINING : f == 25 ? M_FUNCTION : M_LEAF;
	case M_GRAPH:
		return f == 1 ? M_NODE : f == 5 ? M_TENSOR : f == 15 ? M_SPARSE
		     : f == 11 || f == 12 || f == 13 ? M_VALUEINFO : M_LEAF;
	case M_NODE:
		return f == 5 ? M_ATTR : M_LEAF;
	case M_ATTR:
		return f == 5 || f == 10 ? M_TENSOR : f == 6 || f == 11 ? M_GRAPH
		     : f == 22 || f == 23 ? M_SPARSE : f == 14 || f == 15 ? M_TYPE : M_LEAF;
	case M_SPARSE:
		return f == 1 || f == 2 ? M_TENSOR : M_LEAF;
	case M_VALUEINFO:
		return f == 2 ? M_TYPE : M_LEAF;
	case M_TYPE: /* tensor_type and sparse_tensor_type hold shapes: leaves */
		return f == 4 || f == 9 ? M_TYPE_ELEM : f == 5 ? M_TYPE_MAP : M_LEAF;
	case M_TYPE_ELEM:
		return f == 1 ? M_TYPE : M_LEAF;
	case M_TYPE_MAP:
		return f == 2 ? M_TYPE : M_LEAF;
	case M_TRAINING:
		return f == 1 || f == 2 ? M_GRAPH : M_LEAF;
	case M_FUNCTION:
		return f == 7 ? M_NODE : M_LEAF;
	default:
		return M_LEAF;
	}
}

/* TensorProto's data fields, packed or not */
static bool
bulk(uint64_t f)
{
	return f == 4 || f == 5 || f == 7 || f == 9 || f == 10 || f == 11;
}

/* One field: its key, and its payload [*pay, *next); a reason if broken. */
static const char *
field(const uint8_t **p, const uint8_t *end, uint64_t *key, const uint8_t **pay)
{
	uint64_t len;

	if (!get_varint(p, end, key))
		return "truncated field key";
	if ((*key >> 3) == 0)
		return "field number 0";
	switch (*key & 7) {
	case WT_VARINT:
		*pay = *p;
		if (!get_varint(p, end, &len))
			return "truncated varint";
		return NULL;
	case WT_I64:
	case WT_I32:
		len = (*key & 7) == WT_I64 ? 8 : 4;
		if ((uint64_t)(end - *p) < len)
			return "truncated fixed-size field";
		break;
	case WT_LEN:
		if (!get_varint(p, end, &len) || len > (uint64_t)(end - *p))
			return "truncated length-delimited field";
		break;
	default:
		return "unsupported wire type (groups)";
	}
	*pay = *p;
	*p += len;
	return NULL;
}

/* Bytes of a TensorProto's data fields, all of them (a writer may repeat
 * float_data element by element instead of packing it); 0 if malformed,
 * which strip() then reports. */
static uint64_t
data_bytes(const uint8_t *p, const uint8_t *end)
{
	uint64_t total = 0, key;
	const uint8_t *pay;

	while (p < end) {
		if (field(&p, end, &key, &pay))
			return 0;
		if (bulk(key >> 3))
			total += (uint64_t)(p - pay);
	}
	return total;
}

static const char *strip(const uint8_t *p, const uint8_t *end, Msg m, int depth, Buf *out);

/* ---- fingerprints of matrices ---------------------------------------------
 *
 * torch.onnx.export folds the transpose of a tied output layer's weight
 * (GPT-2's lm_head, the embedding table it shares) into an initializer
 * of its own, so the file holds the table twice.  The frontend tells
 * such a copy by its values: every float matrix (rank 2) with raw data
 * gets a fingerprint of the multiset of its elements, which a transpose
 * keeps, as an external_data entry ONNX_FINGERPRINT (frontend.h) of the
 * copy; a matrix whose elements are all equal gets none (the fresh
 * ones and zeros the exporter merges, which tie nothing). */

/* one element's bits, mixed (splitmix64's finalizer) */
static uint64_t
mix(uint64_t x)
{
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
	return x ^ (x >> 31);
}

/* The fingerprint of n elements of size es at p: the sum of their mixed
 * bits; 0 when they are all equal. */
static uint64_t
fingerprint(const uint8_t *p, size_t n, size_t es)
{
	uint64_t sum = 0, first = 0;
	bool differ = false;

	for (size_t i = 0; i < n; i++) {
		uint64_t x = 0;
		memcpy(&x, p + i * es, es); /* the little-endian bits, zero-extended */
		if (i == 0)
			first = x;
		differ |= x != first;
		sum += mix(x);
	}
	return differ && sum ? sum : 0;
}

/* A TensorProto's fingerprint when it is a float matrix with raw data
 * (fields 1 dims, 2 data_type, 9 raw_data), else 0. */
static uint64_t
matrix_fingerprint(const uint8_t *p, const uint8_t *end)
{
	uint64_t key, v, dt = 0, dims = 0;
	const uint8_t *pay, *raw = NULL;
	size_t rawn = 0, es;

	while (p < end) {
		if (field(&p, end, &key, &pay))
			return 0;
		if (key == (1 << 3 | WT_VARINT)) {
			dims++;
		} else if (key == (1 << 3 | WT_LEN)) { /* packed dims */
			for (const uint8_t *q = pay; q < p && get_varint(&q, p, &v);)
				dims++;
		} else if (key == (2 << 3 | WT_VARINT)) {
			get_varint(&pay, p, &dt);
		} else if (key == (9 << 3 | WT_LEN)) {
			raw = pay, rawn = (size_t)(p - pay);
		}
	}
	/* FLOAT 1, DOUBLE 11, FLOAT16 10, BFLOAT16 16 (onnx.proto) */
	es = dt == 1 ? 4 : dt == 11 ? 8 : dt == 10 || dt == 16 ? 2 : 0;
	if (dims != 2 || !raw || !es || rawn % es)
		return 0;
	return fingerprint(raw, rawn / es, es);
}

/* Appends the external_data entry (field 13) {ONNX_FINGERPRINT, hex}. */
static void
put_fingerprint(Buf *out, uint64_t fp)
{
	static const char hex[] = "0123456789abcdef";
	size_t klen = strlen(ONNX_FINGERPRINT);
	char v[16];

	for (int i = 0; i < 16; i++)
		v[i] = hex[(fp >> (60 - 4 * i)) & 15];
	put_varint(out, 13 << 3 | WT_LEN);
	put_varint(out, 2 + klen + 2 + sizeof v);
	put_varint(out, 1 << 3 | WT_LEN);
	put_varint(out, klen);
	put(out, ONNX_FINGERPRINT, klen);
	put_varint(out, 2 << 3 | WT_LEN);
	put_varint(out, sizeof v);
	put(out, v, sizeof v);
}

/* Field `key` holding a message of kind `sub` in [p, end), stripped.  It is
 * written in place after a 5-byte gap for its length (protobuf-c reads
 * lengths of at most 5 bytes, and the copy is never longer than the
 * original), then moved down to sit right after its length: no buffer per
 * submessage, and a graph of a million nodes is copied once. */
static const char *
sub_message(const uint8_t *p, const uint8_t *end, uint64_t key, Msg sub, int depth, Buf *out)
{
	const char *err;
	size_t at, n;

	put_varint(out, key);
	reserve(out, 5);
	at = out->len += 5;
	if ((err = strip(p, end, sub, depth + 1, out)))
		return err;
	n = out->len - at;
	if (n > UINT32_MAX)
		return "message longer than 4 GiB";
	out->len = at - 5;
	put_varint(out, n);
	memmove(out->p + out->len, out->p + at, n);
	out->len += n;
	return NULL;
}

static const char *
strip(const uint8_t *p, const uint8_t *end, Msg m, int depth, Buf *out)
{
	bool drop = m == M_TENSOR && data_bytes(p, end) > KEEP_DATA_BYTES;
	uint64_t fp = m == M_TENSOR ? matrix_fingerprint(p, end) : 0;

	if (depth > MAX_NESTING)
		return "messages nested too deeply";
	while (p < end) {
		const uint8_t *start = p, *pay;
		uint64_t key;
		const char *err = field(&p, end, &key, &pay);
		Msg sub;

		if (err)
			return err;
		if (drop && bulk(key >> 3))
			continue;
		sub = (key & 7) == WT_LEN ? child(m, key >> 3) : M_LEAF;
		if (sub == M_LEAF) {
			put(out, start, (size_t)(p - start));
			continue;
		}
		if ((err = sub_message(pay, p, key, sub, depth, out)))
			return err;
	}
	if (fp)
		put_fingerprint(out, fp);
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
