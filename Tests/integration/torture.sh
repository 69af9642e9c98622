#!/usr/bin/env bash
# torture.sh: writers capture unique lines in parallel while outld is killed with SIGKILL at random
# moments and at chosen crash points (inside a group commit, between the op and the deletes), then
# restarted; a final `outld --once`. Invariant, from the files: every capture whose writer exited 0
# is exactly once in the op log and once in its day's Markdown; the inbox and rejected/ are empty.
# One writer carries an attachment with each capture: each is then one asset in assets/ with its
# bytes, linked once, and assets/ holds nothing else (no temp, no second copy).
# `make check` runs a short version; `make torture` (OUTL_TORTURE=long) a long one.
source "$(dirname "$0")/lib/common.sh"

if [ "${OUTL_TORTURE:-}" = long ]; then WRITERS=6 PER=2000 ROUNDS_MIN=200; else WRITERS=4 PER=500 ROUNDS_MIN=40; fi
IDS=$T/ids

writer() { # writer W: PER captures, one "ID TOKEN" line per capture that exited 0
  local w=$1 n id
  for n in $(seq 1 "$PER"); do
    if id=$("$CAPTURE" --quiet --source torture "line tok-$w-$n-end" 2>>"$T/writer-$w.err"); then
      echo "$id tok-$w-$n-end" >> "$T/ids-$w"
    fi
  done
}

attach_writer() { # PER/5 captures, each with a file of its own: "ID TOKEN FILE" per capture that exited 0
  local n id f
  mkdir -p "$T/att"
  for n in $(seq 1 $((PER / 5))); do
    f=$T/att/file-$n.txt
    printf 'attachment %s\n%0500d\n' "tok-80-$n-end" "$n" > "$f"
    if id=$("$CAPTURE" --quiet --source torture --attach "$f" "with a file tok-80-$n-end" 2>>"$T/writer-att.err"); then
      echo "$id tok-80-$n-end" >> "$T/ids-att"
      echo "$id $f" >> "$T/files-att"
    fi
  done
}

start_outld() { # crash point (optional) in OUTL_CRASH_POINT
  "$OUTLD" --log stderr >>"$T/outld.log" 2>&1 &
  OUTLD_PID=$!
}
reap() { { wait "$1"; } 2>/dev/null || true; }  # quietly: bash would print "Killed" for each round

"$CAPTURE" --quiet "warm-up tok-0-0-end" > "$T/warm.id" && echo "$(cat "$T/warm.id") tok-0-0-end" > "$T/ids-0"
for w in $(seq 1 $WRITERS); do writer "$w" & done
attach_writer &
WRITER_PIDS=$(jobs -p)

rounds=0 points=0
crash_points=(after-append before-append after-unlink)
start_outld
while kill -0 $WRITER_PIDS 2>/dev/null || [ $rounds -lt $ROUNDS_MIN ]; do
  sleep "0.0$((RANDOM % 9 + 1))"
  if [ $((rounds % 3)) -eq 2 ]; then
    # A chosen crash point: outld kills itself with SIGKILL right there, on its next batch.
    kill -9 "$OUTLD_PID" 2>/dev/null || true; reap "$OUTLD_PID"
    OUTL_CRASH_POINT=${crash_points[$((points % 3))]} start_outld; points=$((points + 1))
    "$CAPTURE" --quiet "crash point tok-9$points-0-end" >> "$T/cp.id" && echo "$(tail -n1 "$T/cp.id") tok-9$points-0-end" >> "$T/ids-cp"
    sleep 0.2
  fi
  kill -9 "$OUTLD_PID" 2>/dev/null || true
  reap "$OUTLD_PID"
  rounds=$((rounds + 1))
  start_outld
  # Never spin forever if the writers are done and the rounds are met.
  kill -0 $WRITER_PIDS 2>/dev/null || [ $rounds -lt $ROUNDS_MIN ] || break
done
wait $WRITER_PIDS 2>/dev/null || true
# The last outld must be up (its signal mask set) before SIGTERM means "stop gracefully".
kill -9 "$OUTLD_PID" 2>/dev/null || true; reap "$OUTLD_PID"
"$OUTLD" --log stderr >"$T/last.log" 2>&1 &
OUTLD_PID=$!
wait_for 30 "the last outld to be ready" grep -q "ready" "$T/last.log"
kill -TERM "$OUTLD_PID"; wait "$OUTLD_PID" || { echo "FAIL: outld did not exit 0 on SIGTERM: $(tail -3 "$T/last.log")" >&2; exit 1; }
"$OUTLD" --once --log stderr >"$T/once.out" 2>>"$T/outld.log" || { echo "FAIL: final outld --once: $(cat "$T/once.out")" >&2; exit 1; }
cat "$T"/ids-* > "$IDS"
echo "torture: rounds $rounds (crash points $points), writers $WRITERS x $PER"
inbox_empty || { echo "FAIL: inbox not empty: $(ls "$INBOX")" >&2; exit 1; }
[ -z "$(find "$INBOX" -maxdepth 1 -name '*.att' -print -quit)" ] || { echo "FAIL: attachments left in the inbox: $(ls "$INBOX")" >&2; exit 1; }
[ -z "$(ls -A "$INBOX/rejected" 2>/dev/null)" ] || { echo "FAIL: rejected/ not empty: $(ls "$INBOX/rejected")" >&2; exit 1; }
check_exactly_once "$IDS"
python3 - "$T/files-att" "$WS" <<'PY' || exit 1
# Each attachment whose writer exited 0: one asset with its bytes, linked once; nothing else in assets/.
import glob, hashlib, os, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
ws = sys.argv[2]
assets = sorted(os.listdir(os.path.join(ws, "assets")))
pages = "".join(open(p, encoding="utf-8").read() for p in glob.glob(os.path.join(ws, "journals/*.md")))
crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
bad = []
for ulid, path in rows:
    ms = 0
    for ch in ulid[:10]: ms = ms * 32 + crockford.index(ch)
    data = open(path, "rb").read()
    name = "%s_%d_%s.txt" % (os.path.basename(path)[:-4].replace(".", "_"), ms, hashlib.sha256(data).hexdigest()[:8])
    if name not in assets: bad.append("missing " + name); continue
    if open(os.path.join(ws, "assets", name), "rb").read() != data: bad.append("other bytes in " + name)
    if pages.count("(../assets/%s)" % name) != 1: bad.append("linked %d times: %s" % (pages.count(name), name))
extra = len(assets) - len(rows)
print(f"attachments {len(rows)}, assets {len(assets)}, problems {len(bad)}")
if bad or extra: print("FAIL:", bad[:5], f"{extra} more files in assets/ than attachments: {assets[:5]}"); sys.exit(1)
PY
"$OUTL" --workspace "$WS" check >/dev/null || { echo "FAIL: outl check disagrees after the torture" >&2; exit 1; }
echo "torture: ok"
