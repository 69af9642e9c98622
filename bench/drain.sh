#!/usr/bin/env bash
# bench/drain.sh: outld's figures beside their floors, in one run: capture→durable (its op log's
# fdatasync returned) and capture→projected (its page file durable) latency (p50/p99) vs the C
# floor of one append+fdatasync and one temp+fsync+rename (run 20 at a time between the captures,
# so both meet the same moments of a shared disk); bursts of 10,000 and 100,000 files (io_uring, plain, fdatasync per capture),
# each run OUTL_BENCH_BURST_REPS times (default 15; 100,000: 5) interleaved with the C floor, medians compared;
# and an idle outld's CPU time and context switches over OUTL_BENCH_IDLE_SECONDS (default 60).
# Last, the measurement behind what outld leaves to plain syscalls with a ring at hand (the op
# log's append, a pass of one file): the same calls both ways in C (c/uring_tail.c). It runs after
# the rest: the discards of its thousands of unlinks would otherwise meet outld's latency runs.
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p out
cc -O2 -o out/floor c/floor.c
cc -O2 -o out/drain_floor c/drain_floor.c
cc -O2 -o out/uring_tail c/uring_tail.c -luring
python3 drain_bench.py
tail_dir=$(mktemp -d "${TMPDIR:-/var/tmp}/outl-uring-tail.XXXXXX")
echo "-- io_uring against plain syscalls, one caller, in $tail_dir"
out/uring_tail "$tail_dir"
rm -rf "$tail_dir"
