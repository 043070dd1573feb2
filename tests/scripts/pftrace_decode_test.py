#!/usr/bin/env python3
"""A twocs Perfetto trace decodes with protoc against the schema subset it cites
(tests/data/perfetto_trace_subset.proto, field numbers from Perfetto's published protos), and holds
what the Chrome JSON trace of the same run holds, one slice per complete ("X") event, and the
counter tracks: a memory track per device, the links' utilisation.

Usage: pftrace_decode_test.py TWOCS_PROGRAM PROTOC SUBSET_PROTO
"""

import json
import os
import re
import subprocess
import sys
import tempfile

# A small, fast run (tests/cli/cli_capture.hpp, small_run): 4 devices, two layers.
SMALL = ["--set", "model.layers=2", "--set", "model.hidden=1024", "--set", "model.heads=16",
         "--set", "model.seq_len=1024", "--set", "training.global_batch=4", "--set", "training.micro_batch=1",
         "--set", "training.parallelism.tensor=2", "--set", "training.parallelism.data=2"]


def main():
    program, protoc, schema = sys.argv[1:4]
    with tempfile.TemporaryDirectory() as tmp:
        pftrace, chrome = os.path.join(tmp, "t.pftrace"), os.path.join(tmp, "t.json")
        for out in (pftrace, chrome):
            subprocess.run([program, "run", "--quiet", *SMALL, "--trace", out], check=True)
        with open(pftrace, "rb") as stream:
            decoded = subprocess.run([protoc, f"--proto_path={os.path.dirname(schema)}", "--decode=perfetto.protos.Trace",
                                      os.path.basename(schema)], stdin=stream, capture_output=True, check=True).stdout
        with open(chrome) as stream:
            events = json.load(stream)["traceEvents"]
    text = decoded.decode()
    # protoc prints fields it does not know by number: every field written must be in the subset.
    unknown = re.findall(r"^\s*(\d+)[ :{]", text, re.MULTILINE)
    slices = len(re.findall(r"type: TYPE_SLICE_BEGIN", text)) + len(re.findall(r"type: TYPE_INSTANT", text))
    ends = len(re.findall(r"type: TYPE_SLICE_END", text))
    counter_tracks = len(re.findall(r"^\s*counter \{", text, re.MULTILINE))
    complete = sum(1 for e in events if e["ph"] == "X")
    devices = {e["pid"] for e in events if e["ph"] == "X"}
    memory_tracks = len(re.findall(r'name: "memory in use"', text))
    problems = []
    if unknown:
        problems.append(f"fields outside the schema subset: {sorted(set(unknown))}")
    if slices != complete or ends > slices:
        problems.append(f"{slices} slices ({ends} ends) in the Perfetto trace, {complete} X events in the JSON")
    if memory_tracks != len(devices) or counter_tracks <= memory_tracks:
        problems.append(f"{counter_tracks} counter tracks, {memory_tracks} of memory, for {len(devices)} devices")
    for required in ("memory in use", "-> node switch"):
        if required not in text:
            problems.append(f"no counter track named '{required}'")
    for p in problems:
        print(f"pftrace_decode_test: {p}", file=sys.stderr)
    print(f"{slices} slices, {counter_tracks} counter tracks, {len(decoded)} bytes decoded")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
