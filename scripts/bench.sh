#!/usr/bin/env bash
# The performance benchmark of docs/performance.md (not part of the test suite: it times things).
#   scripts/bench.sh [table] [SCENARIO...]   wall time, peak memory, simulated tasks and tasks/s of
#                                            scenarios A-G (default: all), one at a time
#   scripts/bench.sh curves                  wall time and peak memory against devices (64 to 16k)
#                                            and against layers
# Environment: BUILD (default build), TWOCS_BENCH_ARGS (extra flags for every `twocs run`, e.g.
# --collective-lowering step for the exact rings), TWOCS_BENCH_COLLBENCH_ARGS (flags of D's
# collbench; default --collective-lowering auto). `coarse`: ring collectives lowered coarse;
# `replayed`: micro-batches simulated of the plan's when the steady state was replayed (--replay,
# the default auto; TWOCS_BENCH_ARGS="--replay off" simulates every one), else "-".
# Peak memory is /usr/bin/time -v's "Maximum resident set size".
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
twocs="${BUILD:-$root/build}/twocs"
bench="$root/workloads/bench"
a100="$root/platforms/dgx-a100-80gb.yaml"
h100="$root/platforms/dgx-h100.yaml"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
[[ -x "$twocs" ]] || { echo "bench.sh: build twocs first ($twocs)" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "bench.sh: needs GNU time (/usr/bin/time, Debian package 'time')" >&2; exit 2; }

# measure NAME CMD...: runs CMD under /usr/bin/time -v and prints one row of the table.
measure() {
  local name="$1"; shift
  local json="$tmp/summary.json" status=0
  rm -f "$json"
  /usr/bin/time -v -o "$tmp/time.txt" "$@" >"$tmp/out.txt" 2>"$tmp/err.txt" || status=$?
  local wall rss tasks fold coarse replayed
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i]; print s}' "$tmp/time.txt")
  rss=$(awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2 / 1024}' "$tmp/time.txt")
  tasks="-"; fold="-"; coarse="-"; replayed="-"
  if [[ -s "$json" ]]; then
    tasks=$(sed -n 's/.*"simulated_tasks": *\([0-9]*\).*/\1/p' "$json" | head -1)
    fold=$(tr -d '\n ' <"$json" | sed -n 's/.*"approximations":{"folded":\(true\|false\).*/\1/p')
    [[ -n "$fold" ]] || fold="-"
    coarse=$(sed -n 's/.*"coarse_collectives": *\([0-9]*\).*/\1/p' "$json" | head -1)
    [[ -n "$coarse" ]] || coarse="-"
    if tr -d '\n ' <"$json" | grep -q '"replay":{"replayed":true'; then
      replayed="$(sed -n 's/.*"simulated_micro_batches": *\([0-9]*\).*/\1/p' "$json" | head -1)/$(sed -n 's/.*"micro_batches": *\([0-9]*\).*/\1/p' "$json" | head -1)"
    fi
  fi
  local rate="-"
  [[ "$tasks" != "-" && -n "$tasks" ]] && rate=$(awk -v t="$tasks" -v w="$wall" 'BEGIN {printf "%.0f", t / (w > 0 ? w : 1)}')
  [[ $status -eq 0 ]] || { fold="exit $status"; tail -2 "$tmp/err.txt" >&2; }
  printf '%-28s %9.2f %10s %12s %12s  %-6s %7s %s\n' "$name" "$wall" "$rss" "${tasks:--}" "$rate" "$fold" "$coarse" \
    "$replayed"
}

header() {
  printf '%-28s %9s %10s %12s %12s  %-6s %7s %s\n' scenario wall_s max_rss_MB tasks tasks_per_s folded coarse replayed
}

# A `twocs run` with the flags every row shares (an array: /usr/bin/time runs programs, not functions).
run=("$twocs" run --quiet --ignore-memory --json "$tmp/summary.json")

scenario() {
  case "$1" in
  A) measure "A gpt3-175b/1024 v2" "${run[@]}" ${TWOCS_BENCH_ARGS:-} --workload "$bench/a-gpt3-175b-v2.yaml" --platform "$a100" --set cluster.nodes=128 ;;
  B) measure "B 1T/3072" "${run[@]}" ${TWOCS_BENCH_ARGS:-} --workload "$bench/b-1t.yaml" --platform "$a100" --set cluster.nodes=384 ;;
  C) measure "C 405B/16384 H100" "${run[@]}" ${TWOCS_BENCH_ARGS:-} --workload "$bench/c-405b.yaml" --platform "$h100" --set cluster.nodes=2048 ;;
  D) measure "D all-reduce 1GiB/4096" "$twocs" collbench --platform "$a100" --set cluster.nodes=512 --devices 4096 \
       --min-bytes 1GiB --max-bytes 1GiB ${TWOCS_BENCH_COLLBENCH_ARGS:---collective-lowering auto} ;;
  E) measure "E 13B d40/320 4:1 fold off" "${run[@]}" ${TWOCS_BENCH_ARGS:-} --workload "$bench/e-13b-d40.yaml" --platform "$a100" \
       --set cluster.nodes=40 --set cluster.network.nodes_per_switch=8 --set cluster.network.oversubscription=4 --fold off ;;
  F) measure "F 530B/560 v3" "${run[@]}" ${TWOCS_BENCH_ARGS:-} --workload "$bench/f-530b.yaml" --platform "$a100" --set cluster.nodes=70 \
       --max-tasks 100000000 ;;
  G) measure "G A unfolded, 1024" "${run[@]}" ${TWOCS_BENCH_ARGS:-} --workload "$bench/a-gpt3-175b-v2.yaml" --platform "$a100" \
       --set cluster.nodes=128 --fold off --max-tasks 100000000 ;;
  *) echo "bench.sh: unknown scenario '$1' (A-G)" >&2; exit 2 ;;
  esac
}

curves() {
  echo "# devices (GPT-3 175B shape, t 8, p 8, d 1..256, 16 micro-batches per pipeline, --fold auto)"
  header
  for d in 1 2 4 8 16 32 64 128 256; do
    measure "devices $((64 * d))" "${run[@]}" ${TWOCS_BENCH_ARGS:-} --workload "$root/workloads/gpt3-175b.yaml" --platform "$a100" \
      --set cluster.nodes=$((8 * d)) --set training.parallelism.data=$d --set training.global_batch=$((16 * d))
  done
  echo "# layers (t 8, p 8, d 16 on 1024 A100s, global batch 256, --fold auto)"
  header
  for l in 24 48 96 192; do
    measure "layers $l" "${run[@]}" ${TWOCS_BENCH_ARGS:-} --workload "$root/workloads/gpt3-175b.yaml" --platform "$a100" --set cluster.nodes=128 \
      --set model.layers=$l --set training.global_batch=256
  done
}

mode="${1:-table}"
if [[ "$mode" == curves ]]; then curves; exit 0; fi
[[ "$mode" == table ]] && shift || true
echo "# $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
header
for s in "${@:-A B C D E F G}"; do for x in $s; do scenario "$x"; done; done
