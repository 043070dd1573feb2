#!/bin/bash
# Measure the operator evidence twocs reads on one GPU (NVIDIA, or AMD through PyTorch's ROCm build) (docs/operator-models.md,
# "Profiles"): bf16 GEMMs of today's training shapes, memory-bound kernels and fused attention,
# FP8 GEMMs with split and with fast accumulation, and the GPU's clock and power while it runs.
#
#   scripts/profile-gpu.sh OUTPUT_DIR
#
# Writes OUTPUT_DIR/{bf16,fp8-split,fp8-fast}.csv (profile CSVs for `twocs calibrate` and a
# platform's `measured:` table), env.txt (GPU, driver, library versions, power limit) and
# smi.csv (clock, power and temperature every 200 ms), and the evidence of scripts/profile_more.py
# (fp8-blockwise.csv, grouped.csv, launch.csv, host.csv, layouts.csv) and scripts/te_gemm_host.cu
# (te-gemm-host.csv). About six minutes on an H100 or H200.
set -euo pipefail
out=${1:?usage: scripts/profile-gpu.sh OUTPUT_DIR}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
export PYTHONUNBUFFERED=1

# NVIDIA GPUs log their clocks and power with nvidia-smi; on an AMD GPU (PyTorch's ROCm build runs
# the same torch.cuda calls) the device is described once with rocm-smi where it is installed, and
# the clock log is skipped.
has_nvidia_smi=false
command -v nvidia-smi >/dev/null && has_nvidia_smi=true

{
  date -u
  if $has_nvidia_smi; then
    nvidia-smi --query-gpu=name,driver_version,power.limit,power.max_limit,clocks.max.sm,clocks.max.mem,memory.total \
      --format=csv
  elif command -v rocm-smi >/dev/null; then
    rocm-smi --showproductname --showmaxpower --showclocks || true
  fi
  python3 - <<'EOF'
import torch
print("torch", torch.__version__, "cuda", torch.version.cuda, "hip", getattr(torch.version, "hip", None), "cudnn", torch.backends.cudnn.version())
p = torch.cuda.get_device_properties(0)
print(p.name, "SMs", p.multi_processor_count, "memory", p.total_memory)
EOF
  python3 -m pip list 2>/dev/null | grep -i -E "^(torch|nvidia-cublas|nvidia-cudnn)" || true
} >"$out/env.txt" 2>&1

if $has_nvidia_smi; then
  nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu \
    --format=csv,nounits -lms 200 >"$out/smi.csv" 2>&1 &
  smi=$!
  trap 'kill $smi 2>/dev/null || true' EXIT
fi

profile() { python3 "$here/profile_operators.py" --shapes training "$@"; }
profile --dtype bf16 --attention -o "$out/bf16.csv"
profile --dtype fp8 --fp8-accumulation split -o "$out/fp8-split.csv"
profile --dtype fp8 --fp8-accumulation fast -o "$out/fp8-fast.csv"
more() { python3 "$here/profile_more.py" "$@"; }
more blockwise -o "$out/fp8-blockwise.csv" || true
more grouped -o "$out/grouped.csv" || true
more launch -o "$out/launch.csv" || true
more host -o "$out/host.csv" || true
# Transformer Engine's per-GEMM host work (needs nvcc and cuBLASLt; skipped without them).
if command -v nvcc >/dev/null; then
  nvcc -O2 -o "$out/te_gemm_host" "$here/te_gemm_host.cu" -lcublasLt && "$out/te_gemm_host" >"$out/te-gemm-host.csv" || true
fi
more layouts -o "$out/layouts.csv" || true
