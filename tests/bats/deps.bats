#!/usr/bin/env bats
# deps.bats — scripts/deps: quiet when every package is there; as a user
# without root, it names exactly what is missing and how to install it.

load common
bats_require_minimum_version 1.5.0

# Shims: dpkg-query says $MISSING is not installed; id says uid 1000.
shims() {
    mkdir -p "$BATS_TEST_TMPDIR/shim"
    cat >"$BATS_TEST_TMPDIR/shim/dpkg-query" <<'X'
#!/bin/sh
for p; do :; done
case " $MISSING " in *" $p "*) exit 1 ;; esac
printf 'install ok installed'
X
    printf '#!/bin/sh\necho 1000\n' >"$BATS_TEST_TMPDIR/shim/id"
    chmod +x "$BATS_TEST_TMPDIR/shim/dpkg-query" "$BATS_TEST_TMPDIR/shim/id"
}

@test "deps says nothing when every package is installed" {
    shims
    MISSING="" PATH="$BATS_TEST_TMPDIR/shim:$PATH" run --separate-stderr sh "$TOP/scripts/deps"
    [ "$status" -eq 0 ]
    [ -z "$output" ] && [ -z "$stderr" ]
}

@test "deps without root names what is missing and how to install it" {
    shims
    MISSING="bats mandoc" PATH="$BATS_TEST_TMPDIR/shim:$PATH" run --separate-stderr sh "$TOP/scripts/deps"
    [ "$status" -eq 3 ]
    [ "$stderr" = "deps: missing Debian packages: bats mandoc
deps: install them with: sudo apt-get install bats mandoc" ]
}
