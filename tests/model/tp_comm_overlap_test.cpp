// training.overlap.tp_comm in a layer's step sequence: Transformer Engine's userbuffers and
// PyTorch's async TP split the sequence-parallel GEMMs into chunks under their exchanges, with
// the chunk counts, sizes and overlaps the frameworks use, and the same total work as without.
#include <doctest/doctest.h>

#include <string>
#include <variant>
#include <vector>

#include <twocs/model/layer_ops.hpp>

#include "support/step_lookup.hpp"

#include "../support/scenarios.hpp"

using namespace twocs::model;

namespace {

using twocs::testing::named;
using twocs::testing::Named;

constexpr std::int64_t tensor = 4;
constexpr double tokens = 2.0 * 4096; // micro_batch 2, seq_len 4096
constexpr double hidden = 4096;

LayerShape shape_with(TpCommOverlap overlap, Dtype dtype = Dtype::bf16) {
  auto plan = twocs::testing::plan_of(tensor, 1, 1, 1, 2);
  plan.parallelism.sequence = true;
  plan.attention = AttentionKernel::fused;
  plan.dtype = dtype;
  plan.overlap.tp_comm = overlap;
  // Each overlap with the framework that runs it (validate_tp_comm.cpp).
  plan.framework = overlap == TpCommOverlap::async_tp ? Framework::fsdp : Framework::megatron_lm;
  return LayerShape::of(twocs::testing::gpt(2, 4096, 32, 4096), plan);
}

double gemm_flops(const StepSequence& steps) {
  double f = 0;
  for (const auto& step : steps)
    if (const auto* op = std::get_if<ComputeOp>(&step); op && op->gemm) f += op->flops.value();
  return f;
}

} // namespace

TEST_CASE("tp_comm: none keeps one all-gather before each column-parallel GEMM and one reduce-scatter after each "
          "row-parallel one") {
  const auto fwd = transformer_layer_forward(shape_with(TpCommOverlap::none));
  CHECK(named(fwd, "attn.qkv").count == 1);
  CHECK(named(fwd, "attn.qkv.all_gather").count == 1);
  CHECK(named(fwd, "attn.out.reduce_scatter").overlapped == std::vector<int>{0});
  CHECK(named(fwd, "attn.qkv.ring_exchange").count == 0);
}

TEST_CASE("tp_comm: transformer_engine runs t GEMM chunks under t - 1 ring-exchange steps of one shard each") {
  const auto fwd = transformer_layer_forward(shape_with(TpCommOverlap::transformer_engine));
  const double shard = tokens * hidden * 2 / tensor; // b s h / t BF16 values
  for (const std::string layer : {"attn.qkv", "mlp.fc1"}) {
    CAPTURE(layer);
    const Named gemm = named(fwd, layer);
    const Named exchange = named(fwd, layer + ".ring_exchange");
    CHECK(gemm.count == tensor);
    CHECK(exchange.count == tensor - 1);
    CHECK(exchange.bytes == doctest::Approx((tensor - 1) * shard));
    CHECK(exchange.overlapped == std::vector<int>(tensor - 1, 1));
    CHECK(named(fwd, layer + ".all_gather").count == 0);
  }
  // Each exchange comes right before the chunk it runs under.
  const auto first = twocs::testing::step_index(fwd, "attn.qkv.ring_exchange");
  CHECK(twocs::testing::step_name(fwd[first + 1]) == "attn.qkv");
}

TEST_CASE("tp_comm: transformer_engine pipelines the row-parallel GEMM in 4 chunks, each one's rows reduce-scattered "
          "under the next") {
  const auto fwd = transformer_layer_forward(shape_with(TpCommOverlap::transformer_engine));
  for (const std::string layer : {"attn.out", "mlp.fc2"}) {
    CAPTURE(layer);
    CHECK(named(fwd, layer).count == 4);
    const Named scatter = named(fwd, layer + ".reduce_scatter");
    CHECK(scatter.overlapped == std::vector<int>{1, 1, 1, 0});
    CHECK(scatter.bytes == doctest::Approx(tokens * hidden * 2)); // the whole buffer over the 4 chunks
  }
}

TEST_CASE("tp_comm: the chunks add up to the unchunked layer's GEMM FLOPs, forward and backward") {
  const auto none = shape_with(TpCommOverlap::none);
  for (const auto overlap : {TpCommOverlap::transformer_engine, TpCommOverlap::async_tp}) {
    CAPTURE(to_string(overlap));
    const auto shape = shape_with(overlap);
    CHECK(gemm_flops(transformer_layer_forward(shape)) == doctest::Approx(gemm_flops(transformer_layer_forward(none))));
    CHECK(gemm_flops(transformer_layer_backward(shape)) ==
          doctest::Approx(gemm_flops(transformer_layer_backward(none))));
  }
  // qkv: 2 b s h (3h / t) FLOPs in all (heads = kv_heads), whatever the chunks.
  const auto fwd = transformer_layer_forward(shape_with(TpCommOverlap::transformer_engine));
  CHECK(named(fwd, "attn.qkv").flops == doctest::Approx(2 * tokens * hidden * (3 * hidden / tensor)));
}

TEST_CASE("tp_comm: transformer_engine's backward gathers the output gradient chunk by chunk under dgrad, and keeps "
          "the column-parallel all-gather and reduce-scatter overlapped (bulk)") {
  auto shape = shape_with(TpCommOverlap::transformer_engine);
  shape.tp_async_backward = false; // bulk overlap does not depend on Megatron's asynchronous backward
  const auto bwd = transformer_layer_backward(shape);
  CHECK(named(bwd, "attn.out.dgrad").count == tensor);
  CHECK(named(bwd, "attn.out.ring_exchange").count == tensor - 1);
  CHECK(named(bwd, "attn.out.all_gather").count == 0);
  CHECK(named(bwd, "attn.qkv.input.all_gather").overlapped == std::vector<int>{1});
  CHECK(named(bwd, "attn.qkv.reduce_scatter").overlapped == std::vector<int>{1});
  CHECK(named(bwd, "attn.qkv.dgrad").count == 1);
}

TEST_CASE("tp_comm: transformer_engine under FP8 gathers FP8 shards (fp8_buf) and reduce-scatters BF16") {
  const auto shape = shape_with(TpCommOverlap::transformer_engine, Dtype::fp8);
  const auto fwd = transformer_layer_forward(shape);
  const auto bwd = transformer_layer_backward(shape);
  const double shard = tokens * hidden * 1 / tensor; // one byte a value
  CHECK(named(fwd, "attn.qkv.ring_exchange").bytes == doctest::Approx((tensor - 1) * shard));
  CHECK(named(bwd, "attn.out.ring_exchange").bytes == doctest::Approx((tensor - 1) * shard));
  CHECK(named(bwd, "mlp.fc1.input.all_gather").bytes == doctest::Approx(tokens * hidden));
  CHECK(named(bwd, "mlp.fc1.reduce_scatter").bytes == doctest::Approx(tokens * hidden * 2));
  // The output gradient is cast on the local shard before it is gathered.
  CHECK(named(bwd, "attn.out.grad.fp8_cast").bytes == doctest::Approx(tokens / tensor * hidden * 3));
}

TEST_CASE("tp_comm: async_tp sends t - 1 shards of the row-parallel GEMM's partial sums and reduces the t partials in "
          "one kernel") {
  const auto shape = shape_with(TpCommOverlap::async_tp);
  const auto fwd = transformer_layer_forward(shape);
  const double shard = tokens * hidden * 2 / tensor;
  CHECK(named(fwd, "attn.out").count == tensor);
  CHECK(named(fwd, "attn.out.ring_exchange").bytes == doctest::Approx((tensor - 1) * shard));
  CHECK(named(fwd, "attn.out.reduce_scatter").count == 0);
  // reduce_partials reads t partial shards and writes one: (t + 1) shards of HBM traffic.
  CHECK(named(fwd, "attn.out.reduce_partials").bytes == doctest::Approx((tensor + 1) * shard));
  // Under FP8 the gathered shards are FP8 (torchao's Float8 TP classes; dtensor_tp_test.cpp).
  const auto fp8 = transformer_layer_forward(shape_with(TpCommOverlap::async_tp, Dtype::fp8));
  CHECK(named(fp8, "attn.qkv.ring_exchange").bytes == doctest::Approx((tensor - 1) * shard / 2));
  // Backward: wgrad reads the input the forward gathered. The column-parallel input gradient is
  // the sum of the separate q, k and v modules' gradients, which Inductor's micro-pipeline does
  // not fuse (micro_pipeline_tp.py, _find_producer_matmul: only a matmul's output): one dgrad and
  // a plain reduce-scatter.
  const auto bwd = transformer_layer_backward(shape);
  CHECK(named(bwd, "attn.qkv.input.all_gather").count == 0);
  CHECK(named(bwd, "attn.qkv.dgrad").count == 1);
  CHECK(named(bwd, "attn.qkv.reduce_partials").count == 0);
  CHECK(named(bwd, "attn.qkv.reduce_scatter").count == 1);
  // A model whose QKV is one module (no gradient sum): dgrad in t chunks with the reduction.
  auto fused_qkv = shape;
  fused_qkv.separate_projections = false;
  const auto chunked = transformer_layer_backward(fused_qkv);
  CHECK(named(chunked, "attn.qkv.dgrad").count == tensor);
  CHECK(named(chunked, "attn.qkv.reduce_partials").count == 1);
  CHECK(named(chunked, "attn.qkv.reduce_scatter").count == 0);
}

TEST_CASE("tp_comm: transformer_engine with tp_comm_reduce_scatter ring_exchange sends t - 1 partial shards and "
          "reduces the t partials, as async TP does") {
  auto shape = shape_with(TpCommOverlap::transformer_engine);
  shape.tp_comm_reduce_scatter = TpReduceScatter::ring_exchange;
  const auto fwd = transformer_layer_forward(shape);
  const double shard = tokens * hidden * 2 / tensor;
  CHECK(named(fwd, "mlp.fc2").count == tensor);
  CHECK(named(fwd, "mlp.fc2.ring_exchange").bytes == doctest::Approx((tensor - 1) * shard));
  CHECK(named(fwd, "mlp.fc2.reduce_scatter").count == 0);
  CHECK(named(fwd, "mlp.fc2.reduce_partials").count == 1);
  // The column-parallel backward keeps its bulk overlaps.
  const auto bwd = transformer_layer_backward(shape);
  CHECK(named(bwd, "mlp.fc1.reduce_scatter").overlapped == std::vector<int>{1});
}

TEST_CASE("tp_comm_sm_margin: the forward GEMM + reduce-scatter pairs leave their SMs to the communication kernel, "
          "and nothing else does") {
  auto shape = shape_with(TpCommOverlap::transformer_engine);
  shape.tp_comm_sm_margin = {.proj_fprop = 24, .fc2_fprop = 16}; // NeMo's ub_cfg_h100_*_tp4 (num_sm, set_sm_margin 1)
  const auto fwd = transformer_layer_forward(shape);
  const auto margins = [&](const StepSequence& steps, const std::string& name) {
    std::vector<std::int64_t> m;
    for (const auto& step : steps)
      if (const auto* op = std::get_if<ComputeOp>(&step); op && op->name == name) m.push_back(op->sm_margin);
    return m;
  };
  CHECK(margins(fwd, "attn.out") == std::vector<std::int64_t>(4, 24));
  CHECK(margins(fwd, "mlp.fc2") == std::vector<std::int64_t>(4, 16));
  CHECK(margins(fwd, "attn.qkv") == std::vector<std::int64_t>(tensor, 0)); // ring exchange: no margin
  CHECK(margins(fwd, "mlp.fc1") == std::vector<std::int64_t>(tensor, 0));
  const auto bwd = transformer_layer_backward(shape);
  for (const auto& step : bwd)
    if (const auto* op = std::get_if<ComputeOp>(&step)) CHECK(op->sm_margin == 0);
  // Transformer Engine's ring-exchange reduce-scatter honours the margin too (its _math_sms).
  shape.tp_comm_reduce_scatter = TpReduceScatter::ring_exchange;
  CHECK(margins(transformer_layer_forward(shape), "mlp.fc2") == std::vector<std::int64_t>(tensor, 16));
}
