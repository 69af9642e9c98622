#!/usr/bin/env bash
# phone.sh: issue 48 with real parts: two devices running outld (a, b) and a phone (Syncthing only,
# no outld, saving the Markdown whole and in place as Logseq or Obsidian mobile do) keep ~/outl in
# sync through three Syncthing 1.19 instances on loopback. The phone saves a text change, a deletion,
# a typed child, a swap and an indent; then, offline while a capture lands, a stale save with an
# edit and a typed line. Syncthing 1.19 delivers each save to a and b by unlinking the old file and
# renaming its temporary in. Every edit must reach every device, once, and nothing else change.
# Bounded (OUTL_PHONE_TIMEOUT, 300 s); a step the host refuses fails with its name; OUTL_KEEP_TMP=1
# keeps $T.
if [ -z "${OUTL_PHONE_TEST_BOUNDED:-}" ]; then
  OUTL_PHONE_TEST_BOUNDED=1 exec timeout -k 20 "${OUTL_PHONE_TIMEOUT:-300}" bash "$0" "$@"
fi
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib/common.sh"
source "$here/lib/syncthing.sh"
source "$here/lib/scenario.sh"
DEVS=(a b phone)
OUTLDS=(a b)
FOLDER=outl
SETTLE=${OUTL_SYNC_SETTLE:-40}
# outld takes a delivered page's unexplained changes once nothing has arrived for this long.
export OUTL_SYNC_SETTLE_MS=${OUTL_SYNC_SETTLE_MS:-2000}
declare -A WSD OUTLD_PID

on_exit() {
  local rc=$? d
  set +e
  for d in "${OUTLDS[@]}"; do [ -z "${OUTLD_PID[$d]:-}" ] || kill -TERM "${OUTLD_PID[$d]}" 2>/dev/null; done
  for d in "${OUTLDS[@]}"; do
    [ -z "${OUTLD_PID[$d]:-}" ] || timeout 10 tail --pid="${OUTLD_PID[$d]}" -f /dev/null 2>/dev/null || kill -KILL "${OUTLD_PID[$d]}" 2>/dev/null
  done
  for d in "${DEVS[@]}"; do st_stop "$d"; done
  if [ $rc -ne 0 ] && [ -z "${SUMMARY_DONE:-}" ]; then
    echo "phone: aborted (exit $rc) after ${SECONDS}s"
    for d in "${DEVS[@]}"; do
      for f in "$T/$d/syncthing.log" "$T/$d/outld.log"; do [ -f "$f" ] && { echo "---- tail of $f"; tail -15 "$f"; }; done
    done
  fi
  cleanup_common
  exit $rc
}
trap on_exit EXIT
trap 'echo "FAIL: phone.sh ran out of time (${OUTL_PHONE_TIMEOUT:-300}s) at ${SECONDS}s"; exit 124' TERM

start_outld() {
  local d=$1
  dev_env "$d"
  env "${DEVENV[@]}" "$OUTLD" --workspace "${WSD[$d]}" --log stderr 2>>"$T/$d/outld.log" &
  OUTLD_PID[$d]=$!
  wait_for 20 "outld on $d to say ready" grep -q "^outld: ready:" "$T/$d/outld.log" \
    || die "outld start ($d)" "no 'outld: ready:' line; its log ends: $(tail -5 "$T/$d/outld.log")"
}
# capture D TOKEN N: one capture on D at 10:00:0N on the test's day (its own second, so captures
# sort in the order made: two writers in one millisecond have ULIDs in no given order).
capture() {
  dev_env "$1"
  env "${DEVENV[@]}" "$CAPTURE" --workspace "${WSD[$1]}" --quiet --at "2026-12-02T10:00:0$3Z" "phone test $2" >/dev/null \
    || fail "outl-capture on $1 for $2 exited non-zero"
}
settle() {
  local what=$1 out; shift
  out=$(st_wait_settled "$SETTLE" "$FOLDER" "$@") && echo "   $what: $out" || fail "syncthing settles after $what: $out"
}
page() { echo "${WSD[$1]}/journals/2026_12_02.md"; }

# outline FILE: each bullet as "DEPTH|TEXT" (property lines and ids left out), in file order.
outline() {
  python3 - "$1" <<'PY'
import re, sys
try: lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
except FileNotFoundError: sys.exit(0)
for l in lines:
    m = re.match(r"^( *)- (.*)$", l)
    if m: print(f"{len(m.group(1)) // 2}|{m.group(2)}")
PY
}
# shows D EXPECTED [any-order]: D's journal outline is EXPECTED (lines "DEPTH|TEXT"), in order, or as
# a multiset with any-order.
shows() {
  local got; got=$(outline "$(page "$1")")
  if [ "${3:-}" = any-order ]; then [ "$(sort <<<"$got")" = "$(sort <<<"$2")" ]; else [ "$got" = "$2" ]; fi
}
# expect WHAT EXPECTED [any-order]: every device (the phone too) shows EXPECTED, within 60 s.
expect() {
  local what=$1 want=$2 mode=${3:-} d all
  all() { local x; for x in "${DEVS[@]}"; do shows "$x" "$want" "$mode" || return 1; done; }
  if wait_for 60 "$what on every device" all; then
    ok "$what: on a, b and the phone"
  else
    for d in "${DEVS[@]}"; do shows "$d" "$want" "$mode" || { fail "$what: $d shows"; outline "$(page "$d")" | sed 's/^/       /'; }; done
    echo "     wanted:"; sed 's/^/       /' <<<"$want"
  fi
}
# phone_save PYTHON: the phone's app rewrites its journal file whole, in place (open, truncate,
# write), with `text` transformed by the Python statements given (they see `text` and `blocks`).
phone_save() {
  python3 - "$(page phone)" "$1" <<'PY' || die "phone save" "could not edit the phone's file"
import re, sys
path, code = sys.argv[1], sys.argv[2]
text = open(path, encoding="utf-8").read()
def blocks_of(t):
    # top-level blocks as lists of lines
    out = []
    for l in t.split("\n"):
        if l.startswith("- "): out.append([l])
        elif out and l: out[-1].append(l)
    return out
def join(bs): return "".join(l + "\n" for b in bs for l in b)
def find(bs, token): return next(i for i, b in enumerate(bs) if token in b[0])
blocks = blocks_of(text)
exec(code)
with open(path, "r+", encoding="utf-8") as f:
    f.seek(0); f.write(join(blocks)); f.truncate()
PY
}

# phone_does WHAT EDIT EXPECTED: the phone saves EDIT (phone_save), Syncthing settles, and every
# device shows EXPECTED.
phone_does() {
  step "the phone $1"
  phone_save "$2"
  settle "$1" "${DEVS[@]}"
  expect "the phone $1" "$3"
}

# ---- setup -----------------------------------------------------------------------------------------
st_require
for d in "${DEVS[@]}"; do
  WSD[$d]=$T/$d/home/outl
  st_device "$d" "$T/$d/home" "${WSD[$d]}"
  printf '%s\n' /.outl/tmp /.outl/captures/tmp >"${WSD[$d]}/.stignore"
done
st_share "$FOLDER" "${DEVS[@]}"
step "start Syncthing on ${DEVS[*]} (127.0.0.1 only)"
for d in "${DEVS[@]}"; do st_start "$d"; done
st_wait_connected 30 "${DEVS[@]}"
ok "three Syncthing instances up and connected"
step "start outld on ${OUTLDS[*]}; the phone has none"
for d in "${OUTLDS[@]}"; do start_outld "$d"; done

step "five captures on a"
for n in 1 2 3 4 5; do capture a "ph-$n-end" "$n"; done
settle "the captures" "${DEVS[@]}"
expect "the captures" "$(for n in 1 2 3 4 5; do echo "0|phone test ph-$n-end"; done)"

phone_does "edits a text" 'i = find(blocks, "ph-1-end"); blocks[i][0] += " (edited on the phone)"' "0|phone test ph-1-end (edited on the phone)
0|phone test ph-2-end
0|phone test ph-3-end
0|phone test ph-4-end
0|phone test ph-5-end"

phone_does "deletes a block" 'del blocks[find(blocks, "ph-2-end")]' "0|phone test ph-1-end (edited on the phone)
0|phone test ph-3-end
0|phone test ph-4-end
0|phone test ph-5-end"

phone_does "types a child" 'blocks[find(blocks, "ph-3-end")].append("  - typed on the phone under ph-3")' "0|phone test ph-1-end (edited on the phone)
0|phone test ph-3-end
1|typed on the phone under ph-3
0|phone test ph-4-end
0|phone test ph-5-end"

phone_does "swaps two blocks" 'i, j = find(blocks, "ph-4-end"), find(blocks, "ph-5-end"); blocks[i], blocks[j] = blocks[j], blocks[i]' "0|phone test ph-1-end (edited on the phone)
0|phone test ph-3-end
1|typed on the phone under ph-3
0|phone test ph-5-end
0|phone test ph-4-end"

phone_does "indents a block" 'i = find(blocks, "ph-4-end"); b = blocks.pop(i); blocks[find(blocks, "ph-5-end")] += ["  " + l for l in b]' "0|phone test ph-1-end (edited on the phone)
0|phone test ph-3-end
1|typed on the phone under ph-3
0|phone test ph-5-end
1|phone test ph-4-end"

step "the phone goes offline; b captures; the phone saves its stale file"
st_stop phone
capture b "ph-6-end" 6
settle "the capture while the phone is away" a b
phone_save 'i = find(blocks, "ph-1-end"); blocks[i][0] = blocks[i][0].replace("(edited on the phone)", "(edited again, offline)"); blocks.append(["- typed on the phone while offline"])'
st_start phone
st_wait_connected 30 "${DEVS[@]}"
settle "the stale save" "${DEVS[@]}"
expect "a stale save after being offline, and the capture it never showed" "0|phone test ph-1-end (edited again, offline)
0|phone test ph-3-end
1|typed on the phone under ph-3
0|phone test ph-5-end
1|phone test ph-4-end
0|phone test ph-6-end
0|typed on the phone while offline" any-order

# ---- final checks ------------------------------------------------------------------------------------
step "final checks"
# A conflict copy Syncthing made on the way is no page: a device's outld takes what it adds and
# removes it, and the removal travels. (Syncthing's own temporary of a copy whose transfer the
# removal cut short, .syncthing.NAME.tmp, is its to clean up, and no page either.)
conflict_copies() { find "${WSD[@]}" -name '*.sync-conflict-*' ! -name '.syncthing.*.tmp'; }
no_conflict_copy() { [ -z "$(conflict_copies)" ]; }
wait_for 60 "every sync conflict copy to be taken and removed" no_conflict_copy || true
settle "the end" "${DEVS[@]}"
for d in b phone; do
  cmp -s "$(page a)" "$(page "$d")" && ok "$d's journal file is a's, byte for byte" || fail "$d's journal file differs from a's"
done
conflicts=$(conflict_copies | wc -l)
[ "$conflicts" = 0 ] && ok "no sync conflict copy left" || fail "$conflicts sync conflict copies left: $(conflict_copies | sed "s|$T/||" | tr '\n' ' ')"
deletes=$(cat "${WSD[a]}"/.outl/ops/ops-*.jsonl | grep -c '"k":"db"' || true)
[ "$deletes" = 1 ] && ok "one delete op: the phone's" || fail "$deletes delete ops, the phone made one"
for d in "${OUTLDS[@]}"; do
  errs=$(grep -c "^outld: error:" "$T/$d/outld.log" || true)
  echo "   outld on $d: $errs error(s); took the phone's saves: $(grep -c 'hand edit(s) turned into ops' "$T/$d/outld.log" || true) time(s)"
  kill -0 "${OUTLD_PID[$d]}" 2>/dev/null && ok "outld on $d still running" || fail "outld on $d died"
done
if out=$(st_loopback_only "${DEVS[@]}"); then ok "Syncthing sockets: $out"; else fail "Syncthing sockets: $out"; fi

summarize phone
