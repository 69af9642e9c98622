#!/bin/bash
# Proves the systemd harness with throwaway units and no outl code: notify, watchdog restart, .path, journal fields, catalog.
# Not run by `make check` (it lives in lib/); run it by hand when the harness or the host changes: bash Tests/integration/lib/harness-selftest.sh
set -u
. "$(dirname "$0")/systemd-harness.sh"

harness_start

units=$HARNESS_HOME/.config/systemd/user
harness_as_user mkdir -p "$units" "$HARNESS_HOME/selftest/inbox"
harness_undo_push "rm -rf $HARNESS_HOME/selftest $units/selftest-*"

# A Type=notify service speaking the protocol by hand, the way outld's libsystemd calls do.
harness_as_user tee "$HARNESS_HOME/selftest/notifier.sh" >/dev/null <<'EOF'
#!/bin/bash
# NotifyAccess=all: systemd-notify is a child process, not the main PID.
echo "selftest notifier up, WATCHDOG_USEC=$WATCHDOG_USEC"
systemd-notify --ready --status="idle; 0 drained"
logger --journald <<X
MESSAGE=selftest drained one
MESSAGE_ID=4f3e2d1c0b0a49f8a7b6c5d4e3f2a1b0
SELFTEST_CAPTURE_ID=$1
X
while sleep 1; do systemd-notify WATCHDOG=1; done
EOF
harness_as_user chmod +x "$HARNESS_HOME/selftest/notifier.sh"
harness_as_user tee "$units/selftest-notify.service" >/dev/null <<EOF
[Service]
Type=notify
NotifyAccess=all
ExecStart=$HARNESS_HOME/selftest/notifier.sh %n-\$\$
WatchdogSec=4
Restart=on-failure
RestartSec=200ms
EOF
harness_as_user tee "$units/selftest-drain.path" >/dev/null <<EOF
[Path]
DirectoryNotEmpty=$HARNESS_HOME/selftest/inbox
EOF
harness_as_user tee "$units/selftest-drain.service" >/dev/null <<EOF
[Service]
Type=oneshot
ExecStart=/bin/sh -c 'rm -f $HARNESS_HOME/selftest/inbox/*; echo selftest-drain emptied the inbox'
EOF
harness_user_systemctl daemon-reload || harness_fail "daemon-reload" "systemctl --user daemon-reload failed"

harness_user_systemctl start selftest-notify.service || harness_fail "notify" "start selftest-notify.service failed"
[ "$(harness_user_systemctl is-active selftest-notify.service)" = active ] || harness_fail "notify" "not active after start"
status=$(harness_user_systemctl show -p StatusText --value selftest-notify.service)
[ "$status" = "idle; 0 drained" ] || harness_fail "notify" "STATUS= not seen, StatusText='$status'"
harness_ok "Type=notify: READY=1 made it active, StatusText='$status'"

# logger exits at once, so journald may miss its cgroup (a known race): find logger's entry by its own fields,
# and check unit attribution on the service's stdout stream, whose metadata is taken once at connect time.
entry_found() { journalctl --no-pager -q MESSAGE_ID=4f3e2d1c0b0a49f8a7b6c5d4e3f2a1b0 | grep -q "selftest drained one"; }
harness_wait 15 "the selftest journal entry with MESSAGE_ID=4f3e…" entry_found
stdout_attributed() { journalctl --no-pager -q _SYSTEMD_USER_UNIT=selftest-notify.service | grep -q "selftest notifier up"; }
harness_wait 15 "the notifier's stdout line under _SYSTEMD_USER_UNIT=selftest-notify.service" stdout_attributed
harness_ok "root finds entries with journalctl MESSAGE_ID=… and _SYSTEMD_USER_UNIT=selftest-notify.service"
if [ "$HARNESS_USER_JOURNAL" = 1 ]; then
    user_sees_entry() { harness_user_journalctl -q -u selftest-notify MESSAGE_ID=4f3e2d1c0b0a49f8a7b6c5d4e3f2a1b0 | grep -q "selftest drained one"; }
    harness_wait 15 "journalctl --user as $HARNESS_USER to find the entry" user_sees_entry
    harness_ok "the user finds it with journalctl --user -u selftest-notify MESSAGE_ID=…"
fi

cat > /tmp/selftest.$$.catalog <<'EOF'
-- 4f3e2d1c0b0a49f8a7b6c5d4e3f2a1b0
Subject: selftest capture @SELFTEST_CAPTURE_ID@ drained
Defined-By: outl harness selftest

The harness selftest logged this entry.
EOF
harness_install_catalog /tmp/selftest.$$.catalog
rm -f /tmp/selftest.$$.catalog
explained=$(journalctl -x --no-pager -q MESSAGE_ID=4f3e2d1c0b0a49f8a7b6c5d4e3f2a1b0)
grep -q '░░ Subject: selftest capture selftest-notify.service-' <<<"$explained" ||
    harness_fail "catalog" "journalctl -x does not show the selftest catalog subject: $explained"
harness_ok "journalctl -x shows the catalog text, fields substituted"

pid=$(harness_user_systemctl show -p MainPID --value selftest-notify.service)
sleep 5 # longer than WatchdogSec: a pinging service must survive it
[ "$(harness_user_systemctl show -p NRestarts --value selftest-notify.service)" = 0 ] || harness_fail "watchdog" "restarted although it pinged"
kill -STOP "$pid"
restarted_once() { [ "$(harness_user_systemctl show -p ActiveState,NRestarts --value selftest-notify.service | tr '\n' ' ')" = "1 active " ]; }
harness_wait 30 "the watchdog to kill the frozen service and Restart= to bring it back (NRestarts=1, active)" restarted_once
kill -0 "$pid" 2>/dev/null && harness_fail "watchdog" "the frozen process $pid is still alive"
# The manager's own lines about a unit carry USER_UNIT= (set by the manager), not _SYSTEMD_USER_UNIT=.
journalctl --no-pager -q USER_UNIT=selftest-notify.service | grep -q 'Watchdog timeout' ||
    harness_fail "watchdog" "no 'Watchdog timeout' line from the manager for selftest-notify.service"
harness_ok "frozen service killed by the watchdog (Result=watchdog) and restarted (NRestarts=1)"

harness_user_systemctl stop selftest-notify.service
harness_user_systemctl start selftest-drain.path || harness_fail "path" "start selftest-drain.path failed"
harness_as_user touch "$HARNESS_HOME/selftest/inbox/one"
harness_wait 15 "selftest-drain.path to run selftest-drain.service and empty the inbox" \
    bash -c "[ -z \"\$(ls -A $HARNESS_HOME/selftest/inbox)\" ]"
harness_ok "DirectoryNotEmpty= .path unit ran its service"
harness_user_systemctl stop selftest-drain.path
echo "selftest passed"
