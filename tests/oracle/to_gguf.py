#!/usr/bin/env python3
"""to_gguf.py — writes a Hugging Face Llama as a GGUF (version 3) the way
llama.cpp's convert_hf_to_gguf.py does at --outtype q8_0: llama.cpp's tensor
names, the llama.* metadata, the query and key rows of each head permuted into
interleaved rotary pairs, a rope_freqs tensor for Llama 3's rope scaling,
every 2-D weight as Q8_0 blocks (f16 d, 32 int8; d = amax/127, quants rounded
to nearest, halves away from zero) and the norms as F32.

    python3 to_gguf.py HF_DIR OUT.gguf

Needs numpy, and torch + transformers only to read the checkpoint."""

import math
import struct
import sys

import numpy as np

GGUF_MAGIC, GGUF_VERSION, ALIGN = b"GGUF", 3, 32
T_U32, T_F32, T_STRING, T_ARRAY = 4, 6, 8, 9
GGML_F32, GGML_Q8_0 = 0, 8
FTYPE_Q8_0 = 7


def q8_0(x):
    """Q8_0 of a float array whose last dimension is whole 32-value blocks, as
    logos-weights(5) states it: (int8 quants, f16 scales), one scale a block."""
    b = np.asarray(x, dtype=np.float32).reshape(-1, 32)
    d = np.abs(b).max(axis=1, keepdims=True) / np.float32(127)
    v = np.where(d > 0, b / np.where(d > 0, d, np.float32(1)), np.float32(0)).astype(np.float32)
    r = np.trunc(v)
    r = r + np.where(np.abs(v - r) >= 0.5, np.sign(v), 0)   # halves away from zero, exactly
    q = np.clip(r, -127, 127).astype(np.int8)
    return q.reshape(-1), d.reshape(-1).astype(np.float16)


def permute(w, n_head):
    """convert_hf_to_gguf.py's LlamaModel.permute: halves to interleaved pairs."""
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def llama3_rope_freqs(theta, dim, rs):
    """The rope_freqs tensor convert_hf_to_gguf.py writes for rope_type llama3."""
    factor = rs.get("factor", 8.0)
    low, high = rs.get("low_freq_factor", 1.0), rs.get("high_freq_factor", 4.0)
    old = rs.get("original_max_position_embeddings", 8192)
    lw, hw = old / low, old / high
    out = []
    for i in range(0, dim, 2):
        freq = 1.0 / (theta ** (i / dim))
        wl = 2 * math.pi / freq
        if wl < hw:
            out.append(1.0)
        elif wl > lw:
            out.append(factor)
        else:
            s = (old / wl - low) / (high - low)
            out.append(1 / ((1 - s) / factor + s))
    return np.array(out, dtype=np.float32)


def _str(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def _kv(key, typ, val):
    out = _str(key) + struct.pack("<I", typ)
    if typ == T_U32:
        return out + struct.pack("<I", val)
    if typ == T_F32:
        return out + struct.pack("<f", val)
    if typ == T_STRING:
        return out + _str(val)
    raise ValueError(typ)


def write_gguf(path, meta, tensors):
    """meta: [(key, type, value)]; tensors: [(name, np array f32, ggml type)]."""
    infos, blobs, off = [], [], 0
    for name, a, typ in tensors:
        a = np.ascontiguousarray(a, dtype=np.float32)
        if typ == GGML_Q8_0:
            q, d = q8_0(a)
            blk = np.empty((q.size // 32,), dtype=[("d", "<f2"), ("q", "i1", (32,))])
            blk["d"], blk["q"] = d, q.reshape(-1, 32)
            data = blk.tobytes()
        else:
            data = a.astype("<f4").tobytes()
        dims = list(reversed(a.shape))   # ne[0] varies fastest
        infos.append(_str(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", n) for n in dims) +
                     struct.pack("<IQ", typ, off))
        pad = (-len(data)) % ALIGN
        blobs.append(data + b"\0" * pad)
        off += len(data) + pad
    head = GGUF_MAGIC + struct.pack("<IQQ", GGUF_VERSION, len(tensors), len(meta))
    head += b"".join(_kv(*m) for m in meta) + b"".join(infos)
    head += b"\0" * ((-len(head)) % ALIGN)
    with open(path, "wb") as f:
        f.write(head)
        for b in blobs:
            f.write(b)


def llama_gguf(sd, c, path):
    """Writes a Llama state dict (name -> np f32 array) with its config c."""
    hd = getattr(c, "head_dim", None) or c.hidden_size // c.num_attention_heads
    rp = getattr(c, "rope_parameters", None) or dict(getattr(c, "rope_scaling", None) or {},
                                                      rope_theta=getattr(c, "rope_theta", 10000.0))
    theta = float(rp.get("rope_theta", 10000.0))
    meta = [("general.architecture", T_STRING, "llama"),
            ("general.name", T_STRING, "oracle-llama"),
            ("general.file_type", T_U32, FTYPE_Q8_0),
            ("llama.vocab_size", T_U32, c.vocab_size),
            ("llama.context_length", T_U32, c.max_position_embeddings),
            ("llama.embedding_length", T_U32, c.hidden_size),
            ("llama.block_count", T_U32, c.num_hidden_layers),
            ("llama.feed_forward_length", T_U32, c.intermediate_size),
            ("llama.rope.dimension_count", T_U32, hd),
            ("llama.attention.head_count", T_U32, c.num_attention_heads),
            ("llama.attention.head_count_kv", T_U32, c.num_key_value_heads),
            ("llama.attention.key_length", T_U32, hd),
            ("llama.attention.value_length", T_U32, hd),
            ("llama.attention.layer_norm_rms_epsilon", T_F32, c.rms_norm_eps),
            ("llama.rope.freq_base", T_F32, theta)]
    t = [("token_embd.weight", sd["model.embed_tokens.weight"], GGML_Q8_0)]
    if rp.get("rope_type") == "llama3":
        t.append(("rope_freqs.weight", llama3_rope_freqs(theta, hd, rp), GGML_F32))
    for l in range(c.num_hidden_layers):
        p, b = f"model.layers.{l}.", f"blk.{l}."
        g = lambda n: sd[p + n]
        t += [(b + "attn_norm.weight", g("input_layernorm.weight"), GGML_F32),
              (b + "attn_q.weight", permute(g("self_attn.q_proj.weight"), c.num_attention_heads), GGML_Q8_0),
              (b + "attn_k.weight", permute(g("self_attn.k_proj.weight"), c.num_key_value_heads), GGML_Q8_0),
              (b + "attn_v.weight", g("self_attn.v_proj.weight"), GGML_Q8_0),
              (b + "attn_output.weight", g("self_attn.o_proj.weight"), GGML_Q8_0),
              (b + "ffn_norm.weight", g("post_attention_layernorm.weight"), GGML_F32),
              (b + "ffn_gate.weight", g("mlp.gate_proj.weight"), GGML_Q8_0),
              (b + "ffn_up.weight", g("mlp.up_proj.weight"), GGML_Q8_0),
              (b + "ffn_down.weight", g("mlp.down_proj.weight"), GGML_Q8_0)]
    t.append(("output_norm.weight", sd["model.norm.weight"], GGML_F32))
    if not c.tie_word_embeddings:
        t.append(("output.weight", sd["lm_head.weight"], GGML_Q8_0))
    write_gguf(path, meta, t)


def model_gguf(model, path):
    sd = {k: v.detach().float().cpu().numpy() for k, v in model.state_dict().items()}
    llama_gguf(sd, model.config, path)


def main(argv):
    if len(argv) != 3:
        sys.stderr.write("usage: to_gguf.py HF_DIR OUT.gguf\n")
        return 2
    import transformers
    m = transformers.AutoModelForCausalLM.from_pretrained(argv[1], dtype="float32")
    model_gguf(m, argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
