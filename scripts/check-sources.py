#!/usr/bin/env python3
"""Checks that the repository stands alone and its sources stay readable.

Rules:
  1. No C++ source or header under src/, include/, sim/ or tests/ is over 400 lines.
  2. No file the repository keeps (code, docs, inputs, scripts) refers to a path outside it: no
     absolute machine path (/work/, /home/, /root/, /tmp/ inside documentation) and no sibling
     folder of the checkout (../shared).
Usage: scripts/check-sources.py [SOURCE_DIR]. Exit 0 when both hold, else 1 with one line per
problem (file:line: what).
"""
import re
import sys
from pathlib import Path

MAX_LINES = 400
OUTSIDE = re.compile(r"(?<![\w.])(/work/|/home/|/root/|\.\./shared\b|\bshared/(validation|research|spec|design)\b)")
KEPT = (".cpp", ".hpp", ".h", ".md", ".yaml", ".yml", ".py", ".sh", ".cmake", ".txt", ".json", ".csv", ".dot")
SKIP_DIRS = {".git", "build", "node_modules"}


def kept_files(root):
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if any(part in SKIP_DIRS or part.startswith("build") for part in rel.parts[:-1]):
            continue
        if path.is_file() and (path.suffix in KEPT or path.name in ("run", "CMakeLists.txt")):
            yield path, rel


def main():
    root = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent)
    problems = []
    me = Path(__file__).resolve()
    for path, rel in kept_files(root):
        if path.resolve() == me or rel.parts[:2] == ("tests", "scripts"):
            continue  # this checker and its tests name the patterns they look for
        lines = path.read_text(errors="replace").splitlines()
        if path.suffix in (".cpp", ".hpp") and rel.parts[0] in ("src", "include", "sim", "tests") and len(lines) > MAX_LINES:
            problems.append(f"{rel}: {len(lines)} lines, over {MAX_LINES}: split it by concern")
        for number, line in enumerate(lines, 1):
            m = OUTSIDE.search(line)
            if m:
                problems.append(f"{rel}:{number}: refers to '{m.group(0)}', outside the repository")
    for p in problems:
        print(p)
    print(f"check-sources: {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
