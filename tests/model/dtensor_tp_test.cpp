// Tensor parallelism as PyTorch's DTensor runs it (framework: fsdp, torchtitan): the backward keeps
// the gathered input instead of gathering it again, and torchao's Float8 TP classes all-gather
// FP8 inputs and output gradients, where Megatron-LM re-gathers and Transformer Engine without
// userbuffers gathers in 16 bits.
#include <doctest/doctest.h>

#include <string>

#include <twocs/model/layer_ops.hpp>

#include "support/step_lookup.hpp"

#include "../support/scenarios.hpp"

using namespace twocs::model;
using twocs::testing::named;

namespace {

constexpr std::int64_t tensor = 4;
constexpr double tokens = 2.0 * 4096; // micro_batch 2, seq_len 4096
constexpr double hidden = 4096;

LayerShape shape_of(Framework framework, Dtype dtype, TpCommOverlap overlap = TpCommOverlap::none) {
  auto plan = twocs::testing::plan_of(tensor, 1, 1, 1, 2);
  plan.parallelism.sequence = true;
  plan.attention = AttentionKernel::fused;
  plan.framework = framework;
  plan.dtype = dtype;
  plan.overlap.tp_comm = overlap;
  return LayerShape::of(twocs::testing::gpt(2, 4096, 32, 4096), plan);
}

} // namespace

TEST_CASE("dtensor_tp: only the fsdp framework runs DTensor's tensor parallelism") {
  CHECK(shape_of(Framework::fsdp, Dtype::bf16).dtensor_tp);
  CHECK_FALSE(shape_of(Framework::megatron_lm, Dtype::bf16).dtensor_tp);
  CHECK_FALSE(shape_of(Framework::megatron_deepspeed, Dtype::bf16).dtensor_tp);
}

/// The column-parallel backward's collective of `layer` in `steps`.
const CollectiveOp& input_grad_collective(const StepSequence& steps, const std::string& layer) {
  for (const auto& step : steps)
    if (const auto* op = std::get_if<CollectiveOp>(&step); op && op->name == layer + ".reduce_scatter") return *op;
  FAIL("no " << layer << ".reduce_scatter");
  throw;
}

TEST_CASE("dtensor_tp: the column-parallel backward does not gather its input again and reduce-scatters after the "
          "whole linear backward, where Megatron-LM re-gathers and runs the reduce-scatter under wgrad") {
  for (const auto dtype : {Dtype::bf16, Dtype::fp8}) {
    CAPTURE(static_cast<int>(dtype));
    const auto dtensor = transformer_layer_backward(shape_of(Framework::fsdp, dtype));
    const auto megatron = transformer_layer_backward(shape_of(Framework::megatron_lm, dtype));
    for (const std::string layer : {"attn.qkv", "mlp.fc1"}) {
      CAPTURE(layer);
      CHECK(named(dtensor, layer + ".input.all_gather").count == 0);
      CHECK(named(megatron, layer + ".input.all_gather").count == 1);
      // dgrad's reduce-scatter and both gradient GEMMs stay.
      CHECK(named(dtensor, layer + ".reduce_scatter").bytes == doctest::Approx(tokens * hidden * 2));
      CHECK(named(dtensor, layer + ".dgrad").count == 1);
      CHECK(named(dtensor, layer + ".wgrad").count == 1);
      CHECK(input_grad_collective(dtensor, layer).overlapped_ops == 0);  // blocking: nothing runs beside it
      CHECK(input_grad_collective(megatron, layer).overlapped_ops == 1); // wgrad runs beside it
    }
  }
}

TEST_CASE("dtensor_tp: under FP8 the all-gathers move one byte a value, forward and backward, and reduce-scatters stay "
          "16-bit") {
  const auto shape = shape_of(Framework::fsdp, Dtype::fp8);
  const auto fwd = transformer_layer_forward(shape);
  const auto bwd = transformer_layer_backward(shape);
  // Float8ColwiseParallel / PrepareFloat8ModuleInput: the inputs of qkv and fc1, b s h values.
  CHECK(named(fwd, "attn.qkv.all_gather").bytes == doctest::Approx(tokens * hidden));
  CHECK(named(fwd, "mlp.fc1.all_gather").bytes == doctest::Approx(tokens * hidden));
  // RowwiseParallel's forward reduce-scatter of partial sums in BF16.
  CHECK(named(fwd, "attn.out.reduce_scatter").bytes == doctest::Approx(tokens * hidden * 2));
  // Float8RowwiseParallel: the output gradient is cast, then gathered for the row-parallel dgrad.
  CHECK(named(bwd, "attn.out.all_gather").bytes == doctest::Approx(tokens * hidden));
  CHECK(named(bwd, "mlp.fc2.all_gather").bytes == doctest::Approx(tokens * hidden));
  // It is cast on the local shard (2 bytes read, 1 written a value), before the gather.
  CHECK(named(bwd, "attn.out.grad.fp8_cast").bytes == doctest::Approx(tokens / tensor * hidden * 3));
  CHECK(twocs::testing::step_index(bwd, "attn.out.grad.fp8_cast") <
        twocs::testing::step_index(bwd, "attn.out.all_gather"));
  // Without FP8 they are BF16; Transformer Engine also gathers FP8 without userbuffers.
  CHECK(named(transformer_layer_forward(shape_of(Framework::fsdp, Dtype::bf16)), "attn.qkv.all_gather").bytes ==
        doctest::Approx(tokens * hidden * 2));
  CHECK(named(transformer_layer_forward(shape_of(Framework::megatron_lm, Dtype::fp8)), "attn.qkv.all_gather").bytes ==
        doctest::Approx(tokens * hidden * 1));
}

TEST_CASE("dtensor_tp: async TP exchanges FP8 shards under FP8 and its backward chunks dgrad without a gather") {
  auto shape = shape_of(Framework::fsdp, Dtype::fp8, TpCommOverlap::async_tp);
  shape.separate_projections = false; // one QKV module: its dgrad's reduce-scatter fuses (tp_comm_overlap_test.cpp)
  const auto fwd = transformer_layer_forward(shape);
  const auto bwd = transformer_layer_backward(shape);
  const double fp8_shard = tokens * hidden / tensor;
  CHECK(named(fwd, "attn.qkv.ring_exchange").bytes == doctest::Approx((tensor - 1) * fp8_shard));
  CHECK(named(bwd, "attn.out.ring_exchange").bytes == doctest::Approx((tensor - 1) * fp8_shard));
  // The partial sums the row-parallel GEMM sends are BF16 (b s h / t values each).
  CHECK(named(fwd, "mlp.fc2.ring_exchange").bytes == doctest::Approx((tensor - 1) * 2 * fp8_shard));
  CHECK(named(bwd, "attn.qkv.input.all_gather").count == 0);
  CHECK(named(bwd, "attn.qkv.dgrad").count == tensor);
  CHECK(named(bwd, "attn.qkv.reduce_partials").count == 1);
}

TEST_CASE("dtensor_tp: torchtitan's per-operator recomputation gathers w3's input in FP8 again") {
  auto plan = twocs::testing::plan_of(tensor, 1, 1, 1, 2);
  plan.parallelism.sequence = true;
  plan.attention = AttentionKernel::fused;
  plan.framework = Framework::fsdp;
  plan.dtype = Dtype::fp8;
  auto model = twocs::testing::gpt(2, 4096, 32, 4096);
  model.ffn_kind = FfnKind::swiglu;
  model.ffn_hidden = 11008;
  const auto recompute = transformer_layer_recompute(LayerShape::of(model, plan), Recompute::selective_op);
  CHECK(named(recompute, "mlp.fc1.all_gather").bytes == doctest::Approx(tokens * hidden));
}

TEST_CASE("dtensor_tp: sequence-dim collectives copy their buffer to and from dim 0's layout, the gathers from two "
          "micro-batch rows up") {
  constexpr double activation = tokens * hidden * 2; // one 16-bit [b, s, h] buffer, micro_batch 2
  for (const auto dtype : {Dtype::bf16, Dtype::fp8}) {
    CAPTURE(static_cast<int>(dtype));
    const double gathered = dtype == Dtype::fp8 ? activation / 2 : activation; // cast before the gather
    const auto forward = transformer_layer_forward(shape_of(Framework::fsdp, dtype));
    const auto backward = transformer_layer_backward(shape_of(Framework::fsdp, dtype));
    for (const std::string layer : {"attn.qkv", "mlp.fc1"}) {
      CAPTURE(layer);
      CHECK(named(forward, layer + ".all_gather.chunk_cat").bytes == doctest::Approx(2 * gathered).scale(0));
      CHECK(named(backward, layer + ".reduce_scatter.chunk_cat").bytes == doctest::Approx(2 * activation).scale(0));
    }
    for (const std::string layer : {"attn.out", "mlp.fc2"}) {
      CAPTURE(layer);
      CHECK(named(forward, layer + ".reduce_scatter.chunk_cat").bytes == doctest::Approx(2 * activation).scale(0));
      CHECK(named(backward, layer + ".all_gather.chunk_cat").bytes == doctest::Approx(2 * gathered).scale(0));
    }
    // Megatron-LM's collectives gather and scatter along the sequence, its leading dimension;
    // async TP's fused kernels write their chunks in place, and only the reduce-scatter it leaves
    // unfused (the column-parallel input gradients, sums of separate modules' gradients) copies.
    for (const auto& other : {transformer_layer_forward(shape_of(Framework::megatron_lm, dtype)),
                              transformer_layer_backward(shape_of(Framework::megatron_lm, dtype)),
                              transformer_layer_forward(shape_of(Framework::fsdp, dtype, TpCommOverlap::async_tp))})
      for (const auto& step : other)
        if (const auto* op = std::get_if<ComputeOp>(&step)) CHECK_FALSE(op->name.ends_with(".chunk_cat"));
    const auto async_backward = transformer_layer_backward(shape_of(Framework::fsdp, dtype, TpCommOverlap::async_tp));
    for (const auto& step : async_backward)
      if (const auto* op = std::get_if<ComputeOp>(&step); op && op->name.ends_with(".chunk_cat"))
        CHECK((op->name == "attn.qkv.reduce_scatter.chunk_cat" || op->name == "mlp.fc1.reduce_scatter.chunk_cat"));
  }
  // One micro-batch row: the gathered buffer is already the sequence's layout (a view).
  auto plan = twocs::testing::plan_of(tensor, 1, 1, 1, 1);
  plan.parallelism.sequence = true;
  plan.attention = AttentionKernel::fused;
  plan.framework = Framework::fsdp;
  const auto single = transformer_layer_forward(LayerShape::of(twocs::testing::gpt(2, 4096, 32, 4096), plan));
  CHECK(named(single, "attn.qkv.all_gather.chunk_cat").count == 0);
  CHECK(named(single, "attn.out.reduce_scatter.chunk_cat").count == 1);
}

TEST_CASE("separate projections: PyTorch-native q, k, v and gate, up modules each write an input gradient, summed") {
  auto model = twocs::testing::gpt(2, 4096, 32, 4096);
  model.ffn_kind = FfnKind::swiglu;
  auto plan = twocs::testing::plan_of(1, 1, 1, 1, 2);
  plan.attention = AttentionKernel::fused;
  plan.framework = Framework::fsdp;
  const double elements = tokens * hidden; // one [b s, h] input gradient
  for (const auto kernels : {KernelFusion::fused, KernelFusion::eager}) {
    CAPTURE(static_cast<int>(kernels));
    plan.kernels = kernels;
    const auto backward = transformer_layer_backward(LayerShape::of(model, plan));
    // compiled: each further gradient written once and read once (the sum fuses into its
    // consumer); eager: also added pairwise, each add reading two gradients and writing one.
    const double passes = kernels == KernelFusion::fused ? 2 : 4;
    CHECK(named(backward, "attn.qkv.dgrad.sum").bytes == doctest::Approx(2 * passes * elements * 2).scale(0));
    CHECK(named(backward, "mlp.fc1.dgrad.sum").bytes == doctest::Approx(1 * passes * elements * 2).scale(0));
  }
  // One fc1 module under GeLU, and Megatron-LM's fused QKV and fc1 GEMMs: nothing to sum.
  model.ffn_kind = FfnKind::gelu;
  CHECK(named(transformer_layer_backward(LayerShape::of(model, plan)), "mlp.fc1.dgrad.sum").count == 0);
  plan.framework = Framework::megatron_lm;
  plan.kernels = KernelFusion::fused;
  CHECK(named(transformer_layer_backward(LayerShape::of(model, plan)), "attn.qkv.dgrad.sum").count == 0);
}
