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


def deepseek_v2():
    """DeepSeek-V2-Lite's layout: no query compression, a dense first layer,
    then greedy softmax routing over 8 experts with two shared ones. Its
    latent norms' epsilon is transformers' fixed 1e-6, as the model's is."""
    return "DeepseekV2Config", "DeepseekV2ForCausalLM", _base(
        num_hidden_layers=3, num_key_value_heads=HEADS, rms_norm_eps=1e-6, q_lora_rank=None, kv_lora_rank=32,
        qk_nope_head_dim=16, qk_rope_head_dim=16, v_head_dim=16, n_routed_experts=8, num_experts_per_tok=2,
        moe_intermediate_size=32, n_shared_experts=2, first_k_dense_replace=1,
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0})


def deepseek_v2_lora():
    """DeepSeek-V2's own: query compression, group-limited routing with a
    routed scaling factor, yarn with mscale and mscale_all_dim apart (the
    rotation's factor and the softmax scale both move). Its model norms'
    epsilon (1e-5) differs from the latent norms' fixed 1e-6."""
    c, m, kw = deepseek_v2()
    kw.update(q_lora_rank=32, rms_norm_eps=1e-5, topk_method="group_limited_greedy", n_group=2, topk_group=1,
              routed_scaling_factor=2.5, first_k_dense_replace=0,
              rope_parameters={"rope_type": "yarn", "rope_theta": 10000.0, "factor": 4.0, "beta_fast": 32.0,
                               "beta_slow": 1.0, "mscale": 0.707, "mscale_all_dim": 1.0,
                               "original_max_position_embeddings": 32})
    return c, m, kw


def qwen3_next():
    """Three delta layers, then gated attention rotating half of each head;
    a mixture with a gated shared expert, but a dense layer 1."""
    return "Qwen3NextConfig", "Qwen3NextForCausalLM", _base(
        num_hidden_layers=4, rms_norm_eps=1e-6, linear_num_key_heads=2, linear_num_value_heads=4,
        linear_key_head_dim=16, linear_value_head_dim=16, linear_conv_kernel_dim=4, num_experts=8,
        num_experts_per_tok=2, moe_intermediate_size=32, shared_expert_intermediate_size=32, mlp_only_layers=[1],
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.5})


def lfm2():
    """Convolutions and one attention layer; intermediate_size 192 becomes
    128 by block_auto_adjust_ff_dim."""
    return "Lfm2Config", "Lfm2ForCausalLM", _base(
        num_hidden_layers=4, intermediate_size=192, block_multiple_of=32, full_attn_idxs=[2], norm_eps=1e-5,
        tie_word_embeddings=True, rope_parameters={"rope_type": "default", "rope_theta": 1000000.0})


def lfm2_bias():
    """LFM2 with conv_bias (biases on in_proj, the convolution and out_proj)
    and its feed-forward width rounded up to block_multiple_of (192 -> 256)."""
    c, m, kw = lfm2()
    kw.update(conv_bias=True, block_multiple_of=256, full_attn_idxs=[0, 3])
    return c, m, kw


# ---- the LOGOS name of each Hugging Face parameter ----
#
# A map entry is (logos name, hf parameter name, kind): kind "plain" is the same
# values; "gu0"/"gu1" take gpt-oss's interleaved gate/up columns [E, d, 2n]
# (even: gate, odd: up) as [E, n, d]; "t" transposes [E, a, b] to [E, b, a];
# "h0"/"h1" take the even/odd values of [E, 2n] biases; "rows/G/AT/N" takes
# rows AT to AT+N of each group of G rows (kv_b_proj's keys and values,
# in_proj_qkvz and in_proj_ba per key head, the halves of gate_up_proj). A
# layer map is a function of the layer and the model's config.

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


def _dense(l, p, mlp="mlp", names=("gate_proj", "up_proj", "down_proj")):
    return [(f"w{x}{l}", f"{p}.{mlp}.{n}.weight", "plain") for x, n in zip("gud", names)]


def _moe(l, p, shared="shared_experts", gate=False, hidden=32):
    e = f"{p}.mlp.experts"
    m = [(f"wr{l}", f"{p}.mlp.gate.weight", "plain"),
         (f"weg{l}", f"{e}.gate_up_proj", f"rows/{2 * hidden}/0/{hidden}"),
         (f"weu{l}", f"{e}.gate_up_proj", f"rows/{2 * hidden}/{hidden}/{hidden}"),
         (f"wed{l}", f"{e}.down_proj", "plain")]
    m += [(f"ws{x}{l}", f"{p}.mlp.{shared}.{n}_proj.weight", "plain") for x, n in zip("gud", ("gate", "up", "down"))]
    if gate:
        m.append((f"wsgt{l}", f"{p}.mlp.shared_expert_gate.weight", "plain"))
    return m


def map_dense(bias="", qk_norm=False, sandwich=False):
    def layer(l, config):
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


def map_gpt_oss(l, config):
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


def map_deepseek(l, c):
    p, a = f"model.layers.{l}", f"model.layers.{l}.self_attn"
    kv = c.qk_nope_head_dim + c.v_head_dim
    m = [(f"nm{l}", f"{p}.input_layernorm.weight", "plain"), (f"nfn{l}", f"{p}.post_attention_layernorm.weight", "plain"),
         (f"wkva{l}", f"{a}.kv_a_proj_with_mqa.weight", "plain"), (f"nkva{l}", f"{a}.kv_a_layernorm.weight", "plain"),
         (f"wkb{l}", f"{a}.kv_b_proj.weight", f"rows/{kv}/0/{c.qk_nope_head_dim}"),
         (f"wvb{l}", f"{a}.kv_b_proj.weight", f"rows/{kv}/{c.qk_nope_head_dim}/{c.v_head_dim}"),
         (f"wo{l}", f"{a}.o_proj.weight", "plain")]
    if c.q_lora_rank is None:
        m.append((f"wq{l}", f"{a}.q_proj.weight", "plain"))
    else:
        m += [(f"wqa{l}", f"{a}.q_a_proj.weight", "plain"), (f"nqa{l}", f"{a}.q_a_layernorm.weight", "plain"),
              (f"wqb{l}", f"{a}.q_b_proj.weight", "plain")]
    return m + (_dense(l, p) if l < c.first_k_dense_replace else _moe(l, p, hidden=c.moe_intermediate_size))


def map_qwen3_next(l, c):
    p, a = f"model.layers.{l}", f"model.layers.{l}.linear_attn"
    if c.layer_types[l] == "full_attention":
        m = _attn(l, p, qk_norm=True)
    else:
        dk, r = c.linear_key_head_dim, c.linear_num_value_heads // c.linear_num_key_heads
        vw = r * c.linear_value_head_dim
        g = 2 * dk + 2 * vw
        m = [(f"nm{l}", f"{p}.input_layernorm.weight", "plain")]
        m += [(f"wd{x}{l}", f"{a}.in_proj_qkvz.weight", f"rows/{g}/{at}/{n}")
              for x, at, n in (("q", 0, dk), ("k", dk, dk), ("v", 2 * dk, vw), ("z", 2 * dk + vw, vw))]
        m += [(f"wdb{l}", f"{a}.in_proj_ba.weight", f"rows/{2 * r}/0/{r}"),
              (f"wda{l}", f"{a}.in_proj_ba.weight", f"rows/{2 * r}/{r}/{r}"),
              (f"alog{l}", f"{a}.A_log", "plain"), (f"dtb{l}", f"{a}.dt_bias", "plain"),
              (f"wcv{l}", f"{a}.conv1d.weight", "plain"), (f"ndn{l}", f"{a}.norm.weight", "plain"),
              (f"wo{l}", f"{a}.out_proj.weight", "plain")]
    m.append((f"nfn{l}", f"{p}.post_attention_layernorm.weight", "plain"))
    moe = l not in c.mlp_only_layers and c.num_experts > 0 and (l + 1) % c.decoder_sparse_step == 0
    return m + (_moe(l, p, "shared_expert", True, c.moe_intermediate_size) if moe else _dense(l, p))


def map_lfm2(l, c):
    p = f"model.layers.{l}"
    m = [(f"nm{l}", f"{p}.operator_norm.weight", "plain"), (f"nfn{l}", f"{p}.ffn_norm.weight", "plain")]
    if c.layer_types[l] == "full_attention":
        a = f"{p}.self_attn"
        m += [(f"w{x}{l}", f"{a}.{x}_proj.weight", "plain") for x in "qkv"]
        m += [(f"wo{l}", f"{a}.out_proj.weight", "plain"), (f"nq{l}", f"{a}.q_layernorm.weight", "plain"),
              (f"nk{l}", f"{a}.k_layernorm.weight", "plain")]
    else:
        m += [(f"wci{l}", f"{p}.conv.in_proj.weight", "plain"), (f"wcv{l}", f"{p}.conv.conv.weight", "plain"),
              (f"wco{l}", f"{p}.conv.out_proj.weight", "plain")]
        if c.conv_bias:
            m += [(f"cib{l}", f"{p}.conv.in_proj.bias", "plain"), (f"cvb{l}", f"{p}.conv.conv.bias", "plain"),
                  (f"cob{l}", f"{p}.conv.out_proj.bias", "plain")]
    return m + _dense(l, p, "feed_forward", ("w1", "w3", "w2"))


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


def qwen3_next_legacy(cfgfile):
    """Qwen3-Next's config.json as published: rope_theta and
    partial_rotary_factor at the top, full_attention_interval for the layer
    types."""
    with open(cfgfile) as f:
        c = json.load(f)
    rp = c.pop("rope_parameters")
    c["rope_theta"], c["partial_rotary_factor"] = rp["rope_theta"], rp["partial_rotary_factor"]
    c.pop("layer_types")
    c["full_attention_interval"] = 4
    with open(cfgfile, "w") as f:
        json.dump(c, f, indent=2)


def lfm2_legacy(cfgfile):
    """LFM2's config.json as published: block_ff_dim, tie_embedding,
    full_attn_idxs and rope_theta, no layer_types."""
    with open(cfgfile) as f:
        c = json.load(f)
    c["block_ff_dim"] = c.pop("intermediate_size")
    c["tie_embedding"] = c.pop("tie_word_embeddings")
    c["rope_theta"] = c.pop("rope_parameters")["rope_theta"]
    c.pop("layer_types")
    with open(cfgfile, "w") as f:
        json.dump(c, f, indent=2)


# name: (build, layer map, options). Options: dtype (the checkpoint's dtype),
# offset (norm weights are stored as w with (1 + w) applied), plain_norms
# (names of norms that scale by w all the same), final_norm (the final norm's
# name), post_save (a function of config.json's path run after saving).
FAMILIES = {
    "llama": (llama, map_dense(), {}),
    "llama_cfg4": (llama_short, map_dense(), {"post_save": legacy_rope_keys}),
    "llama_bf16": (llama, map_dense(), {"dtype": "bfloat16"}),
    "mistral": (mistral, map_dense(), {}),
    "qwen2": (qwen2, map_dense(bias="qkv"), {}),
    "qwen3": (qwen3, map_dense(qk_norm=True), {}),
    "gemma2": (gemma2, map_dense(sandwich=True), {"offset": True}),
    "gpt_oss": (gpt_oss, map_gpt_oss, {}),
    "deepseek_v2": (deepseek_v2, map_deepseek, {}),
    "deepseek_v2_lora": (deepseek_v2_lora, map_deepseek, {}),
    "qwen3_next": (qwen3_next, map_qwen3_next, {"offset": True, "plain_norms": ("linear_attn.norm",)}),
    "qwen3_next_cfg4": (qwen3_next, map_qwen3_next, {"offset": True, "plain_norms": ("linear_attn.norm",),
                                                     "post_save": qwen3_next_legacy}),
    "lfm2": (lfm2, map_lfm2, {"final_norm": "model.embedding_norm.weight"}),
    "lfm2_bias": (lfm2_bias, map_lfm2, {"final_norm": "model.embedding_norm.weight", "post_save": lfm2_legacy}),
}
DEFAULT = ["llama", "llama_cfg4", "llama_bf16", "mistral", "qwen2", "qwen3", "gemma2", "gpt_oss", "deepseek_v2",
           "deepseek_v2_lora", "qwen3_next", "qwen3_next_cfg4", "lfm2", "lfm2_bias"]


def weight_map(fam, config):
    """[(logos, hf, kind)] of the whole model."""
    _, layer, opt = FAMILIES[fam]
    m = [("emb", "model.embed_tokens.weight", "plain"), ("nf", opt.get("final_norm", "model.norm.weight"), "plain")]
    if not config.tie_word_embeddings:
        m.append(("head", "lm_head.weight", "plain"))
    for l in range(config.num_hidden_layers):
        m += layer(l, config)
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
    if kind.startswith("rows/"):
        g, at, n = map(int, kind.split("/")[1:])
        return t.reshape(-1, g, t.shape[-1])[:, at:at + n]
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
    elif kind.startswith("rows/"):
        g, at, n = map(int, kind.split("/")[1:])
        param.data.view(-1, g, param.shape[-1])[:, at:at + n] = values.reshape(-1, n, param.shape[-1])
    else:
        raise ValueError(kind)
