# bench/timeline.awk — logos-bench --timeline's CSV summed a kind of launch
# (the same kernel brief) a plan and position: how many, and on average its
# time from its first block's start to its last block's end (span), the
# time from the launch before's last end to its first start (lead:
# negative where it began before that one ended), from its first start to
# its blocks' last return from the wait (pre-wait; "-" where none waits),
# and from its first block's end to its last's (tail); then the step's
# whole time and its launches' spans summed. Times in µs.
#
#   awk -F, -f bench/timeline.awk TIMELINE.csv
function flush() {
    if (key == "")
        return
    printf "%s at %s: %d launches, %.2f us from the first start to the last end (%.2f us of spans)\n", plan, pos, n, last, sum
    printf "  %5s  %-40s %8s %8s %9s %8s\n", "count", "kernel", "span", "lead", "pre-wait", "tail"
    for (j = 1; j <= nk; j++) {
        k = kinds[j]
        printf "  %5d  %-40s %8.2f %8.2f %9s %8.2f\n", cnt[k], k, sp[k] / cnt[k], ld[k] / cnt[k],
            nw[k] ? sprintf("%.2f", pw[k] / nw[k]) : "-", tl[k] / cnt[k]
    }
    delete cnt; delete sp; delete ld; delete pw; delete nw; delete tl
    nk = 0; n = 0; sum = 0; last = 0; prev = ""
}
NR == 1 { next }
{
    if ($1 "@" $4 != key) {
        flush()
        key = $1 "@" $4; plan = $1; pos = $4
    }
    k = $6
    if (!(k in cnt)) { kinds[++nk] = k; cnt[k] = 0 }
    cnt[k]++; n++
    sp[k] += $13 - $9; sum += $13 - $9
    ld[k] += prev == "" ? 0 : $9 - prev
    if ($11 != "") { pw[k] += $11 - $9; nw[k]++ }
    tl[k] += $13 - $12
    prev = $13
    if ($13 > last) last = $13
}
END { flush() }
