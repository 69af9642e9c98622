#!/usr/bin/env bash
# tools/mldoc/record.sh: has mldoc (tools/mldoc/build.sh) read the pages the projection writes for the
# conformance corpus, and the hand-written pages in Tests/WorkspaceTests/Fixtures/logseq-pages, and
# records what it read in Tests/WorkspaceTests/Fixtures/mldoc-readings.jsonl, which
# LogseqRulesTests replays against LogseqRules (CI cannot build mldoc). Run it after changing the
# corpus, the renderer or LogseqRules; needs the mldoc sources fetched to /work/.mirror.
set -euo pipefail
cd "$(dirname "$0")/../.."
here=tools/mldoc
bin="${MLDOC_OUT:-$here}/bin/mldoc-json"
[ -x "$bin" ] || bash "$here/build.sh"
pages=$(mktemp -d)
trap 'rm -rf "$pages"' EXIT
swift build --build-tests >/dev/null
OUTL_DUMP_PAGES="$pages" OUTL_BIN_DIR="$(swift build --show-bin-path)" \
    swift test --skip-build --filter every_projected_page_reads_back_as_the_captures >/dev/null
cp Tests/WorkspaceTests/Fixtures/logseq-pages/*.md "$pages/"
python3 "$here/readings.py" "$pages"/*.md > Tests/WorkspaceTests/Fixtures/mldoc-readings.jsonl
echo "recorded $(wc -l < Tests/WorkspaceTests/Fixtures/mldoc-readings.jsonl) pages"
