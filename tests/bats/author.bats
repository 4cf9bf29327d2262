#!/usr/bin/env bats
# author.bats — logos-author: every form of every tiny spec prints programs
# that logos-check accepts and that are canonical (they print back to the
# same bytes); the manifest lists each weight once with its count; --batch;
# the layer_input forms; every rejected command line with its exact status
# and message, and -o that leaves no file on failure.

load common
bats_require_minimum_version 1.5.0

TINY="$EX/tiny"
FORMS="forward decode_step prefill decode_batch decode_embed decode_head head prefill_head
       decode_batch_embed decode_batch_head generate"
LAYER_FORMS="decode_layer layer stacked_layer"
USAGE="usage: logos-author [-o FILE] [--manifest] [--batch B] FORM [LAYER] SPEC.yaml"
ALL_FORMS="forward decode_step prefill decode_batch decode_embed decode_layer decode_head layer head layer_input prefill_embed stacked_layer stacked_layer_input prefill_head decode_batch_embed decode_batch_head generate"

# layers SPEC: the spec's number of layers.
layers() { sed -n 's/^layers: *//p' "$1"; }

# author_all SPEC [OPTS...]: every form of SPEC (layer forms for each layer),
# one program after another, into $BATS_TEST_TMPDIR/all.logos; counts them.
author_all() {
    local spec="$1" out="$BATS_TEST_TMPDIR/all.logos" f l
    shift
    : >"$out"
    for f in $FORMS; do
        "$LOGOS_BIN/logos-author" "$@" "$f" "$spec" >>"$out" || { echo "$f $spec: status $?"; return 1; }
    done
    for ((l = 0; l < $(layers "$spec"); l++)); do
        for f in $LAYER_FORMS; do
            "$LOGOS_BIN/logos-author" "$@" "$f" "$l" "$spec" >>"$out" || { echo "$f $l $spec: status $?"; return 1; }
        done
    done
}

no_sanitizer() {
    ! grep -qE 'AddressSanitizer|LeakSanitizer|runtime error:|internal error' <<<"$stderr"
}

@test "the tiny specs are all here" {
    [ "$(ls "$TINY"/*.yaml | wc -l)" -ge 9 ]
}

@test "every form of every tiny spec checks and is canonical" {
    for spec in "$TINY"/*.yaml; do
        author_all "$spec"
        local n=$(( $(echo $FORMS | wc -w) + 1 + 3 * $(layers "$spec") ))
        run --separate-stderr "$LOGOS_BIN/logos-check" "$BATS_TEST_TMPDIR/all.logos"
        [ "$status" -eq 0 ] || { echo "$spec: $stderr"; return 1; }
        [ "$output" = "$BATS_TEST_TMPDIR/all.logos: ok: $n programs" ] || { echo "$spec: $output"; return 1; }
        run --separate-stderr bash -c '"$1" -p "$2" | diff - "$2"' _ "$LOGOS_BIN/logos-check" "$BATS_TEST_TMPDIR/all.logos"
        [ "$status" -eq 0 ] || { echo "$spec: not canonical"; echo "$output"; return 1; }
    done
}

@test "the batch forms with --batch 3 check and are canonical" {
    for spec in "$TINY"/*.yaml; do
        FORMS="decode_batch decode_batch_embed decode_batch_head" LAYER_FORMS=stacked_layer author_all "$spec" --batch 3
        run --separate-stderr bash -c '"$1" -p "$2" | diff - "$2"' _ "$LOGOS_BIN/logos-check" "$BATS_TEST_TMPDIR/all.logos"
        [ "$status" -eq 0 ] || { echo "$spec: $output $stderr"; return 1; }
    done
}

@test "each program's header names its form, its layer and the model" {
    run --separate-stderr "$LOGOS_BIN/logos-author" decode_layer 1 "$TINY/gemma2.yaml"
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "logos 1 decode_layer 1 tiny-gemma2" ]
    [ "${lines[-1]}" = "end" ]
    [ -z "$stderr" ]
    run --separate-stderr "$LOGOS_BIN/logos-author" generate "$TINY/llama.yaml"
    [ "$status" -eq 0 ]
    [ "$(grep '^logos ' <<<"$output")" = "logos 1 prefill tiny-llama
logos 1 decode_step tiny-llama" ]
}

@test "each form declares its inputs and outputs by the names of the design" {
    local spec="$TINY/llama.yaml"
    decls() { "$LOGOS_BIN/logos-author" "$@" | grep -E '^(in|out|size) ' | tr '\n' ';'; }
    [ "$(decls decode_step "$spec")" = "in pos : i32;in tok : i32;out logits : f32[256];out next : i32;" ]
    [ "$(decls forward "$spec")" = "in x : f32[64];in pos : i32;out logits : f32[256];" ]
    [ "$(decls prefill "$spec")" = "size T;in pos0 : i32;in toks : i32[T];out logits : f32[256];out next : i32;" ]
    [ "$(decls --batch 2 decode_batch "$spec")" = "in pos_s0 : i32;in pos_s1 : i32;in toks : i32[2];out logits : f32[2,256];out next : i32[2];" ]
    [ "$(decls decode_embed "$spec")" = "out x : f32[64];in tok : i32;" ]
    [ "$(decls decode_layer 0 "$spec")" = "in x : f32[64];in pos : i32;out h0 : f32[64];" ]
    [ "$(decls decode_layer 1 "$spec")" = "in h0 : f32[64];in pos : i32;out h1 : f32[64];" ]
    [ "$(decls decode_head "$spec")" = "in h1 : f32[64];out logits : f32[256];out next : i32;" ]
    [ "$(decls layer 1 "$spec")" = "in h0 : f32[64];in pos : i32;out h1 : f32[64];" ]
    [ "$(decls head "$spec")" = "in h1 : f32[64];out logits : f32[256];" ]
    [ "$(decls stacked_layer 0 "$spec")" = "size T;in X : f32[T,64];in pos0 : i32;out bh0 : f32[T,64];" ]
    [ "$(decls stacked_layer 1 "$spec")" = "size T;in bh0 : f32[T,64];in pos0 : i32;out bh1 : f32[T,64];" ]
    [ "$(decls --batch 2 stacked_layer 1 "$spec")" = "in bh0 : f32[2,64];in pos_s0 : i32;in pos_s1 : i32;out bh1 : f32[2,64];" ]
    [ "$(decls prefill_head "$spec")" = "size T;in bh1 : f32[T,64];out logits : f32[256];out next : i32;" ]
    [ "$(decls --batch 3 decode_batch_embed "$spec")" = "out X : f32[3,64];in toks : i32[3];" ]
    [ "$(decls --batch 3 decode_batch_head "$spec")" = "in bh1 : f32[3,64];out logits : f32[3,256];out next : i32[3];" ]
}

@test "a batch keeps one state per sequence, a decode step one per layer" {
    local spec="$TINY/qwen3next.yaml"
    run --separate-stderr "$LOGOS_BIN/logos-author" --batch 2 decode_batch "$spec"
    [ "$status" -eq 0 ]
    grep -q '^state Rc0_s1 : f32\[' <<<"$output"
    grep -q '^state Sd0_s0 : f32\[' <<<"$output"
    grep -q '^state Kc3_s1 : f32\[' <<<"$output"
    ! grep -q '_s2' <<<"$output"
    run --separate-stderr "$LOGOS_BIN/logos-author" decode_step "$spec"
    [ "$(grep '^state ' <<<"$output" | cut -d' ' -f2 | tr '\n' ' ')" = "Rc0 Sd0 Rc1 Sd1 Rc2 Sd2 Kc3 Vc3 " ]
    run --separate-stderr "$LOGOS_BIN/logos-author" prefill "$spec"
    grep -q '^bpos = range(pos0, n=T)$' <<<"$output"
    grep -q '^bxn0 = ' <<<"$output"
}

@test "the router bias: a linear bias with topk_softmax, none elsewhere in the tiny specs" {
    run --separate-stderr "$LOGOS_BIN/logos-author" decode_layer 0 "$TINY/gptoss.yaml"
    [ "$status" -eq 0 ]
    grep -q '^rt0 = route(wr0 @ fn0 + rb0, k=2, score=topk_softmax' <<<"$output"
    grep -q '^weight rb0 : f32\[4\]  # rb0.f$' <<<"$output"
}

@test "--manifest lists every weight once, with its format, count and files" {
    local spec="$TINY/llama.yaml"
    run --separate-stderr "$LOGOS_BIN/logos-author" --manifest decode_step "$spec"
    [ "$status" -eq 0 ]
    [ -z "$stderr" ]
    # by hand: emb 256x64; per layer nm 64, wq 64x64, wk 32x64, wv 32x64,
    # wo 64x64, nfn 64, wg wu 128x64, wd 64x128; nf 64
    [ "${#lines[@]}" -eq 20 ]
    [ "$(awk '{ n += $3 } END { print n }' <<<"$output")" -eq $((256 * 64 + 2 * (64 + 4096 + 2048 + 2048 + 4096 + 64 + 3 * 8192) + 64)) ]
    [ "${lines[0]}" = "emb q8 16384 emb.q emb.s" ]
    [ "${lines[1]}" = "nm0 f32 64 nm0.f" ]
    [ "$(cut -d' ' -f1 <<<"$output" | sort | uniq -d)" = "" ]
    # every weight the program declares is listed, with the matching files
    run --separate-stderr "$LOGOS_BIN/logos-author" decode_step "$spec"
    [ "$(grep -c '^weight ' <<<"$output")" -eq 20 ]
    for spec in "$TINY"/*.yaml; do
        local m w
        m=$("$LOGOS_BIN/logos-author" --manifest generate "$spec" | cut -d' ' -f1 | sort)
        w=$("$LOGOS_BIN/logos-author" generate "$spec" | sed -n 's/^weight \([^ ]*\) .*/\1/p' | sort -u)
        [ "$m" = "$w" ] || { echo "$spec: manifest and declarations differ"; diff <(echo "$m") <(echo "$w"); return 1; }
        "$LOGOS_BIN/logos-author" --manifest generate "$spec" |
            awk '($2 == "q8" && (NF != 5 || $4 != $1 ".q" || $5 != $1 ".s")) || ($2 == "f32" && (NF != 4 || $4 != $1 ".f")) || $3 <= 0 { exit 1 }' ||
            { echo "$spec: a bad manifest line"; return 1; }
    done
}

@test "the manifest's files are what logos-run --write-weights writes" {
    cd "$BATS_TEST_TMPDIR"
    "$LOGOS_BIN/logos-author" generate "$TINY/deepseek2.yaml" >gen.logos
    "$LOGOS_BIN/logos-run" --synthetic 1 --write-weights w gen.logos
    [ "$("$LOGOS_BIN/logos-author" --manifest generate "$TINY/deepseek2.yaml" | cut -d' ' -f4- | tr ' ' '\n' | sort)" = "$(ls w | sort)" ]
    # sizes: f32 4 bytes a value, q8 one byte a value and 2 bytes a block of 32
    "$LOGOS_BIN/logos-author" --manifest generate "$TINY/deepseek2.yaml" | while read -r name fmt n f1 f2; do
        if [ "$fmt" = f32 ]; then [ "$(wc -c <"w/$f1")" -eq $((4 * n)) ]
        else [ "$(wc -c <"w/$f1")" -eq "$n" ] && [ "$(wc -c <"w/$f2")" -eq $((n / 16)) ]; fi ||
            { echo "$name: wrong size"; exit 1; }
    done
}

@test "--batch sets the sequences of a batch" {
    run --separate-stderr "$LOGOS_BIN/logos-author" --batch 5 decode_batch "$TINY/mistral.yaml"
    [ "$status" -eq 0 ]
    grep -q '^in toks : i32\[5\]$' <<<"$output"
    grep -q '^in pos_s4 : i32$' <<<"$output"
    grep -q '^out next : i32\[5\]$' <<<"$output"
    run --separate-stderr "$LOGOS_BIN/logos-author" decode_batch "$TINY/mistral.yaml"
    grep -q '^in toks : i32\[4\]$' <<<"$output"
}

# A spec of SPEC's layers set to N, in $BATS_TEST_TMPDIR/l$N.yaml.
with_layers() { sed "s/^layers: .*/layers: $2/" "$1" >"$BATS_TEST_TMPDIR/l$2.yaml"; }

@test "the documented maxima author in seconds: 65536 layers, --batch 4096 (time linear in both)" {
    # names are found in a table, not by a scan: at 8,000 layers a scan took
    # 352 s, and at 65,536 it would take hours; the unsanitized build keeps
    # the test's memory down (the program is 72 MB)
    local spec="$TINY/llama.yaml" author="$TOP/build/bin/logos-author" n1 n2 n
    for l in 1 2 8000 65536; do with_layers "$spec" $l; done
    n1=$("$author" decode_step "$BATS_TEST_TMPDIR/l1.yaml" | wc -l)
    n2=$("$author" decode_step "$BATS_TEST_TMPDIR/l2.yaml" | wc -l)
    n=$(timeout 60 "$author" decode_step "$BATS_TEST_TMPDIR/l65536.yaml" | wc -l)
    [ "$n" -eq $((n1 + 65535 * (n2 - n1))) ] || { echo "$n lines, expected $((n1 + 65535 * (n2 - n1)))"; return 1; }
    # the sanitized build at 8,000 layers (the manifest: each weight once) and at the largest batch
    n=$(timeout 30 "$LOGOS_BIN/logos-author" decode_step "$BATS_TEST_TMPDIR/l8000.yaml" | wc -l)
    [ "$n" -eq $((n1 + 7999 * (n2 - n1))) ]
    n=$(timeout 30 "$LOGOS_BIN/logos-author" --manifest decode_step "$BATS_TEST_TMPDIR/l8000.yaml" | sort -u | wc -l)
    [ "$n" -eq $((2 + 8000 * 9)) ]
    run --separate-stderr timeout 30 "$LOGOS_BIN/logos-author" --batch 4096 decode_batch "$spec"
    [ "$status" -eq 0 ]
    [ -z "$stderr" ]
    grep -q '^in pos_s4095 : i32$' <<<"$output"
    grep -q '^state Kc1_s4095 : f32\[64,2,16\]$' <<<"$output"
    [ "$(grep -c '^bo[01] = stack(o[01]_s0, .*, o[01]_s4095)$' <<<"$output")" -eq 2 ]
}

@test "layer_input and stacked_layer_input print the name of a layer's input" {
    local spec="$TINY/gemma2.yaml"
    for args in "layer_input 0:x" "layer_input 1:h0" "layer_input 3:h2" \
                "stacked_layer_input 0:X" "stacked_layer_input 2:bh1"; do
        run --separate-stderr "$LOGOS_BIN/logos-author" ${args%:*} "$spec"
        [ "$status" -eq 0 ]
        [ "$output" = "${args#*:}" ] || { echo "$args: $output"; return 1; }
        [ -z "$stderr" ]
    done
    run --separate-stderr "$LOGOS_BIN/logos-author" layer_input 4 "$spec"
    [ "$status" -eq 1 ]
    [ "$stderr" = "logos-author: $spec: layer 4 is out of range: the model has 4 layers (0 to 3)" ]
}

@test "-o FILE writes the program" {
    mkdir "$BATS_TEST_TMPDIR/d" && cd "$BATS_TEST_TMPDIR/d"
    run --separate-stderr "$LOGOS_BIN/logos-author" -o step.logos decode_step "$TINY/qwen2.yaml"
    [ "$status" -eq 0 ]
    [ -z "$output" ]
    [ -z "$stderr" ]
    "$LOGOS_BIN/logos-author" decode_step "$TINY/qwen2.yaml" | cmp - step.logos
    [ "$(ls)" = "step.logos" ]
}

@test "-h prints the usage on stdout and exits 0" {
    run --separate-stderr "$LOGOS_BIN/logos-author" -h
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "$USAGE" ]
    [ -z "$stderr" ]
}

# ---- rejected ----

@test "an unknown form exits 2 and lists the forms" {
    run --separate-stderr "$LOGOS_BIN/logos-author" decode "$TINY/llama.yaml"
    [ "$status" -eq 2 ]
    [ -z "$output" ]
    [ "$stderr" = "logos-author: unknown form 'decode' (forms: $ALL_FORMS)" ]
}

@test "the tensor-parallel forms exit 1: not written yet" {
    for f in tp_decode_step tp_decode_batch; do
        run --separate-stderr "$LOGOS_BIN/logos-author" "$f" "$TINY/llama.yaml"
        [ "$status" -eq 1 ]
        [ -z "$output" ]
        [ "$stderr" = "logos-author: form '$f' is a tensor-parallel form: the split forms are not written yet (logos-check --tp N says whether a spec splits)" ]
    done
    for f in tp_decode_layer tp_stacked_layer; do
        run --separate-stderr "$LOGOS_BIN/logos-author" "$f" 0 "$TINY/llama.yaml"
        [ "$status" -eq 1 ]
        [ "$stderr" = "logos-author: form '$f' is a tensor-parallel form: the split forms are not written yet (logos-check --tp N says whether a spec splits)" ]
    done
}

@test "a layer out of range exits 1 naming the file and the layer count" {
    run --separate-stderr "$LOGOS_BIN/logos-author" decode_layer 2 "$TINY/llama.yaml"
    [ "$status" -eq 1 ]
    [ -z "$output" ]
    [ "$stderr" = "logos-author: $TINY/llama.yaml: layer 2 is out of range: the model has 2 layers (0 to 1)" ]
    run --separate-stderr "$LOGOS_BIN/logos-author" stacked_layer 1000 "$TINY/qwen3next.yaml"
    [ "$status" -eq 1 ]
    [ "$stderr" = "logos-author: $TINY/qwen3next.yaml: layer 1000 is out of range: the model has 4 layers (0 to 3)" ]
}

@test "a missing layer exits 2" {
    run --separate-stderr "$LOGOS_BIN/logos-author" decode_layer "$TINY/llama.yaml"
    [ "$status" -eq 2 ]
    [ -z "$output" ]
    [ "$stderr" = "logos-author: form 'decode_layer' takes a layer: logos-author decode_layer LAYER SPEC.yaml" ]
}

@test "a layer that is not a whole number exits 2" {
    for bad in x -1 1.5 ""; do
        run --separate-stderr "$LOGOS_BIN/logos-author" layer "$bad" "$TINY/llama.yaml"
        [ "$status" -eq 2 ]
        [ -z "$output" ]
        [ "$stderr" = "logos-author: the layer is a whole number, not '$bad'" ] || { echo "$bad: $stderr"; return 1; }
    done
}

@test "a layer given to a form without one exits 2" {
    run --separate-stderr "$LOGOS_BIN/logos-author" decode_step 0 "$TINY/llama.yaml"
    [ "$status" -eq 2 ]
    [ -z "$output" ]
    [ "$stderr" = "logos-author: form 'decode_step' takes no layer: logos-author decode_step SPEC.yaml" ]
}

@test "a bad --batch exits 2" {
    for bad in 0 4097 x -3 ""; do
        run --separate-stderr "$LOGOS_BIN/logos-author" --batch "$bad" decode_batch "$TINY/llama.yaml"
        [ "$status" -eq 2 ]
        [ -z "$output" ]
        [ "$stderr" = "logos-author: --batch takes a number of sequences from 1 to 4096, not '$bad'" ] || { echo "$bad: $stderr"; return 1; }
    done
}

@test "an unknown option exits 2 with the usage" {
    run --separate-stderr "$LOGOS_BIN/logos-author" --bogus decode_step "$TINY/llama.yaml"
    [ "$status" -eq 2 ]
    [ -z "$output" ]
    [ "$(head -n 1 <<<"$stderr")" = "logos-author: unknown option '--bogus'" ]
    [ "$(sed -n 2p <<<"$stderr")" = "$USAGE" ]
}

@test "no form or no spec exits 2 with the usage" {
    run --separate-stderr "$LOGOS_BIN/logos-author"
    [ "$status" -eq 2 ]
    [ "$(head -n 1 <<<"$stderr")" = "$USAGE" ]
    run --separate-stderr "$LOGOS_BIN/logos-author" decode_step
    [ "$status" -eq 2 ]
    [ -z "$output" ]
    [ "$(head -n 1 <<<"$stderr")" = "$USAGE" ]
}

@test "a missing spec file exits 1 with its name and the reason" {
    cd "$BATS_TEST_TMPDIR"
    run --separate-stderr "$LOGOS_BIN/logos-author" decode_step nosuch.yaml
    [ "$status" -eq 1 ]
    [ -z "$output" ]
    [ "$stderr" = "logos-author: nosuch.yaml: No such file or directory" ]
}

@test "a bad spec exits 1 with the spec's located message" {
    cd "$BATS_TEST_TMPDIR"
    sed 's/^dim: 64$/dim: 64\nwidth: 3/' "$TINY/llama.yaml" >bad.yaml
    run --separate-stderr "$LOGOS_BIN/logos-author" decode_step bad.yaml
    [ "$status" -eq 1 ]
    [ -z "$output" ]
    [ "$stderr" = "logos-author: bad.yaml:7:1: unknown key 'width' at the top level
  width: 3
  ^" ]
    sed 's/kv_heads: 2/kv_heads: 3/' "$TINY/llama.yaml" >heads.yaml
    run --separate-stderr "$LOGOS_BIN/logos-author" decode_step heads.yaml
    [ "$status" -eq 1 ]
    [ -z "$output" ]
    [[ "$stderr" == "logos-author: heads.yaml:"*"heads 4 are not a multiple of kv_heads 3"* ]]
}

@test "-o leaves no file when the command fails" {
    mkdir "$BATS_TEST_TMPDIR/d" && cd "$BATS_TEST_TMPDIR/d"
    echo old >keep.logos
    run --separate-stderr "$LOGOS_BIN/logos-author" -o keep.logos decode_layer 9 "$TINY/llama.yaml"
    [ "$status" -eq 1 ]
    [ "$(cat keep.logos)" = old ]
    run --separate-stderr "$LOGOS_BIN/logos-author" -o new.logos decode_step nosuch.yaml
    [ "$status" -eq 1 ]
    [ "$(ls)" = "keep.logos" ]
    run --separate-stderr "$LOGOS_BIN/logos-author" -o "$BATS_TEST_TMPDIR/no/dir/x.logos" decode_step "$TINY/llama.yaml"
    [ "$status" -eq 3 ]
    [ -z "$output" ]
    [ "$stderr" = "logos-author: $BATS_TEST_TMPDIR/no/dir/x.logos: cannot write: No such file or directory" ]
    [ "$(ls)" = "keep.logos" ]
}
