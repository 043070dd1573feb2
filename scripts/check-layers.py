#!/usr/bin/env python3
"""Checks the layering of twocs (docs/architecture.md) against the source tree.

Rules:
  1. A file of layer L (src/L/**, include/twocs/L/**) includes only twocs headers of L and of
     the layers L links, directly or through them, per the `twocs_layer(NAME DEPS ...)` and
     `twocs_python_module(NAME DEPS ...)` lines of CMakeLists.txt; so an upward include fails
     here before it fails to link.
  2. Only the engine includes SimGrid headers, and only the engine links SimGrid.
  3. The config layer does not depend on the engine (it never links SimGrid).
  4. Only config, report, fileio and cli may open files or print: the core layers (units,
     model, hardware, cost, lowering, platform, engine, analysis) use no <fstream>, <cstdio>,
     <iostream>, std::cout/cerr or exit().
Usage: scripts/check-layers.py [SOURCE_DIR]. Exit 0 when every rule holds, 1 with one line per
violation (file:line: what is wrong) otherwise.
"""
import re
import sys
from pathlib import Path

CORE = {"units", "model", "hardware", "cost", "lowering", "platform", "engine", "analysis", "projection", "planning"}
FILE_TOUCHING = re.compile(r"#include\s*<(fstream|cstdio|iostream)>|std::(cout|cerr|clog)\b|[^_\w]exit\s*\(")


def declared_layers(root):
    """{layer: set of direct twocs deps} and {layer: set of all link deps} from CMakeLists.txt."""
    text = (root / "CMakeLists.txt").read_text()
    deps, links = {}, {}
    # A layer is a static library (twocs_layer) or the Python module above them (twocs_python_module).
    for m in re.finditer(r"^twocs_(?:layer|python_module)\((\w+)([^)]*)\)", text, re.MULTILINE):
        words = m.group(2).split()
        deps[m.group(1)] = {w[len("twocs_"):] for w in words if w.startswith("twocs_") and w != "twocs_embedded_scenario"}
        links[m.group(1)] = set(words)
    return deps, links


def closure(deps, layer):
    seen, todo = set(), [layer]
    while todo:
        for d in deps.get(todo.pop(), ()):
            if d not in seen:
                seen.add(d)
                todo.append(d)
    return seen


def layer_of(root, path):
    rel = path.relative_to(root).parts
    if rel[0] == "src" and len(rel) > 2:
        return rel[1]
    if rel[:2] == ("include", "twocs") and len(rel) > 3:
        return rel[2]
    return None


def main():
    root = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent)
    deps, links = declared_layers(root)
    problems = []
    for layer in deps:
        if "engine" in closure(deps, layer) and layer == "config":
            problems.append(f"CMakeLists.txt: config depends on the engine (and so on SimGrid): {sorted(closure(deps, layer))}")
        if any("SIMGRID" in w for w in links[layer]) and layer != "engine":
            problems.append(f"CMakeLists.txt: layer {layer} links SimGrid; only the engine may")
    files = sorted(p for d in ("src", "include") for p in (root / d).rglob("*") if p.suffix in (".hpp", ".cpp", ".h"))
    for path in files:
        layer = layer_of(root, path)
        if layer is None:
            continue
        if layer not in deps:
            problems.append(f"{path.relative_to(root)}: folder '{layer}' is no layer of CMakeLists.txt")
            continue
        allowed = closure(deps, layer) | {layer}
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            where = f"{path.relative_to(root)}:{number}"
            m = re.match(r'\s*#\s*include\s*[<"]twocs/(\w+)/', line)
            if m and m.group(1) not in allowed:
                problems.append(f"{where}: layer {layer} includes {m.group(1)}, which is not below it ({' '.join(sorted(allowed))})")
            if re.match(r"\s*#\s*include\s*[<\"](simgrid|xbt)/", line) and layer != "engine":
                problems.append(f"{where}: only the engine may include SimGrid")
            code = line.split("//", 1)[0]
            if layer in CORE and FILE_TOUCHING.search(code):
                problems.append(f"{where}: core layer {layer} touches files or the terminal; leave that to config/report")
    for p in problems:
        print(p)
    print(f"check-layers: {len(files)} files, {len(deps)} layers, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
