"""The GEMM shapes of today's training runs, as twocs lowers them (scripts/profile_operators.py --shapes).

twocs names a linear layer's GEMMs (src/model/*.cpp, linear_forward / linear_input_grad /
linear_weight_grad): forward m = tokens, n = output features, k = input features; the input
gradient (dgrad) m = tokens, n = input, k = output; the weight gradient (wgrad) m = input,
n = output, k = tokens. Each model's dimensions are its Hugging Face config.json (the same
numbers as workloads/*.yaml); the tensor-parallel degrees and tokens per micro-batch are those of
the published runs in workloads/validation/modern.yaml and moe-layers.yaml, and their neighbours,
so that the measured table's interpolation (docs/operator-models.md, section 1) has points on
both sides.
"""

# name, hidden, ffn, heads, kv_heads, head_dim, gated (SwiGLU: fc1 holds 2 ffn), tensor degrees, tokens
DENSE = [
    ("llama3-8b", 4096, 14336, 32, 8, 128, True, (1, 2), (4096, 8192, 16384)),
    ("llama3-70b", 8192, 28672, 64, 8, 128, True, (4, 8), (2048, 4096, 8192)),
    ("gpt3-175b", 12288, 49152, 96, 96, 128, False, (4, 8), (2048, 4096)),
    ("llama3-405b", 16384, 53248, 128, 8, 128, True, (8,), (4096, 8192)),
    ("qwen3-235b.attn", 4096, 0, 64, 4, 128, True, (1, 2, 4), (4096, 8192)),
]

# name, hidden, expert ffn, gated, rows per local expert (the expert GEMMs of a grouped linear
# run one GEMM per expert: TE GroupedLinear, docs/operator-models.md "Separate kernels")
EXPERTS = [
    ("qwen3-235b.expert", 4096, 1536, True, (128, 256, 512, 1024, 2048, 4096)),
    ("qwen3-30b.expert", 2048, 768, True, (256, 512, 1024, 2048, 4096)),
    ("mixtral.expert", 4096, 14336, True, (1024, 2048, 4096, 8192, 16384)),
    ("deepseek-v3.expert", 7168, 2048, True, (128, 256, 512, 1024, 2048, 4096)),
]

# DeepSeek-V3's multi-head latent attention projections, tensor degree 1 (config.json:
# q_lora_rank 1536, kv_lora_rank 512, qk_rope_head_dim 64, qk_nope 128, v_head_dim 128, 128 heads)
MLA = [
    ("deepseek-v3.q_down", 7168, 1536),
    ("deepseek-v3.kv_down", 7168, 576),
    ("deepseek-v3.q_up", 1536, 128 * 192),
    ("deepseek-v3.kv_up", 512, 128 * 256),
    ("deepseek-v3.out", 128 * 128, 7168),
]


def linear(name, tokens, inputs, outputs):
    """Forward, input-gradient and weight-gradient GEMMs of one linear layer."""
    return [
        ("gemm", dict(m=tokens, n=outputs, k=inputs), f"{name}"),
        ("gemm", dict(m=tokens, n=inputs, k=outputs), f"{name}.dgrad"),
        ("gemm", dict(m=inputs, n=outputs, k=tokens), f"{name}.wgrad"),
    ]


def dense_layer(name, hidden, ffn, heads, kv_heads, head_dim, gated, tensor, tokens):
    tag = f"{name}.t{tensor}.s{tokens}"
    qkv = (heads + 2 * kv_heads) * head_dim // tensor
    shapes = linear(f"{tag}.attn.qkv", tokens, hidden, qkv)
    shapes += linear(f"{tag}.attn.out", tokens, heads * head_dim // tensor, hidden)
    if ffn:
        shapes += linear(f"{tag}.mlp.fc1", tokens, hidden, (2 if gated else 1) * ffn // tensor)
        shapes += linear(f"{tag}.mlp.fc2", tokens, ffn // tensor, hidden)
    return shapes


def training_gemms():
    shapes = []
    for name, hidden, ffn, heads, kv, head_dim, gated, tensors, token_counts in DENSE:
        for t in tensors:
            for s in token_counts:
                shapes += dense_layer(name, hidden, ffn, heads, kv, head_dim, gated, t, s)
    for name, hidden, ffn, gated, rows in EXPERTS:
        for r in rows:
            shapes += linear(f"{name}.r{r}.fc1", r, hidden, (2 if gated else 1) * ffn)
            shapes += linear(f"{name}.r{r}.fc2", r, ffn, hidden)
    for name, inputs, outputs in MLA:
        shapes += linear(f"{name}.s4096", 4096, inputs, outputs)
    return unique(shapes)


def grid_gemms():
    """A log2 grid around the training shapes, for the interpolation between them."""
    shapes = []
    for m in (512, 2048, 8192, 32768):
        for n in (1024, 4096, 16384):
            for k in (1024, 4096, 16384):
                shapes.append(("gemm", dict(m=m, n=n, k=k), f"grid.{m}.{n}.{k}"))
    return unique(shapes)


def unique(shapes):
    """Each (kind, dims) once, under its first name."""
    seen, kept = set(), []
    for kind, dims, name in shapes:
        key = (kind, tuple(sorted(dims.items())))
        if key not in seen:
            seen.add(key)
            kept.append((kind, dims, name))
    return kept
