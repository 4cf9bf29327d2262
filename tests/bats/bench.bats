#!/usr/bin/env bats
# bench.bats — logos-bench where no GPU answers: the bytes a step must read
# (checked against a hand count), the table, CSV, JSON and SVG shapes,
# --compare, and every rejected input with its status and message. What
# needs a GPU (the read ceiling, the launches) runs in tests/gpu/run.

load common
bats_require_minimum_version 1.5.0

TINY="$EX/tiny"

setup() {
    mkdir -p "$BATS_TEST_TMPDIR/d"
    cd "$BATS_TEST_TMPDIR/d"
    "$LOGOS_BIN/logos-author" decode_step "$TINY/llama.yaml" >step.logos
}

# The tiny Llama's step at position P, by hand: its weights (89984 q8 values
# at 1 + 2/32 bytes, 448 f32 values at 4: 97024 bytes) and the cache rows its
# two attentions read (P rows, 2 kv heads of 16 keys and 16 values, f32).
hand() { echo $((97024 + 2 * $1 * 2 * (16 + 16) * 4)); }

@test "logos-bench: the bytes a step reads, against a hand count, at each position" {
    run --separate-stderr "$LOGOS_BIN/logos-bench" --device cpu --synthetic 1 -n 2 --pos 1 --pos 33 --pos 64 step.logos
    [ "$status" -eq 0 ]
    [ -z "$stderr" ]
    [ "${lines[0]}" = "device: none: the CPU reference's time, no GPU figures were taken" ]
    [ "${lines[1]}" = "step.logos: tiny-llama decode_step, numerics q8x2, fuse_quant" ]
    [ "$(tr -s ' ' <<<"${lines[2]}")" = " pos bytes ms/step (p10-p90) tok/s GB/s ceiling" ]
    [ "${#lines[@]}" -eq 6 ]
    local i=3 p
    for p in 1 33 64; do
        [[ "$(tr -s ' ' <<<"${lines[$i]}")" =~ ^\ $p\ $(hand $p)\ [0-9.]+\ \([0-9.]+-[0-9.]+\)\ [0-9.]+\ [0-9.]+\ -$ ]]
        i=$((i + 1))
    done
}

@test "logos-bench: the default position is 512, or the context when it holds fewer" {
    run --separate-stderr "$LOGOS_BIN/logos-bench" --device cpu --synthetic 1 -n 1 --csv step.logos
    [ "$status" -eq 0 ]
    [[ "${lines[1]}" == step,step.logos,tiny-llama,decode_step,64,,,1,*,$(hand 64),*,,1 ]]
}

@test "logos-bench: an untied head reads its own weight whole, the embedding only the row it gathers" {
    sed 's/tied: true/tied: false/' "$TINY/llama.yaml" >untied.yaml
    "$LOGOS_BIN/logos-author" decode_step untied.yaml >untied.logos
    run --separate-stderr "$LOGOS_BIN/logos-bench" --device cpu --synthetic 1 -n 1 --pos 17 --csv untied.logos
    [ "$status" -eq 0 ]
    # the head's 256x64 q8 values whole (17408 bytes, as the tied table was)
    # and one gathered row of the table: 64 q8 values, 68 bytes
    [[ "${lines[1]}" == step,untied.logos,tiny-llama,decode_step,17,,,1,*,$(($(hand 17) + 68)),*,,1 ]]
}

@test "logos-bench: a plan counts what its launches read" {
    "$LOGOS_BIN/logos-fuse" step.logos >step.plan
    run --separate-stderr "$LOGOS_BIN/logos-bench" --device cpu --synthetic 1 -n 1 --pos 17 --csv step.plan
    [ "$status" -eq 0 ]
    [[ "${lines[1]}" == step,step.plan,tiny-llama,decode_step,17,,,1,*,$(hand 17),*,,1 ]]
}

@test "logos-bench --csv: a header and a row a position; --ceiling fills the fraction" {
    run --separate-stderr "$LOGOS_BIN/logos-bench" --device cpu --synthetic 1 -n 3 --csv --ceiling 0.001 --pos 5 --pos 6 step.logos
    [ "$status" -eq 0 ]
    [ "${#lines[@]}" -eq 3 ]
    [ "${lines[0]}" = "what,plan,model,form,pos,launch,kernel,count,ms,ms_p10,ms_p90,bytes,gb_per_s,fraction_of_ceiling,share" ]
    [[ "${lines[1]}" =~ ^step,step.logos,tiny-llama,decode_step,5,,,1,[0-9.]+,[0-9.]+,[0-9.]+,$(hand 5),[0-9.]+,[0-9.]+,1$ ]]
    [[ "${lines[2]}" =~ ^step,step.logos,tiny-llama,decode_step,6,,,1,[0-9.]+,[0-9.]+,[0-9.]+,$(hand 6),[0-9.]+,[0-9.]+,1$ ]]
}

@test "logos-bench --json parses, with the figures' keys" {
    command -v python3 >/dev/null || skip "no python3 to parse JSON"
    run --separate-stderr "$LOGOS_BIN/logos-bench" --device cpu --synthetic 1 -n 2 --json --pos 9 step.logos
    [ "$status" -eq 0 ]
    [ "${#lines[@]}" -eq 1 ]
    python3 - "$output" "$(hand 9)" <<'PY'
import json, sys
d = json.loads(sys.argv[1])
assert d["device"] is None and d["ceiling_gb_per_s"] is None, d
(p,) = d["plans"]
assert p["plan"] == "step.logos" and p["model"] == "tiny-llama" and p["numerics"] == "q8x2", p
(s,) = p["steps"]
assert s["pos"] == 9 and s["bytes"] == int(sys.argv[2]) and s["launches"] == [], s
for k in ("ms", "ms_p10", "ms_p90", "tokens_per_s", "gb_per_s"):
    assert s[k] > 0, k
assert s["fraction_of_ceiling"] is None
PY
}

@test "logos-bench --svg writes a roofline that parses as XML" {
    command -v python3 >/dev/null || skip "no python3 to parse XML"
    run --separate-stderr "$LOGOS_BIN/logos-bench" --device cpu --synthetic 1 -n 1 --ceiling 4500 --svg r.svg step.logos
    [ "$status" -eq 0 ]
    python3 -c 'import sys, xml.dom.minidom as m; d = m.parse(sys.argv[1]); assert d.documentElement.tagName == "svg"' r.svg
    grep -q 'read ceiling 4500 GB/s' r.svg
}

@test "logos-bench --compare: two plans in one run and their ratio" {
    "$LOGOS_BIN/logos-fuse" --numerics q8 --fuse-quant step.logos >q8.plan
    run --separate-stderr "$LOGOS_BIN/logos-bench" --device cpu --synthetic 1 -n 2 --pos 8 step.logos --compare q8.plan
    [ "$status" -eq 0 ]
    [ "${lines[1]}" = "step.logos: tiny-llama decode_step, numerics q8x2, fuse_quant" ]
    [ "${lines[4]}" = "q8.plan: tiny-llama decode_step, numerics q8, fuse_quant" ]
    [[ "${lines[-1]}" =~ ^at\ position\ 8,\ q8.plan\ takes\ [0-9.]+\ times\ the\ time\ of\ step.logos$ ]]
}

@test "logos-bench reads weight files, and names a missing one" {
    "$LOGOS_BIN/logos-run" --synthetic 1 --write-weights w step.logos
    run --separate-stderr "$LOGOS_BIN/logos-bench" --device cpu --weights w -n 1 --csv step.logos
    [ "$status" -eq 0 ]
    [[ "${lines[1]}" == step,step.logos,tiny-llama,decode_step,64,* ]]
    rm w/wo1.q
    run --separate-stderr "$LOGOS_BIN/logos-bench" --device cpu --weights w -n 1 step.logos
    [ "$status" -eq 1 ]
    [ -z "$output" ]
    [ "$stderr" = "logos-bench: w/wo1.q: missing (expected 4096 bytes for q8[64,64])" ]
}

@test "logos-bench rejects a stream that does not hold the form, naming the file and what it holds" {
    "$LOGOS_BIN/logos-author" prefill "$TINY/llama.yaml" >prefill.logos
    run --separate-stderr "$LOGOS_BIN/logos-bench" --synthetic 1 prefill.logos
    [ "$status" -eq 1 ]
    [ -z "$output" ]
    [ "$stderr" = "logos-bench: prefill.logos: --form step times decode steps: the stream holds a prefill chunk (--form prefill)" ]
    run --separate-stderr "$LOGOS_BIN/logos-bench" --synthetic 1 --form prefill step.logos
    [ "$status" -eq 1 ]
    [ -z "$output" ]
    [ "$stderr" = "logos-bench: step.logos: --form prefill times a prefill chunk: the stream holds decode steps (--form step)" ]
    "$LOGOS_BIN/logos-author" decode_batch --batch 3 "$TINY/llama.yaml" >batch.logos
    run --separate-stderr "$LOGOS_BIN/logos-bench" --synthetic 1 --form prefill batch.logos
    [ "$status" -eq 1 ]
    [ "$stderr" = "logos-bench: batch.logos: --form prefill times a prefill chunk: the stream holds a batch of 3 decode steps (--form decode_batch)" ]
    run --separate-stderr "$LOGOS_BIN/logos-bench" --synthetic 1 batch.logos
    [ "$status" -eq 1 ]
    [ "$stderr" = "logos-bench: batch.logos: --form step times decode steps: the stream holds a batch of 3 decode steps (--form decode_batch)" ]
    "$LOGOS_BIN/logos-author" generate "$TINY/llama.yaml" >gen.logos
    run --separate-stderr "$LOGOS_BIN/logos-bench" --synthetic 1 --form decode_batch gen.logos
    [ "$status" -eq 1 ]
    [ -z "$output" ]
    [ "$stderr" = "logos-bench: gen.logos: --form decode_batch times a batch of decode steps: the stream holds a prefill chunk (--form prefill) and decode steps (--form step)" ]
}

@test "logos-bench rejects a position past the context" {
    run --separate-stderr "$LOGOS_BIN/logos-bench" --device cpu --synthetic 1 --pos 65 step.logos
    [ "$status" -eq 1 ]
    [ -z "$output" ]
    [ "$stderr" = "logos-bench: position 65 is past the 64 positions the states hold" ]
}

@test "logos-bench usage errors" {
    run --separate-stderr "$LOGOS_BIN/logos-bench" step.logos
    [ "$status" -eq 2 ]
    [ "$stderr" = "logos-bench: give the weights: --weights DIR or --synthetic SEED (one of them)" ]
    run --separate-stderr "$LOGOS_BIN/logos-bench" --synthetic 1 -n 0 step.logos
    [ "$status" -eq 2 ]
    [ "$stderr" = "logos-bench: -n takes a whole number from 1 to 1000000, not '0'" ]
    run --separate-stderr "$LOGOS_BIN/logos-bench" --synthetic 1 --pos 0 step.logos
    [ "$status" -eq 2 ]
    [ "$stderr" = "logos-bench: --pos takes a whole number from 1 to 16777216, not '0'" ]
    run --separate-stderr "$LOGOS_BIN/logos-bench" --synthetic 1 step.logos step.logos
    [ "$status" -eq 2 ]
    [ "$stderr" = "logos-bench: one plan at a time (a second one: --compare PLAN2)" ]
    run --separate-stderr "$LOGOS_BIN/logos-bench" --synthetic 1 --device tpu step.logos
    [ "$status" -eq 2 ]
    [ "$stderr" = "logos-bench: --device is auto, cuda or cpu, not 'tpu'" ]
    run --separate-stderr "$LOGOS_BIN/logos-bench" -h
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "usage: logos-bench (--weights DIR | --synthetic SEED) [--form F] [--chunk T | --batch B]" ]
}

@test "logos-bench --device cuda without a GPU: exit 3 saying why" {
    if "$LOGOS_BIN/logos-run" -q --device cuda --synthetic 1 -p 1 -n 1 "$TOP/tests/gpu/one.logos" >/dev/null 2>&1; then
        skip "a GPU answers here: tests/gpu/run times it"
    fi
    run --separate-stderr "$LOGOS_BIN/logos-bench" --device cuda --synthetic 1 step.logos
    [ "$status" -eq 3 ]
    [ -z "$output" ]
    [[ "$stderr" =~ ^logos-bench:\ --device\ cuda:\ no\ CUDA\ (driver|device) ]]
}
