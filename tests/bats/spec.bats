#!/usr/bin/env bats
# spec.bats — the ModelSpec (man5/logos-spec.5) through logos-check: every
# example's verdict on one chip and over two, a spec that cannot be written
# yet, and rejected specs, each with its one located message.

load common
bats_require_minimum_version 1.5.0

BAD="$BATS_TEST_DIRNAME/specs/bad"

# ok FILE LAYERS: every layer of FILE can be written.
ok() {
    run --separate-stderr "$LOGOS_BIN/logos-check" "$1"
    [ "$status" -eq 0 ]
    [ "$output" = "$1: ok: $2 layers can be written" ]
    [ -z "$stderr" ]
}

# splits FILE: FILE splits over two chips.
splits() {
    run --separate-stderr "$LOGOS_BIN/logos-check" --tp 2 "$1"
    [ "$status" -eq 0 ]
    [ "$output" = "$1: splits over 2 chips" ]
    [ -z "$stderr" ]
}

# blocked FILE REASON: FILE does not split over two chips, for REASON.
blocked() {
    run --separate-stderr "$LOGOS_BIN/logos-check" --tp 2 "$1"
    [ "$status" -eq 1 ]
    [ -z "$output" ]
    [ "$stderr" = "logos-check: $1: does not split over 2 chips: $2" ]
}

# rejects FILE LOCATED-MESSAGE: one message (its line, the source line, a
# caret) naming FILE, and status 1. FILE is in the current folder or in $BAD.
rejects() {
    [ -e "$1" ] || cd "$BAD"
    run --separate-stderr "$LOGOS_BIN/logos-check" "$1"
    [ "$status" -eq 1 ]
    [ -z "$output" ]
    [ "${stderr_lines[0]}" = "logos-check: $1:$2" ]
    [ "${#stderr_lines[@]}" -eq 3 ]
}

@test "llama-3.2-1b: written, splits" {
    ok "$EX/llama-3.2-1b.yaml" 16
    splits "$EX/llama-3.2-1b.yaml"
}

@test "llama-3-8b: written, splits" {
    ok "$EX/llama-3-8b.yaml" 32
    splits "$EX/llama-3-8b.yaml"
}

@test "mistral-7b: written, splits" {
    ok "$EX/mistral-7b.yaml" 32
    splits "$EX/mistral-7b.yaml"
}

@test "qwen3-0.6b: written, splits" {
    ok "$EX/qwen3-0.6b.yaml" 28
    splits "$EX/qwen3-0.6b.yaml"
}

@test "gemma-2-2b: written, splits" {
    ok "$EX/gemma-2-2b.yaml" 26
    splits "$EX/gemma-2-2b.yaml"
}

@test "qwen2.5-0.5b: written; its biases do not split" {
    ok "$EX/qwen2.5-0.5b.yaml" 24
    blocked "$EX/qwen2.5-0.5b.yaml" "layer 0: attention has a q bias"
}

@test "deepseek-v2-lite: written; latent attention does not split" {
    ok "$EX/deepseek-v2-lite.yaml" 27
    blocked "$EX/deepseek-v2-lite.yaml" "layer 0: a latent mixer does not split yet"
}

@test "qwen3-next-80b-a3b: written; delta layers do not split" {
    ok "$EX/qwen3-next-80b-a3b.yaml" 48
    blocked "$EX/qwen3-next-80b-a3b.yaml" "layer 0: a delta mixer does not split yet"
}

@test "gpt-oss-20b: written; biases do not split" {
    ok "$EX/gpt-oss-20b.yaml" 24
    blocked "$EX/gpt-oss-20b.yaml" "layer 0: attention has a q bias"
}

@test "lfm2-1.2b: written; convolutions do not split" {
    ok "$EX/lfm2-1.2b.yaml" 16
    blocked "$EX/lfm2-1.2b.yaml" "layer 0: a conv mixer does not split yet"
}

@test "tiny examples: written; the attention-only dense ones split" {
    for f in llama:2 mistral:2 qwen2:2 qwen3:2 gemma2:4 deepseek2:3 qwen3next:4 gptoss:2 lfm2:4; do
        ok "$EX/tiny/${f%:*}.yaml" "${f#*:}"
    done
    for f in llama mistral qwen3 gemma2; do
        splits "$EX/tiny/$f.yaml"
    done
    blocked "$EX/tiny/qwen2.yaml" "layer 0: attention has a q bias"
    blocked "$EX/tiny/deepseek2.yaml" "layer 0: a latent mixer does not split yet"
    blocked "$EX/tiny/qwen3next.yaml" "layer 0: a delta mixer does not split yet"
    blocked "$EX/tiny/gptoss.yaml" "layer 0: attention has a q bias"
    blocked "$EX/tiny/lfm2.yaml" "layer 0: a conv mixer does not split yet"
}

# A dense-only spec that does split at two chips but not at three.
@test "--tp 3: heads that do not divide name the layer" {
    run --separate-stderr "$LOGOS_BIN/logos-check" --tp 3 "$EX/tiny/llama.yaml"
    [ "$status" -eq 1 ]
    [ "$stderr" = "logos-check: $EX/tiny/llama.yaml: does not split over 3 chips: layer 0: 4 heads do not split over 3 chips" ]
}

@test "--tp 2: a mixture of experts does not split" {
    f="$BATS_TEST_TMPDIR/moe.yaml"
    sed 's/dense: {hidden: 128, act: silu}/moe: {experts: 4, top_k: 2, hidden: 64}/' \
        "$EX/tiny/llama.yaml" > "$f"
    run --separate-stderr "$LOGOS_BIN/logos-check" --tp 2 "$f"
    [ "$status" -eq 1 ]
    [ "$stderr" = "logos-check: $f: does not split over 2 chips: layer 0: a mixture of experts does not split yet" ]
}

@test "not yet: longrope, gelu and layernorm are recognized, named per layer" {
    f="$BATS_TEST_TMPDIR/notyet.yaml"
    cat > "$f" <<'YAML'
name: notyet
vocab: 256
dim: 64
layers: 3
ctx: 64
norm: {eps: 1e-5}
kinds:
  long:
    mixer:
      attention:
        heads: 4
        kv_heads: 2
        head_dim: 16
        rope: {theta: 10000, scaling: {type: longrope, factor: 32}}
    ffn:
      dense: {hidden: 128}
  erf:
    mixer:
      attention: {heads: 4, kv_heads: 2, head_dim: 16, rope: {theta: 10000}}
    ffn:
      dense: {hidden: 128, act: gelu}
  ln:
    mixer:
      conv: {kernel: 3}
    ffn:
      dense: {hidden: 128}
    norm: layernorm
per_layer: [long, erf, ln]
YAML
    run --separate-stderr "$LOGOS_BIN/logos-check" "$f"
    [ "$status" -eq 1 ]
    [ -z "$output" ]
    [ "${stderr_lines[0]}" = "logos-check: $f:8: layer 0 (long): not yet: rope scaling 'longrope' is not in the language yet" ]
    [ "${stderr_lines[1]}" = "logos-check: $f:17: layer 1 (erf): not yet: act 'gelu' is not in the language yet" ]
    [ "${stderr_lines[2]}" = "logos-check: $f:22: layer 2 (ln): not yet: norm 'layernorm' (a LayerNorm) is not in the language yet" ]
    [ "${#stderr_lines[@]}" -eq 3 ]
    # logos-author names the first such layer at its line too
    run --separate-stderr "$LOGOS_BIN/logos-author" decode_step "$f"
    [ "$status" -eq 1 ]
    [ -z "$output" ]
    [ "$stderr" = "logos-author: $f:8: layer 0 (long) cannot be written yet: rope scaling 'longrope' is not in the language yet" ]
}

@test "rejects a name the language cannot spell: '/', '..', a newline" {
    local why="it is a word of letters, digits, '.', '_' and '-', without '..'"
    rejects name-slash.yaml "1:7: 'name' holds '/': $why"
    rejects name-dotdot.yaml "1:7: 'name' holds '..': $why"
    rejects name-newline.yaml "1:7: 'name' holds a newline: $why"
    for f in name-slash name-dotdot name-newline; do
        run --separate-stderr "$LOGOS_BIN/logos-author" decode_step "$BAD/$f.yaml"
        [ "$status" -eq 1 ] || { echo "$f: status $status: $stderr"; return 1; }
        [ -z "$output" ]
        [[ "${stderr_lines[0]}" == "logos-author: $BAD/$f.yaml:1:7: 'name' holds "*": $why" ]]
        [ "${#stderr_lines[@]}" -eq 3 ]
    done
}

@test "rejects binary garbage" {
    cd "$BATS_TEST_TMPDIR"
    printf '\x80\x81\xfe\x9c\x01garbage\n' > garbage.yaml
    rejects garbage.yaml "1:1: invalid leading UTF-8 octet"
}

@test "rejects a NUL byte" {
    cd "$BATS_TEST_TMPDIR"
    printf 'name: a\0b\n' > nul.yaml
    run --separate-stderr "$LOGOS_BIN/logos-check" nul.yaml
    [ "$status" -eq 1 ]
    [ "${stderr_lines[0]}" = "logos-check: nul.yaml:1:8: a NUL byte: this is not a text file" ]
}

@test "a 10 MB line is read whole, fast, and the error is still located" {
    cd "$BATS_TEST_TMPDIR"
    { printf 'name: "'; head -c 10000000 /dev/zero | tr '\0' a; printf '"\n';
      grep -v -e '^#' -e '^name:' "$EX/tiny/llama.yaml"; printf 'bogus: 1\n'; } > long.yaml
    SECONDS=0
    rejects long.yaml "19:1: unknown key 'bogus' at the top level"
    [ "$SECONDS" -lt 10 ]
}

@test "a 10 MB value is shown cut short" {
    cd "$BATS_TEST_TMPDIR"
    { printf 'name: long\nvocab: '; head -c 10000000 /dev/zero | tr '\0' a; printf '\n';
      grep -v -e '^#' -e '^name:' -e '^vocab:' "$EX/tiny/llama.yaml"; } > long.yaml
    rejects long.yaml "2:8: expected an integer for 'vocab', got 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...'"
}

@test "rejects flow nesting deeper than 32 levels" {
    cd "$BATS_TEST_TMPDIR"
    { printf 'name: deep\nvocab: '; head -c 100000 /dev/zero | tr '\0' '['; printf '\n'; } > deep.yaml
    rejects deep.yaml "2:39: nesting deeper than 32 levels"
}

@test "rejects block nesting deeper than 32 levels" {
    cd "$BATS_TEST_TMPDIR"
    for i in $(seq 0 39); do printf '%*sk%d:\n' "$i" '' "$i"; done > deep.yaml
    rejects deep.yaml "33:33: nesting deeper than 32 levels"
}

@test "rejects alias" {
    rejects alias.yaml "11:17: aliases are not supported"
}

@test "rejects anchor" {
    rejects anchor.yaml "10:14: anchors are not supported"
}

@test "rejects bad-enum" {
    rejects bad-enum.yaml "15:31: expected one of silu, gelu_tanh, oai, gelu, relu2 for 'act', got 'swish'"
}

@test "rejects duplicate-key" {
    rejects duplicate-key.yaml "4:1: duplicate key 'dim' (first at line 3)"
}

@test "rejects duplicate-kind" {
    rejects duplicate-kind.yaml "18:3: duplicate kind 'attn' (first at line 8)"
}

@test "rejects empty" {
    rejects empty.yaml "1:1: the spec is empty"
}

@test "rejects groups" {
    rejects groups.yaml "15:41: groups 3 do not divide experts 8"
}

@test "rejects heads-kv" {
    rejects heads-kv.yaml "11:17: heads 4 are not a multiple of kv_heads 3"
}

@test "rejects layer-and-kinds" {
    rejects layer-and-kinds.yaml "9:3: give either 'layer' or 'kinds', not both"
}

@test "rejects limit-not-oai" {
    rejects limit-not-oai.yaml "15:40: 'limit' is for act: oai only"
}

@test "rejects llama3-missing" {
    rejects llama3-missing.yaml "13:37: missing 'low' in 'scaling' (type llama3 needs it)"
}

@test "rejects missing-layer" {
    rejects missing-layer.yaml "1:1: missing 'layer' (or 'kinds' with 'pattern' or 'per_layer')"
}

@test "rejects missing-name" {
    rejects missing-name.yaml "1:1: missing 'name' at the top level"
}

@test "rejects missing-rope" {
    rejects missing-rope.yaml "10:7: missing 'rope' in attention"
}

@test "rejects mixer-none" {
    rejects mixer-none.yaml "8:10: 'mixer' needs one of attention, latent, delta, conv"
}

@test "rejects mixer-two" {
    rejects mixer-two.yaml "9:11: 'mixer' has both 'attention' and 'conv'; give one"
}

@test "rejects negative" {
    rejects negative.yaml "2:8: 'vocab' must be at least 1, got '-256'"
}

@test "rejects oai-dense" {
    rejects oai-dense.yaml "15:31: act 'oai' is for moe only"
}

@test "rejects pattern-and-per-layer" {
    rejects pattern-and-per-layer.yaml "19:12: give either 'pattern' or 'per_layer', not both"
}

@test "rejects per-layer-length" {
    rejects per-layer-length.yaml "18:12: 'per_layer' names 3 layers, but 'layers' is 4"
}

@test "rejects q8-attn-output" {
    rejects q8-attn-output.yaml "13:18: attention heads*value_dim 48 is not a whole number of 32-value blocks (formats.attn is q8)"
}

@test "rejects q8-dim" {
    rejects q8-dim.yaml "3:6: dim 72 is not a whole number of 32-value blocks (formats.embed is q8)"
}

@test "rejects q8-expert" {
    rejects q8-expert.yaml "15:41: expert hidden 80 is not a whole number of 32-value blocks (formats.expert is q8)"
}

@test "rejects q8-ffn-hidden" {
    rejects q8-ffn-hidden.yaml "15:21: ffn hidden 100 is not a whole number of 32-value blocks (formats.ffn is q8)"
}

@test "rejects q8-latent" {
    rejects q8-latent.yaml "9:33: latent kv_lora 48 is not a whole number of 32-value blocks (formats.attn is q8)"
}

@test "rejects rope-odd" {
    rejects rope-odd.yaml "13:33: rope dim 7 is odd"
}

@test "rejects rope-odd-head" {
    rejects rope-odd-head.yaml "13:13: rope rotates pairs of values, and head_dim 17 is odd (an even rope dim turns part of each head)"
}

@test "rejects rope-wide" {
    rejects rope-wide.yaml "13:33: rope dim 32 is wider than the head (head_dim 16)"
}

@test "rejects syntax-error" {
    rejects syntax-error.yaml "10:5: did not find expected '-' indicator while parsing a block collection"
}

@test "rejects tag" {
    rejects tag.yaml "2:8: tags are not supported"
}

@test "rejects too-big" {
    rejects too-big.yaml "5:6: 'ctx' must be at most 1000000000, got '4294967296'"
}

@test "rejects top-k" {
    rejects top-k.yaml "15:30: top_k 9 exceeds experts 8"
}

@test "rejects top-sequence" {
    rejects top-sequence.yaml "1:1: the top level must be a mapping of keys, got a sequence"
}

@test "rejects topk-groups" {
    rejects topk-groups.yaml "15:57: topk_groups 5 exceeds groups 4"
}

@test "rejects truncated" {
    rejects truncated.yaml "14:1: did not find expected ',' or '}' while parsing a flow mapping"
}

@test "rejects two-documents" {
    rejects two-documents.yaml "16:1: a spec is one YAML document; a second one starts here"
}

@test "rejects unknown-key-attention" {
    rejects unknown-key-attention.yaml "13:7: unknown key 'heads_dim' in attention"
}

@test "rejects unknown-key-top" {
    rejects unknown-key-top.yaml "6:1: unknown key 'window' at the top level ('window' goes in attention)"
}

@test "rejects unknown-kind" {
    rejects unknown-kind.yaml "18:17: 'pattern' names no kind: 'mlp' is not defined in 'kinds'"
}

@test "rejects unused-kind" {
    rejects unused-kind.yaml "13:3: kind 'conv' is defined but no layer uses it"
}

@test "rejects wrong-type-bool" {
    rejects wrong-type-bool.yaml "6:14: expected true or false for 'tied', got 'yes'"
}

@test "rejects wrong-type-int" {
    rejects wrong-type-int.yaml "10:14: expected an integer for 'heads', got 'abc'"
}

@test "rejects wrong-type-map" {
    rejects wrong-type-map.yaml "6:7: expected a mapping for 'norm', got '1e-5'"
}

@test "rejects wrong-type-num" {
    rejects wrong-type-num.yaml "13:21: expected a number for 'theta', got 'ten'"
}

@test "rejects zero" {
    rejects zero.yaml "4:9: 'layers' must be at least 1, got '0'"
}


@test "rejects kernel-one" {
    rejects kernel-one.yaml "12:22: 'kernel' must be at least 2, got '1'"
}

@test "rejects too-large" {
    rejects too-large.yaml "9:1: layer kind 'layer' has a tensor of more than 2^40 values"
}

# ---- the language's limits: what logos-check takes, logos-author writes ----

@test "an integer past 10^9, the most a program's attribute holds, is refused at its key (rope's orig, window)" {
    cd "$BATS_TEST_TMPDIR"
    sed 's/orig: 8192/orig: 1000000001/' "$EX/tiny/llama.yaml" >orig.yaml
    rejects orig.yaml "19:68: 'orig' must be at most 1000000000, got '1000000001'"
    sed 's/window: 16/window: 1000000001/' "$EX/tiny/mistral.yaml" >window.yaml
    rejects window.yaml "13:62: 'window' must be at most 1000000000, got '1000000001'"
}

@test "a layer wider than a program may declare is refused at its kind (latent and delta heads side by side)" {
    cd "$BATS_TEST_TMPDIR"
    sed 's/nope: 16/nope: 300000000/' "$EX/tiny/deepseek2.yaml" >nope.yaml
    rejects nope.yaml "14:1: layer kind 'dense' is 1200000304 values wide (its heads' widths side by side), past 1000000000, the widest a program may declare"
    sed 's/k_dim: 16/k_dim: 400000000/' "$EX/tiny/qwen3next.yaml" >kdim.yaml
    rejects kdim.yaml "14:1: layer kind 'delta' is 1600000132 values wide (its heads' widths side by side), past 1000000000, the widest a program may declare"
}

@test "at the limits logos-check takes, logos-author writes every form that checks" {
    cd "$BATS_TEST_TMPDIR"
    sed 's/orig: 8192/orig: 1000000000/' "$EX/tiny/llama.yaml" >orig.yaml
    sed 's/window: 16/window: 1000000000/' "$EX/tiny/mistral.yaml" >window.yaml
    sed 's/nope: 16/nope: 100000000/' "$EX/tiny/deepseek2.yaml" >nope.yaml
    grep -q 'window: 1000000000' window.yaml
    for f in orig.yaml window.yaml nope.yaml; do
        run --separate-stderr "$LOGOS_BIN/logos-check" "$f"
        [ "$status" -eq 0 ]
        run --separate-stderr "$LOGOS_BIN/logos-author" decode_step "$f"
        [ "$status" -eq 0 ]
        [ -z "$stderr" ]
        "$LOGOS_BIN/logos-author" decode_step "$f" | "$LOGOS_BIN/logos-check" >/dev/null
    done
}

@test "numbers in messages are shown whole (llama3 scaling's 'high' below a large 'low')" {
    cd "$BATS_TEST_TMPDIR"
    sed 's/low: 1, high: 4/low: 2147483647, high: 4/' "$EX/tiny/llama.yaml" >lowhigh.yaml
    rejects lowhigh.yaml "19:68: 'high' (4) must exceed 'low' (2147483647)"
}
