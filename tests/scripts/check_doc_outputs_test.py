#!/usr/bin/env python3
"""The docs-output checker passes a block the program prints, elisions included, and fails a
stale one naming its line; a marked table is written by --update, passes when current and fails
naming the stale row's line. Usage: check_doc_outputs_test.py TWOCS SOURCE_DIR."""
import re
import subprocess
import sys
import tempfile
from pathlib import Path


def check(twocs, source, text, update=False):
    """Exit code, output and the document's text afterwards."""
    with tempfile.TemporaryDirectory() as tmp:
        doc = Path(tmp) / "doc.md"
        doc.write_text(text, encoding="utf-8")
        flags = ["--update"] if update else []
        run = subprocess.run([sys.executable, str(Path(source) / "scripts/check-doc-outputs.py"), *flags, twocs, str(doc)],
                             capture_output=True, text=True)
        return run.returncode, run.stdout, doc.read_text(encoding="utf-8")


# A closed-form study (instant): one table row per scenario of the comm-ratio study at t 8, s 2048.
TABLE = ("intro\n\n<!-- twocs-table: analyze --study sim/studies/comm-ratio.yaml\n"
         "     | @where training.parallelism.tensor=8 | @where model.seq_len=2048\n"
         "     | hidden=model.hidden | compute={layer.compute_s:3ms} -->\n")


def table_cases(twocs, source):
    code, out, _ = check(twocs, source, TABLE + "\nafter\n")
    assert code == 1 and "doc.md:6: the marker must be directly above a Markdown table" in out, out
    code, out, written = check(twocs, source, TABLE + "\nafter\n", update=True)
    assert code == 0 and "1 tables rewritten" in out, out
    lines = written.splitlines()
    assert written.startswith(TABLE) and written.endswith("\n\nafter\n"), written
    assert lines[5:7] == ["| hidden | compute |", "| ---: | ---: |"], lines
    assert all(re.fullmatch(r"\| \d+ \| [\d.]+ ms \|", l) for l in lines[7:12]) and lines[12] == "", lines
    code, out, _ = check(twocs, source, written)
    assert code == 0 and "1 tables checked, 0 out of date" in out, out
    stale = written.replace(lines[9], "| 4096 | 9.99 ms |")
    code, out, _ = check(twocs, source, stale)
    assert code == 1 and "doc.md:10: the table says" in out and "9.99 ms" in out and "--update" in out, out
    code, out, again = check(twocs, source, stale, update=True)
    assert code == 0 and again == written, again
    code, out, _ = check(twocs, source, TABLE.replace("model.hidden", "model.hiden") + "| x |\n")
    assert code == 1 and "doc.md:3: no results column 'model.hiden'" in out, out


def summary_cases(twocs, source):
    """@summary tabulates validate's mean and max (one row); a command without a summary fails."""
    marker = ("<!-- twocs-table: validate --run korthikanti-t4-22b-no-recompute | @summary\n"
              "     | rows={layer.rows} | mean / max={layer.mean_abs_error:.1%} / {layer.max_abs_error:.1%} -->\n")
    code, out, written = check(twocs, source, marker, update=True)
    lines = written.splitlines()
    assert code == 0 and lines[2:4] == ["| rows | mean / max |", "| ---: | ---: |"], (out, lines)
    assert len(lines) == 5 and re.fullmatch(r"\| 2 \| [\d.]+% / [\d.]+% \|", lines[4]), lines
    code, out, _ = check(twocs, source, TABLE.replace("-->", "| @summary -->") + "| x |\n")
    assert code == 1 and "gives no summary" in out, out


def main():
    twocs, source = sys.argv[1], sys.argv[2]
    printed = subprocess.run([twocs, "run"], capture_output=True, text=True, check=True).stdout.splitlines()
    first, third = printed[0], printed[2]
    ok = f"intro\n\n<!-- twocs-output: run -->\n```\n{first}\n  ...\n{third}\n  ...\n```\n"
    code, out, _ = check(twocs, source, ok)
    assert code == 0, out
    stale = f"<!-- twocs-output: run -->\n```\n{first}\n  iteration time          9.999 s\n```\n"
    code, out, _ = check(twocs, source, stale)
    assert code == 1 and "doc.md:4:" in out and "9.999 s" in out, out
    unmarked = "<!-- twocs-output: run -->\nno block here\n"
    code, out, _ = check(twocs, source, unmarked)
    assert code == 1 and "directly above a fenced block" in out, out
    code, out, _ = check(twocs, source, "no markers at all\n")
    assert code == 1 and "0 quoted outputs and 0 tables checked" in out, out
    table_cases(twocs, source)
    summary_cases(twocs, source)
    print("check-doc-outputs: 4 quoted-output cases and 8 table cases pass")


if __name__ == "__main__":
    main()
