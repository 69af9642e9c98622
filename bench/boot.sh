#!/usr/bin/env bash
# Boot time and peak memory of the workspace for 10k, 100k and 1M ops, side by side with a naive
# Foundation JSONDecoder boot of the same log, the largest log split over three devices' files, and
# the `outl daily append` slow path.
# Floor: boot >= 1,000,000 ops/s of log. Needs release binaries in $OUTL_BIN_DIR (make bench).
set -euo pipefail
BIN=${OUTL_BIN_DIR:-$(swift build -c release --show-bin-path)}
OUT=${BENCH_OUT:-$(mktemp -d /tmp/outl-bench-boot.XXXXXX)}
HERE=$(cd "$(dirname "$0")" && pwd)
FLOOR=1000000
SIZES=${BOOT_SIZES:-"10000 100000 1000000"}
swiftc -O "$HERE/boot/jsondecoder.swift" -o "$OUT/jsondecoder" 2>/dev/null
printf '%-9s %12s %10s %12s %14s %12s\n' ops boot_s ops_per_s peak_rss_mb jsondecoder/s floor/s
for n in $SIZES; do
  ws="$OUT/ws-$n"; st="$OUT/state-$n"
  rm -rf "$ws" "$st"; mkdir -p "$st"
  "$BIN/outl" --workspace "$ws" --state-dir "$st" debug-generate "$n"
  sync  # the generator's writeback is not the boot's
  line=$(/usr/bin/time -f 'rss_kb=%M' "$BIN/outl" --workspace "$ws" --state-dir "$st" debug-boot 2>"$OUT/time-$n")
  rss=$(sed -n 's/.*rss_kb=\([0-9]*\).*/\1/p' "$OUT/time-$n")
  secs=$(sed -n 's/.*seconds=\([0-9.e-]*\).*/\1/p' <<<"$line")
  rate=$(sed -n 's/.*ops_per_second=\([0-9]*\).*/\1/p' <<<"$line")
  jd=$("$OUT/jsondecoder" "$ws"/.outl/ops/ops-*.jsonl | sed -n 's/.*ops_per_second=\([0-9]*\).*/\1/p')
  printf '%-9s %12.3f %10s %12d %14s %12s\n' "$n" "$secs" "$rate" $((rss / 1024)) "$jd" "$FLOOR"
done
# The same ops as three files (every third line each, so each file stays in HLC order): the
# original and two conflict copies of it, since a file holds its own device's ops only. The boot
# merges them as it reads them. The first boot of this new device also makes its archive of what it
# read (SeenOps); the second finds the archive in step with the files, as every later boot does.
n=$(echo $SIZES | awk '{print $NF}')
ws="$OUT/ws-$n"; wm="$OUT/ws-$n-3dev"; sm="$OUT/state-$n-3dev"
rm -rf "$wm" "$sm"; mkdir -p "$wm/.outl/ops"; cp -r "$OUT/state-$n" "$sm"
own=$(cd "$ws/.outl/ops" && ls ops-*.jsonl | head -1)
stem=${own%.jsonl}
awk -v d="$wm/.outl/ops" -v own="$own" -v stem="$stem" '{ f = NR % 3 == 0 ? own : stem ".sync-conflict-20261203-00000" NR % 3 "-BENCH.jsonl"; print > (d "/" f) }' "$ws/.outl/ops/$own"
for run in 3files-1st 3files-2nd; do
  line=$(/usr/bin/time -f 'rss_kb=%M' "$BIN/outl" --workspace "$wm" --state-dir "$sm" debug-boot 2>"$OUT/time-3dev")
  rss=$(sed -n 's/.*rss_kb=\([0-9]*\).*/\1/p' "$OUT/time-3dev")
  secs=$(sed -n 's/.*seconds=\([0-9.e-]*\).*/\1/p' <<<"$line")
  rate=$(sed -n 's/.*ops_per_second=\([0-9]*\).*/\1/p' <<<"$line")
  printf '%-10s %11.3f %10s %12d %14s %12s\n' "$run" "$secs" "$rate" $((rss / 1024)) "-" "$FLOOR"
done
rm -rf "$wm" "$sm"
# The slow path the daemon is compared against: boot the whole workspace for one line.
n=$(echo $SIZES | awk '{print $2}'); n=${n:-10000}
if command -v hyperfine >/dev/null; then
  hyperfine -N --warmup 1 --runs 5 --export-markdown "$OUT/daily.md" \
    "$BIN/outl --workspace $OUT/ws-$n --state-dir $OUT/state-$n daily append benchmark line" >/dev/null 2>&1 || true
  echo "outl daily append on $n ops:"; cat "$OUT/daily.md" 2>/dev/null || true
fi
[ -n "${BENCH_OUT:-}" ] || rm -rf "$OUT"
