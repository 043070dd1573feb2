#!/usr/bin/env python3
"""Ablation of twocs's fidelity mechanisms on its validation files (issue 8).

Runs `twocs validate` on each validation file once as it is and once per mechanism switched off
(every other mechanism as today), and prints a Markdown table of every run's signed error per
column with the mean absolute error and the max: what each mechanism buys, run by run
(docs/validation.md, "Ablation"). Each switch is a `--set` the contract documents; nothing here
is a parameter of the model.

Usage: scripts/ablation.py [--twocs build/twocs] [--jobs N] [FILE ...]
       (default files: workloads/validation/runs.yaml workloads/validation/modern.yaml)
About 15 minutes for both default files on two cores (2026-12-04).
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile

# (column, --set overrides): one mechanism off per column, as docs/validation.md names them.
SWITCHES = [
    ("today", []),
    ("no interference", ["device.comm_interference.compute_slowdown=0"]),
    ("no speed variation", ["device.speed_variation.spread=0"]),
    ("no host syncs", ["training.host.synchronize=false"]),
    ("no host launches", ["training.host.launch_time=0us"]),
    ("ideal links", ["node.interconnect.efficiency=1", "cluster.network.efficiency=1"]),
]
ALL_OFF = ("all five off", [s for _, sets in SWITCHES[1:] for s in sets])


def validate(twocs, path, sets):
    """The JSON result of `twocs validate PATH --set ...`."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "result.json")
        command = [twocs, "validate", path, "--quiet", "--ignore-memory", "--json", out]
        for s in sets:
            command += ["--set", s]
        subprocess.run(command, check=True)
        with open(out, encoding="utf-8") as f:
            return json.load(f)


def row_name(run):
    """A layer row's name with its pass (the JSON keeps forward and backward as two rows)."""
    if run.get("kind", "iteration") == "iteration":
        return run["name"]
    return f"{run['name']} ({run['kind']})"


def table(path, results):
    """The Markdown table of one validation file: a row per run, a column per switch."""
    columns = [name for name, _ in SWITCHES + [ALL_OFF]]
    lines = [f"`{os.path.relpath(path)}`", "", "| run | " + " | ".join(columns) + " |",
             "|---|" + "---|" * len(columns)]
    names = [row_name(r) for r in results[columns[0]]["runs"]]
    errors = {c: {row_name(r): r["error"] for r in results[c]["runs"]} for c in columns}
    for name in names:
        cells = [f"{100 * errors[c][name]:+.1f}%" if name in errors[c] else "n/a" for c in columns]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    for kind in ("iteration", "layer"):
        if not results[columns[0]].get(kind) or not results[columns[0]][kind].get("rows"):
            continue
        cells = [f"{100 * results[c][kind]['mean_abs_error']:.1f}% / {100 * results[c][kind]['max_abs_error']:.1f}%"
                 for c in columns]
        lines.append(f"| mean / max ({kind}) | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*",
                        default=["workloads/validation/runs.yaml", "workloads/validation/modern.yaml"])
    parser.add_argument("--twocs", default="build/twocs")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    for path in args.files:
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            futures = {name: pool.submit(validate, args.twocs, path, sets) for name, sets in SWITCHES + [ALL_OFF]}
            results = {name: future.result() for name, future in futures.items()}
        print(table(path, results))
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
