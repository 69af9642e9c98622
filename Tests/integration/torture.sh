#!/usr/bin/env bash
# torture.sh: writers capture unique lines in parallel while outld is killed with SIGKILL at random
# moments and at chosen crash points (inside a group commit, between the op and the deletes), then
# restarted; a final `outld --once`. Invariant, from the files: every capture whose writer exited 0
# is exactly once in the op log and once in its day's Markdown; the inbox and rejected/ are empty.
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

start_outld() { # crash point (optional) in OUTL_CRASH_POINT
  "$OUTLD" --log stderr >>"$T/outld.log" 2>&1 &
  OUTLD_PID=$!
}
reap() { { wait "$1"; } 2>/dev/null || true; }  # quietly: bash would print "Killed" for each round

"$CAPTURE" --quiet "warm-up tok-0-0-end" > "$T/warm.id" && echo "$(cat "$T/warm.id") tok-0-0-end" > "$T/ids-0"
for w in $(seq 1 $WRITERS); do writer "$w" & done
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
[ -z "$(ls -A "$INBOX/rejected" 2>/dev/null)" ] || { echo "FAIL: rejected/ not empty: $(ls "$INBOX/rejected")" >&2; exit 1; }
check_exactly_once "$IDS"
"$OUTL" --workspace "$WS" check >/dev/null || { echo "FAIL: outl check disagrees after the torture" >&2; exit 1; }
echo "torture: ok"
