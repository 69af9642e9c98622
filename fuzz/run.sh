#!/usr/bin/env bash
# fuzz/run.sh SECONDS [TARGET...]: builds each libFuzzer target (its own package, so the main
# build never sees -sanitize=fuzzer) and runs it for SECONDS from fuzz/corpus/<target>/.
# Exits non-zero if any target crashed, leaked, hung or failed to build, printing the crasher.
set -uo pipefail
cd "$(dirname "$0")"
export PATH=/opt/swift/usr/bin:$PATH
secs=${1:-60}
shift || true
all=(fuzz-path fuzz-capture-decode fuzz-markdown fuzz-oplog)
[ $# -gt 0 ] && targets=("$@") || targets=("${all[@]}")

failed=0
for t in "${targets[@]}"; do
    echo "== $t: build"
    swift build -c debug --sanitize=fuzzer --product "$t" >"/tmp/outl-fuzz-build.$$" 2>&1
    brc=$?
    if [ $brc -ne 0 ]; then
        grep -E 'error:' "/tmp/outl-fuzz-build.$$" | head -n 5
        rm -f "/tmp/outl-fuzz-build.$$"
        echo "FAIL $t: build failed"; failed=1; continue
    fi
    rm -f "/tmp/outl-fuzz-build.$$"
    bin=.build/debug/$t
    # New inputs go to artifacts/<t>/corpus (the first dir); corpus/<t> holds the committed
    # seeds and regression inputs and stays clean.
    mkdir -p "corpus/$t" "artifacts/$t/corpus"
    log=artifacts/$t/last.log
    echo "== $t: fuzz for ${secs}s (log: fuzz/$log)"
    # The Swift runtime's backtracer would catch the crash before libFuzzer saves the input.
    SWIFT_BACKTRACE=enable=no "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
        -artifact_prefix="artifacts/$t/" "artifacts/$t/corpus" "corpus/$t" >"$log" 2>&1
    rc=$?
    if [ $rc -ne 0 ]; then
        crasher=$(ls -t artifacts/"$t"/{crash,leak,timeout,oom,slow-unit}-* 2>/dev/null | head -n 1)
        echo "FAIL $t (exit $rc): crasher $PWD/${crasher:-<none written, see $log>}"
        grep -m 3 -E 'Fatal error|Precondition failed|Assertion failed|ERROR: libFuzzer' "$log" | sed 's/^/    /'
        failed=1
    else
        tail -n 1 "$log" | sed 's/^/    /'
    fi
done
exit $failed
