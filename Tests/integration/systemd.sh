#!/bin/bash
# Issue 5, real systemd and journald: the installed units, READY/STATUS/WATCHDOG, journal fields, catalog, watchdog restart, .path variant.
# Fails (never skips) when the host forbids a step, saying which; bounded to 4 minutes; cleans up through the harness trap.
set -u
if [ -z "${OUTL_SYSTEMD_TEST_BOUNDED:-}" ]; then
    # One deadline for the whole test; SIGTERM on expiry still runs the cleanup trap.
    OUTL_SYSTEMD_TEST_BOUNDED=1 exec timeout -k 60 240 bash "$0" "$@"
fi

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
. "$here/lib/systemd-harness.sh"

step() { printf -- '-- %s\n' "$*"; }

BIN=${OUTL_BIN_DIR:-$repo/.build/debug}
for p in outld outl-capture; do
    [ -x "$BIN/$p" ] || harness_fail "binaries" "$BIN/$p is missing: build first (swift build) or set OUTL_BIN_DIR"
done
for f in Makefile systemd/outld.service.in systemd/outld-drain.service.in systemd/outld-drain.path.in systemd/outld.catalog; do
    [ -f "$repo/$f" ] || harness_fail "sources" "$repo/$f is missing"
done

step "start journald and a user manager"
harness_start

if [ "$HARNESS_MODE" = host-session ]; then
    # Your own session: never touch your real ~/outl; the units are pointed at a scratch workspace by drop-ins.
    WS=$(mktemp -d /tmp/outl-systemd-test.XXXXXX)/outl
    harness_undo_push "rm -rf ${WS%/outl}"
else
    WS=$HARNESS_HOME/outl # the shipped defaults, untouched
fi
INBOX=$WS/.outl/captures
UNITS=${XDG_CONFIG_HOME:-$HARNESS_HOME/.config}/systemd/user
[ "$HARNESS_MODE" = host-session ] || UNITS=$HARNESS_HOME/.config/systemd/user

# ---- install ----------------------------------------------------------------------------------------
step "install with make install-user as $HARNESS_USER"
# A shorter watchdog keeps the freeze step short and the merge step telling (nothing may hold the
# loop 3 s); outld must follow WATCHDOG_USEC whatever it is.
WATCHDOG=3
harness_as_user mkdir -p "$UNITS/outld.service.d" "$UNITS/outld-drain.service.d" "$UNITS/outld-drain.path.d"
harness_undo_push "rm -rf $UNITS/outld.service.d/50-outl-test.conf $UNITS/outld-drain.service.d/50-outl-test.conf $UNITS/outld-drain.path.d/50-outl-test.conf"
{
    echo "[Service]"
    echo "WatchdogSec=$WATCHDOG"
    [ "$HARNESS_MODE" = host-session ] && echo "Environment=OUTL_WORKSPACE=$WS"
} | harness_as_user tee "$UNITS/outld.service.d/50-outl-test.conf" >/dev/null
if [ "$HARNESS_MODE" = host-session ]; then
    printf '[Service]\nEnvironment=OUTL_WORKSPACE=%s\n' "$WS" | harness_as_user tee "$UNITS/outld-drain.service.d/50-outl-test.conf" >/dev/null
    printf '[Path]\nDirectoryNotEmpty=\nDirectoryNotEmpty=%s\n' "$INBOX" | harness_as_user tee "$UNITS/outld-drain.path.d/50-outl-test.conf" >/dev/null
fi

# make install-user builds release first and writes temporaries next to the sources; the test user can do
# neither in this tree, so it runs on a user-owned copy with the already-built binaries (SWIFT=true skips the build).
SRC=$(mktemp -d /tmp/outl-systemd-src.XXXXXX)
harness_undo_push "rm -rf $SRC"
cp -r "$repo/Makefile" "$repo/systemd" "$SRC/"
for d in man share; do [ -d "$repo/$d" ] && cp -r "$repo/$d" "$SRC/"; done
mkdir "$SRC/bin" && cp "$BIN/outld" "$BIN/outl-capture" "$SRC/bin/"
[ -x "$BIN/outl" ] && cp "$BIN/outl" "$SRC/bin/"
[ "$HARNESS_MODE" = host-session ] || chown -R "$HARNESS_USER:" "$SRC"
harness_undo_push "HARNESS_CMD_TIMEOUT=30 harness_user_systemctl disable --now outld.service outld-drain.path outld-drain.service >/dev/null 2>&1 || true"
if ! out=$(HARNESS_CMD_TIMEOUT=90 harness_as_user make -s -C "$SRC" install-user SWIFT=true RELEASE_BIN="$SRC/bin" 2>&1); then
    harness_fail "make install-user" "failed: $(tail -5 <<<"$out")"
fi
CAPTURE=$HARNESS_HOME/.local/bin/outl-capture
[ -x "$CAPTURE" ] || harness_fail "make install-user" "did not install $CAPTURE"
for u in outld.service outld-drain.service outld-drain.path; do
    [ -f "$UNITS/$u" ] || harness_fail "make install-user" "did not install $UNITS/$u"
done
harness_ok "make install-user installed the binaries and units and ran enable --now outld.service"

capture() { # capture TEXT -> prints the capture id
    harness_as_user "$CAPTURE" --workspace "$WS" --source cli "$@" 2>/dev/null
}
unit_prop() { harness_user_systemctl show -p "$2" --value "$1"; }
final_files() { ls -A "$INBOX" 2>/dev/null | grep -E '^[0-9A-HJKMNP-TV-Z]{26}\.json$'; }
inbox_drained() { [ -z "$(final_files)" ]; }

# The block id is the ULID's 128 bits spelled as a lower-case UUID (SPEC section 4).
ulid_to_uuid() {
    local alphabet=0123456789ABCDEFGHJKMNPQRSTVWXYZ ulid=$1 bits="" hex="" i c v b
    for ((i = 0; i < 26; i++)); do
        c=${ulid:i:1}; v=${alphabet%%"$c"*}; v=${#v}
        for b in 16 8 4 2 1; do bits+=$(( (v / b) % 2 )); done
    done
    bits=${bits:2}
    for ((i = 0; i < 128; i += 4)); do hex+=$(printf '%x' "$((2#${bits:i:4}))"); done
    echo "${hex:0:8}-${hex:8:4}-${hex:12:4}-${hex:16:4}-${hex:20:12}"
}

# journal_field ID FIELD: the FIELD of the newest journal entry whose OUTL_CAPTURE_ID is ID.
journal_field() { harness_journalctl -q -o cat --output-fields="$2" OUTL_CAPTURE_ID="$1" | tail -1; }
entry_logged() { [ -n "$(journal_field "$1" OUTL_BLOCK_ID)" ]; }

# check_landed ID TEXT UNIT: one journal entry with the right fields, and the line once in that day's page.
check_landed() {
    local id=$1 text=$2 what=$3 block day page n
    harness_wait 20 "the journal entry with OUTL_CAPTURE_ID=$id ($what)" entry_logged "$id"
    block=$(journal_field "$id" OUTL_BLOCK_ID)
    [ "$block" = "$(ulid_to_uuid "$id")" ] || harness_fail "$what" "OUTL_BLOCK_ID=$block, expected $(ulid_to_uuid "$id") from the ULID"
    [ "$(journal_field "$id" OUTL_SOURCE)" = cli ] || harness_fail "$what" "OUTL_SOURCE is '$(journal_field "$id" OUTL_SOURCE)', expected cli"
    [ -n "$(journal_field "$id" MESSAGE_ID)" ] || harness_fail "$what" "the drained entry has no MESSAGE_ID"
    day=$(journal_field "$id" OUTL_JOURNAL_DAY)
    [[ $day =~ ^[0-9]{4}[-_][0-9]{2}[-_][0-9]{2}$ ]] || harness_fail "$what" "OUTL_JOURNAL_DAY is '$day', expected a date"
    page=$WS/journals/${day//-/_}.md
    [ -f "$page" ] || harness_fail "$what" "journal page $page does not exist"
    n=$(grep -cF -- "$text" "$page")
    [ "$n" = 1 ] || harness_fail "$what" "'$text' appears $n times in $page, expected once"
    harness_ok "$what: '$text' is in $(basename "$page") once; journal entry has OUTL_BLOCK_ID=$block OUTL_JOURNAL_DAY=$day OUTL_SOURCE=cli"
}

# ---- outld.service: READY=1, STATUS= ------------------------------------------------------------------
step "outld.service reaches active (READY=1)"
outld_state() { unit_prop outld.service ActiveState; }
outld_active() { [ "$(outld_state)" = active ]; }
deadline=$((SECONDS + 30))
until outld_active; do
    case $(outld_state) in failed) harness_fail "outld.service" "failed to start: $(unit_prop outld.service Result)";; esac
    [ "$SECONDS" -lt "$deadline" ] || harness_fail "outld.service" "timed out after 30s waiting for ActiveState=active (READY=1); state $(outld_state)"
    sleep 0.2
done
harness_ok "outld.service is active: READY=1 arrived (Type=notify)"
status=$(unit_prop outld.service StatusText)
[[ $status =~ ^idle\;\ [0-9]+\ drained,\ [0-9]+\ rejected,\ inbox\ empty$ ]] ||
    harness_fail "STATUS=" "StatusText is '$status', expected 'idle; N drained, M rejected, inbox empty'"
harness_ok "STATUS= reads '$status'"
[ "$(unit_prop outld.service WatchdogUSec)" = "${WATCHDOG}s" ] || harness_fail "watchdog" "WatchdogUSec is $(unit_prop outld.service WatchdogUSec)"

# ---- a capture through the running daemon ----------------------------------------------------------------
step "capture a line with outl-capture; outld drains it"
text1="systemd harness line one $$"
id1=$(capture "$text1") || harness_fail "outl-capture" "exit $? for '$text1'"
[[ $id1 =~ ^[0-9A-HJKMNP-TV-Z]{26}$ ]] || harness_fail "outl-capture" "printed '$id1', not a ULID"
harness_wait 20 "outld to drain $id1 from $INBOX" inbox_drained
check_landed "$id1" "$text1" "drained by outld.service"
[ "$(journal_field "$id1" _SYSTEMD_USER_UNIT)" = outld.service ] || [ "$HARNESS_MODE" = host-session ] ||
    harness_fail "journal" "the entry's _SYSTEMD_USER_UNIT is '$(journal_field "$id1" _SYSTEMD_USER_UNIT)', expected outld.service"
if [ "$HARNESS_USER_JOURNAL" = 1 ]; then
    harness_user_journalctl -q OUTL_CAPTURE_ID="$id1" | grep -q . ||
        harness_fail "journal" "journalctl --user OUTL_CAPTURE_ID=$id1 as $HARNESS_USER finds nothing"
    harness_ok "journalctl --user OUTL_CAPTURE_ID=$id1 finds it"
else
    echo "note: not checked here: journalctl --user as $HARNESS_USER (a standalone journald keeps one volatile, unsplit journal; see docs/TESTING-SYSTEMD.md)"
fi

step "a capture with an attachment: its journal entry counts it (OUTL_ATTACHMENTS=1), its asset is in assets/"
attach_file=$HARNESS_HOME/note-$$.txt
harness_as_user sh -c "printf 'an attached note' > '$attach_file'"
text_att="systemd harness attachment $$"
id_att=$(capture --attach "$attach_file" "$text_att") || harness_fail "outl-capture --attach" "exit $? for '$text_att'"
harness_wait 20 "outld to drain $id_att from $INBOX" inbox_drained
check_landed "$id_att" "$text_att" "drained with an attachment by outld.service"
[ "$(journal_field "$id_att" OUTL_ATTACHMENTS)" = 1 ] ||
    harness_fail "journal" "OUTL_ATTACHMENTS is '$(journal_field "$id_att" OUTL_ATTACHMENTS)', expected 1"
ls "$WS/assets" | grep -q "^note-$$_" || harness_fail "assets" "no note-$$_* in $WS/assets: $(ls "$WS/assets" 2>&1)"
harness_ok "OUTL_ATTACHMENTS=1 and the asset $(ls "$WS/assets" | grep "^note-$$_")"

step "journalctl -x explains the entry from systemd/outld.catalog"
harness_install_catalog "$repo/systemd/outld.catalog"
mid=$(journal_field "$id1" MESSAGE_ID)
grep -qi -- "^-- $mid" "$repo/systemd/outld.catalog" || harness_fail "catalog" "MESSAGE_ID $mid of a drained entry is not in systemd/outld.catalog"
explained=$(harness_journalctl -x -q OUTL_CAPTURE_ID="$id1")
grep -q '^░░ Subject: ' <<<"$explained" || harness_fail "catalog" "journalctl -x shows no catalog text for MESSAGE_ID=$mid: $explained"
harness_ok "journalctl -x: $(grep -m1 '^░░ Subject: ' <<<"$explained" | sed 's/^░░ //')"

# ---- watchdog: a frozen daemon is killed and restarted, nothing lost --------------------------------------
step "outld pings the watchdog while healthy"
sleep $((WATCHDOG + 2))
[ "$(unit_prop outld.service NRestarts)" = 0 ] && outld_active ||
    harness_fail "watchdog" "outld.service restarted while idle: WATCHDOG=1 is not sent at least every ${WATCHDOG}s"
harness_ok "idle for $((WATCHDOG + 2))s > WatchdogSec=${WATCHDOG}s without a restart"

step "another device's long op log arrives: merged in slices under WatchdogSec=${WATCHDOG}s, a capture drained meanwhile"
# Enough ops that reading them in one go would hold this (debug) outld's loop past the watchdog
# (404,000 ops: 66 slices of 50 ms here, over 3 s in one go): in slices it pings between them,
# drains, and says how far in STATUS=.
MERGE_OPS=${OUTL_SYSTEMD_MERGE_OPS:-400000}
OTHER=$(mktemp -d /tmp/outl-systemd-other.XXXXXX)
harness_undo_push "rm -rf $OTHER"
"$BIN/outl" --workspace "$OTHER/ws" --state-dir "$OTHER/state" debug-generate "$MERGE_OPS" >/dev/null 2>&1 ||
    harness_fail "merge" "outl debug-generate $MERGE_OPS failed"
theirs=$(ls "$OTHER/ws/.outl/ops")
pid=$(unit_prop outld.service MainPID)
restarts=$(unit_prop outld.service NRestarts)
tmp_ops="$WS/.outl/ops/.syncthing.$theirs.tmp"
cp "$OTHER/ws/.outl/ops/$theirs" "$tmp_ops" && chown "$HARNESS_USER:" "$tmp_ops" 2>/dev/null
merge_started=$(date '+%Y-%m-%d %H:%M:%S')
mv "$tmp_ops" "$WS/.outl/ops/$theirs" || harness_fail "merge" "cannot deliver $theirs"
merging() { [[ $(unit_prop outld.service StatusText) == merging\ * ]]; }
harness_wait 30 "STATUS= to say merging" merging
harness_ok "StatusText: '$(unit_prop outld.service StatusText)'"
text_m="systemd harness line captured during a merge $$"
id_m=$(capture "$text_m") || harness_fail "outl-capture" "exit $? during the merge"
harness_wait 30 "outld to drain $id_m during the merge" inbox_drained
merged_logged() { harness_journalctl -q -o cat --since "$merge_started" | grep -q "ops read in [0-9]* slices"; }
merged_logged && harness_fail "merge" "the merge had ended before the capture was drained: $MERGE_OPS ops are too few to see it"
check_landed "$id_m" "$text_m" "drained while the merge was under way"
harness_wait 120 "the merge of $MERGE_OPS captures to end" merged_logged
harness_ok "$(harness_journalctl -q -o cat --since "$merge_started" | grep -m1 'ops read in')"
[ "$(unit_prop outld.service NRestarts)" = "$restarts" ] && [ "$(unit_prop outld.service MainPID)" = "$pid" ] ||
    harness_fail "watchdog" "outld.service was restarted during the merge (NRestarts $(unit_prop outld.service NRestarts), pid $(unit_prop outld.service MainPID) was $pid)"
harness_ok "no restart: pid $pid pinged the watchdog throughout"

step "freeze outld (SIGSTOP) until the watchdog kills it and Restart= brings it back"
pid=$(unit_prop outld.service MainPID)
[ "${pid:-0}" -gt 0 ] || harness_fail "watchdog" "outld.service has no MainPID"
kill -STOP "$pid" || harness_fail "watchdog" "cannot SIGSTOP outld (pid $pid)"
text2="systemd harness line two, captured while outld was frozen $$"
id2=$(capture "$text2") || harness_fail "outl-capture" "exit $? while outld was frozen"
restarted() { [ "$(unit_prop outld.service NRestarts)" -ge 1 ] && outld_active && [ "$(unit_prop outld.service MainPID)" != "$pid" ]; }
harness_wait $((WATCHDOG * 2 + 30)) "the watchdog to kill frozen outld (pid $pid) and Restart= to start a new one" restarted
harness_journalctl -q USER_UNIT=outld.service | grep -q 'Watchdog timeout' ||
    harness_fail "watchdog" "outld.service was restarted, but not by a 'Watchdog timeout'"
harness_ok "watchdog timeout killed pid $pid; outld.service restarted (pid $(unit_prop outld.service MainPID))"
harness_wait 20 "the restarted outld to drain $id2" inbox_drained
check_landed "$id2" "$text2" "captured while frozen, drained after the restart"
check_landed "$id1" "$text1" "the first capture after the restart"

# ---- the daemonless variant -----------------------------------------------------------------------------
step "outld-drain.path with outld.service stopped"
harness_user_systemctl stop outld.service || harness_fail "stop" "systemctl --user stop outld.service failed"
[ "$(unit_prop outld.service ActiveState)" = inactive ] ||
    harness_fail "stop" "outld.service is $(unit_prop outld.service ActiveState) after stop (Result=$(unit_prop outld.service Result)), expected inactive"
[ "$(unit_prop outld.service Result)" = success ] || harness_fail "stop" "outld.service stopped with Result=$(unit_prop outld.service Result)"
harness_ok "outld.service stopped cleanly on SIGTERM"
harness_user_systemctl start outld-drain.path || harness_fail "outld-drain.path" "systemctl --user start outld-drain.path failed"
text3="systemd harness line three, drained by outld --once $$"
id3=$(capture "$text3") || harness_fail "outl-capture" "exit $? with only the path unit"
harness_wait 30 "outld-drain.path to start outld-drain.service and drain $id3" inbox_drained
check_landed "$id3" "$text3" "drained by outld-drain.service (outld --once)"
[ "$(unit_prop outld.service ActiveState)" = inactive ] || harness_fail "outld-drain.path" "outld.service was started again"
[ "$(unit_prop outld-drain.service Result)" = success ] || harness_fail "outld-drain.path" "outld-drain.service Result=$(unit_prop outld-drain.service Result)"
harness_ok "outld-drain.service ran outld --once with Result=success; outld.service stayed stopped"

step "stop everything"
harness_user_systemctl stop outld-drain.path || harness_fail "stop" "systemctl --user stop outld-drain.path failed"
harness_user_systemctl disable outld.service >/dev/null 2>&1
# An outld --once the path unit started last may still be writing the pages of the merged ops.
harness_user_systemctl stop outld-drain.service >/dev/null 2>&1
no_outld() { [ -z "$(pgrep -u "$HARNESS_USER" -x outld)" ]; }
harness_wait 30 "every outld to exit" no_outld
harness_ok "no outld process left"
echo "systemd integration test passed ($HARNESS_MODE mode)"
