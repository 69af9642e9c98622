#!/usr/bin/env bash
# writer.sh: outl-capture (release) against the C reference doing the same syscalls, side by side.
# The floor: outl-capture must take at most 1.5x the C program's mean time per capture; the target
# is 1.2x. Each run is dominated by its fsyncs, so runs on a busy machine differ by tenths: compare
# builds side by side in one run.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${OUTL_BIN_DIR:-$(cd "$here/.." && swift build -c release --show-bin-path)}
out=$here/out
mkdir -p "$out"
cc -O2 -Wall -o "$out/capture_ref" "$here/c/capture_ref.c"
work=$(mktemp -d "${TMPDIR:-/tmp}/outl-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
# Two inboxes so the directories grow alike; both on the same file system as $TMPDIR.
hyperfine -N --warmup 20 --runs "${OUTL_BENCH_RUNS:-300}" --export-json "$out/writer.json" \
  -n "C reference" "$out/capture_ref $work/c buy-oat-milk" \
  -n "outl-capture" "$bin/outl-capture --quiet --inbox $work/swift buy-oat-milk" >&2
read -r c s < <(python3 -c '
import json, sys
r = {x["command"]: x["mean"] for x in json.load(open(sys.argv[1]))["results"]}
print(r["C reference"], r["outl-capture"])' "$out/writer.json")
python3 - "$c" "$s" <<'PY'
import sys
c, s = float(sys.argv[1]), float(sys.argv[2])
ratio = s / c
print(f"writer  C reference {c*1000:.3f} ms  outl-capture {s*1000:.3f} ms  ratio {ratio:.2f}x  target 1.20x, floor 1.50x  {'ok' if ratio <= 1.5 else 'SLOWER THAN FLOOR'}")
sys.exit(0 if ratio <= 1.5 else 1)
PY
