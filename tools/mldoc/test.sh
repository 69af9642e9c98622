#!/usr/bin/env bash
# Sanity checks for bin/mldoc-json. Prints "N passed, N failed"; exits non-zero on failure.
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BIN="${MLDOC_OUT:-$HERE}/bin/mldoc-json"
[ -x "$BIN" ] || { echo "missing $BIN: run $HERE/build.sh first" >&2; exit 1; }

pass=0; fail=0
# check NAME INPUT(printf format) [CONFIG] -- EXPECTED-SUBSTRING...
check() {
  local name="$1" input="$2"; shift 2
  local cfg=()
  if [ "${1:-}" != "--" ]; then cfg=("$1"); shift; fi
  shift # --
  local out
  out="$(printf -- "$input" | "$BIN" "${cfg[@]}" 2>&1)"
  local ok=1 s
  for s in "$@"; do
    grep -qF -- "$s" <<<"$out" || { ok=0; echo "  missing: $s"; }
  done
  if command -v python3 >/dev/null && ! python3 -c 'import json,sys; json.load(sys.stdin)' <<<"$out" 2>/dev/null; then
    ok=0; echo "  output is not valid JSON"
  fi
  if ((ok)); then pass=$((pass+1)); echo "ok   $name"
  else fail=$((fail+1)); echo "FAIL $name"; echo "  input:  $(printf -- "$input" | head -c 200)"; echo "  output: $out"; fi
}

check "heading + property drawer" '- item\n  id:: 123\n' -- \
  '["Heading",{"title":[["Plain","item"]]' '"unordered":true' '["Property_Drawer",[["id","123",[]]]]'
check "NOW marker" '- NOW I get it\n' -- \
  '"title":[["Plain","I get it"]]' '"marker":"NOW"'
check "backslash escapes eaten" '- C:\\Users\\bob\\new\n' -- \
  '[["Plain","C:Usersbobnew"]]'
check "page ref and tag" '- see [[Page A]] #tag\n' -- \
  '"url":["Page_ref","Page A"]' '["Tag",[["Plain","tag"]]]'
check "nested blocks and page properties" 'title:: Foo\n\n- a\n\t- b\n' -- \
  '["Property_Drawer",[["title","Foo",[]]]]' '"level":1' '"title":[["Plain","b"]],"tags":[],"level":2'
check "positions" '- a\n- b\n' -- \
  '{"start_pos":0,"end_pos":4}' '{"start_pos":4,"end_pos":8}'
check "empty input" '' -- '[]'
check "org format via config argument" '* TODO org heading\n' \
  '{"toc":false,"parse_outline_only":false,"heading_number":false,"keep_line_break":true,"format":"Org","heading_to_list":false,"export_md_remove_options":[]}' -- \
  '"marker":"TODO"' '"title":[["Plain","org heading"]]'

# bad config -> exit 2 with message
if out="$(echo x | "$BIN" '{"format":1}' 2>&1)"; then rc=0; else rc=$?; fi
if [ "$rc" = 2 ] && grep -qF 'Config error' <<<"$out"; then pass=$((pass+1)); echo "ok   bad config rejected"
else fail=$((fail+1)); echo "FAIL bad config rejected (rc=$rc, out=$out)"; fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
