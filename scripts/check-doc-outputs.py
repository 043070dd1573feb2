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
trailing spaces do not count.

A Markdown table of simulated numbers is marked `<!-- twocs-table: COMMAND | COLUMNS... -->`
directly above it (scripts/doc_tables.py describes the columns and formats): the checker runs the
command, formats the table and compares it with the one in the file. `--update` rewrites every
marked table in place instead (the quoted outputs above are still only checked), so regenerating
the docs is one command:

    scripts/check-doc-outputs.py --update build/twocs README.md docs/*.md

Usage: check-doc-outputs.py [--update] [--jobs N] TWOCS FILE.md...; `--jobs` is passed to the
sweeps (default 2). Prints each command's wall time; exits 1 on a mismatch, naming the file and
line and showing both texts.
"""
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import doc_tables

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


def check_outputs(twocs, root, path):
    """(blocks checked, failures) of the quoted outputs in one file."""
    failures = checked = 0
    for marker_line, args, block in quoted_blocks(path):
        if args is None:
            print(f"{path}:{marker_line}: {block}")
            failures += 1
            continue
        checked += 1
        start = time.monotonic()
        run = subprocess.run([twocs, *args], cwd=root, capture_output=True, text=True, timeout=600)
        print(f"{path}:{marker_line}: twocs {' '.join(args)}: {time.monotonic() - start:.1f} s")
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
    return checked, failures


def table_lines(twocs, root, jobs, cache, where, text):
    """The lines the marked table should have (one run per distinct command, cached)."""
    args, columns, wheres, pivot, summary = doc_tables.parse_marker(text)
    key = tuple(args)
    if key not in cache:
        cache[key], seconds = doc_tables.results(twocs, args, root, jobs)
        print(f"{where}: twocs {' '.join(args)}: {seconds:.1f} s")
    return doc_tables.render(cache[key], columns, wheres, pivot, summary)


def check_tables(twocs, root, path, jobs, update, cache):
    """(tables checked, failures, tables rewritten) in one file; rewrites the file with --update."""
    lines = path.read_text(encoding="utf-8").splitlines()
    checked = failures = rewritten = 0
    out, done = [], 0
    for first, text, start, end in doc_tables.marked_tables(lines):
        checked += 1
        out += lines[done:start]
        done = end
        try:
            want = table_lines(twocs, root, jobs, cache, f"{path}:{first + 1}", text)
        except (ValueError, RuntimeError) as e:
            print(f"{path}:{first + 1}: {e}")
            failures += 1
            out += lines[start:end]
            continue
        have = lines[start:end]
        out += want
        if have == want:
            continue
        if update:
            rewritten += 1
            continue
        failures += 1
        if not have:
            print(f"{path}:{start + 1}: the marker must be directly above a Markdown table (--update writes it)")
            continue
        n = next((i for i, (h, w) in enumerate(zip(have, want)) if h != w), min(len(have), len(want)))
        print(f"{path}:{start + 1 + n}: the table says\n    {have[n] if n < len(have) else '(end of table)'}\n"
              f"  but twocs gives\n    {want[n] if n < len(want) else '(end of table)'}\n"
              f"  fix: scripts/check-doc-outputs.py --update TWOCS {path} (or change the code back)")
    if rewritten:
        path.write_text("\n".join(out + lines[done:]) + "\n", encoding="utf-8")
    return checked, failures, rewritten


def main():
    argv, update, jobs = sys.argv[1:], False, 2
    while argv and argv[0].startswith("--"):
        if argv[0] == "--update":
            update, argv = True, argv[1:]
        elif argv[0] == "--jobs" and len(argv) > 1:
            jobs, argv = int(argv[1]), argv[2:]
        else:
            break
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    twocs = str(Path(argv[0]).resolve())
    root = Path(__file__).resolve().parent.parent
    started, cache = time.monotonic(), {}
    checked = failures = tables = rewritten = 0
    for name in argv[1:]:
        path = Path(name)
        c, f = check_outputs(twocs, root, path)
        t, g, r = check_tables(twocs, root, path, jobs, update, cache)
        checked, failures, tables, rewritten = checked + c, failures + f + g, tables + t, rewritten + r
    print(f"{checked} quoted outputs and {tables} tables checked, {failures} out of date"
          + (f", {rewritten} tables rewritten" if update else "")
          + f" ({time.monotonic() - started:.0f} s)")
    return 1 if failures or checked + tables == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
