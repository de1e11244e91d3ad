"""oraclec.planschema -- reads and checks a PyTorch plan (oraclec --plan
pytorch, docs/plans.md) before oraclec.launch starts anything.  It needs
no torch: the checks here are the plan's own (its file, its JSON, the
types, ranges and consistency of its keys); what needs the model (module
names, split widths) is checked by oraclec.launch with torch.

    plan = planschema.read(path)      # PlanError: the file or its JSON
    planschema.check(plan)            # PlanError: a key, named

A PlanError's str() is one line: the field, then what is wrong with it
(`world_size: 0 is not a rank count: an integer from 1 to 65536`).

The file: a regular file (checked with os.stat before it is opened, so a
FIFO or a device never blocks the reader), at most MAX_BYTES (16 MiB), UTF-8,
one JSON object nested at most MAX_DEPTH deep, every number finite (NaN,
Infinity and 1e999, which json.load accepts, are refused), no key twice in
an object.
"""
import json
import math
import os
import stat

MAX_BYTES = 16 << 20      # a plan of 65,536 ranks is far below
MAX_DEPTH = 32            # plans nest 4 deep
MAX_RANKS = 65536         # oraclec's MAX_PLAN_RANKS: a plan lists every rank
MAX_MESH_DIMS = 5         # the five grid dimensions
MAX_MICROBATCHES = 65536
MAX_MODULES = 1 << 20     # per_layer entries
MAX_IMPLEMENTATION = 4096  # an implementation's name or path (PATH_MAX)
MAX_INPUT_DIMS = 4        # a sample's shape: channels and up to 3 spatial sizes
MAX_INPUT_SIDE = 65536

DIMS = ("data", "spatial", "pipeline", "filter", "channel")
SCHEDULES = ("ScheduleGPipe", "Schedule1F1B", "ScheduleInterleaved1F1B")
CHECKPOINTS = ("never", "except_last", "always")
SPLITS = ("data", "filter", "channel", "spatial")
FSDP = ("FULL_SHARD", "HYBRID_SHARD", "SHARD_GRAD_OP")
PRECISIONS = ("float32", "float16", "bfloat16")
AUTOCASTS = ("float16", "bfloat16")
# each strategy's grid dimensions (ir/strategies.def)
STRATEGIES = {
    "data": {"data"}, "spatial": {"spatial"}, "pipeline": {"pipeline"},
    "filter": {"filter"}, "channel": {"channel"}, "df": {"data", "filter"},
    "ds": {"data", "spatial"}, "dp": {"data", "pipeline"},
    "dpf": {"data", "pipeline", "filter"}, "dpc": {"data", "pipeline", "channel"},
    "dps": {"data", "pipeline", "spatial"}, "tensor": {"tensor"}, "dt": {"data", "tensor"},
    "dpt": {"data", "pipeline", "tensor"}, "context": {"context"},
    "dc": {"data", "context"}, "dtc": {"data", "tensor", "context"},
    "dptc": {"data", "pipeline", "tensor", "context"},
}


class PlanError(Exception):
    """What is wrong with a plan: `field` (a path such as
    device_mesh.mesh_shape[0], or None for the file itself) and a
    one-line message."""

    def __init__(self, field, msg):
        super().__init__(field, msg)
        self.field, self.msg = field, msg

    def __str__(self):
        text = "%s: %s" % (self.field, self.msg) if self.field else self.msg
        return " ".join(text.split("\n"))


def show(v, width=40):
    """A JSON value as the plan spells it, cut to `width` characters: safe
    on one line (json.dumps escapes control characters)."""
    try:
        s = json.dumps(v, ensure_ascii=True, allow_nan=True)
    except (TypeError, ValueError, RecursionError):
        s = "?"
    return s if len(s) <= width else s[:width - 3] + "..."


def kind(v):
    """A JSON value's type, in JSON's words."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, int):
        return "an integer"
    if isinstance(v, float):
        return "a number"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, list):
        return "an array"
    return "an object"


# ---- the file ----------------------------------------------------------------

def _refuse_constant(name):
    raise PlanError(None, "%s is not a JSON number (a plan's numbers are finite)" % name)


def _finite(text):
    v = float(text)
    if not math.isfinite(v):
        raise PlanError(None, "the number %s is out of range (a plan's numbers are finite)"
                        % text[:40])
    return v


def _object(pairs):
    seen = set()
    for k, _ in pairs:
        if k in seen:
            raise PlanError(None, "the key %s appears twice in one object" % show(k))
        seen.add(k)
    return dict(pairs)


def _depth(v):
    """The nesting depth of a parsed value, without recursion."""
    deepest, todo = 0, [(v, 1)]
    while todo:
        v, d = todo.pop()
        if isinstance(v, (list, dict)):
            deepest = max(deepest, d)
            if d > MAX_DEPTH:
                return d
            todo.extend((x, d + 1) for x in (v.values() if isinstance(v, dict) else v))
    return deepest


FILE_TYPES = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"),
              (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
              (stat.S_ISSOCK, "a socket"))


def _not_regular(mode):
    for test, name in FILE_TYPES:
        if test(mode):
            return name
    return "not a regular file"


def read(path):
    """The plan in the file `path`, parsed: a dict.  PlanError (field None)
    when the file is not a regular file, is empty or larger than
    MAX_BYTES, is not UTF-8, not JSON, not one object, nested deeper than
    MAX_DEPTH, or has a non-finite number or a key twice."""
    try:
        st = os.stat(path)
    except OSError as e:
        raise PlanError(None, "cannot read it: %s" % (e.strerror or e))
    if not stat.S_ISREG(st.st_mode):
        raise PlanError(None, "is %s, not a regular file: a plan is read from a file"
                        % _not_regular(st.st_mode))
    if st.st_size > MAX_BYTES:
        raise PlanError(None, "is %d bytes; a plan is read up to %d MiB"
                        % (st.st_size, MAX_BYTES >> 20))
    try:
        # O_NONBLOCK: should the path become a FIFO after the stat, the
        # open does not wait for a writer
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as e:
        raise PlanError(None, "cannot read it: %s" % (e.strerror or e))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise PlanError(None, "is %s, not a regular file: a plan is read from a file"
                            % _not_regular(st.st_mode))
        chunks, left = [], MAX_BYTES + 1
        while left > 0:
            b = os.read(fd, min(left, 1 << 20))
            if not b:
                break
            chunks.append(b)
            left -= len(b)
        data = b"".join(chunks)
    except OSError as e:
        raise PlanError(None, "cannot read it: %s" % (e.strerror or e))
    finally:
        os.close(fd)
    if len(data) > MAX_BYTES:
        raise PlanError(None, "is more than %d MiB; a plan is read up to %d MiB"
                        % (MAX_BYTES >> 20, MAX_BYTES >> 20))
    if not data.strip():
        raise PlanError(None, "is empty: a plan is a JSON object (oraclec --plan pytorch)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise PlanError(None, "is not UTF-8 text (byte 0x%02x at offset %d)"
                        % (data[e.start], e.start))
    try:
        plan = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite,
                          object_pairs_hook=_object)
    except PlanError:
        raise
    except json.JSONDecodeError as e:
        raise PlanError(None, "is not JSON: line %d column %d: %s" % (e.lineno, e.colno, e.msg))
    except RecursionError:
        raise PlanError(None, "is nested deeper than the JSON reader can follow; a plan "
                        "nests at most %d deep" % MAX_DEPTH)
    except ValueError:  # an integer of more digits than int() takes
        raise PlanError(None, "has an integer of more digits than Python reads (a plan's "
                        "numbers are small)")
    if not isinstance(plan, dict):
        raise PlanError(None, "holds %s (%s), not an object: a plan is one JSON object "
                        "(oraclec --plan pytorch)" % (kind(plan), show(plan, 20)))
    if _depth(plan) > MAX_DEPTH:
        raise PlanError(None, "nests deeper than %d levels; a plan nests 4 deep" % MAX_DEPTH)
    return plan


# ---- the keys ----------------------------------------------------------------

MISSING = object()


def _get(obj, key, path, required=False):
    v = obj.get(key, MISSING)
    if v is MISSING and required:
        raise PlanError(path + key, "missing: oraclec --plan pytorch writes it")
    return v


def _int(v, field, lo, hi, what="an integer"):
    if type(v) is not int:
        raise PlanError(field, "%s is %s, not %s from %d to %d" % (show(v), kind(v), what, lo, hi))
    if not lo <= v <= hi:
        raise PlanError(field, "%s is out of range (%s from %d to %d)" % (show(v), what, lo, hi))
    return v


def _number(v, field, lo, hi):
    if type(v) not in (int, float):
        raise PlanError(field, "%s is %s, not a number" % (show(v), kind(v)))
    if not lo <= v <= hi:
        raise PlanError(field, "%s is out of range (a number from %g to %g)" % (show(v), lo, hi))
    return v


def _str(v, field, choices=None, nullable=False):
    if v is None and nullable:
        return v
    if not isinstance(v, str):
        raise PlanError(field, "%s is %s, not a string%s" % (
            show(v), kind(v), " (one of %s%s)" % (", ".join(choices), ", or null" if nullable
                                                  else "") if choices else ""))
    if choices is not None and v not in choices:
        raise PlanError(field, "%s is not one of %s%s" % (show(v), ", ".join(choices),
                                                          ", null" if nullable else ""))
    return v


def _name(v, field):
    """A module name: a non-empty printable string."""
    _str(v, field)
    if not v or len(v) > 1000 or not v.isprintable():
        raise PlanError(field, "%s is not a module name" % show(v))
    return v


def _bool(v, field):
    if not isinstance(v, bool):
        raise PlanError(field, "%s is %s, not true or false" % (show(v), kind(v)))
    return v


def _obj(v, field, nullable=False):
    if v is None and nullable:
        return v
    if not isinstance(v, dict):
        raise PlanError(field, "%s is %s, not an object%s" % (show(v), kind(v),
                                                               " or null" if nullable else ""))
    return v


def _list(v, field, lo, hi):
    if not isinstance(v, list):
        raise PlanError(field, "%s is %s, not an array" % (show(v), kind(v)))
    if not lo <= len(v) <= hi:
        raise PlanError(field, "has %d entries; it must have %d to %d" % (len(v), lo, hi))
    return v


def mesh_size(plan, dim):
    """The size of mesh dimension `dim` (1 when the mesh has none)."""
    m = plan["device_mesh"]
    for n, s in zip(m["mesh_dim_names"], m["mesh_shape"]):
        if n == dim:
            return s
    return 1


def check(plan):
    """Checks every key the launcher reads (and the types of the others a
    PyTorch plan has); raises PlanError naming the first wrong field."""
    v = _get(plan, "plan", "", True)
    if v != "pytorch":
        raise PlanError("plan", "%s: not a PyTorch plan (oraclec --plan pytorch writes "
                        "\"pytorch\")" % show(v))
    world = _int(_get(plan, "world_size", "", True), "world_size", 1, MAX_RANKS,
                 "a rank count: an integer")
    mesh = _obj(_get(plan, "device_mesh", "", True), "device_mesh")
    shape = _list(_get(mesh, "mesh_shape", "device_mesh.", True), "device_mesh.mesh_shape",
                  1, MAX_MESH_DIMS)
    names = _list(_get(mesh, "mesh_dim_names", "device_mesh.", True),
                  "device_mesh.mesh_dim_names", 1, MAX_MESH_DIMS)
    for i, s in enumerate(shape):
        _int(s, "device_mesh.mesh_shape[%d]" % i, 1, MAX_RANKS, "a dimension's size: an integer")
    for i, n in enumerate(names):
        _str(n, "device_mesh.mesh_dim_names[%d]" % i, DIMS)
        if n in names[:i]:
            raise PlanError("device_mesh.mesh_dim_names[%d]" % i, "%s appears twice" % show(n))
    if len(names) != len(shape):
        raise PlanError("device_mesh", "mesh_shape has %d sizes and mesh_dim_names %d names"
                        % (len(shape), len(names)))
    v = _get(mesh, "device_type", "device_mesh.")
    if v is not MISSING:
        _str(v, "device_mesh.device_type")
        if not v or len(v) > 64:
            raise PlanError("device_mesh.device_type", "%s is not a device type" % show(v))
    product = math.prod(shape)
    if product != world:
        raise PlanError("world_size", "%d is not the device mesh's %s ranks (mesh_shape %s)"
                        % (world, product, show(shape)))
    v = _get(plan, "strategy", "")
    if v is not MISSING:
        _str(v, "strategy", sorted(STRATEGIES))
        if STRATEGIES[v] != set(names):
            raise PlanError("strategy", "%s runs on %s, and the device mesh has %s" % (
                show(v), "+".join(sorted(STRATEGIES[v])), "+".join(names)))
    for key in ("model", "module_names", "checked_with"):
        v = _get(plan, key, "")
        if v is not MISSING:
            _str(v, key)
    for key in ("nnodes", "nproc_per_node"):
        v = _get(plan, key, "")
        if v is not MISSING:
            _int(v, key, 1, MAX_RANKS)
    v = _get(plan, "dims", "")
    if v is not MISSING:
        for k, use in _obj(v, "dims").items():
            _str(use, "dims.%s" % k)
    batch = _get(plan, "batch", "")
    if batch is not MISSING:
        _obj(batch, "batch")
        v = _get(batch, "global", "batch.")
        if v is not MISSING:
            _number(v, "batch.global", 1, 1e15)
        v = _get(batch, "per_replica", "batch.")
        if v is not MISSING:
            _number(v, "batch.per_replica", 1e-9, 1e15)
    v = _get(plan, "precision", "")
    if v is not MISSING:
        _str(v, "precision", PRECISIONS)
    v = _get(plan, "autocast", "")
    if v is not MISSING:
        _str(v, "autocast", AUTOCASTS, nullable=True)
    for key in ("allow_tf32", "cudnn_allow_tf32", "matmul_allow_tf32",
                "zero_redundancy_optimizer", "channels_last"):
        v = _get(plan, key, "")
        if v is not MISSING:
            _bool(v, key)
    v = _get(plan, "implementation", "")
    if v is not MISSING:
        _str(v, "implementation")
        if not v or len(v) > MAX_IMPLEMENTATION or "\0" in v:
            raise PlanError("implementation", "%s is not an implementation's name or path"
                            % show(v))
    v = _get(plan, "input_shape", "")
    if v is not MISSING:
        _list(v, "input_shape", 1, MAX_INPUT_DIMS)
        for i, d in enumerate(v):
            _int(d, "input_shape[%d]" % i, 1, MAX_INPUT_SIDE, "a size: an integer")
    v = _get(plan, "fsdp", "")
    if v is not MISSING:
        _str(v, "fsdp", FSDP, nullable=True)
    v = _get(plan, "sync_batchnorm_group_size", "")
    if v is not MISSING and v is not None:
        k = _int(v, "sync_batchnorm_group_size", 2, MAX_RANKS)
        width = shape[names.index("data")] if "data" in names else 1
        if width % k:
            raise PlanError("sync_batchnorm_group_size", "%d does not divide the data "
                            "dimension's %d ranks into groups" % (k, width))
    v = _get(plan, "checkpoint_segments", "")
    if v is not MISSING and v is not None:
        _int(v, "checkpoint_segments", 1, 1 << 20)
    v = _get(plan, "split_after", "")
    if v is not MISSING and v is not None:
        _name(v, "split_after")
    _check_pipeline(plan, names)
    _check_per_layer(plan, world)
    return plan


def _check_pipeline(plan, names):
    pp = _get(plan, "pipeline", "")
    if "pipeline" in names and pp in (MISSING, None):
        raise PlanError("pipeline", "%s: the device mesh has a pipeline dimension, but the plan "
                        "no stages" % ("missing" if pp is MISSING else "null"))
    if pp is MISSING or pp is None:
        return
    _obj(pp, "pipeline", nullable=True)
    if "pipeline" not in names:
        raise PlanError("pipeline", "the plan has stages, but its device mesh no pipeline "
                        "dimension")
    stages = mesh_size(plan, "pipeline")
    sched = _str(_get(pp, "schedule", "pipeline.", True), "pipeline.schedule", SCHEDULES)
    v = _get(pp, "stages_per_rank", "pipeline.")
    if v is not MISSING:
        _int(v, "pipeline.stages_per_rank", 1, MAX_RANKS)
    M = _int(_get(pp, "n_microbatches", "pipeline.", True), "pipeline.n_microbatches", 1,
             MAX_MICROBATCHES, "a micro-batch count: an integer")
    per_replica = (plan.get("batch") or {}).get("per_replica")
    if isinstance(per_replica, (int, float)) and M > per_replica:
        raise PlanError("pipeline.n_microbatches", "%d micro-batches of the plan's %s samples "
                        "per replica (batch.per_replica): a micro-batch has at least one"
                        % (M, show(per_replica)))
    v = _get(pp, "microbatch_size", "pipeline.")
    if v is not MISSING:
        _number(v, "pipeline.microbatch_size", 1e-9, 1e15)
    v = _get(pp, "checkpoint", "pipeline.")
    if v is not MISSING:
        _str(v, "pipeline.checkpoint", CHECKPOINTS)
    split = _obj(_get(pp, "split_spec", "pipeline.", True), "pipeline.split_spec")
    for k, where in split.items():
        _name(k, "pipeline.split_spec")
        if where != "BEGINNING":
            raise PlanError("pipeline.split_spec.%s" % k, "%s is not \"BEGINNING\" (a stage "
                            "begins at the module)" % show(where))
    if sched != "ScheduleInterleaved1F1B" and len(split) != stages - 1:
        raise PlanError("pipeline.split_spec", "has %d split points; the device mesh's %d "
                        "pipeline stages need %d" % (len(split), stages, stages - 1))
    v = _get(pp, "module_names_per_stage", "pipeline.")
    if v is not MISSING:
        _list(v, "pipeline.module_names_per_stage", 0, MAX_MODULES)
        if sched != "ScheduleInterleaved1F1B" and v and len(v) != stages:
            raise PlanError("pipeline.module_names_per_stage", "lists %d stages; the device "
                            "mesh has %d" % (len(v), stages))
        for i, mods in enumerate(v):
            _list(mods, "pipeline.module_names_per_stage[%d]" % i, 0, MAX_MODULES)
            for j, m in enumerate(mods):
                _name(m, "pipeline.module_names_per_stage[%d][%d]" % (i, j))


def _check_per_layer(plan, world):
    pl = _get(plan, "per_layer", "")
    if pl is MISSING or pl is None:
        return
    _obj(pl, "per_layer", nullable=True)
    v = _get(pl, "world_size", "per_layer.")
    if v is not MISSING and _int(v, "per_layer.world_size", 1, MAX_RANKS) != world:
        raise PlanError("per_layer.world_size", "%d is not the plan's world_size %d"
                        % (v, world))
    v = _get(pl, "iteration_s", "per_layer.")
    if v is not MISSING:
        _number(v, "per_layer.iteration_s", 0, 1e15)
    mods = _list(_get(pl, "modules", "per_layer.", True), "per_layer.modules", 1, MAX_MODULES)
    for i, e in enumerate(mods):
        at = "per_layer.modules[%d]" % i
        _obj(e, at)
        _name(_get(e, "module", at + ".", True), at + ".module")
        split = _str(_get(e, "split", at + ".", True), at + ".split", SPLITS)
        d = _int(_get(e, "degree", at + ".", True), at + ".degree", 1, world,
                 "a rank count: an integer")
        if world % d:
            raise PlanError(at + ".degree", "%d does not divide the world_size %d" % (d, world))
        if split == "data" and d != 1:
            raise PlanError(at + ".degree", "%d: a data-parallel module's degree is 1" % d)
        v = _get(e, "first_layer", at + ".")
        if v is not MISSING:
            _str(v, at + ".first_layer")


# ---- what the launcher runs --------------------------------------------------

RUN_DIMS = ("data", "pipeline", "filter", "channel")
DEVICE_TYPES = ("cuda", "cpu")
RUN_SCHEDULES = ("ScheduleGPipe", "Schedule1F1B")


def splits(plan):
    """Whether the plan splits layers (filter, channel; uniform or per
    layer)."""
    names = plan["device_mesh"]["mesh_dim_names"]
    return bool(plan.get("per_layer")) or any(d in ("filter", "channel") for d in names)


def supported(plan):
    """Refuses what the launcher does not run (a valid plan all the same):
    PlanError naming the key."""
    names = plan["device_mesh"]["mesh_dim_names"]
    for i, d in enumerate(names):
        if d not in RUN_DIMS:
            raise PlanError("device_mesh.mesh_dim_names[%d]" % i, "mesh dimension %s is not run "
                            "by this launcher yet (data, pipeline, filter, channel)" % d)
    if splits(plan):
        if "pipeline" in names:
            raise PlanError("device_mesh", "a pipeline with filter or channel splits (dpf, dpc) "
                            "is not run by this launcher yet")
        if names[-1] not in ("filter", "channel", "data") or (len(names) > 1
                                                                and names[0] != "data"):
            raise PlanError("device_mesh", "the split must be the mesh's innermost dimension "
                            "(model-inner nesting)")
        for i, e in enumerate((plan.get("per_layer") or {}).get("modules", [])):
            if e["split"] not in ("data", "filter", "channel"):
                raise PlanError("per_layer.modules[%d].split" % i, "module %s is split by %s, "
                                "which this launcher does not run yet" % (e["module"], e["split"]))
        if plan.get("fsdp") or plan.get("zero_redundancy_optimizer"):
            raise PlanError("fsdp" if plan.get("fsdp") else "zero_redundancy_optimizer",
                            "ZeRO and FSDP with filter or channel splits are not run by this "
                            "launcher yet")
        if plan.get("sync_batchnorm_group_size"):
            raise PlanError("sync_batchnorm_group_size", "synchronised batch norm with filter "
                            "or channel splits is not run by this launcher yet")
    v = plan["device_mesh"].get("device_type", "cuda")
    if v not in DEVICE_TYPES:
        raise PlanError("device_mesh.device_type", "%s is not run by this launcher (%s)"
                        % (show(v), ", ".join(DEVICE_TYPES)))
    if plan.get("fsdp"):
        if names != ["data"]:
            raise PlanError("fsdp", "FSDP (%s) is run over data parallelism alone; the mesh "
                            "is %s" % (plan["fsdp"], "x".join(names)))
        if plan["fsdp"] == "HYBRID_SHARD":
            per_node = plan.get("nproc_per_node")
            if per_node is None or plan["world_size"] % per_node:
                raise PlanError("nproc_per_node", "%s: HYBRID_SHARD shards inside a node, so "
                                "its ranks per node must divide the world_size %d"
                                % (show(per_node) if per_node is not None else "missing",
                                   plan["world_size"]))
    if plan.get("zero_redundancy_optimizer") and names != ["data"]:
        raise PlanError("zero_redundancy_optimizer", "ZeRO-1 is run over data parallelism alone")
    if plan.get("pipeline"):
        s = plan["pipeline"]["schedule"]
        if s not in RUN_SCHEDULES:
            raise PlanError("pipeline.schedule", "pipeline schedule %s is not run by this "
                            "launcher yet (ScheduleGPipe, Schedule1F1B)" % s)
    if plan.get("precision", "float32") != "float32":
        raise PlanError("precision", "%s parameters are not run by this launcher yet (float32, "
                        "with autocast as the plan's autocast says)" % plan["precision"])


def tf32(plan):
    """The TF32 switches the plan asks for: (torch.backends.cudnn.allow_tf32,
    torch.backends.cuda.matmul.allow_tf32), from cudnn_allow_tf32 and
    matmul_allow_tf32; an older plan's single allow_tf32 stands for both
    (either key missing takes it); false where the plan says nothing."""
    old = bool(plan.get("allow_tf32", False))
    return (bool(plan.get("cudnn_allow_tf32", old)), bool(plan.get("matmul_allow_tf32", old)))


def global_batch(plan):
    """The plan's global batch (batch.global) where it is a whole number of
    samples, else None."""
    v = (plan.get("batch") or {}).get("global")
    if isinstance(v, (int, float)) and not isinstance(v, bool) and v == int(v):
        return int(v)
    return None
