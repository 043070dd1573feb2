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
    print(f"{len(rows)} rows in the script's format read and fitted")


if __name__ == "__main__":
    main()
