#!/usr/bin/env python3
"""Runs the bad-input corpus (manifest.txt) against the twocs program.

Each case runs the real program in its own process, under a wall-clock limit and an
address-space limit, and must
  - exit with the manifest's code (2 bad input, 3 the plan does not fit in memory),
  - print exactly one error line on stderr, containing the manifest's text (before it only
    the progress log, after it '  fix: ...' and, for memory, the per-stage table), and for
    `run` nothing on stdout,
  - never print an internal error, a sanitizer report or an uncaught exception,
  - leave its scratch directory ({tmp}) as it found it: no partial or temporary output.

usage: run_corpus.py --list | --program build/twocs [--case NAME] [--timeout S] [--max-rss-mb M] [--no-rlimit]
"""
import argparse
import os
import resource
import shlex
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FORBIDDEN = ("internal error", "Sanitizer", "runtime error:", "terminate called", "Segmentation", "Aborted")


def read_manifest(path):
    """[(name, code, expected, arguments)] from 'name | code | expected | arguments' lines."""
    cases = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            parts = [p.strip() for p in line.split(" | ", 3)]
            if len(parts) != 4:
                sys.exit(f"{path}:{number}: expected 'name | code | expected text | arguments'")
            cases.append((parts[0], int(parts[1]), parts[2], parts[3]))
    return cases


def generate(name, directory):
    """Inputs too large to commit, written on demand into `directory`."""
    path = os.path.join(directory, name)
    valid = open(os.path.join(HERE, "workload", "valid.yaml"), encoding="utf-8").read()
    if name == "deep-flow.yaml":  # 10,000 nested lists: a recursive-descent parser's stack
        text = "model: " + "[" * 10000 + "]" * 10000 + "\n"
    elif name == "deep-mapping.yaml":  # 10,000 nested flow mappings
        text = "model: " + "{a: " * 10000 + "1" + "}" * 10000 + "\n"
    elif name == "deep-block.yaml":  # 3,000 nested block sequences ("- - - - x"), one line
        text = "model:\n  " + "- " * 3000 + "x\n"
    elif name == "oversized.yaml":  # larger than the 16 MiB input limit
        text = valid + "# " + "x" * (17 << 20) + "\n"
    elif name == "big-list.yaml":  # 15 MiB: millions of list elements, under the size limit
        text = valid.replace("  layers: 4", "  layers: [" + "0," * (7 << 20) + "0]")
    elif name == "many-keys.yaml":  # 500,000 distinct keys in one mapping
        text = "model:\n" + "".join(f"  k{i}: {i}\n" for i in range(500000))
    elif name == "long-scalar.yaml":  # one 15 MiB scalar
        text = valid.replace("name: tiny", "name: " + "n" * (15 << 20))
    elif name == "many-rows.csv":  # 200,000 profile rows, the last one bad
        row = 'gemm,"m=4096,n=4096,k=4096",bf16,1.234ms\n'
        text = "op,shape,dtype,measured_time\n" + row * 200000 + row.replace("bf16", "bf17")
    else:
        sys.exit(f"unknown generated input '{name}'")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def expand(text, scratch, generated):
    """Replaces the manifest's placeholders: {corpus}, {tmp}, {gen:NAME}, {ro}, {unreadable}."""
    text = text.replace("{corpus}", HERE).replace("{tmp}", scratch)
    while "{gen:" in text:
        start = text.index("{gen:")
        end = text.index("}", start)
        text = text[:start] + generate(text[start + 5 : end], generated) + text[end + 1 :]
    root = os.geteuid() == 0  # root ignores permission bits: use paths that refuse even root
    if "{ro}" in text:
        ro = os.path.join(generated, "read-only")
        os.mkdir(ro, 0o555)
        text = text.replace("{ro}", "/proc" if root else ro)
    if "{unreadable}" in text:
        path = os.path.join(generated, "unreadable.yaml")
        shutil.copy(os.path.join(HERE, "workload", "valid.yaml"), path)
        os.chmod(path, 0)
        text = text.replace("{unreadable}", "/proc/self/mem" if root else path)
    return text


def run(program, arguments, timeout, address_limit):
    """(exit code or None on timeout, stdout, stderr, seconds, max RSS in MiB)."""
    def limit():
        if address_limit:
            resource.setrlimit(resource.RLIMIT_AS, (address_limit, address_limit))

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.monotonic()
        pid = os.fork()
        if pid == 0:  # child: the program with its output in the two files
            try:
                limit()
                os.dup2(out.fileno(), 1)
                os.dup2(err.fileno(), 2)
                os.execv(program, [program] + arguments)
            finally:
                os._exit(127)
        code = None
        while True:
            done, status, usage = os.wait4(pid, os.WNOHANG)
            if done:
                code = os.waitstatus_to_exitcode(status)
                break
            if time.monotonic() - start > timeout:
                os.kill(pid, 9)
                _, _, usage = os.wait4(pid, 0)
                break
            time.sleep(0.01)
        seconds = time.monotonic() - start
        out.seek(0)
        err.seek(0)
        return code, out.read().decode(errors="replace"), err.read().decode(errors="replace"), seconds, usage.ru_maxrss / 1024


def check(case, program, options):
    name, expected_code, expected_text, arguments = case
    scratch = tempfile.mkdtemp(prefix=f"twocs-corpus-{name}-")
    generated = tempfile.mkdtemp(prefix=f"twocs-corpus-gen-{name}-")
    try:
        args = shlex.split(expand(arguments, scratch, generated))
        address_limit = 0 if options.no_rlimit else options.address_limit_mb << 20
        code, out, err, seconds, rss = run(program, args, options.timeout, address_limit)
        problems = []
        if code is None:
            problems.append(f"did not finish within {options.timeout} s")
        elif code != expected_code:
            problems.append(f"exit code {code}, expected {expected_code}")
        if rss > options.max_rss_mb:
            problems.append(f"used {rss:.0f} MiB of memory, more than {options.max_rss_mb} MiB")
        lines = err.splitlines()
        errors = [line for line in lines if "error:" in line]
        if len(errors) != 1:
            problems.append(f"{len(errors)} error lines on stderr, expected one")
        elif expected_text not in errors[0]:
            problems.append(f"the error line lacks '{expected_text}'")
        # Before the error only the progress log may appear ("twocs: ..."), after it the fix
        # and, for memory, the per-stage table.
        if errors and any(not line.startswith("twocs: ") for line in lines[: lines.index(errors[0])]):
            problems.append("stderr has other text before the error line")
        if any(bad in err for bad in FORBIDDEN):
            problems.append("stderr shows a crash, a sanitizer report or an internal error")
        if out and args[0] == "run":  # calibrate prints its table before it writes the fragment
            problems.append("a failing run printed on stdout")
        if os.listdir(scratch):
            problems.append(f"left files behind: {sorted(os.listdir(scratch))}")
        report = f"{name}: exit {code} in {seconds:.2f} s, max RSS {rss:.0f} MiB\n  $ twocs {' '.join(args)}\n"
        report += "".join(f"  | {line}\n" for line in lines[:8])
        return problems, report
    finally:
        for directory in (scratch, generated):
            for root, dirs, _ in os.walk(directory):
                for d in dirs:
                    os.chmod(os.path.join(root, d), 0o755)
            shutil.rmtree(directory, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--program")
    parser.add_argument("--list", action="store_true", help="print the case names, one a line")
    parser.add_argument("--manifest", default=os.path.join(HERE, "manifest.txt"))
    parser.add_argument("--case", help="run only this case")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per case")
    parser.add_argument("--max-rss-mb", type=int, default=1024, help="memory a case may use")
    parser.add_argument("--address-limit-mb", type=int, default=4096, help="hard address-space limit")
    parser.add_argument("--no-rlimit", action="store_true", help="no address-space limit (sanitizer builds)")
    options = parser.parse_args()
    cases = read_manifest(options.manifest)
    names = [c[0] for c in cases]
    duplicates = {n for n in names if names.count(n) > 1}
    if duplicates:
        sys.exit(f"duplicate case names in the manifest: {sorted(duplicates)}")
    if options.list:
        print("\n".join(names), end="")
        return 0
    if not options.program:
        parser.error("--program is required")
    if options.case:
        cases = [c for c in cases if c[0] == options.case]
        if not cases:
            sys.exit(f"no case '{options.case}' in the manifest")
    failed = 0
    for case in cases:
        problems, report = check(case, os.path.abspath(options.program), options)
        print(report, end="")
        for p in problems:
            print(f"  FAILED: {p}")
        failed += bool(problems)
    print(f"{len(cases) - failed} of {len(cases)} cases passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
