#!/usr/bin/env bash
# Times the 240-scenario study sim/studies/hardware-evolution.yaml (issue: a study of at least
# 200 scenarios finishes on a 2-core machine in under 10 minutes). Not part of the test suite.
#   scripts/bench-sweep.sh [BUILD_DIR] [JOBS]      (defaults: build, 2)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
jobs="${2:-2}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
start=$(date +%s.%N)
"$build/twocs" sweep "$root/sim/studies/hardware-evolution.yaml" --jobs "$jobs" --output "$out/results.csv" \
  --report "$out/results.html"
end=$(date +%s.%N)
rows=$(($(wc -l < "$out/results.csv") - 1))
ok=$(grep -c ',ok,' "$out/results.csv" || true)
printf 'hardware-evolution: %d rows (%d ok) in %.1f s with --jobs %s\n' "$rows" "$ok" "$(echo "$end - $start" | bc)" "$jobs"
test "$rows" -eq 240
