#!/usr/bin/env bats
# import.bats — logos-import: tiny checkpoints of every family written by
# tests/import/gen.py (standard-library Python) come in as a spec that
# checks, exactly the files its manifest names, values that round-trip, a
# GGUF that runs token for token and logit for logit like its safetensors
# twin; and every rejected input with its exit status and message.

load common
bats_require_minimum_version 1.5.0

GEN="$TOP/tests/import/gen.py"

setup() {
    cd "$BATS_TEST_TMPDIR" || exit 1
}

# imports SRC into OUT and checks the result: the spec passes logos-check,
# the files are exactly the manifest's, and the decode step runs.
imported_ok() {
    local out=$1
    run logos-check "$out/spec.yaml"
    [ "$status" -eq 0 ]
    diff <(logos-author --manifest decode_step "$out/spec.yaml" | cut -d' ' -f4- | tr ' ' '\n' | sort) \
         <(ls "$out" | grep -v '^spec.yaml$' | sort)
    [ -z "$(ls -A "$out" | grep '^\.')" ]   # no temporary left
    run sh -c "logos-author generate '$out/spec.yaml' | logos-run --weights '$out' -p '1 2 3' -n 4"
    [ "$status" -eq 0 ]
    [ "${#lines[@]}" -ge 4 ]
}

family_ok() {
    python3 "$GEN" st "$1" ck
    run logos-import -o out ck
    [ "$status" -eq 0 ]
    [[ "$output" == *"logos-import: wrote out/spec.yaml and "*" weight files (q8)"* ]]
    imported_ok out
}

# tokens and logits of a weights folder
gen_run() {
    logos-author generate "$1/spec.yaml" | logos-run --weights "$1" -p "1 2 3" -n 4 --logits "$1.logits" 2>/dev/null
}

# reject STATUS MESSAGE: the last `run` exited STATUS with MESSAGE on stderr
reject() {
    [ "$status" -eq "$1" ] || { echo "status $status, expected $1: $output"; return 1; }
    [ "${lines[0]}" = "$2" ] || { echo "got:      ${lines[0]}"; echo "expected: $2"; return 1; }
}

@test "import: -h prints the usage and exits 0" {
    run logos-import -h
    [ "$status" -eq 0 ]
    [[ "${lines[0]}" == "usage: logos-import "* ]]
}

@test "import: llama (llama3 rope scaling, separate head)" {
    family_ok llama
    grep -q 'scaling: {type: llama3, factor: 32, low: 1, high: 4, orig: 8192}' out/spec.yaml
    grep -q 'head: {tied: false}' out/spec.yaml
}

@test "import: mistral (sliding window)" {
    family_ok mistral
    grep -q 'window: 16' out/spec.yaml
}

@test "import: qwen2 (q, k, v biases, tied head)" {
    family_ok qwen2
    grep -q 'bias: {q: true, k: true, v: true, o: false}' out/spec.yaml
    grep -q 'head: {tied: true}' out/spec.yaml
}

@test "import: qwen3 (q/k norms, rope_parameters of transformers 5)" {
    family_ok qwen3
    grep -q 'qk_norm: true' out/spec.yaml
    grep -q 'theta: 1000000' out/spec.yaml
}

@test "import: gemma2 (caps, sandwich, (1 + w) norms, GeGLU, embedding scale, alternating window)" {
    family_ok gemma2
    grep -q 'norm: {eps: 1e-06, offset: 1}' out/spec.yaml
    grep -q 'embed: {scale: 8}' out/spec.yaml
    grep -q 'head: {tied: true, softcap: 30}' out/spec.yaml
    grep -q 'norm: sandwich' out/spec.yaml
    grep -q 'act: gelu_tanh' out/spec.yaml
    grep -q 'pattern: \[sliding, full\]' out/spec.yaml
}

@test "import: gpt-oss (sinks, biases, yarn with its attention factor, the mixture)" {
    family_ok gptoss
    grep -q 'sinks: true' out/spec.yaml
    grep -q 'attn_factor: 1.34657359' out/spec.yaml
    grep -q 'act: oai, alpha: 1.702, limit: 7' out/spec.yaml
    grep -q 'score: topk_softmax, router_bias: true, expert_bias: true' out/spec.yaml
}

@test "import: gpt-oss experts are split from gate_up_proj and transposed" {
    python3 "$GEN" st gptoss ck
    logos-import -q --format f32 -o out ck
    python3 - <<'PY'
import json, struct
b = open("ck/model.safetensors", "rb").read()
n = struct.unpack_from("<Q", b)[0]
h = json.loads(b[8:8 + n])
def get(name):
    s, e = h[name]["data_offsets"]
    return struct.unpack("<%df" % ((e - s) // 4), b[8 + n + s:8 + n + e])
E, D, F = 4, 64, 64
gu, dn = get("model.layers.1.mlp.experts.gate_up_proj"), get("model.layers.1.mlp.experts.down_proj")
gub = get("model.layers.1.mlp.experts.gate_up_proj_bias")
rd = lambda f: struct.unpack("<%df" % (len(open(f, "rb").read()) // 4), open(f, "rb").read())
weg, weu, wed, egb = rd("out/weg1.f"), rd("out/weu1.f"), rd("out/wed1.f"), rd("out/egb1.f")
for e in range(E):
    for j in range(F):
        assert egb[e * F + j] == gub[e * 2 * F + 2 * j]
        for i in range(D):
            assert weg[(e * F + j) * D + i] == gu[(e * D + i) * 2 * F + 2 * j]
            assert weu[(e * F + j) * D + i] == gu[(e * D + i) * 2 * F + 2 * j + 1]
            assert wed[(e * D + i) * F + j] == dn[(e * F + j) * D + i]
PY
}

@test "import: deepseek_v2 (latent attention, rotary pairs of neighbours, a dense first layer, experts)" {
    family_ok deepseek2
    grep -q 'latent: {heads: 4, q_lora: 0, kv_lora: 32, nope: 16, rope_dim: 16, value_dim: 16,' out/spec.yaml
    grep -q 'rope: {theta: 10000, pairing: interleaved}' out/spec.yaml
    grep -q 'shared: {hidden: 32}' out/spec.yaml
    grep -q 'pattern: \[dense, moe\]' out/spec.yaml
    grep -q 'unpair(32, 16, 16)' <(logos-author decode_step out/spec.yaml)
}

@test "import: deepseek_v2 kv_b_proj is split per head, its experts stacked" {
    python3 "$GEN" st deepseek2 ck
    logos-import -q --format f32 -o out ck
    python3 - <<'PY'
import json, struct
b = open("ck/model.safetensors", "rb").read()
n = struct.unpack_from("<Q", b)[0]
h = json.loads(b[8:8 + n])
def get(name):
    s, e = h[name]["data_offsets"]
    return struct.unpack("<%df" % ((e - s) // 4), b[8 + n + s:8 + n + e])
rd = lambda f: struct.unpack("<%df" % (len(open(f, "rb").read()) // 4), open(f, "rb").read())
H, NOPE, V, LORA, D, E, F = 4, 16, 16, 32, 64, 4, 32
kvb, wkb, wvb = get("model.layers.1.self_attn.kv_b_proj.weight"), rd("out/wkb1.f"), rd("out/wvb1.f")
row = lambda t, r: t[r * LORA:(r + 1) * LORA]
for hd in range(H):
    for i in range(NOPE):
        assert row(wkb, hd * NOPE + i) == row(kvb, hd * (NOPE + V) + i)
    for i in range(V):
        assert row(wvb, hd * V + i) == row(kvb, hd * (NOPE + V) + NOPE + i)
weg, wed = rd("out/weg1.f"), rd("out/wed1.f")
for e in range(E):
    assert weg[e * F * D:(e + 1) * F * D] == get("model.layers.1.mlp.experts.%d.gate_proj.weight" % e)
    assert wed[e * D * F:(e + 1) * D * F] == get("model.layers.1.mlp.experts.%d.down_proj.weight" % e)
PY
}

@test "import: qwen3_next (delta and gated attention layers, (1 + w) norms, gated shared expert)" {
    family_ok qwen3next
    grep -q 'norm: {eps: 1e-06, offset: 1}' out/spec.yaml
    grep -q 'delta: {k_heads: 2, v_heads: 4, k_dim: 16, v_dim: 16, conv: 4}' out/spec.yaml
    grep -q 'qk_norm: true, out_gate: true' out/spec.yaml
    grep -q 'rope: {theta: 10000000, dim: 4}' out/spec.yaml
    grep -q 'norm: true,' out/spec.yaml
    grep -q 'shared: {hidden: 32, gate: true}' out/spec.yaml
    grep -q 'pattern: \[delta, attn\]' out/spec.yaml
}

@test "import: qwen3_next in_proj_qkvz and in_proj_ba are split per key head, conv1d loses its unit axis" {
    python3 "$GEN" st qwen3next ck
    logos-import -q --format f32 -o out ck
    python3 "$GEN" stf32 ck model.layers.0.linear_attn.conv1d.weight cv.f
    cmp cv.f out/wcv0.f
    python3 - <<'PY'
import json, struct
b = open("ck/model.safetensors", "rb").read()
n = struct.unpack_from("<Q", b)[0]
h = json.loads(b[8:8 + n])
def get(name):
    s, e = h[name]["data_offsets"]
    return struct.unpack("<%df" % ((e - s) // 4), b[8 + n + s:8 + n + e])
rd = lambda f: struct.unpack("<%df" % (len(open(f, "rb").read()) // 4), open(f, "rb").read())
D, KH, KD, R, VD = 64, 2, 16, 2, 16
G = 2 * KD + 2 * R * VD
qkvz, ba = get("model.layers.0.linear_attn.in_proj_qkvz.weight"), get("model.layers.0.linear_attn.in_proj_ba.weight")
row = lambda t, r: t[r * D:(r + 1) * D]
for name, at, w in (("wdq", 0, KD), ("wdk", KD, KD), ("wdv", 2 * KD, R * VD), ("wdz", 2 * KD + R * VD, R * VD)):
    got = rd("out/%s0.f" % name)
    for g in range(KH):
        for i in range(w):
            assert row(got, g * w + i) == row(qkvz, g * G + at + i), (name, g, i)
for name, at in (("wdb", 0), ("wda", R)):
    got = rd("out/%s0.f" % name)
    for g in range(KH):
        for i in range(R):
            assert row(got, g * R + i) == row(ba, g * 2 * R + at + i), (name, g, i)
PY
}

@test "import: lfm2 (short convolutions, its published config keys, the adjusted feed-forward width)" {
    family_ok lfm2
    grep -q 'conv: {kernel: 3, bias: false}' out/spec.yaml
    grep -q 'dense: {hidden: 128, act: silu}' out/spec.yaml
    grep -q 'head: {tied: true}' out/spec.yaml
    grep -q 'pattern: \[conv, attn\]' out/spec.yaml
    logos-import -q --format f32 -o f ck
    python3 "$GEN" stf32 ck model.embedding_norm.weight nf.f
    cmp nf.f f/nf.f
    python3 "$GEN" stf32 ck model.layers.0.conv.conv.weight cv.f
    cmp cv.f f/wcv0.f
    python3 "$GEN" stf32 ck model.layers.1.self_attn.out_proj.weight wo.f
    cmp wo.f f/wo1.f
}

@test "import: f32, f16 and bf16 tensors reach the .f files exactly" {
    for dt in f32 f16 bf16; do
        python3 "$GEN" st qwen2 "ck$dt" --dtype "$dt"
        logos-import -q --format f32 -o "out$dt" "ck$dt"
        python3 "$GEN" stf32 "ck$dt" model.layers.1.self_attn.v_proj.weight v.f
        cmp v.f "out$dt/wv1.f"
        python3 "$GEN" stf32 "ck$dt" model.layers.0.self_attn.q_proj.bias qb.f
        cmp qb.f "out$dt/qb0.f"
    done
}

@test "import: a sharded checkpoint gives the files of the single one" {
    python3 "$GEN" st llama one --dtype bf16
    python3 "$GEN" st llama three --dtype bf16 --shards 3
    logos-import -q -o a one
    logos-import -q -o b three
    diff -r a b
}

@test "import: a GGUF's Q8_0 tensor is split into .q and .s bit for bit" {
    python3 "$GEN" gguf llama q.gguf --type q8_0
    run logos-import -o out q.gguf
    [ "$status" -eq 0 ]
    [ "$output" = "logos-import: wrote out/spec.yaml and 37 weight files (q8, q/k rows interleaved)" ]
    imported_ok out
    for t in blk.1.attn_q.weight:wq1 blk.0.ffn_down.weight:wd0 token_embd.weight:emb; do
        python3 "$GEN" q8blocks q.gguf "${t%%:*}" blk
        cmp blk.q "out/${t##*:}.q"
        cmp blk.s "out/${t##*:}.s"
    done
}

@test "import: an interleaved llama GGUF runs like its safetensors twin (tokens and logits)" {
    python3 "$GEN" st llama ck
    python3 "$GEN" gguf llama ck.gguf
    logos-import -q --format f32 -o s ck
    logos-import -q --format f32 -o g ck.gguf
    grep -q 'pairing: interleaved' g/spec.yaml
    grep -q 'unpair(16)' <(logos-author decode_step g/spec.yaml)
    [ "$(gen_run s)" = "$(gen_run g)" ]
    cmp s.logits g.logits
}

@test "import: --rewrite-rope puts the rows back in halves" {
    python3 "$GEN" st llama ck
    python3 "$GEN" gguf llama ck.gguf
    logos-import -q --format f32 -o s ck
    logos-import -q --format f32 --rewrite-rope -o r ck.gguf
    ! grep -q pairing r/spec.yaml
    cmp s/wq0.f r/wq0.f
    cmp s/wk1.f r/wk1.f
    [ "$(gen_run s)" = "$(gen_run r)" ]
    cmp s.logits r.logits
}

@test "import: --rewrite-rope keeps Q8_0 rows bit for bit" {
    python3 "$GEN" gguf llama q.gguf --type q8_0
    logos-import -q -o a q.gguf
    logos-import -q --rewrite-rope -o b q.gguf
    imported_ok b
    cmp a/wv0.q b/wv0.q
    ! cmp -s a/wq0.q b/wq0.q
    [ "$(gen_run a)" = "$(gen_run b)" ]
}

@test "import: qwen2, qwen3 and gemma2 GGUFs run like their twins" {
    for f in qwen2 qwen3 gemma2; do
        python3 "$GEN" st "$f" "$f"
        python3 "$GEN" gguf "$f" "$f.gguf"
        logos-import -q --format f32 -o "s$f" "$f"
        logos-import -q --format f32 -o "g$f" "$f.gguf"
        [ "$(gen_run "s$f")" = "$(gen_run "g$f")" ]
        cmp "s$f.logits" "g$f.logits"
    done
    grep -q 'norm: {eps: 1e-06}' ggemma2/spec.yaml   # the converter stored 1 + w
}

@test "import: Q8_0 GGUF tensors multiplied out for f32 run like the q8 import" {
    python3 "$GEN" gguf qwen2 q.gguf --type q8_0
    logos-import -q -o a q.gguf
    logos-import -q --format f32 -o b q.gguf
    imported_ok b
    [ "$(gen_run a)" = "$(gen_run b)" ]
    cmp a.logits b.logits
}

@test "import: f16 GGUF tensors quantize to q8 and run" {
    python3 "$GEN" gguf qwen3 h.gguf --type f16
    logos-import -q -o out h.gguf
    imported_ok out
}

@test "import: a checkpoint's name becomes a word the spec accepts (no '..', no newline)" {
    python3 "$GEN" st qwen3 ck
    python3 -c 'import json, sys
p = sys.argv[1]; c = json.load(open(p)); c["_name_or_path"] = "org/my..odd\nname"; json.dump(c, open(p, "w"))' ck/config.json
    run logos-import -q -o out ck
    [ "$status" -eq 0 ]
    grep -qx 'name: my._odd_name' out/spec.yaml
    logos-check out/spec.yaml
}

@test "import: --ctx sets the spec's ctx; an existing spec.yaml is replaced" {
    python3 "$GEN" st qwen3 ck
    logos-import -q -o out ck
    grep -q '^ctx: 128$' out/spec.yaml
    logos-import -q --ctx 32 -o out ck
    grep -q '^ctx: 32$' out/spec.yaml
    imported_ok out
}

# ---- rejected inputs ----

@test "reject: a truncated safetensors file" {
    python3 "$GEN" st llama ck --break truncated
    run logos-import -o out ck
    reject 1 "logos-import: ck/model.safetensors: truncated: 5 bytes, shorter than the 8-byte header length"
}

@test "reject: a header length past the file" {
    python3 "$GEN" st llama ck --break headerlen
    run logos-import -o out ck
    reject 1 "logos-import: ck/model.safetensors: header length 1050896 is past the end of the file (429592 bytes)"
}

@test "reject: a header that is not JSON" {
    python3 "$GEN" st llama ck --break notjson
    run logos-import -o out ck
    reject 1 "logos-import: ck/model.safetensors: header is not JSON: string or '}' expected near 'not' (at byte 4 of the header)"
}

@test "reject: data_offsets past the data" {
    python3 "$GEN" st llama ck --break past
    run logos-import -o out ck
    reject 1 "logos-import: ck/model.safetensors: tensor 'model.embed_tokens.weight': data_offsets [0, 431360] are past the data (427264 bytes)"
}

@test "reject: overlapping tensors" {
    python3 "$GEN" st llama ck --break overlap
    run logos-import -o out ck
    reject 1 "logos-import: ck/model.safetensors: tensors 'model.embed_tokens.weight' and 'model.norm.weight' overlap in the data (bytes 65528 to 65536)"
}

@test "reject: overlapping tensors with an empty one between them" {
    python3 "$GEN" st llama ck --break hidden
    run logos-import -o out ck
    reject 1 "logos-import: ck/model.safetensors: tensors 'model.embed_tokens.weight' and 'model.norm.weight' overlap in the data (bytes 48 to 304)"
}

@test "reject: data_offsets that disagree with the shape" {
    python3 "$GEN" st llama ck --break size
    run logos-import -o out ck
    reject 1 "logos-import: ck/model.safetensors: tensor 'model.embed_tokens.weight': data_offsets hold 65534 bytes, but F32[256,64] needs 65536"
}

@test "reject: a dtype it can't read (I64)" {
    python3 "$GEN" st llama ck --break dtype
    run logos-import -o out ck
    reject 1 "logos-import: ck/model.safetensors: tensor 'model.layers.0.self_attn.q_proj.weight' has dtype I64, which logos-import cannot read (F32, F16, BF16)"
}

@test "reject: a dtype it can't read (F8_E4M3)" {
    python3 "$GEN" st llama ck --break fp8
    run logos-import -o out ck
    reject 1 "logos-import: ck/model.safetensors: tensor 'model.layers.0.self_attn.q_proj.weight' has dtype F8_E4M3, which logos-import cannot read (F32, F16, BF16)"
}

@test "reject: a shape that disagrees with config.json" {
    python3 "$GEN" st llama ck --break shape
    run logos-import -o out ck
    reject 1 "logos-import: ck/model.safetensors: tensor 'model.layers.0.self_attn.q_proj.weight' has shape [32,64], but config.json makes it [64,64]"
    [ -z "$(ls -A out)" ]   # nothing written
}

@test "reject: a missing tensor" {
    python3 "$GEN" st llama ck --break missing
    run logos-import -o out ck
    reject 1 "logos-import: ck: tensor 'model.layers.1.mlp.down_proj.weight' is missing (for weight 'wd1')"
}

@test "reject: an unknown architecture (model_type)" {
    python3 "$GEN" st llama ck --break arch
    run logos-import -o out ck
    reject 1 "logos-import: ck/config.json: unknown architecture 'bert' (model_type; known: llama mistral qwen2 qwen3 gemma2 gpt_oss deepseek_v2 qwen3_next lfm2)"
}

@test "reject: DeepSeek routing that cannot be written (noaux_tc)" {
    python3 "$GEN" st deepseek2 ck
    sed -i 's/"topk_method": "greedy"/"topk_method": "noaux_tc"/' ck/config.json
    run logos-import -o out ck
    reject 1 "logos-import: ck/config.json: topk_method 'noaux_tc' cannot be written (greedy, group_limited_greedy)"
}

@test "reject: a layer type the family does not have" {
    python3 "$GEN" st lfm2 ck
    sed -i 's/"full_attn_idxs"/"layer_types": ["conv", "linear_attention"], "x"/' ck/config.json
    run logos-import -o out ck
    reject 1 "logos-import: ck/config.json: layer_types[1] is not a layer type of lfm2 (full_attention, conv)"
}

@test "reject: an odd rotated width (partial_rotary_factor), with nothing left behind" {
    python3 "$GEN" st llama ck --config '{"head_dim": 10, "partial_rotary_factor": 0.5}'
    run logos-import -o out ck
    reject 1 "logos-import: ck/config.json: partial_rotary_factor rotates 5 values of a head of 10: an odd number"
    [ ! -e out ]
}

@test "reject: an odd head width that rotates whole" {
    python3 "$GEN" st qwen3 ck --config '{"head_dim": 15}'
    run logos-import -o out ck
    reject 1 "logos-import: ck/config.json: the head width 15 (head_dim) is odd: rope rotates pairs of values"
}

@test "reject: a partial_rotary_factor that is not a fraction of the head" {
    python3 "$GEN" st llama ck --config '{"partial_rotary_factor": -0.5}'
    run logos-import -o out ck
    reject 1 "logos-import: ck/config.json: 'partial_rotary_factor' is -0.5, not a fraction of the head from 0 to 1"
}

@test "reject: GGUF rope.dimension_count odd or wider than the head" {
    python3 "$GEN" gguf qwen3 x.gguf --config '{"qwen3.rope.dimension_count": 5}'
    run logos-import -o out x.gguf
    reject 1 "logos-import: x.gguf: qwen3.rope.dimension_count 5 is odd: rope rotates pairs of values"
    python3 "$GEN" gguf qwen3 x.gguf --config '{"qwen3.rope.dimension_count": 20}'
    run logos-import -o out x.gguf
    reject 1 "logos-import: x.gguf: qwen3.rope.dimension_count 20 is more than the head width 16"
}

@test "reject: GGUF metadata that is not a whole number a spec holds" {
    python3 "$GEN" gguf qwen3 x.gguf --config '{"qwen3.embedding_length": 1e30}'
    run logos-import -o out x.gguf
    reject 1 "logos-import: x.gguf: qwen3.embedding_length is not a whole number from 0 to 1000000000"
}

@test "reject: a yarn original context of 0" {
    python3 "$GEN" st gptoss ck --config '{"rope_parameters": {"rope_type": "yarn", "factor": 32.0, "original_max_position_embeddings": 0}}'
    run logos-import -o out ck
    reject 1 "logos-import: ck/config.json: original_max_position_embeddings is 0: rope scaling needs an original context of at least 1"
}

@test "reject: a short convolution's kernel of 1 (lfm2, qwen3_next), with nothing left behind" {
    python3 "$GEN" st lfm2 ck --config '{"conv_L_cache": 1}'
    run logos-import -o out ck
    reject 1 "logos-import: ck/config.json: conv_L_cache is 1: a short convolution's kernel is at least 2"
    [ ! -e out ]
    python3 "$GEN" st qwen3next nx --config '{"linear_conv_kernel_dim": 1}'
    mkdir out
    run logos-import -o out nx
    reject 1 "logos-import: nx/config.json: linear_conv_kernel_dim is 1: a short convolution's kernel is at least 2"
    [ -z "$(ls -A out)" ]
}

@test "reject: widths past what a spec holds, weights past 2^40 values" {
    python3 "$GEN" st deepseek2 ck --config '{"n_shared_experts": 1000000000, "moe_intermediate_size": 1000000000}'
    run logos-import -o out ck
    reject 1 "logos-import: ck/config.json: the shared experts' width (n_shared_experts x moe_intermediate_size) is 1000000000000000000, more than 1000000000"
    python3 "$GEN" st llama ck --config '{"vocab_size": 2147483647}'
    run logos-import -o out ck
    reject 1 "logos-import: ck/config.json: 'vocab_size' is not a whole number from 0 to 1000000000"
    python3 "$GEN" st llama ck --config '{"vocab_size": 1000000000, "hidden_size": 1000000000, "head_dim": 16}'
    run logos-import -o out ck
    reject 1 "logos-import: ck/config.json: the embedding (vocab x hidden size) would hold 1e+18 values, more than 2^40"
}

@test "reject: a configuration whose spec is impossible, named by its source, not by a removed temporary" {
    python3 "$GEN" st gptoss ck --config '{"rope_parameters": {"rope_type": "yarn", "factor": -32.0, "original_max_position_embeddings": 4096}}'
    mkdir out
    run logos-import -o out ck
    [ "$status" -eq 1 ]
    [[ "${lines[0]}" == "logos-import: <spec from ck/config.json>:"*": 'factor' must be positive, got '-32'" ]]
    [ "${lines[3]}" = "logos-import: ck/config.json: the checkpoint's configuration gives an impossible spec (above)" ]
    [ -z "$(ls -A out)" ]
}

@test "reject: a failed re-import removes the earlier import's spec.yaml (system)" {
    python3 "$GEN" st qwen3 ck
    logos-import -q -o out ck
    rm out/wv1.q && mkdir out/wv1.q
    run logos-import -o out ck
    reject 3 "logos-import: out/wv1.q: cannot rename into place: Is a directory"
    [ ! -e out/spec.yaml ]
    [ -z "$(ls -A out | grep '^\.')" ]
}

@test "reject: a folder without config.json" {
    python3 "$GEN" st llama ck --break noconfig
    run logos-import -o out ck
    reject 1 "logos-import: ck/config.json: missing: a Hugging Face checkpoint folder needs its config.json"
}

@test "reject: an index naming a shard that does not exist" {
    python3 "$GEN" st llama ck --shards 2 --break noshard
    run logos-import -o out ck
    reject 1 "logos-import: ck/model.safetensors.index.json: names shard 'model-00002-of-00002.safetensors', which does not exist"
}

@test "reject: GGUF with a bad magic" {
    python3 "$GEN" gguf llama x.gguf --break magic
    run logos-import -o out x.gguf
    reject 1 "logos-import: x.gguf: not a GGUF file: bad magic (expected 'GGUF')"
}

@test "reject: GGUF of an unsupported version" {
    python3 "$GEN" gguf llama x.gguf --break version
    run logos-import -o out x.gguf
    reject 1 "logos-import: x.gguf: unsupported GGUF version 7 (2 and 3 are read)"
}

@test "reject: GGUF tensor count past the file" {
    python3 "$GEN" gguf llama x.gguf --break tcount
    run logos-import -o out x.gguf
    reject 1 "logos-import: x.gguf: tensor count 1099511627776 is past the end of the file"
}

@test "reject: GGUF key-value count past the file" {
    python3 "$GEN" gguf llama x.gguf --break kvcount
    run logos-import -o out x.gguf
    reject 1 "logos-import: x.gguf: key-value count 1099511627776 is past the end of the file"
}

@test "reject: GGUF tensor data past the file" {
    python3 "$GEN" gguf llama x.gguf --break data
    run logos-import -o out x.gguf
    reject 1 "logos-import: x.gguf: tensor 'blk.1.ffn_down.weight': its data (32768 bytes at 399872) is past the end of the file (428576 bytes)"
}

@test "reject: GGUF tensor of an unsupported type" {
    python3 "$GEN" gguf llama x.gguf --break type
    run logos-import -o out x.gguf
    reject 1 "logos-import: x.gguf: tensor 'blk.0.attn_q.weight' has dtype Q4_K (12), which logos-import cannot read (F32, F16, BF16, Q8_0)"
}

@test "reject: GGUF of an unknown architecture" {
    python3 "$GEN" gguf llama x.gguf --break arch
    run logos-import -o out x.gguf
    reject 1 "logos-import: x.gguf: unknown architecture 'mamba' (general.architecture; known: llama qwen2 qwen3 gemma2)"
}

@test "reject: --format other than f32 or q8 (usage)" {
    run logos-import --format f16 -o out ck
    reject 2 "logos-import: --format is f32 or q8, not 'f16'"
}

@test "reject: no -o (usage)" {
    run logos-import ck
    reject 2 "logos-import: no output folder: -o OUT is required"
}

@test "reject: neither a folder nor a .gguf file" {
    echo hello >notes.txt
    run logos-import -o out notes.txt
    reject 1 "logos-import: notes.txt: neither a checkpoint folder nor a .gguf file"
}

@test "reject: a path that does not exist" {
    run logos-import -o out nothing
    reject 1 "logos-import: nothing: cannot open: No such file or directory"
}

@test "reject: an output folder that cannot be created (system)" {
    python3 "$GEN" st qwen3 ck
    run logos-import -o no/such/out ck
    reject 3 "logos-import: no/such/out: cannot create: No such file or directory"
}
