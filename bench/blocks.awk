# bench/blocks.awk — logos-bench --timeline-blocks's CSV summed a kind of
# launch (the same kernel brief) a plan and position: its multiprocessors
# by how many of its blocks each ran (c a sm), how many such a launch has
# on average (sms), the mean time of one of their blocks from its wait's
# return (its start where it did not wait) to its end (block), and the mean
# time from the launch's last wait to such a multiprocessor's last end
# (sm's end). Says whether a launch's blocks share the chip evenly. Times
# in µs.
#
#   awk -F, -f bench/blocks.awk BLOCKS.csv
function flush_launch(   j, s, c) {
    if (nb == 0)
        return
    for (j = 1; j <= nb; j++) {
        per[bsm[j]]++
        if (bend[j] > smend[bsm[j]]) smend[bsm[j]] = bend[j]
    }
    for (j = 1; j <= nb; j++) {
        c = per[bsm[j]]
        bsum[kind, c] += bend[j] - bw[j]; bn[kind, c]++
    }
    for (s in per) {
        c = per[s]
        nsm[kind, c]++; fin[kind, c] += smend[s] - lw
        if (!((kind, c) in seen)) { seen[kind, c] = 1; cs[kind] = cs[kind] " " c }
    }
    launches[kind]++
    delete per; delete smend
    nb = 0
}
function flush_run(   j, k, n, c, i, parts) {
    flush_launch()
    if (rkey == "")
        return
    printf "%s at %s:\n", plan, pos
    printf "  %-40s %9s %8s %7s %8s %9s\n", "kernel", "launches", "c a sm", "sms", "block", "sm's end"
    for (j = 1; j <= nk; j++) {
        k = kinds[j]
        n = split(substr(cs[k], 2), parts, " ")
        for (i = 1; i <= n; i++) {
            c = parts[i]
            printf "  %-40s %9s %8d %7.1f %8.2f %9.2f\n", i == 1 ? k : "", i == 1 ? launches[k] : "", c,
                nsm[k, c] / launches[k], bsum[k, c] / bn[k, c], fin[k, c] / nsm[k, c]
        }
    }
    delete kinds; delete launches; delete nsm; delete fin; delete seen; delete cs; delete bsum; delete bn
    nk = 0
}
NR == 1 { next }
{
    if ($1 "@" $4 != rkey) {
        flush_run()
        rkey = $1 "@" $4; plan = $1; pos = $4
    }
    if ($5 "@" $6 != lkey) {
        flush_launch()
        lkey = $5 "@" $6; kind = $6; lw = 0
        if (!(kind in launches)) { kinds[++nk] = kind; launches[kind] = 0 }
    }
    w = $10 != "" ? $10 : $9
    if (w > lw) lw = w
    nb++; bsm[nb] = $8; bw[nb] = w; bend[nb] = $11
}
END { flush_run() }
