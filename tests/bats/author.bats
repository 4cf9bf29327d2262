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
USAGE="usage: logos-author [-o FILE] [--manifest] [--batch B] [--tp N] FORM [LAYER] SPEC.yaml"
ALL_FORMS="forward decode_step prefill decode_batch decode_embed decode_layer decode_head layer head layer_input prefill_embed stacked_layer stacked_layer_input prefill_head decode_batch_embed decode_batch_head generate tp_decode_step tp_decode_layer tp_decode_batch tp_stacked_layer"
TP_FORMS="tp_decode_step tp_decode_batch"
TP_LAYER_FORMS="tp_decode_layer tp_stacked_layer"
# the tiny specs check_tp accepts, and those it refuses with the first reason
TP_SPECS="gemma2 llama mistral qwen3"

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

# ---- the tensor-parallel forms ----

@test "every tp form of every spec check_tp accepts checks and is canonical at each width it splits" {
    local out="$BATS_TEST_TMPDIR/tp.logos" n spec f l w
    for name in $TP_SPECS; do
        spec="$TINY/$name.yaml"
        for w in 1 2; do
            : >"$out"
            for f in $TP_FORMS; do
                "$LOGOS_BIN/logos-author" --tp $w "$f" "$spec" >>"$out" || { echo "$f $spec --tp $w"; return 1; }
            done
            for ((l = 0; l < $(layers "$spec"); l++)); do
                for f in $TP_LAYER_FORMS; do
                    "$LOGOS_BIN/logos-author" --tp $w "$f" $l "$spec" >>"$out" || { echo "$f $l $spec --tp $w"; return 1; }
                done
            done
            n=$((2 + 2 * $(layers "$spec")))
            run --separate-stderr "$LOGOS_BIN/logos-check" "$out"
            [ "$output" = "$out: ok: $n programs" ] || { echo "$spec --tp $w: $output $stderr"; return 1; }
            run --separate-stderr bash -c '"$1" -p "$2" | diff - "$2"' _ "$LOGOS_BIN/logos-check" "$out"
            [ "$status" -eq 0 ] || { echo "$spec --tp $w: not canonical"; echo "$output"; return 1; }
            [ "$(grep -c "^chips $w\$" "$out")" -eq "$n" ]
        done
    done
    # the real shapes split at 8 chips
    for spec in "$EX/llama-3-8b.yaml" "$EX/qwen3-0.6b.yaml"; do
        run --separate-stderr bash -c '"$1" --tp 8 tp_decode_step "$2" | "$3" -' _ "$LOGOS_BIN/logos-author" "$spec" "$LOGOS_BIN/logos-check"
        [ "$output" = "<stdin>: ok: 1 program" ] || { echo "$spec: $output $stderr"; return 1; }
    done
}

@test "a tp program splits attention by heads and the FFN by hidden columns, closed by allreduce" {
    run --separate-stderr "$LOGOS_BIN/logos-author" --tp 2 tp_decode_layer 0 "$TINY/llama.yaml"
    [ "$status" -eq 0 ]
    [ -z "$stderr" ]
    [ "${lines[0]}" = "logos 1 tp_decode_layer 0 tiny-llama" ]
    [ "${lines[1]}" = "chips 2" ]
    # 4 heads of 16 and 2 kv heads: 2 query heads and 1 kv head a chip; hidden 128: 64 a chip
    [ "$(grep -E '^(weight|state) ' <<<"$output")" = "weight nm0 : f32[64]  # nm0.f
weight wq0 : q8[32,64] split(rows, 2)  # wq0.q wq0.s
weight wk0 : q8[16,64] split(rows, 2)  # wk0.q wk0.s
weight wv0 : q8[16,64] split(rows, 2)  # wv0.q wv0.s
state Kc0 : f32[64,1,16]
state Vc0 : f32[64,1,16]
weight wo0 : q8[64,32] split(cols, 2)  # wo0.q wo0.s
weight nfn0 : f32[64]  # nfn0.f
weight wg0 : q8[64,64] split(rows, 2)  # wg0.q wg0.s
weight wu0 : q8[64,64] split(rows, 2)  # wu0.q wu0.s
weight wd0 : q8[64,64] split(cols, 2)  # wd0.q wd0.s" ]
    grep -qx 'q0 = wq0 @ xn0 ~ \[2,16\]' <<<"$output"
    grep -qx 'r0 = x + allreduce(wo0 @ (o0 ~ \[32\]))' <<<"$output"
    grep -qx 'h0 = r0 + allreduce(wd0 @ fa0)' <<<"$output"
    # the embedding and the head on the replicated spine
    run --separate-stderr "$LOGOS_BIN/logos-author" --tp 2 tp_decode_step "$TINY/gemma2.yaml"
    grep -qx 'weight emb : q8\[256,64\]  # emb.q emb.s' <<<"$output"
    grep -qx 'x = emb\[tok\] \* 8' <<<"$output"
    grep -qx 'logits = softcap(emb @ xf, cap=30)' <<<"$output"
    # a sandwich norm reads the closed sum
    grep -qx 'pa0 = rmsnorm(allreduce(wo0 @ (o0 ~ \[32\])), npm0, eps=1e-06, offset=1)' <<<"$output"
    [ "$(grep -c allreduce <<<"$output")" -eq 8 ]
    ! grep -q allgather <<<"$output"
}

@test "more chips than kv heads: neighbouring chips read the same kv head" {
    run --separate-stderr "$LOGOS_BIN/logos-author" --tp 8 tp_decode_layer 0 "$EX/llama-3-8b.yaml"
    [ "$status" -eq 0 ]
    grep -qx 'weight wq0 : q8\[512,4096\] split(rows, 8)  # wq0.q wq0.s' <<<"$output"
    grep -qx 'weight wk0 : q8\[128,4096\] split(rows, 8)  # wk0.q wk0.s' <<<"$output"
    run --separate-stderr "$LOGOS_BIN/logos-author" --tp 8 tp_decode_layer 0 "$EX/qwen3-0.6b.yaml"
    [ "$status" -eq 0 ]
    # Qwen3-0.6B: 16 heads on 8 kv heads of 128
    grep -qx 'weight wk0 : q8\[128,1024\] split(rows, 8)  # wk0.q wk0.s' <<<"$output"
    cd "$BATS_TEST_TMPDIR"
    sed 's/kv_heads: 2/kv_heads: 1/; s/^layers: .*/layers: 1/' "$TINY/llama.yaml" >kv1.yaml
    run --separate-stderr "$LOGOS_BIN/logos-author" --tp 2 --manifest tp_decode_step kv1.yaml
    [ "$status" -eq 0 ]
    grep -qx '0 wk0 q8 1024 16x64 rows=0:16 wk0.q wk0.s' <<<"$output"
    grep -qx '1 wk0 q8 1024 16x64 rows=0:16 wk0.q wk0.s' <<<"$output"
    run --separate-stderr "$LOGOS_BIN/logos-author" --tp 2 tp_decode_step kv1.yaml
    grep -qx 'weight wk0 : q8\[16,64\] split(rows, 1)  # wk0.q wk0.s' <<<"$output"
}

# tiles: reads a tp manifest; fails unless each chip's COUNT is its part's,
# and the distinct parts of each weight tile its whole's axis in order.
tiles() {
    awk '{ n = split($5, d, "x"); whole = 1; for (i = 1; i <= n; i++) whole *= d[i]
           if ($6 == "all") { if ($4 != whole) exit 1; next }
           split($6, p, /[=:]/); ext = p[1] == "rows" ? d[1] : d[n]
           if ($4 != whole / ext * (p[3] - p[2])) exit 1
           print $2, p[2], p[3], ext }' | sort -u | sort -k1,1 -k2,2n |
        awk '$1 != name { if (name != "" && end != ext) exit 1; name = $1; end = 0 }
             { if ($2 != end) exit 1; end = $3; ext = $4 }
             END { if (name != "" && end != ext) exit 1 }'
}

@test "the tp manifest gives each chip's part of the whole weight files" {
    local spec="$TINY/llama.yaml"
    run --separate-stderr "$LOGOS_BIN/logos-author" --tp 2 --manifest tp_decode_step "$spec"
    [ "$status" -eq 0 ]
    [ -z "$stderr" ]
    [ "${#lines[@]}" -eq 40 ]
    [ "${lines[0]}" = "0 emb q8 16384 256x64 all emb.q emb.s" ]
    grep -qx '0 wq0 q8 2048 64x64 rows=0:32 wq0.q wq0.s' <<<"$output"
    grep -qx '1 wq0 q8 2048 64x64 rows=32:64 wq0.q wq0.s' <<<"$output"
    grep -qx '1 wo0 q8 2048 64x64 cols=32:64 wo0.q wo0.s' <<<"$output"
    grep -qx '1 wd1 q8 4096 64x128 cols=64:128 wd1.q wd1.s' <<<"$output"
    # every chip's parts tile each whole exactly, and the whole files are the
    # single-chip program's (no import per width)
    for spec in "$TINY"/{gemma2,llama,mistral,qwen3}.yaml "$EX/llama-3-8b.yaml" "$EX/gemma-2-2b.yaml"; do
        local single tp
        single=$("$LOGOS_BIN/logos-author" --manifest decode_step "$spec" | awk '{ $3 = ""; print }')
        for w in 1 2 8; do
            "$LOGOS_BIN/logos-check" --tp $w "$spec" >/dev/null 2>&1 || continue
            tp=$("$LOGOS_BIN/logos-author" --tp $w --manifest tp_decode_step "$spec")
            [ "$(awk '{ $1 = ""; $4 = ""; $6 = ""; print }' <<<"$tp" | sed 's/^ //' | sort -u | awk '{ $3 = ""; print }' |
                 sed 's/  */ /g')" = "$(sed 's/  */ /g' <<<"$single" | sort -u)" ] ||
                { echo "$spec --tp $w: not the single-chip files"; return 1; }
            tiles <<<"$tp" ||
                { echo "$spec --tp $w: the parts do not tile the wholes"; return 1; }
        done
    done
}

@test "a tp program's whole files are what logos-run --write-weights writes from it" {
    cd "$BATS_TEST_TMPDIR"
    "$LOGOS_BIN/logos-author" --tp 2 tp_decode_step "$TINY/gemma2.yaml" >tp.logos
    "$LOGOS_BIN/logos-run" --synthetic 1 --write-weights w tp.logos
    [ "$("$LOGOS_BIN/logos-author" --tp 2 --manifest tp_decode_step "$TINY/gemma2.yaml" | cut -d' ' -f7- | tr ' ' '\n' | sort -u)" = "$(ls w | sort)" ]
    "$LOGOS_BIN/logos-author" --tp 2 --manifest tp_decode_step "$TINY/gemma2.yaml" | while read -r r name fmt n shape part f1 f2; do
        local whole=$(( ${shape//x/*} ))
        if [ "$fmt" = f32 ]; then [ "$(wc -c <"w/$f1")" -eq $((4 * whole)) ]
        else [ "$(wc -c <"w/$f1")" -eq "$whole" ] && [ "$(wc -c <"w/$f2")" -eq $((whole / 16)) ]; fi ||
            { echo "$name: not the whole"; exit 1; }
    done
}

@test "tp_decode_step at one chip generates what decode_step does (logos-run)" {
    local spec="$TINY/mistral.yaml" a b
    a=$("$LOGOS_BIN/logos-author" decode_step "$spec" | "$LOGOS_BIN/logos-run" --synthetic 7 -p "5 9 200" -n 8 2>/dev/null)
    b=$("$LOGOS_BIN/logos-author" --tp 1 tp_decode_step "$spec" | "$LOGOS_BIN/logos-run" --synthetic 7 -p "5 9 200" -n 8 2>/dev/null)
    [ -n "$a" ]
    [ "$a" = "$b" ]
}

@test "--batch sets the sequences of tp_decode_batch and tp_stacked_layer" {
    run --separate-stderr "$LOGOS_BIN/logos-author" --tp 2 --batch 3 tp_stacked_layer 1 "$TINY/qwen3.yaml"
    [ "$status" -eq 0 ]
    [ "$(grep -E '^(chips|in|out) ' <<<"$output" | tr '\n' ';')" = "chips 2;in bh0 : f32[3,64];in pos_s0 : i32;in pos_s1 : i32;in pos_s2 : i32;out bh1 : f32[3,64];" ]
    grep -qx 'state Kc1_s2 : f32\[64,1,16\]' <<<"$output"
    run --separate-stderr "$LOGOS_BIN/logos-author" --tp 2 tp_decode_batch "$TINY/qwen3.yaml"
    grep -qx 'in toks : i32\[4\]' <<<"$output"
    grep -qx 'out next : i32\[4\]' <<<"$output"
}

@test "a width a spec does not split over exits 1 with check_tp's reason" {
    local f
    for args in "3:llama:layer 0: 4 heads do not split over 3 chips" \
                "4:llama:layer 0: attention output columns per chip 16 are not whole 32-value blocks (formats.attn is q8)" \
                "8:qwen3:layer 0: 4 heads do not split over 8 chips" \
                "2:qwen2:layer 0: attention has a q bias" \
                "2:gptoss:layer 0: attention has a q bias" \
                "1:deepseek2:layer 0: a latent mixer does not split yet" \
                "2:lfm2:layer 0: a conv mixer does not split yet" \
                "2:qwen3next:layer 0: a delta mixer does not split yet"; do
        local w=${args%%:*} rest=${args#*:}
        local name=${rest%%:*} why=${rest#*:}
        for f in tp_decode_step "tp_decode_layer 0"; do
            run --separate-stderr "$LOGOS_BIN/logos-author" --tp "$w" $f "$TINY/$name.yaml"
            [ "$status" -eq 1 ] || { echo "$args $f: status $status"; return 1; }
            [ -z "$output" ]
            [ "$stderr" = "logos-author: $TINY/$name.yaml: does not split over $w chips: $why" ] || { echo "$stderr"; return 1; }
        done
    done
    # the message is logos-check --tp's
    run --separate-stderr "$LOGOS_BIN/logos-check" --tp 3 "$TINY/llama.yaml"
    [ "$stderr" = "logos-check: $TINY/llama.yaml: does not split over 3 chips: layer 0: 4 heads do not split over 3 chips" ]
}

@test "a tp form without --tp, --tp on another form, and a bad --tp exit 2" {
    for f in $TP_FORMS; do
        run --separate-stderr "$LOGOS_BIN/logos-author" "$f" "$TINY/llama.yaml"
        [ "$status" -eq 2 ]
        [ -z "$output" ]
        [ "$stderr" = "logos-author: form '$f' is split over chips: give their number with --tp N" ]
    done
    run --separate-stderr "$LOGOS_BIN/logos-author" tp_decode_layer 0 "$TINY/llama.yaml"
    [ "$status" -eq 2 ]
    [ "$stderr" = "logos-author: form 'tp_decode_layer' is split over chips: give their number with --tp N" ]
    run --separate-stderr "$LOGOS_BIN/logos-author" --tp 2 decode_step "$TINY/llama.yaml"
    [ "$status" -eq 2 ]
    [ -z "$output" ]
    [ "$stderr" = "logos-author: --tp splits the tp_ forms, not 'decode_step'" ]
    for bad in 0 1025 x -2 2.5 ""; do
        run --separate-stderr "$LOGOS_BIN/logos-author" --tp "$bad" tp_decode_step "$TINY/llama.yaml"
        [ "$status" -eq 2 ]
        [ -z "$output" ]
        [ "$stderr" = "logos-author: --tp takes a number of chips from 1 to 1024, not '$bad'" ] || { echo "$bad: $stderr"; return 1; }
    done
    run --separate-stderr "$LOGOS_BIN/logos-author" tp_decode_step --tp
    [ "$status" -eq 2 ]
    run --separate-stderr "$LOGOS_BIN/logos-author" --tp
    [ "$status" -eq 2 ]
    [ "$stderr" = "logos-author: --tp needs a value" ]
}

@test "-o leaves no file when a tp form is refused" {
    mkdir "$BATS_TEST_TMPDIR/d" && cd "$BATS_TEST_TMPDIR/d"
    run --separate-stderr "$LOGOS_BIN/logos-author" -o tp.logos --tp 3 tp_decode_step "$TINY/llama.yaml"
    [ "$status" -eq 1 ]
    [ "$(ls)" = "" ]
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

@test "an unknown option exits 2 with one line naming it" {
    run --separate-stderr "$LOGOS_BIN/logos-author" --bogus decode_step "$TINY/llama.yaml"
    [ "$status" -eq 2 ]
    [ -z "$output" ]
    [ "$stderr" = "logos-author: unknown option '--bogus' (try --help)" ]
}

@test "no form exits 2 with the usage" {
    run --separate-stderr "$LOGOS_BIN/logos-author"
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

@test "a form with no spec says to give it (exit 2)" {
    run --separate-stderr "$LOGOS_BIN/logos-author" decode_step
    [ "$status" -eq 2 ]
    [ -z "$output" ]
    [ "$stderr" = "logos-author: give the spec: logos-author decode_step SPEC.yaml" ]
    run --separate-stderr "$LOGOS_BIN/logos-author" decode_layer
    [ "$status" -eq 2 ]
    [ "$stderr" = "logos-author: give the spec: logos-author decode_layer LAYER SPEC.yaml" ]
}
