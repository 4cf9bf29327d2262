#!/usr/bin/env bats
# opt.bats — the command line every tool shares (lib/opt.c): options after
# operands (GNU order), --name=value, --, bundled short flags, --version,
# -h anywhere; an unknown option, a flag given a value and a missing value
# each get one line and exit 2.

load common
bats_require_minimum_version 1.5.0

TINY="$EX/tiny"
TOOLS="logos-author logos-check logos-fuse logos-run logos-bench logos-import"

setup() {
    mkdir -p "$BATS_TEST_TMPDIR/d"
    cd "$BATS_TEST_TMPDIR/d"
}

step() { logos-author decode_step "$TINY/llama.yaml" >step.logos; }

@test "--version prints the tool, its version and the language version" {
    for t in $TOOLS; do
        run --separate-stderr "$t" --version
        [ "$status" -eq 0 ] || { echo "$t: $status $stderr"; return 1; }
        [ "$output" = "$t 0.1.0 (LOGOS language 1)" ]
        [ -z "$stderr" ]
    done
}

@test "--version is never 'needs a value', wherever it stands" {
    run --separate-stderr logos-run -q --version
    [ "$status" -eq 0 ]
    [ "$output" = "logos-run 0.1.0 (LOGOS language 1)" ]
    [ -z "$stderr" ]
    run --separate-stderr logos-bench step.logos --version
    [ "$status" -eq 0 ]
    [ "$output" = "logos-bench 0.1.0 (LOGOS language 1)" ]
}

@test "an unknown option is one line naming it, in every tool" {
    for t in $TOOLS; do
        run --separate-stderr "$t" --bogus x
        [ "$status" -eq 2 ] || { echo "$t: $status"; return 1; }
        [ -z "$output" ]
        [ "$stderr" = "$t: unknown option '--bogus' (try --help)" ] || { echo "$stderr"; return 1; }
        run --separate-stderr "$t" -Z
        [ "$status" -eq 2 ]
        [ "$stderr" = "$t: unknown option '-Z' (try --help)" ]
    done
}

@test "an unknown letter in a bundle is named alone" {
    run --separate-stderr logos-fuse -qZ
    [ "$status" -eq 2 ]
    [ "$stderr" = "logos-fuse: unknown option '-Z' (try --help)" ]
}

@test "options after the operands (GNU order)" {
    run --separate-stderr logos-check "$TINY/llama.yaml" --tp 2
    [ "$status" -eq 0 ]
    [ "$output" = "$TINY/llama.yaml: splits over 2 chips" ]
    logos-author decode_step "$TINY/llama.yaml" -o step.logos --manifest
    [ "$(head -n 1 step.logos)" = "emb q8 16384 emb.q emb.s" ]
    step
    run --separate-stderr logos-run step.logos --synthetic 1 -p "1 2" -n 2 -q
    [ "$status" -eq 0 ]
    [ "${#lines[@]}" -eq 2 ]
    [ -z "$stderr" ]
    run --separate-stderr logos-bench step.logos --synthetic 1 -n 1 --csv
    [ "$status" -eq 0 ]
    [[ "${lines[1]}" == step,step.logos,tiny-llama,decode_step,64,* ]]
    run --separate-stderr logos-fuse step.logos -q
    [ "$status" -eq 0 ]
    [ -z "$stderr" ]
    python3 "$TOP/tests/import/gen.py" st qwen3 ck
    run --separate-stderr logos-import ck -o out -q
    [ "$status" -eq 0 ]
    [ -z "$stderr" ]
    [ -f out/spec.yaml ]
}

@test "--name=value is --name value" {
    logos-author --batch=2 decode_batch "$TINY/llama.yaml" >a.logos
    logos-author --batch 2 decode_batch "$TINY/llama.yaml" >b.logos
    cmp a.logos b.logos
    run --separate-stderr logos-check --tp=2 "$TINY/llama.yaml"
    [ "$status" -eq 0 ]
    step
    run --separate-stderr logos-run --synthetic=1 -p 1 -n 1 -q step.logos
    [ "$status" -eq 0 ]
    [ "${#lines[@]}" -eq 1 ]
    run --separate-stderr logos-bench --synthetic=1 --pos=3 -n 1 --ceiling=4500 --json step.logos
    [ "$status" -eq 0 ]
    run --separate-stderr logos-fuse --lane=cuda -q step.logos
    [ "$status" -eq 0 ]
    run --separate-stderr logos-import --format=f16 -o out ck
    [ "$status" -eq 2 ]
    [ "$stderr" = "logos-import: --format is f32 or q8, not 'f16'" ]
}

@test "short values attached, and bundled flags" {
    step
    run --separate-stderr logos-run -qn2 --synthetic 1 -p1 step.logos
    [ "$status" -eq 0 ]
    [ "${#lines[@]}" -eq 2 ]
    [ -z "$stderr" ]
    logos-check -po printed.logos step.logos
    cmp printed.logos step.logos
    logos-check -oprinted2.logos step.logos
    cmp printed2.logos step.logos
}

@test "-- ends the options; - and negative numbers are operands" {
    step
    cp step.logos ./-x.logos
    run --separate-stderr logos-check -- -x.logos
    [ "$status" -eq 0 ]
    [ "$output" = "-x.logos: ok: 1 program" ]
    run --separate-stderr logos-check - <step.logos
    [ "$output" = "<stdin>: ok: 1 program" ]
    run --separate-stderr logos-author layer -1 "$TINY/llama.yaml"
    [ "$status" -eq 2 ]
    [ "$stderr" = "logos-author: the layer is a whole number, not '-1'" ]
}

@test "a flag given a value, an option without one" {
    run --separate-stderr logos-author --manifest=yes decode_step "$TINY/llama.yaml"
    [ "$status" -eq 2 ]
    [ -z "$output" ]
    [ "$stderr" = "logos-author: --manifest takes no value" ]
    run --separate-stderr logos-run --version=2
    [ "$status" -eq 2 ]
    [ "$stderr" = "logos-run: --version takes no value" ]
    run --separate-stderr logos-author decode_step "$TINY/llama.yaml" -o
    [ "$status" -eq 2 ]
    [ "$stderr" = "logos-author: -o needs a value" ]
    run --separate-stderr logos-check "$TINY/llama.yaml" --tp
    [ "$status" -eq 2 ]
    [ "$stderr" = "logos-check: --tp needs a value" ]
}

@test "-h anywhere prints the usage on stdout" {
    for t in $TOOLS; do
        run --separate-stderr "$t" x -h
        [ "$status" -eq 0 ] || { echo "$t: $status"; return 1; }
        [[ "${lines[0]}" == "usage: $t "* ]]
        [[ "${lines[-1]}" =~ ^\ \ --version\ +the\ tool\'s\ version\ and\ the\ LOGOS\ language\ version$ ]]
        [ -z "$stderr" ]
    done
}
