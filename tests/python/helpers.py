"""Shared pieces of the Python module's tests: the twocs program to compare with, the source
tree, and a tiny scenario that simulates in a fraction of a second.

ctest sets PYTHONPATH to build/python, TWOCS_PROGRAM to build/twocs and TWOCS_SOURCE_DIR to the
repository (tests/CMakeLists.txt)."""
import json
import os
import subprocess
import tempfile
from pathlib import Path

PROGRAM = os.environ["TWOCS_PROGRAM"]
SOURCE = Path(os.environ["TWOCS_SOURCE_DIR"])
PLATFORM = SOURCE / "platforms" / "dgx-a100-80gb.yaml"

# One layer of a small model on one node, tensor-parallel over 2 GPUs: milliseconds to simulate.
TINY_WORKLOAD = """model: {layers: 1, hidden: 256, heads: 4, vocab: 1000, seq_len: 64}
training: {global_batch: 2, micro_batch: 1,
  parallelism: {tensor: 2, pipeline: 1, data: 1}}
"""


def program(*args, check=True):
    """Runs the twocs program; returns the CompletedProcess (text)."""
    return subprocess.run([PROGRAM, *map(str, args)], capture_output=True, text=True, check=check)


def cli_summary(*run_args):
    """The JSON summary `twocs run RUN_ARGS --json FILE` writes."""
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "summary.json"
        program("run", "--quiet", "--json", path, *run_args)
        return json.loads(path.read_text())


def folder_with(files):
    """A temporary folder holding {name: text}; the caller cleans it up (a TemporaryDirectory)."""
    d = tempfile.TemporaryDirectory(prefix="twocs-python-test-")
    for name, text in files.items():
        (Path(d.name) / name).write_text(text)
    return d
