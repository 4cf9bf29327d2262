"""The families the oracle checks: how to build each one as a small random
Hugging Face model, and where each LOGOS weight lies among its parameters.

Adding a family is one entry in FAMILIES: a name, a function that returns
(config class name, model class name, config keyword arguments), the layer map
and options. Every model is built from its config with random weights (no
download), so the classes only need to exist in the installed transformers.
"""

import json

# Shapes shared by every family: whole 32-value blocks everywhere.
VOCAB, DIM, HEADS, KV, HD, HIDDEN = 256, 64, 4, 2, 16, 128


def _base(**kw):
    c = dict(vocab_size=VOCAB, hidden_size=DIM, intermediate_size=HIDDEN, num_hidden_layers=2,
             num_attention_heads=HEADS, num_key_value_heads=KV, head_dim=HD, max_position_embeddings=128,
             rms_norm_eps=1e-5, tie_word_embeddings=False, pad_token_id=None, bos_token_id=None,
             eos_token_id=None)
    c.update(kw)
    return c


def llama():
    # Llama 3's own scaling (llama.cpp's GGUF carries it as rope_freqs, which
    # assumes the original 8192): at these positions it moves the logits by
    # about 3e-3, well above the bound
    return "LlamaConfig", "LlamaForCausalLM", _base(
        max_position_embeddings=131072,
        rope_parameters={"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0, "low_freq_factor": 1.0,
                         "high_freq_factor": 4.0, "original_max_position_embeddings": 8192})


def llama_short():
    """Llama 3's scaling from a short original context, so that it bends the
    rotations of these positions hard (a wrong factor shows)."""
    c, m, kw = llama()
    kw.update(max_position_embeddings=128, rope_parameters=dict(kw["rope_parameters"],
                                                                  original_max_position_embeddings=64))
    return c, m, kw


def mistral():
    return "MistralConfig", "MistralForCausalLM", _base(
        sliding_window=8, rope_parameters={"rope_type": "default", "rope_theta": 10000.0})


def qwen2():
    return "Qwen2Config", "Qwen2ForCausalLM", _base(
        rms_norm_eps=1e-6, tie_word_embeddings=True, rope_parameters={"rope_type": "default", "rope_theta": 1e6})


def qwen3():
    return "Qwen3Config", "Qwen3ForCausalLM", _base(
        head_dim=32, rms_norm_eps=1e-6, tie_word_embeddings=True,
        rope_parameters={"rope_type": "default", "rope_theta": 1e6})


def gemma2():
    return "Gemma2Config", "Gemma2ForCausalLM", _base(
        num_hidden_layers=3, head_dim=32, rms_norm_eps=1e-6, tie_word_embeddings=True, query_pre_attn_scalar=24,
        sliding_window=8, final_logit_softcapping=3.0, attn_logit_softcapping=2.0,
        hidden_activation="gelu_pytorch_tanh", rope_parameters={"rope_type": "default", "rope_theta": 10000.0})


def gpt_oss():
    return "GptOssConfig", "GptOssForCausalLM", _base(
        intermediate_size=64, num_local_experts=4, num_experts_per_tok=2, sliding_window=8,
        rope_parameters={"rope_type": "yarn", "rope_theta": 150000.0, "factor": 4.0, "beta_fast": 32.0,
                         "beta_slow": 1.0, "truncate": False, "original_max_position_embeddings": 32})


# ---- the LOGOS name of each Hugging Face parameter ----
#
# A map entry is (logos name, hf parameter name, kind): kind "plain" is the same
# values; "gu0"/"gu1" take gpt-oss's interleaved gate/up columns [E, d, 2n]
# (even: gate, odd: up) as [E, n, d]; "t" transposes [E, a, b] to [E, b, a];
# "h0"/"h1" take the even/odd values of [E, 2n] biases.

def _attn(l, p, bias="", qk_norm=False, sinks=False):
    m = [(f"nm{l}", f"{p}.input_layernorm.weight", "plain")]
    for x in "qkvo":
        m.append((f"w{x}{l}", f"{p}.self_attn.{x}_proj.weight", "plain"))
        if x in bias:
            m.append((f"{x}b{l}", f"{p}.self_attn.{x}_proj.bias", "plain"))
    if qk_norm:
        m += [(f"nq{l}", f"{p}.self_attn.q_norm.weight", "plain"), (f"nk{l}", f"{p}.self_attn.k_norm.weight", "plain")]
    if sinks:
        m.append((f"sk{l}", f"{p}.self_attn.sinks", "plain"))
    return m


def _dense(l, p):
    return [(f"w{x}{l}", f"{p}.mlp.{n}_proj.weight", "plain") for x, n in (("g", "gate"), ("u", "up"), ("d", "down"))]


def map_dense(bias="", qk_norm=False, sandwich=False):
    def layer(l):
        p = f"model.layers.{l}"
        m = _attn(l, p, bias, qk_norm) + _dense(l, p)
        if sandwich:
            m += [(f"npm{l}", f"{p}.post_attention_layernorm.weight", "plain"),
                  (f"nfn{l}", f"{p}.pre_feedforward_layernorm.weight", "plain"),
                  (f"npf{l}", f"{p}.post_feedforward_layernorm.weight", "plain")]
        else:
            m.append((f"nfn{l}", f"{p}.post_attention_layernorm.weight", "plain"))
        return m
    return layer


def map_gpt_oss(l):
    p = f"model.layers.{l}"
    e = f"{p}.mlp.experts"
    return _attn(l, p, "qkvo", sinks=True) + [
        (f"nfn{l}", f"{p}.post_attention_layernorm.weight", "plain"),
        (f"wr{l}", f"{p}.mlp.router.weight", "plain"),
        (f"rb{l}", f"{p}.mlp.router.bias", "plain"),
        (f"weg{l}", f"{e}.gate_up_proj", "gu0"),
        (f"weu{l}", f"{e}.gate_up_proj", "gu1"),
        (f"wed{l}", f"{e}.down_proj", "t"),
        (f"egb{l}", f"{e}.gate_up_proj_bias", "h0"),
        (f"eub{l}", f"{e}.gate_up_proj_bias", "h1"),
        (f"edb{l}", f"{e}.down_proj_bias", "plain"),
    ]


def legacy_rope_keys(cfgfile):
    """Rewrites a saved config.json the way transformers 4 wrote it (and most
    checkpoints on the Hub are): rope_theta at the top, rope_scaling beside."""
    with open(cfgfile) as f:
        c = json.load(f)
    rp = c.pop("rope_parameters")
    c["rope_theta"] = rp.pop("rope_theta")
    c["rope_scaling"] = None if rp.get("rope_type") == "default" else rp
    with open(cfgfile, "w") as f:
        json.dump(c, f, indent=2)


# name: (build, layer map, options). Options: dtype (the checkpoint's dtype),
# offset (norm weights are stored as w with (1 + w) applied), post_save (a
# function of config.json's path run after saving).
FAMILIES = {
    "llama": (llama, map_dense(), {}),
    "llama_cfg4": (llama_short, map_dense(), {"post_save": legacy_rope_keys}),
    "llama_bf16": (llama, map_dense(), {"dtype": "bfloat16"}),
    "mistral": (mistral, map_dense(), {}),
    "qwen2": (qwen2, map_dense(bias="qkv"), {}),
    "qwen3": (qwen3, map_dense(qk_norm=True), {}),
    "gemma2": (gemma2, map_dense(sandwich=True), {"offset": True}),
    "gpt_oss": (gpt_oss, map_gpt_oss, {}),
}
DEFAULT = ["llama", "llama_cfg4", "llama_bf16", "mistral", "qwen2", "qwen3", "gemma2", "gpt_oss"]


def weight_map(fam, config):
    """[(logos, hf, kind)] of the whole model."""
    _, layer, _ = FAMILIES[fam]
    m = [("emb", "model.embed_tokens.weight", "plain"), ("nf", "model.norm.weight", "plain")]
    if not config.tie_word_embeddings:
        m.append(("head", "lm_head.weight", "plain"))
    for l in range(config.num_hidden_layers):
        m += layer(l)
    return m


def to_logos(t, kind):
    """The LOGOS layout of a parameter's values (a torch tensor)."""
    if kind == "plain":
        return t
    if kind in ("gu0", "gu1"):
        return t[:, :, int(kind[2])::2].transpose(1, 2)
    if kind == "t":
        return t.transpose(1, 2)
    if kind in ("h0", "h1"):
        return t[:, int(kind[1])::2]
    raise ValueError(kind)


def assign(param, kind, values):
    """Writes LOGOS-layout values (a flat f32 torch tensor) into a parameter."""
    if kind == "plain":
        param.data.copy_(values.reshape(param.shape))
    elif kind in ("gu0", "gu1"):
        E, d, n2 = param.shape
        param.data[:, :, int(kind[2])::2] = values.reshape(E, n2 // 2, d).transpose(1, 2)
    elif kind == "t":
        E, a, b = param.shape
        param.data.copy_(values.reshape(E, b, a).transpose(1, 2))
    elif kind in ("h0", "h1"):
        E, n2 = param.shape
        param.data[:, int(kind[1])::2] = values.reshape(E, n2 // 2)
    else:
        raise ValueError(kind)
