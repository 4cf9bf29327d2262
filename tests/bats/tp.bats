#!/usr/bin/env bats
# tp.bats — split streams through logos-fuse and logos-run where no GPU
# answers: a split program's plan keeps its collectives as collective lines
# and runs on the CPU reference as its chips, giving the program's tokens
# and logits and the single chip's tokens; --tp, --devices, --rank and
# --nccl-id and every way they do not fit, each with its exact message;
# without a GPU or without NCCL a split stream on --device cuda exits 3
# saying which.

load common
bats_require_minimum_version 1.5.0

TINY="$EX/tiny"

setup() {
    mkdir -p "$BATS_TEST_TMPDIR/d"
    cd "$BATS_TEST_TMPDIR/d"
}

# run1 ARGS...: logos-run on tp.plan (synthetic weights, a three-token prompt)
run1() {
    run --separate-stderr logos-run --synthetic 1 -p "1 2 3" -n 2 "$@"
}

@test "logos-fuse plans a split program: an allreduce is a collective line between the launches" {
    logos-author --tp 2 tp_decode_layer 0 "$TINY/llama.yaml" >tp.logos
    run --separate-stderr logos-fuse tp.logos
    [ "$status" -eq 0 ]
    [ "$(grep -c '^collective allreduce' <<<"$output")" -eq 2 ]
    grep -qx 'collective allreduce ROWS=1 COLS=64 args x=r0.2 y=r0.3 covers 9.3  # line 25' <<<"$output"
    # the launch before writes x, the launch after reads y
    [ "$(grep -B1 '^collective' <<<"$output" | head -1 | grep -o 'y0=[^ ]*')" = "y0=r0.2" ]
    [ "$(grep -A1 '^collective' <<<"$output" | sed -n 2p | grep -o 'b=[^ ]*')" = "b=r0.3" ]
    logos-fuse tp.logos >tp.plan
    run --separate-stderr logos-check tp.plan
    [ "$output" = "tp.plan: ok: 1 plan" ]
    # a batch joins its rows at once
    logos-author --tp 2 --batch 3 tp_decode_batch "$TINY/qwen3.yaml" | logos-fuse >b.plan
    grep -q '^collective allreduce ROWS=3 COLS=64 ' b.plan
}

@test "the CPU reference runs a split plan as its chips: the program's tokens and logits, the single chip's tokens" {
    local f w
    for f in llama mistral qwen3 gemma2; do
        logos-author decode_step "$TINY/$f.yaml" >one.logos
        logos-run -q --device cpu --synthetic 3 -o one.tok -p "5 9 200" -n 6 one.logos
        for w in 1 2 4; do
            logos-check --tp $w "$TINY/$f.yaml" >/dev/null 2>&1 || continue
            logos-author --tp $w tp_decode_step "$TINY/$f.yaml" >tp.logos
            logos-fuse tp.logos >tp.plan
            logos-run -q --device cpu --synthetic 3 --logits a.f32 -o a.tok -p "5 9 200" -n 6 tp.logos
            logos-run -q --device cpu --tp $w --synthetic 3 --logits b.f32 -o b.tok -p "5 9 200" -n 6 tp.plan
            cmp a.tok b.tok && cmp a.f32 b.f32 || { echo "$f --tp $w: the plan's run differs from the program's"; return 1; }
            cmp one.tok b.tok || { echo "$f --tp $w: not the single chip's tokens"; return 1; }
        done
    done
}

@test "a split plan's figures name its chips; a cut split decode runs as a stream of plans" {
    logos-author --tp 2 tp_decode_step "$TINY/llama.yaml" | logos-fuse >tp.plan
    run1 --device cpu tp.plan
    [ "$status" -eq 0 ]
    [[ "$stderr" =~ ^logos-run:\ cpu\ reference\ \(2\ chips\):\ 2\ tokens\ generated\ in\ [0-9.]+\ s$ ]]
    { logos-author decode_embed "$TINY/llama.yaml"
      logos-author --tp 2 tp_decode_layer 0 "$TINY/llama.yaml"
      logos-author --tp 2 tp_decode_layer 1 "$TINY/llama.yaml"
      logos-author decode_head "$TINY/llama.yaml"; } | logos-fuse >cut.plan
    [ "$(logos-run -q --device cpu --synthetic 1 -p "1 2 3" -n 4 cut.plan)" = \
      "$(logos-run -q --device cpu --synthetic 1 -p "1 2 3" -n 4 tp.plan)" ]
}

@test "--tp must be the stream's chips; a stream splits over one number of chips" {
    logos-author --tp 2 tp_decode_step "$TINY/llama.yaml" >tp.logos
    run1 --device cpu --tp 4 tp.logos
    [ "$status" -eq 1 ] && [ -z "$output" ]
    [ "$stderr" = "logos-run: --tp 4: the stream is split over 2 chips" ]
    logos-author decode_step "$TINY/llama.yaml" >one.logos
    run1 --device cpu --tp 2 one.logos
    [ "$status" -eq 1 ]
    [ "$stderr" = "logos-run: --tp 2: the stream is not split (logos-author --tp 2 writes the split forms)" ]
    run1 --device cpu --tp 1 one.logos
    [ "$status" -eq 0 ]
    { logos-author --tp 2 tp_decode_layer 0 "$TINY/llama.yaml"
      logos-author --tp 1 tp_decode_layer 1 "$TINY/llama.yaml"; } >mixed.logos
    run1 --device cpu mixed.logos
    [ "$status" -eq 1 ]
    [ "$stderr" = "logos-run: mixed.logos:31:1: the program is split over 1 chips; the stream's program 1 over 2
  chips 1
  ^" ]
    run1 --device cpu --tp 0 tp.logos
    [ "$status" -eq 2 ]
    [ "$stderr" = "logos-run: --tp takes a number of chips from 1 to 1024, not '0'" ]
}

@test "--devices: GPU numbers, each once, one a chip of this process" {
    logos-author --tp 2 tp_decode_step "$TINY/llama.yaml" >tp.logos
    run1 --devices 0 --device cpu tp.logos
    [ "$status" -eq 1 ]
    [ "$stderr" = "logos-run: --devices names 1 GPU; this process runs 2 chips" ]
    run1 --devices 0,0 tp.logos
    [ "$status" -eq 2 ]
    [ "$stderr" = "logos-run: --devices names GPU 0 twice" ]
    for bad in 0,x 1, -1 ,; do
        run1 --devices "$bad" tp.logos
        [ "$status" -eq 2 ]
        [ "$stderr" = "logos-run: --devices takes GPU numbers from 0 to 1023 separated by commas (0,1), not '$bad'" ]
    done
    run1 --devices 1,0 --device cpu tp.logos
    [ "$status" -eq 0 ]
}

@test "--rank: one chip on a GPU, with a rendezvous; --nccl-id only with it" {
    logos-author --tp 2 tp_decode_step "$TINY/llama.yaml" >tp.logos
    run1 --rank 1 tp.logos
    [ "$status" -eq 2 ]
    [ "$stderr" = "logos-run: --rank needs a rendezvous: --nccl-id FILE, or NCCL_COMM_ID=HOST:PORT in the environment" ]
    run1 --nccl-id id tp.logos
    [ "$status" -eq 2 ]
    [ "$stderr" = "logos-run: --nccl-id is for one process per GPU: give each its --rank" ]
    run1 --rank 0 --nccl-id id --device cpu tp.logos
    [ "$status" -eq 2 ]
    [ "$stderr" = "logos-run: --rank runs one chip on a GPU; the CPU reference runs every chip in one process" ]
    run1 --rank 2 --nccl-id id tp.logos
    [ "$status" -eq 1 ]
    [ "$stderr" = "logos-run: --rank 2: the stream's chips are ranks 0 to 1" ]
    run1 --rank 1 --nccl-id id --devices 0,1 tp.logos
    [ "$status" -eq 1 ]
    [ "$stderr" = "logos-run: --devices names 2 GPUs; this process runs 1 chip (--rank)" ]
    logos-author decode_step "$TINY/llama.yaml" >one.logos
    NCCL_COMM_ID=127.0.0.1:29500 run1 --rank 0 one.logos
    [ "$status" -eq 1 ]
    [ "$stderr" = "logos-run: --rank 0: the stream is not split: it runs in one process" ]
    # --rank runs on a GPU or not at all: no reference to fall back on
    if ! logos-run -q --device cuda --synthetic 1 -p 1 -n 1 "$TOP/tests/gpu/one.logos" >/dev/null 2>&1; then
        run1 --rank 1 --nccl-id id tp.logos
        [ "$status" -eq 3 ] && [ -z "$output" ]
        [[ "$stderr" =~ ^logos-run:\ --device\ cuda:\  ]]
        [ ! -e id ]
    fi
}

@test "a split stream without NCCL or without a GPU: --device cuda exits 3 naming what is missing, auto runs the reference" {
    logos-author --tp 2 tp_decode_step "$TINY/llama.yaml" | logos-fuse >tp.plan
    LOGOS_NCCL=/nonexistent/libnccl.so.2 run1 --device cuda tp.plan
    [ "$status" -eq 3 ] && [ -z "$output" ]
    [ "$stderr" = "logos-run: --device cuda: a split stream needs NCCL: LOGOS_NCCL names a library that does not open: /nonexistent/libnccl.so.2: cannot open shared object file: No such file or directory" ]
    LOGOS_NCCL=/nonexistent/libnccl.so.2 run1 tp.plan
    [ "$status" -eq 0 ]
    [ "${stderr%%$'\n'*}" = "logos-run: notice: a split stream needs NCCL: LOGOS_NCCL names a library that does not open: /nonexistent/libnccl.so.2: cannot open shared object file: No such file or directory: running the CPU reference" ]
    # a library that is not NCCL
    LOGOS_NCCL=libm.so.6 run1 --device cuda tp.plan
    [ "$status" -eq 3 ]
    [ "$stderr" = "logos-run: --device cuda: a split stream needs NCCL: the NCCL library has no ncclGetVersion" ]
    # with NCCL here, what is missing is the GPU: the plain lane's own words
    logos-run -q --device cuda --synthetic 1 -p 1 -n 1 "$TOP/tests/gpu/one.logos" >/dev/null 2>&1 && skip "a GPU answers here"
    local why
    why=$(logos-run --device cuda --synthetic 1 -p 1 -n 1 "$TOP/tests/gpu/one.logos" 2>&1 || true)
    run1 --device cuda tp.plan
    [ "$status" -eq 3 ] && [ -z "$output" ]
    [[ "$stderr" =~ needs\ NCCL ]] || [ "$stderr" = "$why" ]
}

@test "tests/gpu/tp checks itself on the CPU reference (TP_DEVICE=cpu), and skips with exit 3 where no GPU answers" {
    need_numpy
    run env LOGOS_BIN="$LOGOS_BIN" TP_DEVICE=cpu TP_STEPS=4 sh "$TOP/tests/gpu/tp" llama
    [ "$status" -eq 0 ] || { echo "$output"; return 1; }
    [ "${lines[-1]}" = "tp: 2 passed, 0 failed" ]
    [[ "${lines[0]}" =~ ^llama\ width\ 1\ \(NCCL\)\ vs\ not\ split\ x4\ .*\ ok$ ]]
    [[ "${lines[1]}" =~ ^llama\ width\ 2\ vs\ width\ 1\ x4\ .*\ ok$ ]]
    logos-run -q --device cuda --synthetic 1 -p 1 -n 1 "$TOP/tests/gpu/one.logos" >/dev/null 2>&1 && return 0
    run env LOGOS_BIN="$LOGOS_BIN" sh "$TOP/tests/gpu/tp" llama
    [ "$status" -eq 3 ]
    [[ "$output" =~ ^tp:\ skipped:\ logos-run:\ --device\ cuda:\  ]]
}
