#!/usr/bin/env python3
"""Random valid scenarios and the invariants every result must keep (docs/errors.md, "Invariants").

A seeded generator draws workloads and plans around the embedded default (dense or mixture of
experts; tensor, pipeline, data, context and expert parallelism; sequence parallelism,
recomputation, interleaved, zero-bubble and DualPipe schedules; FP8 with FP8 primary weights,
sharded optimizers, the parameter-gather and Transformer Engine TP overlaps, DeepEP; DGX A100
or H100; fat tree or rail-optimised fabric; the collective algorithm of the data-parallel kind) as `--set` overrides, runs `twocs run --json` on
each and checks:

- the exit code is 0 (ran), 2 (refused as a bad or infeasible plan) or 3 (does not fit), never
  anything else, and a refusal names a location;
- compute + exposed communication + idle = the iteration time; compute <= the iteration;
- per kind, exposed <= busy communication; comm_fraction and exposed_comm_fraction in [0, 1];
- MFU in (0, 1];
- a plan that does not fit (exit 3) completes with --ignore-memory;
- twice the compute, node or network bandwidth never makes an iteration slower (beyond 0.5%, the
  documented scheduling tolerance: a faster kernel can reorder a pipeline's stream) with the same
  collective algorithms; where the automatic choice (NCCL's tuner model) picks another algorithm
  on the faster platform and that one simulates slower, the case is printed as known, not failed:
  the tuner predicts from its closed forms, the simulation then prices contention it does not see
  (docs/errors.md, "Invariants");
- the same inputs give byte-identical JSON (the wall time aside), for one scenario in five.

Usage: invariants.py TWOCS [--scenarios N] [--seed S] [--jobs J]; exit 1 on the first broken
invariant, printing the scenario's --set list so that it reproduces with `twocs run`.
"""
import argparse
import concurrent.futures
import json
import os
import random
import subprocess
import sys
import tempfile

SPEEDUP_TOLERANCE = 0.005  # documented in docs/errors.md, "Invariants"
EPS = 1e-9


def draw(rng):
    """One scenario as --set overrides of the embedded default workload and a platform."""
    heads = rng.choice([8, 16, 32])
    head_dim = rng.choice([64, 128])
    pipeline = rng.choice([1, 1, 2, 4])
    layers = pipeline * rng.choice([1, 2, 4])
    tensor = rng.choice([t for t in (1, 2, 4, 8) if heads % t == 0])
    data = rng.choice([1, 2, 4])
    context = rng.choice([1, 1, 1, 2])
    micro = rng.choice([1, 2])
    global_batch = micro * data * rng.choice([1, 2, 4, 8])
    sets = [
        f"model.layers={layers}", f"model.heads={heads}", f"model.hidden={heads * head_dim}",
        f"model.seq_len={rng.choice([512, 1024, 2048])}", f"model.vocab={rng.choice([32000, 51200])}",
        f"training.parallelism.tensor={tensor}", f"training.parallelism.pipeline={pipeline}",
        f"training.parallelism.data={data}", f"training.micro_batch={micro}",
        f"training.global_batch={global_batch}",
        f"training.recompute={rng.choice(['none', 'selective', 'full'])}",
    ]
    if context > 1:
        sets.append(f"training.parallelism.context={context}")
    moe = rng.random() < 0.3
    if tensor > 1 and (moe or rng.random() < 0.5):  # MoE with tensor parallelism needs it (Megatron-Core)
        sets.append("training.parallelism.sequence=true")
    if pipeline > 1 and layers % (2 * pipeline) == 0 and rng.random() < 0.3:
        sets.append("training.parallelism.virtual_stages=2")
    if moe:
        experts = rng.choice([4, 8])
        sets += [f"model.moe.experts={experts}", f"model.moe.top_k={rng.choice([1, 2])}",
                 f"model.moe.expert_ffn_hidden={heads * head_dim * rng.choice([1, 2])}",
                 f"training.parallelism.expert={rng.choice([e for e in (1, 2, 4) if data % e == 0 or e == 1])}"]
    world = tensor * pipeline * data * context
    platform = rng.choice(["platforms/dgx-a100-80gb.yaml", "platforms/dgx-h100.yaml"])
    sets.append(f"cluster.nodes={max(1, (world + 7) // 8)}")
    if rng.random() < 0.3:
        sets.append("cluster.network.topology=rail-fat-tree")
    if data > 1 and rng.random() < 0.4:
        sets.append(f"training.collectives.data={rng.choice(['ring', 'tree', 'auto'])}")
    sets += newest_keys(rng, platform, sets, pipeline, data * context, global_batch // (data * micro), moe)
    return platform, sets


def newest_keys(rng, platform, sets, pipeline, replicas, micro_batches, moe):
    """Precision, sharding, overlaps, schedules and dispatchers, drawn where the plan admits them."""
    extra = []
    fp8 = platform.endswith("dgx-h100.yaml") and rng.random() < 0.3
    if fp8:
        extra.append("training.dtype=fp8")
    sharding = rng.choice(["none", "none", "optimizer", "full"]) if replicas > 1 else "none"
    if sharding != "none":
        extra.append(f"training.optimizer.sharding={sharding}")
    if fp8 and sharding != "none" and rng.random() < 0.5:
        extra.append("training.fp8_params=true")
    if sharding == "optimizer" and rng.random() < 0.3:
        extra.append("training.overlap.param_gather=true")
    if "training.parallelism.sequence=true" in sets and rng.random() < 0.3:
        extra.append("training.overlap.tp_comm=transformer_engine")
    interleaved = "training.parallelism.virtual_stages=2" in sets
    if pipeline > 1 and not interleaved and rng.random() < 0.3:
        dualpipe = pipeline % 2 == 0 and micro_batches >= 2 * pipeline and micro_batches % 2 == 0
        schedule = rng.choice(["zb-h1", "dualpipe"]) if dualpipe and sharding != "full" else "zb-h1"
        extra.append(f"training.pipeline_schedule={schedule}")
    if moe and rng.random() < 0.3:
        extra.append("training.parallelism.expert_dispatcher=deepep")
    # Drawn from the scenario's own settings, not from rng, so that the scenarios of every seed
    # stay those the campaigns in docs/errors.md ran.
    if fp8 and random.Random("fp8_recipe " + " ".join(sets + extra)).random() < 0.5:
        extra.append("training.fp8_recipe=blockwise")
    return extra


def run(twocs, platform, sets, extra=()):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "s.json")
        cmd = [twocs, "run", "--quiet", "--platform", platform, "--json", out, *extra]
        for s in sets:
            cmd += ["--set", s]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        text = open(out).read() if p.returncode == 0 and os.path.exists(out) else None
        return p.returncode, p.stderr, text


def summary_checks(s):
    """The problems of one summary, as text; empty when every invariant holds."""
    problems = []
    b = s["breakdown_s"]
    t = s["iteration_time_s"]
    if abs(b["compute"] + b["exposed_comm"] + b["idle"] - t) > 1e-6 * t + EPS:
        problems.append(f"compute + exposed + idle = {b['compute'] + b['exposed_comm'] + b['idle']} != {t}")
    if b["compute"] > t * (1 + 1e-9):
        problems.append("compute exceeds the iteration")
    for kind, exposed in s["exposed_comm_by_kind_s"].items():
        if exposed > s["comm_busy_by_kind_s"][kind] * (1 + 1e-9) + EPS:
            problems.append(f"exposed {kind} {exposed} > busy {s['comm_busy_by_kind_s'][kind]}")
    for key in ("comm_fraction", "exposed_comm_fraction"):
        if not -EPS <= s[key] <= 1 + EPS:
            problems.append(f"{key} {s[key]} outside [0, 1]")
    if not 0 < s["mfu"] <= 1:
        problems.append(f"mfu {s['mfu']} outside (0, 1]")
    return problems


def without_wall_time(text):
    return "\n".join(line for line in text.splitlines() if '"wall_time_s"' not in line)


def check(twocs, index, platform, sets):
    """(outcome, problems) of one scenario."""
    extra = []
    code, err, text = run(twocs, platform, sets)
    if code == 2:
        return "refused", [] if ": error:" in err else ["exit 2 without a located error: " + err.strip()[:200]], []
    if code == 3:
        extra = ["--ignore-memory"]
        code, err, text = run(twocs, platform, sets, extra)
        if code != 0:
            return "oom", [f"--ignore-memory exits {code}: {err.strip()[:200]}"], []
    elif code != 0:
        return "crash", [f"exit {code}: {err.strip()[:300]}"], []
    s = json.loads(text)
    problems = summary_checks(s)
    notes = []
    for whatif in ("compute_scale", "node_bandwidth_scale", "network_bandwidth_scale"):
        c2, err2, t2 = run(twocs, platform, sets + [f"whatif.{whatif}=2"], ["--ignore-memory"])
        if c2 != 0:
            problems.append(f"whatif.{whatif}=2 exits {c2}: {err2.strip()[:200]}")
            continue
        s2 = json.loads(t2)
        faster = s2["iteration_time_s"]
        if faster > s["iteration_time_s"] * (1 + SPEEDUP_TOLERANCE):
            what = f"whatif.{whatif}=2 slows the iteration: {s['iteration_time_s']} -> {faster}"
            if s2["collective_algorithms"] != s["collective_algorithms"]:
                notes.append(what + " (the automatic choice changed a collective's algorithm)")
            else:
                problems.append(what)
    if index % 5 == 0:
        _, _, again = run(twocs, platform, sets, extra)
        if again is None or without_wall_time(again) != without_wall_time(text):
            problems.append("two identical runs differ")
    return "ran", problems, notes


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("twocs")
    p.add_argument("--scenarios", type=int, default=100)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    a = p.parse_args()
    rng = random.Random(a.seed)
    scenarios = [draw(rng) for _ in range(a.scenarios)]
    counts = {}
    broken = 0
    tuner = 0
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        futures = [pool.submit(check, a.twocs, i, plat, sets) for i, (plat, sets) in enumerate(scenarios)]
        for i, f in enumerate(futures):
            outcome, problems, notes = f.result()
            counts[outcome] = counts.get(outcome, 0) + 1
            tuner += 1 if notes else 0
            if problems or notes:
                broken += 1 if problems else 0
                plat, sets = scenarios[i]
                print(f"scenario {i} (seed {a.seed}): twocs run --platform {plat} "
                      + " ".join(f"--set {s}" for s in sets))
                for problem in problems:
                    print(f"  broken: {problem}")
                for note in notes:
                    print(f"  known: {note}")
    print(f"{a.scenarios} scenarios (seed {a.seed}): " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
          + f"; {broken} with a broken invariant; {tuner} where the automatic algorithm choice made a faster "
          "platform slower (known, docs/errors.md)")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
