#!/usr/bin/env bats
# out.bats — where -o FILE and --logits FILE write: a regular file is
# replaced whole (through a temporary beside it); a device, a FIFO or
# /dev/stdout is written in place and stays what it is; a symbolic link is
# written through, its target replaced beside the target. Every case runs
# in a scratch folder: a device node is made there (as root) rather than
# risking /dev.

load common
bats_require_minimum_version 1.5.0

TINY="$EX/tiny"

setup() {
    mkdir -p "$BATS_TEST_TMPDIR/d"
    cd "$BATS_TEST_TMPDIR/d"
    logos-author decode_step "$TINY/llama.yaml" >want.logos
}

# full: a node like /dev/full here (root), or /dev/full itself (elsewhere,
# where no tool could replace it).
full() {
    if mknod full c 1 7 2>/dev/null; then echo full; else echo /dev/full; fi
}

@test "-o to a device writes in place: the node stays a device" {
    local f
    f=$(full)
    run --separate-stderr logos-author -o "$f" decode_step "$TINY/llama.yaml"
    [ "$status" -eq 3 ]
    [ -z "$output" ]
    [ "$stderr" = "logos-author: $f: cannot write: No space left on device" ]
    [ -c "$f" ]
    if [ "$f" = full ]; then mknod null c 1 3; else ln -s /dev/null null; fi
    run --separate-stderr logos-author -o null decode_step "$TINY/llama.yaml"
    [ "$status" -eq 0 ]
    [ -z "$stderr" ]
    [ -c null ]
    [ "$(ls)" = "$(printf '%s\n' "$f" null want.logos | grep -v / | sort)" ]
}

@test "-o to a FIFO writes into it: the reader gets the program" {
    mkfifo p
    timeout 20 cat p >got &
    run --separate-stderr logos-author -o p decode_step "$TINY/llama.yaml"
    wait
    [ "$status" -eq 0 ]
    [ -z "$stderr" ]
    [ -p p ]
    cmp got want.logos
}

@test "-o /dev/stdout: a pipe and a regular file get the output" {
    ln -s /proc/self/fd/1 stdout
    run --separate-stderr bash -c 'logos-author -o stdout decode_step "$1" | cat' _ "$TINY/llama.yaml"
    [ "$status" -eq 0 ]
    [ "$output" = "$(cat want.logos)" ]
    [ -L stdout ]
    logos-author -o stdout decode_step "$TINY/llama.yaml" >file
    cmp file want.logos
    [ -L stdout ]
}

@test "-o through a symbolic link replaces its target, beside the target" {
    mkdir sub
    echo old >sub/target.logos
    chmod 640 sub/target.logos
    ln -s sub/target.logos link.logos
    ln -s link.logos link2.logos
    run --separate-stderr logos-author -o link2.logos decode_step "$TINY/llama.yaml"
    [ "$status" -eq 0 ]
    [ -z "$stderr" ]
    [ -L link.logos ] && [ -L link2.logos ]
    cmp sub/target.logos want.logos
    [ "$(stat -c %a sub/target.logos)" = 640 ]
    [ "$(ls sub)" = target.logos ]
    ln -s sub/new.logos dangling.logos
    logos-author -o dangling.logos decode_step "$TINY/llama.yaml"
    [ -L dangling.logos ]
    cmp sub/new.logos want.logos
}

@test "a failed command leaves a link's target as it was" {
    echo old >target.logos
    ln -s target.logos link.logos
    run --separate-stderr logos-author -o link.logos decode_layer 9 "$TINY/llama.yaml"
    [ "$status" -eq 1 ]
    [ "$(cat target.logos)" = old ]
    [ -L link.logos ]
    [ "$(ls)" = "$(printf '%s\n' link.logos target.logos want.logos)" ]
}

@test "a loop of links is refused, nothing written" {
    ln -s a b
    ln -s b a
    run --separate-stderr logos-author -o a decode_step "$TINY/llama.yaml"
    [ "$status" -eq 3 ]
    [ "$stderr" = "logos-author: a: cannot write: Too many levels of symbolic links" ]
    [ -L a ] && [ -L b ]
}

@test "logos-check -o and logos-run -o and --logits write in place and through links" {
    local f
    f=$(full)
    run --separate-stderr logos-check -o "$f" want.logos
    [ "$status" -eq 3 ]
    [ "$stderr" = "logos-check: $f: cannot write: No space left on device" ]
    [ -c "$f" ]
    run --separate-stderr logos-run -q --synthetic 1 -p 1 -n 2 -o "$f" want.logos
    [ "$status" -eq 3 ]
    [ "$stderr" = "logos-run: $f: cannot write: No space left on device" ]
    [ -c "$f" ]
    run --separate-stderr logos-run -q --synthetic 1 -p 1 -n 2 --logits "$f" want.logos
    [ "$status" -eq 3 ]
    [ "$stderr" = "logos-run: $f: cannot write: No space left on device" ]
    [ -c "$f" ]
    mkfifo p
    timeout 20 cat p >logits &
    ln -s ids.txt link.txt
    run --separate-stderr logos-run -q --synthetic 1 -p 1 -n 2 --logits p -o link.txt want.logos
    wait
    [ "$status" -eq 0 ]
    [ -p p ] && [ -L link.txt ]
    [ "$(stat -c %s logits)" -eq $((2 * 256 * 4)) ]
    [ "$(wc -l <ids.txt)" -eq 2 ]
}
