"""Markdown tables generated from twocs's own output (used by check-doc-outputs.py).

A table of simulated numbers carries an HTML comment directly above it that says how to make it:

    <!-- twocs-table: sweep sim/studies/interconnect-upgrade.yaml
         | NIC=cluster.network.bandwidth | @pivot node.interconnect.bandwidth
         | {iteration_time_s:4s}, comm {comm_fraction:3%} -->
    | NIC | 300GB/s | 450GB/s | 900GB/s |
    | --- | ---: | ---: | ---: |
    | 25GB/s | 3.622 s, comm 35.8% | ... |

The first part is a twocs command; the checker adds where the results go: `sweep` gets
`--output FILE.csv` (and `--jobs N` unless the marker says), `analyze` `--csv FILE.csv`,
`validate` `--json FILE.json --quiet` (its `runs`). Each further part, separated by `|` (lines
may break anywhere), is one column `HEADER=CELL`, where CELL is a results column's name or a
template with `{column:format}` pieces, or an option:
  @where column=value     keep only rows whose column is value (repeatable)
  @pivot column           one table column per distinct value of that results column; the
                          marker's last column is the cell, the others identify the row
  @pivot {column:format}  the same with a template (e.g. `{name:tail}`)
  @summary                one row of the result's summary instead of its rows (validate: the
                          columns iteration.mean_abs_error, iteration.max_abs_error,
                          iteration.rows and the same for layer and memory)
Formats (deterministic; numbers keep N significant digits, never an exponent):
  N      N significant digits          N%    x 100, N significant digits, then %
  Ns     N significant digits, " s"    Nms   x 1000, N significant digits, " ms"
  .N     N decimals (also .N%, .Ns, .Nms)    +  before any of these: a sign on positives
  NeK    divided by 10^K, N significant digits (.NeK: N decimals), e.g. {model.parameters:3e9} B
  int    an integer with thousands separators
  head   the text up to its last space  tail  the text after its last space
  (none) the value as the program wrote it
A piece `{a/b:format}` is the ratio of two columns.
"""
import csv
import json
import math
import re
import shlex
import subprocess
import tempfile
import time
from pathlib import Path

START = re.compile(r"^<!-- twocs-table:(.*)$")
PIECE = re.compile(r"\{([^{}:]+)(?::([^{}]+))?\}")


class Rows(list):
    """A command's result rows, with its summary (validate's mean and max errors; else empty)."""

    def __init__(self, rows, summary=None):
        super().__init__(rows)
        self.summary = summary or {}


def parse_marker(text):
    """(argument list, columns [(header, template)], wheres {col: value}, pivot column or None,
    whether the table is the summary)."""
    parts = [p.strip() for p in text.split("|")]
    args = shlex.split(parts[0])
    columns, wheres, pivot, summary = [], {}, None, False
    for part in parts[1:]:
        if not part:
            continue
        if part == "@summary":
            summary = True
        elif part.startswith("@where "):
            key, _, value = part[len("@where "):].partition("=")
            wheres[key.strip()] = value.strip()
        elif part.startswith("@pivot "):
            pivot = part[len("@pivot "):].strip()
        elif part.startswith("@"):
            raise ValueError(f"unknown option {part.split()[0]} (use @where, @pivot or @summary)")
        else:
            header, eq, template = part.rpartition("=")
            if not eq:
                header, template = part, part
            template = template.strip()
            columns.append((header.strip(), template if "{" in template else "{" + template + "}"))
    if not args or not columns:
        raise ValueError("a table marker needs a twocs command and at least one column")
    return args, columns, wheres, pivot, summary


def significant(value, digits):
    if value == 0 or not math.isfinite(value):
        return f"{value:.{max(digits - 1, 0)}f}" if value == 0 else str(value)
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(value))))
    text = f"{round(value, decimals):.{decimals}f}"
    return text


def format_value(raw, fmt):
    if not fmt:
        return raw
    if fmt in ("head", "tail"):
        head, _, tail = raw.rpartition(" ")
        return head if fmt == "head" else tail
    if raw in ("", None):
        return "-"
    try:
        value = float(raw)
    except ValueError:
        return raw
    if fmt == "int":
        return f"{int(round(value)):,}"
    m = re.fullmatch(r"(\+?)(\.?)(\d+)(%|s|ms|e\d+)?", fmt)
    if not m:
        raise ValueError(f"unknown format '{fmt}' (N, .N, +N, each optionally with %, s or ms; int, head, tail)")
    sign, fixed, digits, unit = m.group(1), m.group(2), int(m.group(3)), m.group(4) or ""
    scale = 10.0 ** -int(unit[1:]) if unit.startswith("e") else {"%": 100, "ms": 1000}.get(unit, 1)
    text = f"{value * scale:.{digits}f}" if fixed else significant(value * scale, digits)
    if re.fullmatch(r"-0(\.0*)?", text):
        text = text[1:]
    if sign and not text.startswith("-"):
        text = "+" + text
    return text + {"%": "%", "s": " s", "ms": " ms"}.get(unit, "")


def fill(template, row):
    def value(key):
        if key not in row:
            raise ValueError(f"no results column '{key}' (have: {', '.join(sorted(row))})")
        return row[key]

    def piece(m):
        key = m.group(1).strip()
        if "/" in key:  # a ratio of two columns
            top, bottom = (value(k.strip()) for k in key.split("/", 1))
            try:
                ratio = str(float(top) / float(bottom))
            except (ValueError, ZeroDivisionError):
                ratio = ""
            return format_value(ratio, m.group(2))
        return format_value(value(key), m.group(2))
    return PIECE.sub(piece, template)


def flatten(obj, prefix=""):
    out = {}
    for key, value in obj.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(flatten(value, name + "."))
        else:
            out[name] = "" if value is None else str(value).lower() if isinstance(value, bool) else str(value)
    return out


def results(twocs, args, root, jobs):
    """The rows (dicts of strings) the marked command produces, and its wall time in seconds."""
    with tempfile.TemporaryDirectory() as tmp:
        extra, target = [], Path(tmp)
        if args[0] == "sweep":
            target /= "t.csv"
            extra = ["--output", str(target)] + ([] if {"-j", "--jobs"} & set(args) else ["--jobs", str(jobs)])
        elif args[0] == "analyze":
            target /= "t.csv"
            extra = ["--csv", str(target)]
        elif args[0] == "validate":
            target /= "t.json"
            extra = ["--json", str(target), "--quiet"]
        else:
            raise ValueError(f"a table comes from sweep, analyze or validate, not '{args[0]}'")
        start = time.monotonic()
        run = subprocess.run([twocs, *args, *extra], cwd=root, capture_output=True, text=True, timeout=900)
        seconds = time.monotonic() - start
        if run.returncode != 0 or not target.exists():
            raise RuntimeError(f"twocs {' '.join(args)} exited {run.returncode}:\n{run.stderr}")
        if target.suffix == ".csv":
            with open(target, newline="", encoding="utf-8") as f:
                return Rows(csv.DictReader(f)), seconds
        data = json.loads(target.read_text(encoding="utf-8"))
        summary = flatten({k: v for k, v in data.items() if k != "runs"})
        return Rows([flatten(r) for r in data["runs"]], summary), seconds


def numeric(cell):
    return re.match(r"^[-+]?[\d.,]+", cell) is not None or cell == "-"


def render(rows, columns, wheres, pivot, summary=False):
    """The Markdown table's lines."""
    if summary:
        if not getattr(rows, "summary", None):
            raise ValueError("@summary: the command gives no summary (validate does)")
        rows = [rows.summary]
    for key, value in wheres.items():
        if rows and key not in rows[0]:
            raise ValueError(f"@where names no results column '{key}'")
        rows = [r for r in rows if r.get(key) == value]
    if not rows:
        raise ValueError("no results row is left to tabulate")
    if pivot:
        if len(columns) < 2:
            raise ValueError("@pivot needs a row column and a cell column")
        spread_of = lambda r: fill(pivot if "{" in pivot else "{" + pivot + "}", r)
        spread = list(dict.fromkeys(spread_of(r) for r in rows))
        keys, cells = {}, {}
        for r in rows:
            key = tuple(fill(t, r) for _, t in columns[:-1])
            keys.setdefault(key, None)
            cells[key, spread_of(r)] = fill(columns[-1][1], r)
        header = [h for h, _ in columns[:-1]] + spread
        body = [list(k) + [cells.get((k, s), "-") for s in spread] for k in keys]
    else:
        header = [h for h, _ in columns]
        body = [[fill(t, r) for _, t in columns] for r in rows]
    align = ["---:" if all(numeric(line[i]) for line in body) else "---" for i in range(len(header))]
    return ["| " + " | ".join(cells) + " |" for cells in (header, align, *body)]


def marked_tables(lines):
    """(index of the marker's first line, marker text, index of the table's first line, of the line after it)."""
    i = 0
    while i < len(lines):
        m = START.match(lines[i])
        if not m:
            i += 1
            continue
        first, text = i, m.group(1)
        while "-->" not in text and i + 1 < len(lines):
            i += 1
            text += " " + lines[i].strip()
        text = text.split("-->")[0]
        start = end = i + 1
        while end < len(lines) and lines[end].startswith("|"):
            end += 1
        yield first, text, start, end
        i = end
