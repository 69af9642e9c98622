#!/usr/bin/env bash
# Live merge: another device's op log of ~100,000 ops grows by one op, delivered as Syncthing delivers
# it (a temporary file, fsynced, renamed over the old one). Times mergeForeignOps and projectDirtyPages (the
# median of K deliveries) next to a full boot of the same log in the same run.
# Floor: merge + projection at least 100x faster than the boot. Needs release binaries in
# $OUTL_BIN_DIR (make bench).
set -euo pipefail
BIN=${OUTL_BIN_DIR:-$(swift build -c release --show-bin-path)}
OUT=${BENCH_OUT:-$(mktemp -d /tmp/outl-bench-merge.XXXXXX)}
mkdir -p "$OUT"
K=${MERGE_ROUNDS:-31}
# Captures, plus one createPage per 100 of them (a day): ~100,000 ops. N + K is a whole number of
# days, so the K deliveries land on a page of about 100 blocks (its last K), as on a real day.
N=${MERGE_CAPTURES:-$((99000 - K))}
FLOOR=100
other="$OUT/other"; ws="$OUT/ws"; st="$OUT/state"
rm -rf "$other" "$ws" "$st" "$OUT/state-other"; mkdir -p "$st" "$OUT/state-other" "$ws/.outl/ops"
# The other device writes its log through the real encoder; this device starts with all of it but
# the last K lines (K single captures), which arrive one delivery at a time.
"$BIN/outl" --workspace "$other" --state-dir "$OUT/state-other" debug-generate $((N + K))
full=$(ls "$other"/.outl/ops/ops-*.jsonl)
target="$ws/.outl/ops/$(basename "$full")"
head -n "-$K" "$full" > "$target"
sync  # the setup's writeback is not the boot's
line=$("$BIN/outl" --workspace "$ws" --state-dir "$st" debug-merge "$full" "$target" "$K")
# The floors, in C, in the same directories, in the same run: one small durable file at a new name
# (temp, write, fsync, rename, fsync dir), and one durable page write as the projection does it: the
# page's bytes (its file's size after the deliveries) through a temporary in .outl/tmp, renamed over
# the page's existing file.
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$here/out"
cc -O2 -o "$here/out/floor" "$here/c/floor.c"
page_bytes=$(stat -c %s "$ws/journals/$(ls -t "$ws/journals" | head -n 1)")
# The third floor is that page write right after a delivery of the same op log (the C program
# rewrites a copy of it and renames it over itself), as each of the K projections above ran.
cp "$target" "$OUT/delivery.jsonl"
floors=$("$here/out/floor" "$ws/journals" 50 "$page_bytes" "$ws/.outl/tmp" "$OUT/delivery.jsonl")
rm -f "$OUT/delivery.jsonl"
publish_us=$(sed -n 's/^floor publish *p50 *\([0-9]*\) us.*/\1/p' <<<"$floors")
page_us=$(sed -n 's/^floor page *p50 *\([0-9]*\) us.*/\1/p' <<<"$floors")
delivered_us=$(sed -n 's/^floor delivered *p50 *\([0-9]*\) us.*/\1/p' <<<"$floors")
# A key is matched after a space: project_seconds must not match inside merge_project_seconds.
val() { sed -n "s/.* $1=\([0-9.e-]*\).*/\1/p" <<<" $line"; }
boot=$(val boot_seconds); merge=$(val merge_seconds); project=$(val project_seconds); both=$(val merge_project_seconds)
awk -v ops="$(val boot_ops)" -v boot="$boot" -v merge="$merge" -v project="$project" -v both="$both" \
    -v applied="$(val applied)" -v k="$K" -v floor="$FLOOR" -v publish="$publish_us" -v page="$page_us" \
    -v delivered="$delivered_us" -v bytes="$page_bytes" 'BEGIN {
  printf "%-9s %10s %10s %12s %14s %8s %8s\n", "ops", "boot_ms", "merge_ms", "project_ms", "merge+proj_ms", "x_boot", "floor_x"
  printf "%-9s %10.2f %10.3f %12.3f %14.3f %8.0f %8d\n", ops, boot * 1000, merge * 1000, project * 1000, both * 1000, boot / both, floor
  printf "(median of %d deliveries of one op each; %d ops applied; merge alone: %.0fx the boot)\n", k, applied, boot / merge
  printf "(C floor p50 of a small durable file: %.3f ms; of a durable page write of %d bytes over its file: %.3f ms)\n", \
         publish / 1000, bytes, page / 1000
  printf "(the projection is %.1fx the page floor; merge + projection %.1fx it; boot / (merge + that floor): %.0fx)\n", \
         project * 1e6 / page, both * 1e6 / page, boot / (merge + page / 1e6)
  printf "(C floor p50 of that page write right after a delivery: %.3f ms; the projection is %.1fx it, merge + projection %.1fx)\n", \
         delivered / 1000, project * 1e6 / delivered, both * 1e6 / delivered
}'
[ -n "${BENCH_OUT:-}" ] || rm -rf "$OUT"
# The same on tmpfs, where a durable write costs nothing: what is left is the merge's and the
# projection's own work. (The disk run above is bounded by the page's fsync and two file creations.)
if [ -z "${MERGE_ON_TMPFS:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then
  echo "--- the same on tmpfs (/dev/shm)"
  shm=$(mktemp -d /dev/shm/outl-bench-merge.XXXXXX)
  MERGE_ON_TMPFS=1 BENCH_OUT=$shm bash "$0" || true
  rm -rf "$shm"
fi
