#!/usr/bin/env bash
# Builds one libFuzzer target (tests/fuzz) with clang, ASan and UBSan in build-fuzz/ and runs
# it for SECONDS, at low priority, one process. Seeds: the repository's inputs and the
# bad-input corpus; what the fuzzer learns stays in build-fuzz/corpus/TARGET, findings go to
# build-fuzz/findings/TARGET (add each as a case of tests/corpus/manifest.txt, then fix it).
#   scripts/fuzz.sh TARGET SECONDS     TARGET: units workload platform set profile_csv study hf
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -ne 2 ]; then
  echo "usage: scripts/fuzz.sh units|workload|platform|set|profile_csv|study|hf SECONDS" >&2
  exit 2
fi
target=fuzz_$1
seconds=$2
build=build-fuzz
if [ ! -f $build/build.ninja ]; then
  CC=clang CXX=clang++ cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTWOCS_FUZZ=ON \
    -DTWOCS_BUILD_TESTS=OFF -DCMAKE_CXX_COMPILER_LAUNCHER="$(command -v ccache || true)" >/dev/null
fi
nice -n 19 ninja -C $build "$target"

seeds=$build/seeds/$1
mkdir -p "$seeds" "$build/corpus/$1" "$build/findings/$1"
case $1 in
  units) printf '%s\n' 300GB/s 25MB 80GiB 312TFLOP/s 4us 1.5e3ms 200Gb/s 1e308EB 'nanMB' | split -l 1 - "$seeds/u" ;;
  workload) cp workloads/*.yaml workloads/validation/*.yaml tests/corpus/workload/*.yaml "$seeds/" ;;
  platform) cp platforms/*.yaml tests/corpus/platform/*.yaml "$seeds/" ;;
  set) printf '%s\n' training.parallelism.data=4 cluster.network.bandwidth=50GB/s 'model.layers=[&a 1]' \
         'device.operator_model.gemm_tiles=[{m: 128, n: 128, k: 32}]' | split -l 1 - "$seeds/s" ;;
  profile_csv) cp tests/corpus/profile/*.csv tests/data/*.csv "$seeds/" ;;
  study) cp sim/studies/*.yaml "$seeds/"; [ -d tests/corpus/study ] && cp tests/corpus/study/*.yaml "$seeds/" ;;
  hf) cp tests/fuzz/hf/*.json "$seeds/"; [ -d tests/corpus/hf ] && cp tests/corpus/hf/*.json "$seeds/" ;;
  *) echo "unknown target '$1'" >&2; exit 2 ;;
esac
dict=tests/fuzz/yaml.dict
[ "$1" = profile_csv ] && dict=tests/fuzz/csv.dict
[ "$1" = units ] && dict=tests/fuzz/yaml.dict
[ "$1" = hf ] && dict=tests/fuzz/json.dict

# detect_leaks: a leak is a finding too; -rss_limit_mb bounds one input's memory.
ASAN_OPTIONS=detect_leaks=1 nice -n 19 "$build/tests/fuzz/$target" -max_total_time="$seconds" -rss_limit_mb=2048 \
  -timeout=30 -max_len=65536 -dict="$dict" -print_final_stats=1 \
  -artifact_prefix="$build/findings/$1/" "$build/corpus/$1" "$seeds"
