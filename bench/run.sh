#!/usr/bin/env bash
# bench/run.sh: runs every bench/*.sh with the release binaries; each prints its figures next to
# the floor it is measured against, in the same run (these machines are shared and noisy).
set -euo pipefail
cd "$(dirname "$0")"
export OUTL_BIN_DIR=${OUTL_BIN_DIR:?run through make bench}
mkdir -p out
status=0
# writer-order.sh is not a bench: it rewrites the committed Sources/outl-capture/hot.order.
for b in $(ls *.sh | grep -v -e '^run.sh$' -e '^writer-order.sh$' | sort); do
  echo "=== bench/$b"
  bash "$b" || { echo "bench/$b failed" >&2; status=1; }
done
exit $status
