/* trace.c -- --profile: a profiler's Chrome trace, as `python3 -m
 * oraclec.launch --trace` writes it (docs/plans.md, "--trace"), read into
 * each module's seconds per step, forward and backward (ir/trace.h); or a
 * plain torch.profiler trace of the user's own script, read into its
 * operators by kind and order (below, "A plain trace").
 *
 *   {"traceEvents": [{"ph": "X", "cat": "op", "name": "aten::conv2d",
 *     "ts": 39339, "dur": 3502, "tid": 1, "args": {"phase": "forward",
 *     "module": "layer1.0.conv1", "Sequence number": 216}}, ...],
 *    "oraclec": {"trace": 1, "rank": 0, "steps": [3, 4], "batch": 8, ...}}
 *
 * The file is parsed one value at a time (jansson, from the place the
 * value starts), so memory holds one event's tree, a compact record per
 * operator, and every error names the line and column of the value it is
 * in.  The first error ends the read: a trace with any error changes
 * nothing, as a CSV profile.
 *
 * A module's time is that of the operators it ran itself: those whose
 * innermost module range it is (args.module), each counted once -- an
 * operator inside another of the same module (aten::convolution inside
 * aten::conv2d) is part of it -- and, backward, the operators of the
 * autograd nodes of its forward operators: args.module, else the forward
 * operator of the same (Sequence number, Fwd thread id) as (its Sequence
 * number, its thread), else the backward operator around it.  On a GPU's
 * trace (operators with device_time_us) the time is the device's: every
 * operator's own kernels; on the CPU's, the operators' wall time.  Only
 * operators that start inside a step (cat "step") count, and the sums are
 * divided by the steps. */
#include "frontend/frontend.h"
#include "util/escape.h"
#include "util/map.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Bounds on what a trace may hold (docs/limits.md): a timestamp within
 * 3,000 years of microseconds, an event within 11.6 days, a module path of
 * 4 KiB, 2^31 samples a step. */
#define MAX_TS_US 1e17
#define MAX_DUR_US 1e12
enum { MAX_MODULE_PATH = 4096, MAX_STEPS = 1 << 20 };
#define MAX_TRACE_BATCH 2147483647.0

enum { PH_OTHER, PH_FWD, PH_BWD };

typedef struct Op {
	double ts, end;        /* microseconds */
	double dev;            /* device_time_us; NAN none */
	int64_t seq, fwd_tid;  /* -1 none */
	int64_t tid;           /* an integer thread, or a string's id */
	bool tid_str;
	int module, resolved;  /* ModTime index; -1 none */
	unsigned char phase;
	int step;              /* the step it starts in; -1 none */
	int line;              /* its event's line in the file */
} Op;

/* A plain trace's event (PC_*): an ATen operator, an autograd node's
 * backward (autograd::engine::evaluate_function), an optimizer's range. */
enum { PC_ATEN, PC_BWD, PC_OPTIM };

typedef struct POp {
	double ts, end;        /* microseconds */
	int64_t tid, seq, fwd_tid, ext; /* -1 none (seq, fwd_tid, ext) */
	bool tid_str;
	unsigned char cls;     /* PC_* */
	int kind;              /* the oraclec operator (ops.def) it is; -1 */
	int line, step;
} POp;

/* A device kernel of a plain trace: its operator's External id. */
typedef struct Kern {
	int64_t ext;
	double us;
} Kern;

typedef struct Step {
	double ts, end;
} Step;

typedef struct Reader {
	const char *path;
	const char *text;
	size_t len, pos;
	Arena *a;
	Map modules, tids;     /* name -> index + 1 */
	ModTime *mod;
	int nmod, capmod, ntid;
	Op *op;
	size_t nop, capop;
	Step *step;
	int nstep, capstep;
	bool seen_events;
	json_t *meta;          /* "oraclec" */
	size_t meta_at;
	double (*first)[2];    /* each module's first range (start, end) */
	POp *pop;              /* a plain trace's operators, its kernels */
	size_t npop, cappop;
	Kern *kern;
	size_t nkern, capkern;
	int rank;              /* a plain trace's distributedInfo.rank */
	size_t at_off;         /* loc_at's last place: its byte, line, column */
	int at_line, at_col;
} Reader;

/* ---- places and values ------------------------------------------------ */

/* The line and column of byte off, counted on from the last place asked
 * for (every event asks, in order: counting from the start each time took
 * 33 s for a 3.4 MB trace). */
static Loc
loc_at(Reader *r, size_t off)
{
	if (off < r->at_off)
		r->at_off = 0, r->at_line = r->at_col = 1;
	for (; r->at_off < off && r->at_off < r->len; r->at_off++) {
		if (r->text[r->at_off] == '\n')
			r->at_line++, r->at_col = 1;
		else
			r->at_col++;
	}
	return (Loc){ r->path, r->at_line, r->at_col };
}

static void
skip_ws(Reader *r)
{
	while (r->pos < r->len && strchr(" \t\r\n", r->text[r->pos]) && r->text[r->pos])
		r->pos++;
}

static int
peek(const Reader *r)
{
	return r->pos < r->len ? (unsigned char)r->text[r->pos] : -1;
}

/* The JSON value at r->pos (moved past it); NULL after reporting where
 * the text stops being JSON. */
static json_t *
value(Reader *r)
{
	json_error_t e;
	size_t flags = JSON_DECODE_ANY | JSON_DISABLE_EOF_CHECK | JSON_REJECT_DUPLICATES;
	json_t *v = json_loadb(r->text + r->pos, r->len - r->pos, flags, &e);

	if (!v) {
		char *why = esc_text_cut(e.text, strlen(e.text), 120);
		size_t at = e.position > 0 ? (size_t)e.position - 1 : 0;
		if (strstr(e.text, "JSON_ALLOW_NUL"))
			diag_error(loc_at(r, r->pos + at), "a string holds a NUL character "
				   "(\\u0000): no name in a trace does");
		else
			diag_error(loc_at(r, r->pos + at), "not JSON: %s", why);
		free(why);
		return NULL;
	}
	r->pos += (size_t)e.position;
	return v;
}

/* Expects the byte c (after white space); false after reporting. */
static bool
expect(Reader *r, char c, const char *what)
{
	skip_ws(r);
	if (peek(r) == c) {
		r->pos++;
		return true;
	}
	if (peek(r) < 0)
		diag_error(loc_at(r, r->pos), "the file ends where %s was expected (cut short?)",
			   what);
	else
		diag_error(loc_at(r, r->pos), "expected %s", what);
	return false;
}

/* A name from the trace for a message: escaped, cut. */
static char *
shown(const char *s)
{
	return esc_text_cut(s, strlen(s), NAME_SHOWN);
}

/* ---- one event ---------------------------------------------------------- */

/* A number member of o within [lo, hi] into *v; absent: false with *v
 * untouched and no error when optional.  *bad after reporting. */
static bool
number(const Reader *r, Loc at, const char *where, json_t *o, const char *key, double lo,
       double hi, const char *unit, double *v, bool *bad)
{
	json_t *j = json_object_get(o, key);

	if (!j)
		return false;
	if (!json_is_number(j)) {
		diag_error(at, "%s.%s is not a number (%s)", where, key, unit);
		*bad = true;
		return false;
	}
	*v = json_number_value(j);
	if (!isfinite(*v) || *v < lo || *v > hi) {
		diag_error(at, "%s.%s %g is out of range (%g to %g %s)", where, key, *v, lo, hi,
			   unit);
		*bad = true;
		return false;
	}
	return true;
}

/* An integer member at least 0 (Sequence number, Fwd thread id); -1
 * absent. */
static bool
count(Loc at, const char *where, json_t *o, const char *key, int64_t *v)
{
	json_t *j = json_object_get(o, key);

	*v = -1;
	if (!j)
		return true;
	if (!json_is_integer(j) || json_integer_value(j) < 0) {
		diag_error(at, "%s.%s is not an integer 0 or more", where, key);
		return false;
	}
	*v = json_integer_value(j);
	return true;
}

/* A string member (NULL absent); false after reporting one of another
 * type, or (but an event's name, which is not kept) empty or longer than
 * a module path may be. */
static bool
string(Loc at, const char *where, json_t *o, const char *key, const char **s)
{
	json_t *j = json_object_get(o, key);

	*s = NULL;
	if (!j)
		return true;
	if (!json_is_string(j)) {
		diag_error(at, "%s.%s is not a string", where, key);
		return false;
	}
	*s = json_string_value(j);
	if (strcmp(key, "name") != 0 && (!**s || json_string_length(j) > MAX_MODULE_PATH)) {
		diag_error(at, "%s.%s is %s", where, key,
			   **s ? "longer than 4096 bytes" : "empty");
		return false;
	}
	return true;
}

/* The index of module `name`, added at its first sight. */
static int
module_id(Reader *r, const char *name)
{
	intptr_t i = (intptr_t)map_get(&r->modules, name);

	if (i)
		return (int)i - 1;
	if (r->nmod == r->capmod) {
		int cap = r->capmod ? 2 * r->capmod : 64;
		r->mod = arena_grow(r->a, r->mod, (size_t)r->capmod, (size_t)cap, sizeof *r->mod);
		r->first = xrealloc(r->first, (size_t)cap * sizeof *r->first);
		r->capmod = cap;
	}
	r->mod[r->nmod] = (ModTime){ .module = arena_strdup(r->a, name), .next = -1, .op = -1,
				     .ordinal = -1 };
	r->first[r->nmod][0] = r->first[r->nmod][1] = INFINITY;
	map_put(&r->modules, r->mod[r->nmod].module, (void *)(intptr_t)(r->nmod + 1));
	return r->nmod++;
}

/* The thread of an event: an integer as it is, a string by its id. */
static bool
thread(Reader *r, Loc at, const char *where, json_t *ev, int64_t *tid, bool *tid_str)
{
	json_t *j = json_object_get(ev, "tid");
	intptr_t i;

	if (json_is_integer(j)) {
		*tid = json_integer_value(j);
		*tid_str = false;
		return true;
	}
	if (!json_is_string(j)) {
		diag_error(at, "%s.tid is %s (the thread: an integer or a string)", where,
			   j ? "of another type" : "missing");
		return false;
	}
	if (!(i = (intptr_t)map_get(&r->tids, json_string_value(j)))) {
		i = ++r->ntid;
		map_put(&r->tids, arena_strdup(r->a, json_string_value(j)), (void *)i);
	}
	*tid = i;
	*tid_str = true;
	return true;
}

/* An operator's args into op. */
static bool
op_args(Reader *r, Loc at, const char *where, json_t *ev, Op *op)
{
	json_t *args = json_object_get(ev, "args");
	const char *phase, *module;
	char w[64];
	bool bad = false;

	snprintf(w, sizeof w, "%s.args", where);
	if (!json_is_object(args)) {
		diag_error(at, "%s is %s (an operator's phase and module)", w,
			   args ? "not an object" : "missing");
		return false;
	}
	if (!string(at, w, args, "phase", &phase) || !string(at, w, args, "module", &module) ||
	    !count(at, w, args, "Sequence number", &op->seq) ||
	    !count(at, w, args, "Fwd thread id", &op->fwd_tid))
		return false;
	if (!phase) {
		diag_error(at, "%s.phase is missing (forward, backward, optimizer or other)", w);
		return false;
	}
	if (strcmp(phase, "forward") == 0)
		op->phase = PH_FWD;
	else if (strcmp(phase, "backward") == 0)
		op->phase = PH_BWD;
	else if (strcmp(phase, "optimizer") == 0 || strcmp(phase, "other") == 0)
		op->phase = PH_OTHER;
	else {
		char *p = shown(phase);
		diag_error(at, "%s.phase '%s' is not forward, backward, optimizer or other", w, p);
		free(p);
		return false;
	}
	op->module = module ? module_id(r, module) : -1;
	op->dev = NAN;
	number(r, at, w, args, "device_time_us", 0, MAX_DUR_US, "microseconds", &op->dev, &bad);
	return !bad;
}

static void
add_step(Reader *r, double ts, double dur)
{
	if (r->nstep == r->capstep) {
		int cap = r->capstep ? 2 * r->capstep : 16;
		r->step = xrealloc(r->step, (size_t)cap * sizeof *r->step);
		r->capstep = cap;
	}
	r->step[r->nstep++] = (Step){ ts, ts + dur };
}

static void
add_op(Reader *r, const Op *op)
{
	if (r->nop == r->capop) {
		size_t cap = r->capop ? 2 * r->capop : 1024;
		r->op = xrealloc(r->op, cap * sizeof *r->op);
		r->capop = cap;
	}
	r->op[r->nop++] = *op;
}

/* ---- a plain trace: its events ----------------------------------------- */

/* The oraclec operators (ops.def) a plain trace's operators stand for:
 * the ATen operator a module's forward calls first (outermost), and the
 * autograd node of its backward, PyTorch 1.13 to 2.x's names (the nodes
 * of tools/autograd/derivatives.yaml).  A kind here is its group's
 * (passes/tracematch.c: adaptiveavgpool is globalavgpool's). */
static const struct {
	const char *name;
	OpKind op;
} fwd_ops[] = {
	{ "aten::conv1d", OP_CONV }, { "aten::conv2d", OP_CONV }, { "aten::conv3d", OP_CONV },
	{ "aten::convolution", OP_CONV }, { "aten::_convolution", OP_CONV },
	{ "aten::linear", OP_FC }, { "aten::addmm", OP_FC },
	{ "aten::matmul", OP_MATMUL }, { "aten::bmm", OP_MATMUL },
	{ "aten::batch_norm", OP_BATCHNORM }, { "aten::layer_norm", OP_LAYERNORM },
	{ "aten::instance_norm", OP_INSTNORM },
	{ "aten::relu", OP_RELU }, { "aten::relu_", OP_RELU },
	{ "aten::hardtanh", OP_CLIP }, { "aten::hardtanh_", OP_CLIP }, { "aten::relu6", OP_CLIP },
	{ "aten::gelu", OP_GELU }, { "aten::silu", OP_SILU }, { "aten::silu_", OP_SILU },
	{ "aten::sigmoid", OP_SIGMOID }, { "aten::tanh", OP_TANH },
	{ "aten::hardswish", OP_HARDSWISH }, { "aten::hardswish_", OP_HARDSWISH },
	{ "aten::hardsigmoid", OP_HARDSIGMOID }, { "aten::hardsigmoid_", OP_HARDSIGMOID },
	{ "aten::max_pool2d", OP_MAXPOOL }, { "aten::avg_pool2d", OP_AVGPOOL },
	{ "aten::adaptive_avg_pool2d", OP_GAVGPOOL },
	{ "aten::add", OP_ADD }, { "aten::add_", OP_ADD }, { "aten::mul", OP_MUL },
	{ "aten::mul_", OP_MUL }, { "aten::softmax", OP_SOFTMAX }, { "aten::_softmax", OP_SOFTMAX },
	{ "aten::dropout", OP_DROPOUT }, { "aten::dropout_", OP_DROPOUT },
	{ "aten::flatten", OP_FLATTEN }, { "aten::cat", OP_CONCAT },
}, bwd_ops[] = {
	{ "ConvolutionBackward0", OP_CONV }, { "CudnnConvolutionBackward0", OP_CONV },
	{ "MkldnnConvolutionBackward0", OP_CONV }, { "ThnnConv2DBackward0", OP_CONV },
	{ "SlowConv2DBackward0", OP_CONV }, { "AddmmBackward0", OP_FC },
	{ "MmBackward0", OP_MATMUL }, { "BmmBackward0", OP_MATMUL },
	{ "NativeBatchNormBackward0", OP_BATCHNORM }, { "CudnnBatchNormBackward0", OP_BATCHNORM },
	{ "MiopenBatchNormBackward0", OP_BATCHNORM },
	{ "NativeLayerNormBackward0", OP_LAYERNORM }, { "ReluBackward0", OP_RELU },
	{ "HardtanhBackward0", OP_CLIP }, { "GeluBackward0", OP_GELU },
	{ "SiluBackward0", OP_SILU },
	{ "SigmoidBackward0", OP_SIGMOID }, { "TanhBackward0", OP_TANH },
	{ "HardswishBackward0", OP_HARDSWISH }, { "HardsigmoidBackward0", OP_HARDSIGMOID },
	{ "MaxPool2DWithIndicesBackward0", OP_MAXPOOL }, { "AvgPool2DBackward0", OP_AVGPOOL },
	{ "AdaptiveAvgPool2DBackward0", OP_GAVGPOOL }, { "MeanBackward1", OP_GAVGPOOL },
	{ "AddBackward0", OP_ADD }, { "MulBackward0", OP_MUL }, { "SoftmaxBackward0", OP_SOFTMAX },
	{ "NativeDropoutBackward0", OP_DROPOUT }, { "CatBackward0", OP_CONCAT },
};

#define BWD_PREFIX "autograd::engine::evaluate_function: "

static int
kind_of(const char *name, bool bwd)
{
	size_t n = bwd ? sizeof bwd_ops / sizeof bwd_ops[0] : sizeof fwd_ops / sizeof fwd_ops[0];

	for (size_t i = 0; i < n; i++)
		if (strcmp(name, bwd ? bwd_ops[i].name : fwd_ops[i].name) == 0)
			return bwd ? bwd_ops[i].op : fwd_ops[i].op;
	return -1;
}

/* One "X" event of a plain trace (no category of the launcher's): its
 * steps ("ProfilerStep#N"), ATen operators, autograd nodes and optimizer
 * ranges kept, its device kernels by their operator's External id; the
 * rest (Python frames, module ranges, the runtime's calls) are not. */
static bool
plain_event(Reader *r, json_t *ev, Loc at, const char *where, const char *cat,
	    const char *name, double ts, double dur)
{
	json_t *args = json_object_get(ev, "args");
	char w[64];
	POp p = { ts, ts + dur, -1, -1, -1, -1, false, PC_ATEN, -1, at.line, -1 };

	snprintf(w, sizeof w, "%s.args", where);
	if (args && !json_is_object(args)) {
		diag_error(at, "%s is not an object", w);
		return false;
	}
	if (cat && (strcmp(cat, "kernel") == 0 || strcmp(cat, "gpu_memcpy") == 0 ||
		    strcmp(cat, "gpu_memset") == 0)) {
		int64_t ext;
		if (!count(at, w, args, "External id", &ext))
			return false;
		if (ext >= 0) {
			if (r->nkern == r->capkern) {
				r->capkern = r->capkern ? 2 * r->capkern : 1024;
				r->kern = xrealloc(r->kern, r->capkern * sizeof *r->kern);
			}
			r->kern[r->nkern++] = (Kern){ ext, dur };
		}
		return true;
	}
	if (cat && strcmp(cat, "cpu_op") != 0 && strcmp(cat, "user_annotation") != 0 &&
	    strcmp(cat, "python_function") != 0 && strcmp(cat, "cpu_instant_event") != 0)
		return true; /* the CUDA runtime's calls, flows, overhead */
	if (strncmp(name, "ProfilerStep#", 13) == 0) {
		if (r->nstep == MAX_STEPS) {
			diag_error(at, "%s: more than %d steps", where, MAX_STEPS);
			return false;
		}
		add_step(r, ts, dur);
		return true;
	}
	if (strncmp(name, BWD_PREFIX, sizeof BWD_PREFIX - 1) == 0)
		p.cls = PC_BWD, p.kind = kind_of(name + sizeof BWD_PREFIX - 1, true);
	else if (strncmp(name, "Optimizer.", 10) == 0)
		p.cls = PC_OPTIM;
	else if (strncmp(name, "aten::", 6) == 0)
		p.kind = kind_of(name, false);
	else
		return true;
	if (!thread(r, at, where, ev, &p.tid, &p.tid_str) ||
	    !count(at, w, args, "Sequence number", &p.seq) ||
	    !count(at, w, args, "Fwd thread id", &p.fwd_tid) ||
	    !count(at, w, args, "External id", &p.ext))
		return false;
	if (r->npop == r->cappop) {
		r->cappop = r->cappop ? 2 * r->cappop : 1024;
		r->pop = xrealloc(r->pop, r->cappop * sizeof *r->pop);
	}
	r->pop[r->npop++] = p;
	return true;
}

/* Event i, which starts at byte `off`: a complete event ("ph": "X") of
 * the schema's categories kept, every other one checked for its kind
 * only. */
static bool
event(Reader *r, json_t *ev, size_t i, size_t off)
{
	Loc at = loc_at(r, off);
	char where[40];
	const char *ph, *cat, *name, *module;
	double ts, dur;
	bool bad = false;
	int id;
	Op op = { .module = -1, .resolved = -1, .seq = -1, .fwd_tid = -1, .dev = NAN };

	snprintf(where, sizeof where, "traceEvents[%zu]", i);
	if (!json_is_object(ev)) {
		diag_error(at, "%s is not an object (an event)", where);
		return false;
	}
	if (!string(at, where, ev, "ph", &ph))
		return false;
	if (!ph) {
		diag_error(at, "%s.ph is missing (the event's kind: \"X\")", where);
		return false;
	}
	if (strcmp(ph, "X") != 0)
		return true; /* metadata, instants, counters: not the schema's */
	if (!string(at, where, ev, "cat", &cat) || !string(at, where, ev, "name", &name))
		return false;
	if (!name) {
		diag_error(at, "%s.name is missing", where);
		return false;
	}
	if (!number(r, at, where, ev, "ts", 0, MAX_TS_US, "microseconds", &ts, &bad) ||
	    !number(r, at, where, ev, "dur", 0, MAX_DUR_US, "microseconds", &dur, &bad)) {
		if (!bad)
			diag_error(at, "%s.%s is missing (microseconds)", where,
				   json_object_get(ev, "ts") ? "dur" : "ts");
		return false;
	}
	if (!cat || (strcmp(cat, "step") != 0 && strcmp(cat, "module") != 0 &&
		     strcmp(cat, "op") != 0))
		return plain_event(r, ev, at, where, cat, name, ts, dur);
	if (strcmp(cat, "step") == 0) {
		if (r->nstep == MAX_STEPS) {
			diag_error(at, "%s: more than %d steps", where, MAX_STEPS);
			return false;
		}
		add_step(r, ts, dur);
	} else if (strcmp(cat, "module") == 0) {
		json_t *args = json_object_get(ev, "args");
		char w[64];
		snprintf(w, sizeof w, "%s.args", where);
		if (args && !json_is_object(args)) {
			diag_error(at, "%s is not an object", w);
			return false;
		}
		module = NULL;
		if (args && !string(at, w, args, "module", &module))
			return false;
		if (!module && (!*name || strlen(name) > MAX_MODULE_PATH)) {
			diag_error(at, "%s.name is not a module path (1 to 4096 bytes)", where);
			return false;
		}
		id = module_id(r, module ? module : name); /* may move r->mod */
		r->mod[id].calls++;
		if (ts < r->first[id][0])
			r->first[id][0] = ts, r->first[id][1] = ts + dur;
	} else if (strcmp(cat, "op") == 0) {
		if (!thread(r, at, where, ev, &op.tid, &op.tid_str) ||
		    !op_args(r, at, where, ev, &op))
			return false;
		op.ts = ts;
		op.line = at.line;
		op.end = ts + dur;
		add_op(r, &op);
	}
	return true;
}

/* ---- the file's object -------------------------------------------------- */

static bool
events(Reader *r)
{
	size_t i = 0;

	if (!expect(r, '[', "'[' (traceEvents: an array of events)"))
		return false;
	skip_ws(r);
	if (peek(r) == ']') {
		r->pos++;
		return true;
	}
	for (;;) {
		size_t off;
		json_t *ev;
		bool ok;
		skip_ws(r);
		off = r->pos;
		if (!(ev = value(r)))
			return false;
		ok = event(r, ev, i++, off);
		json_decref(ev);
		if (!ok)
			return false;
		skip_ws(r);
		if (peek(r) == ']') {
			r->pos++;
			return true;
		}
		if (!expect(r, ',', "',' or ']' after an event"))
			return false;
	}
}

/* The object's members: traceEvents parsed event by event, oraclec kept,
 * the others (displayTimeUnit, ...) read and dropped. */
static bool
members(Reader *r)
{
	Map seen;

	map_init(&seen, r->a);
	if (!expect(r, '{', "a JSON object"))
		return false;
	skip_ws(r);
	if (peek(r) == '}') {
		r->pos++;
		return true;
	}
	for (;;) {
		size_t at;
		json_t *k, *v;
		const char *key;
		skip_ws(r);
		at = r->pos;
		if (peek(r) != '"') {
			diag_error(loc_at(r, at), peek(r) < 0 ? "the file ends where a key was "
				   "expected (cut short?)" : "expected a key (a string)");
			return false;
		}
		if (!(k = value(r)))
			return false;
		key = arena_strdup(r->a, json_string_value(k));
		json_decref(k);
		if (map_get(&seen, key)) {
			char *s = shown(key);
			diag_error(loc_at(r, at), "key '%s' given twice", s);
			free(s);
			return false;
		}
		map_put(&seen, key, (void *)1);
		if (!expect(r, ':', "':' after a key"))
			return false;
		skip_ws(r);
		if (strcmp(key, "traceEvents") == 0) {
			r->seen_events = true;
			if (!events(r))
				return false;
		} else {
			size_t vat = r->pos;
			if (!(v = value(r)))
				return false;
			if (strcmp(key, "oraclec") == 0) {
				r->meta = v, r->meta_at = vat;
			} else {
				/* Kineto: the rank a distributed run's trace is of */
				json_t *rank = strcmp(key, "distributedInfo") == 0
						       ? json_object_get(v, "rank") : NULL;
				if (json_is_integer(rank) && json_integer_value(rank) >= 0 &&
				    json_integer_value(rank) <= 1 << 24)
					r->rank = (int)json_integer_value(rank);
				json_decref(v);
			}
		}
		skip_ws(r);
		if (peek(r) == '}') {
			r->pos++;
			return true;
		}
		if (!expect(r, ',', "',' or '}' after a member"))
			return false;
	}
}

/* oraclec: {"trace": 1, "rank", "model", "device", "steps", "batch"}. */
static bool
meta(Reader *r, TraceProfile *t)
{
	Loc at = loc_at(r, r->meta_at);
	json_t *m = r->meta, *v;
	const char *s;
	double batch = 0;
	bool bad = false;

	if (!json_is_object(m)) {
		diag_error(at, "oraclec is not an object");
		return false;
	}
	v = json_object_get(m, "trace");
	if (!json_is_integer(v) || json_integer_value(v) != 1) {
		diag_error(at, "oraclec.trace is %s: this oraclec reads schema 1", v ? "not 1" :
			   "missing");
		return false;
	}
	v = json_object_get(m, "rank");
	if (v && (!json_is_integer(v) || json_integer_value(v) < 0 ||
		  json_integer_value(v) > 1 << 24)) {
		diag_error(at, "oraclec.rank is not a rank (an integer from 0)");
		return false;
	}
	t->rank = v ? (int)json_integer_value(v) : 0;
	if (!string(at, "oraclec", m, "model", &s))
		return false;
	t->model = arena_strdup(r->a, s ? s : "");
	if (!string(at, "oraclec", m, "device", &s))
		return false;
	t->device = arena_strdup(r->a, s ? s : "");
	if (number(r, at, "oraclec", m, "batch", 1, MAX_TRACE_BATCH, "samples", &batch, &bad) &&
	    batch != floor(batch)) {
		diag_error(at, "oraclec.batch %g is not a whole number of samples", batch);
		return false;
	}
	t->batch = (int64_t)batch;
	return !bad;
}

/* ---- the times ---------------------------------------------------------- */

static int
by_start(const void *pa, const void *pb)
{
	const Step *a = pa, *b = pb;

	return (a->ts > b->ts) - (a->ts < b->ts);
}

/* The step ts falls in (steps sorted by start), or -1. */
static int
step_of(const Reader *r, double ts)
{
	int lo = 0, hi = r->nstep - 1, k = -1;

	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2;
		if (r->step[mid].ts <= ts)
			k = mid, lo = mid + 1;
		else
			hi = mid - 1;
	}
	return k >= 0 && ts <= r->step[k].end ? k : -1;
}

/* The order of the walk: by thread, start, then the longer first (the
 * operator around another), then as written. */
static const Op *sort_ops;

static int
by_thread(const void *pa, const void *pb)
{
	const Op *a = &sort_ops[*(const size_t *)pa], *b = &sort_ops[*(const size_t *)pb];

	if (a->tid_str != b->tid_str)
		return a->tid_str - b->tid_str;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	if (a->end != b->end)
		return a->end > b->end ? -1 : 1;
	return (*(const size_t *)pa > *(const size_t *)pb) - (*(const size_t *)pa <
								 *(const size_t *)pb);
}

/* Forward operators by (Sequence number, thread): whose backward is whose. */
typedef struct Fwd {
	int64_t seq, tid;
	size_t idx;
	int module;
} Fwd;

static int
by_seq(const void *pa, const void *pb)
{
	const Fwd *a = pa, *b = pb;

	if (a->seq != b->seq)
		return a->seq < b->seq ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return (a->idx > b->idx) - (a->idx < b->idx);
}

static int
forward_module(const Fwd *f, size_t n, int64_t seq, int64_t tid)
{
	size_t lo = 0, hi = n;

	while (lo < hi) { /* the first at or after (seq, tid) */
		size_t mid = lo + (hi - lo) / 2;
		if (f[mid].seq < seq || (f[mid].seq == seq && f[mid].tid < tid))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && f[lo].seq == seq && f[lo].tid == tid ? f[lo].module : -1;
}

/* One operator's microseconds for a module's step, forward or backward. */
typedef struct Part {
	int module, step;
	bool bwd;
	int line;  /* the operator's event */
	double us;
} Part;

static int
by_part(const void *pa, const void *pb)
{
	const Part *a = pa, *b = pb;

	if (a->module != b->module)
		return a->module < b->module ? -1 : 1;
	if (a->bwd != b->bwd)
		return a->bwd - b->bwd;
	return (a->step > b->step) - (a->step < b->step);
}

static int
by_value(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return (a > b) - (a < b);
}

/* The median of a module's steps' times: the k sums in v[] (sorted
 * here), the other n - k steps none (0, below every sum), so the n values
 * in order are n - k zeros then v[]: O(k log k), never O(n) for a module
 * of few steps (a trace of 64,000 steps and 64,000 modules, each in one
 * step, took minutes when every module sorted every step). */
static double
median(double *v, int k, int n)
{
	int zeros = n - k;
	double lo, hi;

	qsort(v, (size_t)k, sizeof *v, by_value);
	lo = (n - 1) / 2 < zeros ? 0 : v[(n - 1) / 2 - zeros];
	hi = n / 2 < zeros ? 0 : v[n / 2 - zeros];
	return (lo + hi) / 2;
}

/* Each module's seconds a step, forward and backward: the median over
 * the steps of what its operators took in each (a busy machine's one slow
 * step does not move it).  A module's time above MAX_SAMPLE_SECONDS a
 * sample of the trace's batch (a step's, where it gives none), the limit a
 * CSV profile has, is an error at its first operator; false then. */
static bool
per_step(Reader *r, Part *p, size_t np, int64_t batch)
{
	double *v = xcalloc((size_t)r->nstep + 1, sizeof *v);
	double limit = MAX_SAMPLE_SECONDS * (double)(batch > 0 ? batch : 1);
	bool ok = true;

	qsort(p, np, sizeof *p, by_part);
	for (size_t i = 0; i < np && ok;) {
		size_t j = i;
		int k = 0, line = p[i].line;
		double t;
		while (j < np && p[j].module == p[i].module && p[j].bwd == p[i].bwd) {
			double sum = 0;
			int step = p[j].step;
			for (; j < np && p[j].module == p[i].module && p[j].bwd == p[i].bwd &&
			       p[j].step == step; j++) {
				sum += p[j].us;
				line = p[j].line < line ? p[j].line : line;
			}
			v[k++] = sum;
		}
		t = median(v, k, r->nstep) * 1e-6;
		if (t > limit) {
			char *name = shown(r->mod[p[i].module].module);
			diag_error((Loc){ r->path, line, 1 },
				   "module '%s' takes %g seconds a step %s, more than 1e6 seconds "
				   "per sample%s (the limit of a profile)", name, t,
				   p[i].bwd ? "backward" : "forward",
				   batch > 0 ? " of the trace's batch"
					     : " (the trace gives no batch: a step is taken as "
					       "one sample)");
			free(name);
			ok = false;
		}
		*(p[i].bwd ? &r->mod[p[i].module].bwd : &r->mod[p[i].module].fwd) = t;
		i = j;
	}
	free(v);
	return ok;
}

/* Each operator's module (its own, its forward operator's, the backward
 * operator's around it), then what it adds to its module's step: its
 * wall time where no operator of the same module and direction holds it
 * (the CPU's), or its own kernels' (a GPU's). */
static bool
attribute(Reader *r, TraceProfile *t)
{
	size_t n = r->nop, nf = 0, np = 0, depth = 0;
	size_t *order = xcalloc(n + 1, sizeof *order), *stack = xcalloc(n + 1, sizeof *stack);
	Fwd *f = xcalloc(n + 1, sizeof *f);
	Part *p = xcalloc(n + 1, sizeof *p);
	int *open = xcalloc(2 * (size_t)r->nmod + 2, sizeof *open);
	bool ok;

	qsort(r->step, (size_t)r->nstep, sizeof *r->step, by_start);
	for (size_t i = 0; i < n; i++) {
		Op *o = &r->op[i];
		o->step = step_of(r, o->ts);
		t->device_time |= o->step >= 0 && !isnan(o->dev);
		if (o->phase == PH_FWD && o->module >= 0 && o->seq >= 0 && !o->tid_str)
			f[nf++] = (Fwd){ o->seq, o->tid, i, o->module };
		order[i] = i;
	}
	qsort(f, nf, sizeof *f, by_seq);
	sort_ops = r->op;
	qsort(order, n, sizeof *order, by_thread);
	for (size_t k = 0; k < n; k++) {
		Op *o = &r->op[order[k]];
		int m = o->module, *held;
		bool dir = o->phase == PH_FWD || o->phase == PH_BWD, bwd = o->phase == PH_BWD;
		while (depth) {
			const Op *top = &r->op[stack[depth - 1]];
			if (top->tid == o->tid && top->tid_str == o->tid_str && top->end > o->ts)
				break;
			if (top->resolved >= 0 && top->phase != PH_OTHER)
				open[2 * top->resolved + (top->phase == PH_BWD)]--;
			depth--;
		}
		if (m < 0 && bwd && o->seq >= 0 && o->fwd_tid >= 0)
			m = forward_module(f, nf, o->seq, o->fwd_tid);
		if (m < 0 && bwd && depth && r->op[stack[depth - 1]].phase == PH_BWD)
			m = r->op[stack[depth - 1]].resolved;
		o->resolved = m;
		held = m >= 0 ? &open[2 * m + bwd] : NULL;
		if (held && dir && o->step >= 0 && (t->device_time || !*held)) {
			double us = t->device_time ? (isnan(o->dev) ? 0 : o->dev) : o->end - o->ts;
			p[np++] = (Part){ m, o->step, bwd, o->line, us };
			r->mod[m].timed = true;
		}
		if (held && dir)
			++*held;
		stack[depth++] = order[k];
	}
	ok = per_step(r, p, np, t->batch);
	free(order);
	free(stack);
	free(f);
	free(p);
	free(open);
	return ok;
}

/* ---- a plain trace: its operators by kind and order --------------------- */

/* A plain trace (no "oraclec" object: torch.profiler's Chrome trace of
 * the user's own script, Kineto's {"traceEvents": [...]} or the autograd
 * profiler's array) names no module that oraclec's layers know (eager
 * PyTorch records none: with_modules is TorchScript's; with_stack's
 * "nn.Module: Conv2d_3" is a class and a count).  Its operators are
 * keyed instead by kind and order: in each step the forward operators
 * of each kind in the order they ran -- the outermost ATen operator of
 * a module's call, outside any backward node and the optimizer -- the
 * k-th of a kind its entry "conv #k"; a backward node the entry of the
 * forward operator whose autograd node it is, by (Sequence number, Fwd
 * thread id) where Kineto gives them, else the j-th node of a kind from
 * the end (the engine runs the nodes in decreasing sequence number, the
 * reverse of the forward: a node is ready only after every node made
 * after it that reads it).  A layer of that kind and rank in the model
 * takes the entry's time (passes/tracematch.c).  Times as for modules:
 * the operators' wall time, or on a GPU their kernels' (by External
 * id, the operators inside counted with the outermost). */

static const POp *sort_pops;

static int
by_pthread(const void *pa, const void *pb)
{
	const POp *a = &sort_pops[*(const size_t *)pa], *b = &sort_pops[*(const size_t *)pb];

	if (a->tid_str != b->tid_str)
		return a->tid_str - b->tid_str;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	if (a->end != b->end)
		return a->end > b->end ? -1 : 1;
	return (*(const size_t *)pa > *(const size_t *)pb) - (*(const size_t *)pa <
								 *(const size_t *)pb);
}

static int
by_ext(const void *pa, const void *pb)
{
	const Kern *a = pa, *b = pb;

	return (a->ext > b->ext) - (a->ext < b->ext);
}

/* The microseconds of the kernels of External id ext; NAN for none. */
static double
kernels_of(const Reader *r, int64_t ext)
{
	size_t lo = 0, hi = r->nkern;
	double us = NAN;

	if (ext < 0)
		return NAN;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r->kern[mid].ext < ext)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < r->nkern && r->kern[lo].ext == ext; lo++)
		us = (isnan(us) ? 0 : us) + r->kern[lo].us;
	return us;
}

/* A forward operator in order: its step, start, kind and index. */
typedef struct Fop {
	int step, kind;
	double ts;
	size_t i;
} Fop;

static int
by_step(const void *pa, const void *pb)
{
	const Fop *a = pa, *b = pb;

	if (a->step != b->step)
		return a->step < b->step ? -1 : 1;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return (a->i > b->i) - (a->i < b->i);
}

/* By step, kind, start: a kind's operators of a step together. */
static int
by_kind(const void *pa, const void *pb)
{
	const Fop *a = pa, *b = pb;

	if (a->step != b->step)
		return a->step < b->step ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	return by_step(pa, pb);
}

static bool
plain_attribute(Reader *r, TraceProfile *t)
{
	size_t n = r->npop, depth = 0, nf = 0, nb = 0, np = 0, ns = 0;
	size_t *order = xcalloc(n + 1, sizeof *order), *stack = xcalloc(n + 1, sizeof *stack);
	int64_t *outer = xcalloc(n + 1, sizeof *outer), *node = xcalloc(n + 1, sizeof *node);
	bool *optim = xcalloc(n + 1, sizeof *optim);
	double *fdev = xcalloc(n + 1, sizeof *fdev), *bdev = xcalloc(n + 1, sizeof *bdev);
	int *entry = xcalloc(n + 1, sizeof *entry);
	Fop *f = xcalloc(n + 1, sizeof *f), *b = xcalloc(n + 1, sizeof *b);
	Part *p = xcalloc(2 * n + 1, sizeof *p);
	Fwd *seqs = xcalloc(n + 1, sizeof *seqs);
	int *bnode = xcalloc(n + 1, sizeof *bnode), rank[OP_COUNT];
	bool ok;

	qsort(r->step, (size_t)r->nstep, sizeof *r->step, by_start);
	if (r->nkern)
		qsort(r->kern, r->nkern, sizeof *r->kern, by_ext);
	for (size_t i = 0; i < n; i++) {
		r->pop[i].step = step_of(r, r->pop[i].ts);
		order[i] = i;
		entry[i] = -1;
	}
	sort_pops = r->pop;
	qsort(order, n, sizeof *order, by_pthread);
	/* each operator's outermost ATen operator, backward node, optimizer */
	for (size_t k = 0; k < n; k++) {
		size_t i = order[k];
		const POp *o = &r->pop[i];
		while (depth) {
			const POp *top = &r->pop[stack[depth - 1]];
			if (top->tid == o->tid && top->tid_str == o->tid_str && top->end > o->ts)
				break;
			depth--;
		}
		outer[i] = depth ? outer[stack[depth - 1]] : -1;
		node[i] = depth ? node[stack[depth - 1]] : -1;
		optim[i] = depth && optim[stack[depth - 1]];
		if (o->cls == PC_ATEN && outer[i] < 0)
			outer[i] = (int64_t)i;
		if (o->cls == PC_BWD && node[i] < 0)
			node[i] = (int64_t)i;
		optim[i] |= o->cls == PC_OPTIM;
		stack[depth++] = i;
	}
	/* the kernels' time, to the forward operator or backward node around */
	for (size_t i = 0; i < n; i++) {
		double us = kernels_of(r, r->pop[i].ext);
		if (isnan(us) || optim[i] || r->pop[i].step < 0)
			continue;
		t->device_time = true;
		if (node[i] >= 0)
			bdev[node[i]] += us;
		else if (outer[i] >= 0)
			fdev[outer[i]] += us;
	}
	for (size_t i = 0; i < n; i++) {
		const POp *o = &r->pop[i];
		bnode[i] = -1;
		if (optim[i] || o->step < 0 || o->kind < 0)
			continue;
		if (o->cls == PC_ATEN && outer[i] == (int64_t)i && node[i] < 0)
			f[nf++] = (Fop){ o->step, o->kind, o->ts, i };
		else if (o->cls == PC_BWD && node[i] == (int64_t)i)
			b[nb++] = (Fop){ o->step, o->kind, o->ts, i };
	}
	/* the forward operators' ordinals in each step, their entries */
	qsort(f, nf, sizeof *f, by_step);
	for (size_t i = 0; i < nf; i++) {
		char name[64];
		int id;
		if (i == 0 || f[i].step != f[i - 1].step)
			memset(rank, 0, sizeof rank);
		snprintf(name, sizeof name, "%s #%d", op_name((OpKind)f[i].kind), rank[f[i].kind]);
		id = module_id(r, name);
		r->mod[id].op = f[i].kind, r->mod[id].ordinal = rank[f[i].kind]++;
		r->mod[id].calls++;
		r->mod[id].timed = true;
		entry[f[i].i] = id;
		p[np++] = (Part){ id, f[i].step, false, r->pop[f[i].i].line,
				  t->device_time ? fdev[f[i].i]
						 : r->pop[f[i].i].end - r->pop[f[i].i].ts };
	}
	/* whose forward operator each backward node is: by sequence number
	 * (every forward operator inside the outermost one) */
	for (size_t i = 0; i < n; i++) {
		const POp *o = &r->pop[i];
		if (o->cls == PC_ATEN && o->seq >= 0 && node[i] < 0 && !optim[i] && outer[i] >= 0 &&
		    !o->tid_str)
			seqs[ns++] = (Fwd){ o->seq, o->tid, i, (int)outer[i] };
	}
	qsort(seqs, ns, sizeof *seqs, by_seq);
	for (size_t i = 0; i < nb && ns; i++) {
		const POp *o = &r->pop[b[i].i];
		int m = o->seq >= 0 && o->fwd_tid >= 0
				? forward_module(seqs, ns, o->seq, o->fwd_tid) : -1;
		bnode[i] = m >= 0 ? entry[m] : -1;
	}
	/* else by order: in each step and kind, the j-th node from the end is
	 * the forward operator of rank j, where the step has as many of each */
	if (!ns) {
		qsort(f, nf, sizeof *f, by_kind);
		qsort(b, nb, sizeof *b, by_kind);
		for (size_t i = 0, j = 0; i < nb;) {
			size_t ie = i, je;
			while (ie < nb && b[ie].step == b[i].step && b[ie].kind == b[i].kind)
				ie++;
			while (j < nf && by_kind(&f[j], &b[i]) < 0 &&
			       !(f[j].step == b[i].step && f[j].kind == b[i].kind))
				j++;
			je = j;
			while (je < nf && f[je].step == b[i].step && f[je].kind == b[i].kind)
				je++;
			if (je - j == ie - i)
				for (size_t q = i; q < ie; q++)
					bnode[q] = entry[f[j + (ie - 1 - q)].i];
			i = ie;
		}
	}
	for (size_t i = 0; i < nb; i++) {
		const POp *o = &r->pop[b[i].i];
		if (bnode[i] >= 0)
			p[np++] = (Part){ bnode[i], b[i].step, true, o->line,
					  t->device_time ? bdev[b[i].i] : o->end - o->ts };
	}
	ok = per_step(r, p, np, 0);
	t->plain = true;
	t->rank = r->rank;
	free(order), free(stack), free(outer), free(node), free(optim), free(fdev), free(bdev);
	free(entry), free(f), free(b), free(p), free(seqs), free(bnode);
	return ok;
}

/* ---- the launcher's modules: siblings ------------------------------------ */

static const char *const *sort_names;
static const double (*sort_first)[2];

static size_t
parent_len(const char *s)
{
	const char *dot = strrchr(s, '.');

	return dot ? (size_t)(dot - s) : 0;
}

static int
by_parent(const void *pa, const void *pb)
{
	int a = *(const int *)pa, b = *(const int *)pb;
	size_t la = parent_len(sort_names[a]), lb = parent_len(sort_names[b]);
	int c = memcmp(sort_names[a], sort_names[b], la < lb ? la : lb);

	if (c || la != lb)
		return c ? c : la < lb ? -1 : 1;
	if (sort_first[a][0] != sort_first[b][0])
		return sort_first[a][0] < sort_first[b][0] ? -1 : 1;
	return (a > b) - (a < b);
}

/* Each module's next: the module called first after it under the same
 * parent (its path less the last atom), by their first calls. */
static void
siblings(Reader *r)
{
	int *idx = xcalloc((size_t)r->nmod + 1, sizeof *idx), n = 0;
	const char **names = xcalloc((size_t)r->nmod + 1, sizeof *names);

	for (int i = 0; i < r->nmod; i++) {
		names[i] = r->mod[i].module;
		if (isfinite(r->first[i][0]))
			idx[n++] = i;
	}
	sort_names = names;
	sort_first = (const double (*)[2])r->first;
	qsort(idx, (size_t)n, sizeof *idx, by_parent);
	for (int k = 0; k + 1 < n; k++) {
		int a = idx[k], b = idx[k + 1];
		size_t la = parent_len(names[a]);
		if (la == parent_len(names[b]) && memcmp(names[a], names[b], la) == 0)
			r->mod[a].next = b;
	}
	free(idx);
	free(names);
}

/* ---- entry point -------------------------------------------------------- */

bool
trace_read(const char *path, const char *text, size_t len, Graph *g)
{
	Reader r = { .path = path, .text = text, .len = len, .a = g->arena, .at_line = 1,
		     .at_col = 1 };
	TraceProfile *t = arena_alloc(g->arena, sizeof *t);
	bool ok;

	map_init(&r.modules, g->arena);
	map_init(&r.tids, g->arena);
	skip_ws(&r);
	if (peek(&r) == '[') { /* the autograd profiler's array of events */
		ok = events(&r);
		r.seen_events = true;
	} else {
		ok = members(&r);
	}
	skip_ws(&r);
	if (ok && r.pos < r.len) {
		diag_error(loc_at(&r, r.pos), "more after the trace's %s",
			   r.meta || text[strspn(text, " \t\r\n")] == '{' ? "object" : "array");
		ok = false;
	}
	if (ok && !r.seen_events) {
		diag_error((Loc){ path, 1, 1 }, "no \"traceEvents\": not a Chrome trace");
		ok = false;
	}
	if (ok && !r.meta && (r.nop || r.nmod)) {
		diag_error((Loc){ path, 1, 1 }, "no \"oraclec\" object: a trace of python3 -m "
			   "oraclec.launch --trace is needed (its module ranges and backward "
			   "operators name the model's modules)");
		ok = false;
	}
	ok = ok && (!r.meta || meta(&r, t));
	if (ok && !r.meta && r.npop && r.nstep == 0) {
		/* a plain trace of no schedule: all of it one step */
		double lo = INFINITY, hi = -INFINITY;
		for (size_t i = 0; i < r.npop; i++) {
			lo = r.pop[i].ts < lo ? r.pop[i].ts : lo;
			hi = r.pop[i].end > hi ? r.pop[i].end : hi;
		}
		add_step(&r, lo, hi - lo);
	}
	if (ok && r.nstep == 0) {
		diag_error((Loc){ path, 1, 1 }, r.meta ? "no step (an event of cat \"step\"): "
			   "nothing to take times per step from" : "no operator of PyTorch's "
			   "(aten::...) and no \"oraclec\" object: neither a torch.profiler trace "
			   "nor one of python3 -m oraclec.launch --trace");
		ok = false;
	}
	if (ok) {
		t->file = arena_strdup(g->arena, path);
		ok = r.meta ? attribute(&r, t) : plain_attribute(&r, t);
	}
	if (ok && r.meta)
		siblings(&r);
	if (ok) {
		t->steps = r.nstep;
		t->mod = r.mod;
		t->nmod = r.nmod;
		g->trace = t;
	}
	json_decref(r.meta);
	free(r.op);
	free(r.step);
	free(r.pop);
	free(r.kern);
	free(r.first);
	return ok;
}
