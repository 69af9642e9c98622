#!/usr/bin/env bash
# deb.sh: builds outl_<version>_<arch>.deb with dpkg-deb from a staged `make install PREFIX=/usr`:
# the programs stripped, man pages and changelog compressed, a DEP-5 copyright, Depends computed by
# dpkg-shlibdeps from the binaries, and the one lintian override with its reason. `make deb` runs
# it; lintian reports no error and no warning on the result (Tests/integration/deb.sh checks).
# Usage: packaging/deb.sh RELEASE_BIN_DIR OUT_DIR
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:?release binaries directory}; out=${2:?output directory}
version=$("$bin/outl" --version | sed -n 's/^outl //p')
[ -n "$version" ] || { echo "deb.sh: cannot read the version from $bin/outl" >&2; exit 1; }
arch=$(dpkg --print-architecture)
# The project has no contact address yet: example.org (reserved, RFC 2606) stands in for one.
maintainer="outl developers <outl@example.org>"
work=$(mktemp -d "${TMPDIR:-/tmp}/outl-deb.XXXXXX")
trap 'rm -rf "$work"' EXIT
stage=$work/stage
make -s --no-print-directory -C "$repo" install DESTDIR="$stage" PREFIX=/usr SWIFT=true RELEASE_BIN="$bin"
for f in "$stage"/usr/bin/*; do strip --strip-unneeded --remove-section=.comment --remove-section=.note "$f"; done
gzip -9n "$stage"/usr/share/man/man*/*
doc=$stage/usr/share/doc/outl
install -d "$doc" "$stage/usr/share/lintian/overrides"
# A native package: its changelog is changelog.gz.
{
  echo "outl ($version) unstable; urgency=medium"
  echo
  echo "  * Built from the outl source tree (see README.md)."
  echo
  echo " -- $maintainer  $(date -R -d @"${SOURCE_DATE_EPOCH:-$(git -C "$repo" log -1 --format=%ct 2>/dev/null || date +%s)}")"
} | gzip -9n > "$doc/changelog.gz"
install -m644 "$repo/packaging/copyright" "$doc/copyright"
install -m644 "$repo/packaging/lintian-overrides" "$stage/usr/share/lintian/overrides/outl"
# Depends from what the binaries link (outl-capture is static: nothing to compute for it).
mkdir -p "$work/src/debian"
printf 'Source: outl\n\nPackage: outl\nArchitecture: any\n' > "$work/src/debian/control"
depends=$(cd "$work/src" && dpkg-shlibdeps -O "$stage/usr/bin/outld" "$stage/usr/bin/outl" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || { echo "deb.sh: dpkg-shlibdeps found no dependencies" >&2; exit 1; }
# outld loads libsystemd with dlopen when it first talks to systemd or the journal, which
# dpkg-shlibdeps cannot see: named here (every libsystemd0 has the three calls it makes).
case "$depends" in *libsystemd0*) ;; *) depends="$depends, libsystemd0" ;; esac
install -d "$stage/DEBIAN"
cat > "$stage/DEBIAN/control" <<CONTROL
Package: outl
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $(du -sk "$stage/usr" | cut -f1)
Depends: $depends
Section: utils
Priority: optional
Description: capture lines into an outl journal from anywhere
 outl-capture saves one line into the outl capture inbox from a hotkey,
 a script or a link; outld, a systemd user service, moves each capture
 into the journal page of its day within milliseconds, never lost and
 never doubled. outl shows a day, checks the pages against the op log
 and reports the state of every device's op log and every inbox.
CONTROL
mkdir -p "$out"
deb=$out/outl_${version}_${arch}.deb
dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >/dev/null
echo "$deb"
