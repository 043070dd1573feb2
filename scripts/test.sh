#!/usr/bin/env bash
# Sets everything up (scripts/setup.sh) and runs the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
TWOCS_TEST_TOOLS=1 scripts/setup.sh
ctest --test-dir build --output-on-failure -j "$(nproc)"
