#!/usr/bin/env bats
# bench.bats — logos-bench where no GPU answers: the bytes a step, a prefill
# chunk and a batch must read and the ops of their products (checked
# against hand counts from the spec's dimensions), the table, CSV, JSON and
# SVG shapes, --compare, and every rejected input with its status and
# message. What needs a GPU (the read ceiling, the tensor-core rate, the
# launches) runs in tests/gpu/run and tests/gpu/benchforms.

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

# cpu_table TITLE HEADER: the last run printed the CPU's table of three
# positions: status 0, no stderr, the device line, TITLE, HEADER (spaces
# squeezed), three rows.
cpu_table() {
    [ "$status" -eq 0 ] && [ -z "$stderr" ] &&
        [ "${lines[0]}" = "device: none: the CPU reference's time, no GPU figures were taken" ] &&
        [ "${lines[1]}" = "$1" ] && [ "$(tr -s ' ' <<<"${lines[2]}")" = "$2" ] && [ "${#lines[@]}" -eq 6 ]
}

@test "logos-bench: the bytes a step reads, against a hand count, at each position" {
    run --separate-stderr "$LOGOS_BIN/logos-bench" --device cpu --synthetic 1 -n 2 --pos 1 --pos 33 --pos 64 step.logos
    cpu_table "step.logos: tiny-llama decode_step, numerics q8x2, fuse_quant" \
        " pos bytes ms/step (p10-p90) tok/s GB/s ceiling"
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

# The bytes a step's csv line says at each given position.
step_bytes() { logos-bench --device cpu --synthetic 1 -n 1 --csv "$@" | awk -F, '$1 == "step" { print $12 }'; }

@test "logos-bench: a step counts a latent attention's cache rows at its position and the recurrent states whole, against hand counts" {
    # the tiny LFM2 (tied head, no mixture: every weight read whole): its
    # weights from the plan's buffers (Q8_0 at 1 + 2/32 bytes, f32 at 4),
    # one attention layer's cache rows (2 key heads of 16, keys and values,
    # f32) a position, and its three convolutions' rings (kernel 3: 2 rows of
    # 64 f32) read whole
    logos-author decode_step "$TINY/lfm2.yaml" | logos-fuse >l.plan
    local w
    w=$(awk '$1 == "buffer" && $3 == "weight" { b += $4 == "q8" ? $5 + $5 / 16 : 4 * $5 } END { print b }' l.plan)
    [ "$(step_bytes --pos 8 l.plan)" -eq $((w + 8 * 2 * 2 * 16 * 4 + 3 * 2 * 64 * 4)) ]
    [ "$(step_bytes --pos 40 l.plan)" -eq $((w + 40 * 2 * 2 * 16 * 4 + 3 * 2 * 64 * 4)) ]
    # the tiny DeepSeek-V2: each of its 3 latent layers reads one more cache
    # row a position, of 32 latent values and 16 of the turned key, f32
    logos-author decode_step "$TINY/deepseek2.yaml" | logos-fuse >d.plan
    [ $(($(step_bytes --pos 20 d.plan) - $(step_bytes --pos 8 d.plan))) -eq $((12 * 3 * (32 + 16) * 4)) ]
    # the tiny Qwen3-Next: its one attention layer's rows a position (its
    # delta layers' states and rings, constant, counted as LFM2's rings are)
    logos-author decode_step "$TINY/qwen3next.yaml" | logos-fuse >q.plan
    [ $(($(step_bytes --pos 20 q.plan) - $(step_bytes --pos 8 q.plan))) -eq $((12 * 2 * 2 * 16 * 4)) ]
    grep -q '^buffer Sd0 state f32 1024$' q.plan && grep -q '^buffer Rc0 state f32 384$' q.plan
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

@test "logos-bench --timeline on the CPU: exit 3 naming the plan and its lane, nothing printed or written" {
    run --separate-stderr "$LOGOS_BIN/logos-bench" --device cpu --synthetic 1 -n 1 --timeline t.csv step.logos
    [ "$status" -eq 3 ]
    [ -z "$output" ]
    [ "$stderr" = "logos-bench: --timeline needs the GPU: step.logos runs on the cpu reference" ]
    [ ! -e t.csv ]
    run --separate-stderr "$LOGOS_BIN/logos-bench" --device cpu --synthetic 1 -n 1 --timeline-blocks b.csv step.logos
    [ "$status" -eq 3 ]
    [ -z "$output" ]
    [ "$stderr" = "logos-bench: --timeline-blocks needs the GPU: step.logos runs on the cpu reference" ]
    [ ! -e b.csv ]
    run --separate-stderr "$LOGOS_BIN/logos-bench" --synthetic 1 --timeline
    [ "$status" -eq 2 ]
    [ "$stderr" = "logos-bench: --timeline needs a value" ]
}

@test "bench/timeline.awk sums a timeline a kind of launch: span, lead, pre-wait, tail" {
    cat >t.csv <<'EOF'
plan,model,form,pos,launch,kernel,blocks,sms,start_us,started_us,waited_us,first_end_us,end_us
a.plan,m,decode_step,512,3,gemv 1x2 q8 a8,2,2,0.000,0.500,1.000,3.000,4.000
a.plan,m,decode_step,512,4,attend x,4,4,3.500,3.600,,5.000,6.000
a.plan,m,decode_step,512,5,gemv 1x2 q8 a8,2,2,5.500,5.600,6.500,8.000,9.000
a.plan,m,decode_step,8192,3,gemv 1x2 q8 a8,2,2,0.000,0.500,1.000,3.000,4.000
EOF
    cat >want <<'EOF'
a.plan at 512: 3 launches, 9.00 us from the first start to the last end (10.00 us of spans)
  count  kernel                                       span     lead  pre-wait     tail
      2  gemv 1x2 q8 a8                               3.75    -0.25      1.00     1.00
      1  attend x                                     2.50    -0.50         -     1.00
a.plan at 8192: 1 launches, 4.00 us from the first start to the last end (4.00 us of spans)
  count  kernel                                       span     lead  pre-wait     tail
      1  gemv 1x2 q8 a8                               4.00     0.00      1.00     1.00
EOF
    awk -F, -f "$TOP/bench/timeline.awk" t.csv >got
    diff want got
}

@test "bench/blocks.awk sums a timeline's blocks by how many a multiprocessor ran" {
    cat >b.csv <<'EOF'
plan,model,form,pos,launch,kernel,block,sm,start_us,waited_us,end_us
a.plan,m,decode_step,512,3,gemv x,0,0,0.000,1.000,5.000
a.plan,m,decode_step,512,3,gemv x,1,1,0.000,1.000,4.000
a.plan,m,decode_step,512,3,gemv x,2,0,0.100,1.200,9.000
a.plan,m,decode_step,512,4,attend y,0,0,4.000,,6.000
a.plan,m,decode_step,512,5,gemv x,0,1,6.000,7.000,9.000
a.plan,m,decode_step,512,5,gemv x,1,1,6.000,7.000,10.000
a.plan,m,decode_step,512,5,gemv x,2,0,6.000,7.000,12.000
EOF
    # by hand: launch 3's sm 0 ran blocks 0 and 2 (4 and 7.8 us after their
    # waits; its last end 7.8 after the launch's last wait, 1.2), sm 1 block 1
    # (3; 2.8); launch 5's sm 1 blocks 0 and 1 (2, 3; 3), sm 0 block 2 (5; 5)
    cat >want <<'EOF'
a.plan at 512:
  kernel                                    launches   c a sm     sms    block  sm's end
  gemv x                                           2        1     1.0     4.00      3.90
                                                            2     1.0     4.20      5.40
  attend y                                         1        1     1.0     2.00      2.00
EOF
    awk -F, -f "$TOP/bench/blocks.awk" b.csv >got
    diff want got
}

# attend_sums CSV: bench/attend.awk's summary of CSV, diffed against stdin
attend_sums() {
    cat >want
    awk -F, -f "$TOP/bench/attend.awk" "$1" >got
    diff want got
}

@test "bench/attend.awk says where an attention launch's time after its wait goes" {
    cat >a.csv <<'EOF'
plan,model,form,pos,launch,kernel,block,sm,start_us,waited_us,end_us
a.plan,m,decode_step,512,9,gemv x,0,0,0.000,1.000,5.000
a.plan,m,decode_step,512,10,attend 4h/2kv x16 split 64,0,0,0.000,1.000,3.000
a.plan,m,decode_step,512,10,attend 4h/2kv x16 split 64,1,1,0.000,1.500,4.000
a.plan,m,decode_step,512,10,attend 4h/2kv x16 split 64,2,2,0.000,1.000,5.000
a.plan,m,decode_step,512,10,attend 4h/2kv x16 split 64,3,0,0.500,2.000,6.000
a.plan,m,decode_step,512,10,attend 4h/2kv x16 split 64,4,1,3.200,3.300,4.600
a.plan,m,decode_step,512,10,attend 4h/2kv x16 split 64,5,2,0.500,1.000,9.000
a.plan,m,decode_step,512,11,gemv x,0,0,9.000,9.500,12.000
EOF
    # by hand: two head groups (2kv): blocks 0, 2, 4 (ends 3, 5, 4.6: block
    # 2 merged, 0.4 after block 4) and 1, 3, 5 (ends 4, 6, 9: block 5
    # merged, 3 after block 3): merge 1.7; the last wait 3.3 (block 4, which
    # began at 3.2, after block 0 ended at 3: late); the others' times 2,
    # 2.5, 4, 1.3 (mean 2.45, the 90th percentile of four the third, 2.5);
    # their last end 6 (2.7 after the wait); the launch's 9 (5.7)
    attend_sums a.csv <<'EOF'
a.plan at 512: 1 attention launches
    blocks   late   chunk   c-p90   c-end   merge     end
       6.0    1.0    2.45    2.50    2.70    1.70    5.70
EOF
    # one query head a block (hg1): four groups along x (4h over 1): blocks
    # 0, 4 (4 merged, 1.6 after 0) and 1, 5 (5 merged, 5 after 1); 2 and 3
    # alone (each its group's merger, with no block before it): merge 3.3;
    # the others 0 and 1 (2 and 2.5: mean 2.25, 90th percentile of two the
    # first, 2); their last end 4 (0.7 after the wait 3.3)
    sed 's|attend 4h/2kv x16 split 64|attend 4h/2kv x16 hg1 split 64|' a.csv >b.csv
    attend_sums b.csv <<'EOF'
a.plan at 512: 1 attention launches
    blocks   late   chunk   c-p90   c-end   merge     end
       6.0    1.0    2.25    2.00    0.70    3.30    5.70
EOF
}

# ---- the forms: a prefill chunk and a batch of decode steps ----

# The tiny Llama's dimensions (examples/tiny/llama.yaml, checked below):
# vocabulary, width, layers, heads, key heads, head width, hidden width.
V=256 D=64 L=2 H=4 KV=2 HD=16 FF=128

dims_are_the_specs() {
    local y="$TINY/llama.yaml"
    grep -q "^vocab: $V$" "$y" && grep -q "^dim: $D$" "$y" && grep -q "^layers: $L$" "$y" &&
        grep -q " heads: $H$" "$y" && grep -q "kv_heads: $KV$" "$y" && grep -q "head_dim: $HD$" "$y" &&
        grep -q "hidden: $FF," "$y" && grep -q "tied: true" "$y"
}

# Its weights once: Q8_0 values at 1 + 2/32 bytes (an f16 scale a 32), the
# norms' f32 values at 4; the head is the embedding's table (tied), read whole.
weights() {
    local q=$((V * D + L * (D * H * HD + 2 * D * KV * HD + H * HD * D + 2 * FF * D + D * FF)))
    echo $((q + q / 16 + 4 * (2 * L + 1) * D))
}
# A position's cache rows: keys and values over the key heads, f32, a layer each.
row() { echo $((L * KV * 2 * HD * 4)); }
# The ops of one row through a layer's products (q, k, v, o, gate, up,
# down: 2 N K each), and through the head's (2 V D).
layer_ops() { echo $((2 * D * H * HD + 2 * D * 2 * KV * HD + 2 * H * HD * D + 2 * D * 2 * FF + 2 * FF * D)); }
head_ops() { echo $((2 * V * D)); }

# A chunk at position P of T rows reads the cache up to its last row
# (P + T - 1); its products run on each row, the head on the last alone.
chunk_bytes() { echo $(($(weights) + ($1 + $2 - 1) * $(row))); }
chunk_ops() { echo $(($2 * L * $(layer_ops) + $(head_ops))); }
# A batch at position P of B sequences: each reads its own cache's P rows;
# every product, the head's too, runs on B rows.
batch_bytes() { echo $(($(weights) + $2 * $1 * $(row))); }
batch_ops() { echo $(($2 * (L * $(layer_ops) + $(head_ops)))); }

@test "logos-bench: the hand count's dimensions are the tiny Llama's, and its step is the step's count" {
    dims_are_the_specs
    [ "$(batch_bytes 17 1)" -eq "$(hand 17)" ]
    [ "$(chunk_bytes 17 1)" -eq "$(hand 17)" ]
}

@test "logos-bench --form prefill: bytes and ops of a chunk against a hand count, at each position" {
    "$LOGOS_BIN/logos-author" prefill "$TINY/llama.yaml" >pre.logos
    run --separate-stderr "$LOGOS_BIN/logos-bench" --device cpu --synthetic 1 -n 2 --form prefill --chunk 16 \
        --pos 1 --pos 9 --pos 49 pre.logos
    cpu_table "pre.logos: tiny-llama prefill, numerics q8x2, fuse_quant" \
        " pos bytes ms/chunk (p10-p90) tok/s GB/s ceiling rows ops TOP/s tensor"
    local i=3 p
    for p in 1 9 49; do
        [[ "$(tr -s ' ' <<<"${lines[$i]}")" =~ ^\ $p\ $(chunk_bytes $p 16)\ [0-9.]+\ \([0-9.]+-[0-9.]+\)\ [0-9.]+\ [0-9.]+\ -\ 16\ $(chunk_ops $p 16)\ [0-9.]+\ -$ ]]
        i=$((i + 1))
    done
}

@test "logos-bench --form prefill: the chunk is the plan's rows by default, at position 1; a plan's rows bound it" {
    "$LOGOS_BIN/logos-author" prefill "$TINY/llama.yaml" >pre.logos
    "$LOGOS_BIN/logos-fuse" --rows 32 pre.logos >pre32.plan
    run --separate-stderr "$LOGOS_BIN/logos-bench" --device cpu --synthetic 1 -n 1 --form prefill --csv pre32.plan
    [ "$status" -eq 0 ]
    [[ "${lines[1]}" == step,pre32.plan,tiny-llama,prefill,1,,,1,*,$(chunk_bytes 1 32),*,,1,32,$(chunk_ops 1 32),*, ]]
    run --separate-stderr "$LOGOS_BIN/logos-bench" --device cpu --synthetic 1 -n 1 --form prefill --chunk 7 --csv pre32.plan
    [ "$status" -eq 0 ]
    [[ "${lines[1]}" == step,pre32.plan,tiny-llama,prefill,1,,,1,*,$(chunk_bytes 1 7),*,,1,7,$(chunk_ops 1 7),*, ]]
    run --separate-stderr "$LOGOS_BIN/logos-bench" --device cpu --synthetic 1 -n 1 --form prefill --chunk 33 pre32.plan
    [ "$status" -eq 1 ]
    [ -z "$output" ]
    [ "$stderr" = "logos-bench: pre32.plan: a chunk of 33 rows: the plan's chunks hold at most 32 (logos-fuse --rows 33)" ]
    # a program is fused for the chunk asked for; the context bounds it
    run --separate-stderr "$LOGOS_BIN/logos-bench" --device cpu --synthetic 1 -n 1 --form prefill --chunk 64 --csv pre.logos
    [ "$status" -eq 0 ]
    [[ "${lines[1]}" == step,pre.logos,tiny-llama,prefill,1,,,1,*,$(chunk_bytes 1 64),*,,1,64,$(chunk_ops 1 64),*, ]]
    run --separate-stderr "$LOGOS_BIN/logos-bench" --device cpu --synthetic 1 -n 1 --form prefill --chunk 16 --pos 50 pre.logos
    [ "$status" -eq 1 ]
    [ -z "$output" ]
    [ "$stderr" = "logos-bench: a chunk of 16 rows at position 50 reaches position 65, past the 64 positions the states hold" ]
}

@test "logos-bench --form decode_batch: bytes and ops of a batch against a hand count, at each position" {
    "$LOGOS_BIN/logos-author" decode_batch --batch 3 "$TINY/llama.yaml" >batch.logos
    run --separate-stderr "$LOGOS_BIN/logos-bench" --device cpu --synthetic 1 -n 2 --form decode_batch --batch 3 \
        --pos 1 --pos 40 --pos 64 batch.logos
    [ "$status" -eq 0 ]
    [ -z "$stderr" ]
    [ "${lines[1]}" = "batch.logos: tiny-llama decode_batch, numerics q8x2, fuse_quant" ]
    [ "$(tr -s ' ' <<<"${lines[2]}")" = " pos bytes ms/step (p10-p90) tok/s GB/s ceiling rows ops TOP/s tensor" ]
    [ "${#lines[@]}" -eq 6 ]
    local i=3 p
    for p in 1 40 64; do
        [[ "$(tr -s ' ' <<<"${lines[$i]}")" =~ ^\ $p\ $(batch_bytes $p 3)\ [0-9.]+\ \([0-9.]+-[0-9.]+\)\ [0-9.]+\ [0-9.]+\ -\ 3\ $(batch_ops $p 3)\ [0-9.]+\ -$ ]]
        i=$((i + 1))
    done
    # without --batch, the stream's; the default position as for a step
    run --separate-stderr "$LOGOS_BIN/logos-bench" --device cpu --synthetic 1 -n 1 --form decode_batch --csv batch.logos
    [ "$status" -eq 0 ]
    [[ "${lines[1]}" == step,batch.logos,tiny-llama,decode_batch,64,,,1,*,$(batch_bytes 64 3),*,,1,3,$(batch_ops 64 3),*, ]]
}

@test "logos-bench --form decode_batch: the stream's batch and no other" {
    "$LOGOS_BIN/logos-author" decode_batch --batch 3 "$TINY/llama.yaml" >batch.logos
    run --separate-stderr "$LOGOS_BIN/logos-bench" --device cpu --synthetic 1 -n 1 --form decode_batch --batch 4 batch.logos
    [ "$status" -eq 1 ]
    [ -z "$output" ]
    [ "$stderr" = "logos-bench: batch.logos: --batch 4: the stream steps 3 sequences together, not 4 (logos-author decode_batch --batch 4 writes a batch of 4)" ]
    run --separate-stderr "$LOGOS_BIN/logos-bench" --device cpu --synthetic 1 -n 1 --form decode_batch --pos 65 batch.logos
    [ "$status" -eq 1 ]
    [ "$stderr" = "logos-bench: position 65 is past the 64 positions the states hold" ]
}

@test "logos-bench: a stream of a chunk and steps (generate's) times either" {
    "$LOGOS_BIN/logos-author" generate "$TINY/llama.yaml" >gen.logos
    run --separate-stderr "$LOGOS_BIN/logos-bench" --device cpu --synthetic 1 -n 1 --pos 17 --csv gen.logos
    [ "$status" -eq 0 ]
    [ "${#lines[@]}" -eq 2 ]
    [[ "${lines[1]}" == step,gen.logos,tiny-llama,decode_step,17,,,1,*,$(hand 17),*,,1 ]]
    run --separate-stderr "$LOGOS_BIN/logos-bench" --device cpu --synthetic 1 -n 1 --form prefill --chunk 5 --pos 17 --csv gen.logos
    [ "$status" -eq 0 ]
    [[ "${lines[1]}" == step,gen.logos,tiny-llama,prefill,17,,,1,*,$(chunk_bytes 17 5),*,,1,5,$(chunk_ops 17 5),*, ]]
}

# usage_is MESSAGE ARGS...: logos-bench ARGS step.logos exits 2 with
# "logos-bench: MESSAGE" alone on stderr and nothing on stdout.
usage_is() {
    local msg=$1
    shift
    run --separate-stderr "$LOGOS_BIN/logos-bench" --synthetic 1 "$@" step.logos
    [ "$status" -eq 2 ] && [ -z "$output" ] && [ "$stderr" = "logos-bench: $msg" ]
}

@test "logos-bench --form: a bad word, --chunk or --batch without their form, out of range" {
    usage_is "--form is step, prefill or decode_batch, not 'chunk'" --form chunk
    usage_is "--chunk is for --form prefill" --chunk 16
    usage_is "--chunk is for --form prefill" --form decode_batch --chunk 16
    usage_is "--batch is for --form decode_batch" --form prefill --batch 4
    usage_is "--batch takes a whole number from 1 to 256, not '0'" --form decode_batch --batch 0
    usage_is "--batch takes a whole number from 1 to 256, not '257'" --form decode_batch --batch 257
    usage_is "--chunk takes a whole number from 1 to 65536, not '0'" --form prefill --chunk 0
    run --separate-stderr "$LOGOS_BIN/logos-bench" --synthetic 1 --form prefill --tensor-rate 0 step.logos
    [ "$status" -eq 2 ]
    [[ "$stderr" == "logos-bench: --tensor-rate takes a number from "* ]]
}

@test "logos-bench --csv for a chunk and a batch: the step's columns, then rows, ops, TOP/s and the tensor fraction" {
    "$LOGOS_BIN/logos-author" prefill "$TINY/llama.yaml" >pre.logos
    "$LOGOS_BIN/logos-author" decode_batch --batch 2 "$TINY/llama.yaml" >batch.logos
    local head="what,plan,model,form,pos,launch,kernel,count,ms,ms_p10,ms_p90,bytes,gb_per_s,fraction_of_ceiling,share,rows,ops,top_per_s,fraction_of_tensor_rate"
    run --separate-stderr "$LOGOS_BIN/logos-bench" --device cpu --synthetic 1 -n 2 --form prefill --chunk 8 --csv pre.logos
    [ "$status" -eq 0 ]
    [ "${#lines[@]}" -eq 2 ]
    [ "${lines[0]}" = "$head" ]
    [[ "${lines[1]}" =~ ^step,pre.logos,tiny-llama,prefill,1,,,1,[0-9.]+,[0-9.]+,[0-9.]+,$(chunk_bytes 1 8),[0-9.]+,,1,8,$(chunk_ops 1 8),[0-9.]+,$ ]]
    run --separate-stderr "$LOGOS_BIN/logos-bench" --device cpu --synthetic 1 -n 2 --form decode_batch --csv \
        --ceiling 0.001 --tensor-rate 0.000001 --pos 5 --pos 6 batch.logos
    [ "$status" -eq 0 ]
    [ "${#lines[@]}" -eq 3 ]
    [ "${lines[0]}" = "$head" ]
    [[ "${lines[1]}" =~ ^step,batch.logos,tiny-llama,decode_batch,5,,,1,[0-9.]+,[0-9.]+,[0-9.]+,$(batch_bytes 5 2),[0-9.]+,[0-9.]+,1,2,$(batch_ops 5 2),[0-9.]+,[0-9.]+$ ]]
    [[ "${lines[2]}" =~ ^step,batch.logos,tiny-llama,decode_batch,6,,,1,[0-9.]+,[0-9.]+,[0-9.]+,$(batch_bytes 6 2),[0-9.]+,[0-9.]+,1,2,$(batch_ops 6 2),[0-9.]+,[0-9.]+$ ]]
}

@test "logos-bench --json for a chunk: the step's keys, then rows, ops, TOP/s, the form and the tensor rate" {
    command -v python3 >/dev/null || skip "no python3 to parse JSON"
    "$LOGOS_BIN/logos-author" prefill "$TINY/llama.yaml" >pre.logos
    run --separate-stderr "$LOGOS_BIN/logos-bench" --device cpu --synthetic 1 -n 2 --json --form prefill --chunk 12 \
        --pos 3 --tensor-rate 500 pre.logos
    [ "$status" -eq 0 ]
    [ "${#lines[@]}" -eq 1 ]
    python3 - "$output" "$(chunk_bytes 3 12)" "$(chunk_ops 3 12)" <<'PY'
import json, sys
d = json.loads(sys.argv[1])
assert list(d) == ["device", "ceiling_gb_per_s", "plans", "form", "tensor_top_per_s"], list(d)
assert d["device"] is None and d["ceiling_gb_per_s"] is None, d
assert d["form"] == "prefill" and d["tensor_top_per_s"] == 500, d
(p,) = d["plans"]
assert p["plan"] == "pre.logos" and p["model"] == "tiny-llama" and p["numerics"] == "q8x2", p
(s,) = p["steps"]
assert list(s) == ["pos", "bytes", "ms", "ms_p10", "ms_p90", "tokens_per_s", "gb_per_s", "fraction_of_ceiling",
                   "launches", "rows", "ops", "top_per_s", "fraction_of_tensor_rate"], list(s)
assert s["pos"] == 3 and s["rows"] == 12 and s["launches"] == [], s
assert s["bytes"] == int(sys.argv[2]) and s["ops"] == int(sys.argv[3]), s
assert abs(s["tokens_per_s"] - 12e3 / s["ms"]) < 1e-3 * s["tokens_per_s"], s
assert abs(s["top_per_s"] - s["ops"] / s["ms"] / 1e9) < 1e-3 * s["top_per_s"] + 1e-6, s
assert abs(s["fraction_of_tensor_rate"] - s["top_per_s"] / 500) < 1e-5, s
assert s["fraction_of_ceiling"] is None
PY
}

@test "logos-bench --json for a batch without a tensor rate: null where there is no rate" {
    command -v python3 >/dev/null || skip "no python3 to parse JSON"
    "$LOGOS_BIN/logos-author" decode_batch --batch 2 "$TINY/llama.yaml" >batch.logos
    run --separate-stderr "$LOGOS_BIN/logos-bench" --device cpu --synthetic 1 -n 1 --json --form decode_batch --pos 7 batch.logos
    [ "$status" -eq 0 ]
    python3 - "$output" "$(batch_bytes 7 2)" "$(batch_ops 7 2)" <<'PY'
import json, sys
d = json.loads(sys.argv[1])
assert d["form"] == "decode_batch" and d["tensor_top_per_s"] is None, d
(s,) = d["plans"][0]["steps"]
assert s["rows"] == 2 and s["bytes"] == int(sys.argv[2]) and s["ops"] == int(sys.argv[3]), s
assert s["fraction_of_tensor_rate"] is None and s["fraction_of_ceiling"] is None, s
PY
}

@test "logos-bench --compare and --svg for a chunk" {
    command -v python3 >/dev/null || skip "no python3 to parse XML"
    "$LOGOS_BIN/logos-author" prefill "$TINY/llama.yaml" >pre.logos
    "$LOGOS_BIN/logos-fuse" --numerics q8 --rows 16 pre.logos >q8.plan
    run --separate-stderr "$LOGOS_BIN/logos-bench" --device cpu --synthetic 1 -n 2 --form prefill --chunk 16 --pos 8 \
        --ceiling 4500 --tensor-rate 800 --svg r.svg pre.logos --compare q8.plan
    [ "$status" -eq 0 ]
    [ "${lines[1]}" = "pre.logos: tiny-llama prefill, numerics q8x2, fuse_quant" ]
    [ "${lines[4]}" = "q8.plan: tiny-llama prefill, numerics q8, fuse_quant" ]
    [[ "$(tr -s ' ' <<<"${lines[6]}")" =~ ^\ 8\ $(chunk_bytes 8 16)\ .*\ 16\ $(chunk_ops 8 16)\ [0-9.]+\ [0-9.]+%$ ]]
    [[ "${lines[-1]}" =~ ^at\ position\ 8,\ q8.plan\ takes\ [0-9.]+\ times\ the\ time\ of\ pre.logos$ ]]
    python3 -c 'import sys, xml.dom.minidom as m; d = m.parse(sys.argv[1]); assert d.documentElement.tagName == "svg"' r.svg
    grep -q 'read ceiling 4500 GB/s' r.svg
    grep -q 'tensor cores 800 TOP/s' r.svg
    # the compared plan's chunks must hold the first's
    run --separate-stderr "$LOGOS_BIN/logos-bench" --device cpu --synthetic 1 -n 1 --form prefill --chunk 17 pre.logos --compare q8.plan
    [ "$status" -eq 1 ]
    [ "$stderr" = "logos-bench: q8.plan: a chunk of 17 rows: the plan's chunks hold at most 16 (logos-fuse --rows 17)" ]
}

@test "logos-bench --form prefill and decode_batch --device cuda without a GPU: exit 3 saying why" {
    if "$LOGOS_BIN/logos-run" -q --device cuda --synthetic 1 -p 1 -n 1 "$TOP/tests/gpu/one.logos" >/dev/null 2>&1; then
        skip "a GPU answers here: tests/gpu/benchforms times it"
    fi
    "$LOGOS_BIN/logos-author" prefill "$TINY/llama.yaml" >pre.logos
    run --separate-stderr "$LOGOS_BIN/logos-bench" --device cuda --synthetic 1 --form prefill --chunk 16 pre.logos
    [ "$status" -eq 3 ]
    [ -z "$output" ]
    [[ "$stderr" =~ ^logos-bench:\ --device\ cuda:\ no\ CUDA\ (driver|device) ]]
    "$LOGOS_BIN/logos-author" decode_batch --batch 2 "$TINY/llama.yaml" >batch.logos
    run --separate-stderr "$LOGOS_BIN/logos-bench" --device cuda --synthetic 1 --form decode_batch batch.logos
    [ "$status" -eq 3 ]
    [[ "$stderr" =~ ^logos-bench:\ --device\ cuda:\ no\ CUDA\ (driver|device) ]]
}

@test "tests/gpu/benchforms skips cleanly without a GPU" {
    if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
        skip "a GPU answers here: the script runs for real"
    fi
    run --separate-stderr sh "$TOP/tests/gpu/benchforms"
    [ "$status" -eq 0 ]
    [ "$output" = "benchforms: skipped: no GPU" ]
}

@test "tests/gpu/benchforms checks itself on the CPU reference (BENCH_DEVICE=cpu): a row a run" {
    run --separate-stderr env BENCH_DEVICE=cpu BENCH_NUMERICS=q8 BENCH_CHUNKS=8 BENCH_BATCHES="1 2" \
        BENCH_BATCH_CTX=16 BENCH_BATCH_POS=4 BENCH_REPS=1 BENCH_LAUNCH_REPS=1 sh "$TOP/tests/gpu/benchforms" tiny/llama
    [ "$status" -eq 0 ]
    [ "$(tr -s ' ' <<<"${lines[-4]}")" = "shape num form rows pos ms tok/s TOP/s tensor GB/s ceiling" ]
    [[ "$(tr -s ' ' <<<"${lines[-3]}")" =~ ^tiny/llama\ q8\ prefill\ 8\ 1\ [0-9.]+\ [0-9.]+\ [0-9.]+\ -\ [0-9.]+\ -$ ]]
    [[ "$(tr -s ' ' <<<"${lines[-2]}")" =~ ^tiny/llama\ q8\ decode_batch\ 1\ 4\ [0-9.]+\ [0-9.]+\ [0-9.]+\ -\ [0-9.]+\ -$ ]]
    [[ "$(tr -s ' ' <<<"${lines[-1]}")" =~ ^tiny/llama\ q8\ decode_batch\ 2\ 4\ [0-9.]+\ [0-9.]+\ [0-9.]+\ -\ [0-9.]+\ -$ ]]
}

@test "tests/gpu/benchforms BENCH_CACHE=f16: the specs' caches in f16, a batch step reads fewer bytes" {
    local b32 b16
    for c in f32 f16; do
        mkdir -p "$c"
        run --separate-stderr env OUT="$PWD/$c" BENCH_CACHE=$c BENCH_DEVICE=cpu BENCH_NUMERICS=q8 BENCH_CHUNKS=" " \
            BENCH_BATCHES=2 BENCH_BATCH_CTX=16 BENCH_BATCH_POS=12 BENCH_REPS=1 BENCH_LAUNCH_REPS=1 \
            sh "$TOP/tests/gpu/benchforms" tiny/llama
        [ "$status" -eq 0 ]
        [[ "${lines[-4]}" == "== benchforms (synthetic Q8_0 weights, $c caches; "* ]]
    done
    b32=$(awk -F, '$1 == "step" { print $12 }' f32/benchforms/tiny-llama.q8.batch2.csv)
    b16=$(awk -F, '$1 == "step" { print $12 }' f16/benchforms/tiny-llama.q8.batch2.csv)
    [ -n "$b32" ] && [ -n "$b16" ] && [ "$b16" -lt "$b32" ]
}

@test "--csv and --json together is a usage error" {
    run --separate-stderr "$LOGOS_BIN/logos-bench" --device cpu --synthetic 1 --csv --json </dev/null
    [ "$status" -eq 2 ]
    [ -z "$output" ]
    [ "$stderr" = "logos-bench: --csv or --json: one output format" ]
}
