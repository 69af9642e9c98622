#!/usr/bin/env bash
# bench/scale.sh: a ten-year workspace (SCALE_OPS ops, default 1,000,000: 10,000 days of 100
# captures). outld's start to READY=1 with every page file present and with none (a device that
# has only the op logs: it writes them after READY=1, and the time until it has is shown too), each
# next to the op-log boot of the same workspace in the same run, and outld's resident memory once
# ready (and, with no pages, once it has written them all), with where the model's part of it goes
# (outl debug-memory); then a second device that
# receives the whole op log while it runs, with a capture every 200 ms until it has merged it and
# written its pages (their largest latency; the watchdog pings).
# Targets: ready within 1.5x the boot with pages present; at most 150 bytes resident per op;
# captures within 1 s during the merge.
set -euo pipefail
cd "$(dirname "$0")"
exec python3 scale_bench.py
