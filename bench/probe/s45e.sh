#!/bin/sh
# bench/probe/s45e.sh — session forty-five's fifth call (bench/NOTES.md
# run248): Nsight Compute on mmi's four launches of the 8B's first layer
# in a q8 decode batch of 64 (f16 caches, position 512): where its stage
# loop's time goes (throughputs, the schedulers' issue, the warps' stall
# reasons). Carry build/carry.
set -u
. "$(dirname "$0")/call.sh"
carry_in || exit 3
nvidia-smi -L
sed 's/^dim: \(.*\)/dim: \1\ncache: f16/; s/^ctx: .*/ctx: 1024/' examples/llama-3-8b.yaml >"$work/s.yaml"
build/bin/logos-author decode_batch --batch 64 "$work/s.yaml" | build/bin/logos-fuse --numerics q8 >"$work/b.plan"
grep -c "^launch mmi" "$work/b.plan"
timeout 300 ncu --clock-control none --kernel-name mmi --launch-skip 0 --launch-count 4 \
    --section SpeedOfLight --section SchedulerStats --section WarpStateStats --section LaunchStats \
    --section MemoryWorkloadAnalysis \
    build/bin/logos-bench --form decode_batch --synthetic 1 --pos 512 -n 1 --launch-reps 1 "$work/b.plan" >"$work/ncu.txt" 2>&1
echo "ncu status $?"
grep -E "^  mmi|Duration|DRAM Throughput|Memory Throughput|L2 Cache Throughput|Compute \(SM\) Throughput|Issue Slots Busy|Issued Warp Per Scheduler|No Eligible|Active Warps Per Scheduler|Eligible Warps Per Scheduler|Warp Cycles Per Issued Instruction|Registers Per Thread|Stall|Mem Busy|Max Bandwidth|L1/TEX Hit|L2 Hit" "$work/ncu.txt" | head -120
grep -iE "stall|warp state|est\. speedup" "$work/ncu.txt" | head -40
keep
[ -n "${STALLS:-}" ] || exit 0
echo "== the stall reasons (warps a issued instruction)"
timeout 300 ncu --clock-control none --kernel-name mmi --launch-skip 0 --launch-count 4 \
    --metrics "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio" \
    build/bin/logos-bench --form decode_batch --synthetic 1 --pos 512 -n 1 --launch-reps 1 "$work/b.plan" >"$work/stalls.txt" 2>&1
echo "ncu status $?"
awk '/mmi \(132/ { n++; print "== launch " n } /stalled/ && $NF + 0 >= 0.05 { sub(/smsp__average_warps_issue_stalled_/, ""); sub(/_per_issue_active.ratio/, ""); print }' "$work/stalls.txt"
keep
