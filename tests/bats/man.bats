#!/usr/bin/env bats
# man.bats — every man page's EXAMPLES run as tests (as jq's manual does):
# each `$ ` line of a literal block of the EXAMPLES section (with its
# continuation lines: a line ending in ` \e`, ` \\` or `|` goes on) runs with
# `sh -c` from a scratch directory that links examples/, tests/ and bench/
# of the repository, with the sanitized tools first on PATH, in the order of the
# page, so a command may use what an earlier one wrote. Each must exit 0
# with no sanitizer report, and print exactly the lines the page shows after
# it (standard error and standard output as a terminal shows them, together;
# no lines shown: nothing printed). `$ cat NAME` followed by the lines of a
# file writes those lines to NAME first, so a page may show the file it uses.
# The exceptions are listed in KNOWN below, each with its reason.

load common
bats_require_minimum_version 1.5.0

# page <TAB> command <TAB> what to expect: "status N" (the example shows a
# rejection and must exit N), "inline" (it needs a file the page shows only
# as text elsewhere: not run) or "times" (it prints times, which vary: every
# number with a decimal point, shown or printed, reads as N, and runs of
# blanks as one).
KNOWN="logos-check.1	logos-check --tp 2 examples/qwen2.5-0.5b.yaml	status 1
logos-check.1	logos-check -p step.logos | diff - step.logos && echo same	inline
logos-check.1	logos-check -o step.logos step.logos	inline
logos-check.1	logos-check bad.logos	inline
logos-spec.5	logos-check --tp 2 examples/qwen2.5-0.5b.yaml	status 1
logos-author.1	logos-author --tp 3 tp_decode_step examples/tiny/llama.yaml	status 1
logos-placement.5	logos-check split.logos	status 1
logos-fuse.1	printf 'logos 1 forward s\nin a : f32[4]\nin b : f32[4]\nout y : f32[2,4]\ny = stack(a, b)\nend\n' | logos-fuse	status 1
logos-plan.5	logos-run -q --device cpu --synthetic 1 -p 1 bad.plan	status 1
logos-bench.1	logos-bench --device cpu --synthetic 1 --pos 8 --pos 64 step.plan	times
logos-bench.1	logos-bench --device cpu --synthetic 1 --pos 17 --ceiling 4500 --csv step.plan	times
logos-bench.1	logos-bench --device cpu --synthetic 1 --pos 17 step.plan --compare precise.plan | tail -1	times
logos-bench.1	logos-bench --device cpu --weights w --pos 4 --json cut.logos	times
logos-bench.1	logos-bench --device cpu --synthetic 1 --form prefill --chunk 32 --pos 1 --pos 17 prefill.plan	times
logos-bench.1	logos-bench --device cpu --synthetic 1 --form decode_batch --pos 8 --ceiling 4500 --tensor-rate 800 --csv batch.plan	times
logos-run.1	logos-run --device cpu --synthetic 1 -p \"1 2 3\" -n 2 -o ids gen.logos	times
logos-run.1	logos-run --device cpu --tp 4 --synthetic 1 -p \"1 2 3\" tp.plan	status 1"

# Pages whose EXAMPLES hold no command to run: logos-weights.5 shows numpy
# code that writes and reads weight files.
NOCOMMANDS="logos-weights.5"

# examples PAGE: the page's examples as NUL-terminated records,
# "C<TAB>cmd<TAB>output" for a command and the lines shown after it, and
# "F<TAB>name<TAB>text" for a file shown by `$ cat name`.
examples() {
    awk '
    function unesc(s) {
        gsub(/\\&/, "", s); gsub(/\\-/, "-", s); gsub(/\\e/, "\\", s); gsub(/\\\\/, "\\", s)
        gsub(/\\\[u2581\]/, "\342\226\201", s)
        return s
    }
    function flush() {
        if (file != "") printf "F\t%s\t%s\001", file, body
        else if (cmd != "") printf "C\t%s\t%s\001", cmd, body
        file = ""; cmd = ""; body = ""
    }
    /^\.Sh / { flush(); ex = ($0 ~ /^\.Sh EXAMPLES/); next }
    !ex { next }
    /^\.Bd -literal/ { lit = 1; next }
    /^\.Ed/ { flush(); lit = 0; cont = 0; next }
    !lit { next }
    {
        line = unesc($0)
        if (cont) cmd = cmd "\n" line
        else if (line ~ /^\$ /) { flush(); cmd = substr(line, 3) }
        else { body = body line "\n"; next }
        cont = (line ~ /( \\|\|)$/)
        if (cont) next
        if (cmd ~ /^cat [A-Za-z0-9_.\/-]+$/) { file = substr(cmd, 5); cmd = "" }
    }
    END { flush() }' "$1" | tr '\001' '\0'
}

# times TEXT: TEXT with every decimal number as N and blanks squeezed.
times() {
    sed -E 's/[0-9]+\.[0-9]+/N/g; s/  +/ /g' <<<"$1"
}

# run_examples PAGE: runs the examples of man/*/PAGE; fails on the first
# that does not do what it should, naming it.
run_examples() {
    local page="$1" src n=0
    src=$(ls "$TOP"/man/man*/"$page")
    local dir="$BATS_TEST_TMPDIR/scratch"
    mkdir -p "$dir"
    ln -s "$TOP/examples" "$dir/examples"
    ln -s "$TOP/tests" "$dir/tests"
    ln -s "$TOP/bench" "$dir/bench"
    cd "$dir"
    while IFS= read -r -d '' rec; do
        local kind="${rec%%	*}" rest="${rec#*	}"
        if [ "$kind" = F ]; then
            [ -e "${rest%%	*}" ] || printf '%s' "${rest#*	}" >"${rest%%	*}"
            continue
        fi
        local cmd="${rest%%	*}" shown="${rest#*	}"
        shown="${shown%$'\n'}"
        local want=0 known
        known=$(c="$cmd" awk -F '\t' -v p="$page" '$1 == p && $2 == ENVIRON["c"] { print $3 }' <<<"$KNOWN")   # ENVIRON: a command's backslashes as they are
        [ "$known" = inline ] && continue
        [ "${known#status }" != "$known" ] && want="${known#status }"
        run sh -c "$cmd"
        local got="$output"
        [ "$known" = times ] && { got=$(times "$got"); shown=$(times "$shown"); }
        if [ "$status" -ne "$want" ] || [ "$got" != "$shown" ] ||
            grep -qE 'AddressSanitizer|LeakSanitizer|runtime error:|internal error' <<<"$output"; then
            echo "$page: \$ $cmd"
            echo "status $status (expected $want)"
            diff <(printf '%s\n' "$shown") <(printf '%s\n' "$got") | head -40
            return 1
        fi
        n=$((n + 1))
    done < <(examples "$src")
    [ "$n" -gt 0 ] || [[ " $NOCOMMANDS " == *" $page "* ]] || { echo "$page: no example ran"; return 1; }
}

@test "every page has its examples run here" {
    for f in "$TOP"/man/man*/*.[157]; do
        grep -q "^    run_examples $(basename "$f")\$" "$BATS_TEST_FILENAME" ||
            { echo "$(basename "$f") has no test in man.bats"; return 1; }
    done
}

@test "every known exception is still an example of its page" {
    while IFS='	' read -r page cmd _; do
        local src
        src=$(ls "$TOP"/man/man*/"$page")
        examples "$src" | tr '\0' '\n' | grep -qF "C	$cmd	" ||
            { echo "$page no longer shows: $cmd"; return 1; }
    done <<<"$KNOWN"
}

@test "logos-author.1 examples" {
    run_examples logos-author.1
}

@test "logos-bench.1 examples" {
    run_examples logos-bench.1
}

@test "logos-check.1 examples" {
    run_examples logos-check.1
}

@test "logos-fuse.1 examples" {
    run_examples logos-fuse.1
}

@test "logos-run.1 examples" {
    run_examples logos-run.1
}

@test "logos-plan.5 examples" {
    run_examples logos-plan.5
}

@test "logos-placement.5 examples" {
    run_examples logos-placement.5
}

@test "logos-spec.5 examples" {
    run_examples logos-spec.5
}

@test "logos-weights.5 examples" {
    run_examples logos-weights.5
}

@test "logos.7 examples" {
    run_examples logos.7
}

@test "logos-import.1 examples" {
    run_examples logos-import.1
}

@test "logos-tok.1 examples" {
    run_examples logos-tok.1
}
