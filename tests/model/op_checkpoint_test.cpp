// recompute: selective-op, torchtitan's per-operator selective activation checkpointing
// (torchtitan/distributed/activation_checkpoint.py: save SDPA, reduce_scatter and every odd mm of
// the block wq, wk, wv, wo, w1, w3, w2), and PyTorch's unfused loss under framework fsdp.
#include <doctest/doctest.h>

#include <string>

#include <twocs/model/layer_ops.hpp>
#include <twocs/model/memory.hpp>

#include "support/modern_models.hpp"

using namespace twocs::model;

namespace {

/// Llama 3 70B's block at Llama 3.1 8B's width: h 4096, 32 heads, 8 KV heads, SwiGLU f 14336.
TransformerConfig llama_8b(std::int64_t layers) {
  auto m = twocs::testing::llama3_70b();
  m.layers = layers;
  m.hidden = 4096;
  m.heads = 32;
  m.ffn_hidden = 14336;
  return m;
}

TrainingPlan plan_of(Recompute r, Framework f = Framework::megatron_lm, KernelFusion k = KernelFusion::eager) {
  TrainingPlan plan;
  plan.kernels = k;
  plan.global_batch = 2;
  plan.micro_batch = 2;
  plan.dtype = Dtype::bf16;
  plan.attention = AttentionKernel::fused;
  plan.recompute = r;
  plan.framework = f;
  return plan;
}

double activations(const TransformerConfig& m, const TrainingPlan& plan) {
  return estimate_memory(m, plan).stages.at(0).breakdown.activations.value();
}

double gemm_flops(const StepSequence& steps) {
  double total = 0;
  for (const auto& step : steps)
    if (const auto* op = std::get_if<ComputeOp>(&step); op && op->gemm) total += op->flops.value();
  return total;
}

} // namespace

TEST_CASE("selective-op keeps the block input, wq, wv, SDPA, w1 and w2 outputs of every layer") {
  const double s = 8192, b = 2, h = 4096, a = 32, g = 8, d = 128, f = 14336, V = 128256;
  const double layers = 4;
  // Saved per layer, 2-byte elements: input (h), wq (a d = h), wv (g d), SDPA output (h) and fp32
  // logsumexp (4 bytes per head and token), w1 (f), w2 (h).
  const double saved = s * b * (2 * h + 2 * h + 2 * g * d + 2 * h + 4 * a + 2 * f + 2 * h);
  // The backward rebuilds one layer's unsaved activations: the no-recompute bytes (two norm
  // inputs, QKV and fc1 inputs, Q, K, V, attention output, gate and up, fc2 input; no dropout)
  // with FlashAttention's fp32 statistics, less what that layer saved.
  const double none_layer = s * b * (4 * h + 2 * h + 2 * h + 2 * h + 4 * g * d + 2 * h + 4 * f + 2 * f + 4 * a);
  const double logits = 4 * s * b * V; // fp32, vocabulary a multiple of 128 already
  const double expected = layers * saved + (none_layer - saved) + logits;
  CHECK(activations(llama_8b(4), plan_of(Recompute::selective_op)) == doctest::Approx(expected));
  // Less than Korthikanti's selective recomputation (34 s b h per layer at t = 1).
  CHECK(saved < 34 * s * b * h);
}

TEST_CASE("a compiled block saves only what its backward reads: not w2's output") {
  const double s = 8192, b = 2, h = 4096;
  const double layers = 4;
  const auto m = llama_8b(4);
  const double eager = activations(m, plan_of(Recompute::selective_op, Framework::megatron_lm, KernelFusion::eager));
  const double fused = activations(m, plan_of(Recompute::selective_op, Framework::megatron_lm, KernelFusion::fused));
  // Eager caches w2's 2-byte s b h output in every layer; the layer being rebuilt counts the
  // no-recompute bytes either way, so the held layers differ: layers - 1 of them.
  CHECK(eager - fused == doctest::Approx((layers - 1) * 2 * s * b * h));
}

TEST_CASE("PyTorch's unfused cross-entropy holds three fp32 vocabulary tensors at the start of backward") {
  const double s = 8192, b = 2, h = 4096, V = 128256;
  const auto m = llama_8b(2);
  const double megatron = activations(m, plan_of(Recompute::selective_op, Framework::megatron_lm));
  const double fsdp = activations(m, plan_of(Recompute::selective_op, Framework::fsdp));
  // Two more fp32 vocabulary tensors, and the final RMSNorm's fp32 input (4 bytes) and bf16
  // normalised x (2) and the output linear's bf16 input (2), which torchtitan runs eager.
  CHECK(fsdp - megatron == doctest::Approx(2 * 4 * s * b * V + (4 + 2 + 2) * s * b * h));
}

TEST_CASE("a compiled loss holds the 16-bit logits and their gradient instead of three fp32 tensors") {
  const double s = 8192, b = 2, V = 128256;
  const auto m = llama_8b(2);
  auto plan = plan_of(Recompute::selective_op, Framework::fsdp);
  const double eager = activations(m, plan);
  plan.loss = LossKernel::compiled;
  const double compiled = activations(m, plan);
  // torchtitan components/loss.py under torch.compile: saved bf16 logits and the bf16 gradient
  // written from them (2 + 2 bytes a logit) where eager holds 3 x 4.
  CHECK(eager - compiled == doctest::Approx((3 * 4 - 2 * 2) * s * b * V));
}

TEST_CASE("a compiled loss reads the 16-bit logits once per reduction and once for its gradient") {
  LayerShape shape;
  shape.model = llama_8b(1);
  shape.micro_batch = 2;
  shape.attention = AttentionKernel::fused;
  const double logits = 2 * 8192 * 128256.0;
  const auto head_bytes = [&](LossKernel loss) {
    shape.loss = loss;
    double bytes = 0;
    for (const auto& step : output_head_forward(shape))
      if (const auto* op = std::get_if<ComputeOp>(&step); op && op->name.starts_with("head.cross_entropy"))
        bytes += op->bytes.value();
    for (const auto& step : output_head_backward(shape, false))
      if (const auto* op = std::get_if<ComputeOp>(&step); op && op->name.starts_with("head.cross_entropy"))
        bytes += op->bytes.value();
    return bytes;
  };
  // Compiled: the max and the exponentials' sum each read 2 bytes a logit, the backward reads 2
  // and writes 2. Eager as Megatron-LM's fused kernels count them: 2 + 8, 20, 12 + 2.
  CHECK(head_bytes(LossKernel::compiled) == doctest::Approx((2 + 2 + 4) * logits));
  CHECK(head_bytes(LossKernel::eager) == doctest::Approx((10 + 20 + 14) * logits));
}

TEST_CASE("FSDP2 keeps its root's embedding, final norm and output unsharded after forward") {
  const double h = 4096, V = 128256;
  const auto m = llama_8b(2);
  auto plan = plan_of(Recompute::selective_op, Framework::megatron_lm);
  plan.optimizer.sharding = OptimizerSharding::full;
  plan.parallelism.data = 8;
  plan.global_batch = 16;
  const auto buffers = [&](Framework f) {
    plan.framework = f;
    return estimate_memory(m, plan).stages.at(0).breakdown.communication_buffers.value();
  };
  // bf16 copies of the untied embedding and output (V h each) and the norm's h weights; and per
  // layer (weights 2 h^2 + 2 h kv + 3 h f, two norms 2 h, biases (h + 2 kv) + h + 2 f + h as
  // Megatron's add_bias_linear default) one more gathered copy, the unsharded bf16 gradients and
  // their fp32 reduce-scatter input: 2 + 2 + 4 bytes each (fsdp_memory.hpp).
  const double kv = 1024, f = 14336;
  const double layer = 2 * h * h + 2 * h * kv + 3 * h * f + 2 * h + (h + 2 * kv) + h + 2 * f + h;
  CHECK(buffers(Framework::fsdp) - buffers(Framework::megatron_lm) == doctest::Approx(2 * (2 * V * h + h) + 8 * layer));
  plan.optimizer.sharding = OptimizerSharding::optimizer;
  CHECK(buffers(Framework::fsdp) == doctest::Approx(buffers(Framework::megatron_lm)));
}

TEST_CASE("selective-op recomputes wk, wo and w3 and every memory-bound kernel, not SDPA") {
  LayerShape shape;
  shape.model = llama_8b(1);
  shape.micro_batch = 2;
  shape.attention = AttentionKernel::fused;
  const double tokens = 2 * 8192, h = 4096, kv = 8 * 128, f = 14336;
  const auto steps = transformer_layer_recompute(shape, Recompute::selective_op);
  CHECK(gemm_flops(steps) == doctest::Approx(2 * tokens * h * (kv + h + f)));
  int norms = 0;
  for (const auto& step : steps) {
    const auto* op = std::get_if<ComputeOp>(&step);
    REQUIRE(op != nullptr);
    CHECK(op->pass == Pass::recompute);
    CHECK(op->name.find("flash") == std::string::npos);
    if (op->name.find("norm") != std::string::npos) ++norms;
  }
  CHECK(norms == 2);
  // Fewer GEMM FLOPs than the full forward's wq..w2 (2 tokens h (2h + 2 g d + 3 f)).
  CHECK(gemm_flops(steps) < 2 * tokens * h * (2 * h + 2 * kv + 3 * f));
}
