#!/usr/bin/env python3
"""Checks that program output quoted in the docs is what the program prints today.

A Markdown file marks a quoted output with an HTML comment naming the command, directly above a
fenced block:

    <!-- twocs-output: run --quiet -->
    ```
    twocs: gpt3-13b on dgx-a100-80gb
      ...
    ```

The checker runs `TWOCS ARGS` from the repository root and compares the block with the output,
line by line, from the first line on. A line that is exactly `...` or `  ...` (any indent) skips
output lines until the block's next line matches (or ends the comparison when it is the last);
trailing spaces do not count. Usage: check-doc-outputs.py TWOCS FILE.md...; exit 1 on a mismatch,
naming the file and line and showing both texts.
"""
import re
import shlex
import subprocess
import sys
from pathlib import Path

MARKER = re.compile(r"^<!-- twocs-output: (.+?) -->\s*$")


def quoted_blocks(path):
    """(line number of the marker, argument list, the block's lines) for each marked block."""
    lines = path.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        m = MARKER.match(line)
        if not m:
            continue
        if i + 1 >= len(lines) or not lines[i + 1].startswith("```"):
            yield i + 1, None, "the marker must be directly above a fenced block"
            continue
        end = i + 2
        while end < len(lines) and not lines[end].startswith("```"):
            end += 1
        yield i + 1, shlex.split(m.group(1)), [l.rstrip() for l in lines[i + 2 : end]]


def compare(block, output):
    """None when `block` matches `output`, else (block line index, expected, printed)."""
    out = [l.rstrip() for l in output.splitlines()]
    o = 0
    for b, line in enumerate(block):
        if line.strip() == "...":
            if b + 1 == len(block):
                return None
            nxt = block[b + 1]
            while o < len(out) and out[o] != nxt:
                o += 1
            continue
        if o >= len(out) or out[o] != line:
            return b, line, out[o] if o < len(out) else "(end of output)"
        o += 1
    return None


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    twocs = sys.argv[1]
    root = Path(__file__).resolve().parent.parent
    failures = checked = 0
    for name in sys.argv[2:]:
        path = Path(name)
        for marker_line, args, block in quoted_blocks(path):
            if args is None:
                print(f"{path}:{marker_line}: {block}")
                failures += 1
                continue
            checked += 1
            run = subprocess.run([twocs, *args], cwd=root, capture_output=True, text=True, timeout=600)
            if run.returncode != 0:
                print(f"{path}:{marker_line}: twocs {' '.join(args)} exited {run.returncode}:\n{run.stderr}")
                failures += 1
                continue
            diff = compare(block, run.stdout)
            if diff:
                b, expected, printed = diff
                print(f"{path}:{marker_line + 2 + b}: the docs say\n    {expected}\n"
                      f"  but twocs {' '.join(args)} prints\n    {printed}\n"
                      f"  fix: paste the program's output into the block (or change the code back)")
                failures += 1
    print(f"{checked} quoted outputs checked, {failures} out of date")
    return 1 if failures or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
