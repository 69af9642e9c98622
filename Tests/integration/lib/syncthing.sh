# syncthing.sh: real Syncthing instances (Debian's syncthing 1.19) on loopback for the integration
# scripts: generated configs, one shared folder, bounded waits on the REST API. Sourced after
# common.sh. Invariants: everything an instance writes lives under $T; it listens and connects on
# 127.0.0.1 only (discovery, relays, NAT, STUN, usage and crash reporting, upgrades all off); every
# wait is bounded and names what it waited for; a step the host refuses fails, it never skips.
#
#   st_device D HOME FOLDER_PATH   generate D's keys and config (its own syncthing home under $T/D)
#   st_share FOLDER_ID D...        write each config: the folder at its path, shared with all peers
#   st_start D                     serve in the background (log $T/D/syncthing.log); waits for REST
#   st_stop D                      SIGTERM, bounded wait, then SIGKILL
#   st_api D METHOD PATH [JSON]    one REST call on D's GUI address with its API key; prints the body
#   st_wait_connected SECS D...    every pair connected
#   st_wait_settled SECS FOLDER D...  all idle, nothing needed, peers complete, files quiet
#   st_set_ignores D FOLDER LINE...   replace D's .stignore through the REST API
#   st_loopback_only D...          no socket of the instances reaches beyond 127.0.0.1
SYNCTHING=${OUTL_SYNCTHING:-/usr/bin/syncthing}
declare -gA ST_DIR ST_HOME ST_PATH ST_ID ST_KEY ST_GUI ST_LISTEN ST_PID

# host_fail STEP WHY: the host refused a step; say which, and fail (exit 1; the EXIT trap cleans up).
host_fail() { printf 'FAIL: host refused a step: %s: %s\n' "$1" "$2" >&2; exit 1; }

st_require() {
  [ -x "$SYNCTHING" ] || host_fail "syncthing" "$SYNCTHING is missing (Debian package syncthing; make deps)"
  command -v python3 >/dev/null || host_fail "python3" "python3 is missing"
  local v; v=$("$SYNCTHING" --version 2>&1 | head -1) || host_fail "syncthing --version" "$v"
  echo "syncthing: $v"
}

# st_free_ports N: N distinct ports free on 127.0.0.1 now (all held open together, then released).
st_free_ports() {
  python3 - "$1" <<'PY' || host_fail "free ports" "could not bind 127.0.0.1:0"
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
PY
}

# st_envv D: sets STENV to D's HOME and XDG directories (so "~" in Syncthing means D's home), for
# `env "${STENV[@]}" CMD`; a simple command, so `CMD &` leaves $! naming CMD itself, not a subshell.
# STMONITORED: 1.19 otherwise forks a monitor parent even with --no-restart, and a SIGKILL of that
# parent would orphan the real instance.
st_envv() {
  local h=${ST_HOME[$1]}
  STENV=(HOME="$h" XDG_CONFIG_HOME="$h/.config" XDG_STATE_HOME="$h/.local/state" XDG_DATA_HOME="$h/.local/share"
         XDG_CACHE_HOME="$h/.cache" STNODEFAULTFOLDER=1 STNORESTART=1 STNOUPGRADE=1 STMONITORED=yes)
}

st_device() {
  local d=$1 home=$2 path=$3 out
  ST_DIR[$d]=$T/$d; ST_HOME[$d]=$home; ST_PATH[$d]=$path
  mkdir -p "${ST_DIR[$d]}/syncthing" "$home" "$path"
  st_envv "$d"
  out=$(env "${STENV[@]}" timeout 60 "$SYNCTHING" generate --home "${ST_DIR[$d]}/syncthing" --no-default-folder --skip-port-probing 2>&1) \
    || host_fail "syncthing generate for device $d" "$(tail -3 <<<"$out")"
  ST_ID[$d]=$(sed -n 's/.*Device ID: *\([A-Z0-9-]*\).*/\1/p' <<<"$out" | head -1)
  [ -n "${ST_ID[$d]}" ] || ST_ID[$d]=$(env "${STENV[@]}" timeout 30 "$SYNCTHING" serve --home "${ST_DIR[$d]}/syncthing" --device-id 2>/dev/null)
  [[ ${ST_ID[$d]} =~ ^[A-Z0-9]{7}(-[A-Z0-9]{7}){7}$ ]] || host_fail "syncthing device id of $d" "got '${ST_ID[$d]}' from: $(tail -3 <<<"$out")"
  ST_KEY[$d]=$(python3 -c 'import secrets; print(secrets.token_urlsafe(24))')
  local ports; ports=($(st_free_ports 2))
  ST_GUI[$d]=${ports[0]}; ST_LISTEN[$d]=${ports[1]}
  # The folder marker Syncthing insists on; without it the folder stops with "folder marker missing".
  mkdir -p "$path/.stfolder"
}

# st_share FOLDER_ID D...: rewrites each device's config.xml (before start) for a loopback-only pair.
st_share() {
  local folder=$1; shift
  local d peers
  for d in "$@"; do
    peers=()
    local p; for p in "$@"; do [ "$p" = "$d" ] || peers+=("${ST_ID[$p]}=tcp://127.0.0.1:${ST_LISTEN[$p]}"); done
    python3 - "${ST_DIR[$d]}/syncthing/config.xml" "$folder" "${ST_PATH[$d]}" "${ST_ID[$d]}" "${ST_KEY[$d]}" \
      "127.0.0.1:${ST_GUI[$d]}" "tcp://127.0.0.1:${ST_LISTEN[$d]}" "$d" "${peers[@]}" <<'PY' || host_fail "syncthing config of $d" "could not write config.xml"
import sys, xml.etree.ElementTree as ET
cfg, folder, path, me, key, gui, listen, name, *peers = sys.argv[1:]
tree = ET.parse(cfg); root = tree.getroot()
def setopt(parent, tag, value):
    el = parent.find(tag)
    if el is None: el = ET.SubElement(parent, tag)
    el.text = value
    return el
opts = root.find("options")
for old in opts.findall("listenAddress"): opts.remove(old)
ET.SubElement(opts, "listenAddress").text = listen
for tag, value in {
    "globalAnnounceEnabled": "false", "localAnnounceEnabled": "false", "relaysEnabled": "false",
    "natEnabled": "false", "urAccepted": "-1", "urSeen": "3", "autoUpgradeIntervalH": "0",
    "crashReportingEnabled": "false", "startBrowser": "false", "stunKeepaliveStartS": "0",
    "stunKeepaliveMinS": "0", "announceLANAddresses": "false", "reconnectionIntervalS": "1",
    "setLowPriority": "false", "restartOnWakeup": "false", "progressUpdateIntervalS": "-1",
}.items():
    setopt(opts, tag, value)
for old in opts.findall("globalAnnounceServer"): opts.remove(old)
for old in opts.findall("stunServer"): opts.remove(old)
gui_el = root.find("gui")
setopt(gui_el, "address", gui); setopt(gui_el, "apikey", key)
gui_el.set("tls", "false")
mine = root.find(f"device[@id='{me}']")
mine.set("name", name)
for a in mine.findall("address"): mine.remove(a)
ET.SubElement(mine, "address").text = listen
for p in peers:
    pid, addr = p.split("=", 1)
    dev = ET.SubElement(root, "device", id=pid, name=pid[:7], compression="metadata", introducer="false",
                        skipIntroductionRemovals="false", introducedBy="")
    ET.SubElement(dev, "address").text = addr
    ET.SubElement(dev, "paused").text = "false"
    ET.SubElement(dev, "autoAcceptFolders").text = "false"
f = ET.Element("folder", id=folder, label=folder, path=path, type="sendreceive", rescanIntervalS="10",
               fsWatcherEnabled="true", fsWatcherDelayS="1", ignorePerms="false", autoNormalize="true")
for dev_id in [me] + [p.split("=", 1)[0] for p in peers]:
    ET.SubElement(f, "device", id=dev_id, introducedBy="")
ET.SubElement(f, "filesystemType").text = "basic"
ET.SubElement(f, "minDiskFree", unit="%").text = "1"
ET.SubElement(f, "maxConflicts").text = "10"
ET.SubElement(f, "markerName").text = ".stfolder"
# Folders come before devices in a generated config; Syncthing does not care, but keep it readable.
root.insert(0, f)
tree.write(cfg)
PY
  done
}

# st_api D METHOD PATH [JSON]: curl when present, else python3's urllib; 10 s per call; loopback only.
st_api() {
  local d=$1 method=$2 path=$3 body=${4:-}
  local url="http://127.0.0.1:${ST_GUI[$d]}$path"
  if command -v curl >/dev/null; then
    if [ -n "$body" ]; then
      curl -sS -f --max-time 10 -X "$method" -H "X-API-Key: ${ST_KEY[$d]}" -H 'Content-Type: application/json' --data "$body" "$url"
    else
      curl -sS -f --max-time 10 -X "$method" -H "X-API-Key: ${ST_KEY[$d]}" "$url"
    fi
  else
    python3 - "$method" "$url" "${ST_KEY[$d]}" "$body" <<'PY'
import sys, urllib.request
method, url, key, body = sys.argv[1:]
req = urllib.request.Request(url, method=method, data=body.encode() if body else None,
                             headers={"X-API-Key": key, "Content-Type": "application/json"})
sys.stdout.write(urllib.request.urlopen(req, timeout=10).read().decode())
PY
  fi
}

st_alive() { [ -n "${ST_PID[$1]:-}" ] && kill -0 "${ST_PID[$1]}" 2>/dev/null; }

st_start() {
  local d=$1 log=$T/$1/syncthing.log
  st_envv "$d"
  env "${STENV[@]}" "$SYNCTHING" serve --home "${ST_DIR[$d]}/syncthing" --no-browser --no-restart --no-upgrade \
    --logflags=7 >>"$log" 2>&1 &
  ST_PID[$d]=$!
  local end=$((SECONDS + 30))
  until st_api "$d" GET /rest/system/ping >/dev/null 2>&1; do
    st_alive "$d" || host_fail "syncthing start ($d)" "exited at once; its log ends: $(tail -5 "$log")"
    [ $SECONDS -lt $end ] || host_fail "syncthing start ($d)" "no REST answer on 127.0.0.1:${ST_GUI[$d]} after 30s; log: $(tail -5 "$log")"
    sleep 0.2
  done
  grep -q "TCP listener (127.0.0.1:${ST_LISTEN[$d]}) starting" "$log" 2>/dev/null || sleep 0.5
  grep -qE "Failed to start|listen tcp .*address already in use" "$log" \
    && host_fail "syncthing listen ($d)" "$(grep -E 'Failed to start|address already in use' "$log" | head -2)"
  return 0
}

st_stop() {
  local d=$1
  st_alive "$d" || return 0
  kill -TERM "${ST_PID[$d]}" 2>/dev/null || true
  local end=$((SECONDS + 10))
  while st_alive "$d" && [ $SECONDS -lt $end ]; do sleep 0.1; done
  if st_alive "$d"; then kill -KILL "${ST_PID[$d]}" 2>/dev/null || true; fi
  wait "${ST_PID[$d]}" 2>/dev/null || true
  ST_PID[$d]=
}

st_connected() { # st_connected D PEER
  st_api "$1" GET /rest/system/connections 2>/dev/null \
    | python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin)["connections"].get(sys.argv[1],{}).get("connected") else 1)' "${ST_ID[$2]}"
}

st_wait_connected() {
  local secs=$1; shift
  local end=$((SECONDS + secs)) d p
  for d in "$@"; do for p in "$@"; do
    [ "$d" = "$p" ] && continue
    until st_connected "$d" "$p"; do
      st_alive "$d" || host_fail "syncthing ($d)" "died; log ends: $(tail -5 "$T/$d/syncthing.log")"
      [ $SECONDS -lt $end ] || host_fail "syncthing connection $d -> $p" \
        "not connected after ${secs}s (127.0.0.1:${ST_LISTEN[$p]}); $d's log ends: $(tail -5 "$T/$d/syncthing.log")"
      sleep 0.25
    done
  done; done
}

# st_wait_settled SECS FOLDER D...: scans now (no watcher delay), then waits until every device is
# idle with nothing needed, sees each peer at 100 %, and no file (name, size, mtime, inode) changed
# for $ST_QUIET seconds (default 3: longer than a daemon's own short debounce). Prints "settled in N s"; on timeout prints what
# was still moving and returns 1 (the caller decides; a script that needs the state fails).
st_wait_settled() {
  local secs=$1 folder=$2; shift 2
  local args=() d
  for d in "$@"; do args+=("$d" "${ST_GUI[$d]}" "${ST_KEY[$d]}" "${ST_ID[$d]}" "${ST_PATH[$d]}"); done
  python3 - "$secs" "${ST_QUIET:-3}" "$folder" "${args[@]}" <<'PY'
import json, os, sys, time, urllib.request, urllib.parse
secs, quiet, folder, rest = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3], sys.argv[4:]
devs = [rest[i:i + 5] for i in range(0, len(rest), 5)]
def call(gui, key, method, path, timeout=20):
    req = urllib.request.Request(f"http://127.0.0.1:{gui}{path}", method=method, headers={"X-API-Key": key})
    body = urllib.request.urlopen(req, timeout=timeout).read()
    return json.loads(body) if body.strip() else None
def fingerprint(path):
    out = []
    for dirpath, dirs, files in os.walk(path):
        for n in sorted(files):
            p = os.path.join(dirpath, n)
            try: st = os.lstat(p)
            except FileNotFoundError: continue
            out.append((os.path.relpath(p, path), st.st_size, st.st_mtime_ns, st.st_ino))
    return sorted(out)
q = urllib.parse.quote
start = time.monotonic(); deadline = start + secs
last, since, moving, why = None, None, "", "nothing checked yet"
while True:
    try:
        for name, gui, key, me, path in devs:
            call(gui, key, "POST", f"/rest/db/scan?folder={q(folder)}")
        state, ok = [], True
        for name, gui, key, me, path in devs:
            st = call(gui, key, "GET", f"/rest/db/status?folder={q(folder)}")
            line = f"{name}: {st['state']}, needs {st['needTotalItems']} items, pull errors {st.get('pullErrors', 0)}"
            if st["state"] != "idle" or st["needTotalItems"] or st.get("pullErrors", 0): ok = False
            for pname, pgui, pkey, pid, ppath in devs:
                if pid == me: continue
                c = call(gui, key, "GET", f"/rest/db/completion?folder={q(folder)}&device={q(pid)}")
                line += f"; sees {pname} at {c['completion']:.1f}% (needs {c['needItems']} items, {c['needDeletes']} deletes)"
                if c["completion"] < 100 or c["needItems"] or c["needDeletes"]: ok = False
            state.append(line)
        now = [fingerprint(d[4]) for d in devs]
        why = "; ".join(state)
        if now != last:
            if last is not None:
                moving = ", ".join(d[0] for d, a, b in zip(devs, last, now) if a != b)
            last, since = now, time.monotonic()
        if moving and time.monotonic() - since < quiet:
            why += f"; files changed on {moving} {time.monotonic() - since:.1f} s ago"
        if ok and time.monotonic() - since >= quiet:
            print(f"settled in {time.monotonic() - start:.1f} s")
            sys.exit(0)
    except Exception as e:
        why = f"REST error: {e}"; last = None
    if time.monotonic() > deadline:
        print(f"not settled after {secs:.0f} s: {why}")
        sys.exit(1)
    time.sleep(1.0)
PY
}

st_set_ignores() {
  local d=$1 folder=$2; shift 2
  local body; body=$(python3 -c 'import json,sys; print(json.dumps({"ignore": sys.argv[1:]}))' "$@")
  st_api "$d" POST "/rest/db/ignores?folder=$folder" "$body" >/dev/null || host_fail "syncthing ignores ($d)" "POST /rest/db/ignores refused"
}

# st_loopback_only D...: every TCP/UDP socket the instances hold is bound to loopback and, when
# connected, connected to loopback (read from /proc, so no ss(8) is needed).
st_loopback_only() {
  local pids=() d
  for d in "$@"; do st_alive "$d" && pids+=("${ST_PID[$d]}"); done
  [ ${#pids[@]} -eq "$#" ] || { echo "an instance is not running"; return 1; }
  python3 - "${pids[@]}" <<'PY'
import os, socket, struct, sys
def addr(hexaddr):
    ip, port = hexaddr.split(":")
    raw = bytes.fromhex(ip)
    if len(raw) == 4:
        a = socket.inet_ntop(socket.AF_INET, struct.pack("<I", struct.unpack(">I", raw)[0]))
    else:
        a = socket.inet_ntop(socket.AF_INET6, b"".join(struct.pack("<I", w) for w in struct.unpack(">4I", raw)))
    return a, int(port, 16)
def loopback(a): return a in ("127.0.0.1", "::1", "::ffff:127.0.0.1")
def unset(a, port): return port == 0 and a in ("0.0.0.0", "::")
table = {}
for proto in ("tcp", "tcp6", "udp", "udp6"):
    with open(f"/proc/net/{proto}") as f:
        next(f)
        for line in f:
            c = line.split()
            table[c[9]] = (proto, addr(c[1]), addr(c[2]))
n, bad = 0, []
for pid in sys.argv[1:]:
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try: target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError: continue
        if not target.startswith("socket:["): continue
        entry = table.get(target[8:-1])
        if entry is None: continue  # a unix socket
        n += 1
        proto, (la, lp), (ra, rp) = entry
        if not loopback(la) or not (loopback(ra) or unset(ra, rp)):
            bad.append(f"pid {pid} {proto} {la}:{lp} -> {ra}:{rp}")
print(f"{n} sockets, all on 127.0.0.1" if not bad else "sockets beyond loopback: " + "; ".join(bad))
sys.exit(1 if bad or n == 0 else 0)
PY
}
