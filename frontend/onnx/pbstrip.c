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

/* ---- fingerprints of matrices ---------------------------------------------
 *
 * torch.onnx.export folds the transpose of a tied output layer's weight
 * (GPT-2's lm_head, the embedding table it shares) into an initializer
 * of its own, so the file holds the table twice.  The frontend tells
 * such a copy by its values: an embedding table (an initializer a Gather
 * reads as its data) and every float matrix (rank 2) of as many elements
 * as a table gets a fingerprint of the multiset of its elements, which a
 * transpose keeps, as an external_data entry ONNX_FINGERPRINT
 * (frontend.h) of the copy; a matrix whose elements are all equal gets
 * none (the fresh ones and zeros the exporter merges tie nothing).  The
 * other weights' pages are never read: the tables are found first, from
 * the nodes' inputs and the initializers' dims. */

enum { MAX_TABLES = 64 };

/* The embedding tables of the top graph: their names and elements. */
typedef struct Tables {
	const uint8_t *name[MAX_TABLES];
	size_t len[MAX_TABLES];
	uint64_t elems[MAX_TABLES]; /* 0 until the initializer is seen */
	int n;
} Tables;

/* one element's bits, mixed (splitmix64's finalizer) */
static uint64_t
mix(uint64_t x)
{
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
	return x ^ (x >> 31);
}

/* The fingerprint of n elements of T at p: the sum of their mixed bits
 * (little-endian, zero-extended), 0 when they are all equal; one loop
 * per element size, so each load is one instruction. */
#define FINGERPRINT(T)                                                          \
	static uint64_t fingerprint_##T(const uint8_t *p, size_t n)             \
	{                                                                       \
		uint64_t sum = 0, differ = 0;                                   \
		T first, x;                                                     \
		memcpy(&first, p, sizeof first);                                \
		for (size_t i = 0; i < n; i++) {                                \
			memcpy(&x, p + i * sizeof x, sizeof x);                 \
			differ |= x ^ first;                                    \
			sum += mix(x);                                          \
		}                                                               \
		return differ ? sum : 0;                                        \
	}
FINGERPRINT(uint16_t)
FINGERPRINT(uint32_t)
FINGERPRINT(uint64_t)

static uint64_t
fingerprint(const uint8_t *p, size_t n, size_t es)
{
	if (n == 0)
		return 0;
	return es == 2 ? fingerprint_uint16_t(p, n)
	     : es == 4 ? fingerprint_uint32_t(p, n) : fingerprint_uint64_t(p, n);
}

/* What a TensorProto says of itself without its data read: its name
 * (field 8), element count and rank (dims, field 1, packed or not), data
 * type (2) and raw data (9); false if malformed. */
typedef struct TensorHead {
	const uint8_t *name, *raw;
	size_t namelen, rawn;
	uint64_t dims, elems, dt;
} TensorHead;

static bool
tensor_head(const uint8_t *p, const uint8_t *end, TensorHead *h)
{
	uint64_t key, v;
	const uint8_t *pay;

	*h = (TensorHead){ .elems = 1 };
	while (p < end) {
		if (field(&p, end, &key, &pay))
			return false;
		if (key == (1 << 3 | WT_VARINT) || key == (1 << 3 | WT_LEN)) {
			const uint8_t *q = pay;
			while ((key & 7) == WT_LEN ? q < p : q == pay) {
				if (!get_varint(&q, p, &v))
					return false;
				h->dims++;
				h->elems = v && h->elems > UINT64_MAX / v ? UINT64_MAX
									   : h->elems * v;
			}
		} else if (key == (2 << 3 | WT_VARINT)) {
			get_varint(&pay, p, &h->dt);
		} else if (key == (8 << 3 | WT_LEN)) {
			h->name = pay, h->namelen = (size_t)(p - pay);
		} else if (key == (9 << 3 | WT_LEN)) {
			h->raw = pay, h->rawn = (size_t)(p - pay);
		}
	}
	return true;
}

/* The table named as [name, name + len), -1 if none. */
static int
table_of(const Tables *t, const uint8_t *name, size_t len)
{
	for (int i = 0; name && i < t->n; i++)
		if (t->len[i] == len && memcmp(t->name[i], name, len) == 0)
			return i;
	return -1;
}

/* The tables of the graph in [p, end): the first input of each Gather
 * node (field 1: NodeProto, its input 1 and op_type 4), then each one's
 * elements from its initializer (field 5). */
static void
find_tables(const uint8_t *p, const uint8_t *end, Tables *t)
{
	const uint8_t *q = p, *pay;
	uint64_t key;

	while (q < end && !field(&q, end, &key, &pay)) {
		const uint8_t *in = NULL, *np = pay, *npay;
		size_t inlen = 0;
		bool gather = false;
		if (key != (1 << 3 | WT_LEN))
			continue;
		while (np < q && !field(&np, q, &key, &npay)) {
			if (key == (1 << 3 | WT_LEN) && !in)
				in = npay, inlen = (size_t)(np - npay);
			else if (key == (4 << 3 | WT_LEN))
				gather = np - npay == 6 && memcmp(npay, "Gather", 6) == 0;
		}
		if (gather && in && t->n < MAX_TABLES && table_of(t, in, inlen) < 0)
			t->name[t->n] = in, t->len[t->n++] = inlen;
	}
	q = p;
	while (q < end && !field(&q, end, &key, &pay)) {
		TensorHead h;
		int i;
		if (key == (5 << 3 | WT_LEN) && tensor_head(pay, q, &h) &&
		    (i = table_of(t, h.name, h.namelen)) >= 0)
			t->elems[i] = h.elems;
	}
}

/* The fingerprint of the TensorProto in [p, end) when it is a float
 * matrix with raw data, a table or of a table's elements; else 0. */
static uint64_t
matrix_fingerprint(const uint8_t *p, const uint8_t *end, const Tables *t)
{
	TensorHead h;
	size_t es;
	bool candidate;

	if (!t->n || !tensor_head(p, end, &h) || h.dims != 2 || !h.raw)
		return 0;
	candidate = table_of(t, h.name, h.namelen) >= 0;
	for (int i = 0; !candidate && i < t->n; i++)
		candidate = t->elems[i] == h.elems;
	/* FLOAT 1, DOUBLE 11, FLOAT16 10, BFLOAT16 16 (onnx.proto) */
	es = h.dt == 1 ? 4 : h.dt == 11 ? 8 : h.dt == 10 || h.dt == 16 ? 2 : 0;
	if (!candidate || !es || h.rawn % es)
		return 0;
	return fingerprint(h.raw, h.rawn / es, es);
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
static const char *strip(const uint8_t *p, const uint8_t *end, Msg m, int depth, const Tables *t,
			 Buf *out);

static const char *
sub_message(const uint8_t *p, const uint8_t *end, uint64_t key, Msg sub, int depth,
	    const Tables *t, Buf *out)
{
	const char *err;
	size_t at, n;

	put_varint(out, key);
	reserve(out, 5);
	at = out->len += 5;
	if ((err = strip(p, end, sub, depth + 1, t, out)))
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
strip(const uint8_t *p, const uint8_t *end, Msg m, int depth, const Tables *t, Buf *out)
{
	bool drop = m == M_TENSOR && data_bytes(p, end) > KEEP_DATA_BYTES;
	uint64_t fp = m == M_TENSOR ? matrix_fingerprint(p, end, t) : 0;

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
		if ((err = sub_message(pay, p, key, sub, depth, t, out)))
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
	Tables t = { .n = 0 };
	const uint8_t *p = buf, *pay;
	uint64_t key;

	/* the top graph's tables, before anything is copied */
	while (p < buf + len && !field(&p, buf + len, &key, &pay))
		if (key == (7 << 3 | WT_LEN)) {
			find_tables(pay, p, &t);
			break;
		}
	*err = strip(buf, buf + len, M_MODEL, 0, &t, &out);
	if (*err) {
		free(out.p);
		return NULL;
	}
	*outlen = out.len;
	if (!out.p)
		out.p = xcalloc(1, 1);
	return out.p;
}
