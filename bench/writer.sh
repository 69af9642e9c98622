#!/usr/bin/env bash
# writer.sh: outl-capture (release) against the C reference doing the same syscalls, side by side.
# The floor: outl-capture must take at most 1.5x the C program's time per capture; the target is
# 1.2x. Each run is dominated by its fsyncs, and a busy disk moves them by tenths, so the two
# programs run in turn (bench/c/alternate.c), never one block after the other, and the ratio is
# that of their medians.
# Two states of the executable's page cache, both real: "installed" (just written, as dpkg or
# `make install` leave it) and "after a reboot" (dropped, then read back in by its first run, as
# readahead fills it). The second costs a large static binary more to map on each start.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${OUTL_BIN_DIR:-$(cd "$here/.." && swift build -c release --show-bin-path)}
out=$here/out
mkdir -p "$out"
cc -O2 -Wall -o "$out/capture_ref" "$here/c/capture_ref.c"
cc -O2 -Wall -o "$out/alternate" "$here/c/alternate.c"
work=$(mktemp -d "${TMPDIR:-/tmp}/outl-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
runs=${OUTL_BENCH_RUNS:-300}
# How much of the code layout (Sources/outl-capture/hot.order, bench/writer-order.sh) this build has.
python3 - "$here/../Sources/outl-capture/hot.order" "$bin/outl-capture" <<'PY'
import subprocess, sys
listed = [l.strip()[len(".text."):] for l in open(sys.argv[1]) if l.strip()]
present = {l.split()[-1] for l in subprocess.run(["nm", sys.argv[2]], capture_output=True, text=True).stdout.splitlines() if l.strip()}
found = sum(n in present for n in listed)
print(f"writer layout: {found} of the {len(listed)} functions hot.order lists are in this build"
      + ("" if found >= 0.9 * len(listed) else " (stale: run bench/writer-order.sh)"))
PY
status=0
for state in installed after-reboot; do
  # Fresh copies of both programs, so neither runs in whatever state the build left it.
  cp "$out/capture_ref" "$work/capture_ref"
  cp "$bin/outl-capture" "$work/outl-capture"
  if [ "$state" = after-reboot ]; then
    python3 - "$work/capture_ref" "$work/outl-capture" <<'PY'
import os, sys
for p in sys.argv[1:]:
    fd = os.open(p, os.O_RDONLY)
    os.fsync(fd)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)
PY
  fi
  # Two inboxes so the directories grow alike; both on the same file system as $TMPDIR.
  "$out/alternate" "$runs" 20 "$work/capture_ref" "$work/c-$state" buy-oat-milk \
    -- "$work/outl-capture" --quiet --inbox "$work/swift-$state" buy-oat-milk > "$out/writer-$state.txt"
  python3 - "$out/writer-$state.txt" "$state" <<'PY' || status=1
import statistics, sys
c, s = [], []
for line in open(sys.argv[1]):
    a, b = line.split()
    c.append(int(a) / 1e6)
    s.append(int(b) / 1e6)
mc, ms = statistics.median(c), statistics.median(s)
ratio = ms / mc
pairs = statistics.median(b / a for a, b in zip(c, s))
print(f"writer ({sys.argv[2]})  C reference {mc:.3f} ms  outl-capture {ms:.3f} ms  ratio {ratio:.2f}x"
      f" (median of pairs {pairs:.2f}x, {len(c)} pairs)  target 1.20x, floor 1.50x"
      f"  {'ok' if ratio <= 1.5 else 'SLOWER THAN FLOOR'}")
sys.exit(0 if ratio <= 1.5 else 1)
PY
done
exit $status
