# common.sh: shared helpers for the integration scripts: a private HOME/XDG tree per test, the
# binaries under test, bounded waits, and the invariant checker. Sourced, not run.
set -euo pipefail
BIN=${OUTL_BIN_DIR:?OUTL_BIN_DIR must name the directory with outl-capture, outld and outl}
CAPTURE=$BIN/outl-capture
OUTLD=$BIN/outld
OUTL=$BIN/outl
for b in "$CAPTURE" "$OUTLD" "$OUTL"; do [ -x "$b" ] || { echo "missing binary $b (run make)" >&2; exit 1; }; done

# A throw-away home so nothing touches the real ~/outl, ~/.config or ~/.local/state.
T=$(mktemp -d "${TMPDIR:-/tmp}/outl-it.XXXXXX")
export HOME=$T/home XDG_CONFIG_HOME=$T/home/.config XDG_STATE_HOME=$T/home/.local/state
unset OUTL_WORKSPACE OUTL_CAPTURE_INBOX NOTIFY_SOCKET JOURNAL_STREAM WATCHDOG_USEC WATCHDOG_PID || true
mkdir -p "$HOME"
WS=$HOME/outl
INBOX=$WS/.outl/captures
# The workspace, as outld's first start leaves it: only the daemon creates one, and the writers
# here may run before it starts.
mkdir -p "$WS"
cleanup_common() {
  local pids; pids=$(jobs -p || true)
  [ -n "$pids" ] && kill -9 $pids 2>/dev/null || true
  [ -n "${OUTL_KEEP_TMP:-}" ] && echo "kept $T" || rm -rf "$T"
}
trap cleanup_common EXIT

# wait_for SECONDS DESCRIPTION COMMAND...: polls COMMAND every 50 ms (a test harness may poll;
# the daemon never does) and fails with DESCRIPTION when time runs out.
wait_for() {
  local limit=$1 what=$2; shift 2
  local end=$((SECONDS + limit))
  until "$@"; do
    if [ $SECONDS -ge $end ]; then echo "FAIL: timed out after ${limit}s waiting for $what" >&2; return 1; fi
    sleep 0.05
  done
}

# The Swift toolchain's directory (/opt/swift/usr): the one above its runtime's lib/, as
# swift -print-target-info names that; a test hides it to run programs as on a machine without it.
swift_toolchain() {
  local runtime
  runtime=$(swift -print-target-info | python3 -c 'import json, sys; print(json.load(sys.stdin)["paths"]["runtimeLibraryPaths"][0])')
  echo "${runtime%%/lib/swift*}"
}

inbox_empty() { [ -z "$(find "$INBOX" -maxdepth 1 -name '*.json' -print -quit 2>/dev/null)" ]; }

# check_exactly_once IDS_FILE: every "ID TOKEN" line (a capture whose writer exited 0) must have
# its token exactly once in the op log and exactly once in the journals; prints the totals.
check_exactly_once() {
  python3 - "$1" "$WS" <<'PY'
import os, sys, glob, collections
ids_file, ws = sys.argv[1], sys.argv[2]
tokens = [l.split()[1] for l in open(ids_file) if l.strip()]
def count(paths):
    c = collections.Counter()
    want = set(tokens)
    for p in paths:
        with open(p, 'rb') as f:
            data = f.read().decode('utf-8', 'replace')
        for t in want:
            pass
        # tokens are "tok-<w>-<n>-end" and never prefixes of one another
        import re
        for m in re.finditer(r'tok-\d+-\d+-end', data):
            c[m.group(0)] += 1
    return c
ops = count(glob.glob(os.path.join(ws, '.outl/ops/ops-*.jsonl')))
md = count(glob.glob(os.path.join(ws, 'journals/*.md')))
lost = [t for t in tokens if ops[t] == 0 or md[t] == 0]
doubled = [t for t in tokens if ops[t] > 1 or md[t] > 1]
print(f"captures {len(tokens)}, lost {len(lost)}, doubled {len(doubled)}")
if lost: print("lost e.g.:", lost[:5])
if doubled: print("doubled e.g.:", doubled[:5], [(ops[t], md[t]) for t in doubled[:5]])
sys.exit(1 if lost or doubled else 0)
PY
}
