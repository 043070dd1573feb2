#!/usr/bin/env bash
# Installs the Debian 12 packages twocs needs (only those missing) and builds it in build/.
# Usage: scripts/setup.sh [extra cmake arguments]; TWOCS_TEST_TOOLS=1 adds what the tests need.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(g++ cmake ninja-build pkg-config libsimgrid-dev libboost-graph-dev libyaml-cpp-dev libspdlog-dev
          libfmt-dev doctest-dev libcli11-dev nlohmann-json3-dev python3
          # the Python module `import twocs` (docs/python.md) and its DataFrames
          pybind11-dev python3-pybind11 python3-dev python3-numpy python3-pandas
          # zlib, for gzipped traces (twocs run --trace FILE.json.gz)
          zlib1g-dev
          # Open MPI, for sweeps across machines (mpirun -n K twocs sweep; optional to CMake)
          openmpi-bin libopenmpi-dev)
# The test suite also opens study reports in a real browser (scripts/check-report-browser.sh) and
# decodes Perfetto traces with protoc against Perfetto's schema (tests/scripts/pftrace_decode_test.py).
if [ "${TWOCS_TEST_TOOLS:-0}" = 1 ]; then packages+=(chromium protobuf-compiler); fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  echo "twocs setup: installing ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build build
