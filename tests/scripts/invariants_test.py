#!/usr/bin/env python3
"""The invariant checker of scripts/invariants.py finds each broken invariant in a summary made to
break it, passes a consistent one, and its generator is deterministic in its seed.
Usage: invariants_test.py SOURCE_DIR."""
import copy
import importlib.util
import random
import sys
from pathlib import Path

spec = importlib.util.spec_from_file_location("invariants", Path(sys.argv[1]) / "scripts/invariants.py")
invariants = importlib.util.module_from_spec(spec)
spec.loader.exec_module(invariants)

KINDS = ("tensor", "pipeline", "data")
GOOD = {
    "iteration_time_s": 2.0,
    "breakdown_s": {"compute": 1.2, "exposed_comm": 0.5, "overlapped_comm": 0.3, "idle": 0.3},
    "exposed_comm_by_kind_s": {"tensor": 0.2, "pipeline": 0.1, "data": 0.2},
    "comm_busy_by_kind_s": {"tensor": 0.3, "pipeline": 0.1, "data": 0.4},
    "comm_fraction": 0.4,
    "exposed_comm_fraction": 0.25,
    "mfu": 0.45,
}


def broken(path, value):
    s = copy.deepcopy(GOOD)
    node = s
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return invariants.summary_checks(s)


failures = []
if invariants.summary_checks(GOOD):
    failures.append(f"a consistent summary is reported: {invariants.summary_checks(GOOD)}")
cases = {
    "the breakdown does not add up": (("breakdown_s", "idle"), 0.4),
    "exposed above busy": (("exposed_comm_by_kind_s", "data"), 0.5),
    "comm fraction above 1": (("comm_fraction",), 1.2),
    "exposed fraction below 0": (("exposed_comm_fraction",), -0.1),
    "mfu of 0": (("mfu",), 0.0),
    "mfu above 1": (("mfu",), 1.5),
}
for name, (path, value) in cases.items():
    if not broken(path, value):
        failures.append(f"not caught: {name}")
first = [invariants.draw(random.Random(5)) for _ in range(3)]
second = [invariants.draw(random.Random(5)) for _ in range(3)]
if first != second:
    failures.append("the generator is not deterministic in its seed")
print("\n".join(failures) or f"{len(cases)} broken summaries caught, a consistent one passed")
sys.exit(1 if failures else 0)
