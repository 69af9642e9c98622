# Real systemd-journald + a real `systemd --user` for integration tests, on hosts whose PID 1 is not systemd.
# Source it; every wait is bounded and names what it waits for; harness_stop undoes exactly what harness_start did.
#
# Public functions (see docs/TESTING-SYSTEMD.md for why each step is done the way it is):
#   harness_start                 journald + a user manager for $OUTL_TEST_USER (idempotent); installs the cleanup trap
#   harness_stop                  stop what harness_start started, remove what it created (safe to call twice)
#   harness_user_systemctl ARGS   `systemctl --user ARGS` in the test user's manager
#   harness_as_user CMD ARGS      run CMD as the test user with HOME, XDG_RUNTIME_DIR, DBUS_SESSION_BUS_ADDRESS, PATH
#   harness_journalctl ARGS       `journalctl --no-pager ARGS` over the journal that holds the user's services
#   harness_user_journalctl ARGS  `journalctl --user --no-pager ARGS` as the test user (what the man page promises)
#   harness_install_catalog FILE  make `journalctl -x` know FILE's entries (removed again by harness_stop)
#   harness_wait SECS WHAT CMD..  poll CMD until it succeeds; fail with "timed out after SECS s waiting for WHAT"
#   harness_fail STEP WHY         print "FAIL: STEP: WHY" plus diagnostics, then exit 1 (the trap cleans up)
#   harness_ok WHAT               print "ok: WHAT"
# After harness_start: HARNESS_MODE (private|host-root|host-session), HARNESS_USER, HARNESS_UID, HARNESS_HOME,
# HARNESS_USER_JOURNAL (1 when `journalctl --user` as the test user is expected to work).

OUTL_TEST_USER=${OUTL_TEST_USER:-outltest}
HARNESS_LOCK=/run/outl-systemd-harness.lock
HARNESS_JOURNALD=/lib/systemd/systemd-journald
HARNESS_SYSTEMD=/lib/systemd/systemd
HARNESS_STARTED=${HARNESS_STARTED:-0}

harness_log() { printf '%s\n' "harness: $*" >&2; }
harness_ok() { printf 'ok: %s\n' "$*"; }

harness_fail() {
    local step=$1; shift
    printf 'FAIL: %s: %s\n' "$step" "$*"
    harness_diagnostics >&2 || true
    exit 1
}

# Last words worth reading when a step fails: the manager's view and the newest journal lines.
harness_diagnostics() {
    [ "$HARNESS_STARTED" = 1 ] || return 0
    echo "---- diagnostics: user units (mode $HARNESS_MODE)"
    HARNESS_CMD_TIMEOUT=10 harness_user_systemctl --no-pager --all list-units 'outld*' 2>&1 | head -20
    echo "---- diagnostics: last journal entries"
    timeout 10 journalctl --no-pager -n 25 ${HARNESS_UID:+_UID=$HARNESS_UID} 2>&1 | tail -25
    echo "----"
}

# harness_wait SECS WHAT CMD... : the only way this harness waits; 0.2 s polls, never unbounded.
harness_wait() {
    local secs=$1 what=$2; shift 2
    local deadline=$((SECONDS + secs))
    until "$@" >/dev/null 2>&1; do
        if [ "$SECONDS" -ge "$deadline" ]; then
            harness_fail "wait" "timed out after ${secs}s waiting for $what"
        fi
        sleep 0.2
    done
}

harness_pid1_is_systemd() {
    [ -d /run/systemd/system ] && [ "$(ps -p 1 -o comm= 2>/dev/null)" = systemd ]
}

# Every command run as the user is bounded by $HARNESS_CMD_TIMEOUT (default 60 s).
harness_as_user() {
    local t=${HARNESS_CMD_TIMEOUT:-60}
    if [ "$HARNESS_MODE" = host-session ]; then
        timeout "$t" env HOME="$HARNESS_HOME" PATH="$HOME/.local/bin:$PATH" "$@"
    else
        timeout "$t" runuser -u "$HARNESS_USER" -- env HOME="$HARNESS_HOME" USER="$HARNESS_USER" LOGNAME="$HARNESS_USER" \
            XDG_RUNTIME_DIR="/run/user/$HARNESS_UID" \
            DBUS_SESSION_BUS_ADDRESS="unix:path=/run/user/$HARNESS_UID/bus" \
            PATH="$HARNESS_HOME/.local/bin:/usr/local/bin:/usr/bin:/bin" \
            ${TZ:+TZ="$TZ"} "$@"
    fi
}

harness_user_systemctl() { harness_as_user systemctl --user "$@"; }

harness_journalctl() {
    if [ "$HARNESS_MODE" = host-session ]; then
        timeout 30 journalctl --user --no-pager "$@"
    else
        timeout 30 journalctl --no-pager "$@"
    fi
}

harness_user_journalctl() { harness_as_user journalctl --user --no-pager "$@"; }

# --- cleanup bookkeeping: every undo step is recorded as it becomes necessary, run in reverse ----------
HARNESS_UNDO=()
harness_undo_push() { HARNESS_UNDO+=("$1"); }

harness_stop() {
    local i
    [ "${#HARNESS_UNDO[@]}" -gt 0 ] || { HARNESS_STARTED=0; return 0; }
    for ((i = ${#HARNESS_UNDO[@]} - 1; i >= 0; i--)); do
        eval "${HARNESS_UNDO[$i]}" || harness_log "cleanup step failed: ${HARNESS_UNDO[$i]}"
    done
    HARNESS_UNDO=()
    HARNESS_STARTED=0
}

harness_trap() {
    local rc=$?
    trap - EXIT INT TERM
    harness_stop
    exit "$rc"
}

# --- start ------------------------------------------------------------------------------------------
harness_start() {
    [ "$HARNESS_STARTED" = 1 ] && return 0
    trap harness_trap EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    HARNESS_STARTED=1

    if harness_pid1_is_systemd; then
        harness_start_host
    else
        harness_start_private
    fi
}

# A developer machine: PID 1 is systemd and journald already runs.
harness_start_host() {
    if [ "$(id -u)" != 0 ]; then
        # The caller's own session manager and journal; the test must not touch the user's real data,
        # which the test script arranges (see systemd.sh: it points the units at a scratch workspace).
        HARNESS_MODE=host-session
        HARNESS_USER=$(id -un); HARNESS_UID=$(id -u); HARNESS_HOME=$HOME
        HARNESS_USER_JOURNAL=1
        timeout 10 systemctl --user is-system-running >/dev/null 2>&1 ||
            [ "$(timeout 10 systemctl --user is-system-running 2>/dev/null)" = degraded ] ||
            harness_fail "user manager" "this session has no running user manager (systemctl --user is-system-running)"
        harness_ok "using this session's user manager ($HARNESS_USER) and journald"
        return 0
    fi
    # Root on a systemd host: the test user's own user@UID.service, started by the host's PID 1.
    HARNESS_MODE=host-root
    harness_lock
    harness_ensure_user
    if ! timeout 30 systemctl start "user@$HARNESS_UID.service"; then
        harness_fail "user manager" "systemctl start user@$HARNESS_UID.service failed"
    fi
    harness_undo_push "timeout 30 systemctl stop user@$HARNESS_UID.service"
    harness_wait 30 "user@$HARNESS_UID.service to reach running" harness_user_manager_up
    HARNESS_USER_JOURNAL=1
    harness_ok "user manager for $HARNESS_USER via the host's user@$HARNESS_UID.service"
}

# Serialise harness users on one machine: journald, /run/systemd/system and the test user are global.
harness_lock() {
    exec {HARNESS_LOCK_FD}>"$HARNESS_LOCK" || harness_fail "lock" "cannot open $HARNESS_LOCK"
    flock -w 120 "$HARNESS_LOCK_FD" || harness_fail "lock" "another systemd harness held $HARNESS_LOCK for 120s"
    harness_undo_push "exec {HARNESS_LOCK_FD}>&-"
}

harness_ensure_user() {
    HARNESS_USER=$OUTL_TEST_USER
    if ! id -u "$HARNESS_USER" >/dev/null 2>&1; then
        useradd -m -s /bin/bash "$HARNESS_USER" || harness_fail "test user" "useradd -m $HARNESS_USER failed"
        harness_undo_push "userdel -r -f $HARNESS_USER >/dev/null 2>&1"
        harness_log "created user $HARNESS_USER"
    fi
    HARNESS_UID=$(id -u "$HARNESS_USER")
    HARNESS_HOME=$(getent passwd "$HARNESS_USER" | cut -d: -f6)
    [ -d "$HARNESS_HOME" ] || harness_fail "test user" "$HARNESS_USER has no home directory $HARNESS_HOME"
}

harness_user_manager_up() {
    local state
    state=$(harness_as_user systemctl --user is-system-running 2>/dev/null)
    [ "$state" = running ] || [ "$state" = degraded ]
}

# No systemd as PID 1 (containers, firecracker VMs, CI): start the two pieces ourselves.
harness_start_private() {
    HARNESS_MODE=private
    [ "$(id -u)" = 0 ] || harness_fail "private systemd" "PID 1 is not systemd and we are not root: cannot start journald and a user manager"
    [ -x "$HARNESS_JOURNALD" ] || harness_fail "journald" "$HARNESS_JOURNALD is missing (apt-get install systemd)"
    [ -x "$HARNESS_SYSTEMD" ] || harness_fail "user manager" "$HARNESS_SYSTEMD is missing (apt-get install systemd)"
    harness_lock
    harness_ensure_user
    harness_start_journald
    harness_start_user_manager
}

harness_journald_running() {
    [ -S /run/systemd/journal/socket ] && pgrep -x systemd-journal >/dev/null
}

harness_start_journald() {
    HARNESS_USER_JOURNAL=0
    if harness_journald_running; then
        harness_ok "reusing the systemd-journald that already runs"
        return 0
    fi
    local d
    for d in /run/log /run/log/journal /run/systemd/journal; do
        [ -e "$d" ] || harness_undo_push "rm -rf $d"
    done
    # Volatile storage only: a standalone journald kept writing /run/log/journal even after `journalctl --flush`,
    # so entries are never split per user and only root reads them (harness_journalctl runs as root).
    "$HARNESS_JOURNALD" </dev/null >/dev/null 2>&1 &
    HARNESS_JOURNALD_PID=$!
    harness_undo_push "harness_kill_and_reap $HARNESS_JOURNALD_PID journald"
    harness_wait 15 "systemd-journald to create /run/systemd/journal/socket" test -S /run/systemd/journal/socket
    harness_ok "systemd-journald started (pid $HARNESS_JOURNALD_PID, volatile journal in /run/log/journal)"
}

# SIGTERM, then SIGKILL after 10 s; always reaps, so no zombie outlives the test.
harness_kill_and_reap() {
    local pid=$1 what=$2 i
    kill -TERM "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null; return 0; }
    for ((i = 0; i < 50; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.2
    done
    if kill -0 "$pid" 2>/dev/null; then
        harness_log "$what (pid $pid) ignored SIGTERM for 10s; sending SIGKILL"
        kill -KILL "$pid" 2>/dev/null
    fi
    wait "$pid" 2>/dev/null
    return 0
}

harness_cgroup_root() {
    # cgroup v2 lives at /sys/fs/cgroup/unified on hybrid hosts, at /sys/fs/cgroup on unified ones.
    if [ -f /sys/fs/cgroup/unified/cgroup.procs ]; then echo /sys/fs/cgroup/unified
    elif [ -f /sys/fs/cgroup/cgroup.procs ] && [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]; then echo /sys/fs/cgroup
    fi
}

harness_start_user_manager() {
    local root cg
    root=$(harness_cgroup_root)
    [ -n "$root" ] || harness_fail "cgroup" "no cgroup v2 hierarchy at /sys/fs/cgroup/unified or /sys/fs/cgroup"
    # Named as on a real host so journald derives _SYSTEMD_USER_UNIT (and `journalctl --user -u` works).
    HARNESS_CGROUP="$root/user.slice/user-$HARNESS_UID.slice/user@$HARNESS_UID.service"
    if [ -d "$HARNESS_CGROUP" ] && [ -n "$(harness_cgroup_pids "$HARNESS_CGROUP")" ]; then
        harness_log "removing leftovers of an earlier run in $HARNESS_CGROUP"
        harness_cgroup_kill "$HARNESS_CGROUP"
    fi
    for cg in "$root/user.slice" "$root/user.slice/user-$HARNESS_UID.slice" "$HARNESS_CGROUP"; do
        if [ ! -d "$cg" ]; then
            mkdir "$cg" || harness_fail "cgroup" "mkdir $cg failed"
            harness_undo_push "rmdir $cg 2>/dev/null"
        fi
    done
    harness_undo_push "harness_cgroup_kill $HARNESS_CGROUP; harness_cgroup_rmdir_below $HARNESS_CGROUP"
    chown "$HARNESS_USER:" "$HARNESS_CGROUP" "$HARNESS_CGROUP"/cgroup.procs "$HARNESS_CGROUP"/cgroup.subtree_control \
        "$HARNESS_CGROUP"/cgroup.threads || harness_fail "cgroup" "chown $HARNESS_USER $HARNESS_CGROUP failed"
    # Hybrid hosts also track units in the v1 name=systemd tree; a user-owned twin there spares
    # "Failed to attach … to compat systemd cgroup" on every unit start. Optional: v2 alone works.
    HARNESS_CGROUP_V1=""
    if [ "$root" = /sys/fs/cgroup/unified ] && [ -f /sys/fs/cgroup/systemd/cgroup.procs ]; then
        local v1=/sys/fs/cgroup/systemd/user.slice/user-$HARNESS_UID.slice/user@$HARNESS_UID.service
        for cg in /sys/fs/cgroup/systemd/user.slice /sys/fs/cgroup/systemd/user.slice/user-$HARNESS_UID.slice "$v1"; do
            if [ ! -d "$cg" ]; then
                mkdir "$cg" 2>/dev/null || break
                harness_undo_push "rmdir $cg 2>/dev/null"
            fi
        done
        if [ -d "$v1" ] && chown "$HARNESS_USER:" "$v1" "$v1/cgroup.procs" "$v1/tasks" 2>/dev/null; then
            HARNESS_CGROUP_V1=$v1
            harness_undo_push "harness_cgroup_kill $HARNESS_CGROUP; harness_cgroup_rmdir_below $v1"
        fi
    fi

    if [ ! -d /run/systemd/system ]; then
        mkdir -p /run/systemd/system || harness_fail "user manager" "mkdir /run/systemd/system failed"
        harness_undo_push "rmdir /run/systemd/system 2>/dev/null"
    fi
    local rt=/run/user/$HARNESS_UID
    if [ ! -d "$rt" ]; then
        install -d -m 0700 -o "$HARNESS_USER" -g "$(id -g "$HARNESS_USER")" "$rt" || harness_fail "user manager" "cannot create $rt"
        harness_undo_push "rm -rf $rt"
    fi
    [ "$(stat -c %U "$rt")" = "$HARNESS_USER" ] || harness_fail "user manager" "$rt is not owned by $HARNESS_USER"

    # The subshell moves itself into the cgroup, then becomes runuser, which stays as the manager's parent.
    # SYSTEMD_LOG_TARGET=journal: without it a manager not started by PID 1 logs nowhere we can read.
    bash -c 'echo $$ > "$1/cgroup.procs" || exit 97
        [ -z "$2" ] || echo $$ > "$2/cgroup.procs" || exit 98; shift 2
        exec runuser -u "$1" -- env HOME="$2" USER="$1" LOGNAME="$1" XDG_RUNTIME_DIR="$3" \
            SYSTEMD_LOG_TARGET=journal '"$HARNESS_SYSTEMD"' --user' \
        harness "$HARNESS_CGROUP" "$HARNESS_CGROUP_V1" "$HARNESS_USER" "$HARNESS_HOME" "$rt" </dev/null >/dev/null 2>&1 &
    HARNESS_MANAGER_PID=$!
    harness_undo_push "harness_stop_user_manager $HARNESS_MANAGER_PID"
    local deadline=$((SECONDS + 30))
    until harness_user_manager_up; do
        kill -0 "$HARNESS_MANAGER_PID" 2>/dev/null ||
            harness_fail "user manager" "systemd --user exited at start (cgroup $HARNESS_CGROUP; see journalctl _UID=$HARNESS_UID)"
        [ "$SECONDS" -lt "$deadline" ] ||
            harness_fail "user manager" "timed out after 30s waiting for systemctl --user is-system-running to say running"
        sleep 0.2
    done
    harness_ok "systemd --user started for $HARNESS_USER (uid $HARNESS_UID) in $HARNESS_CGROUP"
}

harness_stop_user_manager() {
    local pid=$1
    # `systemctl --user exit` stops every unit the way a logout does; the kill is the fallback.
    HARNESS_CMD_TIMEOUT=20 harness_as_user systemctl --user exit >/dev/null 2>&1
    local i
    for ((i = 0; i < 75; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    harness_kill_and_reap "$pid" "systemd --user"
}

harness_cgroup_pids() { find "$1" -name cgroup.procs -exec cat {} + 2>/dev/null; }

# Kill whatever still lives in our own cgroup (never anything outside it).
harness_cgroup_kill() {
    local cg=$1 i
    [ -d "$cg" ] || return 0
    [ -n "$(harness_cgroup_pids "$cg")" ] || return 0
    if [ -e "$cg/cgroup.kill" ]; then
        echo 1 > "$cg/cgroup.kill"
    else
        harness_cgroup_pids "$cg" | xargs -r kill -KILL 2>/dev/null
    fi
    for ((i = 0; i < 50; i++)); do [ -z "$(harness_cgroup_pids "$cg")" ] && return 0; sleep 0.2; done
    harness_log "processes left in $cg after 10s: $(harness_cgroup_pids "$cg" | tr '\n' ' ')"
}

harness_cgroup_rmdir_below() {
    [ -d "$1" ] && find "$1" -mindepth 1 -depth -type d -exec rmdir {} + 2>/dev/null
    return 0
}

# `journalctl -x` reads only the compiled database built from /usr/lib/systemd/catalog (and /usr/local/lib/...);
# a per-user install (~/.local/lib/systemd/catalog) is invisible to it, so the test installs system-wide.
harness_install_catalog() {
    local src=$1 dst
    [ -f "$src" ] || harness_fail "catalog" "no catalog file at $src"
    if [ "$HARNESS_MODE" = host-session ]; then
        harness_log "not root: cannot install $src system-wide; relying on an earlier 'sudo make install'"
        return 0
    fi
    # --update-catalog only reads names ending in .catalog, and reads a dotted middle part as a language
    # (systemd.de.catalog), so the installed name has no other dot.
    local base
    base=$(basename "$src" .catalog); base=${base//./-}
    dst=/usr/lib/systemd/catalog/outl-harness-$base.catalog
    install -m 0644 "$src" "$dst" || harness_fail "catalog" "cannot install $dst"
    harness_undo_push "rm -f $dst; timeout 30 journalctl --update-catalog"
    timeout 30 journalctl --update-catalog || harness_fail "catalog" "journalctl --update-catalog failed on $src"
}
