#!/usr/bin/env python3
"""Measure the kernels of a Transformer layer on one GPU into a twocs profile (CSV).

    python3 scripts/profile_operators.py --output a100.csv            # bf16, default shapes
    python3 scripts/profile_operators.py --dtype fp16 --dtype fp32 --quick
    python3 scripts/profile_operators.py --dtype fp8 --fp8-accumulation split -o h100-fp8-split.csv
    python3 scripts/profile_operators.py --shapes training --dtype bf16 -o h200-bf16.csv
    build/twocs calibrate a100.csv --platform platforms/dgx-a100-80gb.yaml -o fitted.yaml

Needs PyTorch with CUDA (or ROCm). Each kernel first runs back to back for `--warmup-ms`, so that
the GPU reaches the clock it holds under sustained load at its power limit (as in training,
where kernels follow each other), then `--repeats` samples of back-to-back runs (enough runs for
`--sample-ms` each) are timed on the GPU with CUDA events, without synchronising in between; the
median sample, per run, is written. Inputs are random normal values (the power a GEMM draws, and
so its clock, depends on its data) and larger than the L2 cache so that memory-bound kernels
stream from HBM.

`--shapes default` measures square and k-sweep GEMMs and three layers of the 2021-22 models;
`--shapes training` the GEMMs of today's runs (scripts/training_shapes.py: dense GQA layers at
their tensor-parallel degrees, per-expert GEMMs of MoE models, MLA projections) and a log2 grid
around them, and the memory-bound kernels at three sizes. `--attention` adds fused attention
(torch's scaled_dot_product_attention, cuDNN and FlashAttention backends) as flash_forward and
flash_backward rows, the backend in the name.

The CSV format (docs/operator-models.md, "Profiles"; read by src/config/profile_csv.cpp):

    op,shape,dtype,measured_time,name,accumulation,scaling
    gemm,"m=8192,n=2304,k=6144",bf16,1063.412us,22b.attn.qkv,,
    batched_gemm,"m=2048,n=2048,k=96,batch=32",bf16,210.334us,22b.attn.scores,,
    normalization,"bytes=201326592,flops=402653184",bf16,131.002us,layernorm,,
    gemm,"m=8192,n=2304,k=6144",fp8,601.2us,22b.attn.qkv.split_accum,split,

FP8 (`--dtype fp8`, Hopper and later): the GEMMs only, as torch._scaled_mm with e4m3 inputs and
bf16 output (Transformer Engine keeps the memory-bound kernels in bf16; batched GEMMs have no
FP8 path). `--fp8-accumulation` picks cuBLASLt's accumulation: `split` promotes partial sums to
fp32 (CUBLASLT_MATMUL_DESC_FAST_ACCUM = 0), as Transformer Engine runs its dgrad and wgrad GEMMs
(module/base.py, _2X_ACC_DGRAD and _2X_ACC_WGRAD); `fast` as it runs its forward GEMMs and as
superbench's cuBLASLt benchmark measures. The `accumulation` column says which (twocs prices
forward FP8 GEMMs from the fast rows and backward ones from the split rows), and each row's name
ends in `.split_accum` or `.fast_accum`; run the script once per mode (docs/validation.md, "NeMo Llama 3 8B FP8").

`op` is a twocs kernel kind (gemm, batched_gemm, elementwise, normalization, softmax,
embedding, optimizer). GEMM shapes give m, n, k (C[m x n] = A[m x k] . B[k x n]) and batch;
memory-bound kernels give the bytes they read plus write and their FLOPs, counted as twocs
counts them (docs/model-reference.md). `measured_time` carries its unit. `name` is a label.
"""

import argparse
import csv
import statistics
import sys

import training_shapes

COLUMNS = ("op", "shape", "dtype", "measured_time", "name", "accumulation", "scaling")
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


def gemms(shapes, quick=False):
    """The GEMMs of --shapes `shapes` (default or training); `quick` shortens the default set."""
    if shapes == "training":
        return training_shapes.training_gemms() + training_shapes.grid_gemms()
    return default_gemms(quick)


def fp8_gemms(quick, shapes="default"):
    """The GEMMs with an FP8 path (torch._scaled_mm is two-dimensional: no batched GEMMs)."""
    return [(kind, dims, name) for kind, dims, name in gemms(shapes, quick) if kind == "gemm"]


def memory_sizes(args):
    """Token counts of the memory-bound kernels: 8192, or 2048 to 32768 for --shapes training."""
    return (2048, 8192, 32768) if args.shapes == "training" else (8192,)


def memory_bound_kernels(dtype, tokens=8192):
    """(kind, label, elements, bytes per element, FLOPs per element, kernel builder) as twocs counts them."""
    e = ELEMENT_SIZE[dtype]
    hidden, heads, seq = 6144, 32 * tokens // 8192, 2048
    return [
        ("normalization", "layernorm", tokens * hidden, 2 * e, 8, "layernorm"),
        ("softmax", "softmax", heads * seq * seq, 2 * e, 5, "softmax"),
        ("elementwise", "dropout", heads * seq * seq, 2 * e + 1, 2, "dropout"),
        ("elementwise", "gelu", tokens * 4 * hidden // 8, 2 * e, 14, "gelu"),
        ("elementwise", "residual.add", tokens * hidden, 3 * e, 1, "add"),
        ("elementwise", "grad.cast", tokens * hidden, e + 4, 1, "cast"),
        ("optimizer", "adam", 256 * 1024 * 1024 * tokens // 8192, 28, 12, "adam"),
    ]


def format_shape(dims):
    return ",".join(f"{key}={value}" for key, value in dims.items())


def write_csv(rows, stream, comments=()):
    """rows: dicts with op, shape (a dict of counts), dtype, seconds, name and, for FP8 GEMMs,
    accumulation and scaling (tensorwise unless given); comments: lines written first, each after '# '."""
    for line in comments:
        stream.write(f"# {line}\n")
    writer = csv.writer(stream, lineterminator="\n")
    writer.writerow(COLUMNS)
    for r in rows:
        writer.writerow([r["op"], format_shape(r["shape"]), r["dtype"], f"{r['seconds'] * 1e6:.3f}us", r["name"],
                         r.get("accumulation", ""), r.get("scaling", "")])


def median_time(torch, run, args):
    """Median GPU time of one `run()` in seconds, under sustained back-to-back load."""
    import time

    torch.cuda.synchronize()
    start, runs = time.perf_counter(), 0
    while runs < 2 or (time.perf_counter() - start) * 1e3 < args.warmup_ms:
        run()
        runs += 1
        if runs % 8 == 0:
            torch.cuda.synchronize()
    torch.cuda.synchronize()
    estimate = (time.perf_counter() - start) / runs
    inner = max(1, min(1000, int(args.sample_ms * 1e-3 / max(estimate, 1e-7))))
    events = [torch.cuda.Event(enable_timing=True) for _ in range(args.repeats + 1)]
    events[0].record()
    for sample in range(args.repeats):
        for _ in range(inner):
            run()
        events[sample + 1].record()
    torch.cuda.synchronize()
    samples = [events[i].elapsed_time(events[i + 1]) * 1e-3 / inner for i in range(args.repeats)]
    return statistics.median(samples)


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


def profile(args, rows):
    """Appends each measured kernel to rows as it is measured."""
    import torch  # imported here so that the CSV helpers work without PyTorch

    if not torch.cuda.is_available():
        sys.exit("profile_operators.py: no CUDA/ROCm device visible to PyTorch")
    torch.backends.cuda.matmul.allow_tf32 = False  # fp32 GEMMs on the FP32 units, as twocs models them
    device = torch.device(args.device)
    for dtype_name in args.dtype:
        if dtype_name == "fp8":
            profile_fp8(torch, args, device, rows)
            continue
        dtype = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[dtype_name]
        for kind, dims, name in gemms(args.shapes, args.quick):
            seconds = median_time(torch, gemm_kernel(torch, kind, dims, dtype, device), args)
            rows.append(dict(op=kind, shape=dims, dtype=dtype_name, seconds=seconds, name=name))
            print(f"{name:28} {dtype_name} {seconds * 1e6:10.1f} us", file=sys.stderr)
        for tokens in memory_sizes(args):
            for kind, name, elements, bytes_per, flops_per, builder in memory_bound_kernels(dtype_name, tokens):
                run = memory_kernel(torch, builder, elements, dtype, device)
                seconds = median_time(torch, run, args)
                shape = dict(bytes=elements * bytes_per, flops=elements * flops_per)
                label = f"{name}.s{tokens}" if args.shapes == "training" else name
                rows.append(dict(op=kind, shape=shape, dtype=dtype_name, seconds=seconds, name=label))
                print(f"{label:28} {dtype_name} {seconds * 1e6:10.1f} us", file=sys.stderr)
                del run
                torch.cuda.empty_cache()
        if args.attention and dtype_name != "fp32":
            rows += profile_attention(torch, args, dtype, dtype_name, device)
        torch.cuda.empty_cache()


def attention_shapes():
    """(batch x heads, sequence) of causal attention at head dimension 128, 16 heads of 16K tokens in
    all (the shapes of FlashAttention-3's benchmark, Shah et al. 2024, Figures 5 and 6)."""
    return [(16 * 16384 // seq, seq) for seq in (512, 1024, 2048, 4096, 8192, 16384)]


def attention_kernel(torch, backend, heads, seq, dtype, device):
    """Forward and backward of causal scaled_dot_product_attention through one backend."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    chosen = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash2": SDPBackend.FLASH_ATTENTION}[backend]
    q, k, v = (torch.randn(1, heads, seq, 128, dtype=dtype, device=device, requires_grad=True) for _ in range(3))

    def forward():
        with sdpa_kernel([chosen]):
            return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)

    out = forward()
    grad = torch.randn_like(out)

    def backward():
        q.grad = k.grad = v.grad = None
        out.backward(grad, retain_graph=True)

    return forward, backward


def profile_attention(torch, args, dtype, dtype_name, device):
    rows = []
    for backend in ("cudnn", "flash2"):
        for heads, seq in attention_shapes():
            try:
                forward, backward = attention_kernel(torch, backend, heads, seq, dtype, device)
                times = (median_time(torch, forward, args), median_time(torch, backward, args))
            except RuntimeError as error:  # a backend this build or GPU lacks
                print(f"attention {backend} heads={heads} seq={seq}: {error}", file=sys.stderr)
                break
            shape = dict(heads=heads, seq=seq, head_dim=128, causal=1)
            for op, seconds in zip(("flash_forward", "flash_backward"), times):
                rows.append(dict(op=op, shape=shape, dtype=dtype_name, seconds=seconds, name=f"{backend}.{op}"))
                print(f"{backend}.{op}.{heads}.{seq:<10} {dtype_name} {seconds * 1e6:10.1f} us", file=sys.stderr)
            torch.cuda.empty_cache()
    return rows


def profile_fp8(torch, args, device, rows):
    fast = args.fp8_accumulation == "fast"
    for kind, dims, name in fp8_gemms(args.quick, args.shapes):
        seconds = median_time(torch, fp8_gemm_kernel(torch, dims, device, fast), args)
        label = f"{name}.{args.fp8_accumulation}_accum"
        rows.append(dict(op=kind, shape=dims, dtype="fp8", seconds=seconds, name=label,
                         accumulation=args.fp8_accumulation))
        print(f"{label:28} fp8 {seconds * 1e6:10.1f} us", file=sys.stderr)
    torch.cuda.empty_cache()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--output", "-o", default="profile.csv", help="CSV to write (default profile.csv)")
    parser.add_argument("--dtype", action="append", choices=sorted(ELEMENT_SIZE), help="repeatable; default bf16")
    parser.add_argument("--warmup-ms", type=float, default=100, help="back-to-back runs before timing (default 100)")
    parser.add_argument("--sample-ms", type=float, default=2, help="back-to-back runs in each timed sample")
    parser.add_argument("--repeats", type=int, default=10, help="timed samples; the median is written")
    parser.add_argument("--device", default="cuda:0")
    parser.add_argument("--quick", action="store_true", help="fewer GEMM shapes (--shapes default)")
    parser.add_argument("--shapes", choices=("default", "training"), default="default",
                        help="GEMM shapes: the 2021-22 set, or today's runs (scripts/training_shapes.py)")
    parser.add_argument("--attention", action="store_true", help="also fused attention (SDPA: cuDNN, FlashAttention)")
    parser.add_argument("--fp8-accumulation", choices=("split", "fast"), default="split",
                        help="cuBLASLt accumulation of the FP8 GEMMs (default split, as TE's backward)")
    args = parser.parse_args()
    args.dtype = args.dtype or ["bf16"]
    rows = []
    try:
        profile(args, rows)
    finally:  # what was measured before a failure is written too
        with open(args.output, "w", newline="") as stream:
            write_csv(rows, stream)
        print(f"wrote {len(rows)} kernels to {args.output}", file=sys.stderr)


if __name__ == "__main__":
    main()
