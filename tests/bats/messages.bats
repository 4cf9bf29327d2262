#!/usr/bin/env bats
# messages.bats — messages that name the right thing: a declaration's bad
# name (not its keyword), a long flat sum (not "nested"), safetensors offsets
# past the data (not "not increasing"), a GGUF string past the file (not a
# count), GGUF arrays nested too deep (not an "unknown type"), --ctx's bound,
# and the state that could not be allocated.

load common
bats_require_minimum_version 1.5.0

TINY="$EX/tiny"
BAD="$TOP/tests/golden/bad"
GEN="$TOP/tests/import/gen.py"

setup() {
    mkdir -p "$BATS_TEST_TMPDIR/d"
    cd "$BATS_TEST_TMPDIR/d"
}

# flat N OP: a program whose output is a flat chain of N inputs joined by OP.
flat() {
    local terms
    terms=$(for ((i = 0; i < $1; i++)); do printf 'x%d\n' $((i % 4)); done | paste -sd "$2" | sed "s/$2/ $2 /g")
    printf 'logos 1 forward tiny\nin x0 : f32[4]\nin x1 : f32[4]\nin x2 : f32[4]\nin x3 : f32[4]\nout y : f32[4]\ny = %s\nend\n' "$terms"
}

@test "a bad weight name is pointed at, not its keyword" {
    cd "$BAD"
    run --separate-stderr logos-check weight_name_number.logos
    [ "$status" -eq 1 ]
    [ "$stderr" = "logos-check: weight_name_number.logos:3:8: expected a name, found '1'
  weight 1wg : q8[128,64]
         ^" ]
    run --separate-stderr logos-check - <<<"$(printf 'logos 1 forward t\nstate\nend\n')"
    [ "$stderr" = "logos-check: <stdin>:2:6: expected a name, found end of line
  state
       ^" ]
}

@test "a flat sum too long says so; 201 terms are read" {
    flat 201 + >ok.logos
    run --separate-stderr logos-check ok.logos
    [ "$status" -eq 0 ]
    flat 202 + >sum.logos
    run --separate-stderr logos-check sum.logos
    [ "$status" -eq 1 ]
    [ "${stderr_lines[0]}" = "logos-check: sum.logos:7:1008: this sum is too long (more than 200 levels deep): give some of its terms a name" ]
    flat 202 '*' >prod.logos
    run --separate-stderr logos-check prod.logos
    [ "${stderr_lines[0]}" = "logos-check: prod.logos:7:1008: this product is too long (more than 200 levels deep): give some of its factors a name" ]
    cmp sum.logos "$BAD/sum_202_terms.logos"
}

@test "safetensors offsets past the file are past the data, not 'not increasing'" {
    python3 "$GEN" st llama ck --break farpast
    run --separate-stderr logos-import -o out ck
    [ "$status" -eq 1 ]
    [ "$stderr" = "logos-import: ck/model.safetensors: tensor 'model.embed_tokens.weight': data_offsets [0, 9223372036854775807] are past the data (427264 bytes)" ]
    [ ! -e out ]
}

@test "a GGUF string past the file is named as a string" {
    python3 "$GEN" gguf llama x.gguf --break strlen
    run --separate-stderr logos-import -o out x.gguf
    [ "$status" -eq 1 ]
    [ "$stderr" = "logos-import: x.gguf: a string of 1099511627776 bytes at byte 93 runs past the end of the file" ]
}

@test "GGUF arrays of arrays nested too deep are named, not an unknown type" {
    python3 "$GEN" gguf llama x.gguf --break nested
    run --separate-stderr logos-import -o out x.gguf
    [ "$status" -eq 1 ]
    [ "$stderr" = "logos-import: x.gguf: an array nested more than 5 levels deep at byte 4183" ]
}

@test "--ctx too large says its bound" {
    run --separate-stderr logos-import --ctx 3000000000 -o out ck
    [ "$status" -eq 2 ]
    [ "$stderr" = "logos-import: --ctx takes a number of positions from 1 to 1000000000, not '3000000000'" ]
}

@test "out of memory for a state names the state, its type and its size" {
    sed 's/^ctx: .*/ctx: 1000000000/; s/head_dim: 16/head_dim: 64/' "$TINY/llama.yaml" >big.yaml
    logos-author decode_step big.yaml >big.logos
    ASAN_OPTIONS=allocator_may_return_null=1 run --separate-stderr logos-run -q --synthetic 1 -p 1 -n 1 big.logos
    [ "$status" -eq 3 ]
    [ -z "$output" ]
    [ "$stderr" = "logos-run: out of memory: 'Kc0' (f32[1000000000,2,64]) needs 512000000000 bytes" ]
}
