# bench/attend.awk — the attention launches of logos-bench --timeline-blocks's
# CSV, block by block: where an attention's time after its wait goes. A
# launch's blocks are grouped by head group (the block's index modulo GX,
# the grid's x: the key heads in the brief unless -v gx=N says otherwise);
# the last block of a group to end is the one that merged the group's
# chunks (attend.cu). A brief with hgN (N query heads a block, fewer than
# a key head's) has NH / N blocks along x. For each plan and position, summed over the
# attention launches (the layers), in µs from the launch's last wait:
#
#   blocks   blocks a launch
#   late     blocks a launch that began after its first block ended
#            (no room for them until others left)
#   chunk    a block's mean time from its wait (its start if later) to
#            its end, the mergers left out
#   c-p90    the 90th percentile of that
#   c-end    the last non-merging block's end
#   merge    a merger's end less the end of its group's block before it
#            (the merge alone: the count, the fence, the partials' loads)
#   end      the launch's last end
#
#   awk -F, [-v gx=N] -f bench/attend.awk BLOCKS.csv
function flush_launch(   j, g, u, n, t, k, first, vals) {
    if (nb == 0)
        return
    g = gx > 0 ? gx : lgx
    delete last; delete prev
    for (j = 1; j <= nb; j++) {
        u = bblk[j] % g
        if (!(u in last) || bend[j] > bend[last[u]]) { if (u in last) prev[u] = bend[last[u]]; last[u] = j }
        else if (!(u in prev) || bend[j] > prev[u]) prev[u] = bend[j]
    }
    n = 0
    first = bend[1]
    for (j = 2; j <= nb; j++)
        if (bend[j] < first) first = bend[j]
    for (j = 1; j <= nb; j++) {
        if (bst[j] > first) late++
        if (last[bblk[j] % g] == j) continue
        t = bend[j] - (bw[j] > bst[j] ? bw[j] : bst[j])
        csum += t; cn++; vals[++n] = t
        if (bend[j] - lw > cend) cend = bend[j] - lw
    }
    # the 90th percentile of this launch's chunk times (insertion sort: a few hundred)
    for (j = 2; j <= n; j++) { t = vals[j]; for (k = j - 1; k >= 1 && vals[k] > t; k--) vals[k + 1] = vals[k]; vals[k + 1] = t }
    if (n) { p90 += vals[int(0.9 * (n - 1)) + 1]; np90++ }
    for (u in last) {
        if (u in prev) { msum += bend[last[u]] - prev[u]; mn++ }
        if (bend[last[u]] - lw > lend) lend = bend[last[u]] - lw
    }
    tend += lend; tcend += cend; launches++; blocks += nb
    lend = 0; cend = 0
    nb = 0
}
function flush_run() {
    flush_launch()
    if (rkey != "" && launches)
        printf "%s at %s: %d attention launches\n  %8s %6s %7s %7s %7s %7s %7s\n  %8.1f %6.1f %7.2f %7.2f %7.2f %7.2f %7.2f\n",
            plan, pos, launches, "blocks", "late", "chunk", "c-p90", "c-end", "merge", "end",
            blocks / launches, late / launches, cn ? csum / cn : 0, np90 ? p90 / np90 : 0,
            tcend / launches, mn ? msum / mn : 0, tend / launches
    launches = blocks = late = csum = cn = p90 = np90 = msum = mn = tend = tcend = 0
}
NR == 1 { next }
{
    if ($1 "@" $4 != rkey) {
        flush_run()
        rkey = $1 "@" $4; plan = $1; pos = $4
    }
    if ($5 "@" $6 != lkey) {
        flush_launch()
        lkey = $5 "@" $6; lw = 0
        inattn = $6 ~ /^attend /
        lgx = 0
        if (inattn && match($6, /\/[0-9]+kv/))
            lgx = substr($6, RSTART + 1, RLENGTH - 3) + 0
        if (inattn && match($6, / hg[0-9]+ /)) {   # NH / HG blocks along x
            hg = substr($6, RSTART + 3, RLENGTH - 4) + 0
            match($6, /attend [0-9]+h/)
            lgx = substr($6, RSTART + 7, RLENGTH - 8) / hg
        }
    }
    if (!inattn)
        next
    w = $10 != "" ? $10 : $9
    if (w > lw) lw = w
    nb++; bblk[nb] = $7; bst[nb] = $9; bw[nb] = w; bend[nb] = $11
}
END { flush_run() }
