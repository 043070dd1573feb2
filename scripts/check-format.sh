#!/usr/bin/env bash
# Fails when a C++ file differs from what clang-format (.clang-format) would write.
set -euo pipefail
cd "$(dirname "$0")/.."
find include src sim tests -name '*.cpp' -o -name '*.hpp' | sort | xargs clang-format --dry-run -Werror
echo "format check: clean"
