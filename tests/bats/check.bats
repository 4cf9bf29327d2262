#!/usr/bin/env bats
# check.bats — logos-check on programs: every golden op program is accepted
# and prints back to the same bytes; every rejected program gets its exact,
# located message (tests/golden/bad/NAME.err) and exit status 1 with nothing
# on stdout; the command line (stdin, -p, -o, -h, bad options, missing files);
# hostile input (deep nesting, binary bytes, a NUL, a 10 MB line) never
# crashes the sanitized build: a sanitizer report would change stderr.

load common
bats_require_minimum_version 1.5.0

OPS="$TOP/tests/golden/ops"
BAD="$TOP/tests/golden/bad"

# programs FILE: how many programs FILE holds (one, but the stream test).
programs() { [ "$(basename "$1")" = stream.logos ] && echo "2 programs" || echo "1 program"; }

# No sanitizer report and no crash status in the last run.
no_crash() {
    [ "$status" -lt 2 ] || { echo "status $status"; return 1; }
    ! grep -qE 'AddressSanitizer|LeakSanitizer|runtime error:|internal error' <<<"$stderr"
}

@test "every golden op program is accepted" {
    cd "$OPS"
    local n=0
    for f in *.logos; do
        run --separate-stderr "$LOGOS_BIN/logos-check" "$f"
        [ "$status" -eq 0 ] || { echo "$f: status $status: $stderr"; return 1; }
        [ "$output" = "$f: ok: $(programs "$f")" ] || { echo "$f: $output"; return 1; }
        [ -z "$stderr" ] || { echo "$f: $stderr"; return 1; }
        n=$((n + 1))
    done
    [ "$n" -ge 50 ]
}

@test "every golden op program prints back to the same bytes" {
    cd "$OPS"
    for f in *.logos; do
        run --separate-stderr bash -c '"$1" -p "$2" | diff - "$2"' _ "$LOGOS_BIN/logos-check" "$f"
        [ "$status" -eq 0 ] || { echo "$f:"; echo "$output"; echo "$stderr"; return 1; }
        [ -z "$output" ]
    done
}

@test "the golden programs cover every op of the table" {
    cd "$OPS"
    for op in silu gelu_tanh sigmoid softplus exp tanh softcap clamp rmsnorm l2norm rope attend latent \
              conv delta route moe argmax stack concat slice last range allreduce allgather; do
        grep -q "\b$op(" *.logos || { echo "no program uses $op"; return 1; }
    done
    grep -q ' @ ' *.logos && grep -q '\[\.\.' *.logos && grep -q ' ~ \[' *.logos
    grep -q 'unpair(16)' *.logos && grep -q 'unpair(16, 8)' *.logos
}

@test "every rejected program gets its exact message and status 1" {
    cd "$BAD"
    local n=0 fails=""
    for f in *.logos; do
        local name="${f%.logos}"
        [ -f "$name.err" ] || { echo "$name.err is missing"; return 1; }
        run --separate-stderr "$LOGOS_BIN/logos-check" "$f"
        [ "$status" -eq 1 ] || { echo "$f: status $status: $stderr"; return 1; }
        [ -z "$output" ] || { echo "$f: stdout: $output"; return 1; }
        if [ "$stderr" != "$(cat "$name.err")" ]; then
            fails="$fails $name"
            diff <(printf '%s\n' "$stderr") "$name.err" || true
        fi
        n=$((n + 1))
    done
    [ -z "$fails" ] || { echo "wrong messages:$fails"; return 1; }
    [ "$n" -ge 40 ]
}

@test "a rejected program read from stdin is named <stdin>" {
    run --separate-stderr "$LOGOS_BIN/logos-check" - <"$BAD/undefined_name.logos"
    [ "$status" -eq 1 ]
    [ -z "$output" ]
    [ "$stderr" = "$(sed 's/^logos-check: undefined_name.logos:/logos-check: <stdin>:/' "$BAD/undefined_name.err")" ]
}

@test "stdin is read with '-' and with no file" {
    run --separate-stderr "$LOGOS_BIN/logos-check" - <"$OPS/attend.logos"
    [ "$status" -eq 0 ]
    [ "$output" = "<stdin>: ok: 1 program" ]
    run --separate-stderr "$LOGOS_BIN/logos-check" <"$OPS/stream.logos"
    [ "$status" -eq 0 ]
    [ "$output" = "<stdin>: ok: 2 programs" ]
    [ -z "$stderr" ]
}

@test "-p on stdin prints the stream back" {
    run --separate-stderr bash -c '"$1" -p <"$2" | diff - "$2"' _ "$LOGOS_BIN/logos-check" "$OPS/comments.logos"
    [ "$status" -eq 0 ]
    [ -z "$output" ]
}

@test "-p prints nothing when the input is rejected" {
    run --separate-stderr "$LOGOS_BIN/logos-check" -p "$BAD/shape_broadcast.logos"
    [ "$status" -eq 1 ]
    [ -z "$output" ]
    # the first program of the stream is good, the second is not: nothing at all
    run --separate-stderr "$LOGOS_BIN/logos-check" -p "$BAD/stream_second_bad.logos"
    [ "$status" -eq 1 ]
    [ -z "$output" ]
    # one good file and one bad file: nothing at all
    run --separate-stderr "$LOGOS_BIN/logos-check" -p "$OPS/attend.logos" "$BAD/shape_broadcast.logos"
    [ "$status" -eq 1 ]
    [ -z "$output" ]
}

@test "-o FILE writes the printed programs" {
    local out="$BATS_TEST_TMPDIR/step.logos"
    run --separate-stderr "$LOGOS_BIN/logos-check" -o "$out" "$OPS/comments.logos" "$OPS/stream.logos"
    [ "$status" -eq 0 ]
    [ -z "$output" ]
    [ -z "$stderr" ]
    cat "$OPS/comments.logos" "$OPS/stream.logos" | diff - "$out"
}

@test "-o FILE leaves no file when the input is rejected" {
    local out="$BATS_TEST_TMPDIR/never.logos"
    run --separate-stderr "$LOGOS_BIN/logos-check" -o "$out" "$BAD/undefined_name.logos"
    [ "$status" -eq 1 ]
    [ -z "$output" ]
    [ ! -e "$out" ]
    [ -z "$(ls "$BATS_TEST_TMPDIR" | grep never)" ]
}

@test "-o FILE in a missing directory is a system failure" {
    run --separate-stderr "$LOGOS_BIN/logos-check" -o "$BATS_TEST_TMPDIR/no/such/dir/x.logos" "$OPS/tanh.logos"
    [ "$status" -eq 3 ]
    [ -z "$output" ]
    [[ "$stderr" == "logos-check: $BATS_TEST_TMPDIR/no/such/dir/x.logos: cannot write"* ]]
}

@test "several files: each is named, the worst status wins" {
    cd "$OPS"
    run --separate-stderr "$LOGOS_BIN/logos-check" tanh.logos exp.logos
    [ "$status" -eq 0 ]
    [ "$output" = "tanh.logos: ok: 1 program
exp.logos: ok: 1 program" ]
    run --separate-stderr "$LOGOS_BIN/logos-check" tanh.logos "$BAD/empty.logos"
    [ "$status" -eq 1 ]
    [ "$stderr" = "logos-check: $BAD/empty.logos: no program in the input" ]
}

@test "-h prints the usage on stdout and exits 0" {
    run --separate-stderr "$LOGOS_BIN/logos-check" -h
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "usage: logos-check [-p] [-o FILE] [--tp N] [FILE ...]" ]
    [ -z "$stderr" ]
}

@test "an unknown option exits 2 with one line naming it" {
    run --separate-stderr "$LOGOS_BIN/logos-check" -x "$OPS/tanh.logos"
    [ "$status" -eq 2 ]
    [ -z "$output" ]
    [ "$stderr" = "logos-check: unknown option '-x' (try --help)" ]
}

@test "--tp takes a number of chips and a spec" {
    run --separate-stderr "$LOGOS_BIN/logos-check" --tp 0 "$EX/llama-3.2-1b.yaml"
    [ "$status" -eq 2 ]
    [ "$stderr" = "logos-check: --tp takes a number of chips from 1 to 1024, not '0'" ]
    run --separate-stderr "$LOGOS_BIN/logos-check" --tp 2 "$OPS/tanh.logos"
    [ "$status" -eq 2 ]
    [ "$stderr" = "logos-check: --tp checks a spec (FILE.yaml), not '$OPS/tanh.logos'" ]
}

@test "a missing file exits 1 with its name and the reason" {
    cd "$BATS_TEST_TMPDIR"
    run --separate-stderr "$LOGOS_BIN/logos-check" nosuch.logos
    [ "$status" -eq 1 ]
    [ -z "$output" ]
    [ "$stderr" = "logos-check: nosuch.logos: No such file or directory" ]
}

# ---- hostile input ----

@test "10000 nested parentheses are rejected, not a stack overflow" {
    cd "$BATS_TEST_TMPDIR"
    { printf 'logos 1 decode_step tiny\nin x : f32[4]\nout y : f32[4]\ny = '
      printf '(%.0s' $(seq 10000); printf x; printf ')%.0s' $(seq 10000); printf '\nend\n'; } >deep.logos
    run --separate-stderr "$LOGOS_BIN/logos-check" deep.logos
    [ "$status" -eq 1 ]
    [ -z "$output" ]
    [ "$stderr" = "logos-check: deep.logos:4:205: expression nested too deeply
  ...$(printf '(%.0s' $(seq 160))...
     $(printf ' %.0s' $(seq 80))^" ]
}

@test "10000 unary minuses and a chain of 10000 products are rejected" {
    cd "$BATS_TEST_TMPDIR"
    { printf 'logos 1 decode_step tiny\nin x : f32[4]\nout y : f32[4]\ny = '
      printf -- '-%.0s' $(seq 10000); printf 'x\nend\n'; } >neg.logos
    run --separate-stderr "$LOGOS_BIN/logos-check" neg.logos
    [ "$status" -eq 1 ]
    [ "$(head -n 1 <<<"$stderr")" = "logos-check: neg.logos:4:205: expression nested too deeply" ]
    { printf 'logos 1 decode_step tiny\nweight w : f32[4,4]\nin x : f32[4]\nout y : f32[4]\ny = '
      printf 'w @ %.0s' $(seq 10000); printf 'x\nend\n'; } >mm.logos
    run --separate-stderr "$LOGOS_BIN/logos-check" mm.logos
    [ "$status" -eq 1 ]
    [ "$(head -n 1 <<<"$stderr")" = "logos-check: mm.logos:5:805: expression nested too deeply" ]
}

@test "long left-leaning chains (a + a + ..., x[0][0]..., x ~ [4] ~ [4]...) do not crash" {
    cd "$BATS_TEST_TMPDIR"
    local head='logos 1 decode_step tiny\nin x : f32[4]\nout y : f32[4]\ny = x'
    { printf "$head"; printf ' + x%.0s' $(seq 100000); printf '\nend\n'; } >add.logos
    { printf "$head"; printf ' ~ [4]%.0s' $(seq 100000); printf '\nend\n'; } >view.logos
    { printf "$head"; printf '[0]%.0s' $(seq 100000); printf '\nend\n'; } >rows.logos
    for f in add.logos view.logos rows.logos; do
        run --separate-stderr "$LOGOS_BIN/logos-check" -p "$f"
        no_crash || { echo "$f: $(head -c 2000 <<<"$stderr")"; return 1; }
    done
}

@test "binary garbage is rejected at its first byte" {
    cd "$BATS_TEST_TMPDIR"
    printf '\xde\xad\xbe\xef\x01\x02\x03ELF\n\x89PNG\r\n' >garbage.logos
    run --separate-stderr "$LOGOS_BIN/logos-check" garbage.logos
    [ "$status" -eq 1 ]
    [ -z "$output" ]
    [ "$stderr" = "logos-check: garbage.logos:1:1: a program starts with its header: logos VERSION FORM [LAYER] MODEL
  $(printf '\xde\xad\xbe\xef')???ELF
  ^" ]
}

@test "a stray byte in a statement is named by its value" {
    cd "$BATS_TEST_TMPDIR"
    printf 'logos 1 decode_step tiny\nin x : f32[4]\nout y : f32[4]\ny = x \xff x\nend\n' >byte.logos
    run --separate-stderr "$LOGOS_BIN/logos-check" byte.logos
    [ "$status" -eq 1 ]
    [ "$stderr" = "logos-check: byte.logos:4:7: unexpected byte 0xff
  y = x $(printf '\xff') x
        ^" ]
}

@test "a NUL byte is rejected as not text" {
    cd "$BATS_TEST_TMPDIR"
    printf 'logos 1 decode_step tiny\nin x\0 : f32[4]\nend\n' >nul.logos
    run --separate-stderr "$LOGOS_BIN/logos-check" nul.logos
    [ "$status" -eq 1 ]
    [ -z "$output" ]
    [ "$stderr" = "logos-check: nul.logos:2:5: a NUL byte: this is not a text file" ]
}

@test "a 10 MB line is shown as a window around the error, \"...\" where it was cut" {
    cd "$BATS_TEST_TMPDIR"
    { printf 'logos 1 decode_step tiny\nin x : f32[4]\nout y : f32[4]\ny = x'
      head -c 10000000 /dev/zero | tr '\0' ' '; printf '$\nend\n'; } >long.logos
    run --separate-stderr "$LOGOS_BIN/logos-check" long.logos
    [ "$status" -eq 1 ]
    [ -z "$output" ]
    [ "$stderr" = "logos-check: long.logos:4:10000006: unexpected character '\$'
  ...$(printf ' %.0s' $(seq 80))\$
     $(printf ' %.0s' $(seq 80))^" ]
}

@test "a 10 MB name gets a short message" {
    cd "$BATS_TEST_TMPDIR"
    { printf 'logos 1 decode_step tiny\nin x : f32[4]\nout y : f32[4]\ny = '
      head -c 10000000 /dev/zero | tr '\0' 'a'; printf '\nend\n'; } >name.logos
    run --separate-stderr "$LOGOS_BIN/logos-check" name.logos
    [ "$status" -eq 1 ]
    [ -z "$output" ]
    no_crash
    [ "${#stderr}" -lt 2000 ]
}

@test "/dev/zero is refused at its first byte, not read without end" {
    for t in "logos-check" "logos-author decode_step" "logos-fuse" "logos-run --synthetic 1 -p 1"; do
        run --separate-stderr timeout 5 $t /dev/zero
        [ "$status" -eq 1 ] || { echo "$t: status $status"; return 1; }
        [ -z "$output" ]
        [ "$stderr" = "${t%% *}: /dev/zero:1:1: a NUL byte: this is not a text file" ]
    done
}

@test "a NUL byte in a pipe stops the reading there, located" {
    run --separate-stderr bash -c '{ printf "logos 1 x y\nab\0"; exec cat /dev/zero; } | timeout 5 logos-check'
    [ "$status" -eq 1 ]
    [ "$stderr" = "logos-check: <stdin>:2:3: a NUL byte: this is not a text file" ]
}

@test "an endless text is refused past 256 MiB" {
    run --separate-stderr bash -c 'yes | timeout 60 logos-check'
    [ "$status" -eq 1 ]
    [ -z "$output" ]
    [ "$stderr" = "logos-check: <stdin>: larger than 256 MiB: too large for one input" ]
}

@test "-p prints a plan back to the same bytes, the program's comments before its header and after its end kept" {
    cd "$BATS_TEST_TMPDIR"
    printf '# a note before\nlogos 1 decode_layer 0 tiny\nin x : f32[64]\nout y : f32[64]\ny = silu(x)  # on its line\nend\n# a note after\n\n# and another\n' >c.logos
    logos-fuse c.logos >c.plan
    grep -q '^# a note before$' c.plan
    grep -q '^# and another$' c.plan
    logos-check -p c.plan >c2.plan
    logos-check -p c2.plan >c3.plan
    # the same but each launch's comment, which counts its program's lines
    # in the file it was read from
    diff <(sed 's/  # line.*//' c.plan) <(sed 's/  # line.*//' c2.plan)
    diff c2.plan c3.plan
    grep -q '# line 10$' c2.plan
}

@test "unpair's first rotated row is a whole number of up to nine digits (a spec's wide latent heads pass a million)" {
    cd "$BATS_TEST_TMPDIR"
    printf 'logos 1 decode_layer 0 tiny\nin x : f32[8]\nweight w : f32[2000016,8] unpair(2000016, 16, 2000000)\nout y : f32[2000016]\ny = w @ x\nend\n' >up.logos
    run logos-check -p up.logos
    [ "$status" -eq 0 ]
    [ "$output" = "$(cat up.logos)" ]
    sed 's/2000000)/1234567890)/' up.logos >up2.logos
    run --separate-stderr logos-check up2.logos
    [ "$status" -eq 1 ]
    [ "${stderr_lines[0]}" = "logos-check: up2.logos:3:47: expected the first rotated row (a whole number)" ]
}

@test "-p with a spec among the programs: the spec is checked and prints nothing; a bad one empties the output" {
    cd "$BATS_TEST_TMPDIR"
    "$LOGOS_BIN/logos-author" decode_step "$EX/tiny/llama.yaml" >step.logos
    run --separate-stderr "$LOGOS_BIN/logos-check" -p step.logos "$EX/tiny/llama.yaml"
    [ "$status" -eq 0 ]
    [ -z "$stderr" ]
    [ "$output" = "$("$LOGOS_BIN/logos-check" -p step.logos)" ]
    sed 's/^dim: .*/dim: 0/' "$EX/tiny/llama.yaml" >bad.yaml
    run --separate-stderr "$LOGOS_BIN/logos-check" -p step.logos bad.yaml
    [ "$status" -eq 1 ]
    [ -z "$output" ]
    [ "${stderr_lines[0]}" = "logos-check: bad.yaml:6:6: 'dim' must be at least 1, got '0'" ]
}

@test "--tp with no file says to give the spec (exit 2)" {
    run --separate-stderr "$LOGOS_BIN/logos-check" --tp 2
    [ "$status" -eq 2 ]
    [ -z "$output" ]
    [ "$stderr" = "logos-check: --tp checks a spec: give it (FILE.yaml)" ]
}
