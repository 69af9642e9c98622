#!/usr/bin/env bash
# writer-order.sh: regenerates Sources/outl-capture/hot.order, the layout of the writer's code. It
# runs one capture of the release outl-capture under callgrind, takes the functions it entered,
# and keeps those that are a section of their own in the link (the writer's modules and the Swift
# runtime's C++; the standard library's Swift code and glibc are not split into sections, so they
# stay where they are). Run it after changing what a capture runs; bench/writer.sh says how many
# of the listed functions the build still has. SwiftPM does not relink for a changed order file:
# it takes effect at the next link of outl-capture (a clean build, or a change to its sources).
# Needs valgrind (apt-get install valgrind). Not run by `make bench`: the file is committed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
command -v valgrind >/dev/null || { echo "writer-order.sh: needs valgrind (apt-get install valgrind)" >&2; exit 69; }
cd "$root"
swift build -c release --product outl-capture >&2
bin=$(swift build -c release --show-bin-path)
work=$(mktemp -d "${TMPDIR:-/tmp}/outl-order.XXXXXX")
trap 'rm -rf "$work"' EXIT
# The inbox must exist, as after the first capture: the common case is what gets laid out.
"$bin/outl-capture" --quiet --inbox "$work/inbox" warm-up >/dev/null
valgrind --tool=callgrind --demangle=no --callgrind-out-file="$work/cg.out" \
  "$bin/outl-capture" --quiet --inbox "$work/inbox" buy oat milk >/dev/null 2>"$work/valgrind.log"
python3 - "$work/cg.out" "$bin" "$(swiftc -print-target-info | python3 -c 'import json,sys; print(json.load(sys.stdin)["paths"]["runtimeResourcePath"])')" \
  > Sources/outl-capture/hot.order <<'PY'
import glob, re, subprocess, sys
cg, bin_dir, resources = sys.argv[1:]
# callgrind names each function once, as "fn=(id) name", then by "(id)" alone: first sight is order.
order, seen, names = [], set(), {}
for line in open(cg):
    m = re.match(r"c?fn=\((\d+)\)(?: (.*))?$", line.rstrip("\n"))
    if not m:
        continue
    i, name = m.groups()
    if name:
        names[i] = name.split("'")[0]  # "'2" marks a recursion level, not another function
    name = names.get(i)
    if name and name not in seen:
        seen.add(name)
        order.append(name)
sections = set()
for obj in glob.glob(f"{bin_dir}/*.build/*.o") + [f"{resources}_static/linux/libswiftCore.a"]:
    out = subprocess.run(["readelf", "-SW", obj], capture_output=True, text=True).stdout
    sections.update(re.findall(r"\] (\.text\.\S+)", out))
hot = [f".text.{n}" for n in order if f".text.{n}" in sections]
print("\n".join(dict.fromkeys(hot)))
print(f"writer-order.sh: {len(hot)} of the {len(order)} functions one capture enters are laid out", file=sys.stderr)
PY
