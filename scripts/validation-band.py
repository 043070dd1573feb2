#!/usr/bin/env python3
"""The validation with speed variation off and over several seeds, as a Markdown table.

Same-SKU speed variation (docs/simulation.md, "Speed variation") is a random draw per device, so
one seed's errors are one realisation. This runs `twocs validate FILE` once with
`device.speed_variation.spread=0` and once per seed 1..N with the platform's spread, and prints per
iteration row the error with variation off, the mean over the seeds and their range, and the
summary lines (mean |error|, max |error|, rows fast) for each setting.

With `--what-if TAG:KEY=VALUE` (repeatable) it also validates with each override (speed variation
as shipped, seed 1) and prints a second table: the summary line per what-if, against as shipped.
That is how the sensitivities of the platforms' assumed parameters are measured
(docs/platform-model.md, "Provenance").

Usage: validation-band.py TWOCS FILE.yaml [--seeds 5] [--cache DIR] [--what-if TAG:KEY=VALUE]...
With --cache, each run's `--json` lands in DIR as STEM-off.json / STEM-sN.json / STEM-TAG.json and
is reused when present (delete DIR to rerun). Run from the repository root (paths in FILE are
relative to it).
"""
import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path


def run_validate(twocs, file, overrides, out):
    if out.exists():
        return json.loads(out.read_text())
    cmd = [twocs, "validate", file, "--json", str(out), "-q", "--ignore-memory"]
    for o in overrides:
        cmd += ["--set", o]
    subprocess.run(cmd, check=True)
    return json.loads(out.read_text())


def iteration_rows(result):
    return {r["name"]: r for r in result["runs"] if r["kind"] == "iteration" and r.get("error") is not None}


def summary(errors):
    return (statistics.mean(abs(e) for e in errors), max(abs(e) for e in errors), sum(e < 0 for e in errors))


def pct(x):
    return f"{100 * x:+.1f}%"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("twocs")
    p.add_argument("file")
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--cache")
    p.add_argument("--what-if", action="append", default=[], metavar="TAG:KEY=VALUE")
    a = p.parse_args()
    cache = Path(a.cache) if a.cache else Path(tempfile.mkdtemp(prefix="twocs-band-"))
    cache.mkdir(parents=True, exist_ok=True)
    stem = Path(a.file).stem
    off = iteration_rows(run_validate(a.twocs, a.file, ["device.speed_variation.spread=0"], cache / f"{stem}-off.json"))
    seeded = [
        iteration_rows(run_validate(a.twocs, a.file, [f"device.speed_variation.seed={s}"], cache / f"{stem}-s{s}.json"))
        for s in range(1, a.seeds + 1)
    ]
    print(f"| run | variation off | {a.seeds} seeds: mean | range |")
    print("|---|---|---|---|")
    for name, row in off.items():
        errs = [s[name]["error"] for s in seeded]
        print(f"| {name} | {pct(row['error'])} | {pct(statistics.mean(errs))} | {pct(min(errs))} .. {pct(max(errs))} |")
    mean_off, max_off, fast_off = summary([r["error"] for r in off.values()])
    per_seed = [summary([r["error"] for r in s.values()]) for s in seeded]
    print(f"| **mean / max abs, rows fast** | {100 * mean_off:.1f}% / {100 * max_off:.1f}%, {fast_off} of {len(off)} "
          f"| {100 * statistics.mean(m for m, _, _ in per_seed):.1f}% / "
          f"{100 * statistics.mean(x for _, x, _ in per_seed):.1f}% (means over seeds) "
          f"| mean {100 * min(m for m, _, _ in per_seed):.1f}-{100 * max(m for m, _, _ in per_seed):.1f}%, "
          f"max {100 * min(x for _, x, _ in per_seed):.1f}-{100 * max(x for _, x, _ in per_seed):.1f}%, "
          f"fast {min(f for _, _, f in per_seed)}-{max(f for _, _, f in per_seed)} |")
    if a.what_if:
        print_what_ifs(a, cache, stem, seeded[0])
    return 0


def print_what_ifs(a, cache, stem, shipped):
    """One line per what-if: mean / max |error| and rows fast, against as shipped (seed 1)."""
    def line(label, rows):
        m, x, fast = summary([r["error"] for r in rows.values()])
        return f"| {label} | {100 * m:.1f}% | {100 * x:.1f}% | {fast} of {len(rows)} |"
    print()
    print("| setting (every row) | mean abs | max abs | rows fast |")
    print("|---|---|---|---|")
    print(line("as shipped (seed 1)", shipped))
    for spec in a.what_if:
        tag, override = spec.split(":", 1)
        rows = iteration_rows(run_validate(a.twocs, a.file, [override], cache / f"{stem}-{tag}.json"))
        print(line(f"`{override}`", rows))


if __name__ == "__main__":
    sys.exit(main())
