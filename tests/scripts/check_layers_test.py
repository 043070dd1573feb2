#!/usr/bin/env python3
"""scripts/check-layers.py accepts the repository and rejects each kind of violation.

Usage: check_layers_test.py SOURCE_DIR. Builds small trees in a temporary folder."""
import subprocess
import sys
import tempfile
from pathlib import Path

root = Path(sys.argv[1])
script = root / "scripts" / "check-layers.py"
CMAKE = """twocs_layer(units DEPS fmt::fmt)
twocs_layer(model DEPS twocs_units)
twocs_layer(engine DEPS twocs_model PRIVATE_DEPS PkgConfig::SIMGRID)
twocs_layer(config DEPS twocs_model)
"""


def run(tree):
    return subprocess.run([sys.executable, str(script), str(tree)], capture_output=True, text=True)


def tree_with(files, cmake=CMAKE):
    d = Path(tempfile.mkdtemp())
    (d / "CMakeLists.txt").write_text(cmake)
    for name, text in files.items():
        (d / name).parent.mkdir(parents=True, exist_ok=True)
        (d / name).write_text(text)
    return d


failures = 0


def expect(name, files, ok, needle="", cmake=CMAKE):
    global failures
    r = run(tree_with(files, cmake))
    if (r.returncode == 0) != ok or needle not in r.stdout:
        failures += 1
        print(f"FAIL {name}: rc={r.returncode}\n{r.stdout}{r.stderr}")
    else:
        print(f"ok   {name}")


expect("the repository", {}, True)
assert run(root).returncode == 0, run(root).stdout
print("ok   the real repository holds")
expect("a downward include", {"src/model/a.cpp": "#include <twocs/units/quantity.hpp>\n"}, True)
expect("an upward include", {"src/units/a.cpp": "#include <twocs/model/operator.hpp>\n"}, False, "src/units/a.cpp:1")
expect("SimGrid outside the engine", {"src/model/a.cpp": "#include <simgrid/s4u.hpp>\n"}, False, "only the engine")
expect("SimGrid in the engine", {"src/engine/a.cpp": "#include <simgrid/s4u.hpp>\n"}, True)
expect("a core layer printing", {"src/model/a.cpp": "void f() { std::cout << 1; }\n"}, False, "touches files")
expect("config depending on the engine", {}, False, "config depends on the engine",
       CMAKE.replace("twocs_layer(config DEPS twocs_model)", "twocs_layer(config DEPS twocs_engine)"))
expect("a layer linking SimGrid", {}, False, "links SimGrid",
       CMAKE.replace("twocs_layer(config DEPS twocs_model)", "twocs_layer(config DEPS twocs_model PkgConfig::SIMGRID)"))
PYTHON_CMAKE = CMAKE + "twocs_python_module(python DEPS twocs_config)\n"
expect("the Python module including a layer below it",
       {"src/python/a.cpp": "#include <twocs/config/study.hpp>\n"}, True, "", PYTHON_CMAKE)
expect("a layer including the Python module", {"src/config/a.cpp": "#include <twocs/python/x.hpp>\n"}, False,
       "src/config/a.cpp:1", PYTHON_CMAKE)
print(f"{10 - failures} passed, {failures} failed")
sys.exit(1 if failures else 0)
