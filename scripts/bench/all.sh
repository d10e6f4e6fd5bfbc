#!/usr/bin/env bash
# Runs every benchmark in turn (npm run bench). Each prints its figures and its ratio to a baseline
# measured in the same run; BENCH_JSON=<file> also collects them as JSON lines.
set -euo pipefail
cd "$(dirname "$0")/../.."
status=0
for b in relay failure streams footprint backup fanout; do
  npm run --silent "bench:$b" || { echo "bench:$b failed" >&2; status=1; }
done
exit $status
