"""twocs from Python: simulate a Transformer training iteration, sweep a study, validate.

The simulation runs in this process through the same C++ code as the `twocs` program
(docs/python.md). The build puts this package in build/python/twocs/; put build/python on
PYTHONPATH to import it.

    >>> import twocs
    >>> r = twocs.run(set={"cluster.network.bandwidth": "50GB/s"})
    >>> r.iteration_time_s, r.breakdown_s["exposed_comm"], r.mfu
"""
import copy
import json
import os
import tempfile

from . import _twocs
from ._twocs import Error, InputError, OutOfMemoryError

__all__ = ["run", "sweep", "validate", "Result", "Error", "InputError", "OutOfMemoryError"]


def _value_text(value):
    """A --set value as the command line would be given it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _overrides(settings):
    """{"training.parallelism.data": 4} -> ["training.parallelism.data=4"] (--set KEY=VALUE)."""
    if settings is None:
        return []
    if not isinstance(settings, dict):
        raise TypeError("set= takes a dict of dotted keys to values, e.g. {'training.parallelism.data': 4}")
    return [f"{key}={_value_text(value)}" for key, value in settings.items()]


def _path(path):
    return None if path is None else os.fspath(path)


class Result:
    """One simulated iteration. Its attributes are the fields of the JSON summary that
    `twocs run --json FILE` writes (docs/outputs.md): r.iteration_time_s, r.breakdown_s,
    r.exposed_comm_by_kind_s, r.mfu, r.memory, ...; nested objects are dicts."""

    def __init__(self, handle):
        self._handle = handle
        self._summary = json.loads(handle.summary_json)

    def __getattr__(self, name):
        summary = self.__dict__.get("_summary", {})
        if name in summary:
            return summary[name]
        raise AttributeError(f"the summary has no field '{name}' (fields: {', '.join(summary)})")

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._summary))

    def __repr__(self):
        s = self._summary
        return (f"<twocs.Result {s['workload']} on {s['platform']}: iteration {s['iteration_time_s']:.4g} s, "
                f"exposed comm {s['breakdown_s']['exposed_comm']:.4g} s, MFU {s['mfu']:.3f}>")

    def to_dict(self):
        """The whole summary, as `twocs run --json` writes it (a copy)."""
        return copy.deepcopy(self._summary)

    def to_json(self):
        """The summary's JSON text, byte for byte what `twocs run --json` writes but wall_time_s."""
        return self._handle.summary_json

    def timeline(self, devices=None):
        """The simulated tasks as a pandas DataFrame, one row each: device, stream, kind
        (compute, transfer, host), name (the kernel or collective), pass, layer and micro_batch
        (-1: none), start_s, end_s, peer (a transfer's receiver, else -1) and bytes (a transfer's
        payload or a kernel's memory traffic). `devices` (a list of device ids) keeps only theirs;
        a folded run has rows only for the devices it simulated. About 45 bytes a row."""
        import pandas as pd

        columns = self._handle.timeline_columns(None if devices is None else [int(d) for d in devices])
        frame = {}
        for name, column in columns.items():
            if isinstance(column, tuple):
                codes, categories = column
                column = pd.Categorical.from_codes(codes.astype("int32"), categories=categories)
            frame[name] = column
        order = ["device", "stream", "kind", "name", "pass", "layer", "micro_batch", "start_s", "end_s", "peer",
                 "bytes"]
        return pd.DataFrame(frame)[order]

    def memory_stages(self):
        """memory.stages of the summary as a pandas DataFrame: one row per pipeline stage."""
        import pandas as pd

        return pd.DataFrame(self._summary["memory"]["stages"])


def run(workload=None, platform=None, set=None, fold="auto", ignore_memory=False, replay="auto"):
    """Simulates one training iteration, like `twocs run`.

    workload, platform: YAML files (None: the embedded default scenario's). set: a dict of
    dotted keys to values (str, int, float, bool), each like `--set KEY=VALUE`. fold: "auto",
    "on" or "off", like `--fold`. ignore_memory: simulate a plan that does not fit in device
    memory, like `--ignore-memory`. replay: "auto", "on" or "off", like `--replay` (a replayed
    run's timeline holds the micro-batches it simulated; approximations["replay"] says which).
    Raises InputError (bad input, an infeasible plan) and OutOfMemoryError (the plan does not fit)."""
    return Result(_twocs.run(_path(workload), _path(platform), _overrides(set), str(fold), bool(ignore_memory),
                             str(replay)))


def sweep(study_file, jobs=1, output=None, timeout=None, progress=False):
    """Runs every scenario of a study, like `twocs sweep STUDY`, and returns the results CSV as a
    pandas DataFrame (the same columns, one row per scenario).

    jobs: scenarios at once, each in a forked copy of this process (0: all cores). output: keep
    the CSV there (rerunning resumes it, as the command line does); None: a temporary file.
    timeout: seconds per scenario (None: no limit). progress: print progress on stderr."""
    import pandas as pd

    timeout_s = 0.0 if timeout is None else float(timeout)
    if timeout is not None and not timeout_s > 0:
        raise InputError(f"twocs.sweep: error: timeout={timeout!r} is not a positive number of seconds\n"
                         "  fix: pass e.g. timeout=600, or None for no limit")
    with tempfile.TemporaryDirectory(prefix="twocs-sweep-") as scratch:
        csv = _path(output) if output is not None else os.path.join(scratch, "results.csv")
        if not _twocs.sweep(_path(study_file), csv, int(jobs), timeout_s, bool(progress)):
            raise KeyboardInterrupt(f"twocs.sweep interrupted; finished rows are in {csv}")
        return pd.read_csv(csv, keep_default_na=False, na_values=[""])


def validate(file=None, set=None, runs=None, fold="auto"):
    """Simulates the published runs of a validation file, like `twocs validate --json`, and
    returns its rows as a pandas DataFrame: name, citation, kind, plan, measured_s, predicted_s,
    error, folded, tasks, peak_memory_bytes, fits, and where published measured_peak_memory_bytes
    and memory_error. The error statistics are in the frame's attrs["stats"].

    file: None is workloads/validation/runs.yaml under the current folder. set: overrides for
    every run (like --set). runs: names of the runs to simulate (like --run; None: all).
    A run that does not fit in memory is a row with fits False, not an exception."""
    import pandas as pd

    selected = [] if runs is None else ([runs] if isinstance(runs, str) else list(runs))
    document = json.loads(_twocs.validate(_path(file), _overrides(set), selected, str(fold)))
    frame = pd.DataFrame(document.pop("runs"))
    frame.attrs["stats"] = document
    return frame
