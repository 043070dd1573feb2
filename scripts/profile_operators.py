#!/usr/bin/env python3
"""Measure the kernels of a Transformer layer on one GPU into a twocs profile (CSV).

    python3 scripts/profile_operators.py --output a100.csv            # bf16, default shapes
    python3 scripts/profile_operators.py --dtype fp16 --dtype fp32 --quick
    python3 scripts/profile_operators.py --dtype fp8 --fp8-accumulation split -o h100-fp8-split.csv
    build/twocs calibrate a100.csv --platform platforms/dgx-a100-80gb.yaml -o fitted.yaml

Needs PyTorch with CUDA (or ROCm). Each kernel runs `--warmup` times, then `--repeats` times,
each run timed on the GPU with CUDA events; the median is written. Inputs are larger than the
L2 cache so that memory-bound kernels stream from HBM.

The CSV format (docs/operator-models.md, "Profiles"; read by src/config/profile_csv.cpp):

    op,shape,dtype,measured_time,name
    gemm,"m=8192,n=2304,k=6144",bf16,1063.412us,22b.attn.qkv
    batched_gemm,"m=2048,n=2048,k=96,batch=32",bf16,210.334us,22b.attn.scores
    normalization,"bytes=201326592,flops=402653184",bf16,131.002us,layernorm

FP8 (`--dtype fp8`, Hopper and later): the GEMMs only, as torch._scaled_mm with e4m3 inputs and
bf16 output (Transformer Engine keeps the memory-bound kernels in bf16; batched GEMMs have no
FP8 path). `--fp8-accumulation` picks cuBLASLt's accumulation: `split` promotes partial sums to
fp32 (CUBLASLT_MATMUL_DESC_FAST_ACCUM = 0), as Transformer Engine runs its dgrad and wgrad GEMMs
(module/base.py, _2X_ACC_DGRAD and _2X_ACC_WGRAD); `fast` as it runs its forward GEMMs and as
superbench's cuBLASLt benchmark measures. Each row's name ends in `.split_accum` or `.fast_accum`;
run the script once per mode (docs/validation.md, "NeMo Llama 3 8B FP8").

`op` is a twocs kernel kind (gemm, batched_gemm, elementwise, normalization, softmax,
embedding, optimizer). GEMM shapes give m, n, k (C[m x n] = A[m x k] . B[k x n]) and batch;
memory-bound kernels give the bytes they read plus write and their FLOPs, counted as twocs
counts them (docs/model-reference.md). `measured_time` carries its unit. `name` is a label.
"""

import argparse
import csv
import statistics
import sys

COLUMNS = ("op", "shape", "dtype", "measured_time", "name")
ELEMENT_SIZE = {"fp32": 4, "bf16": 2, "fp16": 2, "fp8": 1}


def layer_gemms(name, hidden, heads, seq, micro_batch, tensor):
    """The GEMMs of one Megatron-LM GPT layer on one tensor-parallel rank, forward and backward."""
    tokens = micro_batch * seq
    qkv, ffn, head = 3 * hidden // tensor, 4 * hidden // tensor, hidden // heads
    batch = micro_batch * heads // tensor
    return [
        ("gemm", dict(m=tokens, n=qkv, k=hidden), f"{name}.attn.qkv"),
        ("gemm", dict(m=tokens, n=hidden, k=qkv), f"{name}.attn.qkv.dgrad"),
        ("gemm", dict(m=hidden, n=qkv, k=tokens), f"{name}.attn.qkv.wgrad"),
        ("gemm", dict(m=tokens, n=hidden, k=hidden // tensor), f"{name}.attn.out"),
        ("gemm", dict(m=hidden // tensor, n=hidden, k=tokens), f"{name}.attn.out.wgrad"),
        ("gemm", dict(m=tokens, n=ffn, k=hidden), f"{name}.mlp.fc1"),
        ("gemm", dict(m=tokens, n=hidden, k=ffn), f"{name}.mlp.fc2"),
        ("gemm", dict(m=hidden, n=ffn, k=tokens), f"{name}.mlp.fc1.wgrad"),
        ("batched_gemm", dict(m=seq, n=seq, k=head, batch=batch), f"{name}.attn.scores"),
        ("batched_gemm", dict(m=seq, n=head, k=seq, batch=batch), f"{name}.attn.context"),
    ]


def default_gemms(quick):
    shapes = [("gemm", dict(m=s, n=s, k=s), f"square.{s}") for s in (1024, 2048, 4096, 8192)]
    shapes += [("gemm", dict(m=8192, n=4096, k=k), f"k.{k}") for k in (64, 128, 256, 512, 1024, 2048)]
    shapes += [("gemm", dict(m=16, n=8192, k=8192), "skinny")]
    shapes += layer_gemms("22b", hidden=6144, heads=64, seq=2048, micro_batch=4, tensor=8)
    if not quick:
        shapes += layer_gemms("gpt3", hidden=12288, heads=96, seq=2048, micro_batch=1, tensor=8)
        shapes += layer_gemms("13b", hidden=5120, heads=40, seq=2048, micro_batch=2, tensor=8)
    return shapes


def fp8_gemms(quick):
    """The GEMMs with an FP8 path (torch._scaled_mm is two-dimensional: no batched GEMMs)."""
    return [(kind, dims, name) for kind, dims, name in default_gemms(quick) if kind == "gemm"]


def memory_bound_kernels(dtype):
    """(kind, label, elements, bytes per element, FLOPs per element, kernel builder) as twocs counts them."""
    e = ELEMENT_SIZE[dtype]
    tokens, hidden, heads, seq = 8192, 6144, 32, 2048
    return [
        ("normalization", "layernorm", tokens * hidden, 2 * e, 8, "layernorm"),
        ("softmax", "softmax", heads * seq * seq, 2 * e, 5, "softmax"),
        ("elementwise", "dropout", heads * seq * seq, 2 * e + 1, 2, "dropout"),
        ("elementwise", "gelu", tokens * 4 * hidden // 8, 2 * e, 14, "gelu"),
        ("elementwise", "residual.add", tokens * hidden, 3 * e, 1, "add"),
        ("elementwise", "grad.cast", tokens * hidden, e + 4, 1, "cast"),
        ("optimizer", "adam", 256 * 1024 * 1024, 28, 12, "adam"),
    ]


def format_shape(dims):
    return ",".join(f"{key}={value}" for key, value in dims.items())


def write_csv(rows, stream):
    """rows: dicts with op, shape (a dict of counts), dtype, seconds and name."""
    writer = csv.writer(stream, lineterminator="\n")
    writer.writerow(COLUMNS)
    for r in rows:
        writer.writerow([r["op"], format_shape(r["shape"]), r["dtype"], f"{r['seconds'] * 1e6:.3f}us", r["name"]])


def median_time(torch, run, warmup, repeats):
    """Median GPU time of `run()` in seconds, each call timed with CUDA events."""
    for _ in range(warmup):
        run()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        run()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) * 1e-3)
    return statistics.median(times)


def gemm_kernel(torch, kind, dims, dtype, device):
    if kind == "batched_gemm":
        a = torch.randn(dims["batch"], dims["m"], dims["k"], dtype=dtype, device=device)
        b = torch.randn(dims["batch"], dims["k"], dims["n"], dtype=dtype, device=device)
        return lambda: torch.bmm(a, b)
    a = torch.randn(dims["m"], dims["k"], dtype=dtype, device=device)
    b = torch.randn(dims["k"], dims["n"], dtype=dtype, device=device)
    return lambda: torch.matmul(a, b)


def fp8_gemm_kernel(torch, dims, device, fast_accum):
    """C = A B with e4m3 A (m x k, row-major) and B (k x n, column-major, as cuBLASLt's FP8 needs)."""
    a = torch.randn(dims["m"], dims["k"], device=device).to(torch.float8_e4m3fn)
    b = torch.randn(dims["n"], dims["k"], device=device).to(torch.float8_e4m3fn).t()
    one = torch.ones((), device=device)
    return lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16,
                                    use_fast_accum=fast_accum)


def memory_kernel(torch, builder, elements, dtype, device):
    functional = torch.nn.functional
    if builder == "adam":
        param = torch.zeros(elements, dtype=torch.float32, device=device, requires_grad=True)
        param.grad = torch.randn_like(param)
        optimizer = torch.optim.Adam([param], lr=1e-4, fused=True)
        return optimizer.step
    x = torch.randn(elements, dtype=dtype, device=device)
    if builder == "layernorm":
        x = x.view(-1, 6144)
        return lambda: functional.layer_norm(x, (6144,))
    if builder == "softmax":
        x = x.view(-1, 2048)
        return lambda: torch.softmax(x, dim=-1)
    if builder == "dropout":
        return lambda: functional.dropout(x, p=0.1, training=True)
    if builder == "gelu":
        return lambda: functional.gelu(x, approximate="tanh")
    if builder == "add":
        y = torch.randn_like(x)
        return lambda: x + y
    if builder == "cast":
        return lambda: x.float()
    raise ValueError(builder)


def profile(args):
    import torch  # imported here so that the CSV helpers work without PyTorch

    if not torch.cuda.is_available():
        sys.exit("profile_operators.py: no CUDA/ROCm device visible to PyTorch")
    torch.backends.cuda.matmul.allow_tf32 = False  # fp32 GEMMs on the FP32 units, as twocs models them
    device = torch.device(args.device)
    rows = []
    for dtype_name in args.dtype:
        if dtype_name == "fp8":
            rows += profile_fp8(torch, args, device)
            continue
        dtype = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[dtype_name]
        for kind, dims, name in default_gemms(args.quick):
            seconds = median_time(torch, gemm_kernel(torch, kind, dims, dtype, device), args.warmup, args.repeats)
            rows.append(dict(op=kind, shape=dims, dtype=dtype_name, seconds=seconds, name=name))
            print(f"{name:28} {dtype_name} {seconds * 1e6:10.1f} us", file=sys.stderr)
        for kind, name, elements, bytes_per, flops_per, builder in memory_bound_kernels(dtype_name):
            run = memory_kernel(torch, builder, elements, dtype, device)
            seconds = median_time(torch, run, args.warmup, args.repeats)
            shape = dict(bytes=elements * bytes_per, flops=elements * flops_per)
            rows.append(dict(op=kind, shape=shape, dtype=dtype_name, seconds=seconds, name=name))
            print(f"{name:28} {dtype_name} {seconds * 1e6:10.1f} us", file=sys.stderr)
        torch.cuda.empty_cache()
    return rows


def profile_fp8(torch, args, device):
    fast = args.fp8_accumulation == "fast"
    rows = []
    for kind, dims, name in fp8_gemms(args.quick):
        seconds = median_time(torch, fp8_gemm_kernel(torch, dims, device, fast), args.warmup, args.repeats)
        label = f"{name}.{args.fp8_accumulation}_accum"
        rows.append(dict(op=kind, shape=dims, dtype="fp8", seconds=seconds, name=label))
        print(f"{label:28} fp8 {seconds * 1e6:10.1f} us", file=sys.stderr)
    torch.cuda.empty_cache()
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--output", "-o", default="profile.csv", help="CSV to write (default profile.csv)")
    parser.add_argument("--dtype", action="append", choices=sorted(ELEMENT_SIZE), help="repeatable; default bf16")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--device", default="cuda:0")
    parser.add_argument("--quick", action="store_true", help="fewer GEMM shapes")
    parser.add_argument("--fp8-accumulation", choices=("split", "fast"), default="split",
                        help="cuBLASLt accumulation of the FP8 GEMMs (default split, as TE's backward)")
    args = parser.parse_args()
    args.dtype = args.dtype or ["bf16"]
    rows = profile(args)
    with open(args.output, "w", newline="") as stream:
        write_csv(rows, stream)
    print(f"wrote {len(rows)} kernels to {args.output}", file=sys.stderr)


if __name__ == "__main__":
    main()
