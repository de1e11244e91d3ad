#!/usr/bin/python3
"""export_decoders.py -- a zoo of small decoders and an encoder, written here
(no model hub), exported to ONNX with independent reference counts, for
oraclec's zoo test (tests/zoo.sh, tests/data/decoders).

Run with Debian's python (torch 1.13, onnx 1.12):

    /usr/bin/python3 tools/export_decoders.py [-o tests/data/decoders] [MODEL ...]

The models, each a few layers of a small width so the files stay small:

  gpt2        nanoGPT's GPT-2: learned positions, the causal mask a
              persistent buffer per block (tril of ones, masked_fill),
              the output layer tied to the token embedding, GELU (tanh);
              training mode (Dropout kept), opset 14
  gpt_where   the same GPT with its mask torch.where over a tril computed
              in forward; eval mode, opset 16
  llama       LLaMA's layer as Hugging Face wrote it: RMSNorm, rotary
              embeddings from an inv_freq buffer (non-persistent) computed
              in forward (einsum, cat, cos, sin, rotate_half), grouped
              keys and values (2 heads for 4 queries, repeat_kv: expand),
              a triu mask built in forward, SwiGLU, an untied output
              layer; eval mode, opset 17
  bert        BERT's encoder: word, position (a position_ids buffer) and
              token-type embeddings, post-norm layers, the attention mask
              an input, a pooler; training mode, opset 15
  gpt_seq     gpt_where with a symbolic sequence axis too (ids [N, S]):
              what --seq-len fills

For each, into the output folder:

  NAME.onnx        torch.onnx.export with a dynamic batch axis N, token
                   ids [N, s] (int64).  Float initializers are stripped to
                   deleted external data (tools/export_zoo.py), except the
                   embedding tables and the matrices of their transposed
                   shape: oraclec tells a tied table's copy by its values.
  NAME.ref.txt     key value lines: torch's params (sum of p.numel()) and
                   buffers (sum of b.numel(), persistent or not), the
                   file's float state (initializers and non-scalar float
                   Constant tensors) as file_params, what of it is a copy
                   of a parameter (tied: the exporter's W^T of the shared
                   table, found by its values here) and what is neither
                   (file_buffers: masks and inv_freq as the file holds
                   them, after the exporter's merges), the dimensions
                   (layers, hidden, heads, seq, vocab), MACs as
                   tools/export_zoo.py counts them (macs_aten = macs_weight
                   + macs_attn), the node count and operator histogram.
  NAME.shapes.tsv  every node output's shape by ONNX's own inference.
"""
import argparse
import collections
import math
import os
import sys

import numpy
import onnx
import onnx.numpy_helper
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_zoo  # noqa: E402  (its MAC counters, stripping and shapes)

V, T, H, HEADS, LAYERS = 128, 32, 32, 4, 2
KV_HEADS = 2  # LLaMA's grouped keys and values


# ---- GPT-2 (nanoGPT) ---------------------------------------------------------

class GPTAttention(nn.Module):
    def __init__(self, where):
        super().__init__()
        self.c_attn = nn.Linear(H, 3 * H)
        self.c_proj = nn.Linear(H, H)
        self.attn_dropout = nn.Dropout(0.1)
        self.resid_dropout = nn.Dropout(0.1)
        self.where = where
        if not where:
            self.register_buffer("bias", torch.tril(torch.ones(T, T)).view(1, 1, T, T))

    def forward(self, x):
        b, t, c = x.size()
        q, k, v = self.c_attn(x).split(H, dim=2)
        q = q.view(b, t, HEADS, c // HEADS).transpose(1, 2)
        k = k.view(b, t, HEADS, c // HEADS).transpose(1, 2)
        v = v.view(b, t, HEADS, c // HEADS).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(c // HEADS))
        if self.where:
            mask = torch.tril(torch.ones(t, t, device=x.device)).bool()
            att = torch.where(mask, att, torch.tensor(float("-inf"), device=x.device))
        else:
            att = att.masked_fill(self.bias[:, :, :t, :t] == 0, float("-inf"))
        att = self.attn_dropout(F.softmax(att, dim=-1))
        y = (att @ v).transpose(1, 2).contiguous().view(b, t, c)
        return self.resid_dropout(self.c_proj(y))


class GPTBlock(nn.Module):
    def __init__(self, where):
        super().__init__()
        self.ln_1 = nn.LayerNorm(H)
        self.attn = GPTAttention(where)
        self.ln_2 = nn.LayerNorm(H)
        self.mlp = nn.Sequential(nn.Linear(H, 4 * H), nn.GELU(approximate="tanh"),
                                 nn.Linear(4 * H, H), nn.Dropout(0.1))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, where=False):
        super().__init__()
        self.wte = nn.Embedding(V, H)
        self.wpe = nn.Embedding(T, H)
        self.drop = nn.Dropout(0.1)
        self.h = nn.ModuleList([GPTBlock(where) for _ in range(LAYERS)])
        self.ln_f = nn.LayerNorm(H)
        self.lm_head = nn.Linear(H, V, bias=False)
        self.lm_head.weight = self.wte.weight  # tied

    def forward(self, idx):
        t = idx.size(1)
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device).unsqueeze(0)
        x = self.drop(self.wte(idx) + self.wpe(pos))
        for block in self.h:
            x = block(x)
        return self.lm_head(self.ln_f(x))


# ---- LLaMA -------------------------------------------------------------------

class RMSNorm(nn.Module):
    def __init__(self, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(H))
        self.eps = eps

    def forward(self, x):
        var = x.pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(var + self.eps))


class Rotary(nn.Module):
    def __init__(self, d, base=10000):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, d, 2).float() / d))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def forward(self, t):
        pos = torch.arange(t, device=self.inv_freq.device, dtype=self.inv_freq.dtype)
        freqs = torch.einsum("i,j->ij", pos, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos()[None, None, :, :], emb.sin()[None, None, :, :]


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def repeat_kv(x, n):
    """Grouped-query attention's keys and values, each head repeated for
    the n query heads of its group (Hugging Face's repeat_kv)."""
    b, h, t, d = x.shape
    return x[:, :, None, :, :].expand(b, h, n, t, d).reshape(b, h * n, t, d)


class LlamaAttention(nn.Module):
    def __init__(self):
        super().__init__()
        d = H // HEADS
        self.q_proj = nn.Linear(H, H, bias=False)
        self.k_proj = nn.Linear(H, KV_HEADS * d, bias=False)
        self.v_proj = nn.Linear(H, KV_HEADS * d, bias=False)
        self.o_proj = nn.Linear(H, H, bias=False)
        self.rotary_emb = Rotary(d)

    def forward(self, x):
        b, t, c = x.size()
        d = c // HEADS
        q = self.q_proj(x).view(b, t, HEADS, d).transpose(1, 2)
        k = self.k_proj(x).view(b, t, KV_HEADS, d).transpose(1, 2)
        v = self.v_proj(x).view(b, t, KV_HEADS, d).transpose(1, 2)
        cos, sin = self.rotary_emb(t)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k, v = repeat_kv(k, HEADS // KV_HEADS), repeat_kv(v, HEADS // KV_HEADS)
        mask = torch.full((t, t), float("-inf"), device=x.device).triu(1)
        att = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(d) + mask
        att = F.softmax(att, dim=-1, dtype=torch.float32).to(q.dtype)
        return self.o_proj(torch.matmul(att, v).transpose(1, 2).reshape(b, t, c))


class SwiGLU(nn.Module):
    def __init__(self, f=86):
        super().__init__()
        self.gate_proj = nn.Linear(H, f, bias=False)
        self.up_proj = nn.Linear(H, f, bias=False)
        self.down_proj = nn.Linear(f, H, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class LlamaLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.input_layernorm = RMSNorm()
        self.self_attn = LlamaAttention()
        self.post_attention_layernorm = RMSNorm()
        self.mlp = SwiGLU()

    def forward(self, x):
        x = x + self.self_attn(self.input_layernorm(x))
        return x + self.mlp(self.post_attention_layernorm(x))


class Llama(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed_tokens = nn.Embedding(V, H)
        self.layers = nn.ModuleList([LlamaLayer() for _ in range(LAYERS)])
        self.norm = RMSNorm()
        self.lm_head = nn.Linear(H, V, bias=False)

    def forward(self, ids):
        x = self.embed_tokens(ids)
        for layer in self.layers:
            x = layer(x)
        return self.lm_head(self.norm(x))


# ---- BERT --------------------------------------------------------------------

class BertLayer(nn.Module):
    def __init__(self, f=4 * H):
        super().__init__()
        self.query, self.key, self.value = nn.Linear(H, H), nn.Linear(H, H), nn.Linear(H, H)
        self.attention_output = nn.Linear(H, H)
        self.attention_norm = nn.LayerNorm(H, eps=1e-12)
        self.intermediate = nn.Linear(H, f)
        self.output = nn.Linear(f, H)
        self.output_norm = nn.LayerNorm(H, eps=1e-12)
        self.dropout = nn.Dropout(0.1)

    def forward(self, x, ext):
        b, t, c = x.size()
        d = c // HEADS

        def heads(y):
            return y.view(b, t, HEADS, d).permute(0, 2, 1, 3)

        q, k, v = heads(self.query(x)), heads(self.key(x)), heads(self.value(x))
        att = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(d) + ext
        att = self.dropout(F.softmax(att, dim=-1))
        y = torch.matmul(att, v).permute(0, 2, 1, 3).contiguous().view(b, t, c)
        x = self.attention_norm(self.dropout(self.attention_output(y)) + x)
        y = self.output(F.gelu(self.intermediate(x)))
        return self.output_norm(self.dropout(y) + x)


class Bert(nn.Module):
    def __init__(self):
        super().__init__()
        self.word_embeddings = nn.Embedding(V, H)
        self.position_embeddings = nn.Embedding(T, H)
        self.token_type_embeddings = nn.Embedding(2, H)
        self.norm = nn.LayerNorm(H, eps=1e-12)
        self.dropout = nn.Dropout(0.1)
        self.register_buffer("position_ids", torch.arange(T).expand((1, -1)))
        self.register_buffer("token_type_ids", torch.zeros((1, T), dtype=torch.long),
                             persistent=False)
        self.layer = nn.ModuleList([BertLayer() for _ in range(LAYERS)])
        self.pooler = nn.Linear(H, H)

    def forward(self, ids, attention_mask):
        t = ids.size(1)
        e = (self.word_embeddings(ids) + self.position_embeddings(self.position_ids[:, :t]) +
             self.token_type_embeddings(self.token_type_ids[:, :t]))
        x = self.dropout(self.norm(e))
        ext = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * -10000.0
        for layer in self.layer:
            x = layer(x, ext)
        return x, torch.tanh(self.pooler(x[:, 0]))


# name -> (constructor, opset, training, input names, symbolic sequence)
MODELS = collections.OrderedDict([
    ("gpt2", (GPT, 14, True, ["ids"], False)),
    ("gpt_where", (lambda: GPT(where=True), 16, False, ["ids"], False)),
    ("llama", (Llama, 17, False, ["ids"], False)),
    ("bert", (Bert, 15, True, ["ids", "attention_mask"], False)),
    ("gpt_seq", (lambda: GPT(where=True), 16, False, ["ids"], True)),
])
DIMS = {"gpt2": 4 * H, "gpt_where": 4 * H, "llama": 86, "bert": 4 * H, "gpt_seq": 4 * H}


def inputs(names, batch):
    ids = torch.randint(0, V, (batch, T))
    return (ids,) if len(names) == 1 else (ids, torch.ones(batch, T, dtype=torch.long))


def macs(model, args):
    """export_zoo's counters on a model of several inputs."""
    with export_zoo.FunctionCount() as fc:
        model(*args)
    with export_zoo.AtenCount() as ac:
        model(*args)
    assert fc.weight + fc.attn == ac.macs, (fc.weight, fc.attn, ac.macs)
    return {"macs_weight": fc.weight, "macs_attn": fc.attn, "macs_aten": ac.macs}


def state(m):
    """The file's float state: initializers and non-scalar float Constant
    tensors, name -> array (None when its data is external)."""
    out = {}
    for t in m.graph.initializer:
        if t.data_type in export_zoo.FLOAT_TYPES:
            out[t.name] = onnx.numpy_helper.to_array(t)
    for n in m.graph.node:
        if n.op_type == "Constant":
            for a in n.attribute:
                if a.name == "value" and a.t.data_type in export_zoo.FLOAT_TYPES and a.t.dims:
                    out[n.output[0]] = onnx.numpy_helper.to_array(a.t)
    return out


def copies(st, model):
    """Float state that holds a parameter's elements, transposed or not,
    under a second name: the exporter's copy of a tied weight."""
    params = [p.detach().numpy() for p in model.parameters() if p.dim() == 2]
    seen, found = set(), {}
    for name, a in st.items():
        if a.ndim != 2:
            continue
        for p in params:
            for q in (p, p.T):
                if a.shape == q.shape and numpy.array_equal(a, q):
                    key = id(p)
                    if key in seen:
                        found[name] = a.size
                    seen.add(key)
    return found


def tables(m):
    """Embedding tables (read by Gather as its data) and the matrices of
    their transposed shape: their data stays in the file."""
    gathered = {n.input[0] for n in m.graph.node if n.op_type == "Gather"}
    shapes = {tuple(t.dims) for t in m.graph.initializer if t.name in gathered}
    keep = set()
    for t in m.graph.initializer:
        d = tuple(t.dims)
        if t.name in gathered or (len(d) == 2 and d[::-1] in shapes and d[0] != d[1]):
            keep.add(t.name)
    return keep


def strip_except(m, weights, keep):
    """export_zoo.strip_weights, the tensors named in keep left whole."""
    kept = [t for t in m.graph.initializer if t.name in keep]
    saved = [onnx.TensorProto() for _ in kept]
    for s, t in zip(saved, kept):
        s.CopyFrom(t)
    export_zoo.strip_weights(m, weights)
    for s, t in zip(saved, kept):
        t.CopyFrom(s)


def export(name, outdir):
    ctor, opset, training, names, seq = MODELS[name]
    torch.manual_seed(0)
    model = ctor()
    # distinct values everywhere, as export_zoo: no merged initializers
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0, 0.02)
    model.train(training)
    ref = collections.OrderedDict()
    ref["model"] = name
    ref["opset"] = opset
    ref["mode"] = "training" if training else "eval"
    ref["input"] = " ".join("%s:Nx%s:int64" % (n, "S" if seq else T) for n in names)
    ref["params"] = sum(p.numel() for p in model.parameters())
    ref["buffers"] = sum(b.numel() for b in model.buffers())
    ref["layers"], ref["hidden"], ref["heads"] = LAYERS, H, HEADS
    ref["ffn"], ref["seq"], ref["vocab"] = DIMS[name], T, V
    model.eval()  # MACs without dropout's randomness; the same products
    with torch.no_grad():
        ref.update(macs(model, inputs(names, 1)))
    model.train(training)
    path = os.path.join(outdir, name + ".onnx")
    torch.onnx.export(model, inputs(names, 2), path, opset_version=opset,
                      input_names=names, output_names=["out"],
                      dynamic_axes={n: {0: "N", 1: "S"} if seq else {0: "N"}
                                    for n in names},
                      training=(torch.onnx.TrainingMode.TRAINING if training
                                else torch.onnx.TrainingMode.EVAL),
                      do_constant_folding=True)
    m = onnx.load(path)
    st = state(m)
    tied = copies(st, model)
    ref["file_params"] = sum(a.size for a in st.values())
    ref["tied"] = sum(tied.values())
    ref["file_buffers"] = ref["file_params"] - ref["tied"] - ref["params"]
    strip_except(m, os.path.join(outdir, name + ".weights"), tables(m))
    onnx.save(m, path)
    m = onnx.load(path, load_external_data=False)
    ref["onnx_unknown_shapes"] = export_zoo.write_shapes(
        m, os.path.join(outdir, name + ".shapes.tsv"))
    ops = collections.Counter(n.op_type for n in m.graph.node)
    ref["nodes"] = len(m.graph.node)
    ref["ops"] = ";".join("%s:%d" % kv for kv in sorted(ops.items(), key=lambda kv: (-kv[1], kv[0])))
    with open(os.path.join(outdir, name + ".ref.txt"), "w") as f:
        for k, v in ref.items():
            f.write("%s %s\n" % (k, v))
    print("%-10s %6d B params %d buffers %d file_params %d tied %d file_buffers %d macs %d" % (
        name, os.path.getsize(path), ref["params"], ref["buffers"], ref["file_params"],
        ref["tied"], ref["file_buffers"], ref["macs_aten"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-o", "--outdir", default="tests/data/decoders")
    ap.add_argument("models", nargs="*", default=list(MODELS))
    args = ap.parse_args()
    os.makedirs(args.outdir, exist_ok=True)
    for name in args.models:
        if name not in MODELS:
            sys.exit("export_decoders: unknown model '%s'" % name)
        export(name, args.outdir)


if __name__ == "__main__":
    main()
