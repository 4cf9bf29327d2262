#!/bin/sh
# bench/probe/patched.sh — builds main with a patch applied (here, on the CPU
# machine) into build-ab/B: its bin/ (logos-author, logos-fuse, logos-bench,
# logos-run and logos-import, which the oracle needs) and test/gpu_kernels,
# stripped, small enough to carry beside build/bin and build/test/gpu_kernels
# (the device tool's 64 MiB). The patched tree is a throwaway worktree of
# HEAD under /tmp.
#
#   sh bench/probe/patched.sh PATCH [DIR]   e.g. bench/probe/dbk.patch, in git at 8136972 (DIR: B)
#
# DIR names the build under build-ab/ (B unless given), so that two
# patches can travel in one call.
set -u
[ $# -eq 1 ] || [ $# -eq 2 ] || { echo "usage: sh bench/probe/patched.sh PATCH [DIR]" >&2; exit 2; }
d=build-ab/${2:-B}
top=$(cd "$(dirname "$0")/../.." && pwd)
patch=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
wt=${TMPDIR:-/tmp}/logos-patched.$$
cd "$top" || exit 3
git worktree add -q --detach "$wt" HEAD || exit 3
trap 'git -C "$top" worktree remove --force "$wt"; rm -f "$wt.patch"' EXIT
case $patch in   # a patch too large to keep as text is kept xz-compressed (normpair.patch.xz)
*.xz) xz -dc "$patch" >"$wt.patch" && patch=$wt.patch ;;
esac
(cd "$wt" && git apply "$patch") || { echo "patched.sh: $1 does not apply to HEAD" >&2; exit 1; }
(cd "$wt" && make -s -j2 all build/test/gpu_kernels) || exit 1
rm -rf "$d" && mkdir -p "$d/bin" "$d/test" || exit 3
for t in logos-author logos-fuse logos-bench logos-run logos-import; do
    cp "$wt/build/bin/$t" "$d/bin/" || exit 3
done
cp "$wt/build/test/gpu_kernels" "$d/test/" || exit 3
strip -s "$d"/bin/* "$d"/test/* || exit 3
echo "$d: main $(git rev-parse --short HEAD) with $(basename "$1")"
