#!/usr/bin/env python3
"""Memory-bound kernels of another GH100 part, derived from those measured on an H200.

    python3 scripts/derive_gh100_memory.py [--bandwidth 3.35e12] [-o platforms/measured/h100-memory-bf16.csv]

The H200 SXM and the H100 SXM are the same GH100 chip (132 SMs, the same clocks and 700 W limit);
only their HBM differs (4.8 TB/s HBM3e against 3.35 TB/s HBM3). The rule, one for every GH100 part
(docs/operator-models.md, "Memory-bound kernels of the GH100 parts"):

- a kernel that the H200's HBM does not limit keeps its rate: what limits it is the SMs' work and
  the bytes they keep in flight (Little's law: rate = bytes in flight / latency), the same chip's;
- but no kernel moves bytes faster than the part's HBM allows: at most the highest fraction of
  its peak bandwidth that any measured memory-bound kernel reached on the H200 (the residual add,
  0.908), times the part's own peak.

    time(part) = max(time(H200), bytes / (best_fraction x bandwidth(part)))

The cap agrees with what speed-of-light kernels sustain on an H100 SXM's HBM3: 3.01 TB/s, 89.7%
of 3.35 (Dao-AILab/quack, media/2025-07-10-membound-sol.md at c8ec317). Keeping the fraction
instead (time x 4.8 / 3.35, the rule `measured_device_scale` applies to what-ifs) would put
torch's softmax on an H100 at 1.28 TB/s, where the same blog measures torch.compile's at 1.9-2.0.
tests/cost/derived_memory_tables_test.cpp recomputes every row of the written file from the H200's.
"""
import argparse
import csv
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
H200 = ROOT / "platforms/measured/h200-memory-bf16.csv"
H200_BANDWIDTH = 4.8e12  # NVIDIA H200 datasheet: 4.8 TB/s (platforms/dgx-h200.yaml)


def read_rows(path):
    lines = path.read_text().splitlines()
    return list(csv.DictReader(line for line in lines if not line.startswith("#")))


def bytes_of(row):
    return float(re.search(r"bytes=(\d+)", row["shape"]).group(1))


def seconds_of(row):
    text = row["measured_time"]
    assert text.endswith("us"), text
    return float(text[:-2]) * 1e-6


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bandwidth", type=float, default=3.35e12, help="the part's peak HBM bandwidth, bytes/s")
    parser.add_argument("-o", "--output", type=Path, default=ROOT / "platforms/measured/h100-memory-bf16.csv")
    args = parser.parse_args()
    rows = read_rows(H200)
    best = max(bytes_of(r) / seconds_of(r) / H200_BANDWIDTH for r in rows)
    out = [
        "# Memory-bound kernels in bf16 on a GH100 part with %.3g TB/s of HBM, derived from the H200's"
        % (args.bandwidth / 1e12),
        "# (h200-memory-bf16.csv) by scripts/derive_gh100_memory.py: each kernel keeps its H200 time unless this"
        " part's HBM caps it",
        "# at the best fraction of peak any of them reached on the H200 (%.4f): time = max(time on the H200,"
        " bytes / (%.4f x %.3g TB/s))." % (best, best, args.bandwidth / 1e12),
        "# Derived, not measured: regenerate with the script, never edit by hand.",
        "op,shape,dtype,measured_time,name,accumulation,scaling",
    ]
    for r in rows:
        seconds = max(seconds_of(r), bytes_of(r) / (best * args.bandwidth))
        out.append('%s,"%s",%s,%.3fus,%s,,' % (r["op"], r["shape"], r["dtype"], seconds * 1e6, r["name"]))
    args.output.write_text("\n".join(out) + "\n")
    print("wrote %s: %d rows, best H200 fraction %.4f" % (args.output, len(rows), best), file=sys.stderr)


if __name__ == "__main__":
    main()
