#!/usr/bin/env bash
# completions.sh (issue 19): the shell completions complete. bash: each program's completion is
# loaded in a real bash and asked for commands, options and option values; fish: the same through
# `complete -C`; zsh: each file is parsed by zsh (driving its completion system needs a terminal).
# A shell that is not installed is reported as SKIPPED, never as passed.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
C=$repo/share/completions
fail() { echo "FAIL: $*" >&2; exit 1; }

# bash_complete PROGRAM WORDS...: what the completion offers for the last word.
bash_complete() {
  local program=$1; shift
  bash --norc --noprofile -c '
    source "$1"; shift
    COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
    fn=$(complete -p "$1" | sed -n "s/.*-F \([^ ]*\) .*/\1/p")
    "$fn"
    printf "%s\n" "${COMPREPLY[@]}"
  ' bash "$C/bash/$program" "$program" "$@" | sort | tr '\n' ' ' | sed 's/ $//'
}
expect() { # expect WHAT GOT WANT
  [ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"
}
expect "outl <TAB>" "$(bash_complete outl '')" "check daily help reconcile show status version"
expect "outl s<TAB>" "$(bash_complete outl s)" "show status"
expect "outl --workspace /tmp show <TAB>" "$(bash_complete outl --workspace /tmp show t)" "today tomorrow"
expect "outl daily <TAB>" "$(bash_complete outl daily '')" "append"
expect "outl --j<TAB>" "$(bash_complete outl --j)" "--json"
expect "outl-capture --so<TAB>" "$(bash_complete outl-capture --so)" "--source"
expect "outl-capture --source <TAB>" "$(bash_complete outl-capture --source '')" "cli clipboard hotkey script selection share"
expect "outl-capture --pa<TAB>" "$(bash_complete outl-capture --pa)" "--page"
expect "outl-capture --page <TAB>" "$(bash_complete outl-capture --page '')" "today"
expect "outl-capture --att<TAB>" "$(bash_complete outl-capture --att)" "--attach"
expect "outl-capture --scr<TAB>" "$(bash_complete outl-capture --scr)" "--screenshot"
expect "outl-capture -- --<TAB>" "$(bash_complete outl-capture -- --)" ""
expect "outld --io <TAB>" "$(bash_complete outld --io '')" "auto plain uring"
expect "outld --log j<TAB>" "$(bash_complete outld --log j)" "journal"
echo "ok: bash completes outl's commands and days, outl-capture's and outld's options and their values"

if command -v fish >/dev/null; then
  fish_complete() { fish --no-config -c "source $C/fish/$1.fish; complete -C '$2'" | cut -f1 | sort | tr '\n' ' ' | sed 's/ $//'; }
  expect "fish: outl s" "$(fish_complete outl 'outl s')" "show status"
  expect "fish: outl daily " "$(fish_complete outl 'outl daily ')" "append"
  expect "fish: outl-capture --source " "$(fish_complete outl-capture 'outl-capture --source ')" "cli clipboard hotkey script selection share"
  expect "fish: outld --io " "$(fish_complete outld 'outld --io ')" "auto plain uring"
  echo "ok: fish completes the same"
else
  echo "SKIPPED: fish is not installed (make deps installs it)"
fi

if command -v zsh >/dev/null; then
  for f in "$C"/zsh/_*; do
    head -n 1 "$f" | grep -qx "#compdef $(basename "$f" | cut -c2-)" || fail "$f does not start with its #compdef line"
    zsh -n "$f" || fail "zsh cannot parse $f"
  done
  echo "ok: zsh parses every completion, each declared for its program"
else
  echo "SKIPPED: zsh is not installed (make deps installs it)"
fi
