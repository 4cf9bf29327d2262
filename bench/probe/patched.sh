#!/bin/sh
# bench/probe/patched.sh — builds main with a patch applied (here, on the CPU
# machine) into build-ab/B: its bin/ (logos-author, logos-fuse, logos-bench
# and logos-run) and test/gpu_kernels, stripped, small enough to carry
# beside build/bin and build/test/gpu_kernels (the device tool's 64 MiB). The patched tree is a
# throwaway worktree of HEAD under /tmp.
#
#   sh bench/probe/patched.sh PATCH      e.g. bench/probe/i8f.patch
set -u
[ $# -eq 1 ] || { echo "usage: sh bench/probe/patched.sh PATCH" >&2; exit 2; }
top=$(cd "$(dirname "$0")/../.." && pwd)
patch=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
wt=${TMPDIR:-/tmp}/logos-patched.$$
cd "$top" || exit 3
git worktree add -q --detach "$wt" HEAD || exit 3
trap 'git -C "$top" worktree remove --force "$wt"' EXIT
(cd "$wt" && git apply "$patch") || { echo "patched.sh: $1 does not apply to HEAD" >&2; exit 1; }
(cd "$wt" && make -s -j2 all build/test/gpu_kernels) || exit 1
rm -rf build-ab/B && mkdir -p build-ab/B/bin build-ab/B/test || exit 3
for t in logos-author logos-fuse logos-bench logos-run; do
    cp "$wt/build/bin/$t" build-ab/B/bin/ || exit 3
done
cp "$wt/build/test/gpu_kernels" build-ab/B/test/ || exit 3
strip -s build-ab/B/bin/* build-ab/B/test/* || exit 3
echo "build-ab/B: main $(git rev-parse --short HEAD) with $(basename "$1")"
