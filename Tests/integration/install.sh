#!/usr/bin/env bash
# install.sh (issues 9, 18): `make install PREFIX=…` and `make install DESTDIR=…` write only under
# PREFIX/DESTDIR (units included) and leave no temporary file next to the sources; `make install-user`
# where no systemd user manager is reachable installs everything, says in one line how to run outld
# instead, and exits 0. As root, make runs as nobody, so a write anywhere else fails the install
# itself; as another user the source tree and the system unit directories are compared before/after.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${OUTL_BIN_DIR:?OUTL_BIN_DIR must name the directory with the built binaries}
T=$(mktemp -d "${TMPDIR:-/tmp}/outl-install.XXXXXX")
trap 'rm -rf "$T"' EXIT
chmod 755 "$T"
fail() { echo "FAIL: $*" >&2; exit 1; }

if [ "$(id -u)" = 0 ]; then
  command -v setpriv >/dev/null || fail "as root this test needs setpriv (util-linux) to run make as nobody"
  as_user() { setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"; }
  chown_user() { chown -R 65534:65534 "$@"; }
  mode="as nobody: any write outside the target fails make"
else
  as_user() { "$@"; }
  chown_user() { :; }
  mode="as $(id -un): source tree and unit directories compared before and after"
fi
echo "install.sh: $mode"
# The binaries must be readable by that user: use a copy.
mkdir "$T/bin" && cp "$BIN/outl-capture" "$BIN/outld" "$BIN/outl" "$T/bin/" && chmod 755 "$T/bin" "$T"/bin/*
# So must what make install reads, wherever the checkout is (a clone in a 0700 home that nobody
# may enter): make runs in a copy of it, readable by all and writable by its owner only, so a
# write next to the sources still fails as nobody and still shows in the listing otherwise.
src=$T/src
mkdir "$src" && cp -r "$repo/Makefile" "$repo/man" "$repo/systemd" "$repo/share" "$src/" && chmod -R go+rX,go-w "$src"

outside() { # what could change outside the target: the sources make reads and the unit directories
  (cd "$src" && find . | sort)
  for d in "$(pkg-config --variable=systemduserunitdir systemd 2>/dev/null)" /usr/local/lib/systemd/user /usr/lib/systemd/user; do
    [ -d "$d" ] && ls -la --time-style=+%s "$d"
  done
  true
}
before=$(outside)
expected() { # PREFIX-relative paths make install writes
  { printf '%s\n' bin/outl bin/outl-capture bin/outld lib/systemd/catalog/outld.catalog \
    lib/systemd/user/outld-drain.path lib/systemd/user/outld-drain.service lib/systemd/user/outld.service \
    share/applications/outl-capture.desktop share/applications/outl-capture-attach.desktop share/man/man1/outl-capture.1 share/man/man1/outl.1 \
    share/man/man1/outld.1 share/man/man5/outl-inbox.5
    for p in outl outl-capture outld; do
      printf '%s\n' share/bash-completion/completions/$p share/zsh/vendor-completions/_$p share/fish/vendor_completions.d/$p.fish
    done; } | sort
}

# 1. make install PREFIX=<dir>
mkdir "$T/prefix" && chown_user "$T/prefix"
as_user make -s --no-print-directory -C "$src" install PREFIX="$T/prefix" SWIFT=true RELEASE_BIN="$T/bin" \
  || fail "make install PREFIX=$T/prefix failed"
got=$(cd "$T/prefix" && find . -type f | sed 's|^\./||' | sort)
[ "$got" = "$(expected)" ] || fail "make install PREFIX put these files under PREFIX:"$'\n'"$got"
grep -qx "ExecStart=$T/prefix/bin/outld" "$T/prefix/lib/systemd/user/outld.service" || fail "outld.service does not run $T/prefix/bin/outld"
echo "ok: make install PREFIX wrote exactly $(wc -l <<<"$got") files, all under PREFIX"

# The "Open with" entry runs as a launcher runs it (%f: the file) and carries the file in.
exec_line=$(sed -n 's/^Exec=//p' "$T/prefix/share/applications/outl-capture-attach.desktop")
mkdir -p "$T/attach-ws" && printf 'opened with outl' > "$T/attach-me.txt" && chown_user "$T/attach-ws" "$T/attach-me.txt"
read -r -a argv <<<"${exec_line//%f/$T/attach-me.txt}"
as_user env HOME="$T/attach-ws" XDG_CONFIG_HOME="$T/attach-ws/.config" OUTL_WORKSPACE="$T/attach-ws" "${argv[@]/--notify/--quiet}" >/dev/null || fail "the attach entry's Exec ($exec_line) failed"
ls "$T/attach-ws/.outl/captures" | grep -q '\.1\.att$' || fail "the attach entry's Exec delivered no attachment"
echo "ok: the attach desktop entry's Exec carries the file into the inbox"

# 2. make install PREFIX=/usr DESTDIR=<stage>: a package build
mkdir "$T/stage" && chown_user "$T/stage"
as_user make -s --no-print-directory -C "$src" install PREFIX=/usr DESTDIR="$T/stage" SWIFT=true RELEASE_BIN="$T/bin" \
  || fail "make install DESTDIR failed"
got=$(cd "$T/stage/usr" && find . -type f | sed 's|^\./||' | sort)
[ "$got" = "$(expected)" ] || fail "make install DESTDIR put these files under DESTDIR/usr:"$'\n'"$got"
[ -z "$(cd "$T/stage" && find . -mindepth 1 -maxdepth 1 ! -name usr)" ] || fail "make install DESTDIR wrote outside DESTDIR/usr"
grep -qx "ExecStart=/usr/bin/outld" "$T/stage/usr/lib/systemd/user/outld.service" || fail "a staged outld.service must run /usr/bin/outld"
echo "ok: make install DESTDIR staged the same files under DESTDIR/usr"

# 3. make install-user with no user manager reachable (no bus, no runtime directory)
mkdir "$T/home" && chown_user "$T/home"
out=$(as_user env -u XDG_RUNTIME_DIR -u DBUS_SESSION_BUS_ADDRESS -u XDG_CONFIG_HOME HOME="$T/home" \
  make -s --no-print-directory -C "$src" install-user SWIFT=true RELEASE_BIN="$T/bin" 2>&1) \
  || fail "make install-user exited non-zero without a user manager: $out"
[ "$(wc -l <<<"$out")" = 1 ] || fail "make install-user said more than one line:"$'\n'"$out"
grep -q "no systemd user manager is reachable" <<<"$out" || fail "make install-user did not say why outld was not started: $out"
grep -q "outld --once' from cron" <<<"$out" && grep -q "in the foreground" <<<"$out" || fail "make install-user did not say how to run outld: $out"
for f in .local/bin/outld .local/bin/outl-capture .local/bin/outl .config/systemd/user/outld.service \
         .local/share/man/man1/outl-capture.1 .local/lib/systemd/catalog/outld.catalog; do
  [ -f "$T/home/$f" ] || fail "make install-user did not install ~/$f"
done
echo "ok: make install-user without a user manager installed everything and said: $out"

after=$(outside)
[ "$before" = "$after" ] || fail "files changed outside the install targets:"$'\n'"$(diff <(echo "$before") <(echo "$after"))"
echo "ok: nothing changed in the source tree or the system unit directories"
