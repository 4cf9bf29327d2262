#!/usr/bin/env bats
# plan.bats — the CUDA lane's plans where no GPU answers: the golden plan of
# every example spec the lane takes (dense, LFM2, gpt-oss, DeepSeek-V2, Qwen3-Next) and every form,
# diffed; the CPU reference running a plan gives the very tokens and logits
# of running its program, for every tiny spec and form; every bad plan
# rejected with its exact message before anything runs; every kernel
# instantiation the lane can ask for compiled by NVRTC for sm_90 with no spill and no stack frame, but the default
# decode batches' known ones (tests/golden/spills.known, a defect listed so that it cannot grow); the knobs; logos-run's
# --device, --follow and --compile.

load common
bats_require_minimum_version 1.5.0

TINY="$EX/tiny"
GOLD="$TOP/tests/golden/plans"
BADP="$TOP/tests/golden/badplans"
LANE="llama mistral qwen2 qwen3 gemma2 lfm2 gptoss deepseek2 deepseek2q qwen3next"

setup() {
    mkdir -p "$BATS_TEST_TMPDIR/d"
    cd "$BATS_TEST_TMPDIR/d"
}

layers() { sed -n 's/^layers: *//p' "$1"; }

@test "the golden plans: every example spec the lane takes and every form, and split forms, the same bytes" {
    local spec form rest tp layer out fails=""
    while read -r spec form rest; do
        tp=$(sed -n 's/.*--tp \([0-9]*\).*/\1/p' <<<"$rest")
        layer=$(sed 's/ *--tp [0-9]*//' <<<"$rest")
        out="$GOLD/$(echo "$spec" | tr / -).$form${layer:+.$layer}${tp:+.tp$tp}.plan"
        logos-author ${tp:+--tp $tp} "$form" $layer "$EX/$spec.yaml" | logos-fuse >got.plan
        cmp -s got.plan "$out" || fails="$fails $spec:$form$layer${tp:+@$tp}"
    done < <(grep -v '^#' "$GOLD/list")
    [ -z "$fails" ] || { echo "plans differ from the golden ones:$fails"; return 1; }
}

# same SPEC ARGS...: the program stream and its plans on the CPU reference,
# the tokens and every logit compared byte for byte.
same() {
    local name=$1
    shift
    logos-fuse prog.logos >prog.plan
    logos-run -q --device cpu --synthetic 4 --logits a.f32 -o a.tok "$@" prog.logos
    logos-run -q --device cpu --synthetic 4 --logits b.f32 -o b.tok "$@" prog.plan
    cmp a.tok b.tok && cmp a.f32 b.f32 || { echo "$name: the plan's run differs from the program's"; return 1; }
    [ -s a.tok ] && [ -s a.f32 ]
}

@test "the CPU reference running a plan: the same tokens and logits as running its program, every tiny spec and form" {
    local f l n
    for f in $LANE; do
        n=$(layers "$TINY/$f.yaml")
        logos-author decode_step "$TINY/$f.yaml" >prog.logos
        same "$f decode_step" -p "1 2 3" -n 8
        logos-author generate "$TINY/$f.yaml" >prog.logos
        same "$f generate" -p "4 5 6 7 8" -n 6
        logos-author prefill "$TINY/$f.yaml" >prog.logos
        same "$f prefill" -p "9 10 11" -n 1
        logos-author --batch 3 decode_batch "$TINY/$f.yaml" >prog.logos
        same "$f decode_batch" -p "1 2" -p 3 -p "4 5 6" -n 4
        { logos-author decode_embed "$TINY/$f.yaml"
          for ((l = 0; l < n; l++)); do logos-author decode_layer $l "$TINY/$f.yaml"; done
          logos-author decode_head "$TINY/$f.yaml"; } >prog.logos
        same "$f cut decode" -p "2 3" -n 5
        { logos-author prefill_embed "$TINY/$f.yaml"
          for ((l = 0; l < n; l++)); do logos-author stacked_layer $l "$TINY/$f.yaml"; done
          logos-author prefill_head "$TINY/$f.yaml"; } >prog.logos
        same "$f cut prefill" -p "3 1 4 1 5" -n 1
        { logos-author decode_batch_embed "$TINY/$f.yaml"
          for ((l = 0; l < n; l++)); do logos-author --batch 4 stacked_layer $l "$TINY/$f.yaml"; done
          logos-author decode_batch_head "$TINY/$f.yaml"; } >prog.logos
        same "$f cut batch" -p 1 -p 2 -p 3 -p 4 -n 3
    done
}

@test "every bad plan is rejected before anything runs, with its exact message" {
    local p n=0 fails=""
    for p in "$BADP"/*.plan; do
        n=$((n + 1))
        run --separate-stderr logos-check "$p"
        [ "$status" -eq 1 ] && [ -z "$output" ] &&
            [ "$stderr" = "$(sed "s|^logos-check: $(basename "$p")|logos-check: $p|" "${p%.plan}.err")" ] ||
            fails="$fails $(basename "$p")"
        run --separate-stderr logos-run -q --synthetic 1 -p 1 -n 1 "$p"
        [ "$status" -eq 1 ] && [ -z "$output" ] || fails="$fails $(basename "$p")(run)"
    done
    [ "$n" -ge 25 ]
    [ -z "$fails" ] || { echo "wrong status or message:$fails"; return 1; }
}

@test "every kernel instantiation the lane can ask for compiles for sm_90, with no spill and no stack frame" {
    local s f n
    cat "$GOLD"/*.plan >all.plans
    for n in precise q8; do
        for s in llama-3.2-1b llama-3-8b mistral-7b qwen2.5-0.5b qwen3-0.6b gemma-2-2b lfm2-1.2b gpt-oss-20b \
                 qwen3-next-80b-a3b \
                 tiny/llama tiny/gemma2 tiny/qwen3 tiny/lfm2 tiny/gptoss tiny/qwen3next \
                 deepseek-v2-lite deepseek-v2 tiny/deepseek2 tiny/deepseek2q; do
            for f in decode_step prefill decode_batch; do
                logos-author "$f" "$EX/$s.yaml" | logos-fuse --numerics "$n" >>all.plans
            done
        done
    done
    # a batch's attention on the tensor cores (f16 caches; heads of 32, 64, 128)
    for s in llama-3.2-1b llama-3-8b qwen3-0.6b tiny/llama; do
        sed 's/^dim: \(.*\)/dim: \1\ncache: f16/; s/head_dim: 16$/head_dim: 32/' "$EX/$s.yaml" >f16.yaml
        for n in precise q8 q8x2; do
            logos-author decode_batch f16.yaml | logos-fuse --numerics "$n" >>all.plans
        done
    done
    # heads of 128 past a wave of 3 blocks a multiprocessor: tiles of 16 keys (TC 2)
    sed 's/^dim: \(.*\)/dim: \1\ncache: f16/; s/head_dim: 16$/head_dim: 128/' "$EX/tiny/llama.yaml" >f16.yaml
    logos-author --batch 4 decode_batch f16.yaml | logos-fuse --sms 2 --numerics q8 >>all.plans
    grep -q '^launch attend .* TC=1 ' all.plans && grep -q '^launch attend .* TC=2 ' all.plans
    grep -q '^launch latent_expand ' all.plans && grep -q '^launch flash NH=16 NKV=16 HD=192 ' all.plans
    # the f16 tiles (sm_90a's wgmma): of 256 and of 128 weight rows, a gated pair's
    grep -q '^launch mmh .* BN=256 ' all.plans && grep -q '^launch mmh .* BN=128 ' all.plans &&
        grep -q '^launch mmh .* GATE=1 ' all.plans
    # x resident (TM 64): K in 1 to 8 splits, a gated pair's
    for s in llama-3.2-1b llama-3-8b qwen3-0.6b gemma-2-2b; do
        for b in 40 64; do
            logos-author decode_batch --batch "$b" "$EX/$s.yaml" | logos-fuse --numerics q8 --xr-rows 33 >>all.plans
        done
    done
    grep -q '^launch mmh .* GATE=1 .* TM=64 ' all.plans && grep -q '^launch mmh .* SK=8 .* TM=64 ' all.plans &&
        grep -q '^launch mmh .* SK=14 .* TM=64 ' all.plans
    # int8 wgmma (mmi): x's rows a wgmma 16, 32 and 64, a gated pair's
    for s in llama-3.2-1b llama-3-8b qwen3-0.6b gemma-2-2b; do
        for b in 16 32 64; do
            logos-author decode_batch --batch "$b" "$EX/$s.yaml" | logos-fuse --numerics q8 --mmi-rows 3 >>all.plans
        done
    done
    grep -q '^launch mmi .* NR=16 ' all.plans && grep -q '^launch mmi .* NR=32 ' all.plans &&
        grep -q '^launch mmi .* NR=64 .* GATE=1 ' all.plans
    # two rows (the default --mmv-rows 2): mmv's one pass
    for s in llama-3.2-1b llama-3-8b gemma-2-2b qwen2.5-0.5b; do
        for n in q8 q8x2; do
            logos-author decode_batch --batch 2 "$EX/$s.yaml" | logos-fuse --numerics "$n" >>all.plans
        done
    done
    grep -q '^launch mmv .* ROWS=2 .* GATE=1 ' all.plans
    # rule preload (--preload-kb, off by default): after an attention, a
    # latent attention, a gated norm, a convolution; rows of 896
    for s in llama-3-8b qwen2.5-0.5b gemma-2-2b gpt-oss-20b deepseek-v2-lite qwen3-next-80b-a3b lfm2-1.2b; do
        for n in precise q8 q8x2; do
            logos-author decode_step "$EX/$s.yaml" | logos-fuse --numerics "$n" --preload-kb 200 >>all.plans
        done
    done
    grep -q '^launch gemv K=896 .* PF=1 ' all.plans && grep -q '^launch gemv K=4096 .* PF=4 ' all.plans
    run --separate-stderr logos-run --compile --arch 90 all.plans
    [ "$status" -eq 0 ] || { echo "$stderr"; return 1; }
    [[ "${lines[-1]}" =~ ^[0-9]+\ kernel\ instantiations\ for\ sm_90,\ none\ with\ local\ memory$ ]] ||
        { grep -v ' 0 bytes stack    0 bytes spilled' <<<"$output" | head; return 1; }
    # every GEMV's grid is what 132 multiprocessors hold at once, as many
    # blocks each as its registers allow (8 a thread at a time, 256 threads
    # a block): no block waits for a second wave (logos-fuse's --sms)
    awk '$1 == "gemv" && $3 == "registers" {
             r = int(($2 + 7) / 8) * 8; b = int(65536 / (r * 256)); g = 0
             for (i = 4; i <= NF; i++) if ($i ~ /^GRID=/) g = substr($i, 6) + 0
             if (g > 132 * b) { print "GRID " g " past " 132 * b " blocks at once: " $0; bad = 1 }
         }
         END { exit bad }' <<<"$output"
    # the second time every one comes from the cache the first wrote
    [ -n "$(ls "$XDG_CACHE_HOME/logos")" ]
}

@test "the default decode batches of 8 to 64 rows compile for sm_90, with local memory in none but those tests/golden/spills.known lists" {
    local s b n
    for s in llama-3.2-1b llama-3-8b qwen3-0.6b qwen2.5-0.5b mistral-7b gemma-2-2b; do
        for b in 8 12 16 24 32 40 48 64; do
            for n in q8 q8x2; do
                logos-author --batch "$b" decode_batch "$EX/$s.yaml" | logos-fuse --numerics "$n" >>all.plans
            done
        done
    done
    run --separate-stderr logos-run --compile --arch 90 all.plans
    [ "$status" -eq 0 ] || { echo "$stderr"; return 1; }
    # each instantiation with local memory by its kernel and constants (the
    # bytes may differ with another NVRTC): none past the list
    grep -v ' 0 bytes stack    0 bytes spilled' <<<"$output" | grep -v ' kernel instantiations for sm_90' |
        sed 's/  */ /g; s/^\([a-z_]*\) .* spilled /\1 /' | LC_ALL=C sort -u >got.txt
    grep -v '^#' "$TOP/tests/golden/spills.known" | sed 's/^\([a-z_]*\) .* spilled /\1 /' | LC_ALL=C sort -u >known.txt
    [[ "${lines[-1]}" =~ ^[0-9]+\ kernel\ instantiations\ for\ sm_90 ]]
    ! LC_ALL=C comm -13 known.txt got.txt | grep . ||
        { echo "local memory in instantiations tests/golden/spills.known does not list (above)"; return 1; }
}

@test "logos-fuse --numerics, --no-fuse-quant, --rows: the plan's header says them" {
    logos-author prefill "$TINY/llama.yaml" >p.logos
    run --separate-stderr logos-fuse p.logos
    [ "${lines[1]}" = "numerics q8x2" ] && [ "${lines[2]}" = "knob fuse_quant 1" ] && [ "${lines[4]}" = "knob rows 64" ]
    run --separate-stderr logos-fuse --numerics precise --rows 8 p.logos
    [ "${lines[1]}" = "numerics precise" ] && [ "${lines[2]}" = "knob fuse_quant 0" ] && [ "${lines[4]}" = "knob rows 8" ]
    run --separate-stderr logos-fuse --numerics q8 --no-fuse-quant p.logos
    [ "${lines[1]}" = "numerics q8" ] && [ "${lines[2]}" = "knob fuse_quant 0" ]
    ! grep -q 'OQ=[12]' <<<"$output"
    run --separate-stderr logos-fuse --numerics q4 p.logos
    [ "$status" -eq 2 ]
    [ "$stderr" = "logos-fuse: --numerics is q8x2, q8 or precise, not 'q4'" ]
}

@test "the Llama-3-8B decode step: five launches a layer (the rope in the attention's), one graph's worth" {
    local launches
    launches=$(grep -c '^launch ' "$GOLD/llama-3-8b.decode_step.plan")
    [ "$launches" -eq $((32 * 5 + 2)) ]
    [ "$(grep -c '^launch rope ' "$GOLD/llama-3-8b.decode_step.plan")" -eq 0 ]
    grep -qx 'rule rope_attend' "$GOLD/llama-3-8b.decode_step.plan"
    # held back with the lane rules: the rope is its own launch again
    logos-author decode_step "$EX/llama-3-8b.yaml" | logos-fuse --no-lane-rules >nolr.plan
    [ "$(grep -c '^launch rope ' nolr.plan)" -eq 32 ]
}

@test "rule preload (--preload-kb): the 8B's o products take 4 groups a block into shared memory (GRID 128), -v says so; off by default and under --no-lane-rules" {
    ! grep -q ' PF=[1-9]' "$GOLD/llama-3-8b.decode_step.plan"
    ! grep -qx 'rule preload' "$GOLD/llama-3-8b.decode_step.plan"
    logos-author decode_step "$EX/llama-3-8b.yaml" >s.logos
    run --separate-stderr logos-fuse -v --preload-kb 200 s.logos
    grep -qx 'rule preload' <<<"$output"
    [ "$(grep -c '^launch gemv K=4096 PARTS=1 N0=4096 .* GRID=128 .* PF=4 grid 128 1 1 ' <<<"$output")" -eq 32 ]
    [ "$(grep -c ' PF=[1-9]' <<<"$output")" -eq 32 ]
    [ "$(grep -c ': rule preload: after attend, 4 groups of 8 rows a block (136 KB) into shared memory' \
        <<<"$stderr")" -eq 32 ]
    run --separate-stderr logos-fuse -v --preload-kb 100 s.logos
    [ "$(grep -c ' PF=[1-9]' <<<"$output")" -eq 0 ] && ! grep -qx 'rule preload' <<<"$output"
    grep -q "s.logos:370: rule preload: not taken: a block's 136 KB of weights pass --preload-kb 100" <<<"$stderr"
    run --separate-stderr logos-fuse --preload-kb 200 --no-lane-rules s.logos
    [ "$(grep -c ' PF=[1-9]' <<<"$output")" -eq 0 ]
    run --separate-stderr logos-fuse --preload-kb 201 s.logos
    [ "$status" -eq 2 ] && [ "$stderr" = "logos-fuse: --preload-kb takes a number of KB from 0 to 200, not '201'" ]
}

@test "rule early_trigger: a dense decode step takes it and -v says so; a mixture's step, a chunk and --no-lane-rules do not" {
    logos-author decode_step "$TINY/llama.yaml" >s.logos
    run --separate-stderr logos-fuse -v s.logos
    grep -qx 'rule early_trigger' <<<"$output"
    grep -qx 'logos-fuse: s.logos:30: rule early_trigger: each of the 12 launches lets the next begin as its blocks start' \
        <<<"$stderr"
    run --separate-stderr logos-fuse --no-lane-rules s.logos
    ! grep -q '^rule early_trigger' <<<"$output"
    logos-author decode_step "$TINY/gptoss.yaml" >m.logos
    run --separate-stderr logos-fuse -v m.logos
    ! grep -q '^rule early_trigger' <<<"$output"
    grep -qx "logos-fuse: m.logos:62: rule early_trigger: not taken: route may read before its wait what a launch before it wrote" \
        <<<"$stderr"
    logos-author prefill "$TINY/llama.yaml" | logos-fuse >p.plan
    ! grep -q '^rule early_trigger' p.plan
}

@test "rope_attend only where a head fits its query heads' slots: heads of 64 over values of 16 keep the rope apart, -v says so" {
    sed 's/head_dim: 16$/head_dim: 64\n      value_dim: 16/' "$TINY/llama.yaml" >w.yaml
    for form in "--batch 2 decode_batch" decode_step; do
        # shellcheck disable=SC2086
        logos-author $form w.yaml >w.logos
        run --separate-stderr logos-fuse -v --numerics q8 w.logos
        [ "$status" -eq 0 ]
        [[ "$stderr" == *"rope apart: a head of 64 values is wider than 2 query heads' slots of 18 (rope_attend turns a head in them)"* ]]
        ! grep -qx 'rule rope_attend' <<<"$output"
        [ "$(grep -c '^launch rope ' <<<"$output")" -ge 2 ]   # a layer's, or each sequence's
        logos-check - <<<"$output"
    done
    plan_is_program w.logos 3   # the decode step's plan on the CPU reference
}

@test "rope_append: a state's append of a value made from the rope's own output stays out of the rope's launch (no cycle)" {
    logos-author stacked_layer 0 "$TINY/llama.yaml" | sed 's/^\(Kc0\[bpos\]\) = rope/\1 = -rope/' >neg.logos
    grep -q '^Kc0\[bpos\] = -rope' neg.logos
    run --separate-stderr logos-fuse -v neg.logos
    [ "$status" -eq 0 ]
    [[ "$stderr" == *"rule rope_append: the append to Vc0 joins the rope's launch"* ]]
    [[ "$stderr" != *"the append to Kc0"* ]]
    # the rope, then the negation, then the copy into Kc0's rows
    [ "$(grep -o '^launch [a-z]*' <<<"$output" | sed -n '/rope/,$p' | head -3 | tr '\n' ' ')" = "launch rope launch elem launch copy " ]
    logos-check - <<<"$output"
}

@test "a batch of decode steps: one attention launch a layer for all its sequences, tables of their caches" {
    local plan="$GOLD/llama-3-8b.decode_batch.plan"
    [ "$(grep -c '^launch attend ' "$plan")" -eq 32 ]
    [ "$(grep -c '^launch attend .* ROWS=4 .* MODE=3 .* ROPE=1 ' "$plan")" -eq 32 ]
    grep -qx 'rule batch_attend' "$plan"
    grep -qx 'buffer Kc0_s0.seqs table f32 8388608 of Kc0_s0 Kc0_s1 Kc0_s2 Kc0_s3' "$plan"
    [ "$(grep -c '^buffer pos_s0.seqs table i32 1 of pos_s0 pos_s1 pos_s2 pos_s3$' "$plan")" -eq 1 ]   # one for every layer
    logos-author --batch 3 decode_batch "$TINY/llama.yaml" >b.logos
    run --separate-stderr logos-fuse -v b.logos
    [ "$status" -eq 0 ]
    [ "$(grep -c '^launch attend .* ROWS=3 .* MODE=3 ' <<<"$output")" -eq 2 ]
    [[ "$stderr" == *"rule batch_attend: the attentions of 3 sequences, o0_s0 to o0_s2, one launch"* ]]
    # each row its own chunks' partial sums and counters
    grep -q '^buffer o0_s0.part scratch f32 864$' <<<"$output"
    grep -q '^buffer o0_s0.count scratch i32 6$' <<<"$output"
    # held back with the lane rules: a launch a sequence
    [ "$(logos-fuse --no-lane-rules b.logos | grep -c '^launch attend .* MODE=0 ')" -eq 6 ]
    # a sequence whose attention differs: a launch each, and -v says why
    sed 's/^\(o0_s1 = attend(.*\)scale=0.25)$/\1scale=0.5)/' b.logos >d.logos
    ! cmp -s b.logos d.logos
    run --separate-stderr logos-fuse -v d.logos
    [ "$(grep -c '^launch attend .* MODE=0 ' <<<"$output")" -eq 3 ]
    [[ "$stderr" == *"d.logos:"*": no batch_attend: the sequences' attentions differ"*": a launch a sequence"* ]]
    logos-check d.logos >/dev/null
}

@test "a batch of 256 decode steps of the 8B shape fuses, checks and reads back (its launches ordered from edge lists, covers from a statement index)" {
    sed 's/^ctx: .*/ctx: 1024/' "$EX/llama-3-8b.yaml" >s.yaml
    logos-author decode_batch --batch 256 s.yaml | logos-fuse --numerics q8 >b.plan
    [ "$(grep -c '^launch attend .* ROWS=256 .* MODE=3 ' b.plan)" -eq 32 ]
    logos-check b.plan >/dev/null
}

@test "--no-lane-rules: products merge in parts only at whole 128-output tiles" {
    logos-author decode_step "$TINY/llama.yaml" >s.logos
    run --separate-stderr logos-fuse -v --no-lane-rules s.logos
    [ "$status" -eq 0 ]
    ! grep -q 'PARTS=3' <<<"$output"
    [[ "$stderr" == *"no part: lane rules held back, and 32 outputs are not whole 128-output tiles"* ]]
    logos-author decode_step "$EX/llama-3-8b.yaml" | logos-fuse --no-lane-rules >big.plan
    grep -q 'PARTS=3' big.plan
}

@test "an f16 cache: the plan stores it in half the bytes, and the reference rounds as the lane stores" {
    sed 's/^ctx: 64$/ctx: 64\ncache: f16/' "$TINY/llama.yaml" >l16.yaml
    logos-author decode_step l16.yaml >s16.logos
    grep -q '^state Kc0 : f16\[64,2,16\]$' s16.logos
    logos-fuse s16.logos >s16.plan
    grep -q '^buffer Kc0 state f16 2048$' s16.plan
    grep -q '^launch attend .* KV=2 .* ROPE=1 ' s16.plan   # the attention turns and appends f16 rows
    logos-fuse --no-lane-rules s16.logos | grep -q 'DST1=2 DST2=2'   # or the rope launch does
    logos-run -q --device cpu --synthetic 2 -p "1 2 3" -n 4 --logits a.f32 s16.logos >/dev/null
    logos-author decode_step "$TINY/llama.yaml" | logos-run -q --device cpu --synthetic 2 -p "1 2 3" -n 4 --logits b.f32 >/dev/null
    ! cmp -s a.f32 b.f32   # the rounding shows
}

@test "logos-run --device cpu runs a plan's program; --device cuda without a GPU exits 3 saying why" {
    logos-author decode_step "$TINY/llama.yaml" | logos-fuse >s.plan
    run --separate-stderr logos-run --device cpu --synthetic 1 -p "1 2 3" -n 2 s.plan
    [ "$status" -eq 0 ]
    [ "${#lines[@]}" -eq 2 ]
    [[ "$stderr" =~ ^logos-run:\ cpu\ reference:\ 2\ tokens\ generated\ in\ [0-9.]+\ s$ ]]
    if logos-run -q --device cuda --synthetic 1 -p 1 -n 1 s.plan >/dev/null 2>&1; then
        skip "a GPU answers here: tests/gpu/run checks the lane"
    fi
    run --separate-stderr logos-run --device cuda --synthetic 1 -p "1 2 3" -n 2 s.plan
    [ "$status" -eq 3 ]
    [ -z "$output" ]
    [[ "$stderr" =~ ^logos-run:\ --device\ cuda:\ no\ CUDA\ (driver|device) ]]
    run --separate-stderr logos-run --device gpu --synthetic 1 -p 1 s.plan
    [ "$status" -eq 2 ]
    [ "$stderr" = "logos-run: --device is auto, cuda or cpu, not 'gpu'" ]
}

@test "logos-run --follow feeds the given tokens after the prompt; each sequence its own" {
    logos-author decode_step "$TINY/llama.yaml" >s.logos
    logos-run -q --device cpu --synthetic 3 -p "1 2" -n 4 --logits a.f32 s.logos >a.tok
    logos-run -q --device cpu --synthetic 3 -p "1 2" -n 4 --follow "$(tr '\n' ' ' <a.tok)" --logits b.f32 s.logos >b.tok
    cmp a.tok b.tok && cmp a.f32 b.f32
    logos-run -q --device cpu --synthetic 3 -p "1 2" -n 4 --follow "7 7 7" --logits c.f32 s.logos >c.tok
    ! cmp -s a.f32 c.f32
    [ "$(head -1 c.tok)" = "$(head -1 a.tok)" ]   # the first comes from the prompt alone
    run --separate-stderr logos-run --device cpu --synthetic 3 -p 1 --follow 1 --follow 2 s.logos
    [ "$status" -eq 2 ]
    [ "$stderr" = "logos-run: give one --follow for each of the 1 prompts, not 2" ]
    run --separate-stderr logos-run --device cpu --synthetic 3 -p 1 -n 3 --follow "1 999" s.logos
    [ "$status" -eq 1 ]
    [ "$stderr" = "logos-run: --follow token 2 is 999: token ids run from 0 to 255" ]
}

@test "logos-run --compile: the plans' kernels into the cache, a line each, no GPU and no weights needed" {
    logos-author decode_step "$TINY/qwen3.yaml" | logos-fuse >s.plan
    run --separate-stderr logos-run --compile s.plan
    [ "$status" -eq 0 ]
    [[ "${lines[0]}" =~ ^(embed|gemv|rope|attend)\ +[0-9]+\ registers\ +0\ bytes\ stack\ +0\ bytes\ spilled\ \ [A-Z] ]]
    [[ "${lines[-1]}" =~ ^[0-9]+\ kernel\ instantiations\ for\ sm_90,\ none\ with\ local\ memory$ ]]
    [ "$(ls "$XDG_CACHE_HOME/logos" | grep -c '\.cubin$')" -eq $((${#lines[@]} - 1)) ]
    run --separate-stderr logos-run --compile --arch 7 s.plan
    [ "$status" -eq 2 ]
    [ "$stderr" = "logos-run: --arch takes a compute capability (90 for sm_90) from 90 to 200, not '7'" ]
}

@test "tests/gpu/run without a GPU: every GPU check says it skipped, and the run passes" {
    if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
        skip "a GPU answers here: tests/gpu/run runs for real"
    fi
    [ -x "$TOP/build/test/gpu_kernels" ] || skip "build/test/gpu_kernels is not built (make all)"
    run env LOGOS_BIN="$TOP/build/bin" sh "$TOP/tests/gpu/run" kernels lane sweep shapes stacked startup errors bench forms tp crossover persist floor xr
    [ "$status" -eq 0 ]
    local summary
    summary=$(sed -n '/^== summary$/,$p' <<<"$output")
    [ "$(grep -c 'skipped' <<<"$summary")" -eq 14 ]
    # stacked runs the lane's comparisons, which need numpy before a GPU
    if "${PYTHON:-python3}" -c 'import numpy' 2>/dev/null; then
        grep -q '^stacked  skipped: logos-run: --device cuda: ' <<<"$summary"
    else
        grep -q "^stacked  skipped: no ${PYTHON:-python3} with numpy$" <<<"$summary"
    fi
    grep -q '^xr       skipped: no GPU$' <<<"$summary"
    grep -q '^floor    skipped: no GPU$' <<<"$summary"
    grep -q '^crossover skipped: no GPU$' <<<"$summary"
    grep -q '^persist  skipped: no GPU$' <<<"$summary"
    grep -q '^sweep    skipped: no GPU$' <<<"$summary"
    grep -q '^forms    0 runs timed: skipped: no GPU$' <<<"$summary"
    grep -q '^tp       skipped: logos-run: --device cuda: ' <<<"$summary"
    grep -q '^kernels  skipped: ' <<<"$summary"
    grep -q '^bench    skipped: no GPU$' <<<"$summary"
    grep -q '^errors   skipped: no GPU$' <<<"$summary"
}

@test "tests/gpu/run's lane holds q8 to the reference that quantizes as the plan does, unless LANE_REF= says f32" {
    need_numpy
    run env LOGOS_BIN="$TOP/build/bin" LANE_DEVICE=cpu LANE_NUMERICS=q8 LANE_STEPS=4 LANE_PROMPT=2 \
        OUT="$BATS_TEST_TMPDIR" sh "$TOP/tests/gpu/run" lane
    [ "$status" -eq 0 ]
    [ "$(grep -c '^llama q8 .*quantization alone .* ok$' "$BATS_TEST_TMPDIR/gpu-logs/lane")" -eq 3 ]
    run env LOGOS_BIN="$TOP/build/bin" LANE_DEVICE=cpu LANE_NUMERICS=q8 LANE_STEPS=4 LANE_PROMPT=2 LANE_REF= \
        OUT="$BATS_TEST_TMPDIR" sh "$TOP/tests/gpu/run" lane
    ! grep -q 'quantization alone' "$BATS_TEST_TMPDIR/gpu-logs/lane"
    grep -q '^llama q8 decode_step x4 ' "$BATS_TEST_TMPDIR/gpu-logs/lane"
}

@test "tests/gpu/run's lane runs the families side by side and prints their lines in the families' order, with one count" {
    need_numpy
    run env LANE_LIST=1 sh "$TOP/tests/gpu/lane"
    [ "$status" -eq 0 ]
    [ "$output" = "llama mistral qwen2 qwen3 gemma2 llama-f16 lfm2 gptoss deepseek2 deepseek2q qwen3next qwen3next-w32" ]
    run env LANE_LIST=1 LANE_SPECS="llama-3-8b x.yaml" sh "$TOP/tests/gpu/lane" qwen3
    [ "$output" = "llama-3-8b x.yaml" ]
    run env LOGOS_BIN="$TOP/build/bin" LANE_DEVICE=cpu LANE_NUMERICS=precise LANE_STEPS=4 LANE_PROMPT=2 LANE_JOBS=3 \
        OUT="$BATS_TEST_TMPDIR" sh "$TOP/tests/gpu/run" lane
    [ "$status" -eq 0 ]
    local log="$BATS_TEST_TMPDIR/gpu-logs/lane"
    [ "$(wc -l <"$log")" -eq 37 ]
    [ "$(tail -1 "$log")" = "lane: 36 passed, 0 failed" ]
    [ "$(head -36 "$log" | awk '{print $1}' | uniq | tr '\n' ' ')" = "llama mistral qwen2 qwen3 gemma2 llama-f16 lfm2 gptoss deepseek2 deepseek2q qwen3next qwen3next-w32 " ]
    grep -q '^lane     36 passed, 0 failed$' <<<"$output"
}

@test "gpu_kernels' KERNELS_SHARD: a K/N that is not 0 <= K < N is a usage error" {
    [ -x "$TOP/build/test/gpu_kernels" ] || skip "build/test/gpu_kernels is not built (make all)"
    for v in 3/3 x 1/0 -1/2 "1/2 " 1/2/3; do
        run env KERNELS_SHARD="$v" "$TOP/build/test/gpu_kernels"
        [ "$status" -eq 2 ]
        [ "$output" = "gpu_kernels: KERNELS_SHARD: '$v' is not K/N with 0 <= K < N" ]
    done
}

@test "tests/gpu/run's kernels: shards side by side give the lines and inputs of one run, in its order, and one count" {
    [ -x "$TOP/build/test/gpu_kernels" ] || skip "build/test/gpu_kernels is not built (make all)"
    local match="gemv q8|rope|route softmax"
    KERNELS_LANE=cpu KERNELS_MATCH="$match" "$TOP/build/test/gpu_kernels" >one.txt
    [ "$(grep -c ' ok ' one.txt)" -ge 12 ]
    run env LOGOS_BIN="$TOP/build/bin" KERNELS_LANE=cpu KERNELS_MATCH="$match" KERNELS_JOBS=3 \
        OUT="$BATS_TEST_TMPDIR" sh "$TOP/tests/gpu/run" kernels
    [ "$status" -eq 0 ]
    diff one.txt "$BATS_TEST_TMPDIR/gpu-logs/kernels"
    grep -q "^kernels  $(grep -c ' ok ' one.txt) passed, 0 failed$" <<<"$output"
    # a case's inputs are its own: alone, it draws what it drew among the others
    KERNELS_LANE=cpu KERNELS_MATCH="route softmax" "$TOP/build/test/gpu_kernels" | grep -v '^gpu_kernels' >alone.txt
    diff alone.txt <(grep '^route softmax' one.txt)
}

@test "tests/gpu/lane's LANE_SPECS takes a spec's path (a real shape cut to fewer layers) as well as a name" {
    need_numpy
    sed 's/^layers: .*/layers: 1/' "$TINY/qwen3.yaml" >one.yaml
    run env LOGOS_BIN="$TOP/build/bin" LANE_DEVICE=cpu LANE_SPECS="$PWD/one.yaml" LANE_NUMERICS=precise \
        LANE_STEPS=4 LANE_PROMPT=3 sh "$TOP/tests/gpu/lane"
    [ "$status" -eq 0 ]
    [[ "${lines[0]}" =~ ^$PWD/one\.yaml\ precise\ decode_step\ x4\ +4\ rows\ .*\ ok$ ]] || { echo "$output"; false; }
    [ "${lines[3]}" = "lane: 3 passed, 0 failed" ]
}

@test "tests/gpu/lane's sweep (LANE_CHUNKS, LANE_BATCHES) checks itself on the CPU: a chunk of T rows, B sequences" {
    need_numpy
    run env LOGOS_BIN="$TOP/build/bin" LANE_DEVICE=cpu LANE_NUMERICS=q8 LANE_STEPS=8 LANE_CHUNKS="1 70" \
        LANE_BATCHES="3" sh "$TOP/tests/gpu/lane" llama
    [ "$status" -eq 0 ]
    [ "${#lines[@]}" -eq 4 ]
    [[ "${lines[0]}" =~ ^llama\ q8\ prefill\ 1\+4\ +4\ rows\ .*\ ok$ ]]
    [[ "${lines[1]}" =~ ^llama\ q8\ prefill\ 70\+4\ +4\ rows\ .*\ ok$ ]]
    [[ "${lines[2]}" =~ ^llama\ q8\ decode_batch\ 3\ x2\ +12\ rows\ .*\ ok$ ]]
    [ "${lines[3]}" = "lane: 3 passed, 0 failed" ]
    # held to the reference that quantizes as the plan does, each line says
    # how far the numerics alone move the logits, and how far the reference
    # moves from itself with what it rounds nudged (LOGOS_REF_NUDGE); on
    # the CPU both sides are that reference, so they agree exactly
    run env LOGOS_BIN="$TOP/build/bin" LANE_DEVICE=cpu LANE_REF=numerics LANE_NUMERICS=q8 LANE_STEPS=8 \
        LANE_BATCHES="3" LANE_NUDGE=1e-6 sh "$TOP/tests/gpu/lane" llama
    [ "$status" -eq 0 ]
    [[ "${lines[0]}" =~ ^llama\ q8\ decode_batch\ 3\ x2\ +quantization\ alone\ [0-9]\.[0-9]{2}e[-+][0-9]{2}\ +rounding\ alone\ [0-9]\.[0-9]{2}e[-+][0-9]{2}\ +12\ rows\ \(11\ compared\)\ +max\ rel\ err\ 0\.00e\+00\ .*\ ok$ ]]
    [[ ! "${lines[0]}" =~ quantization\ alone\ 0\.00e\+00 ]]   # q8 moves them
    [ "${lines[1]}" = "lane: 1 passed, 0 failed" ]
    # LANE_NUDGE_DRAWS: the range of that many draws (seeds)
    run env LOGOS_BIN="$TOP/build/bin" LANE_DEVICE=cpu LANE_REF=numerics LANE_NUMERICS=q8 LANE_STEPS=8 \
        LANE_BATCHES="3" LANE_NUDGE=1e-6 LANE_NUDGE_DRAWS=3 sh "$TOP/tests/gpu/lane" llama
    [ "$status" -eq 0 ]
    [[ "${lines[0]}" =~ \ rounding\ alone\ [0-9]\.[0-9]{2}e[-+][0-9]{2}\.\.[0-9]\.[0-9]{2}e[-+][0-9]{2}\ \(3\)\ +12\ rows ]]
    # LANE_ALONE= (empty): neither rerun
    run env LOGOS_BIN="$TOP/build/bin" LANE_DEVICE=cpu LANE_REF=numerics LANE_NUMERICS=q8 LANE_STEPS=8 \
        LANE_BATCHES="3" LANE_ALONE= sh "$TOP/tests/gpu/lane" llama
    [ "$status" -eq 0 ]
    [[ "${lines[0]}" =~ ^llama\ q8\ decode_batch\ 3\ x2\ +12\ rows\ \(11\ compared\)\ +max\ rel\ err\ 0\.00e\+00\ .*\ ok$ ]]
}

@test "tests/gpu/lane's LANE_FORMS runs the forms it names; a word that is no form is a usage error" {
    need_numpy
    run env LOGOS_BIN="$TOP/build/bin" LANE_DEVICE=cpu LANE_NUMERICS=precise LANE_STEPS=4 LANE_PROMPT=2 \
        LANE_FORMS="decode_batch generate" sh "$TOP/tests/gpu/lane" llama
    [ "$status" -eq 0 ]
    [ "${#lines[@]}" -eq 3 ]
    [[ "${lines[0]}" =~ ^llama\ precise\ generate\ 2\+1\  ]] || { echo "$output"; false; }
    [[ "${lines[1]}" =~ ^llama\ precise\ decode_batch\ 4\ x1\  ]]
    [ "${lines[2]}" = "lane: 2 passed, 0 failed" ]
    run --separate-stderr env LOGOS_BIN="$TOP/build/bin" LANE_DEVICE=cpu LANE_FORMS="generate prefill" \
        sh "$TOP/tests/gpu/lane" llama
    [ "$status" -eq 2 ]
    [ "$output" = "" ]
    [ "$stderr" = "lane: LANE_FORMS: 'prefill' is not decode_step, generate or decode_batch" ]
}

@test "tests/gpu/lane's LANE_TIES counts the reference's near ties in each line (LOGOS_REF_TIES)" {
    need_numpy
    run env LOGOS_BIN="$TOP/build/bin" LANE_DEVICE=cpu LANE_NUMERICS=precise LANE_STEPS=4 LANE_PROMPT=3 \
        LANE_TIES=0.3 sh "$TOP/tests/gpu/lane" deepseek2q llama
    [ "$status" -eq 0 ]
    # the count is the reference's own notices for that run
    "$LOGOS_BIN/logos-author" decode_step "$TINY/deepseek2q.yaml" | "$LOGOS_BIN/logos-fuse" --numerics precise >s.plan
    local n
    n=$(LOGOS_REF_TIES=0.3 "$LOGOS_BIN/logos-run" -q --device cpu --synthetic 7 -p 3 -n 4 s.plan 2>&1 >/dev/null |
        grep -c ': near tie: ')
    [ "$n" -gt 0 ]
    [[ "${lines[0]}" =~ ^deepseek2q\ precise\ decode_step\ x4\ +ties\ $n\ +4\ rows\ .*\ ok$ ]] || { echo "$output"; false; }
    [[ "${lines[3]}" =~ ^llama\ precise\ decode_step\ x4\ +ties\ 0\ +4\ rows\ .*\ ok$ ]]
    [ "${lines[6]}" = "lane: 6 passed, 0 failed" ]
    # without LANE_TIES, no count
    run env LOGOS_BIN="$TOP/build/bin" LANE_DEVICE=cpu LANE_NUMERICS=precise LANE_STEPS=4 LANE_PROMPT=3 \
        sh "$TOP/tests/gpu/lane" deepseek2q
    [[ ! "$output" =~ ties ]]
}

@test "tests/gpu/cmp.py: a batch's rows past a sequence's last fed token are left out (LENS N)" {
    need_numpy
    # two sequences, prompts of 1 and 3 tokens, 2 tokens each: 4 steps of 2
    # rows; the first sequence's last step (row 6) is fed its own token
    "${PYTHON:-python3}" -c '
import numpy as np
rng = np.random.default_rng(1)
ref = rng.standard_normal((8, 16)).astype(np.float32)
got = ref.copy()
got[6] = rng.standard_normal(16)
ref.tofile("ref.f32")
got.tofile("got.f32")'
    run "${PYTHON:-python3}" "$TOP/tests/gpu/cmp.py" 16 got.f32 ref.f32 1e-4
    [ "$status" -eq 1 ]
    [[ "$output" =~ ^8\ rows\ +max\ rel\ err\ .*\ FAIL$ ]]
    run "${PYTHON:-python3}" "$TOP/tests/gpu/cmp.py" 16 got.f32 ref.f32 1e-4 1,3 2
    [ "$status" -eq 0 ]
    [[ "$output" =~ ^8\ rows\ \(7\ compared\)\ +max\ rel\ err\ 0\.00e\+00\ .*\ ok$ ]]
    run "${PYTHON:-python3}" "$TOP/tests/gpu/cmp.py" 16 got.f32 ref.f32 1e-4 1,2,3 2
    [ "$status" -eq 1 ]
    [ "$output" = "8 rows are not whole steps of 3 sequences" ]
}

@test "logos-fuse: mma's K split over clusters (SK) where its tiles fill less than a wave, -v says so; --sms decides" {
    sed 's/^ctx: .*/ctx: 1024/' "$EX/llama-3-8b.yaml" >s.yaml
    logos-author decode_batch --batch 64 s.yaml >b.logos
    run --separate-stderr logos-fuse -v --numerics q8 --mma-rows 64 b.logos
    [ "$status" -eq 0 ]
    [ "$(grep -c '^launch mma .* SK=8 .*grid 1 32 8 ' <<<"$output")" -eq 64 ]    # o and down: 32 tiles
    [ "$(grep -c '^launch mma .* SK=4 .*grid 1 48 4 ' <<<"$output")" -eq 32 ]    # q, k and v: 48
    [ "$(grep -c '^launch mma .* SK=1 .*grid 1 224 1 ' <<<"$output")" -eq 32 ]   # the gated pair: 224
    [[ "$stderr" == *"32 tiles of the product fill 32 of 264 places: K split over clusters of 8 blocks"* ]]
    run --separate-stderr logos-fuse -v --numerics q8 --mma-rows 64 --sms 16 b.logos
    ! grep -q '^launch mma .* SK=[2-8] ' <<<"$output"
    [[ "$stderr" != *"K split"* ]]
    logos-check - <<<"$(logos-fuse --numerics q8 --mma-rows 64 b.logos)"
}

@test "logos-fuse: a batch's attention over f16 caches on the tensor cores (attend TC=1, 2), -v says so; its blocks a multiprocessor" {
    sed 's/^ctx: 64$/ctx: 64\ncache: f16/; s/head_dim: 16$/head_dim: 32/' "$TINY/llama.yaml" >f16.yaml
    logos-author --batch 4 decode_batch f16.yaml >b.logos
    run --separate-stderr logos-fuse -v --numerics precise b.logos
    [ "$status" -eq 0 ]
    [ "$(grep -c '^launch attend .* MODE=3 .* TC=1 grid 2 4 4 block 128 smem 21520 ' <<<"$output")" -eq 2 ]
    [[ "$stderr" == *"a batch's attention on the tensor cores: tiles of 32 keys a warp, f16 caches, q and the weights as two f16 words each"* ]]
    logos-check - <<<"$output"
    # 8 head blocks on 9 multiprocessors: with heads of 128 three chunks each, one wave of the three
    # blocks a multiprocessor their tiles leave room for (heads of 32 and attend's own path: four)
    sed 's/head_dim: 32$/head_dim: 128/' f16.yaml >f16w.yaml
    run --separate-stderr logos-fuse --sms 9 <(logos-author --batch 4 decode_batch f16w.yaml)
    [ "$(grep -c '^launch attend .* BUSY=3 .* TC=1 grid 2 3 4 block 128 smem 73744 ' <<<"$output")" -eq 2 ]
    # the partials a slot for each chunk that can be busy: 4 rows x 2 key
    # heads x 3 x 2 heads x 130
    [ "$(grep -c '^buffer o[0-9]_s0\.part scratch f32 6240$' <<<"$output")" -eq 2 ]
    # past one wave (8 head blocks, 1.33 waves of three on 2) and within
    # one (on 4): a block a row, whole (chunked to fill whole waves, the
    # 8B's 64 rows ran slower: bench/NOTES.md run183); past it, tiles of 16
    # keys a warp (TC 2), whose shared memory leaves room for four blocks a
    # multiprocessor: one wave of 8
    run --separate-stderr logos-fuse -v --sms 2 <(logos-author --batch 4 decode_batch f16w.yaml)
    [ "$(grep -c '^launch attend .* SPLIT=1 CHUNK=64 BUSY=0 .* TC=2 grid 2 1 4 block 128 smem 38928 ' <<<"$output")" -eq 2 ]
    [[ "$stderr" == *"a batch's attention on the tensor cores: tiles of 16 keys a warp"* ]]
    [[ "$stderr" != *"chunks_apart"* ]]
    logos-check - <<<"$output"
    # under precise numerics too
    run --separate-stderr logos-fuse --numerics precise --sms 2 <(logos-author --batch 4 decode_batch f16w.yaml)
    [ "$(grep -c '^launch attend .* TC=2 grid 2 1 4 block 128 smem 38928 ' <<<"$output")" -eq 2 ]
    run --separate-stderr logos-fuse -v --sms 4 <(logos-author --batch 4 decode_batch f16w.yaml)
    [ "$(grep -c '^launch attend .* SPLIT=1 CHUNK=64 BUSY=0 .* TC=1 grid 2 1 4 block 128 smem 73744 ' <<<"$output")" -eq 2 ]
    [[ "$stderr" != *"chunks_apart"* ]]
    run --separate-stderr logos-fuse --sms 9 b.logos
    [ "$(grep -c '^launch attend .* BUSY=4 .* TC=1 grid 2 4 4 ' <<<"$output")" -eq 2 ]
    run --separate-stderr logos-fuse --sms 9 <(logos-author --batch 4 decode_batch "$TINY/llama.yaml")
    [ "$(grep -c '^launch attend .* BUSY=4 .* TC=0 grid 2 4 4 ' <<<"$output")" -eq 2 ]
    # f32 caches, heads of 16, a decode step: attend's own path (TC=0)
    for spec in "$TINY/llama.yaml" <(sed 's/^ctx: 64$/ctx: 64\ncache: f16/' "$TINY/llama.yaml"); do
        run --separate-stderr logos-fuse -v <(logos-author --batch 4 decode_batch "$spec")
        [ "$(grep -c '^launch attend .* MODE=3 .* TC=0 ' <<<"$output")" -eq 2 ]
        [[ "$stderr" != *"attention on the tensor cores"* ]]
    done
    run --separate-stderr logos-fuse <(logos-author decode_step f16.yaml)
    ! grep -q '^launch attend .* TC=1 ' <<<"$output"
}

@test "logos-fuse --mma-rows: stacked products from that many rows on the tensor cores, -v says so; a decode step never" {
    logos-author prefill "$TINY/llama.yaml" >p.logos
    run --separate-stderr logos-fuse -v p.logos
    [ "$status" -eq 0 ]
    ! grep -q '^launch mma ' <<<"$output"
    [[ "$stderr" == *"products of 64 stacked rows on the tensor cores in 4 passes of up to 16: at least --mmv-rows 2, fewer than --mma-rows 128"* ]]
    run --separate-stderr logos-fuse -v --mma-rows 64 p.logos
    [ "$(grep -c "^launch mma " <<<"$output")" -eq 8 ]
    ! grep -q '^launch mmv ' <<<"$output"
    [[ "$stderr" == *"products of 64 stacked rows on the tensor cores in int8 tiles (mma): at least --mma-rows 64; not f16 tiles: fewer rows than --mmh-rows"* ]]
    run --separate-stderr logos-fuse -v --mma-rows 64 --numerics precise p.logos
    ! grep -q '^launch mm[av] ' <<<"$output"
    [[ "$stderr" == *"products of 64 stacked rows as GEMVs: f32 activations (2, 64)"* ]]
    run --separate-stderr logos-fuse -v --mmv-rows 65536 --mma-rows 65536 p.logos
    ! grep -q '^launch mm[av] ' <<<"$output"
    [[ "$stderr" == *"products of 64 stacked rows as GEMVs: fewer rows than --mmv-rows and --mma-rows (65536, 65536)"* ]]
    run --separate-stderr logos-fuse --mmv-rows 1 p.logos
    [ "$status" -eq 2 ]
    logos-author decode_step "$TINY/llama.yaml" | logos-fuse --mma-rows 2 >s.plan
    ! grep -q '^launch mma ' s.plan
    run --separate-stderr logos-fuse --mma-rows 1 p.logos
    [ "$status" -eq 2 ]
}

@test "logos-fuse --mmh-rows: products in f16 tiles (mmh) under q8 from that many rows, -v says which and why; the CPU reference models them" {
    logos-author prefill "$EX/llama-3-8b.yaml" >p.logos
    run --separate-stderr logos-fuse -v --numerics q8 p.logos
    [ "$status" -eq 0 ]
    # q/k/v and the gated pair with the weights in registers (TM 256: tiles of 256 rows of x, their 96 and 448
    # fill the chip), o and down as before (64 such tiles: half the chip)
    [ "$(grep -c '^launch mmh K=4096 PARTS=3 N0=4096 N1=1024 N2=1024 N3=0 XIN=3 ROWS=512 BN=128 .* TM=256 CY=0 grid 2 48 1 block 256 smem 216104 ' <<<"$output")" -eq 32 ]
    [ "$(grep -c '^launch mmh K=4096 PARTS=2 N0=14336 N1=14336 .* BN=128 .* GATE=1 CAP=0 OQ=3 .* TAIL=52 TM=256 CY=0 grid 2 250 1 ' <<<"$output")" -eq 32 ]
    [[ "$stderr" == *"448 tiles of 256 rows of x by 128 weight rows, the weights dequantized in registers (TM)"* ]]
    # its 448 tiles on 132 multiprocessors: the last 52 as two blocks of half K each, one scratch for all 32
    [[ "$stderr" == *"448 tiles of the product on 132 multiprocessors: the last 52, a round of their own, each as two blocks of half K"* ]]
    grep -q '^buffer mmh.tail.part scratch f32 3407872$' <<<"$output" && grep -q '^buffer mmh.tail.count scratch i32 52$' <<<"$output"
    [ "$(grep -c ' part=mmh.tail.part cnt=mmh.tail.count ' <<<"$output")" -eq 32 ]
    [ "$(grep -c '^launch mmh .* TAIL=0 ' <<<"$output")" -eq 96 ]
    [ "$(grep -c '^launch mmh K=4096 PARTS=1 N0=4096 .* BN=128 .* RES=1 .* TM=0 CY=0 grid 4 32 1 block 256 smem 193584 ' <<<"$output")" -eq 32 ]
    [ "$(grep -c '^launch mmh K=14336 .* TM=0 CY=0 grid 4 32 1 ' <<<"$output")" -eq 32 ]
    [ "$(grep -c '^launch mmh K=14336 PARTS=1 ' <<<"$output")" -eq 32 ]
    ! grep -q '^launch mma ' <<<"$output"
    [[ "$stderr" == *"products of 512 stacked rows on the tensor cores in f16 tiles (mmh): at least --mma-rows 128 and --mmh-rows 128"* ]]
    logos-check - <<<"$output"
    # a8h: the norms', flash's and the gated pair's outputs, read by mmh launches alone, written as f16
    [ "$(grep -c '^buffer b[a-z]*[0-9]* temp a8h ' <<<"$output")" -eq 128 ]
    [ "$(grep -c '^launch rownorm .* OQ=3 ' <<<"$output")" -eq 64 ] && [ "$(grep -c '^launch flash .* OQ=3 ' <<<"$output")" -eq 32 ]
    [[ "$stderr" == *"a8h: bfn0 written as f16 (each a8 value f16(q f16(d))): its every reader an mmh launch, which takes it by TMA as it is"* ]]
    # 2048 rows: every product's tiles of 256 rows fill the chip; a chunk of 300 rows is not whole tiles of 256
    run --separate-stderr logos-fuse --numerics q8 --rows 2048 p.logos
    [ "$(grep -c '^launch mmh .* TM=256 CY=0 grid 8 ' <<<"$output")" -eq 128 ]
    run --separate-stderr logos-fuse --numerics q8 --rows 300 p.logos
    [ "$(grep -c '^launch mmh ' <<<"$output")" -eq 128 ] && ! grep -q '^launch mmh .* TM=256 ' <<<"$output"
    # a norm's output that an mma launch reads too stays a8 (and mmh reads it so, XIN 1)
    { echo 'logos 1 kernel_test case'; echo 'in x : f32[200,512]'; echo 'weight nw : f32[512]'
      for i in 0 1 2 3; do echo "weight w$i : q8[512,512]"; echo "out y$i : f32[200,512]"; done
      echo 'weight w4 : q8[64,512]'; echo 'out y4 : f32[200,64]'; echo 'a = rmsnorm(x, nw, eps=1e-05)'
      for i in 0 1 2 3 4; do echo "y$i = w$i @ a"; done; echo end; } >m.logos
    run --separate-stderr logos-fuse -v --numerics q8 --sms 8 m.logos
    [ "$status" -eq 0 ] && grep -q '^buffer a temp a8 ' <<<"$output"
    grep -q '^launch mmh .* XIN=1 ' <<<"$output" && grep -q '^launch mma .* XIN=1 ' <<<"$output"
    [[ "$stderr" != *"a8h:"* ]]
    # q8x2 (a8x2), or fewer rows than --mmh-rows: int8 tiles
    run --separate-stderr logos-fuse -v p.logos
    ! grep -q '^launch mmh ' <<<"$output"
    [[ "$stderr" == *"in int8 tiles (mma): at least --mma-rows 128; not f16 tiles: activations not a8 (q8 numerics, quantized before it)"* ]]
    run --separate-stderr logos-fuse -v --numerics q8 --mmh-rows 1024 p.logos
    ! grep -q '^launch mmh ' <<<"$output"
    [[ "$stderr" == *"not f16 tiles: fewer rows than --mmh-rows"* ]]
    # the 1B's down (64 tiles on 132 multiprocessors, K of 8192) split over clusters of 2; its o (K of 2048: splits
    # of 32 stages of K at least) stays int8, where mma splits K; q/k/v and the gated pair whole
    run --separate-stderr logos-fuse -v --numerics q8 <(logos-author prefill "$EX/llama-3.2-1b.yaml")
    [ "$(grep -c '^launch mma .* N0=2048 .* RES=1 ' <<<"$output")" -eq 16 ]
    [ "$(grep -c '^launch mmh K=8192 .* BN=128 .* RES=1 .* SK=2 TAIL=0 TM=0 CY=0 grid 4 16 2 ' <<<"$output")" -eq 16 ]
    [ "$(grep -c '^launch mmh .* SK=1 TAIL=0 TM=0 CY=0 grid 4 24 1 ' <<<"$output")" -eq 16 ]
    [ "$(grep -c '^launch mmh .* GATE=1 .* SK=1 TAIL=0 TM=256 CY=0 grid 2 128 1 ' <<<"$output")" -eq 16 ]
    [[ "$stderr" == *"64 tiles of the product fill 64 of 132 multiprocessors: K split over clusters of 2 blocks"* ]]
    [[ "$stderr" == *"not f16 tiles: its tiles, K split, fill less than half the chip (mma splits K further)"* ]]
    # on a chip of 1000 none fills half of it, K split or whole: all int8 tiles
    run --separate-stderr logos-fuse -v --numerics q8 --sms 1000 <(logos-author prefill "$EX/llama-3.2-1b.yaml")
    [ "$(grep -c '^launch mma ' <<<"$output")" -eq 64 ] && ! grep -q '^launch mmh ' <<<"$output"
    # Qwen2.5's 896 values are not whole 256-value blocks
    run --separate-stderr logos-fuse -v --numerics q8 <(logos-author prefill "$EX/qwen2.5-0.5b.yaml")
    ! grep -q '^launch mmh ' <<<"$output"
    [[ "$stderr" == *"not f16 tiles: K not whole 256-value blocks"* ]]
    # a tiny Llama of width 256: the CPU reference runs the mmh plan to its program's tokens, and as mmh
    # computes (its operands in f16) under LOGOS_REF_NUMERICS, where the int8 plan's logits differ
    sed 's/^dim: 64/dim: 256/; s/head_dim: 16/head_dim: 64/; s/hidden: 128/hidden: 512/' "$TINY/llama.yaml" >w.yaml
    logos-author generate w.yaml >g.logos
    logos-fuse --numerics q8 --mma-rows 2 --mmh-rows 2 --sms 2 g.logos >h.plan
    [ "$(grep -c '^launch mmh ' h.plan)" -eq 8 ]
    logos-fuse --numerics q8 --mma-rows 2 --mmh-rows 65536 --sms 2 g.logos >m.plan
    ! grep -q '^launch mmh ' m.plan
    logos-run --device cpu -q --synthetic 3 -p "1 2 3 4 5 6 7" -n 4 g.logos >a.tok
    logos-run --device cpu -q --synthetic 3 -p "1 2 3 4 5 6 7" -n 4 h.plan >b.tok
    cmp a.tok b.tok
    LOGOS_REF_NUMERICS=1 logos-run --device cpu -q --synthetic 3 -p "1 2 3 4 5 6 7" -n 4 --logits h.f32 h.plan >c.tok
    LOGOS_REF_NUMERICS=1 logos-run --device cpu -q --synthetic 3 -p "1 2 3 4 5 6 7" -n 4 --logits m.f32 m.plan >d.tok
    [ "$(wc -l <c.tok)" -eq 4 ] && ! cmp -s h.f32 m.f32
    run --separate-stderr logos-fuse --mmh-rows 0 p.logos
    [ "$status" -eq 2 ]
}

@test "logos-fuse --mmi-rows: up to 64 stacked rows of an a8 activation in int8 wgmma (mmi), -v says so; the CPU reference runs them" {
    logos-author decode_batch --batch 64 "$EX/llama-3-8b.yaml" >b.logos
    # by default from 32 rows (MMI_ROWS), the products with 4 stages a multiprocessor (and at 32 rows a
    # tile a multiprocessor): at 64 rows all but o, at 32 the gated pair and the LM head; -v says why not
    run --separate-stderr logos-fuse --numerics q8 b.logos
    [ "$status" -eq 0 ] && [ "$(grep -c '^launch mmi ' <<<"$output")" -eq 97 ] &&
        [ "$(grep -c '^launch mmv K=4096 PARTS=1 N0=4096 ' <<<"$output")" -eq 32 ]
    run --separate-stderr logos-fuse -v --numerics q8 <(logos-author decode_batch --batch 32 "$EX/llama-3-8b.yaml")
    [ "$status" -eq 0 ] && [ "$(grep -c '^launch mmi .* ROWS=32 NR=32 ' <<<"$output")" -eq 33 ] &&
        [ "$(grep -c '^launch mmi K=4096 PARTS=2 N0=14336 N1=14336 ' <<<"$output")" -eq 32 ]
    [[ "$stderr" == *"products of 32 stacked rows not in int8 wgmma (mmi): 512 stages of 256 values, fewer than 4 a multiprocessor (528) (a given --mmi-rows takes them)"* ]]
    [[ "$stderr" == *"products of 32 stacked rows not in int8 wgmma (mmi): 32 tiles of 128 weight rows for 32 rows, fewer than a multiprocessor's (132) (a given --mmi-rows takes them)"* ]]
    run --separate-stderr logos-fuse --numerics q8 --mmi-rows 32 <(logos-author decode_batch --batch 32 "$EX/llama-3-8b.yaml")
    [ "$status" -eq 0 ] && [ "$(grep -c '^launch mmi .* ROWS=32 NR=32 ' <<<"$output")" -eq 129 ]
    # Gemma-2-2B's q/k/v at K 2304 (18 steps of 128 on mmv's 8 warps: 3 against 2.25) go to mmi from 33
    # rows whatever their stages; its o (K 2048, 16 steps, even) stays on mmv; at 32 rows their 32 tiles
    # keep them on mmv
    run --separate-stderr logos-fuse -v --numerics q8 <(logos-author decode_batch --batch 48 "$EX/gemma-2-2b.yaml")
    [ "$status" -eq 0 ] && [ "$(grep -c '^launch mmi K=2304 PARTS=3 ' <<<"$output")" -eq 26 ] &&
        [ "$(grep -c '^launch mmv K=2048 PARTS=1 ' <<<"$output")" -eq 26 ]
    [[ "$stderr" == *"products of 48 stacked rows on the tensor cores in int8 wgmma (mmi): at least --mmi-rows 32, at most 64; mmv would split its K unevenly between its warps"* ]]
    # said of the 26 q/k/v only, not of the LM head (K 2304 too, but on mmi for its stages)
    [ "$(grep -c 'mmv would split its K unevenly' <<<"$stderr")" -eq 26 ]
    run --separate-stderr logos-fuse --numerics q8 <(logos-author decode_batch --batch 32 "$EX/gemma-2-2b.yaml")
    [ "$status" -eq 0 ] && ! grep -q '^launch mmi K=2304 PARTS=3 ' <<<"$output" &&
        [ "$(grep -c '^launch mmv K=2304 PARTS=3 ' <<<"$output")" -eq 26 ]
    run --separate-stderr logos-fuse --numerics q8 <(logos-author decode_batch --batch 31 "$EX/llama-3-8b.yaml")
    [ "$status" -eq 0 ] && ! grep -q '^launch mmi ' <<<"$output" && grep -q '^launch mmv ' <<<"$output"
    run --separate-stderr logos-fuse --numerics q8 --mmi-rows 65 b.logos
    [ "$status" -eq 0 ] && ! grep -q '^launch mmi ' <<<"$output" && grep -q '^launch mmv ' <<<"$output"
    run --separate-stderr logos-fuse -v --numerics q8 --mmi-rows 33 b.logos
    [ "$status" -eq 0 ]
    # every product: q/k/v, o, the gated pair, down, the LM head; 132 blocks sharing each one's stages
    [ "$(grep -c '^launch mmi K=4096 PARTS=3 N0=4096 N1=1024 N2=1024 N3=0 XQ=1 ROWS=64 NR=64 .* GRID=132 STAGES=3 grid 132 1 1 block 512 smem 193816 ' <<<"$output")" -eq 32 ]
    [ "$(grep -c '^launch mmi K=4096 PARTS=2 N0=14336 N1=14336 .* GATE=1 CAP=0 OQ=1 ' <<<"$output")" -eq 32 ]
    [ "$(grep -c '^launch mmi K=14336 PARTS=1 N0=4096 .* RES=1 ' <<<"$output")" -eq 32 ]
    [ "$(grep -c '^launch mmi ' <<<"$output")" -eq 129 ] && ! grep -q '^launch mmv ' <<<"$output"
    grep -q '^buffer mmi.part scratch f32 1081344$' <<<"$output" && grep -q '^buffer mmi.count scratch i32 1002$' <<<"$output"
    [[ "$stderr" == *"products of 64 stacked rows on the tensor cores in int8 wgmma (mmi): at least --mmi-rows 33, at most 64"* ]]
    [[ "$stderr" == *"int8 wgmma: 224 tiles of 128 weight rows by 64 rows of x, 3584 stages of 256 values on 132 blocks"* ]]
    logos-check - <<<"$output"
    # 16 rows stay on mmv at --mmi-rows 33; at --mmi-rows 16 x's rows a wgmma are 16, the ring 5 stages deep
    run --separate-stderr logos-fuse --numerics q8 --mmi-rows 33 <(logos-author decode_batch --batch 16 "$EX/llama-3-8b.yaml")
    ! grep -q '^launch mmi ' <<<"$output"
    run --separate-stderr logos-fuse --numerics q8 --mmi-rows 16 <(logos-author decode_batch --batch 16 "$EX/llama-3-8b.yaml")
    [ "$(grep -c '^launch mmi .* ROWS=16 NR=16 .* STAGES=5 ' <<<"$output")" -eq 129 ]
    # q8x2 and precise: mmv and GEMVs; past 64 rows the option's range
    run --separate-stderr logos-fuse --mmi-rows 33 b.logos
    ! grep -q '^launch mmi ' <<<"$output"
    run --separate-stderr logos-fuse --mmi-rows 66 b.logos
    [ "$status" -eq 2 ]
    # a tiny Llama of width 256, a batch of 40: the CPU reference runs the mmi plan to its program's tokens
    sed 's/^dim: 64/dim: 256/; s/head_dim: 16/head_dim: 64/; s/hidden: 128/hidden: 512/' "$TINY/llama.yaml" >w.yaml
    logos-author decode_batch --batch 40 w.yaml >t.logos
    logos-fuse --numerics q8 --mmi-rows 33 t.logos >i.plan
    [ "$(grep -c '^launch mmi ' i.plan)" -eq 9 ]
    for i in $(seq 40); do echo "$i $((i + 7)) 3"; done >prompts
    logos-run --device cpu -q --synthetic 3 -P prompts -n 3 t.logos >a.tok
    logos-run --device cpu -q --synthetic 3 -P prompts -n 3 i.plan >b.tok
    cmp a.tok b.tok
    # by default only what pays goes to mmi: of the same with a vocabulary of 67584, the LM head alone (528
    # stages on 132 multiprocessors), beside mmv's products; the CPU reference runs that plan to the same tokens
    sed 's/^vocab: .*/vocab: 67584/' w.yaml >v.yaml
    logos-author decode_batch --batch 40 v.yaml >v.logos
    logos-fuse --numerics q8 v.logos >v.plan
    [ "$(grep -c '^launch mmi K=256 PARTS=1 N0=67584 ' v.plan)" -eq 1 ] && [ "$(grep -c '^launch mmi ' v.plan)" -eq 1 ] &&
        [ "$(grep -c '^launch mmv ' v.plan)" -eq 8 ]
    logos-run --device cpu -q --synthetic 3 -P prompts -n 3 v.logos >a.tok
    logos-run --device cpu -q --synthetic 3 -P prompts -n 3 v.plan >b.tok
    cmp a.tok b.tok
}

@test "logos-fuse --xr-rows: 33 to 64 stacked rows of an a8h activation on mmh with x resident (TM 64), -v says so; the CPU reference models them" {
    logos-author decode_batch --batch 64 "$EX/llama-3-8b.yaml" >b.logos
    # by default none (the kernel waits for its first GPU run): mmv
    run --separate-stderr logos-fuse --numerics q8 b.logos
    [ "$status" -eq 0 ] && ! grep -q '^launch mmh ' <<<"$output"
    run --separate-stderr logos-fuse -v --numerics q8 --xr-rows 33 b.logos
    [ "$status" -eq 0 ]
    # q/k/v in 8 splits of 512 (48 tiles on 16 clusters), the gated pair in 4 of 1024 (224 tiles on 32)
    [ "$(grep -c '^launch mmh K=4096 PARTS=3 N0=4096 N1=1024 N2=1024 N3=0 XIN=3 ROWS=64 BN=128 .* SK=8 TAIL=0 TM=64 CY=16 grid 1 16 8 block 256 smem 150896 ' <<<"$output")" -eq 32 ]
    [ "$(grep -c '^launch mmh K=4096 PARTS=2 N0=14336 N1=14336 .* GATE=1 CAP=0 OQ=3 .* SK=4 TAIL=0 TM=64 CY=32 grid 1 32 4 block 256 smem 216496 ' <<<"$output")" -eq 32 ]
    [[ "$stderr" == *"products of 64 stacked rows on the tensor cores in f16 with x resident (mmh TM 64): at least --xr-rows 33, at most 64"* ]]
    [[ "$stderr" == *"x resident: 224 tiles of 128 weight rows by 32 clusters of 4 blocks, each block 1024 values of K of the 64 rows of x held in shared memory (TM 64)"* ]]
    # o, its activation written a8h by the batch's attention, in 4 splits; down (K 14336) in 14 of 1024, 8
    # clusters of 14 (past the portable 8: one a GPC); nothing on mmv
    [ "$(grep -c '^launch mmh K=4096 PARTS=1 N0=4096 .* RES=1 .* SK=4 TAIL=0 TM=64 CY=32 grid 1 32 4 ' <<<"$output")" -eq 32 ]
    [ "$(grep -c '^launch mmh K=14336 PARTS=1 N0=4096 .* RES=1 .* SK=14 TAIL=0 TM=64 CY=8 grid 1 8 14 ' <<<"$output")" -eq 32 ]
    ! grep -q '^launch mmv ' <<<"$output"
    [ "$(grep -c '^launch rownorm .* OQ=3 ' <<<"$output")" -eq 65 ] && [ "$(grep -c '^launch attend .* OQ=3 ' <<<"$output")" -eq 32 ]
    [[ "$stderr" == *"a8h: bo0 written as f16 (each a8 value f16(q f16(d))): its every reader an mmh launch, which takes it by TMA as it is"* ]]
    grep -q '^buffer bo0 temp a8h ' <<<"$output"
    logos-check - <<<"$output"
    # 16 rows stay on mmv at --xr-rows 33, not at --xr-rows 16
    run --separate-stderr logos-fuse --numerics q8 --xr-rows 33 <(logos-author decode_batch --batch 16 "$EX/llama-3-8b.yaml")
    ! grep -q '^launch mmh ' <<<"$output"
    run --separate-stderr logos-fuse --numerics q8 --xr-rows 16 <(logos-author decode_batch --batch 16 "$EX/llama-3-8b.yaml")
    [ "$(grep -c '^launch mmh .* ROWS=16 .* TM=64 ' <<<"$output")" -eq 129 ]
    # q8x2 and precise: mmv and GEMVs
    run --separate-stderr logos-fuse --xr-rows 33 b.logos
    ! grep -q '^launch mmh ' <<<"$output"
    run --separate-stderr logos-fuse --xr-rows 66 b.logos
    [ "$status" -eq 2 ]
    # a tiny Llama of width 256, a batch of 40: the CPU reference runs the x resident plan to its program's
    # tokens, and as mmh computes (its operands in f16) under LOGOS_REF_NUMERICS, where mmv's logits differ
    sed 's/^dim: 64/dim: 256/; s/head_dim: 16/head_dim: 64/; s/hidden: 128/hidden: 512/' "$TINY/llama.yaml" >w.yaml
    logos-author decode_batch --batch 40 w.yaml >t.logos
    logos-fuse --numerics q8 --xr-rows 33 t.logos >x.plan
    [ "$(grep -c '^launch mmh .* TM=64 ' x.plan)" -eq 9 ]
    logos-fuse --numerics q8 t.logos >v.plan
    ! grep -q '^launch mmh ' v.plan
    for i in $(seq 40); do echo "$i $((i + 7)) 3"; done >prompts
    logos-run --device cpu -q --synthetic 3 -P prompts -n 3 t.logos >a.tok
    logos-run --device cpu -q --synthetic 3 -P prompts -n 3 x.plan >b.tok
    cmp a.tok b.tok
    LOGOS_REF_NUMERICS=1 logos-run --device cpu -q --synthetic 3 -P prompts -n 3 --logits x.f32 x.plan >c.tok
    LOGOS_REF_NUMERICS=1 logos-run --device cpu -q --synthetic 3 -P prompts -n 3 --logits v.f32 v.plan >d.tok
    [ "$(wc -l <c.tok)" -eq 120 ] && ! cmp -s x.f32 v.f32
}

@test "logos-fuse --crossover: both crossovers from tests/gpu/crossover's table, -v says the times that decided them; the flags override it; a bad table located, nothing written" {
    logos-author decode_batch --batch 4 "$TINY/llama.yaml" >b.logos
    cat >t.txt <<'END'
shape          num    rows    gemv_ms     mmv_ms     mma_ms  fastest
# the 8B's batch step, q8
llama-3-8b     q8        2      3.280      4.650          -  gemv
llama-3-8b     q8        4      5.770      5.020          -  mmv

llama-3-8b     q8       64     99.600      9.317      9.634  mmv
llama-3-8b     q8      128    197.800     17.733     16.202  mma
llama-3-8b     q8x2      4      5.000      6.000          -  gemv
END
    run --separate-stderr logos-fuse -v --numerics q8 --crossover t.txt b.logos
    [ "$status" -eq 0 ]
    [ "${stderr_lines[0]}" = "logos-fuse: t.txt: from the bench's times: --mmv-rows 4 (4 rows: mmv 5.020 ms, the GEMV 5.770), --mma-rows 128 (128 rows: mma 16.202 ms, mmv 17.733), --mmi-rows 32 (the default: no row count timed mmi)" ]
    [[ "$stderr" == *"products of 4 stacked rows on the tensor cores in 1 pass of up to 8: at least --mmv-rows 4, fewer than --mma-rows 128"* ]]
    diff <(logos-fuse --numerics q8 --crossover t.txt b.logos) <(logos-fuse --numerics q8 --mmv-rows 4 --mma-rows 128 b.logos)
    # q8x2's one row count has the GEMV ahead: neither kernel is taken
    run --separate-stderr logos-fuse -v --crossover t.txt b.logos
    [ "$status" -eq 0 ]
    [ "${stderr_lines[0]}" = "logos-fuse: t.txt: from the bench's times: --mmv-rows 65536 (mmv never measured faster than the GEMV to the last row count), --mma-rows 65536 (mma never measured faster than mmv to the last row count), --mmi-rows 32 (the default: no row count timed mmi)" ]
    ! grep -q '^launch mm[av] ' <<<"$output"
    # in any order; a kernel ahead at few rows but behind at more is taken only from where it stays ahead
    printf 'x q8 128 50 20 30\nx q8 16 9 5 4\nx q8 64 30 - -\nx q8 256 90 40 35\nx q8 32 12 6 -\n' >u.txt
    run --separate-stderr logos-fuse -v --numerics q8 --crossover u.txt b.logos
    [ "${stderr_lines[0]}" = "logos-fuse: u.txt: from the bench's times: --mmv-rows 16 (16 rows: mmv 5.000 ms, the GEMV 9.000), --mma-rows 256 (256 rows: mma 35.000 ms, mmv 40.000), --mmi-rows 32 (the default: no row count timed mmi)" ]
    # a flag overrides the table; precise reads no times
    run --separate-stderr logos-fuse -v --numerics q8 --crossover t.txt --mmv-rows 8 b.logos
    [[ "$stderr" == *"products of 4 stacked rows as GEMVs: fewer rows than --mmv-rows and --mma-rows (8, 128)"* ]]
    grep -v q8 t.txt >none.txt
    logos-fuse --numerics precise --crossover none.txt b.logos | logos-check - >/dev/null
    # bad tables: located, exit 1, nothing written
    bad() {
        printf '%s' "$1" >bad.txt
        run --separate-stderr logos-fuse --numerics q8 --crossover bad.txt -o out.plan b.logos
        [ "$status" -eq 1 ]
        [ "$stderr" = "$2" ]
        [ -z "$output" ]
        [ ! -e out.plan ]
    }
    bad $'llama q8 4 1 abc -\n' "logos-fuse: bad.txt:1:14: 'abc' is neither a time in ms nor '-'
  llama q8 4 1 abc -
               ^"
    bad $'llama q8 x 1 2 -\n' "logos-fuse: bad.txt:1:10: rows 'x' is not a whole number from 1 to 65536
  llama q8 x 1 2 -
           ^"
    bad $'llama q4 4 1 2 -\n' "logos-fuse: bad.txt:1:7: numerics 'q4' is none of q8x2, q8 and precise
  llama q4 4 1 2 -
        ^"
    bad $'llama q8 4 1 2\n' "logos-fuse: bad.txt:1:15: expected 'shape numerics rows gemv_ms mmv_ms mma_ms [mmi_ms] [fastest]' (tests/gpu/crossover's lines)
  llama q8 4 1 2
                ^"
    bad $'llama q8 4 1 2 - mmv extra\n' "logos-fuse: bad.txt:1:22: expected 'shape numerics rows gemv_ms mmv_ms mma_ms [mmi_ms] [fastest]' (tests/gpu/crossover's lines)
  llama q8 4 1 2 - mmv extra
                       ^"
    bad $'llama q8 4 1 2 -\nllama q8 4 1 3 -\n' "logos-fuse: bad.txt:2:10: 4 rows under q8 timed again (line 1)
  llama q8 4 1 3 -
           ^"
    bad $'llama q8x2 4 1 2 -\n' "logos-fuse: bad.txt: no times under q8 (products of stacked rows read q8 activations)"
    bad '' "logos-fuse: bad.txt: no times under q8 (products of stacked rows read q8 activations)"
    run --separate-stderr logos-fuse --crossover nothere.txt b.logos
    [ "$status" -eq 1 ]
    [ "$stderr" = "logos-fuse: nothere.txt: No such file or directory" ]
}

@test "logos-fuse --crossover: mmi's crossover from the table's mmi_ms column (mmi_small still keeps the small products on mmv); none timed: the default; --mmi-rows overrides it; mmi past 64 rows located" {
    logos-author decode_batch --batch 40 "$EX/llama-3.2-1b.yaml" >b.logos
    cat >t.txt <<'END'
shape          num    rows    gemv_ms     mmv_ms     mma_ms     mmi_ms  fastest
llama-3.2-1b   q8        4      0.900      0.800          -          -  mmv
llama-3.2-1b   q8       16      1.500      1.100          -      1.150  mmv
llama-3.2-1b   q8       32      3.000      1.500      9.000      1.470  mmi
llama-3.2-1b   q8       64      6.000      2.100      4.000      1.860  mmi
END
    run --separate-stderr logos-fuse -v --numerics q8 --crossover t.txt b.logos
    [ "$status" -eq 0 ]
    [ "${stderr_lines[0]}" = "logos-fuse: t.txt: from the bench's times: --mmv-rows 4 (4 rows: mmv 0.800 ms, the GEMV 0.900), --mma-rows 65536 (mma never measured faster than mmv to the last row count), --mmi-rows 32 (32 rows: mmi 1.470 ms, mmv 1.500)" ]
    # at 32 as the default: the default's plan, its small products on mmv
    diff <(logos-fuse --numerics q8 --crossover t.txt b.logos | grep '^launch') <(logos-fuse --numerics q8 b.logos | grep '^launch')
    [ "$(logos-fuse --numerics q8 --crossover t.txt b.logos | grep -c '^launch mmi ')" -eq 17 ]
    [ "$(logos-fuse --numerics q8 --crossover t.txt b.logos | grep -c '^launch mmv ')" -eq 48 ]
    # mmi first ahead at 48 rows: a batch of 40 stays on mmv; a flag overrides the table
    sed 's/1.470  mmi/1.600  mmv/' t.txt >u.txt
    printf 'llama-3.2-1b   q8       48      4.000      1.800          -      1.700  mmi\n' >>u.txt
    run --separate-stderr logos-fuse -v --numerics q8 --crossover u.txt b.logos
    [[ "${stderr_lines[0]}" == *", --mmi-rows 48 (48 rows: mmi 1.700 ms, mmv 1.800)" ]]
    ! grep -q '^launch mmi ' <<<"$output"
    [ "$(logos-fuse --numerics q8 --crossover u.txt --mmi-rows 40 b.logos | grep -c '^launch mmi ')" -eq 65 ]
    # never ahead: never taken
    sed 's/1.860  mmi/2.200  mmv/' u.txt >w.txt
    run --separate-stderr logos-fuse -v --numerics q8 --crossover w.txt b.logos
    [[ "${stderr_lines[0]}" == *", --mmi-rows 65536 (mmi never measured faster than mmv to the last row count)" ]]
    ! grep -q '^launch mmi ' <<<"$output"
    # mmi runs at most 64 rows; with an mmi_ms column the fastest is an eighth word, no ninth
    printf 'x q8 128 5 4 - 3\n' >bad.txt
    run --separate-stderr logos-fuse --numerics q8 --crossover bad.txt -o out.plan b.logos
    [ "$status" -eq 1 ]
    [ "$stderr" = "logos-fuse: bad.txt:1:16: mmi timed at 128 rows: it runs at most 64
  x q8 128 5 4 - 3
                 ^" ]
    [ ! -e out.plan ]
    printf 'x q8 64 5 4 - 3 mmi extra\n' >bad.txt
    run --separate-stderr logos-fuse --numerics q8 --crossover bad.txt b.logos
    [ "$status" -eq 1 ]
    [ "${stderr_lines[0]}" = "logos-fuse: bad.txt:1:21: expected 'shape numerics rows gemv_ms mmv_ms mma_ms [mmi_ms] [fastest]' (tests/gpu/crossover's lines)" ]
}

@test "logos-fuse --mmv-rows: a decode batch's products on the tensor cores in passes, after a norm that quantizes; the arg-max alone" {
    logos-author decode_batch --batch 16 "$TINY/llama.yaml" >b.logos
    run --separate-stderr logos-fuse -v b.logos
    [ "$status" -eq 0 ]
    [ "$(grep -c '^launch mmv .* XQ=2 ROWS=16 NT=2 ' <<<"$output")" -eq 7 ]
    # the norms after the down products (the next layer's, the head's) in
    # the epilogues of the products around them (norm_split); the first
    # and those after the o products (GEMVs) alone
    [ "$(grep -c '^launch rownorm .* ROWS=16 .* OQ=2 ' <<<"$output")" -eq 3 ]
    [ "$(grep -c '^launch mmv .* RES=1 .* SQ=2 RN=0 EPS=0 OFFSET=0 NW=1 .* so=bx[n1f]*\.ss ss=- ' <<<"$output")" -eq 2 ]
    [ "$(grep -c '^launch mmv .* SQ=0 RN=1 EPS=1e-05 .* nw=- q=- so=- ss=bx[n1f]*\.ss ' <<<"$output")" -eq 2 ]
    [[ "$stderr" == *"rule norm_split: bxf runs in the epilogues of the products before it (its quants and sums of squares) and after it (each row's scale)"* ]]
    [[ "$stderr" == *":176: no norm_split: the products before it do not run on mmv"* ]]
    grep -q '^launch argmax V=256 ROWS=16 ' <<<"$output"
    [[ "$stderr" == *"no lm_argmax: 16 stacked rows go to the tensor cores (--mmv-rows, --mma-rows), which take no arg-max; it runs alone"* ]]
    [[ "$stderr" == *"products of 16 stacked rows on the tensor cores in 1 pass of up to 16: at least --mmv-rows 2, fewer than --mma-rows 128"* ]]
    # the batch's attention output is f32: its product stays a GEMV
    [[ "$stderr" == *"products of 16 stacked rows as GEMVs: activations not quantized before it (--mmv-rows reads them so) (2, 128)"* ]]
    logos-fuse b.logos | logos-check -
    # past --mma-rows too: the LM head in tiles on the tensor cores, the arg-max alone
    logos-fuse --mma-rows 8 b.logos >m.plan
    grep -q '^launch mma K=64 PARTS=1 N0=256 .* ROWS=16 ' m.plan
    grep -q '^launch argmax V=256 ROWS=16 ' m.plan
    ! grep -q '^launch gemv ' m.plan
    # two rows: mmv's one pass by default (--mmv-rows 2), a GEMV's under --mmv-rows 3
    logos-author decode_batch --batch 2 "$TINY/llama.yaml" >t.logos
    logos-fuse t.logos | grep -q '^launch mmv .* ROWS=2 '
    ! logos-fuse --mmv-rows 3 t.logos | grep -q '^launch mmv '
    # --no-lane-rules holds norm_split back
    ! logos-fuse --no-lane-rules b.logos | grep -q 'SQ=[12]'
}

@test "logos-fuse -v: stacked rows on the GEMV in passes, each reading the weights again" {
    logos-author decode_batch --batch 16 "$TINY/llama.yaml" >b.logos
    run --separate-stderr logos-fuse -v --mmv-rows 65536 b.logos
    [ "$status" -eq 0 ]
    # the gated pair quantizes its outputs (4 rows a warp): 2 activation rows a pass
    [ "$(grep -c '16 stacked rows in 8 passes of 2 rows (4 a warp): each pass reads the weights again' <<<"$stderr")" -eq 2 ]
    [ "$(grep -c '16 stacked rows in 2 passes of 8 rows (1 a warp)' <<<"$stderr")" -eq 7 ]
    # a decode step's one row: no passes
    logos-author decode_step "$TINY/llama.yaml" | logos-fuse -v 2>s.err >/dev/null
    ! grep -q 'passes of' s.err
}

@test "logos-fuse: products of stacked rows for the tensor cores take no norm prologue; the norm quantizes once, the gated pair in its epilogue" {
    logos-author prefill "$EX/llama-3-8b.yaml" >p.logos
    run --separate-stderr logos-fuse -v --numerics q8 --rows 512 p.logos
    [ "$status" -eq 0 ]
    [[ "$stderr" == *"no prologue: 512 stacked rows go to the tensor cores, whose blocks would each norm them again"* ]]
    [ "$(grep -c '^launch rownorm D=4096 ROWS=512 .* OQ=3 ' <<<"$output")" -eq 64 ]
    [ "$(grep -c '^launch mmh .* XIN=3 ROWS=512 ' <<<"$output")" -eq 128 ]
    [ "$(grep -c '^launch mmh .* GATE=1 CAP=0 OQ=3 ' <<<"$output")" -eq 32 ]
    # in int8 tiles (mma) likewise
    run --separate-stderr logos-fuse -v --numerics q8 --rows 512 --mmh-rows 65536 p.logos
    [ "$(grep -c '^launch rownorm D=4096 ROWS=512 .* OQ=1 ' <<<"$output")" -eq 64 ]
    [ "$(grep -c '^launch mma .* XIN=1 XQ=1 ROWS=512 BM=64 NORM=0 ' <<<"$output")" -eq 128 ]
    [ "$(grep -c '^launch mma .* GATE=1 CAP=0 OQ=1 ' <<<"$output")" -eq 32 ]
    # below both crossovers the norm stays in the GEMV's prologue
    run --separate-stderr logos-fuse -v --numerics q8 --rows 64 --mmv-rows 65536 p.logos
    [[ "$stderr" != *"no prologue: 64 stacked rows"* ]]
    [ "$(grep -c '^launch gemv .* NORM=1 ' <<<"$output")" -eq 65 ]
}

@test "latent attention: one absorbed launch a layer, its cache row written in place by the rope's launch; -v says how the per-head products read" {
    logos-author decode_step "$TINY/deepseek2.yaml" >s.logos
    run --separate-stderr logos-fuse -v s.logos
    [ "$status" -eq 0 ]
    [ "$(grep -c '^launch latent .* MODE=0 KQ=1 VQ=1 ' <<<"$output")" -eq 3 ]
    [ "$(grep -c '^launch rope PARTS=3 .* NORM2=1 .* DST1=1 DST2=1 .* XA0=16 XA1=32 XA2=0 .* YA1=32 YA2=0 .* y1=Kc[0-9] y2=Kc[0-9] covers' <<<"$output")" -eq 3 ]
    [ "$(grep -c '^launch copy ' <<<"$output")" -eq 0 ]
    grep -q '^rule latent_absorbed$' <<<"$output" && grep -q '^rule rope_append$' <<<"$output"
    [[ "$stderr" == *"rule rope_append: the rope's launch writes each part of Kc0 into its place in Kc0's row"* ]]
    [[ "$stderr" == *"rule rope_append: the rope's launch reads qr0's values from 16 in place, not a copy"* ]]
    [[ "$stderr" == *"the per-head products read each head's 16 unrotated query values in place as f32 (they miss whole 32-value blocks: no quantized read)"* ]]
    run --separate-stderr logos-fuse -v --numerics precise s.logos
    [[ "$stderr" != *"unrotated query values"* ]]
    logos-author decode_step "$EX/deepseek-v2-lite.yaml" >big.logos
    run --separate-stderr logos-fuse -v big.logos
    [[ "$stderr" == *"read each head's 128 unrotated query values in place as f32 (the reference multiplies them unrounded)"* ]]
    [ "$(grep -c '^launch latent NH=16 NOPE=128 QW=192 ROPE=64 LORA=512 VD=128 ' <<<"$output")" -eq 27 ]
}

@test "latent attention of a wide chunk: expanded (latent_expand, then attend, or flash under q8), from --latent-rows; -v says which and why" {
    logos-author prefill "$TINY/deepseek2.yaml" >p.logos
    # the tiny chunk's 64 rows are not wide by default (128)
    run --separate-stderr logos-fuse -v p.logos
    [ "$status" -eq 0 ] && grep -q '^rule latent_absorbed$' <<<"$output" && ! grep -q '^launch latent_expand ' <<<"$output"
    [[ "$stderr" == *"latent absorbed: a chunk of 64 rows is not wide (--latent-rows 128)"* ]]
    run --separate-stderr logos-fuse -v --latent-rows 64 p.logos
    [ "$status" -eq 0 ] && grep -q '^rule latent_expanded$' <<<"$output" && ! grep -q '^rule latent_absorbed$' <<<"$output"
    [[ "$stderr" == *"rule latent_expanded: a wide chunk (64 rows, --latent-rows 64): the cache's 64 rows expanded into 4 heads' keys of 32 and values of 16 (0.0492 MB), then attention over them"* ]]
    [ "$(grep -c '^launch latent_expand NH=4 NOPE=16 QW=32 ROPE=16 LORA=32 VD=16 ROWS=64 NCTX=64 MODE=1 KQ=1 VQ=1 grid 5 1 1 .* k=bct[0-9].k v=bct[0-9].v q=bct[0-9].q covers$' <<<"$output")" -eq 3 ]
    [ "$(grep -c '^launch attend NH=4 NKV=4 HG=1 HD=32 VD=16 .* MODE=1 .* q=bct[0-9].q k=bct[0-9].k v=bct[0-9].v .* covers [0-9]* ' <<<"$output")" -eq 3 ]
    logos-check - <<<"$output"
    # under q8 the heads' attention runs on the tensor cores
    run --separate-stderr logos-fuse -v --numerics q8 --latent-rows 64 p.logos
    [ "$(grep -c '^launch flash NH=4 NKV=4 HD=32 VD=16 .* q=bct[0-9].q k=bct[0-9].k v=bct[0-9].v ' <<<"$output")" -eq 3 ]
    [[ "$stderr" == *"attention of 64 causal rows on the tensor cores (flash)"* ]]
    # the CPU reference runs the expanded plan to its program's tokens, and under LOGOS_REF_NUMERICS as flash computes
    logos-author generate "$TINY/deepseek2.yaml" >g.logos
    logos-fuse --numerics q8 --latent-rows 2 g.logos >g.plan
    grep -q '^launch latent_expand ' g.plan
    logos-run --device cpu -q --synthetic 3 -p "1 2 3 4 5 6 7" -n 4 g.logos >a.tok
    logos-run --device cpu -q --synthetic 3 -p "1 2 3 4 5 6 7" -n 4 g.plan >b.tok
    cmp a.tok b.tok
    LOGOS_REF_NUMERICS=1 logos-run --device cpu -q --synthetic 3 -p "1 2 3 4 5 6 7" -n 4 g.plan >c.tok
    [ "$(wc -l <c.tok)" -eq 4 ]
    # a decode step's single row never expands; DeepSeek-V2-Lite's chunk of 512 rows does by default
    logos-author decode_step "$TINY/deepseek2.yaml" | logos-fuse --latent-rows 1 | grep -q '^rule latent_absorbed$'
    [ "$(logos-author prefill "$EX/deepseek-v2-lite.yaml" | logos-fuse | grep -c '^launch latent_expand NH=16 NOPE=128 ')" -eq 27 ]
    run --separate-stderr logos-fuse --latent-rows 0 p.logos
    [ "$status" -eq 2 ]
}

@test "logos-fuse -v: a decode step's attention says from which position its chunks are scored a row a lane" {
    logos-author decode_step "$EX/llama-3-8b.yaml" >p.logos
    run --separate-stderr logos-fuse -v p.logos
    [ "$status" -eq 0 ]
    # 16 head blocks (2 query heads a block), 33 chunks of at least 16
    # rows: a chunk reaches 64 rows at 63 x 33 + 1
    [ "$(grep -c ': attention: a row a lane from position 2080 (chunks of at least 64 rows)$' <<<"$stderr")" -eq 32 ]
    # a whole cache a block (--sms 1): from 64 rows
    run --separate-stderr logos-fuse -v --sms 1 p.logos
    [ "$(grep -c ': attention: a row a lane from position 64 (chunks of at least 64 rows)$' <<<"$stderr")" -eq 32 ]
    # seven query heads a key head, one a block (at most 4 take a row a
    # lane): 14 head blocks, 37 chunks, from 63 x 37 + 1
    logos-author decode_step "$EX/qwen2.5-0.5b.yaml" | logos-fuse -v 2>err >/dev/null
    [ "$(grep -c ': attention: a row a lane from position 2332 (chunks of at least 64 rows)$' err)" -eq 24 ]
}

@test "logos-fuse: an attention's query heads over several blocks where a key head's are many and wide, or a decode step's rows fit one round so (HG), -v says so" {
    logos-author decode_step "$EX/qwen3-next-80b-a3b.yaml" >p.logos
    run --separate-stderr logos-fuse -v p.logos
    [ "$status" -eq 0 ]
    [[ "$stderr" == *"attention: 8 query heads a key head of 256 values, 2 a block (a thread's registers)"* ]]
    # then a decode step's (its rows loaded before the wait): one a block,
    # whose thread has registers for 4 rows a round (16 over 4 warps)
    [[ "$stderr" == *"attention: 1 query head a block, not 2: a chunk of 16 rows in one round, loaded before the wait"* ]]
    [[ "$stderr" == *"rule chunks_apart: 16 head blocks leave the chip idle: up to 33 chunks of at least 16 rows"* ]]
    [ "$(grep -c '^launch attend NH=16 NKV=2 HG=1 HD=256 .* grid 16 33 1 ' <<<"$output")" -eq 12 ]
    # a count a block of a chunk's heads; the partials a slot for each of
    # the 33 chunks that can be busy (2 x 33 x 8 x 258)
    [ "$(grep -c '^buffer o[0-9]*\.count scratch i32 16$' <<<"$output")" -eq 12 ]
    [ "$(grep -c '^buffer o[0-9]*\.part scratch f32 136224$' <<<"$output")" -eq 12 ]
    # narrow heads: a block could take a key head's all, but a decode
    # step's takes 2 of the 8B's 4 (3 rows a round at 4, 6 at 2)
    logos-author decode_step "$EX/llama-3-8b.yaml" | logos-fuse -v >p8.plan 2>p8.err
    [ "$(grep -c '^launch attend NH=32 NKV=8 HG=2 .* grid 16 33 1 ' p8.plan)" -eq 32 ]
    ! grep -q 'a block (a thread' p8.err
    [ "$(grep -c 'attention: 2 query heads a block, not 4: a chunk of 16 rows in one round' p8.err)" -eq 32 ]
    # a batch's rows are loaded after the wait: all 4
    logos-author decode_batch "$EX/llama-3-8b.yaml" | logos-fuse >b8.plan
    [ "$(grep -c '^launch attend NH=32 NKV=8 HG=4 ' b8.plan)" -eq 32 ]
    # the 1B (7 rows a round at 4) and Gemma-2-2B (no count of its 2 makes
    # 16 rows one round) keep theirs
    for s in llama-3.2-1b gemma-2-2b; do
        logos-author decode_step "$EX/$s.yaml" | logos-fuse -v 2>err >/dev/null
        ! grep -q 'in one round' err
    done
}

@test "logos-fuse: a prefill chunk's causal attention on the tensor cores (flash) under q8 only, -v says which way; a decode step never" {
    logos-author prefill "$EX/llama-3-8b.yaml" >p.logos
    run --separate-stderr logos-fuse -v --numerics q8 --rows 512 p.logos
    [ "$status" -eq 0 ]
    [ "$(grep -c '^launch flash NH=32 NKV=8 HD=128 VD=128 ROWS=512 NCTX=8192 KV=1 .* OQ=3 grid 32 8 1 block 128 smem 53248 ' <<<"$output")" -eq 32 ]
    ! grep -q '^launch attend ' <<<"$output"
    [[ "$stderr" == *"attention of 512 causal rows on the tensor cores (flash): f16 operands, tiles of 64 rows by 64 keys"* ]]
    # q8x2 (the default) and precise: attend, and -v says why
    run --separate-stderr logos-fuse -v --rows 512 p.logos
    ! grep -q '^launch flash ' <<<"$output"
    [ "$(grep -c '^launch attend .* MODE=1 ' <<<"$output")" -eq 32 ]
    [[ "$stderr" == *"attention of 512 causal rows by attend, not on the tensor cores: f16 operands (near q8x2's 1e-3) are for --numerics q8 only"* ]]
    run --separate-stderr logos-fuse --numerics precise --rows 512 p.logos
    ! grep -q '^launch flash ' <<<"$output"
    # heads of 256 (Gemma-2's, soft-capped, every other layer windowed): tiles of 32 keys; gpt-oss's sinks
    logos-author prefill "$EX/gemma-2-2b.yaml" | logos-fuse -v --numerics q8 >g.plan 2>g.err
    grep -q '^launch flash NH=8 NKV=4 HD=256 VD=256 .* CAP=50 WINDOW=4096 ' g.plan
    grep -q 'tiles of 64 rows by 32 keys' g.err
    logos-author prefill "$EX/gpt-oss-20b.yaml" | logos-fuse --numerics q8 >o.plan
    grep -q '^launch flash NH=64 NKV=8 HD=64 VD=64 .* WINDOW=128 SINKS=1 ' o.plan
    # a decode step's one row (its rope in the attention): attend, no word of it
    logos-author decode_step "$EX/llama-3-8b.yaml" | logos-fuse -v --numerics q8 >s.plan 2>s.err
    ! grep -q '^launch flash ' s.plan
    ! grep -q 'causal rows' s.err
}

@test "flash plans on the CPU reference: the tiny models' prefill under q8 gives the tokens and logits of their programs" {
    local s
    for s in llama gemma2 gptoss; do
        logos-author generate "$TINY/$s.yaml" >g.logos
        logos-fuse --numerics q8 g.logos >g.plan
        grep -q '^launch flash ' g.plan
        logos-run --device cpu -q --synthetic 3 -p "1 2 3 4 5 6 7" -n 4 g.logos >a.tok
        logos-run --device cpu -q --synthetic 3 -p "1 2 3 4 5 6 7" -n 4 g.plan >b.tok
        cmp a.tok b.tok
    done
}

@test "logos-fuse: a latent attention with few heads takes its cache in chunks (chunks_apart), -v says so; --sms decides" {
    logos-author decode_step "$EX/deepseek-v2-lite.yaml" >p.logos
    run --separate-stderr logos-fuse -v p.logos
    [ "$status" -eq 0 ]
    [[ "$stderr" == *"rule chunks_apart: 16 head blocks leave the chip idle: up to 16 chunks of at least 64 rows"* ]]
    [ "$(grep -c '^launch latent .* SPLIT=16 CHUNK=64 grid 16 16 1 ' <<<"$output")" -eq 27 ]
    [ "$(grep -c '^buffer ct[0-9]*\.part scratch f32 131584$' <<<"$output")" -eq 27 ]
    # a GPU of 8 multiprocessors: 16 heads fill it, one chunk, no partials
    run --separate-stderr logos-fuse -v --sms 8 p.logos
    [ "$status" -eq 0 ]
    [[ "$stderr" != *"chunks_apart: 16 head blocks"* ]]
    [ "$(grep -c '^launch latent .* SPLIT=1 CHUNK=4096 grid 16 1 1 .* part=- cnt=- ' <<<"$output")" -eq 27 ]
    ! grep -q '^buffer ct[0-9]*\.part ' <<<"$output"
}

@test "logos-fuse: Qwen3-Next's small ops fold into their neighbours: the decay and beta into the delta rule, the gated norm, the shared expert's gate, the residual into the experts' down launch" {
    logos-author decode_step "$TINY/qwen3next.yaml" >s.logos
    run --separate-stderr logos-fuse -v s.logos
    [ "$status" -eq 0 ]
    [[ "$stderr" == *"rule delta_steps: beta's sigmoid folds into the delta rule's launch"* ]]
    [[ "$stderr" == *"rule delta_steps: the decay -exp(alog0) * softplus(.) folds into the delta rule's launch"* ]]
    [[ "$stderr" == *"rule epilogue: the gate silu(z0) of don0 folds into its norm's launch"* ]]
    [[ "$stderr" == *"rule epilogue: the gate of h0, a sigmoid of a value a row, folds into the product's epilogue"* ]]
    [[ "$stderr" == *"rule residual: h0's add folds into the experts' down launch"* ]]
    [ "$(grep -c '^launch delta .* GF=1 BF=1 .* ga=alog[0-9] ' <<<"$output")" -eq 3 ]
    [ "$(grep -c '^launch rownorm .* MODE=2 ' <<<"$output")" -eq 3 ]
    # the shared expert's gate goes with it into the experts' down launch (moe_shared)
    [ "$(grep -c '^launch gemv .* GS=1 ' <<<"$output")" -eq 0 ]
    [ "$(grep -c '^launch moe PHASE=1 .* RES=1 SH=1 GSH=1 .* gs=h[0-9]\.2 ' <<<"$output")" -eq 4 ]
    # the attention's output gate goes into the o product's prologue (gate_prologue)
    [ "$(grep -c '^launch elem ' <<<"$output")" -eq 0 ]
    [[ "$stderr" == *"rule concat_rows: the product's parts write their places in qkv0's concatenation: no copies"* ]]
    [ "$(grep -c '^buffer qkv0\.[0-9] view f32 [0-9]* of qkv0 at ' <<<"$output")" -eq 3 ]
}

@test "logos-fuse: moe_shared folds DeepSeek-V2's shared expert into the experts' two launches" {
    logos-author decode_step "$TINY/deepseek2.yaml" >s.logos
    run --separate-stderr logos-fuse -v s.logos
    [ "$status" -eq 0 ]
    [[ "$stderr" == *"rule moe_shared: the shared expert (wsg1, wsu1, wsd1) folds into the experts' launches, 2 segments of 32 hidden values"* ]]
    grep -qx 'rule moe_shared' <<<"$output"
    # gate and up of the kept experts and the shared segments; then the down of both, the residual after
    [ "$(grep -c '^launch moe PHASE=0 .* SH=2 GSH=0 XEARLY=1 grid 1 4 1 .* Wsg=wsg[0-9] Wsu=wsu[0-9] Wsd=- gs=- ' <<<"$output")" -eq 2 ]
    [ "$(grep -c '^launch moe PHASE=1 .* RES=1 SH=2 GSH=0 .* y=h[0-9] r=r[0-9] Wsg=- Wsu=- Wsd=wsd[0-9] gs=- ' <<<"$output")" -eq 2 ]
    # the real shape: 44 blocks of the hidden rows, 6 kept experts and 2 shared segments
    logos-author decode_step "$EX/deepseek-v2-lite.yaml" | logos-fuse >l.plan
    [ "$(grep -c '^launch moe PHASE=0 .* SH=2 GSH=0 XEARLY=1 grid 44 8 1 ' l.plan)" -eq 26 ]
    # no launch of the shared expert's own, and the hidden rows hold its segments
    ! grep -q '^launch gemv .* W0=wsg' <<<"$output"
    ! grep -q '^launch gemv .* W0=wsd' <<<"$output"
    grep -q '^buffer fm1\.hidden scratch f32 128$' <<<"$output"
    plan_is_program s.logos 3
}

@test "logos-fuse: a shared expert stays apart where the experts' launches cannot take it, and says why" {
    cat >s.logos <<'E'
logos 1 decode_step t
in x : f32[64]
in r : f32[64]
weight wr : f32[8,64]
weight eg : q8[8,64,64]
weight eu : q8[8,64,64]
weight ed : q8[8,64,64]
weight sg : q8[96,64]
weight su : q8[96,64]
weight sd : q8[64,96]
out y : f32[64]
rt = route(wr @ x, k=2, score=softmax)
sa = silu(sg @ x) * (su @ x)
y = r + moe(x, rt, eg, eu, ed, act=silu) + sd @ sa
end
E
    run --separate-stderr logos-fuse -v s.logos
    [ "$status" -eq 0 ]
    [[ "$stderr" == *"s.logos:13: no moe_shared: the shared expert sa stays apart: its hidden width is not at most 16 whole segments of the experts'"* ]]
    [ "$(grep -c '^launch moe .* SH=0 GSH=0 ' <<<"$output")" -eq 2 ]
    grep -q '^launch gemv .* W0=sg W1=su ' <<<"$output"
    # a batch's stacked rows bound for the tensor cores keep the shared expert's products there
    logos-author decode_batch "$TINY/deepseek2.yaml" >b.logos
    run --separate-stderr logos-fuse -v b.logos
    [ "$status" -eq 0 ]
    [[ "$stderr" == *"no moe_shared: the shared expert bfsa1 stays apart: its stacked rows go to the tensor cores"* ]]
}

@test "logos-fuse: a norm read by several launches is the first product's prologue, which writes it for the rest (NOUT)" {
    logos-author decode_step "$TINY/deepseek2.yaml" >s.logos
    run --separate-stderr logos-fuse -v s.logos
    [ "$status" -eq 0 ]
    [[ "$stderr" == *"s.logos:78: no prologue: fn1 is read by more than this launch's products, and a gated pair does not write it out"* ]]
    [[ "$stderr" == *"s.logos:78: rule norm_prologue: fn1 is computed in the prologue of the products of rt1, which write it for the launches after that read it too"* ]]
    # the router writes the mixture's norm; the experts read it; no norm launch of its own
    [ "$(grep -c '^launch gemv .* NORM=1 .* NOUT=1 .* W0=wr[0-9] .* x=r[0-9] nw=nfn[0-9] .* xo=fn[0-9] ' <<<"$output")" -eq 2 ]
    [ "$(grep -c '^launch moe PHASE=0 .* x=fn[0-9] ' <<<"$output")" -eq 2 ]
    ! grep -q '^launch rownorm ' <<<"$output"
    # a norm that only its products read keeps to them
    [ "$(grep -c '^launch gemv .* NORM=1 .* NOUT=0 .* nw=nm[0-9] ' <<<"$output")" -eq 3 ]
    # held-back lane rules: the norm runs alone
    run --separate-stderr logos-fuse -v --no-lane-rules s.logos
    [ "$status" -eq 0 ]
    ! grep -q 'NOUT=1' <<<"$output"
    plan_is_program s.logos 5
}

@test "logos-fuse: a sandwich norm and its residual join the next products' prologue, which writes the sum for the rest (sandwich_prologue)" {
    logos-author decode_step "$TINY/gemma2.yaml" >s.logos
    run --separate-stderr logos-fuse -v s.logos
    [ "$status" -eq 0 ]
    [[ "$stderr" == *"s.logos:70: rule sandwich_prologue: pa0 and its residual r0 are computed in the prologue of the products of fa0, which write it for the launches after that read it"* ]]
    [[ "$stderr" == *"s.logos:119: rule sandwich_prologue: pf3 and its residual h3 are computed in the prologue of the products of logits"$'\n'* ]]
    grep -qx 'rule sandwich_prologue' <<<"$output"
    # no norm launch of its own: four layers of five launches, the embedding and the head
    ! grep -q '^launch rownorm ' <<<"$output"
    [ "$(grep -c '^launch ' <<<"$output")" -eq 22 ]
    grep -q '^launch gemv .* NORM=1 .* GATE=2 .* PRE=1 XR=1 .* x=pa0.2 nw=nfn0 .* xo=r0 .* pw=npm0 pr=x covers ' <<<"$output"
    grep -q '^launch gemv .* NORM=1 .* ARGMAX=1 .* PRE=1 XR=0 .* x=pf3.1 nw=nf .* xo=- .* pw=npf3 pr=r3 covers ' <<<"$output"
    plan_is_program s.logos 7
    # held-back lane rules: the sandwich norms run alone (eight of its twelve norm launches)
    run --separate-stderr logos-fuse --no-lane-rules s.logos
    [ "$status" -eq 0 ]
    ! grep -q 'PRE=1' <<<"$output"
    [ "$(grep -c '^launch rownorm ' <<<"$output")" -eq 12 ]
}

@test "logos-fuse: in stacked forms a norm with its residual and the norm of the sum right after it are one launch (norm_pair)" {
    logos-author decode_batch --batch 3 "$TINY/gemma2.yaml" >b.logos
    run --separate-stderr logos-fuse -v --numerics q8 b.logos
    [ "$status" -eq 0 ]
    [[ "$stderr" == *"b.logos:98: rule norm_pair: bfn0, the norm of br0, runs in the launch of the norm and residual that make it"* ]]
    [[ "$stderr" == *"b.logos:103: rule norm_pair: bxn1, the norm of bh0, runs in the launch of the norm and residual that make it"* ]]
    grep -qx 'rule norm_pair' <<<"$output"
    # four layers: two pairs a layer but the last layer's second (the final norm stays alone), and the first norm
    [ "$(grep -c '^launch rownorm .* MODE=3 ' <<<"$output")" -eq 8 ]
    [ "$(grep -c '^launch rownorm ' <<<"$output")" -eq 9 ]
    grep -q '^launch rownorm D=64 ROWS=3 .* MODE=3 OQ=1 .* args x=bpa0.2 w=npm0 r=X n=- y=br0 w2=nfn0 y2=bfn0 covers ' <<<"$output"
    logos-check - <<<"$output" >/dev/null
    # the plan on the CPU reference: the program's tokens and logits
    logos-fuse --numerics q8 b.logos >b.plan
    logos-run -q --device cpu --synthetic 4 --logits a.f32 -o a.tok -p "1 2" -p 3 -p "4 5 6" -n 4 b.logos
    logos-run -q --device cpu --synthetic 4 --logits p.f32 -o p.tok -p "1 2" -p 3 -p "4 5 6" -n 4 b.plan
    cmp a.tok p.tok && cmp a.f32 p.f32
    # held-back lane rules: each norm alone
    [ "$(logos-fuse --no-lane-rules --numerics q8 b.logos | grep -c '^launch rownorm ')" -eq 17 ]
}

@test "logos-fuse: a sandwich norm whose eps differs from the prologue's runs alone, and -v says why" {
    printf 'logos 1 decode_step t\nin x : f32[64]\nin u : f32[64]\nweight a : f32[64]\nweight b : f32[64]\n' >e.logos
    printf 'weight w : q8[32,64]\nout y : f32[32]\nr = x + rmsnorm(u, a, eps=1e-05)\n' >>e.logos
    printf 'y = w @ rmsnorm(r, b, eps=1e-06)\nend\n' >>e.logos
    run --separate-stderr logos-fuse -v e.logos
    [ "$status" -eq 0 ]
    [[ "$stderr" == *"e.logos:8: no sandwich_prologue: "*" runs alone: its eps or offset differs from the prologue's norm's"* ]]
    grep -q '^launch rownorm ' <<<"$output"
    grep -q '^launch gemv .* NORM=1 .* PRE=0 XR=0 ' <<<"$output"
}

@test "logos-fuse: an activation gated by sigmoid is the product's prologue, its gate read in place (gate_prologue)" {
    logos-author decode_step "$TINY/qwen3next.yaml" >s.logos
    run --separate-stderr logos-fuse -v s.logos
    [ "$status" -eq 0 ]
    [[ "$stderr" == *"s.logos:163: rule gate_prologue: og3 is gated in the prologue of the products that read it, its gate read in place"* ]]
    grep -q '^rule gate_prologue$' <<<"$output"
    # Qwen3-Next's attention output gate: the o product reads the attention's
    # rows and the query's gate half in place; no copy, no elementwise launch
    grep -q '^launch gemv .* XIN=0 .* XG=1 XGW=16 XGP=32 XGA=16 .* W0=wo3 .* x=o3 .* xg=qg3.1 pw=- pr=- covers ' <<<"$output"
    ! grep -q '^launch elem ' <<<"$output"
    ! grep -q '^launch copy W=16 XW=32 ' <<<"$output"
    plan_is_program s.logos 5
    # held-back lane rules: the gate and its product apart
    run --separate-stderr logos-fuse --no-lane-rules s.logos
    [ "$status" -eq 0 ]
    [ "$(grep -c '^launch elem ' <<<"$output")" -eq 2 ]
    ! grep -q ' XG=1 ' <<<"$output"
}

@test "logos-fuse: gate_prologue copies a gate of runs that are not whole segments, and leaves a prefill's tiles alone" {
    cat >s.logos <<'E'
logos 1 prefill t
size T
in o : f32[T,8,24]
in qg : f32[T,8,48]
weight wa : q8[64,192]
weight wb : q8[32,192]
out ya : f32[T,64]
out yb : f32[T,32]
g = slice(qg, at=8, n=24)
og = o * sigmoid(g)
ya = wa @ (og ~ [T,192])
yb = wb @ (og ~ [T,192])
end
E
    run --separate-stderr logos-fuse -v --numerics q8 --rows 4 s.logos
    [ "$status" -eq 0 ]
    [[ "$stderr" == *"s.logos:9: the gate g is copied out of its row: its runs of 24 are not whole 16-value segments dividing 192 at places of whole 4-value words"* ]]
    [[ "$stderr" == *"s.logos:10: rule gate_prologue: og is gated in the prologue of the products that read it"* ]]
    [[ "$stderr" == *"products of 4 stacked rows as GEMVs: a gate prologue (2, 128)"* ]]
    grep -q '^launch copy W=24 XW=48 ' <<<"$output"
    grep -q '^launch gemv .* PARTS=2 .* XG=1 XGW=192 XGP=192 XGA=0 .* x=o .* xg=g pw=- pr=- covers ' <<<"$output"
    run --separate-stderr logos-fuse -v --numerics q8 --rows 512 s.logos
    [ "$status" -eq 0 ]
    [[ "$stderr" == *"s.logos:10: no gate_prologue: 512 stacked rows go to the tensor cores in tiles"* ]]
    grep -q '^launch mma ' <<<"$output"
    [ "$(grep -c '^launch elem ' <<<"$output")" -eq 2 ]
}

@test "logos-fuse: the experts' gate and up stage their activation before the wait only where the launch before did not make it (XEARLY)" {
    cat >s.logos <<'E'
logos 1 decode_step t
in h : f32[64]
in lg : f32[8]
weight nw : f32[64]
weight eg : q8[8,32,64]
weight eu : q8[8,32,64]
weight ed : q8[8,64,32]
out y : f32[64]
rt = route(lg, k=2, score=softmax)
x = rmsnorm(h, nw, eps=1e-06)
y = moe(x, rt, eg, eu, ed, act=silu)
end
E
    run logos-fuse s.logos
    [ "$status" -eq 0 ]
    [ "$(grep '^launch ' <<<"$output" | cut -d' ' -f2 | tr '\n' ' ')" = "route rownorm moe moe " ]
    [ "$(grep -c '^launch moe .* XEARLY=0 ' <<<"$output")" -eq 2 ]
    # the norm first: the route runs between it and the experts
    sed -i '/^rt = /d; s/^x = rmsnorm.*/&\nrt = route(lg, k=2, score=softmax)/' s.logos
    run logos-fuse s.logos
    [ "$status" -eq 0 ]
    [ "$(grep '^launch ' <<<"$output" | cut -d' ' -f2 | tr '\n' ' ')" = "rownorm route moe moe " ]
    grep -q '^launch moe PHASE=0 .* XEARLY=1 ' <<<"$output"
    grep -q '^launch moe PHASE=1 .* XEARLY=0 ' <<<"$output"
}

@test "logos-fuse: a norm whose weight the program computes reads it from its temporary, and the plan runs as its program" {
    # a fuzz input (tests/fuzz/regress/fuzz_text/norm-weight-computed.logos):
    # the plan read the computed weight from a temporary that rownorm's w
    # did not take, so the fused plan did not load
    logos-author decode_step "$TINY/llama.yaml" | sed 's/= rmsnorm(\([^,]*\), \([a-z0-9]*\),/= rmsnorm(\1, -\2,/' >prog.logos
    [ "$(grep -c 'rmsnorm([^,]*, -' prog.logos)" -gt 1 ]
    logos-fuse prog.logos >prog.plan
    grep -q '^launch rownorm .* w=[a-z0-9]*\.1 ' prog.plan
    logos-check prog.plan
    same "computed norm weights" -p "1 2 3" -n 4
}

@test "logos-fuse: a state a step writes twice gets temporaries of two names, and the plan runs as its program" {
    # a fuzz input (tests/fuzz/regress/fuzz_text/state-written-twice.logos):
    # both writes' temporaries were named Vc0.1, and the plan did not load;
    # then logos-fuse aborted on a cycle: the first write joined the rope's
    # launch, which rope_attend took into the attention that waits on the
    # second
    logos-author decode_step "$TINY/llama.yaml" | awk '/^Vc0\[pos\] = / { v = substr($0, 12); print "Vc0[pos] = -(" v ")"; print "Vc0[pos] = " v " * 2"; next } { print }' >prog.logos
    [ "$(grep -c '^Vc0\[pos\] = ' prog.logos)" -eq 2 ]
    logos-fuse prog.logos >prog.plan
    logos-check prog.plan
    [ "$(grep -c '^buffer Vc0@[0-9]*\.[0-9]* ' prog.plan)" -ge 1 ]
    run --separate-stderr logos-fuse -v prog.logos
    [[ "$stderr" == *"rope apart: the attention waits on a launch that waits on the rope's"* ]]
    same "a state written twice" -p "1 2 3" -n 4
}

@test "logos-fuse: an op over a state's rows to the position (-Vc0[..pos]) is bounded by the state's rows, not the plan's" {
    # a fuzz input (tests/fuzz/regress/fuzz_text/state-view-rows.logos):
    # the negation's launch read 512 rows (the plan's bound) of a cache
    # of 64, and the plan did not load
    logos-author decode_step "$TINY/llama.yaml" | sed 's/^\(o0 = attend(qh0, Kc0\[\.\.pos\], \)\(Vc0\[\.\.pos\]\)/\1-\2/' >prog.logos
    grep -q '^o0 = attend(qh0, Kc0\[\.\.pos\], -Vc0\[\.\.pos\]' prog.logos
    logos-fuse --rows 512 prog.logos >prog.plan
    grep -q '^launch elem OP=4 N=2048 ROWS=64 .* args a=Vc0 ' prog.plan
    logos-check prog.plan
    same "attention over -Vc0[..pos]" -p "1 2 3" -n 4
}

@test "logos-fuse: a layer's q and k ropes of different attributes turn in launches of their own, -v says why, and the plan runs as its program" {
    # an audit's input: rope_append took the next rope of the same
    # attributes, the next layer's q, which reads what the launch makes:
    # logos-fuse aborted on the cycle (placed == ng)
    local f k=Kc0 a old new opt
    for f in llama gptoss deepseek2; do
        case $f in
        llama) a=orig old=8192 new=4096 ;;
        gptoss) a=factor old=32 new=16 ;;
        deepseek2) a=theta old=10000 new=20000 ;;
        esac
        logos-author decode_step "$TINY/$f.yaml" | sed "/^$k\[pos\] = .*rope(/s/$a=$old/$a=$new/" >prog.logos
        grep -q "^$k\[pos\] = .*rope(.*$a=$new" prog.logos
        logos-check prog.logos
        for opt in "" --no-lane-rules; do
            run --separate-stderr logos-fuse -v $opt prog.logos
            [ "$status" -eq 0 ] || { echo "$f $opt: $stderr"; return 1; }
            [[ "$stderr" == *": no rope_append: "*" and $k turn in launches of their own: their $a differs ($old, $new)"* ]]
        done
        same "$f, ropes of different attributes" -p "1 2 3" -n 4
    done
    logos-run --compile prog.plan >/dev/null
}

@test "logos-fuse: where every layer's k rope differs from its q's, each layer's ropes take two launches, and the plan runs as its program" {
    logos-author decode_step "$TINY/llama.yaml" | sed '/^Kc[0-9]*\[pos\] = rope(/s/theta=500000/theta=250000/' >prog.logos
    [ "$(grep -c '^Kc[0-9]*\[pos\] = rope(.*theta=250000' prog.logos)" -eq "$(layers "$TINY/llama.yaml")" ]
    run --separate-stderr logos-fuse -v prog.logos
    [ "$status" -eq 0 ]
    [ "$(grep -c ': no rope_append: qh[0-9]* and Kc[0-9]* turn in launches of their own' <<<"$stderr")" -eq \
        "$(layers "$TINY/llama.yaml")" ]
    [[ "$stderr" != *"rule rope_attend"* ]]
    # each layer: the q rope and the value append, then the k rope and its append
    [ "$(grep -c '^launch rope PARTS=2 ' <<<"$output")" -eq "$(layers "$TINY/llama.yaml")" ]
    [ "$(grep -c '^launch rope PARTS=1 ' <<<"$output")" -eq "$(layers "$TINY/llama.yaml")" ]
    same "every layer's ropes apart" -p "1 2 3" -n 4
}
