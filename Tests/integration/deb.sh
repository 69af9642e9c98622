#!/usr/bin/env bash
# deb.sh (issue 19): the Debian package. packaging/deb.sh builds it from the binaries under test;
# lintian reports no error and no warning. As root, it is installed with apt-get, the installed
# programs capture, drain and report with the Swift toolchain hidden, journalctl knows outld's
# catalog, and a purge leaves nothing the package installed. Not root, or lintian missing: that
# part is reported as SKIPPED.
source "$(dirname "$0")/lib/common.sh"
repo=$(cd "$(dirname "$0")/../.." && pwd)
fail() { echo "FAIL: $*" >&2; exit 1; }

deb=$(bash "$repo/packaging/deb.sh" "$BIN" "$T/deb") || fail "packaging/deb.sh failed"
case $(basename "$deb") in outl_*_"$(dpkg --print-architecture)".deb) ;; *) fail "named $(basename "$deb")" ;; esac
info=$(dpkg-deb --info "$deb")
grep -q "^ Depends: .*libsystemd0" <<<"$info" || fail "Depends does not name libsystemd0:"$'\n'"$info"
files=$(dpkg-deb --contents "$deb" | awk '{print $NF}' | sed 's|^\./|/|' | grep -v '/$' | sort)
for f in /usr/bin/outl /usr/bin/outl-capture /usr/bin/outld /usr/lib/systemd/user/outld.service \
         /usr/lib/systemd/catalog/outld.catalog /usr/share/applications/outl-capture.desktop \
         /usr/share/applications/outl-capture-attach.desktop \
         /usr/share/man/man1/outld.1.gz /usr/share/bash-completion/completions/outl /usr/share/doc/outl/copyright; do
  grep -qx "$f" <<<"$files" || fail "the package lacks $f"
done
echo "ok: built $(basename "$deb") with $(wc -l <<<"$files") files"

if command -v lintian >/dev/null; then
  # root makes lintian say so on stderr; every tag is on stdout.
  tags=$(lintian --tag-display-limit 0 "$deb" 2>/dev/null || true)
  if grep -E '^(E|W): ' <<<"$tags"; then fail "lintian reports the errors and warnings above"; fi
  echo "ok: lintian reports no error and no warning"
else
  echo "SKIPPED: lintian is not installed (make deps installs it)"
fi

if [ "$(id -u)" != 0 ]; then
  echo "SKIPPED: installing and purging the package needs root"
  exit 0
fi
if dpkg-query -W -f='${Status}' outl 2>/dev/null | grep -q "installed"; then
  echo "SKIPPED: a package named outl is installed on this system already; not replacing it"
  exit 0
fi
trap 'dpkg --purge outl >/dev/null 2>&1 || true; cleanup_common' EXIT
# As a person installs it: apt resolves Depends from what is installed and runs the triggers
# (systemd's rebuilds the journal catalog) before it returns.
DEBIAN_FRONTEND=noninteractive apt-get install -y "$deb" >"$T/apt.log" 2>&1 \
  || fail "apt-get install $deb failed:"$'\n'"$(cat "$T/apt.log")"
installed=$(dpkg -L outl | sort)
# The installed programs at work, with the Swift toolchain's directory hidden (as on a machine
# that never had it): a private mount namespace with an empty directory bound over it.
toolchain=$(swift_toolchain)
[ -d "$toolchain" ] || fail "cannot find the Swift toolchain (got '$toolchain')"
mkdir "$T/empty"
out=$(unshare --mount --propagation private bash -euo pipefail -c '
  mount --bind "$1" "$2"
  /usr/bin/outl-capture -q "a line from the package"
  /usr/bin/outld --once
  /usr/bin/outl status --json > "$3"
' hidden "$T/empty" "$toolchain" "$T/status.json" 2>&1) || fail "the installed programs, with $toolchain hidden:"$'\n'"$out"
grep -rqx -- "- a line from the package" "$WS/journals" || fail "the capture did not reach the journal:"$'\n'"$out"
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["inboxes"][0]["waiting"] == 0' "$T/status.json" \
  || fail "the installed outl status --json:"$'\n'"$(cat "$T/status.json")"
id=$(sed -n 's/^-- \([0-9a-f]\{32\}\)$/\1/p' "$repo/systemd/outld.catalog" | head -n 1)
if command -v journalctl >/dev/null; then
  # Read whole before grep: grep -q quitting early would kill journalctl with SIGPIPE (pipefail).
  catalog=$(journalctl --list-catalog 2>/dev/null || true)
  grep -q "^$id" <<<"$catalog" || fail "journalctl does not know outld's catalog entry $id after the install"
fi
echo "ok: installed with apt-get; with $toolchain hidden the installed programs captured, drained and reported; journalctl knows the catalog"
DEBIAN_FRONTEND=noninteractive apt-get purge -y outl >"$T/apt.log" 2>&1 || fail "apt-get purge outl failed:"$'\n'"$(cat "$T/apt.log")"
left=$(while read -r f; do [ -f "$f" ] || [ -L "$f" ] && echo "$f"; done <<<"$installed" || true)
[ -z "$left" ] || fail "the purge left these files:"$'\n'"$left"
dpkg-query -W outl >/dev/null 2>&1 && fail "outl is still known to dpkg after the purge"
echo "ok: purged, and nothing it installed is left"
