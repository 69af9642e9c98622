# lib/scenario.sh: the reporting of a scenario test run against real devices (sync.sh, phone.sh):
# one summary line per check in $RESULTS ($T/results), counted at the end. Needs $T (lib/common.sh).
RESULTS=$T/results
: >"$RESULTS"

# die STEP WHY: a step of the test itself cannot go on (not the host's fault); exit 1, the trap cleans up.
die() { printf 'FAIL: %s: %s\n' "$1" "$2"; exit 1; }
step() { printf -- '-- [%3ds] %s\n' "$SECONDS" "$*"; }
# ok/fail: one summary line per check, collected for the final count.
ok() { printf 'ok   %s\n' "$*" | tee -a "$RESULTS"; }
fail() { printf 'FAIL %s\n' "$*" | tee -a "$RESULTS"; }

# dev_env D: sets DEVENV, D's HOME and XDG directories, for `env "${DEVENV[@]}" CMD`.
dev_env() {
  local h=$T/$1/home
  DEVENV=(HOME="$h" XDG_CONFIG_HOME="$h/.config" XDG_STATE_HOME="$h/.local/state")
}

# summarize NAME: the count of checks and failures; exit 1 when one failed. Sets SUMMARY_DONE so the
# exit trap does not call the run aborted.
summarize() {
  local total failed
  total=$(grep -cE '^(ok  |FAIL) ' "$RESULTS" || true)
  failed=$(grep -c '^FAIL' "$RESULTS" || true)
  SUMMARY_DONE=1
  echo "$1: $total checks, $failed failed, ${SECONDS}s"
  if [ "$failed" != 0 ]; then
    grep '^FAIL' "$RESULTS" | sed 's/^/  /'
    [ -n "${OUTL_KEEP_TMP:-}" ] || echo "  (OUTL_KEEP_TMP=1 keeps the workspaces and all logs)"
    exit 1
  fi
  echo "$1: ok"
}
