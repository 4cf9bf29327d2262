#!/usr/bin/env python3
"""gen.py — tiny checkpoints for logos-import's tests, written with the
Python standard library alone (no numpy, no torch).

  gen.py st FAMILY DIR [--dtype f32|f16|bf16] [--shards N] [--break KIND] [--config JSON]
      a Hugging Face folder: config.json and model.safetensors (or N shards
      and model.safetensors.index.json); --config's keys replace or join
      config.json's (the tensors keep their shapes)
  gen.py gguf FAMILY FILE [--type f32|f16|q8_0] [--break KIND] [--config JSON] [--vocab TOK.gguf]
      a GGUF v3 file as llama.cpp's converter writes it (llama q/k rows
      interleaved, Gemma 2 norms holding 1 + w, llama3 rope as rope_freqs);
      --config's keys (whole GGUF keys: u32 for integers, f32 for other
      numbers, else strings) replace or join the metadata; --vocab's
      tokenizer keys (a GGUF of keys alone, tests/tok/fixture.py's) replace
      the placeholder tokens
  gen.py q8blocks FILE.gguf TENSOR OUT
      the raw 34-byte blocks of a Q8_0 tensor split into OUT.q and OUT.s
  gen.py stf32 DIR TENSOR OUT
      a tensor of a folder's safetensors widened to f32 (what a .f file of
      it must hold)
  gen.py big DIR GB
      a Llama-shaped bf16 checkpoint of about GB gigabytes of zeros, written
      without holding it in memory

FAMILY is llama, mistral, qwen2, qwen3, gemma2, gptoss, deepseek2, qwen3next
or lfm2: the tiny shapes of examples/tiny (vocab 256, dim 64, 4 heads of 16
with 2 kv heads, hidden 128, 2 layers; deepseek2: a dense layer then 4
experts; qwen3next: a delta layer then a gated attention layer, 4 experts;
lfm2: a convolution then attention, its config.json in the published
spelling). Every value is a function of the tensor's Hugging Face name, so a
folder and a GGUF of one family hold the same model. --break KIND writes a
broken variant (see BREAKS)."""
import json
import math
import os
import random
import struct
import sys

V, D, H, KV, HD, FF, L = 256, 64, 4, 2, 16, 128, 2
E, TOPK, EFF = 4, 2, 64          # gpt-oss's experts, per token, their width
LORA, NOPE, ROPE, MFF = 32, 16, 16, 32    # deepseek2's latent widths; its and qwen3next's expert width
KH, VH, KD, VD, CONV = 2, 4, 16, 16, 4    # qwen3next's delta heads, widths, convolution

BREAKS_ST = ["truncated", "headerlen", "notjson", "past", "farpast", "overlap", "dtype", "fp8",
             "shape", "missing", "arch", "noconfig", "noshard", "size", "hidden"]
BREAKS_GGUF = ["magic", "version", "tcount", "kvcount", "data", "type", "arch", "strlen", "nested"]


def config(fam):
    c = {"vocab_size": V, "hidden_size": D, "num_hidden_layers": L,
         "num_attention_heads": H, "num_key_value_heads": KV, "intermediate_size": FF,
         "max_position_embeddings": 128, "rms_norm_eps": 1e-5, "hidden_act": "silu",
         "_name_or_path": "tests/tiny-%s" % fam}
    if fam == "llama":
        c.update(model_type="llama", architectures=["LlamaForCausalLM"], rope_theta=500000.0,
                 tie_word_embeddings=False,
                 rope_scaling={"rope_type": "llama3", "factor": 32.0, "low_freq_factor": 1.0,
                               "high_freq_factor": 4.0, "original_max_position_embeddings": 8192})
    elif fam == "mistral":
        c.update(model_type="mistral", rope_theta=10000.0, sliding_window=16)
    elif fam == "qwen2":
        c.update(model_type="qwen2", rope_theta=1000000.0, rms_norm_eps=1e-6, tie_word_embeddings=True)
    elif fam == "qwen3":
        c.update(model_type="qwen3", head_dim=HD, rms_norm_eps=1e-6, tie_word_embeddings=True,
                 rope_parameters={"rope_type": "default", "rope_theta": 1000000.0})
    elif fam == "gemma2":
        c.update(model_type="gemma2", head_dim=HD, rms_norm_eps=1e-6, query_pre_attn_scalar=HD,
                 attn_logit_softcapping=50.0, final_logit_softcapping=30.0, sliding_window=16,
                 hidden_activation="gelu_pytorch_tanh")
        del c["hidden_act"]
    elif fam == "gptoss":
        c.update(model_type="gpt_oss", head_dim=HD, intermediate_size=EFF, num_local_experts=E,
                 num_experts_per_tok=TOPK, sliding_window=16, swiglu_limit=7.0,
                 layer_types=["sliding_attention", "full_attention"],
                 rope_parameters={"rope_type": "yarn", "rope_theta": 150000.0, "factor": 32.0,
                                  "beta_fast": 32.0, "beta_slow": 1.0,
                                  "original_max_position_embeddings": 4096})
    elif fam == "deepseek2":
        c.update(model_type="deepseek_v2", num_key_value_heads=H, rms_norm_eps=1e-6, rope_theta=10000.0,
                 q_lora_rank=None, kv_lora_rank=LORA, qk_nope_head_dim=NOPE, qk_rope_head_dim=ROPE,
                 v_head_dim=HD, n_routed_experts=E, num_experts_per_tok=TOPK, moe_intermediate_size=MFF,
                 n_shared_experts=1, first_k_dense_replace=1, topk_method="greedy")
    elif fam == "qwen3next":
        c.update(model_type="qwen3_next", head_dim=HD, rms_norm_eps=1e-6, rope_theta=10000000.0,
                 partial_rotary_factor=0.25, full_attention_interval=2, linear_num_key_heads=KH,
                 linear_num_value_heads=VH, linear_key_head_dim=KD, linear_value_head_dim=VD,
                 linear_conv_kernel_dim=CONV, num_experts=E, num_experts_per_tok=TOPK,
                 moe_intermediate_size=MFF, shared_expert_intermediate_size=MFF, norm_topk_prob=True)
    elif fam == "lfm2":
        for k in ("intermediate_size", "rms_norm_eps", "hidden_act"):
            del c[k]
        c.update(model_type="lfm2", norm_eps=1e-5, rope_theta=1000000.0, block_ff_dim=192, block_multiple_of=32,
                 block_auto_adjust_ff_dim=True, block_ffn_dim_multiplier=1.0, full_attn_idxs=[1],
                 conv_L_cache=3, conv_bias=False, tie_embedding=True)
    else:
        sys.exit("gen.py: unknown family %s" % fam)
    return c


def mlp(p, ff=FF):
    """A gated pair under prefix p ("model.layers.0.mlp.")."""
    return [(p + "gate_proj.weight", [ff, D]), (p + "up_proj.weight", [ff, D]), (p + "down_proj.weight", [D, ff])]


def experts(p, shared):
    t = [(p + "mlp.gate.weight", [E, D])]
    for e in range(E):
        t += mlp(p + "mlp.experts.%d." % e, MFF)
    return t + mlp(p + "mlp.%s." % shared, MFF)


def mixed_tensors(fam):
    """The layers of deepseek2, qwen3next and lfm2."""
    t = []
    for l in range(L):
        p = "model.layers.%d." % l
        if fam == "lfm2":
            t += [(p + "operator_norm.weight", [D]), (p + "ffn_norm.weight", [D]),
                  (p + "feed_forward.w1.weight", [FF, D]), (p + "feed_forward.w3.weight", [FF, D]),
                  (p + "feed_forward.w2.weight", [D, FF])]
            if l == 0:
                t += [(p + "conv.in_proj.weight", [3 * D, D]), (p + "conv.conv.weight", [D, 1, 3]),
                      (p + "conv.out_proj.weight", [D, D])]
            else:
                t += [(p + "self_attn.q_proj.weight", [H * HD, D]), (p + "self_attn.k_proj.weight", [KV * HD, D]),
                      (p + "self_attn.v_proj.weight", [KV * HD, D]), (p + "self_attn.out_proj.weight", [D, H * HD]),
                      (p + "self_attn.q_layernorm.weight", [HD]), (p + "self_attn.k_layernorm.weight", [HD])]
            continue
        t += [(p + "input_layernorm.weight", [D]), (p + "post_attention_layernorm.weight", [D])]
        if fam == "deepseek2":
            a = p + "self_attn."
            t += [(a + "q_proj.weight", [H * (NOPE + ROPE), D]), (a + "kv_a_proj_with_mqa.weight", [LORA + ROPE, D]),
                  (a + "kv_a_layernorm.weight", [LORA]), (a + "kv_b_proj.weight", [H * (NOPE + HD), LORA]),
                  (a + "o_proj.weight", [D, H * HD])]
            t += mlp(p + "mlp.") if l == 0 else experts(p, "shared_experts")
        elif l == 0:
            a, ch = p + "linear_attn.", 2 * KH * KD + VH * VD
            t += [(a + "in_proj_qkvz.weight", [2 * KH * KD + 2 * VH * VD, D]), (a + "in_proj_ba.weight", [2 * VH, D]),
                  (a + "A_log", [VH]), (a + "dt_bias", [VH]), (a + "conv1d.weight", [ch, 1, CONV]),
                  (a + "norm.weight", [VD]), (a + "out_proj.weight", [D, VH * VD])]
            t += experts(p, "shared_expert") + [(p + "mlp.shared_expert_gate.weight", [1, D])]
        else:
            a = p + "self_attn."
            t += [(a + "q_proj.weight", [2 * H * HD, D]), (a + "k_proj.weight", [KV * HD, D]),
                  (a + "v_proj.weight", [KV * HD, D]), (a + "o_proj.weight", [D, H * HD]),
                  (a + "q_norm.weight", [HD]), (a + "k_norm.weight", [HD])]
            t += experts(p, "shared_expert") + [(p + "mlp.shared_expert_gate.weight", [1, D])]
    return t


def tensors(fam):
    """(Hugging Face name, shape) of every tensor of the family."""
    t = [("model.embed_tokens.weight", [V, D]),
         ("model.embedding_norm.weight" if fam == "lfm2" else "model.norm.weight", [D])]
    if fam in ("llama", "mistral", "gptoss", "deepseek2", "qwen3next"):
        t.append(("lm_head.weight", [V, D]))
    if fam in ("deepseek2", "qwen3next", "lfm2"):
        return t + mixed_tensors(fam)
    for l in range(L):
        p = "model.layers.%d." % l
        t += [(p + "input_layernorm.weight", [D]), (p + "post_attention_layernorm.weight", [D]),
              (p + "self_attn.q_proj.weight", [H * HD, D]), (p + "self_attn.k_proj.weight", [KV * HD, D]),
              (p + "self_attn.v_proj.weight", [KV * HD, D]), (p + "self_attn.o_proj.weight", [D, H * HD])]
        if fam in ("qwen2", "gptoss"):
            t += [(p + "self_attn.%s_proj.bias" % x, [n]) for x, n in
                  (("q", H * HD), ("k", KV * HD), ("v", KV * HD))]
        if fam == "gptoss":
            t += [(p + "self_attn.o_proj.bias", [D]), (p + "self_attn.sinks", [H]),
                  (p + "mlp.router.weight", [E, D]), (p + "mlp.router.bias", [E]),
                  (p + "mlp.experts.gate_up_proj", [E, D, 2 * EFF]),
                  (p + "mlp.experts.gate_up_proj_bias", [E, 2 * EFF]),
                  (p + "mlp.experts.down_proj", [E, EFF, D]), (p + "mlp.experts.down_proj_bias", [E, D])]
        else:
            t += [(p + "mlp.gate_proj.weight", [FF, D]), (p + "mlp.up_proj.weight", [FF, D]),
                  (p + "mlp.down_proj.weight", [D, FF])]
        if fam == "qwen3":
            t += [(p + "self_attn.q_norm.weight", [HD]), (p + "self_attn.k_norm.weight", [HD])]
        if fam == "gemma2":
            t += [(p + "pre_feedforward_layernorm.weight", [D]), (p + "post_feedforward_layernorm.weight", [D])]
    return t


def values(name, shape):
    """Deterministic values of a tensor: norms near 1 (Gemma's near 0, as it
    scales by 1 + w), matrices of unit gain, tensor 'probe' the counting
    numbers so a test can read them back."""
    n = 1
    for d in shape:
        n *= d
    r = random.Random(name)
    if name.endswith("norm.weight") or name.endswith("layernorm.weight"):
        return [1 + 0.25 * (2 * r.random() - 1) for _ in range(n)]
    s = math.sqrt(3.0 / shape[-1]) if len(shape) > 1 else 0.5
    return [s * (2 * r.random() - 1) for _ in range(n)]


def gemma_norm(fam, name, v):
    """Gemma 2's and Qwen3-Next's norms scale by 1 + w (but Qwen3-Next's gated one)."""
    offset = fam == "gemma2" or (fam == "qwen3next" and "linear_attn.norm" not in name)
    return [x - 1 for x in v] if offset and "norm" in name else v


def f32r(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def f32(v):
    return struct.pack("<%df" % len(v), *v)


def f16(v):
    return struct.pack("<%de" % len(v), *v)


def bf16(v):
    out = bytearray()
    for x in v:
        b = struct.unpack("<I", struct.pack("<f", x))[0]
        b = (b + 0x7fff + ((b >> 16) & 1)) >> 16       # round to nearest even
        out += struct.pack("<H", b)
    return bytes(out)


ST_PACK = {"f32": ("F32", f32), "f16": ("F16", f16), "bf16": ("BF16", bf16)}


# ---- safetensors ----

def write_st(path, items, brk=None):
    """items: (name, dtype, shape, bytes)."""
    header, off, blobs = {}, 0, []
    for name, dt, shape, data in items:
        header[name] = {"dtype": dt, "shape": shape, "data_offsets": [off, off + len(data)]}
        off += len(data)
        blobs.append(data)
    first = items[0][0]
    if brk == "past":
        header[first]["data_offsets"][1] = off + 4096
    if brk == "farpast":    # an end offset past any file, 2^63 - 1
        header[first]["data_offsets"][1] = (1 << 63) - 1
    if brk == "overlap":
        b, e = header[items[1][0]]["data_offsets"]
        header[items[1][0]]["data_offsets"] = [b - 8, e - 8]
    if brk == "hidden":     # an empty tensor between two that overlap
        header["model.empty"] = {"dtype": "F32", "shape": [0], "data_offsets": [12, 12]}
        n = len(blobs[1])
        header[items[1][0]]["data_offsets"] = [48, 48 + n]
    if brk == "size":
        header[first]["data_offsets"][1] -= 2
        header[items[1][0]]["data_offsets"][0] -= 2
    header["__metadata__"] = {"format": "pt"}
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    if brk == "notjson":
        h = b"{not json" + b" " * 7
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h) + (1 << 20 if brk == "headerlen" else 0)))
        if brk == "truncated":
            f.seek(0)
            f.truncate(5)
            return
        f.write(h)
        for b in blobs:
            f.write(b)


def gen_st(fam, out, dtype="f32", shards=1, brk=None, over=None):
    os.makedirs(out, exist_ok=True)
    cfg = config(fam)
    cfg.update(over or {})
    if brk == "arch":
        cfg["model_type"] = "bert"
    if brk != "noconfig":
        with open(os.path.join(out, "config.json"), "w") as f:
            json.dump(cfg, f, indent=1)
    dt, pack = ST_PACK[dtype]
    items = []
    for name, shape in tensors(fam):
        if brk == "missing" and name == "model.layers.1.mlp.down_proj.weight":
            continue
        data = pack(gemma_norm(fam, name, values(name, shape)))
        d, sh = dt, shape
        if name == "model.layers.0.self_attn.q_proj.weight":
            if brk == "dtype":
                d, data = "I64", data * (8 // len(pack([0.0])))
            if brk == "fp8":
                d, data = "F8_E4M3", data[:len(data) // len(pack([0.0]))]
            if brk == "shape":
                sh, data = [shape[0] // 2, shape[1]], data[:len(data) // 2]
        items.append((name, d, sh, data))
    if shards == 1:
        write_st(os.path.join(out, "model.safetensors"), items, brk)
        return
    names = ["model-%05d-of-%05d.safetensors" % (i + 1, shards) for i in range(shards)]
    per = (len(items) + shards - 1) // shards
    wmap = {}
    for i, fn in enumerate(names):
        part = items[i * per:(i + 1) * per]
        for it in part:
            wmap[it[0]] = fn
        if brk == "noshard" and i == shards - 1:
            continue
        write_st(os.path.join(out, fn), part, brk)
    with open(os.path.join(out, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {}, "weight_map": wmap}, f, indent=1)


# ---- GGUF ----

GGUF_NAMES = [("model.embed_tokens.weight", "token_embd.weight"), ("model.norm.weight", "output_norm.weight"),
              ("lm_head.weight", "output.weight")]
GGUF_LAYER = [("input_layernorm", "attn_norm"), ("self_attn.q_proj", "attn_q"), ("self_attn.k_proj", "attn_k"),
              ("self_attn.v_proj", "attn_v"), ("self_attn.o_proj", "attn_output"),
              ("self_attn.q_norm", "attn_q_norm"), ("self_attn.k_norm", "attn_k_norm"),
              ("mlp.gate_proj", "ffn_gate"), ("mlp.up_proj", "ffn_up"), ("mlp.down_proj", "ffn_down"),
              ("pre_feedforward_layernorm", "ffn_norm"), ("post_feedforward_layernorm", "post_ffw_norm")]
ARCH = {"llama": "llama", "qwen2": "qwen2", "qwen3": "qwen3", "gemma2": "gemma2"}


def gguf_name(fam, hf):
    for a, b in GGUF_NAMES:
        if hf == a:
            return b
    parts = hf.split(".")
    l, rest, kind = parts[2], ".".join(parts[3:-1]), parts[-1]
    if rest == "post_attention_layernorm":
        return "blk.%s.%s.%s" % (l, "post_attention_norm" if fam == "gemma2" else "ffn_norm", kind)
    for a, b in GGUF_LAYER:
        if rest == a:
            return "blk.%s.%s.%s" % (l, b, kind)
    raise KeyError(hf)


def permute(v, shape, heads):
    """llama.cpp's permute: each head's rows [2, hd/2] -> [hd/2, 2]."""
    rows, cols = shape
    hd = rows // heads
    out = []
    for h in range(heads):
        for i in range(hd // 2):
            for j in range(2):
                r = h * hd + j * hd // 2 + i
                out += v[r * cols:(r + 1) * cols]
    return out


def q8_0(v):
    out = bytearray()
    for b in range(0, len(v), 32):
        x = v[b:b + 32]
        d = max(abs(t) for t in x) / 127
        q = [0 if d == 0 else max(-127, min(127, int(round(t / d)))) for t in x]
        out += struct.pack("<e", d) + struct.pack("<32b", *q)
    return bytes(out)


def gstr(s):
    s = s.encode()
    return struct.pack("<Q", len(s)) + s


def kv(key, typ, val):
    if typ == "str":
        return gstr(key) + struct.pack("<I", 8) + gstr(val)
    code, fmt = {"u32": (4, "I"), "f32": (6, "f"), "u64": (10, "Q"), "bool": (7, "?")}[typ]
    return gstr(key) + struct.pack("<I", code) + struct.pack("<" + fmt, val)


def kv_array(key, strings):
    body = b"".join(gstr(s) for s in strings)
    return gstr(key) + struct.pack("<IIQ", 9, 8, len(strings)) + body


def llama3_freqs():
    out = []
    for i in range(0, HD, 2):
        freq = 1.0 / (500000.0 ** (i / HD))
        wl = 2 * math.pi / freq
        if wl < 8192 / 4.0:
            out.append(1.0)
        elif wl > 8192 / 1.0:
            out.append(32.0)
        else:
            s = (8192 / wl - 1.0) / (4.0 - 1.0)
            out.append(1 / ((1 - s) / 32.0 + s))
    return out


def gguf_kv(key, val):
    if isinstance(val, int):
        return kv(key, "u32", val)
    return kv(key, "f32", val) if isinstance(val, float) else kv(key, "str", val)


def vocab_keys(path):
    """The key-values of a GGUF that holds no tensors, as they lie, and
    their count."""
    b = open(path, "rb").read()
    return [b[24:]], struct.unpack_from("<Q", b, 16)[0]


def gen_gguf(fam, path, typ="f32", brk=None, over=None, vocab=None):
    arch = ARCH[fam]
    cfg = config(fam)
    over = over or {}
    kvs = [kv("general.architecture", "str", "mamba" if brk == "arch" else arch),
           kv("general.name", "str", "tiny-%s-gguf" % fam),
           kv(arch + ".context_length", "u32", 128), kv(arch + ".embedding_length", "u32", D),
           kv(arch + ".block_count", "u32", L), kv(arch + ".feed_forward_length", "u32", FF),
           kv(arch + ".attention.head_count", "u32", H), kv(arch + ".attention.head_count_kv", "u32", KV),
           kv(arch + ".attention.key_length", "u32", HD), kv(arch + ".attention.value_length", "u32", HD),
           kv(arch + ".rope.freq_base", "f32", cfg.get("rope_theta", 10000.0) if fam != "qwen3" else 1000000.0),
           kv(arch + ".attention.layer_norm_rms_epsilon", "f32", cfg["rms_norm_eps"]),
           kv(arch + ".rope.dimension_count", "u32", HD),
           kv_array("tokenizer.ggml.tokens", ["<t%d>" % i for i in range(V)])]
    if brk == "strlen":     # general.name's length runs past the file
        kvs[1] = gstr("general.name") + struct.pack("<IQ", 8, 1 << 40) + b"tiny"
    if brk == "nested":     # an array of arrays six deep, innermost an empty u32 array
        kvs.append(gstr("test.nested") + struct.pack("<I", 9) + struct.pack("<IQ", 9, 1) * 5 + struct.pack("<IQ", 4, 0))
    if fam == "gemma2":
        kvs += [kv("gemma2.attention.sliding_window", "u32", 16),
                kv("gemma2.attn_logit_softcapping", "f32", 50.0),
                kv("gemma2.final_logit_softcapping", "f32", 30.0)]
    kvs = [b for b in kvs if b[8:8 + struct.unpack_from("<Q", b)[0]].decode() not in over]
    kvs += [gguf_kv(k, v) for k, v in over.items()]
    nkv = len(kvs)
    if vocab:   # its keys in place of the placeholder tokens
        kvs = [b for b in kvs if not b[8:].startswith(b"tokenizer.")]
        extra, n = vocab_keys(vocab)
        nkv = len(kvs) + n
        kvs += extra
    infos, blobs = [], []
    for hf, shape in tensors(fam):
        v = values(hf, shape)
        if fam == "gemma2" and "norm" in hf:    # the converter stores 1 + w, w as the folder has it
            v = [f32r(f32r(x - 1) + 1) for x in v]
        if fam == "llama" and ("q_proj.weight" in hf or "k_proj.weight" in hf):
            v = permute(v, shape, H if "q_proj" in hf else KV)
        t = 0
        if len(shape) == 2 and typ == "q8_0":
            t, data = 8, q8_0(v)
        elif len(shape) == 2 and typ == "f16":
            t, data = 1, f16(v)
        else:
            data = f32(v)
        name = gguf_name(fam, hf)
        if brk == "type" and name == "blk.0.attn_q.weight":
            t = 12
        infos.append((name, shape, t, data))
    if fam == "llama":
        infos.append(("rope_freqs.weight", [HD // 2], 0, f32(llama3_freqs())))
    head = b"GGUF" + struct.pack("<I", 7 if brk == "version" else 3)
    head += struct.pack("<QQ", (1 << 40) if brk == "tcount" else len(infos), (1 << 40) if brk == "kvcount" else nkv)
    if brk == "magic":
        head = b"GGUG" + head[4:]
    head += b"".join(kvs)
    off = 0
    for name, shape, t, data in infos:
        head += gstr(name) + struct.pack("<I", len(shape))
        head += b"".join(struct.pack("<Q", d) for d in reversed(shape))
        head += struct.pack("<IQ", t, off)
        blobs.append(data + b"\0" * (-len(data) % 32))
        off += len(blobs[-1])
    head += b"\0" * (-len(head) % 32)
    body = b"".join(blobs)
    if brk == "data":
        body = body[:-4096]
    with open(path, "wb") as f:
        f.write(head + body)


def q8blocks(path, tensor, out):
    """The blocks of a Q8_0 tensor as separate quants and scales (a reader
    of just enough GGUF for the files this script writes)."""
    b = open(path, "rb").read()
    p = 4 + 4 + 16
    nt, nkv = struct.unpack_from("<QQ", b, 8)

    def s(p):
        n = struct.unpack_from("<Q", b, p)[0]
        return b[p + 8:p + 8 + n].decode(), p + 8 + n
    for _ in range(nkv):
        _, p = s(p)
        typ = struct.unpack_from("<I", b, p)[0]
        p += 4
        if typ == 8:
            _, p = s(p)
        elif typ == 9:
            et, n = struct.unpack_from("<IQ", b, p)
            p += 12
            for _ in range(n):
                _, p = s(p)
        else:
            p += {4: 4, 6: 4, 10: 8, 7: 1}[typ]
    found = None
    for _ in range(nt):
        name, p = s(p)
        nd = struct.unpack_from("<I", b, p)[0]
        ne = struct.unpack_from("<%dQ" % nd, b, p + 4)
        t, off = struct.unpack_from("<IQ", b, p + 4 + 8 * nd)
        p += 4 + 8 * nd + 12
        if name == tensor:
            found = (ne, t, off)
    start = p + (-p % 32)
    ne, t, off = found
    n = 1
    for d in ne:
        n *= d
    blocks = b[start + off:start + off + n // 32 * 34]
    with open(out + ".q", "wb") as fq, open(out + ".s", "wb") as fs:
        for k in range(n // 32):
            fs.write(blocks[34 * k:34 * k + 2])
            fq.write(blocks[34 * k + 2:34 * k + 34])


def stf32(d, tensor, out):
    for fn in sorted(os.listdir(d)):
        if not fn.endswith(".safetensors"):
            continue
        b = open(os.path.join(d, fn), "rb").read()
        n = struct.unpack_from("<Q", b)[0]
        h = json.loads(b[8:8 + n])
        if tensor not in h:
            continue
        s, e = h[tensor]["data_offsets"]
        raw = b[8 + n + s:8 + n + e]
        dt = h[tensor]["dtype"]
        if dt == "F16":
            raw = f32(struct.unpack("<%de" % (len(raw) // 2), raw))
        elif dt == "BF16":
            raw = b"".join(b"\0\0" + raw[i:i + 2] for i in range(0, len(raw), 2))
        open(out, "wb").write(raw)
        return
    sys.exit("gen.py: no tensor %s" % tensor)


def gen_big(out, gb):
    """Llama-3-8B's shapes (dim 4096, 32 heads of 128, 8 kv heads, hidden
    14336, vocab 128256) with as many layers as make GB gigabytes of bf16
    zeros; each tensor is written a megabyte at a time."""
    d, hd, ff, v = 4096, 128, 14336, 128256
    per = 2 * (4096 * 4096 * 2 + 1024 * 4096 * 2 + 3 * ff * d) + 4 * d
    layers = max(1, int((gb * 1e9 - 2 * 2 * v * d) // per) + 1)
    cfg = {"model_type": "llama", "vocab_size": v, "hidden_size": d, "num_hidden_layers": layers,
           "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": ff,
           "max_position_embeddings": 8192, "rms_norm_eps": 1e-5, "rope_theta": 500000.0,
           "tie_word_embeddings": False, "_name_or_path": "big-llama"}
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(cfg, f)
    shapes = [("model.embed_tokens.weight", [v, d]), ("model.norm.weight", [d]), ("lm_head.weight", [v, d])]
    for l in range(layers):
        p = "model.layers.%d." % l
        shapes += [(p + "input_layernorm.weight", [d]), (p + "post_attention_layernorm.weight", [d]),
                   (p + "self_attn.q_proj.weight", [d, d]), (p + "self_attn.k_proj.weight", [1024, d]),
                   (p + "self_attn.v_proj.weight", [1024, d]), (p + "self_attn.o_proj.weight", [d, d]),
                   (p + "mlp.gate_proj.weight", [ff, d]), (p + "mlp.up_proj.weight", [ff, d]),
                   (p + "mlp.down_proj.weight", [d, ff])]
    header, off = {}, 0
    for name, shape in shapes:
        n = 2
        for x in shape:
            n *= x
        header[name] = {"dtype": "BF16", "shape": shape, "data_offsets": [off, off + n]}
        off += n
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(os.path.join(out, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        f.truncate(8 + len(h) + off)     # a sparse file of zeros
    print("%d layers, %.2f GB" % (layers, (8 + len(h) + off) / 1e9))


def main(argv):
    opts = {}
    args = []
    i = 0
    while i < len(argv):
        if argv[i].startswith("--"):
            opts[argv[i][2:]] = argv[i + 1]
            i += 2
        else:
            args.append(argv[i])
            i += 1
    if args[:1] == ["st"]:
        gen_st(args[1], args[2], opts.get("dtype", "f32"), int(opts.get("shards", 1)), opts.get("break"),
               json.loads(opts.get("config", "{}")))
    elif args[:1] == ["gguf"]:
        gen_gguf(args[1], args[2], opts.get("type", "f32"), opts.get("break"), json.loads(opts.get("config", "{}")),
                 opts.get("vocab"))
    elif args[:1] == ["q8blocks"]:
        q8blocks(args[1], args[2], args[3])
    elif args[:1] == ["stf32"]:
        stf32(args[1], args[2], args[3])
    elif args[:1] == ["big"]:
        gen_big(args[1], float(args[2]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
