# common.bash — shared setup of the bats suites: where the tools and the
# examples are. The tools are the sanitized build unless LOGOS_BIN says.
TOP="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"
LOGOS_BIN="${LOGOS_BIN:-$TOP/build/san/bin}"
EX="$TOP/examples"
export PATH="$LOGOS_BIN:$PATH"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export XDG_CACHE_HOME="$BATS_TEST_TMPDIR/cache"

# Skips the test where the python the GPU scripts run (PYTHON, else
# python3) cannot import numpy: their comparisons need it.
need_numpy() {
    "${PYTHON:-python3}" -c 'import numpy' 2>/dev/null || skip "no ${PYTHON:-python3} with numpy"
}

# plan_is_program PROGRAM SEED: the CPU reference runs PROGRAM's plan (the
# default fusion) as it runs the program itself, the same tokens.
plan_is_program() {
    logos-fuse "$1" >"$1.plan"
    run logos-run -q --device cpu --synthetic "$2" -p 3 -n 3 "$1.plan"
    [ "$status" -eq 0 ]
    [ "$output" = "$(logos-run -q --device cpu --synthetic "$2" -p 3 -n 3 "$1")" ]
}
