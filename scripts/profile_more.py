#!/usr/bin/env python3
"""Kernel evidence beyond scripts/profile_operators.py, on one CUDA GPU (each part writes a CSV).

    python3 scripts/profile_more.py blockwise -o fp8-blockwise.csv  # FP8 GEMMs with block scales
    python3 scripts/profile_more.py grouped -o grouped.csv          # MoE experts' GEMMs, three ways
    python3 scripts/profile_more.py launch -o launch.csv            # kernel launch gaps and host cost
    python3 scripts/profile_more.py host -o host.csv                # host time per eager PyTorch call
    python3 scripts/profile_more.py layouts -o layouts.csv          # bf16 GEMMs as nn.Linear lays them out

`blockwise`: FP8 GEMMs scaled per 1x128 block of the activations and per 128x128 block of the
weights (DeepSeek-V3's recipe, Transformer Engine's Float8BlockScaling: forward and dgrad), or
per 1x128 block of both operands (its wgrad), through torch._scaled_mm (cuBLASLt's block
scaling, CUDA 12.9 and later), at the shapes of scripts/training_shapes.py; the rows' `scaling`
is blockwise and each name ends in its operands' blocks. `grouped`: the GEMMs of E local experts with r rows each, run as E
cuBLAS GEMMs on one stream, over 4 streams (as Transformer Engine's GroupedLinear does in C++) and
as one torch._grouped_mm (a CUTLASS grouped GEMM); the 4-stream loop runs in Python, whose host
time per group (stream switches and waits, about 100 us) exceeds the GPU's for small experts, so
those rows time the host, not the GPU. `launch`: the GPU time per kernel of tiny kernels
replayed from a CUDA graph (no host in the loop), queued ahead by eager PyTorch (the GPU-side gap
between launches) and the host time per eager PyTorch call (dispatch and launch). `layouts`: the
dense layers' bf16 GEMMs with the operands laid out as nn.Linear's forward (x W^T, the weight
transposed) and weight gradient (x^T dY, the activation transposed) use them, where
scripts/profile_operators.py multiplies row-major matrices.
"""

import argparse
import csv
import sys
import time

import profile_operators as po


def block_scales(torch, m, n, k, both_1x128, device):
    """Scales for A (m x k, row-major) and B (k x n, column-major) as cuBLASLt's block scaling
    reads them (PyTorch ScaledBlas.cpp, is_blockwise_1x128_scaling / is_blockwise_128x128_scaling)."""
    scale_a = torch.ones(k // 128, m, device=device).t()  # (m, k/128), stride (1, m)
    if both_1x128:
        scale_b = torch.ones(k // 128, n, device=device)  # B^T (n x k) per 1x128: (n, k/128) stride (1, n)
    else:
        scale_b = torch.ones(n // 128, k // 128, device=device).t()  # B^T per 128x128: row-major blocks
    return scale_a, scale_b


def blockwise_gemm(torch, a, b, scale_a, scale_b, both):
    """torch._scaled_mm with block scales, else torch.nn.functional.scaled_mm with named recipes."""

    def legacy():
        return torch._scaled_mm(a, b, scale_a=scale_a, scale_b=scale_b, out_dtype=torch.bfloat16)

    try:
        legacy()
        return legacy
    except RuntimeError as error:
        print(f"torch._scaled_mm with block scales: {error}", file=sys.stderr)
    functional = torch.nn.functional
    kinds = functional.ScalingType
    recipe_b = kinds.BlockWise1x128 if both else kinds.BlockWise128x128

    def named():
        return functional.scaled_mm(a, b, scale_a, kinds.BlockWise1x128, scale_b, recipe_b,
                                    output_dtype=torch.bfloat16)

    named()
    return named


def blockwise(torch, args, device, rows):
    for kind, dims, name in po.fp8_gemms(False, "training"):
        m, n, k = dims["m"], dims["n"], dims["k"]
        if k % 128 or n % 128 or m % 128:
            continue
        # wgrad GEMMs contract over tokens, both operands scaled per 1x128 (TE Float8BlockScaling)
        both = name.endswith(".wgrad")
        a = torch.randn(m, k, device=device).to(torch.float8_e4m3fn)
        b = torch.randn(n, k, device=device).to(torch.float8_e4m3fn).t()
        scale_a, scale_b = block_scales(torch, m, n, k, both, device)

        try:
            run = blockwise_gemm(torch, a, b, scale_a, scale_b, both)
            seconds = po.median_time(torch, run, args)
        except (RuntimeError, TypeError, AttributeError) as error:
            print(f"blockwise {name}: {error}", file=sys.stderr)
            if not rows:
                raise
            continue
        blocks = "1x128.1x128" if both else "1x128.128x128"
        rows.append(dict(op=kind, shape=dims, dtype="fp8", seconds=seconds, name=f"{name}.{blocks}",
                         accumulation="split", scaling="blockwise"))
        print(f"{name:40} fp8 {blocks} {seconds * 1e6:10.1f} us", file=sys.stderr)


GROUPS = [  # (label, local experts, rows per expert, n, k): forward fc1 and fc2 of MoE layers
    ("qwen3-235b.ep8", 16, 512, 3072, 4096), ("qwen3-235b.ep8.fc2", 16, 512, 4096, 1536),
    ("qwen3-235b.ep32", 4, 2048, 3072, 4096), ("qwen3-235b.ep32.fc2", 4, 2048, 4096, 1536),
    ("qwen3-30b.ep8", 16, 1024, 1536, 2048), ("qwen3-30b.ep8.fc2", 16, 1024, 2048, 768),
    ("deepseek-v3.ep8", 32, 1024, 4096, 7168), ("deepseek-v3.ep8.fc2", 32, 1024, 7168, 2048),
    ("deepseek-v3.ep32", 8, 4096, 4096, 7168), ("mixtral.ep8", 1, 8192, 28672, 4096),
    ("mixtral.ep2", 4, 8192, 28672, 4096), ("mixtral.ep2.fc2", 4, 8192, 4096, 14336),
]


def grouped(torch, args, device, rows):
    streams = [torch.cuda.Stream() for _ in range(4)]
    for label, experts, r, n, k in GROUPS:
        xs = [torch.randn(r, k, dtype=torch.bfloat16, device=device) for _ in range(experts)]
        ws = [torch.randn(k, n, dtype=torch.bfloat16, device=device) for _ in range(experts)]

        def one_stream():
            for x, w in zip(xs, ws):
                torch.matmul(x, w)

        def four_streams():
            main = torch.cuda.current_stream()
            for s in streams:
                s.wait_stream(main)
            for i, (x, w) in enumerate(zip(xs, ws)):
                with torch.cuda.stream(streams[i % 4]):
                    torch.matmul(x, w)
            for s in streams:
                main.wait_stream(s)

        x_all = torch.cat(xs)
        w_all = torch.stack([w.t() for w in ws]).transpose(1, 2)  # (E, k, n), each column-major
        offsets = torch.arange(r, r * experts + 1, r, device=device, dtype=torch.int32)

        def grouped_mm():
            return torch._grouped_mm(x_all, w_all, offs=offsets, out_dtype=torch.bfloat16)

        dims = dict(m=r, n=n, k=k, batch=experts)
        for way, run in (("one_stream", one_stream), ("four_streams", four_streams), ("grouped_mm", grouped_mm)):
            try:
                seconds = po.median_time(torch, run, args)
            except (RuntimeError, TypeError, AttributeError) as error:
                print(f"grouped {label} {way}: {error}", file=sys.stderr)
                continue
            rows.append(dict(op="gemm", shape=dims, dtype="bf16", seconds=seconds, name=f"{label}.{way}"))
            tflops = 2 * r * n * k * experts / seconds / 1e12
            print(f"{label:22} {way:13} {seconds * 1e6:10.1f} us {tflops:6.0f} TFLOP/s", file=sys.stderr)
        del xs, ws, x_all, w_all
        torch.cuda.empty_cache()


def launch(torch, args, device, rows):
    x = torch.zeros(1, device=device)
    count = 2000
    # 1. replayed from a CUDA graph: the GPU's own time per tiny kernel
    graph = torch.cuda.CUDAGraph()
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        for _ in range(3):
            x.add_(1)
        torch.cuda.synchronize()
        with torch.cuda.graph(graph):
            for _ in range(count):
                x.add_(1)
    seconds = po.median_time(torch, graph.replay, args) / count
    rows.append(dict(what="graph_replay_gpu_per_kernel", seconds=seconds))
    # 2. eager, queued behind GEMMs that outlast the host's enqueueing of all the tiny kernels
    # (16 x 1.4 ms against 2000 x ~7 us), so the GPU never waits for the host: its gap per launch
    a = torch.randn(8192, 8192, dtype=torch.bfloat16, device=device)
    samples = []
    for _ in range(args.repeats):
        for _ in range(16):
            torch.matmul(a, a)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(count):
            x.add_(1)
        end.record()
        torch.cuda.synchronize()
        samples.append(start.elapsed_time(end) * 1e-3 / count)
    rows.append(dict(what="eager_queued_gpu_per_kernel", seconds=sorted(samples)[len(samples) // 2]))
    # 3. eager, host-bound: wall time per PyTorch call (dispatch plus cudaLaunchKernel)
    samples = []
    for _ in range(args.repeats):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(count):
            x.add_(1)
        samples.append((time.perf_counter() - t0) / count)
        torch.cuda.synchronize()
    rows.append(dict(what="eager_host_per_call", seconds=sorted(samples)[len(samples) // 2]))
    for r in rows:
        print(f"{r['what']:32} {r['seconds'] * 1e6:8.2f} us", file=sys.stderr)


def host(torch, args, device, rows):
    """Host time per eager PyTorch call with the GPU kept busy (the host never waits for it): the
    calls a MoE layer's router and dispatcher make, and one nn.Linear forward, the call whose CPU
    time NVIDIA/TransformerEngine issue #2053 publishes for a DGX H100's Xeon (13.48 us), so that
    this host's times can be read against that one."""
    a = torch.randn(8192, 8192, dtype=torch.bfloat16, device=device)
    linear = torch.nn.Linear(2048, 2048, bias=False, dtype=torch.bfloat16, device=device)
    x = torch.randn(8192, 2048, dtype=torch.bfloat16, device=device)
    logits = torch.randn(4096, 128, dtype=torch.float32, device=device)
    small = torch.randn(4096, dtype=torch.float32, device=device)
    index = torch.arange(4096, device=device)
    calls = {
        "linear_forward": lambda: linear(x),
        "add": lambda: small + small,
        "empty": lambda: torch.empty(4096, device=device),
        "softmax": lambda: torch.softmax(logits, dim=-1),
        "topk": lambda: torch.topk(logits, 8, dim=-1),
        "sum": lambda: logits.sum(dim=0),
        "index_select": lambda: small.index_select(0, index),
    }
    count = 200
    with torch.no_grad():
        for what, call in calls.items():
            for _ in range(10):
                call()
            samples = []
            for _ in range(args.repeats):
                for _ in range(16):  # about 22 ms of GEMMs ahead of 200 calls of 5-30 us
                    torch.matmul(a, a)
                t0 = time.perf_counter()
                for _ in range(count):
                    call()
                samples.append((time.perf_counter() - t0) / count)
                torch.cuda.synchronize()
            rows.append(dict(what=f"host_per_call.{what}", seconds=sorted(samples)[len(samples) // 2]))
            print(f"{what:32} {rows[-1]['seconds'] * 1e6:8.2f} us", file=sys.stderr)


def layouts(torch, args, device, rows):
    for kind, dims, name in po.gemms("training"):
        if name.startswith(("grid", "qwen3-235b.expert", "qwen3-30b", "mixtral", "deepseek")) or ".dgrad" in name:
            continue  # dgrad is x W: both row-major, as measured already
        m, n, k = dims["m"], dims["n"], dims["k"]
        if name.endswith(".wgrad"):  # C[in x out] = X^T[in x tokens] dY[tokens x out]
            x = torch.randn(k, m, dtype=torch.bfloat16, device=device)
            dy = torch.randn(k, n, dtype=torch.bfloat16, device=device)

            def run(x=x, dy=dy):
                return torch.matmul(x.t(), dy)
        else:  # C[tokens x out] = X[tokens x in] W^T, W[out x in]
            x = torch.randn(m, k, dtype=torch.bfloat16, device=device)
            w = torch.randn(n, k, dtype=torch.bfloat16, device=device)

            def run(x=x, w=w):
                return torch.nn.functional.linear(x, w)

        seconds = po.median_time(torch, run, args)
        rows.append(dict(op=kind, shape=dims, dtype="bf16", seconds=seconds, name=f"{name}.linear_layout"))
        print(f"{name:40} bf16 linear layout {seconds * 1e6:10.1f} us", file=sys.stderr)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("part", choices=("blockwise", "grouped", "launch", "host", "layouts"))
    parser.add_argument("--output", "-o", required=True)
    parser.add_argument("--warmup-ms", type=float, default=100)
    parser.add_argument("--sample-ms", type=float, default=2)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--device", default="cuda:0")
    args = parser.parse_args()
    import signal

    import torch

    # A timeout's SIGTERM unwinds through the finally below, so what was measured is written.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    device = torch.device(args.device)
    rows = []
    try:
        parts = {"blockwise": blockwise, "grouped": grouped, "launch": launch, "host": host, "layouts": layouts}
        parts[args.part](torch, args, device, rows)
    finally:
        with open(args.output, "w", newline="") as stream:
            if args.part in ("launch", "host"):
                writer = csv.writer(stream, lineterminator="\n")
                writer.writerow(("what", "seconds"))
                writer.writerows((r["what"], f"{r['seconds']:.9f}") for r in rows)
            else:
                po.write_csv(rows, stream)
        print(f"wrote {len(rows)} rows to {args.output}", file=sys.stderr)


if __name__ == "__main__":
    main()
