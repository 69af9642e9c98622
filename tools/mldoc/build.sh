#!/usr/bin/env bash
# tools/mldoc/build.sh: builds Logseq's Markdown parser (mldoc) natively, offline, into
# $MLDOC_OUT/bin/mldoc-json (default: tools/mldoc, whose src/ and bin/ git ignores). It is how the
# Markdown rules were verified (tools/mldoc/readings.py); CI cannot fetch the sources, so the tests
# carry what it read (Tests/WorkspaceTests/Fixtures/mldoc-readings.jsonl).
# Sources come from bare git mirrors (brought by the session `fetch` tool):
#   /work/.mirror/logseq+mldoc/repo      logseq/mldoc        @ MLDOC_REV
#   /work/.mirror/logseq+angstrom/repo   logseq/angstrom fork @ ANGSTROM_REV
#   /work/.mirror/logseq+xmlm/repo       logseq/xmlm fork     @ XMLM_REV
#   /work/.mirror/mirage+ocaml-uri/repo  mirage/ocaml-uri     @ URI_REV (v4.2.0)
# Toolchain and remaining libraries come from Debian packages (installed if
# missing; that is the only network use, via apt).
# Idempotent: wipes and regenerates src/ and bin/ every run.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OUT="${MLDOC_OUT:-$HERE}"
MIRROR="${MIRROR:-/work/.mirror}"

MLDOC_REV=bedae990097fff9251cde34e685bc3cec13c01a3
ANGSTROM_REV=3be9b966dc2bc9ccf9948d17a7b0df1cb526de15
XMLM_REV=0b085e97c75fd196649ce2e23c54f9d2502771ca
URI_REV=0ff3efbbc235bef5a7d67cc01bc1dadbe2e859b9

DEB_PKGS=(ocaml-nox ocaml-dune ocaml-findlib
  libyojson-ocaml-dev libppx-deriving-ocaml-dev libppx-deriving-yojson-ocaml-dev
  libppxlib-ocaml-dev libbigstringaf-ocaml-dev libstringext-ocaml-dev)

log() { printf '[build.sh] %s\n' "$*" >&2; }

# 1. Debian packages -------------------------------------------------------
missing=()
for p in "${DEB_PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  log "installing Debian packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# 2. Source trees ----------------------------------------------------------
export_tree() { # git-dir rev dest [paths...]
  local gd="$1" rev="$2" dest="$3"; shift 3
  [ -d "$gd" ] || { log "missing mirror $gd (bring it with: fetch github:<owner>/<repo>)"; exit 1; }
  git --git-dir="$gd" cat-file -e "$rev^{commit}" 2>/dev/null \
    || { log "commit $rev not in $gd"; exit 1; }
  mkdir -p "$dest"
  git --git-dir="$gd" archive --format=tar "$rev" -- "$@" | tar -x -C "$dest"
}

SRC="$OUT/src"
log "regenerating $SRC"
rm -rf "$SRC" "$OUT/bin"
mkdir -p "$SRC/vendor"

cat > "$SRC/dune-project" <<'DUNE'
(lang dune 2.9)
DUNE
cat > "$SRC/dune" <<'DUNE'
(vendored_dirs vendor)
DUNE

# mldoc: the library only (bin/, js/, bench/, test/ need core, js_of_ocaml, lwt...)
export_tree "$MIRROR/logseq+mldoc/repo" "$MLDOC_REV" "$SRC/mldoc" dune-project mldoc.opam lib
# Debian has dune 2.9.3; nothing in lib/ needs dune 3.x features.
sed -i 's/^(lang dune 3\.[0-9]*)/(lang dune 2.9)/' "$SRC/mldoc/dune-project"

# angstrom fork (lib only)
export_tree "$MIRROR/logseq+angstrom/repo" "$ANGSTROM_REV" "$SRC/vendor/angstrom" dune-project angstrom.opam lib

# uri v4.2.0 (lib only; Debian's liburi-ocaml-dev would pull Debian's angstrom)
export_tree "$MIRROR/mirage+ocaml-uri/repo" "$URI_REV" "$SRC/vendor/uri" dune-project uri.opam lib

# xmlm fork: topkg-based upstream, so give it a dune build
export_tree "$MIRROR/logseq+xmlm/repo" "$XMLM_REV" "$SRC/vendor/xmlm" src opam
mv "$SRC/vendor/xmlm/opam" "$SRC/vendor/xmlm/xmlm.opam"
rm -f "$SRC/vendor/xmlm/src/xmlm.mllib"
cat > "$SRC/vendor/xmlm/dune-project" <<'DUNE'
(lang dune 2.9)
(name xmlm)
DUNE
cat > "$SRC/vendor/xmlm/src/dune" <<'DUNE'
(library
 (name xmlm)
 (public_name xmlm))
DUNE

# driver
mkdir -p "$SRC/driver"
cp "$HERE/driver/main.ml" "$SRC/driver/main.ml"
cat > "$SRC/driver/dune" <<'DUNE'
(executable
 (name main)
 (libraries mldoc yojson))
DUNE

# 3. Build -----------------------------------------------------------------
log "dune build (profile release)"
cd "$SRC"
dune build --root "$SRC" --profile release ./driver/main.exe 2>&1

mkdir -p "$OUT/bin"
install -m 0755 "$SRC/_build/default/driver/main.exe" "$OUT/bin/mldoc-json"
log "built $OUT/bin/mldoc-json"
