#!/usr/bin/env bats
# run.bats — logos-run, logos-fuse and logos-bench on the CPU reference:
# the generate pipeline on every tiny spec; the same tokens from a decode
# step alone (the prompt stepped), from a stream of cut forms and from weight
# files; the logits file; a batch; -o; every rejected input with its exact
# status and message; the fuser's plans and its refusals; the bench's table,
# CSV and JSON.

load common
bats_require_minimum_version 1.5.0

TINY="$EX/tiny"
BAD="$TOP/tests/golden/bad"
# the families the CUDA lane has kernels for; logos-fuse refuses the others'
# streams, naming the first op it has no kernel for
LANE_SPECS="gemma2 gptoss lfm2 llama mistral qwen2 qwen3 deepseek2 deepseek2q qwen3next"
# logos-run on a machine without a GPU: the CPU reference, with a notice
CPU='^logos-run: notice: .*: running the CPU reference$'

setup() {
    mkdir -p "$BATS_TEST_TMPDIR/d"
    cd "$BATS_TEST_TMPDIR/d"
}

layers() { sed -n 's/^layers: *//p' "$1"; }

# cut SPEC: decode_embed, decode_layer 0..L-1, decode_head as one stream.
cut() {
    local l
    "$LOGOS_BIN/logos-author" decode_embed "$1"
    for ((l = 0; l < $(layers "$1"); l++)); do "$LOGOS_BIN/logos-author" decode_layer "$l" "$1"; done
    "$LOGOS_BIN/logos-author" decode_head "$1"
}

no_sanitizer() {
    ! grep -qE 'AddressSanitizer|LeakSanitizer|runtime error:|internal error' <<<"$stderr"
}

# A step stream of the tiny Llama for the rejection tests.
step() { "$LOGOS_BIN/logos-author" decode_step "$TINY/llama.yaml" >step.logos; }

# weights: the tiny Llama's synthetic weights written to w/.
weights() {
    step
    "$LOGOS_BIN/logos-run" --synthetic 1 --write-weights w step.logos
}

@test "the generate pipeline prints 5 ids for each tiny spec" {
    for spec in "$TINY"/*.yaml; do
        # through logos-fuse where the lane has the kernels, else the programs
        local fuse=cat
        [[ " $LANE_SPECS " == *" $(basename "$spec" .yaml) "* ]] && fuse="$LOGOS_BIN/logos-fuse --lane cuda"
        run --separate-stderr bash -c '"$1/logos-author" generate "$2" | $3 |
            "$1/logos-run" --synthetic 1 -p "1 2 3" -n 5' _ "$LOGOS_BIN" "$spec" "$fuse"
        [ "$status" -eq 0 ] || { echo "$spec: $stderr"; return 1; }
        [ "${#lines[@]}" -eq 5 ]
        for id in "${lines[@]}"; do [[ "$id" =~ ^[0-9]+$ ]] && [ "$id" -lt 256 ]; done
        [[ "$(sed -n 1p <<<"$stderr")" =~ $CPU ]]
        [[ "$(sed -n 2p <<<"$stderr")" =~ ^logos-run:\ cpu\ reference:\ 5\ tokens\ generated\ in\ [0-9.]+\ s$ ]]
        [ "$(wc -l <<<"$stderr")" -eq 2 ]
    done
}

@test "a decode step alone, a cut stream and weight files give the same tokens" {
    for spec in "$TINY"/*.yaml; do
        "$LOGOS_BIN/logos-author" generate "$spec" >gen.logos
        "$LOGOS_BIN/logos-author" decode_step "$spec" >step.logos
        cut "$spec" >cut.logos
        local want
        want=$("$LOGOS_BIN/logos-run" -q --synthetic 3 -p "1 2 3" -n 5 gen.logos)
        [ "$(wc -l <<<"$want")" -eq 5 ]
        run --separate-stderr "$LOGOS_BIN/logos-run" -q --synthetic 3 -p "1 2 3" -n 5 step.logos
        [ "$status" -eq 0 ] && [ -z "$stderr" ]
        [ "$output" = "$want" ] || { echo "$spec: decode_step: $output, generate: $want"; return 1; }
        run --separate-stderr "$LOGOS_BIN/logos-run" -q --synthetic 3 -p "1 2 3" -n 5 cut.logos
        [ "$status" -eq 0 ] || { echo "$spec: $stderr"; return 1; }
        [ "$output" = "$want" ] || { echo "$spec: cut: $output, generate: $want"; return 1; }
        rm -rf w
        run --separate-stderr "$LOGOS_BIN/logos-run" --synthetic 3 --write-weights w gen.logos
        [ "$status" -eq 0 ] && [ -z "$output" ] && [ -z "$stderr" ]
        run --separate-stderr "$LOGOS_BIN/logos-run" -q --weights w -p "1 2 3" -n 5 gen.logos
        [ "$status" -eq 0 ] || { echo "$spec: $stderr"; return 1; }
        [ "$output" = "$want" ] || { echo "$spec: weights: $output, synthetic: $want"; return 1; }
    done
}

@test "another seed gives other weights" {
    "$LOGOS_BIN/logos-author" generate "$TINY/qwen3next.yaml" >gen.logos
    [ "$("$LOGOS_BIN/logos-run" -q --synthetic 1 -p "1 2 3" -n 5 gen.logos)" != \
      "$("$LOGOS_BIN/logos-run" -q --synthetic 2 -p "1 2 3" -n 5 gen.logos)" ]
}

@test "LOGOS_REF_NUDGE moves the values f16 states keep and, under LOGOS_REF_NUMERICS, the activations q8 quantizes; nothing else" {
    # the tiny Llama with f16 caches, a batch of 4: some nudged values round a
    # step apart, so the logits move a little and the tokens stay
    sed 's/^ctx: 64$/ctx: 64\ncache: f16/; s/head_dim: 16$/head_dim: 32/' "$TINY/llama.yaml" >f16.yaml
    "$LOGOS_BIN/logos-author" --batch 4 decode_batch f16.yaml >b16.logos
    "$LOGOS_BIN/logos-author" --batch 4 decode_batch "$TINY/llama.yaml" >b32.logos
    local p=(-p "1 2" -p 5 -p "7 8 9" -p 4 -n 8)
    for s in b16 b32; do
        "$LOGOS_BIN/logos-run" -q --synthetic 7 "${p[@]}" --logits "$s.a" "$s.logos" >"$s.ta"
        LOGOS_REF_NUDGE=1e-7 "$LOGOS_BIN/logos-run" -q --synthetic 7 "${p[@]}" --logits "$s.b" "$s.logos" >"$s.tb"
        cmp "$s.ta" "$s.tb"
    done
    ! cmp -s b16.a b16.b
    cmp b32.a b32.b
    # under LOGOS_REF_NUMERICS the activations q8 quantizes move too
    "$LOGOS_BIN/logos-fuse" --numerics q8 b32.logos >b32.plan
    LOGOS_REF_NUMERICS=1 "$LOGOS_BIN/logos-run" -q --synthetic 7 "${p[@]}" --logits q.a b32.plan >/dev/null
    LOGOS_REF_NUMERICS=1 LOGOS_REF_NUDGE=1e-6 "$LOGOS_BIN/logos-run" -q --synthetic 7 "${p[@]}" --logits q.b b32.plan >/dev/null
    ! cmp -s q.a q.b
    python3 -c '
import array, math
a, b = array.array("f"), array.array("f")
a.frombytes(open("b16.a", "rb").read())
b.frombytes(open("b16.b", "rb").read())
d = math.sqrt(sum((x - y) ** 2 for x, y in zip(a, b))) / math.sqrt(sum(x * x for x in a))
assert len(a) == len(b) > 0 and d < 1e-3, "moved too far"'
}

@test "LOGOS_REF_NUDGE's seed draws other signs; a value that is not a fraction is a usage error" {
    sed 's/^ctx: 64$/ctx: 64\ncache: f16/; s/head_dim: 16$/head_dim: 32/' "$TINY/llama.yaml" >f16.yaml
    "$LOGOS_BIN/logos-author" --batch 4 decode_batch f16.yaml >b16.logos
    local p=(-p "1 2" -p 5 -p "7 8 9" -p 4 -n 8)
    LOGOS_REF_NUDGE=1e-6 "$LOGOS_BIN/logos-run" -q --synthetic 7 "${p[@]}" --logits s0 b16.logos >/dev/null
    LOGOS_REF_NUDGE=1e-6:0 "$LOGOS_BIN/logos-run" -q --synthetic 7 "${p[@]}" --logits t0 b16.logos >/dev/null
    LOGOS_REF_NUDGE=1e-6:1 "$LOGOS_BIN/logos-run" -q --synthetic 7 "${p[@]}" --logits s1 b16.logos >/dev/null
    cmp s0 t0
    ! cmp -s s0 s1
    for v in abc 1e-7: 1e-7:x 2 -1e-7; do
        LOGOS_REF_NUDGE=$v run --separate-stderr "$LOGOS_BIN/logos-run" -q --synthetic 7 "${p[@]}" b16.logos
        [ "$status" -eq 2 ]
        [ "$output" = "" ]
        [ "$stderr" = "logos-run: LOGOS_REF_NUDGE: '$v' is not a fraction from 0 to 1, with :SEED after it or not" ]
    done
}

@test "LOGOS_REF_TIES says each route whose kept and dropped scores lie that close, and changes nothing" {
    # DeepSeek-V2's tiny spec with the q LoRA: group-limited routing, two
    # groups of four kept; its routes' near ties at 0.3 name the plan's line,
    # the run, the row, both experts (or groups) and both scores
    "$LOGOS_BIN/logos-author" generate "$TINY/deepseek2q.yaml" >g.logos
    local p=(-q --synthetic 7 -p "1 2 3" -n 3)
    "$LOGOS_BIN/logos-run" "${p[@]}" g.logos >t0 2>e0
    LOGOS_REF_TIES=0.3 "$LOGOS_BIN/logos-run" "${p[@]}" g.logos >t1 2>e1
    LOGOS_REF_TIES=0.05 "$LOGOS_BIN/logos-run" "${p[@]}" g.logos >t2 2>e2
    LOGOS_REF_TIES=0 "$LOGOS_BIN/logos-run" "${p[@]}" g.logos >t3 2>e3
    cmp t0 t1 && cmp t0 t2 && cmp t0 t3
    [ ! -s e0 ] && [ ! -s e3 ]
    grep -q ': near tie: group ' e1
    grep -q ': near tie: expert ' e1
    [ "$(wc -l <e1)" -gt "$(wc -l <e2)" ]
    local line
    line=$(awk '/= route\(/ { print NR; exit }' g.logos)
    grep -q "^logos-run: g.logos:$line: run 0, row 0: near tie: " e1
    grep -q "^logos-run: g.logos:[0-9]*: run 1, row 0: near tie: " e1
    # every notice: the kept score at least the dropped, and the distance it
    # gives is theirs, within the fraction
    python3 - e1 0.3 <<'PY'
import re, sys
lines = open(sys.argv[1]).read().splitlines()
assert lines
pat = re.compile(r"^logos-run: g\.logos:\d+: run \d+, row \d+: near tie: (expert|group) (\d+), the last of 2 kept, "
                 r"scores (\S+) and \1 (\d+), the best dropped, (\S+): (\S+) apart$")
for l in lines:
    m = pat.match(l)
    assert m, l
    kept, dropped, apart = float(m[3]), float(m[5]), float(m[6])
    assert m[2] != m[4] and kept >= dropped, l
    assert abs((kept - dropped) / max(abs(kept), abs(dropped)) - apart) <= 0.051 * apart + 1e-12, l
    assert apart <= float(sys.argv[2]), l
PY
    for v in abc 2 -0.1 1e-4x; do
        LOGOS_REF_TIES=$v run --separate-stderr "$LOGOS_BIN/logos-run" "${p[@]}" g.logos
        [ "$status" -eq 2 ]
        [ "$output" = "" ]
        [ "$stderr" = "logos-run: LOGOS_REF_TIES: '$v' is not a fraction from 0 to 1" ]
    done
}

@test "--logits writes one row of vocab f32 a step run" {
    local spec="$TINY/gemma2.yaml"
    "$LOGOS_BIN/logos-author" generate "$spec" >gen.logos
    "$LOGOS_BIN/logos-author" decode_step "$spec" >step.logos
    # a prefill chunk gives one row, then one row a token fed back
    run --separate-stderr "$LOGOS_BIN/logos-run" -q --synthetic 1 -p "4 5 6 7" -n 3 --logits lg gen.logos
    [ "$status" -eq 0 ]
    [ "$(wc -c <lg)" -eq $((3 * 256 * 4)) ]
    # a stepped prompt gives a row for each prompt token
    run --separate-stderr "$LOGOS_BIN/logos-run" -q --synthetic 1 -p "4 5 6 7" -n 3 --logits lg2 step.logos
    [ "$status" -eq 0 ]
    [ "$(wc -c <lg2)" -eq $(((4 + 3 - 1) * 256 * 4)) ]
    # the last rows agree: both runs computed the same steps
    cmp <(tail -c 2048 lg) <(tail -c 2048 lg2)
}

@test "a batch of two prints SEQ ID lines; each sequence's tokens are a single run's" {
    local spec="$TINY/qwen3next.yaml"
    "$LOGOS_BIN/logos-author" --batch 2 decode_batch "$spec" >batch.logos
    "$LOGOS_BIN/logos-author" generate "$spec" >gen.logos
    run --separate-stderr "$LOGOS_BIN/logos-run" -q --synthetic 1 -p "1 2 3" -p "4 5" -n 4 batch.logos
    [ "$status" -eq 0 ]
    [ -z "$stderr" ]
    [ "${#lines[@]}" -eq 8 ]
    for l in "${lines[@]}"; do [[ "$l" =~ ^[01]\ [0-9]+$ ]]; done
    [ "$(sed -n 's/^0 //p' <<<"$output")" = "$("$LOGOS_BIN/logos-run" -q --synthetic 1 -p "1 2 3" -n 4 gen.logos)" ]
    [ "$(sed -n 's/^1 //p' <<<"$output")" = "$("$LOGOS_BIN/logos-run" -q --synthetic 1 -p "4 5" -n 4 gen.logos)" ]
    # -P: one prompt a line, blank lines skipped
    printf '1 2 3\n\n4,5\n' >prompts
    run --separate-stderr "$LOGOS_BIN/logos-run" -q --synthetic 1 -P prompts -n 4 batch.logos
    [ "$status" -eq 0 ]
    [ "$output" = "$("$LOGOS_BIN/logos-run" -q --synthetic 1 -p "1 2 3" -p "4 5" -n 4 batch.logos)" ]
}

@test "a batch needs one prompt a sequence" {
    "$LOGOS_BIN/logos-author" --batch 2 decode_batch "$TINY/llama.yaml" >batch.logos
    run --separate-stderr "$LOGOS_BIN/logos-run" -q --synthetic 1 -p "1 2 3" batch.logos
    [ "$status" -eq 1 ]
    [ -z "$output" ]
    [ "$stderr" = "logos-run: the stream runs 2 sequences: give 2 prompts, not 1" ]
    step
    run --separate-stderr "$LOGOS_BIN/logos-run" -q --synthetic 1 -p 1 -p 2 step.logos
    [ "$status" -eq 1 ]
    [ "$stderr" = "logos-run: the stream runs 1 sequence: give 1 prompt, not 2" ]
}

@test "-o writes the ids whole; a failed run leaves no file and keeps the old one" {
    step
    run --separate-stderr "$LOGOS_BIN/logos-run" -q --synthetic 1 -p "1 2 3" -n 3 -o ids step.logos
    [ "$status" -eq 0 ]
    [ -z "$output" ]
    [ "$(cat ids)" = "$("$LOGOS_BIN/logos-run" -q --synthetic 1 -p "1 2 3" -n 3 step.logos)" ]
    run --separate-stderr "$LOGOS_BIN/logos-run" -q --synthetic 1 -p "1 2 999" -n 3 -o ids --logits lg step.logos
    [ "$status" -eq 1 ]
    [ "$(wc -l <ids)" -eq 3 ]
    [ "$(ls)" = "ids
step.logos" ]
}

@test "-n 0 runs the prompt and prints nothing" {
    step
    run --separate-stderr "$LOGOS_BIN/logos-run" -q --synthetic 1 -p "1 2 3" -n 0 step.logos
    [ "$status" -eq 0 ]
    [ -z "$output" ]
}

@test "the prompt and the tokens fed back may fill the context exactly" {
    step
    run --separate-stderr "$LOGOS_BIN/logos-run" -q --synthetic 1 -p "1 2 3" -n 62 step.logos
    [ "$status" -eq 0 ]
    [ "${#lines[@]}" -eq 62 ]
}

@test "-h prints the usage on stdout and exits 0" {
    run --separate-stderr "$LOGOS_BIN/logos-run" -h
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "usage: logos-run (--weights DIR | --synthetic SEED) [-p IDS]... [-P FILE] [-n N]" ]
    [ -z "$stderr" ]
}

# ---- rejected: weights ----

@test "a missing .q file" {
    weights
    rm w/wq0.q
    run --separate-stderr "$LOGOS_BIN/logos-run" -q --weights w -p 1 step.logos
    [ "$status" -eq 1 ]
    [ -z "$output" ]
    [ "$stderr" = "logos-run: w/wq0.q: missing (expected 4096 bytes for q8[64,64])" ]
}

@test "a truncated .q file" {
    weights
    head -c 100 w/wk1.q >t && mv t w/wk1.q
    run --separate-stderr "$LOGOS_BIN/logos-run" -q --weights w -p 1 step.logos
    [ "$status" -eq 1 ]
    [ -z "$output" ]
    [ "$stderr" = "logos-run: w/wk1.q: 100 bytes, expected 2048 (q8[32,64]: one int8 quant per value)" ]
}

@test "a .s file of the wrong size" {
    weights
    head -c 1000 w/emb.s >t && mv t w/emb.s
    run --separate-stderr "$LOGOS_BIN/logos-run" -q --weights w -p 1 step.logos
    [ "$status" -eq 1 ]
    [ "$stderr" = "logos-run: w/emb.s: 1000 bytes, expected 1024 (q8[256,64]: one f16 scale per 32 values)" ]
}

@test "a long .f file" {
    weights
    printf 'xy' >>w/nm0.f
    run --separate-stderr "$LOGOS_BIN/logos-run" -q --weights w -p 1 step.logos
    [ "$status" -eq 1 ]
    [ "$stderr" = "logos-run: w/nm0.f: 258 bytes, expected 256 (f32[64]: four bytes per value)" ]
}

@test "every bad weight file is reported, not just the first" {
    weights
    rm w/wq0.q
    printf 'xy' >>w/nm0.f
    run --separate-stderr "$LOGOS_BIN/logos-run" -q --weights w -p 1 step.logos
    [ "$status" -eq 1 ]
    grep -qxF "logos-run: w/wq0.q: missing (expected 4096 bytes for q8[64,64])" <<<"$stderr"
    grep -qxF "logos-run: w/nm0.f: 258 bytes, expected 256 (f32[64]: four bytes per value)" <<<"$stderr"
}

@test "an empty weights directory: ten files named, then one line counts the rest" {
    step
    mkdir w
    run --separate-stderr "$LOGOS_BIN/logos-run" -q --weights w -p 1 step.logos
    [ "$status" -eq 1 ]
    [ -z "$output" ]
    [ "$(wc -l <<<"$stderr")" -eq 11 ]
    [ "$(head -1 <<<"$stderr")" = "logos-run: w/emb.q: missing (expected 16384 bytes for q8[256,64])" ]
    [ "$(tail -1 <<<"$stderr")" = "logos-run: w: 25 more weight files missing or wrong: 35 of the 35 it must hold (logos-author --manifest lists them)" ]
}

@test "a weight linked to a file outside the weights directory" {
    weights
    mv w/nf.f outside.f
    ln -s ../outside.f w/nf.f
    run --separate-stderr "$LOGOS_BIN/logos-run" -q --weights w -p 1 step.logos
    [ "$status" -eq 1 ]
    [ -z "$output" ]
    [ "$stderr" = "logos-run: w/nf.f: resolves outside the weights directory" ]
}

@test "a weight linked to another file inside the directory is followed" {
    weights
    cp w/nm0.f w/other.f
    rm w/nm0.f
    ln -s other.f w/nm0.f
    run --separate-stderr "$LOGOS_BIN/logos-run" -q --weights w -p "1 2" -n 2 step.logos
    [ "$status" -eq 0 ]
    [ "$output" = "$("$LOGOS_BIN/logos-run" -q --synthetic 1 -p "1 2" -n 2 step.logos)" ]
}

@test "a missing weights directory" {
    step
    run --separate-stderr "$LOGOS_BIN/logos-run" -q --weights nodir -p 1 step.logos
    [ "$status" -eq 1 ]
    [ -z "$output" ]
    [ "$stderr" = "logos-run: nodir: No such file or directory" ]
}

# ---- rejected: prompts and counts ----

@test "a token id past the vocabulary" {
    step
    run --separate-stderr "$LOGOS_BIN/logos-run" -q --synthetic 1 -p "1 256" step.logos
    [ "$status" -eq 1 ]
    [ -z "$output" ]
    [ "$stderr" = "logos-run: prompt token 2 is 256: token ids run from 0 to 255" ]
}

@test "a negative token id" {
    step
    run --separate-stderr "$LOGOS_BIN/logos-run" -q --synthetic 1 -p "-1 2" step.logos
    [ "$status" -eq 1 ]
    [ "$stderr" = "logos-run: prompt token 1 is -1: token ids run from 0 to 255" ]
}

@test "a prompt id that is not a number" {
    step
    run --separate-stderr "$LOGOS_BIN/logos-run" -q --synthetic 1 -p "1 two 3" step.logos
    [ "$status" -eq 2 ]
    [ -z "$output" ]
    [ "$stderr" = "logos-run: -p: 'two' is not a token id" ]
    run --separate-stderr "$LOGOS_BIN/logos-run" -q --synthetic 1 -p "1 2x" step.logos
    [ "$status" -eq 2 ]
    [ "$stderr" = "logos-run: -p: '2x' is not a token id" ]
}

@test "a bad line of a prompt file" {
    step
    printf '1 2\n3 x\n' >prompts
    run --separate-stderr "$LOGOS_BIN/logos-run" -q --synthetic 1 -P prompts step.logos
    [ "$status" -eq 1 ]
    [ "$stderr" = "logos-run: prompts:2:3: 'x' is not a token id" ]
    # a long word is cut short, and bytes that are not printable shown as '?'
    { printf '1 '; head -c 100000 /dev/zero | tr '\0' 'x'; printf '\n'; } >long
    run --separate-stderr "$LOGOS_BIN/logos-run" -q --synthetic 1 -P long step.logos
    [ "$status" -eq 1 ]
    [ "$stderr" = "logos-run: long:1:3: 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...' is not a token id" ]
    run --separate-stderr "$LOGOS_BIN/logos-run" -q --synthetic 1 -p $'1 \xff\xfe' step.logos
    [ "$status" -eq 2 ]
    [ "$stderr" = "logos-run: -p: '??' is not a token id" ]
    run --separate-stderr "$LOGOS_BIN/logos-run" -q --synthetic 1 -P nosuch step.logos
    [ "$status" -eq 1 ]
    [ "$stderr" = "logos-run: nosuch: No such file or directory" ]
}

@test "an empty prompt" {
    step
    run --separate-stderr "$LOGOS_BIN/logos-run" -q --synthetic 1 -p "" step.logos
    [ "$status" -eq 1 ]
    [ -z "$output" ]
    [ "$stderr" = "logos-run: the prompt is empty: give at least one token id" ]
}

@test "no prompt" {
    step
    run --separate-stderr "$LOGOS_BIN/logos-run" -q --synthetic 1 step.logos
    [ "$status" -eq 2 ]
    [ "$stderr" = 'logos-run: give a prompt: -p "1 2 3" or -P FILE' ]
}

@test "-n negative, or not a number, or without a value" {
    step
    for bad in -1 abc 1.5 16777217; do
        run --separate-stderr "$LOGOS_BIN/logos-run" -q --synthetic 1 -p 1 -n "$bad" step.logos
        [ "$status" -eq 2 ]
        [ -z "$output" ]
        [ "$stderr" = "logos-run: -n takes a whole number from 0 to 16777216, not '$bad'" ] || { echo "$stderr"; return 1; }
    done
    run --separate-stderr "$LOGOS_BIN/logos-run" -q --synthetic 1 -p 1 -n
    [ "$status" -eq 2 ]
    [ "$stderr" = "logos-run: -n needs a value" ]
}

@test "a prompt and generation past the context" {
    step
    run --separate-stderr "$LOGOS_BIN/logos-run" -q --synthetic 1 -p "1 2 3" -n 63 step.logos
    [ "$status" -eq 1 ]
    [ -z "$output" ]
    [ "$stderr" = "logos-run: the prompt (3 tokens) and 63 generated tokens need 65 positions; the program's states hold 64" ]
}

# ---- rejected: options ----

@test "both --weights and --synthetic, or neither" {
    weights
    run --separate-stderr "$LOGOS_BIN/logos-run" -q --weights w --synthetic 1 -p 1 step.logos
    [ "$status" -eq 2 ]
    [ -z "$output" ]
    [ "$stderr" = "logos-run: give the weights: --weights DIR or --synthetic SEED (one of them)" ]
    run --separate-stderr "$LOGOS_BIN/logos-run" -q -p 1 step.logos
    [ "$status" -eq 2 ]
    [ "$stderr" = "logos-run: give the weights: --weights DIR or --synthetic SEED (one of them)" ]
}

@test "--write-weights without --synthetic" {
    weights
    run --separate-stderr "$LOGOS_BIN/logos-run" --weights w --write-weights x step.logos
    [ "$status" -eq 2 ]
    [ "$stderr" = "logos-run: --write-weights writes synthetic weights: give --synthetic SEED" ]
    [ ! -e x ]
}

@test "a bad seed" {
    step
    run --separate-stderr "$LOGOS_BIN/logos-run" -q --synthetic -4 -p 1 step.logos
    [ "$status" -eq 2 ]
    [ "$stderr" = "logos-run: --synthetic takes a whole number from 0 to 2147483647, not '-4'" ]
}

@test "an unknown option" {
    step
    run --separate-stderr "$LOGOS_BIN/logos-run" --fast --synthetic 1 -p 1 step.logos
    [ "$status" -eq 2 ]
    [ -z "$output" ]
    [ "$stderr" = "logos-run: unknown option '--fast' (try --help)" ]
}

@test "two files" {
    step
    run --separate-stderr "$LOGOS_BIN/logos-run" -q --synthetic 1 -p 1 step.logos step.logos
    [ "$status" -eq 2 ]
    [ "$stderr" = "logos-run: one program stream at a time: 'step.logos' and 'step.logos'" ]
}

# ---- rejected: streams ----

@test "a program that fails to check exits 1 with its message" {
    cd "$BAD"
    run --separate-stderr "$LOGOS_BIN/logos-run" -q --synthetic 1 -p 1 undefined_name.logos
    [ "$status" -eq 1 ]
    [ -z "$output" ]
    [ "$stderr" = "$(sed 's/^logos-check:/logos-run:/' undefined_name.err)" ]
}

@test "empty input" {
    run --separate-stderr "$LOGOS_BIN/logos-run" -q --synthetic 1 -p 1 </dev/null
    [ "$status" -eq 1 ]
    [ -z "$output" ]
    [ "$stderr" = "logos-run: <stdin>: no program in the input" ]
}

@test "a missing stream file" {
    run --separate-stderr "$LOGOS_BIN/logos-run" -q --synthetic 1 -p 1 nosuch.logos
    [ "$status" -eq 1 ]
    [ "$stderr" = "logos-run: nosuch.logos: No such file or directory" ]
}

@test "--logits into a missing directory exits 3 and leaves no file" {
    step
    run --separate-stderr "$LOGOS_BIN/logos-run" -q --synthetic 1 -p 1 -o ids --logits no/such/lg step.logos
    [ "$status" -eq 3 ]
    [ -z "$output" ]
    [ "$stderr" = "logos-run: no/such/lg: cannot write: No such file or directory" ]
    [ "$(ls)" = "step.logos" ]
}

@test "a stream with only a prefill gives one token, not two" {
    "$LOGOS_BIN/logos-author" prefill "$TINY/llama.yaml" >prefill.logos
    run --separate-stderr "$LOGOS_BIN/logos-run" -q --synthetic 1 -p "1 2 3" -n 2 prefill.logos
    [ "$status" -eq 1 ]
    [ -z "$output" ]
    [ "$stderr" = "logos-run: prefill.logos: the stream has no decode step: it gives one token after the prompt, not 2" ]
    run --separate-stderr "$LOGOS_BIN/logos-run" -q --synthetic 1 -p "1 2 3" -n 1 prefill.logos
    [ "$status" -eq 0 ]
    [ "$output" = "$("$LOGOS_BIN/logos-author" generate "$TINY/llama.yaml" | "$LOGOS_BIN/logos-run" -q --synthetic 1 -p "1 2 3" -n 1)" ]
}

@test "a forward program's input is not given" {
    "$LOGOS_BIN/logos-author" forward "$TINY/llama.yaml" >fwd.logos
    run --separate-stderr "$LOGOS_BIN/logos-run" -q --synthetic 1 -p 1 -n 1 fwd.logos
    [ "$status" -eq 1 ]
    [ -z "$output" ]
    [ "$stderr" = "logos-run: fwd.logos:2:4: input 'x' is not given
  in x : f32[64]
     ^" ]
}

@test "a batch does not mix with single-sequence programs" {
    { "$LOGOS_BIN/logos-author" --batch 2 decode_batch "$TINY/llama.yaml"
      "$LOGOS_BIN/logos-author" decode_step "$TINY/llama.yaml"; } >mixed.logos
    run --separate-stderr "$LOGOS_BIN/logos-run" -q --synthetic 1 -p 1 -p 2 mixed.logos
    [ "$status" -eq 1 ]
    [ "$stderr" = "logos-run: mixed.logos: a batch of decode steps does not mix with single-sequence programs in one stream" ]
}

@test "a program split over 2 chips runs as its chips, from the whole files: the single chip's tokens" {
    "$LOGOS_BIN/logos-author" --tp 2 tp_decode_step "$TINY/llama.yaml" >tp.logos
    weights
    run --separate-stderr "$LOGOS_BIN/logos-run" -q --device cpu --weights w -p "1 2 3" -n 4 tp.logos
    [ "$status" -eq 0 ] && [ -z "$stderr" ]
    [ "$output" = "$("$LOGOS_BIN/logos-run" -q --device cpu --weights w -p "1 2 3" -n 4 step.logos)" ]
    [ "$output" = "$("$LOGOS_BIN/logos-run" -q --device cpu --synthetic 1 -p "1 2 3" -n 4 tp.logos)" ]
}

# ---- logos-fuse ----

@test "logos-fuse prints a plan for each program of a good stream, the same bytes each time" {
    "$LOGOS_BIN/logos-author" generate "$TINY/llama.yaml" >gen.logos
    run --separate-stderr "$LOGOS_BIN/logos-fuse" --lane cuda gen.logos
    [ "$status" -eq 0 ]
    [ -z "$stderr" ]
    [ "${lines[0]}" = "plan 1 cuda" ]
    [ "$(grep -c '^plan 1 cuda$' <<<"$output")" -eq 2 ]
    printf '%s\n' "$output" >gen.plan
    # each plan carries its program as it came
    awk '/^logos 1 / { p = 1 } p { print } /^end$/ { p = 0 }' gen.plan | cmp - gen.logos
    run --separate-stderr bash -c '"$1" <"$2" | cmp - "$3"' _ "$LOGOS_BIN/logos-fuse" gen.logos gen.plan
    [ "$status" -eq 0 ]
    [ -z "$stderr" ]
    run --separate-stderr "$LOGOS_BIN/logos-check" gen.plan
    [ "$status" -eq 0 ]
    [ "$output" = "gen.plan: ok: 2 plans" ]
}

@test "logos-fuse refuses an op the lane has no kernel for, naming it and its line" {
    # every family of examples/ fuses whole; stack has no kernel yet
    printf 'logos 1 forward s\nin a : f32[4]\nin b : f32[4]\nout y : f32[2,4]\ny = stack(a, b)\nend\n' >st.logos
    run --separate-stderr "$LOGOS_BIN/logos-fuse" --lane cuda st.logos
    [ "$status" -eq 1 ] && [ -z "$output" ]
    [ "$stderr" = "logos-fuse: st.logos:5:5: the CUDA lane has no kernel for stack yet (run it with logos-run --device cpu)
  y = stack(a, b)
      ^" ]
}

@test "logos-fuse refuses latent attention over an f16 cache (no kernel reads one yet), located; the CPU reference runs it" {
    sed 's/^dim: \(.*\)/dim: \1\ncache: f16/' "$TINY/deepseek2.yaml" >ds16.yaml
    "$LOGOS_BIN/logos-author" decode_step ds16.yaml >ds16.logos
    run --separate-stderr "$LOGOS_BIN/logos-fuse" ds16.logos
    [ "$status" -eq 1 ] && [ -z "$output" ]
    [ "${stderr_lines[0]}" = "logos-fuse: ds16.logos:$(awk '/^ct0 = latent/ { print NR }' ds16.logos):7: the CUDA lane has no kernel for latent over an f16 cache yet (run it with logos-run --device cpu, or keep the spec's cache f32)" ]
    run "$LOGOS_BIN/logos-run" -q --device cpu --synthetic 1 -p "1 2" -n 2 ds16.logos
    [ "$status" -eq 0 ] && [ "${#lines[@]}" -eq 2 ]
}

@test "logos-fuse refuses a number or a shape its kernel cannot take, naming the statement and the reason (the program itself is valid)" {
    printf 'logos 1 forward s\nin x : f32[64]\nweight w : f32[64]\nout y : f32[64]\ny = rmsnorm(x, w, eps=1e5)\nend\n' >eps.logos
    run --separate-stderr "$LOGOS_BIN/logos-fuse" --lane cuda eps.logos
    [ "$status" -eq 1 ] && [ -z "$output" ]
    [ "$stderr" = "logos-fuse: eps.logos:5:5: the CUDA lane has no kernel for this: rownorm's EPS would be 100000, outside 0 to 1
  y = rmsnorm(x, w, eps=1e5)
      ^" ]
    "$LOGOS_BIN/logos-check" eps.logos
    # a shape its kernel cannot take: values of odd width (attend reads them a pair at a time)
    run --separate-stderr "$LOGOS_BIN/logos-fuse" "$TOP/tests/fuzz/regress/fuzz_text/attend-odd-values.logos"
    [ "$status" -eq 1 ] && [ -z "$output" ]
    [[ "${stderr_lines[0]}" == *"attend-odd-values.logos:16:6: the CUDA lane has no kernel for this: attend: values are read a pair at a time: the value width must be even" ]]
    # an operand of a type its kernel cannot take: an elementwise op on an f16 cache (elem reads f32)
    run --separate-stderr "$LOGOS_BIN/logos-fuse" "$TOP/tests/fuzz/regress/fuzz_text/elem-f16-state.logos"
    [ "$status" -eq 1 ] && [ -z "$output" ]
    [[ "${stderr_lines[0]}" == *"elem-f16-state.logos:6:16: the CUDA lane has no kernel for this: elem's a does not take f16 values ('Kc0')" ]]
}

@test "logos-fuse -v says each decision on stderr, -q silences them" {
    step
    run --separate-stderr "$LOGOS_BIN/logos-fuse" -v step.logos
    [ "$status" -eq 0 ]
    [[ "$(sed -n 1p <<<"$stderr")" =~ ^logos-fuse:\ step.logos:[0-9]+:\ rule\  ]]
    local plan="$output"
    run --separate-stderr "$LOGOS_BIN/logos-fuse" -q -v step.logos
    [ "$status" -eq 0 ]
    [ -z "$stderr" ]
    [ "$output" = "$plan" ]
}

@test "logos-fuse: an unknown lane exits 2" {
    run --separate-stderr "$LOGOS_BIN/logos-fuse" --lane metal
    [ "$status" -eq 2 ]
    [ -z "$output" ]
    [ "$stderr" = "logos-fuse: unknown lane 'metal' (lanes: cuda)" ]
}

@test "logos-fuse: a bad program exits 1 with its message and prints nothing" {
    cd "$BAD"
    run --separate-stderr "$LOGOS_BIN/logos-fuse" --lane cuda undefined_name.logos
    [ "$status" -eq 1 ]
    [ -z "$output" ]
    [ "$stderr" = "$(sed 's/^logos-check:/logos-fuse:/' undefined_name.err)" ]
}

@test "logos-fuse: empty input, two files, an unknown option, -h" {
    run --separate-stderr "$LOGOS_BIN/logos-fuse" </dev/null
    [ "$status" -eq 1 ]
    [ "$stderr" = "logos-fuse: <stdin>: no program in the input" ]
    run --separate-stderr "$LOGOS_BIN/logos-fuse" a.logos b.logos
    [ "$status" -eq 2 ]
    [ "$stderr" = "logos-fuse: one program stream at a time" ]
    run --separate-stderr "$LOGOS_BIN/logos-fuse" -x
    [ "$status" -eq 2 ]
    [ "$stderr" = "logos-fuse: unknown option '-x' (try --help)" ]
    run --separate-stderr "$LOGOS_BIN/logos-fuse" -h
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "usage: logos-fuse [--lane cuda] [--numerics N] [--no-fuse-quant] [--no-lane-rules]" ]
}

# The cut forms of a prefill (prefill_embed, each stacked_layer, prefill_head)
# then a decode step; and of a batch (decode_batch_embed, each stacked_layer
# of batch rows, decode_batch_head).
cut_prefill() {
    local l
    "$LOGOS_BIN/logos-author" prefill_embed "$1"
    for ((l = 0; l < $(layers "$1"); l++)); do "$LOGOS_BIN/logos-author" stacked_layer "$l" "$1"; done
    "$LOGOS_BIN/logos-author" prefill_head "$1"
    "$LOGOS_BIN/logos-author" decode_step "$1"
}

cut_batch() {
    local l
    "$LOGOS_BIN/logos-author" --batch 2 decode_batch_embed "$1"
    for ((l = 0; l < $(layers "$1"); l++)); do "$LOGOS_BIN/logos-author" --batch 2 stacked_layer "$l" "$1"; done
    "$LOGOS_BIN/logos-author" --batch 2 decode_batch_head "$1"
}

@test "a cut prefill stream and a cut batch stream give their whole forms' tokens" {
    for s in "$TINY"/*.yaml; do
        "$LOGOS_BIN/logos-author" generate "$s" >whole.logos
        cut_prefill "$s" >cut.logos
        run --separate-stderr "$LOGOS_BIN/logos-run" -q --synthetic 3 -p "5 6 7" -n 4 whole.logos
        [ "$status" -eq 0 ] || { echo "$s: $stderr"; return 1; }
        local want="$output"
        run --separate-stderr "$LOGOS_BIN/logos-run" -q --synthetic 3 -p "5 6 7" -n 4 cut.logos
        [ "$status" -eq 0 ] && [ "$output" = "$want" ] || { echo "$s prefill: $output vs $want $stderr"; return 1; }
        "$LOGOS_BIN/logos-author" --batch 2 decode_batch "$s" >whole.logos
        cut_batch "$s" >cut.logos
        run --separate-stderr "$LOGOS_BIN/logos-run" -q --synthetic 3 -p "5 6 7" -p "8 9" -n 3 whole.logos
        [ "$status" -eq 0 ] || { echo "$s: $stderr"; return 1; }
        want="$output"
        run --separate-stderr "$LOGOS_BIN/logos-run" -q --synthetic 3 -p "5 6 7" -p "8 9" -n 3 cut.logos
        [ "$status" -eq 0 ] && [ "$output" = "$want" ] || { echo "$s batch: $output vs $want $stderr"; return 1; }
    done
}

@test "a stream's next of the wrong shape is rejected, not read past" {
    cat >badnext.logos <<'X'
logos 1 decode_batch tiny
in toks : i32[2]
in pos_s0 : i32
in pos_s1 : i32
weight emb : f32[8,8]
out next : i32
next = argmax(emb[toks] ~ [16])
end
X
    run --separate-stderr "$LOGOS_BIN/logos-run" -q --synthetic 1 -p 1 -p 2 -n 2 badnext.logos
    [ "$status" -eq 1 ]
    [ "$stderr" = "logos-run: badnext.logos: 'next' must be i32[B]: one token for each of the 2 sequences" ]
    [ -z "$output" ]
}

@test "the 257th prompt is refused with a message" {
    step
    local args=() i
    for ((i = 0; i < 257; i++)); do args+=(-p 1); done
    run --separate-stderr "$LOGOS_BIN/logos-run" --synthetic 1 "${args[@]}" step.logos
    [ "$status" -eq 2 ]
    [ "$stderr" = "logos-run: at most 256 prompts" ]
}

@test "a full standard output is a system failure with a message, for every tool" {
    step
    [ -w /dev/full ] || skip "no /dev/full on this machine"
    local want="cannot write to standard output: No space left on device"
    run --separate-stderr sh -c '"$0"/logos-author decode_step "$1" >/dev/full' "$LOGOS_BIN" "$TINY/llama.yaml"
    [ "$status" -eq 3 ] && [ "$stderr" = "logos-author: $want" ]
    run --separate-stderr sh -c '"$0"/logos-check step.logos >/dev/full' "$LOGOS_BIN"
    [ "$status" -eq 3 ] && [ "$stderr" = "logos-check: $want" ]
    run --separate-stderr sh -c '"$0"/logos-fuse -q step.logos >/dev/full' "$LOGOS_BIN"
    [ "$status" -eq 3 ] && [ "$stderr" = "logos-fuse: $want" ]
    run --separate-stderr sh -c '"$0"/logos-run -q --synthetic 1 -p 1 -n 2 step.logos >/dev/full' "$LOGOS_BIN"
    [ "$status" -eq 3 ] && [ "$stderr" = "logos-run: $want" ]
    run --separate-stderr sh -c '"$0"/logos-bench --synthetic 1 -n 1 step.logos >/dev/full' "$LOGOS_BIN"
    [ "$status" -eq 3 ] && [ "$stderr" = "logos-bench: $want" ]
}

@test "a state declared with two shapes in one stream is refused before anything runs" {
    "$LOGOS_BIN/logos-author" prefill "$TINY/llama.yaml" >two.logos
    "$LOGOS_BIN/logos-author" decode_step "$TINY/llama.yaml" | sed 's/^state \([KV]c0\) : f32\[64,2,16\]/state \1 : f32[32,2,16]/' >>two.logos
    local line
    line=$(awk '/^state Kc0 : f32\[32/ { print NR }' two.logos)
    run --separate-stderr "$LOGOS_BIN/logos-run" -q --synthetic 1 -p "1 2" -n 3 two.logos
    [ "$status" -eq 1 ]
    [ -z "$output" ]
    [ "${stderr_lines[0]}" = "logos-run: two.logos:$line:7: state 'Kc0' is declared with another shape at line 10" ]
}

# ---- feedback ----

@test "each token reaches a pipe as it is generated, not at the end" {
    sed 's/^ctx: .*/ctx: 1024/' "$TINY/llama.yaml" >ctx.yaml
    "$LOGOS_BIN/logos-author" decode_step ctx.yaml >ctx.logos
    # 900 ids are fewer than 4096 bytes: without a flush after each, a pipe
    # gets them all in one write at the end. The reader notes when each line
    # comes: the first must come while the others are still being generated.
    # It is reading before logos-run starts (it says so with the file
    # `ready`, then opens the FIFO), so a slow start of python3 cannot make
    # every line wait in the pipe.
    mkfifo ids
    python3 -c "import time
open('ready', 'w').close()
t = [time.monotonic() for line in open('ids')]
print(len(t), int((t[-1] - t[0]) * 1e6))" >times &
    local reader=$! i=0
    while [ ! -e ready ] && [ $i -lt 1000 ]; do sleep 0.01; i=$((i + 1)); done
    "$LOGOS_BIN/logos-run" -q --synthetic 1 -p 1 -n 900 ctx.logos >ids
    wait $reader
    output=$(cat times)
    echo "lines, microseconds from the first to the last: $output"
    [ "${output% *}" -eq 900 ]
    [ "${output#* }" -gt 30000 ]
}

@test "synthesizing weights for more than a second shows its progress on stderr; -q does not" {
    # 838.2 million values: a few seconds of synthesis on one processor
    # (taskset: however many the machine has), sanitized or not (301.2
    # million, 16 layers, took 1.0 s here: the progress line came or not)
    sed 's/^vocab: .*/vocab: 32000/; s/^dim: .*/dim: 1024/; s/^layers: .*/layers: 48/; s/heads: 4/heads: 8/;
         s/kv_heads: 2/kv_heads: 8/; s/head_dim: 16/head_dim: 128/; s/hidden: 128/hidden: 4096/' \
        "$TINY/llama.yaml" >mid.yaml
    "$LOGOS_BIN/logos-author" decode_step mid.yaml >mid.logos
    local cpu
    cpu=$(taskset -pc $$ | sed 's/.*: *//; s/[-,].*//')   # the first this shell may use
    run --separate-stderr taskset -c "$cpu" "$LOGOS_BIN/logos-run" --synthetic 1 -p 1 -n 1 mid.logos
    [ "$status" -eq 0 ]
    # the progress lines, among the notices and figures: at least one while it
    # works, each a percentage, then the time it took
    local -a pg
    mapfile -t pg < <(grep 'synthesizing weights' <<<"$stderr")
    local n=${#pg[@]} i
    [ "$n" -ge 2 ]
    for ((i = 0; i < n - 1; i++)); do
        [[ "${pg[i]}" =~ ^logos-run:\ synthesizing\ weights:\ [0-9]+%\ of\ 838\.2\ million\ values$ ]] ||
            { echo "${pg[i]}"; return 1; }
    done
    [[ "${pg[n - 1]}" =~ ^logos-run:\ synthesizing\ weights:\ 838\.2\ million\ values\ in\ [0-9.]+\ s$ ]]
    run --separate-stderr "$LOGOS_BIN/logos-run" -q --synthetic 1 -p 1 -n 1 mid.logos
    [ "$status" -eq 0 ]
    [ -z "$stderr" ]
}

@test "LOGOS_TRACE writes every statement's value and each state, and the order; tests/gpu/trace holds two traces against each other" {
    "$LOGOS_BIN/logos-author" generate "$TINY/qwen3next.yaml" | "$LOGOS_BIN/logos-fuse" >p.plan
    mkdir tr
    LOGOS_TRACE=tr run -0 "$LOGOS_BIN/logos-run" -q --device cpu --synthetic 7 -p "1 2 3" -n 2 p.plan
    # the prefill (run 0) then one step (run 1); a statement, a state, the order's types
    [ "$(awk '{ print $1, $2 }' tr/order | sort -u | tr '\n' ,)" = "0 0,1 1," ]
    grep -qx '0 0 bpos i32' tr/order
    grep -qx '1 1 logits f32' tr/order
    [ "$(stat -c %s tr/1.1.logits)" -eq $((256 * 4)) ]
    [ "$(stat -c %s tr/0.0.Sd0)" -eq $((4 * 16 * 16 * 4)) ]
    # a folder that cannot be written: said once, the run goes on
    LOGOS_TRACE=/nonexistent/x run -0 "$LOGOS_BIN/logos-run" -q --device cpu --synthetic 7 -p 1 -n 1 p.plan
    [ "$(grep -c 'LOGOS_TRACE: cannot write /nonexistent/x/' <<<"$output")" -eq 1 ]
    # the reference's trace against itself: nothing parts
    need_numpy
    TRACE_DEVICE=cpu LOGOS_BIN="$LOGOS_BIN" run -0 sh "$TOP/tests/gpu/trace" "$TINY/qwen3next.yaml" q8x2 "1 2|5|7 8 9" 3 decode_batch
    [ "${lines[0]}" = "trace $TINY/qwen3next.yaml q8x2 prompt [1 2|5|7 8 9] 3 tokens (decode_batch):" ]
    [[ "${lines[1]}" =~ ^traces:\ [0-9.]+[KM]\ a\ side$ ]]
    [ "${lines[2]}" = "trace: 670 values compared, 0 past 0.001" ] || { echo "$output"; false; }
    # LOGOS_REF_TIES: the reference's near ties after the header
    LOGOS_REF_TIES=0.05 TRACE_DEVICE=cpu LOGOS_BIN="$LOGOS_BIN" run -0 sh "$TOP/tests/gpu/trace" \
        "$TINY/deepseek2q.yaml" q8x2 "1 2 3" 2
    [ "${lines[1]}" = "reference: line 86: run 0, row 0: near tie: expert 5, the last of 2 kept, scores 0.0982853481 and expert 6, the best dropped, 0.0933776852: 5.0e-02 apart" ] || { echo "$output"; false; }
    [[ "${lines[2]}" =~ ^traces: ]]
    # a run that fails says so, after the header, with what it said
    TRACE_DEVICE=cpu LOGOS_BIN="$LOGOS_BIN" run -1 sh "$TOP/tests/gpu/trace" "$TINY/qwen3next.yaml" q8x2 "1 999" 2
    [ "${#lines[@]}" -eq 2 ]
    [[ "${lines[1]}" =~ ^trace:\ the\ CPU\ reference\'s\ run\ failed:\ logos-run:\ .*999 ]] || { echo "$output"; false; }
}

@test "tests/gpu/chunk: a prefill chunk's recurrent states equal its steps' (the reference, on the CPU)" {
    need_numpy
    CHUNK_DEVICE=cpu LOGOS_BIN="$LOGOS_BIN" run -0 sh "$TOP/tests/gpu/chunk" "$TINY/qwen3next.yaml"
    [ "${lines[0]}" = "chunk $TINY/qwen3next.yaml precise: a chunk of 8 tokens against 8 steps (cpu)" ] || { echo "$output"; false; }
    # the delta rule's states, the convolution rings and the attention's cache, each compared
    [[ "$output" == *"state Sd0 "*"ok"* ]]
    [[ "$output" == *"state Rc0 "*"ok"* ]]
    [[ "$output" == *"state Kc3 "*"ok"* ]]
    [ "${lines[-1]}" = "chunk: 8 passed, 0 failed" ]
    CHUNK_DEVICE=cpu LOGOS_BIN="$LOGOS_BIN" run -0 sh "$TOP/tests/gpu/chunk" "$TINY/lfm2.yaml" precise "4 4 2 9 1"
    [ "${lines[0]}" = "chunk $TINY/lfm2.yaml precise: a chunk of 5 tokens against 5 steps (cpu)" ]
    [ "${lines[-1]}" = "chunk: 5 passed, 0 failed" ] || { echo "$output"; false; }
    # a bound no float meets: the script says so and fails
    CHUNK_DEVICE=cpu CHUNK_BOUND=-1 LOGOS_BIN="$LOGOS_BIN" run -1 sh "$TOP/tests/gpu/chunk" "$TINY/lfm2.yaml"
    [[ "$output" == *"FAIL"* ]]
}

@test "LOGOS_REF_NUMERICS: the reference quantizes a plan's products as its numerics say" {
    "$LOGOS_BIN/logos-author" generate "$TINY/llama.yaml" >g.logos
    for num in precise q8 q8x2; do "$LOGOS_BIN/logos-fuse" -q --numerics $num g.logos >$num.plan; done
    "$LOGOS_BIN/logos-run" -q --device cpu --synthetic 7 -p "1 2 3" -n 4 --logits f32.f32 g.logos >/dev/null
    for num in precise q8 q8x2; do
        LOGOS_REF_NUMERICS=1 "$LOGOS_BIN/logos-run" -q --device cpu --synthetic 7 -p "1 2 3" -n 4 --logits $num.f32 $num.plan >/dev/null
        LOGOS_REF_NUMERICS=0 "$LOGOS_BIN/logos-run" -q --device cpu --synthetic 7 -p "1 2 3" -n 4 --logits $num.off.f32 $num.plan >/dev/null
        cmp $num.off.f32 f32.f32   # off (or 0): the program in f32, bit for bit
    done
    cmp precise.f32 f32.f32        # precise numerics quantize nothing
    run -1 cmp -s q8.f32 f32.f32   # q8 and q8x2 do, each its own way
    run -1 cmp -s q8x2.f32 f32.f32
    run -1 cmp -s q8.f32 q8x2.f32
    [ "$(stat -c %s q8.f32)" -eq "$(stat -c %s f32.f32)" ]
}

@test "LOGOS_REF_NUMERICS: attention a flash launch covers is flash.cu's (f16 operands, its tiles); other attention as before" {
    "$LOGOS_BIN/logos-author" prefill "$TINY/qwen3.yaml" >p.logos
    "$LOGOS_BIN/logos-fuse" -q --numerics q8 p.logos >flash.plan             # chunks of 64 rows: flash
    "$LOGOS_BIN/logos-fuse" -q --numerics q8 --rows 1 p.logos >attend.plan   # chunks of a row: attend
    [ "$(grep -c '^launch flash ' flash.plan)" -eq 2 ]
    ! grep -q '^launch flash ' attend.plan
    local P="1 2 3 4 5 6 7 8"   # one chunk, then its one token
    "$LOGOS_BIN/logos-run" -q --device cpu --synthetic 7 -p "$P" -n 1 --logits f32.f32 p.logos >/dev/null
    for pl in flash attend; do
        mkdir $pl.trace
        LOGOS_REF_NUMERICS=1 LOGOS_TRACE=$pl.trace "$LOGOS_BIN/logos-run" -q --device cpu --synthetic 7 -p "$P" -n 1 \
            --logits $pl.f32 $pl.plan >/dev/null
        LOGOS_REF_NUMERICS=1 "$LOGOS_BIN/logos-run" -q --device cpu --synthetic 7 -p "$P" -n 1 --logits $pl.again.f32 \
            $pl.plan >/dev/null
        cmp $pl.f32 $pl.again.f32      # traced or not, the same
        LOGOS_REF_NUMERICS=0 "$LOGOS_BIN/logos-run" -q --device cpu --synthetic 7 -p "$P" -n 1 --logits $pl.off.f32 \
            $pl.plan >/dev/null
        cmp $pl.off.f32 f32.f32        # off: the program in f32, bit for bit
    done
    run -1 cmp -s attend.f32 f32.f32     # attend's plan: its products quantized, its attention f32
    run -1 cmp -s flash.f32 attend.f32   # flash's: the same products, its attention in f16 operands
    # the two runs part at the first attention: every value before it is the same
    local first
    first=$(while read -r r k name ty; do
        cmp -s flash.trace/$r.$k.$name attend.trace/$r.$k.$name || { echo "$name"; break; }
    done <flash.trace/order)
    [ "$first" = bo0 ]
    grep -q '^bo0 = attend(' p.logos
}

# ---- outputs and options that do not fit together ----

@test "-o and --logits naming one file (by name, path or link) is a usage error, and the file is kept" {
    step
    echo old >ids
    ln -s ids lnk
    for pair in "ids ids" "ids ./ids" "lnk ids" "new ../${PWD##*/}/new"; do
        set -- $pair
        run --separate-stderr "$LOGOS_BIN/logos-run" -q --device cpu --synthetic 1 -p 1 -n 2 -o "$1" --logits "$2" step.logos
        [ "$status" -eq 2 ]
        [ -z "$output" ]
        [ "$stderr" = "logos-run: -o and --logits both name '$2': give each its own file" ]
    done
    [ "$(cat ids)" = old ]
    [ ! -e new ]
    # devices are written in place: /dev/null for both is fine
    run --separate-stderr "$LOGOS_BIN/logos-run" -q --device cpu --synthetic 1 -p 1 -n 2 -o /dev/null --logits /dev/null step.logos
    [ "$status" -eq 0 ]
}

@test "--compile runs nothing: -o or --logits with it is a usage error" {
    step
    run --separate-stderr "$LOGOS_BIN/logos-run" --compile -o ids step.logos
    [ "$status" -eq 2 ]
    [ "$stderr" = "logos-run: --compile runs nothing: -o names where a run's token ids go" ]
    run --separate-stderr "$LOGOS_BIN/logos-run" --compile --logits lg step.logos
    [ "$status" -eq 2 ]
    [ "$stderr" = "logos-run: --compile runs nothing: --logits names where a run's logits go" ]
    [ ! -e ids ] && [ ! -e lg ]
}

@test "--arch below 90 is refused (the kernels need sm_90); one NVRTC does not compile for is named with those it does" {
    step
    "$LOGOS_BIN/logos-fuse" step.logos >s.plan
    run --separate-stderr "$LOGOS_BIN/logos-run" --compile --arch 80 s.plan
    [ "$status" -eq 2 ]
    [ "$stderr" = "logos-run: --arch takes a compute capability (90 for sm_90) from 90 to 200, not '80'" ]
    "$LOGOS_BIN/logos-run" --compile s.plan >/dev/null 2>&1 || skip "no NVRTC here"
    run --separate-stderr "$LOGOS_BIN/logos-run" --compile --arch 95 s.plan
    [ "$status" -eq 2 ]
    [ -z "$output" ]
    [[ "$stderr" == "logos-run: --arch 95: NVRTC "*" compiles for "*" 90 "* ]]
}

@test "-P with a file of no prompt names the file (exit 1)" {
    step
    printf '\n  \n' >empty
    run --separate-stderr "$LOGOS_BIN/logos-run" -q --synthetic 1 -P empty step.logos
    [ "$status" -eq 1 ]
    [ -z "$output" ]
    [ "$stderr" = "logos-run: empty: no prompt in it: one prompt a line, token ids" ]
}

@test "--logits with -n 0: the prompt still runs (a chunk's one row, a stepped prompt's P rows)" {
    step
    "$LOGOS_BIN/logos-author" generate "$TINY/llama.yaml" >gen.logos
    "$LOGOS_BIN/logos-run" -q --device cpu --synthetic 1 -p "1 2 3" -n 0 --logits lg gen.logos
    [ "$(stat -c %s lg)" -eq $((1 * 256 * 4)) ]
    "$LOGOS_BIN/logos-run" -q --device cpu --synthetic 1 -p "1 2 3" -n 0 --logits lg step.logos
    [ "$(stat -c %s lg)" -eq $((3 * 256 * 4)) ]
}

@test "SIGTERM while weights are written leaves no temporary behind (exit 143)" {
    sed 's/^vocab: .*/vocab: 32000/; s/^dim: .*/dim: 1024/; s/^layers: .*/layers: 48/; s/heads: 4/heads: 8/;
         s/kv_heads: 2/kv_heads: 8/; s/head_dim: 16/head_dim: 128/; s/hidden: 128/hidden: 4096/' \
        "$TINY/llama.yaml" >mid.yaml
    "$LOGOS_BIN/logos-author" decode_step mid.yaml >mid.logos
    "$LOGOS_BIN/logos-run" -q --synthetic 1 --write-weights ww mid.logos &
    local pid=$! i=0
    # until the first weight is in place and others are being written
    while [ "$(ls -A ww 2>/dev/null | grep -vc tmp)" -lt 2 ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
    kill -TERM $pid
    local st=0
    wait $pid || st=$?
    [ "$st" -eq 143 ]
    [ -z "$(ls -A ww | grep tmp)" ]
}

@test "--write-weights to a path that is not a directory says so (exit 3)" {
    step
    touch plain
    run --separate-stderr "$LOGOS_BIN/logos-run" --synthetic 1 --write-weights plain step.logos
    [ "$status" -eq 3 ]
    [ "$stderr" = "logos-run: plain: not a directory: --write-weights writes a file a weight into one" ]
}
