#!/usr/bin/env bats
# install.bats — `make install PREFIX DESTDIR` puts every tool and every man
# page where they belong, and the installed tools run.

load common
bats_require_minimum_version 1.5.0

@test "make install puts the tools and the man pages under DESTDIR/PREFIX" {
    local d="$BATS_TEST_TMPDIR/root"
    run make -s -C "$TOP" install PREFIX=/opt/logos DESTDIR="$d"
    [ "$status" -eq 0 ] || { echo "$output"; return 1; }
    for t in "$TOP"/cmd/*/; do
        t=$(basename "$t")
        [ -x "$d/opt/logos/bin/$t" ] || { echo "missing $t"; return 1; }
    done
    for m in "$TOP"/man/man*/*; do
        local sec
        sec=$(basename "$(dirname "$m")")
        cmp -s "$m" "$d/opt/logos/share/man/$sec/$(basename "$m")" || { echo "missing $m"; return 1; }
    done
    run --separate-stderr "$d/opt/logos/bin/logos-check" "$EX/tiny/llama.yaml"
    [ "$status" -eq 0 ]
    [ "$output" = "$EX/tiny/llama.yaml: ok: 2 layers can be written" ]
}
