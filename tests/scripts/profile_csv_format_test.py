#!/usr/bin/env python3
"""The CSV that scripts/profile_operators.py writes is what `twocs calibrate` reads.

Runs without PyTorch or a GPU: builds rows for every kernel the script measures with made-up
times, writes them with the script's own write_csv, and has the twocs program fit them.
Usage: profile_csv_format_test.py TWOCS_PROGRAM SOURCE_DIR
"""

import os
import subprocess
import sys
import tempfile


def main():
    program, source = sys.argv[1], sys.argv[2]
    sys.path.insert(0, os.path.join(source, "scripts"))
    import profile_operators as p

    rows = []
    for dtype in ("bf16", "fp16", "fp32"):
        for kind, dims, name in p.default_gemms(quick=False):
            flops = 2 * dims["m"] * dims["n"] * dims["k"] * dims.get("batch", 1)
            rows.append(dict(op=kind, shape=dims, dtype=dtype, seconds=flops / 200e12 + 5e-6, name=name))
        for kind, name, elements, bytes_per, flops_per, _ in p.memory_bound_kernels(dtype):
            shape = dict(bytes=elements * bytes_per, flops=elements * flops_per)
            rows.append(dict(op=kind, shape=shape, dtype=dtype, seconds=shape["bytes"] / 1.6e12 + 5e-6, name=name))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "profile.csv")
        with open(path, "w", newline="") as stream:
            p.write_csv(rows, stream)
        result = subprocess.run([program, "calibrate", path], capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"twocs calibrate rejected the script's CSV:\n{result.stderr}")
    expected = f"twocs calibrate: {len(rows)} kernels from"
    if expected not in result.stdout:
        sys.exit(f"expected '{expected}' in:\n{result.stdout}")
    # FP8: the GEMMs only, named by their accumulation, fitted against a device with an FP8 peak.
    fp8 = []
    for kind, dims, name in p.fp8_gemms(quick=False):
        assert kind == "gemm" and all(dims[d] % 16 == 0 for d in ("m", "n", "k")), name  # _scaled_mm's rule
        flops = 2 * dims["m"] * dims["n"] * dims["k"]
        fp8.append(dict(op=kind, shape=dims, dtype="fp8", seconds=flops / 900e12 + 5e-6, name=f"{name}.split_accum",
                        accumulation="split"))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "fp8.csv")
        with open(path, "w", newline="") as stream:
            p.write_csv(fp8, stream)
        platform = os.path.join(source, "platforms", "dgx-h100.yaml")
        result = subprocess.run([program, "calibrate", path, "--platform", platform], capture_output=True, text=True)
    if result.returncode != 0 or f"twocs calibrate: {len(fp8)} kernels from" not in result.stdout:
        sys.exit(f"twocs calibrate did not read the script's FP8 CSV:\n{result.stdout}{result.stderr}")
    print(f"{len(rows)} rows and {len(fp8)} FP8 rows in the script's format read and fitted")


if __name__ == "__main__":
    main()
