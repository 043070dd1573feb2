#!/usr/bin/env python3
"""The docs-output checker passes a block the program prints, elisions included, and fails a
stale one naming its line. Usage: check_doc_outputs_test.py TWOCS SOURCE_DIR."""
import subprocess
import sys
import tempfile
from pathlib import Path


def check(twocs, source, text):
    with tempfile.TemporaryDirectory() as tmp:
        doc = Path(tmp) / "doc.md"
        doc.write_text(text, encoding="utf-8")
        run = subprocess.run([sys.executable, str(Path(source) / "scripts/check-doc-outputs.py"), twocs, str(doc)],
                             capture_output=True, text=True)
        return run.returncode, run.stdout


def main():
    twocs, source = sys.argv[1], sys.argv[2]
    printed = subprocess.run([twocs, "run"], capture_output=True, text=True, check=True).stdout.splitlines()
    first, third = printed[0], printed[2]
    ok = f"intro\n\n<!-- twocs-output: run -->\n```\n{first}\n  ...\n{third}\n  ...\n```\n"
    code, out = check(twocs, source, ok)
    assert code == 0, out
    stale = f"<!-- twocs-output: run -->\n```\n{first}\n  iteration time          9.999 s\n```\n"
    code, out = check(twocs, source, stale)
    assert code == 1 and "doc.md:4:" in out and "9.999 s" in out, out
    unmarked = "<!-- twocs-output: run -->\nno block here\n"
    code, out = check(twocs, source, unmarked)
    assert code == 1 and "directly above a fenced block" in out, out
    code, out = check(twocs, source, "no markers at all\n")
    assert code == 1 and "0 quoted outputs checked" in out, out
    print("check-doc-outputs: 4 cases pass")


if __name__ == "__main__":
    main()
