#!/usr/bin/env bash
# bench/drain.sh: outld's figures beside their floors, in one run: capture→durable (its op log's
# fdatasync returned) and capture→projected (its page file durable) latency (p50/p99) vs the C
# floor of one append+fdatasync and one temp+fsync+rename (run 20 at a time between the captures,
# so both meet the same moments of a shared disk); bursts of 10,000 and 100,000 files (io_uring, plain, fdatasync per capture),
# each run OUTL_BENCH_BURST_REPS times (default 15; 100,000: 5) interleaved with the C floor, medians compared;
# and an idle outld's CPU time and context switches over OUTL_BENCH_IDLE_SECONDS (default 60).
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p out
cc -O2 -o out/floor c/floor.c
cc -O2 -o out/drain_floor c/drain_floor.c
exec python3 drain_bench.py
