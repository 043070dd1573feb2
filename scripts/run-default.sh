#!/usr/bin/env bash
# Sets everything up (scripts/setup.sh) and simulates the embedded default scenario.
# Extra arguments go to `twocs run`, e.g. scripts/run-default.sh --json summary.json
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
exec build/twocs run "$@"
