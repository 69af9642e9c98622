#!/usr/bin/env bash
# no-toolchain.sh (issue 19): the programs need nothing but Debian's libraries. `ldd` names no library
# inside the Swift toolchain for any of them; and, as root, with the toolchain's directory hidden (a
# private mount namespace with an empty directory bound over it) a capture, a drain by `outld --once`
# and `outl status` work. Not root: the second part is reported as skipped, never as passed.
source "$(dirname "$0")/lib/common.sh"
fail() { echo "FAIL: $*" >&2; exit 1; }

toolchain=$(swift_toolchain)
[ -d "$toolchain" ] || fail "cannot find the Swift toolchain (got '$toolchain')"

# 1. What each program loads, as the dynamic loader resolves it now.
for b in "$CAPTURE" "$OUTLD" "$OUTL"; do
  deps=$(ldd "$b" 2>&1 || true)
  if grep -q "not a dynamic executable" <<<"$deps"; then continue; fi
  grep -q "not found" <<<"$deps" && fail "$(basename "$b") needs a library that is not found:"$'\n'"$deps"
  if grep -F "$toolchain" <<<"$deps"; then fail "$(basename "$b") loads from the toolchain ($toolchain)"; fi
done
echo "ok: ldd of outl-capture, outld and outl names nothing under $toolchain"

# 2. The programs at work with the toolchain gone.
if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null; then
  echo "SKIPPED: running with $toolchain hidden needs root and unshare (a private mount namespace)"
  exit 0
fi
mkdir "$T/empty" "$T/bin"
cp "$CAPTURE" "$OUTLD" "$OUTL" "$T/bin/"
out=$(unshare --mount --propagation private bash -euo pipefail -c '
  mount --bind "$1" "$2"
  [ -z "$(ls -A "$2")" ] || { echo "the toolchain is still visible at $2"; exit 1; }
  "$3/outl-capture" "a line captured without the toolchain"
  "$3/outld" --once
  "$3/outl" status
' hidden "$T/empty" "$toolchain" "$T/bin" 2>&1) || fail "with $toolchain hidden:"$'\n'"$out"
grep -rqx -- "- a line captured without the toolchain" "$WS/journals" \
  || fail "the capture did not reach a journal with $toolchain hidden:"$'\n'"$out"
echo "ok: with $toolchain hidden, a capture, outld --once and outl status work"
