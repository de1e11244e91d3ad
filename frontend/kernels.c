/* kernels.c -- a kernel table (docs/kernel-table.md): measured kernels
 * keyed by shape, as python3 -m oraclec.probe --model writes them.
 *
 *   # device: cpu, AMD EPYC 7B13, 2 cores          (provenance, kept)
 *   class,precision,layout,n,shape,fwd_s,bwd_data_s,bwd_weight_s,spread,repeats,kernel
 *   conv,fp32,NCHW,8,c=64 h=56 w=56 k=64 r=3 s=3 stride=1x1 pad=1x1x1x1 groups=1 \
 *     dilation=1x1,0.0121,0.0189,0.0174,0.021,5,aten::mkldnn_convolution
 *   (one line: the \ and the line break are this comment's)
 *
 * Lines that start with '#' are comments: the provenance, kept as the
 * table's notes.  The header comes first, exactly; then one row per key
 * and batch, fields as RFC 4180 quotes them (the kernel names hold
 * commas).  Every error names its file, line and column; a table with
 * any error is no table.  The rows are kept sorted by key then N, so a
 * key's rows are its measurements along N (model/kerneltable.c looks
 * them up). */
#include "frontend/frontend.h"
#include "ir/kernels.h"
#include "util/csv.h"
#include "util/escape.h"
#include "util/similar.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char header[] =
	"class,precision,layout,n,shape,fwd_s,bwd_data_s,bwd_weight_s,spread,repeats,kernel";
enum { C_CLASS, C_PREC, C_LAYOUT, C_N, C_SHAPE, C_FWD, C_BWD_DATA, C_BWD_WEIGHT, C_SPREAD,
       C_REPEATS, C_KERNEL, NCOL };
static const char *const colname[NCOL] = { "class", "precision", "layout", "n", "shape", "fwd_s",
					   "bwd_data_s", "bwd_weight_s", "spread", "repeats",
					   "kernel" };

/* Bounds (docs/limits.md): rows, a batch, a kernel's time (a nanosecond
 * to 11.6 days a call, as MAX_SAMPLE_SECONDS), a spread, repeats, a name. */
enum { MAX_KERNEL_ROWS = 1 << 20, MAX_FIELD = 4096 };
#define MAX_KERNEL_N 2147483647.0
#define MIN_KERNEL_SECONDS 1e-9
#define MAX_SPREAD 100.0
#define MAX_REPEATS 1e6

typedef struct Reader {
	const char *path;
	int line;
	Arena *a;
} Reader;

static Loc
at(const Reader *r, int col)
{
	return (Loc){ r->path, r->line, col };
}

/* A field's text for a message: escaped, cut. */
static char *
shown(const char *s)
{
	return esc_text_cut(s, strlen(s), NAME_SHOWN);
}

static void
bad_value(const Reader *r, int col, const char *what, const char *s, const char *why)
{
	char *t = shown(s);

	diag_error(at(r, col), "%s '%s' %s", what, t, why);
	free(t);
}

/* A whole number in [lo, hi]. */
static bool
integer(const Reader *r, int col, const char *what, const char *s, double lo, double hi,
	int64_t *v)
{
	double x;
	char why[96];

	if (!csv_decimal(s, &x) || x != floor(x) || x < lo || x > hi || strpbrk(s, ".eE")) {
		snprintf(why, sizeof why, "is not a whole number from %.0f to %.0f", lo, hi);
		bad_value(r, col, what, s, why);
		return false;
	}
	*v = (int64_t)x;
	return true;
}

/* Seconds a call, empty for none where `optional`. */
static bool
seconds(const Reader *r, int col, const char *what, const char *s, bool optional, double *v)
{
	*v = NAN;
	if (!s[strspn(s, " \t")]) {
		if (optional)
			return true;
		diag_error(at(r, col), "%s is empty (the forward's seconds a call)", what);
		return false;
	}
	if (!csv_decimal(s, v)) {
		bad_value(r, col, what, s, "is not a decimal number of seconds");
		return false;
	}
	if (*v < MIN_KERNEL_SECONDS || *v > MAX_SAMPLE_SECONDS) {
		bad_value(r, col, what, s, "is not a time from 1e-9 to 1e6 seconds");
		return false;
	}
	return true;
}

static const char *
op_of(int i)
{
	return i < OP_COUNT ? op_name((OpKind)i) : NULL;
}

/* The shape's items ("c=64 h=56 ... stride=1x1") into k by the class's
 * schema: each item once, in any order, none unknown. */
static bool
shape(const Reader *r, int col, const char *text, KernelKey *k)
{
	const KernelItem *items = NULL;
	int n = 0, start[KEY_DIMS], nd = 0;
	bool seen[KEY_DIMS] = { false };
	const char *p = text;

	/* the op first, wherever it is: it picks the schema */
	if (k->cls == KC_ELEMENTWISE || k->cls == KC_NORM || k->cls == KC_POOL) {
		const char *o = strstr(text, "op=");
		char name[40];
		size_t len;
		while (o && o != text && o[-1] != ' ')
			o = strstr(o + 1, "op=");
		if (!o) {
			diag_error(at(r, col), "shape: no op= item (the operator the %s kernel "
				   "ran)", kernel_class_name(k->cls));
			return false;
		}
		len = strcspn(o + 3, " ");
		snprintf(name, sizeof name, "%.*s",
			 (int)(len < sizeof name ? len : sizeof name - 1), o + 3);
		k->op = op_lookup(name);
		if (k->op < 0 || kernel_op_class(k->op) != (int)k->cls) {
			int oc = k->op >= 0 ? kernel_op_class(k->op) : -1;
			const char *near = k->op < 0 ? similar_name(name, op_of) : NULL;
			char *t = esc_text_cut(o + 3, len, NAME_SHOWN);
			const char *why = oc == KC_NORM ? " (its class is norm)"
					  : oc == KC_POOL ? " (its class is pool)"
					  : oc >= 0 ? " (its class is elementwise)"
					  : k->op >= 0 ? " (it has no key)" : "";
			diag_error(at(r, col + (int)(o - text) + 3),
				   "shape: op '%s' has no %s key%s%s%s%s", t,
				   kernel_class_name(k->cls), near ? "; did you mean '" : "",
				   near ? near : "", near ? "'?" : "", why);
			free(t);
			return false;
		}
	}
	items = kernel_schema(k->cls, k->op, &n);
	for (int j = 0; j < n; j++)
		start[j] = nd, nd += items[j].arity;
	k->nd = nd;
	while (*p) {
		const char *eq, *end = p + strcspn(p, " ");
		int c = col + (int)(p - text), j;
		if (p == end) {
			diag_error(at(r, c), "shape: two spaces (items are separated by one)");
			return false;
		}
		eq = memchr(p, '=', (size_t)(end - p));
		if (!eq) {
			char *t = esc_text_cut(p, (size_t)(end - p), NAME_SHOWN);
			diag_error(at(r, c), "shape: '%s' is not name=value", t);
			free(t);
			return false;
		}
		for (j = 0; j < n; j++)
			if (strlen(items[j].name) == (size_t)(eq - p) &&
			    memcmp(items[j].name, p, (size_t)(eq - p)) == 0)
				break;
		if (eq - p == 2 && memcmp(p, "op", 2) == 0 && k->op >= 0) {
			/* read above */
		} else if (j == n) {
			char *t = esc_text_cut(p, (size_t)(eq - p), NAME_SHOWN);
			diag_error(at(r, c), "shape: '%s' is not an item of a %s key (docs/kernel-"
				   "table.md)", t, kernel_class_name(k->cls));
			free(t);
			return false;
		} else if (seen[j]) {
			diag_error(at(r, c), "shape: '%s' given twice", items[j].name);
			return false;
		} else {
			const char *v = eq + 1;
			seen[j] = true;
			for (int i = 0; i < items[j].arity; i++) {
				char *stop;
				bool zero_ok = strcmp(items[j].name, "pad") == 0 ||
					       strcmp(items[j].name, "ceil") == 0;
				long long x = 0;
				if (*v >= '0' && *v <= '9')
					x = strtoll(v, &stop, 10);
				else
					stop = (char *)v;
				if (stop == v || stop - v > 13 || x > (long long)MAX_DIM ||
				    (!zero_ok && x < 1) ||
				    (strcmp(items[j].name, "ceil") == 0 && x > 1) ||
				    (i + 1 < items[j].arity ? *stop != 'x' : stop != end)) {
					bool ceil = strcmp(items[j].name, "ceil") == 0;
					diag_error(at(r, col + (int)(v - text)),
						   "shape: %s takes %d whole number%s from %d to "
						   "%s%s", items[j].name, items[j].arity,
						   items[j].arity > 1 ? "s" : "", zero_ok ? 0 : 1,
						   ceil ? "1" : "2^40",
						   items[j].arity > 1 ? ", 'x' between" : "");
					return false;
				}
				k->d[start[j] + i] = x;
				v = stop + 1;
			}
		}
		p = *end ? end + 1 : end;
		if (*end && !*p) {
			diag_error(at(r, col + (int)(end - text)), "shape: a space at the end");
			return false;
		}
	}
	for (int j = 0; j < n; j++)
		if (!seen[j]) {
			diag_error(at(r, col), "shape: no %s= item (a %s key has %d items: "
				   "docs/kernel-table.md)", items[j].name,
				   kernel_class_name(k->cls), n);
			return false;
		}
	return true;
}

/* The layout a key of class c (and op) has: NCHW or NHWC where it has
 * one, '-' where not (ir/kernelkey.c). */
static bool
layout_fits(const KernelKey *k)
{
	bool has = k->cls == KC_CONV || k->cls == KC_POOL ||
		   (k->cls == KC_NORM && (k->op == OP_BATCHNORM || k->op == OP_INSTNORM));

	return has ? k->layout != KL_ANY : k->layout == KL_ANY;
}

/* A key from its fields (class, precision, layout and shape at f[C_CLASS
 * .. C_SHAPE], their columns in col); false after reporting. */
static bool
key_fields(const Reader *r, const char *const *f, const int *col, KernelKey *k)
{
	memset(k, 0, sizeof *k);
	k->op = -1;
	if (!kernel_class_parse(f[C_CLASS], &k->cls)) {
		bad_value(r, col[C_CLASS], "class", f[C_CLASS],
			  "is not conv, gemm, attention, elementwise, norm or pool");
		return false;
	}
	if (!kernel_dtype_parse(f[C_PREC], &k->dt)) {
		bad_value(r, col[C_PREC], "precision", f[C_PREC],
			  "is not fp32, tf32, fp16, bf16 or fp8");
		return false;
	}
	if (!kernel_layout_parse(f[C_LAYOUT], &k->layout)) {
		bad_value(r, col[C_LAYOUT], "layout", f[C_LAYOUT], "is not NCHW, NHWC or -");
		return false;
	}
	if (!shape(r, col[C_SHAPE], f[C_SHAPE], k))
		return false;
	if (!layout_fits(k)) {
		diag_error(at(r, col[C_LAYOUT]), "layout '%s': a %s%s%s key's layout is %s",
			   kernel_layout_name(k->layout), k->op >= 0 ? op_name((OpKind)k->op) : "",
			   k->op >= 0 ? " " : "", kernel_class_name(k->cls),
			   k->layout == KL_ANY ? "NCHW or NHWC" : "'-' (none)");
		return false;
	}
	return true;
}

bool
kernel_key_read(Loc where, const char *cls, const char *prec, const char *layout,
		const char *shape_text, KernelKey *k)
{
	Reader r = { where.file, where.line, NULL };
	const char *f[NCOL] = { [C_CLASS] = cls, [C_PREC] = prec, [C_LAYOUT] = layout,
				[C_SHAPE] = shape_text };
	int col[NCOL] = { 0 };

	for (int i = 0; i < NCOL; i++)
		col[i] = where.col;
	return key_fields(&r, f, col, k);
}

/* One data row into *row; false after reporting. */
static bool
row(Reader *r, const char *line, KernelRow *row)
{
	char *f = xcalloc(NCOL, (size_t)MAX_FIELD + 2);
	char *fl[NCOL];
	int col[NCOL];
	const char *p = line;
	bool more = true, ok = false;
	KernelKey *k = &row->key;
	int64_t v;

	memset(row, 0, sizeof *row);
	for (int i = 0; i < NCOL; i++) {
		fl[i] = f + (size_t)i * (MAX_FIELD + 2);
		if (!more) {
			diag_error(at(r, (int)strlen(line) + 1),
				   "missing column '%s' (the header: %s)", colname[i], header);
			goto out;
		}
		if (!csv_field(r->path, r->line, line, &p, fl[i], MAX_FIELD + 2, &col[i], &more))
			goto out;
	}
	if (more) {
		diag_error(at(r, (int)(p - line)), "more than %d columns (the header: %s)", NCOL,
			   header);
		goto out;
	}
	if (!key_fields(r, (const char *const *)fl, col, k) ||
	    !integer(r, col[C_N], "n", fl[C_N], 1, MAX_KERNEL_N, &row->n))
		goto out;
	if (!seconds(r, col[C_FWD], "fwd_s", fl[C_FWD], false, &row->fwd) ||
	    !seconds(r, col[C_BWD_DATA], "bwd_data_s", fl[C_BWD_DATA], true, &row->bwd_data) ||
	    !seconds(r, col[C_BWD_WEIGHT], "bwd_weight_s", fl[C_BWD_WEIGHT], true,
		     &row->bwd_weight))
		goto out;
	if (!csv_decimal(fl[C_SPREAD], &row->spread) || row->spread < 0 ||
	    row->spread > MAX_SPREAD) {
		bad_value(r, col[C_SPREAD], "spread", fl[C_SPREAD],
			  "is not a relative spread from 0 to 100");
		goto out;
	}
	if (!integer(r, col[C_REPEATS], "repeats", fl[C_REPEATS], 1, MAX_REPEATS, &v))
		goto out;
	row->repeats = (int)v;
	row->kernel = arena_strdup(r->a, fl[C_KERNEL]);
	row->loc = at(r, 1);
	ok = true;
out:
	free(f);
	return ok;
}

static int
by_key(const void *pa, const void *pb)
{
	const KernelRow *a = pa, *b = pb;
	int c = kernel_key_cmp(&a->key, &b->key);

	if (c)
		return c;
	if (a->n != b->n)
		return a->n < b->n ? -1 : 1;
	return (a->loc.line > b->loc.line) - (a->loc.line < b->loc.line);
}

KernelTable *
kernels_parse(const char *path, const char *text, size_t len, Arena *a)
{
	Reader r = { path, 0, a };
	KernelTable *t = arena_alloc(a, sizeof *t);
	const char *p = text, *end = text + len;
	char *line = NULL;
	size_t capline = 0;
	int cap = 0, capnote = 0, errors = diag_errors();
	bool have_header = false;

	t->file = arena_strdup(a, path);
	if (len >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0)
		p += 3;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *eol = nl ? nl : end;
		size_t n = (size_t)(eol - p);
		const char *z;
		r.line++;
		if (n && p[n - 1] == '\r')
			n--;
		if ((z = memchr(p, '\0', n))) {
			diag_error(at(&r, (int)(z - p) + 1), "a NUL byte (not a text file?)");
			break;
		}
		if (n + 1 > capline) {
			capline = n + 1;
			line = xrealloc(line, capline);
		}
		memcpy(line, p, n);
		line[n] = '\0';
		p = nl ? nl + 1 : end;
		if (line[0] == '#') {
			if (capnote == t->nnote) {
				int c = capnote ? 2 * capnote : 8;
				t->note = arena_grow(a, t->note, (size_t)capnote, (size_t)c,
						     sizeof *t->note);
				capnote = c;
			}
			t->note[t->nnote++] = arena_strdup(a, line + 1 + (line[1] == ' '));
			continue;
		}
		if (!line[strspn(line, " \t")])
			continue;
		if (!have_header) {
			if (strcmp(line, header) != 0) {
				diag_error(at(&r, 1), "expected the header '%s' (a kernel table: "
					   "docs/kernel-table.md)", header);
				break;
			}
			have_header = true;
			continue;
		}
		if (t->nrow == MAX_KERNEL_ROWS) {
			diag_error(at(&r, 1), "more than %d rows", MAX_KERNEL_ROWS);
			break;
		}
		if (t->nrow == cap) {
			cap = cap ? 2 * cap : 64;
			t->row = xrealloc(t->row, (size_t)cap * sizeof *t->row);
		}
		if (row(&r, line, &t->row[t->nrow]))
			t->nrow++;
		else if (diag_errors() - errors >= 20)
			break; /* not a table: do not report every line */
	}
	free(line);
	if (diag_errors() == errors && !have_header)
		diag_error((Loc){ path, r.line ? r.line : 1, 1 }, "no header '%s': not a kernel "
			   "table (docs/kernel-table.md)", header);
	if (diag_errors() == errors) {
		if (t->nrow)
			qsort(t->row, (size_t)t->nrow, sizeof *t->row, by_key);
		for (int i = 1; i < t->nrow; i++)
			if (kernel_key_cmp(&t->row[i - 1].key, &t->row[i].key) == 0 &&
			    t->row[i - 1].n == t->row[i].n)
				diag_error(t->row[i].loc, "the key and n of line %d again",
					   t->row[i - 1].loc.line);
	}
	if (diag_errors() > errors) {
		free(t->row);
		return NULL;
	}
	/* the rows into the arena, so that the table lives as long as it */
	if (t->nrow) {
		KernelRow *rows = arena_array(a, (size_t)t->nrow, sizeof *rows);
		memcpy(rows, t->row, (size_t)t->nrow * sizeof *rows);
		free(t->row);
		t->row = rows;
	} else {
		free(t->row);
		t->row = NULL;
	}
	return t;
}

KernelTable *
kernels_load(const char *path, Loc where, Arena *a, FileList *files)
{
	size_t len;
	char *text = file_read(path, &len, MAX_ODL_BYTES, where);
	KernelTable *t;

	if (!text)
		return NULL;
	files_add(files, path);
	t = kernels_parse(path, text, len, a);
	free(text);
	return t;
}
