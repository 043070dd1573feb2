#!/usr/bin/env python3
"""Memory-bound kernels of the Blackwell parts (B200, GB200), derived from those measured on an H200.

    python3 scripts/derive_blackwell_memory.py [-o platforms/measured/b200-memory-bf16.csv]

Nothing like the H200's table (platforms/measured/h200-memory-bf16.csv) was measured on a Blackwell
GPU. What was published is one memory-bound kernel timed on both parts by one author: FlashInfer's
fused add + RMSNorm on an H200 and a B200 at 16 sizes (platforms/measured/
flashinfer-add-rmsnorm-h200-b200.csv). The B200 runs it 1.07-1.44 times as fast as the H200, where
its HBM (8 TB/s against 4.8) would allow 1.67: a kernel written for Hopper keeps too few bytes in
flight to fill the B200's HBM, so its fraction of peak falls (0.83 of the H200's at 537 MB, 0.72 of
the B200's). The rule, one for every Blackwell part with a B200's HBM (docs/operator-models.md,
"Memory-bound kernels of the Blackwell parts"):

- a kernel runs as much faster than on the H200 as the measured kernel of its size does:
  time / s(bytes), s the H200-over-B200 time ratio, linear in log bytes between measured sizes and
  held at the end values outside them (33.6 MB to 537 MB);
- but no faster than the GH100 rule's cap allows, the best fraction of peak any kernel reached on
  the H200 (0.908, scripts/derive_gh100_memory.py) of the part's 8 TB/s; a STREAM-like triad reaches
  7.14 TB/s (0.89) on a GB300 with the same HBM3e (meta-pytorch/KernelAgent, Oink's SM10x benchmarks).

    time(B200) = max(time(H200) / s(bytes), bytes / (0.908 x 8 TB/s))

tests/cost/derived_memory_tables_test.cpp recomputes every row of the written file.
"""
import argparse
import csv
import math
import sys
from pathlib import Path

from derive_gh100_memory import H200, H200_BANDWIDTH, ROOT, bytes_of, read_rows, seconds_of

EVIDENCE = ROOT / "platforms/measured/flashinfer-add-rmsnorm-h200-b200.csv"
BLACKWELL_BANDWIDTH = 8e12  # NVIDIA DGX B200 datasheet: 64 TB/s for 8 GPUs (platforms/dgx-b200.yaml)


def speedups():
    """(bytes, H200 time / B200 time) of the measured kernel, by increasing bytes."""
    points = []
    for row in read_rows(EVIDENCE):
        h200 = seconds_of({"measured_time": row["h200_time"]})
        b200 = seconds_of({"measured_time": row["b200_time"]})
        points.append((float(row["bytes"]), h200 / b200))
    return sorted(points)


def speedup_at(points, size):
    """Linear in log bytes between measured sizes, the end values outside them."""
    if size <= points[0][0]:
        return points[0][1]
    if size >= points[-1][0]:
        return points[-1][1]
    for (x0, y0), (x1, y1) in zip(points, points[1:]):
        if x0 <= size <= x1:
            t = (math.log(size) - math.log(x0)) / (math.log(x1) - math.log(x0))
            return y0 + t * (y1 - y0)
    raise AssertionError("unreachable")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-o", "--output", type=Path, default=ROOT / "platforms/measured/b200-memory-bf16.csv")
    args = parser.parse_args()
    rows = read_rows(H200)
    best = max(bytes_of(r) / seconds_of(r) / H200_BANDWIDTH for r in rows)
    points = speedups()
    out = [
        "# Memory-bound kernels in bf16 on a Blackwell part with 8 TB/s of HBM3e (B200, GB200), derived from the H200's",
        "# (h200-memory-bf16.csv) by scripts/derive_blackwell_memory.py: each kernel runs as much faster than on the H200 as",
        "# FlashInfer's fused add + RMSNorm of its size does (flashinfer-add-rmsnorm-h200-b200.csv, x%.3f to x%.3f), capped"
        % (min(p[1] for p in points), max(p[1] for p in points)),
        "# at the H200's best fraction of peak (%.4f) of 8 TB/s: time = max(time on the H200 / s(bytes), bytes / (%.4f x 8 TB/s))."
        % (best, best),
        "# Derived, not measured: regenerate with the script, never edit by hand.",
        "op,shape,dtype,measured_time,name,accumulation,scaling",
    ]
    for r in rows:
        size = bytes_of(r)
        seconds = max(seconds_of(r) / speedup_at(points, size), size / (best * BLACKWELL_BANDWIDTH))
        out.append('%s,"%s",%s,%.3fus,%s,,' % (r["op"], r["shape"], r["dtype"], seconds * 1e6, r["name"]))
    args.output.write_text("\n".join(out) + "\n")
    print("wrote %s: %d rows, speedups %d points" % (args.output, len(rows), len(points)), file=sys.stderr)


if __name__ == "__main__":
    main()
