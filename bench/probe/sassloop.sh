#!/bin/sh
# bench/probe/sassloop.sh — here, no GPU: each kernel instantiation of a
# plan compiled for sm_90 by logos-run --compile, and for every one whose
# SASS has a loop around its tensor-core (IMMA) or dp4a (IDP) work, the
# instructions of the shortest such loop and its commonest opcodes: a
# stage's issue cost (bench/NOTES.md run273: mmv's loop of 1,051-1,297
# instructions a stage at 24 rows on the 8B, against ~850 with
# nospill.patch). cuobjdump and the nvdisasm it runs come from PyPI's
# nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm wheels, fetched once into
# build-ab/sass (the CUDA toolkit here has neither).
#
#   sh bench/probe/sassloop.sh PLAN [BIN]     BIN: the tools' folder (build/bin)
set -u
[ $# -ge 1 ] || { echo "usage: sh bench/probe/sassloop.sh PLAN [BIN]" >&2; exit 2; }
plan=$1 bin=${2:-build/bin}
tools=build-ab/sass
cu=$tools/nvidia/cu13/bin/cuobjdump
if [ ! -x "$tools/nvidia/cu13/bin/nvdisasm" ]; then
    mkdir -p "$tools" && pip download -q --no-deps nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm -d "$tools" >&2 || exit 3
    for w in "$tools"/*.whl; do unzip -qo "$w" -d "$tools" || exit 3; done
    chmod +x "$tools"/nvidia/cu13/bin/* || exit 3
fi
PATH=$PWD/$tools/nvidia/cu13/bin:$PATH
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT
XDG_CACHE_HOME=$cache "$bin/logos-run" --compile --arch 90 "$plan" >"$cache/list" || exit 1
for f in "$cache"/logos/*.cubin; do
    "$cu" -sass "$f" >"$cache/s" 2>/dev/null || continue
    python3 - "$cache/s" <<'PY'
import re, sys
ins, name = [], "?"
for l in open(sys.argv[1]):
    m = re.search(r'Function : (\w+)', l)
    if m: name = m.group(1)
    m = re.match(r'\s+/\*([0-9a-f]{4,})\*/\s+(.*?);', l)
    if m: ins.append((int(m.group(1), 16), m.group(2)))
for key in ("IMMA", "HMMA", "IDP"):
    at = [a for a, t in ins if key in t]
    if at: break
else:
    sys.exit()
lo, hi, best = min(at), max(at), None
for a, t in ins:
    m = re.search(r'BRA .*?0x([0-9a-f]+)', t)
    if m and a > hi and int(m.group(1), 16) <= lo and (best is None or a - int(m.group(1), 16) < best[0] - best[1]):
        best = (a, int(m.group(1), 16))
if best is None:
    print(f"{name}: no loop around its {key}"); sys.exit()
ops = {}
for a, t in ins:
    if best[1] <= a <= best[0]:
        op = (t.split()[1] if t.startswith('@') else t.split()[0]).split('.')[0]
        ops[op] = ops.get(op, 0) + 1
top = " ".join(f"{k} {v}" for k, v in sorted(ops.items(), key=lambda k: -k[1])[:6])
print(f"{name}: loop of {sum(ops.values())} instructions, {ops.get(key, 0)} {key}: {top}")
PY
done
