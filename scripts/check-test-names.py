#!/usr/bin/env python3
"""Every ctest entry discovered from a doctest binary must select exactly one test case.

doctest_discover_tests passes the case's name as --test-case=NAME; a name that CMake or doctest's
filter syntax mangles (a ';' splits a CMake list) selects nothing, and ctest then reports a pass
for a test that never ran. Usage: check-test-names.py BUILD_DIR
"""
import json
import os
import subprocess
import sys


def main(build: str) -> int:
    listing = subprocess.run(["ctest", "--test-dir", build, "--show-only=json-v1"], check=True,
                             capture_output=True, text=True).stdout
    broken = []
    for test in json.loads(listing)["tests"]:
        command = test.get("command", [])
        if not any(arg.startswith("--test-case=") for arg in command):
            continue
        if not os.path.exists(command[0]):  # a binary this build did not make (CI's sanitizer build)
            continue
        out = subprocess.run(command + ["--count"], capture_output=True, text=True).stdout
        count = [line for line in out.splitlines() if "passing the current filters" in line]
        if not count or not count[0].rstrip().endswith(": 1"):
            broken.append(test["name"])
    for name in broken:
        print(f"selects no single test case (rename it without ';'): {name}")
    print(f"{len(broken)} ctest entries that run nothing")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "build"))
