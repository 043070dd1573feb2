// Megatron-Core's selective recomputation by module (training.recompute_modules): what each
// module re-runs before the layer's backward and which saved tensors it frees, against the
// shapes counted by hand here.
#include <doctest/doctest.h>

#include <string>
#include <variant>
#include <vector>

#include <twocs/model/layer_activations.hpp>
#include <twocs/model/layer_ops.hpp>

#include "support/modern_models.hpp"
#include "support/step_lookup.hpp"

using namespace twocs::model;

namespace {

using twocs::testing::find_step;

std::vector<std::string> names(const StepSequence& steps) {
  std::vector<std::string> out;
  for (const auto& step : steps) {
    if (const auto* op = std::get_if<ComputeOp>(&step)) out.push_back(op->name);
    if (const auto* c = std::get_if<CollectiveOp>(&step)) out.push_back(c->name);
  }
  return out;
}

bool all_recompute(const StepSequence& steps) {
  for (const auto& step : steps) {
    if (const auto* op = std::get_if<ComputeOp>(&step); op && op->pass != Pass::recompute) return false;
    if (const auto* c = std::get_if<CollectiveOp>(&step); c && c->pass != Pass::recompute) return false;
  }
  return true;
}

LayerShape shape_of(const TransformerConfig& m, std::int64_t tensor, bool moe_ffn) {
  LayerShape shape;
  shape.model = m;
  shape.tensor = tensor;
  shape.sequence_parallel = tensor > 1;
  shape.attention = AttentionKernel::fused;
  shape.moe_ffn = moe_ffn;
  return shape;
}

RecomputeModules modules(std::initializer_list<std::string_view> list) {
  RecomputeModules m = no_recompute_modules();
  for (const auto name : list)
    for (std::size_t i = 0; i < recompute_module_names.size(); ++i)
      if (recompute_module_names[i] == name) m = with_recompute_module(m, i);
  return m;
}

} // namespace

TEST_CASE("the default module list is Megatron-Core's [core_attn], and names come back in its order") {
  const RecomputeModules defaults;
  CHECK(names_of(defaults) == std::vector<std::string_view>{"core_attn"});
  CHECK(names_of(no_recompute_modules()).empty());
  CHECK(names_of(modules({"mlp", "layernorm", "moe_act"})) ==
        std::vector<std::string_view>{"moe_act", "layernorm", "mlp"});
  const auto shape = shape_of(twocs::testing::llama3_70b(), 1, false);
  CHECK(names(transformer_layer_recompute(shape, Recompute::selective)) ==
        names(transformer_layer_recompute(shape, Recompute::selective, defaults)));
  // Only selective reads the list.
  CHECK(names(transformer_layer_recompute(shape, Recompute::full, modules({"mlp"}))) ==
        names(transformer_layer_recompute(shape, Recompute::full)));
  CHECK(transformer_layer_recompute(shape, Recompute::none, modules({"mlp"})).empty());
}

TEST_CASE("MoE layer: layernorm re-runs the pre-MLP norm and moe_act the experts' activation, nothing else") {
  const auto m = twocs::testing::qwen3_235b();
  const auto shape = shape_of(m, 2, true);
  const auto steps = transformer_layer_recompute(shape, Recompute::selective, modules({"layernorm", "moe_act"}));
  // Transformer Engine fuses the input norm into the QKV linear; the MoE pre-MLP norm is its own.
  CHECK(names(steps) == std::vector<std::string>{"mlp.norm", "moe.experts.swiglu"});
  CHECK(all_recompute(steps));
  // The same kernels as the forward's.
  const auto forward = transformer_layer_forward(shape);
  const auto* act = find_step(steps, "moe.experts.swiglu", Pass::recompute);
  const auto* act_forward = find_step(forward, "moe.experts.swiglu", Pass::forward);
  REQUIRE(act);
  REQUIRE(act_forward);
  CHECK(act->bytes.value() == doctest::Approx(act_forward->bytes.value()));
  // SwiGLU over every routed copy: s b k / t rows of f_e (each rank holds all 128 experts here).
  const double rows = 4096.0 * 8 / 2;
  CHECK(act->bytes.value() == doctest::Approx(rows * 1536 * 2 * (2 + 1))); // read gate and up, write one
}

TEST_CASE("dense layer: layernorm re-runs nothing (both norms fused), mlp the whole MLP with its collectives") {
  const auto m = twocs::testing::llama3_70b();
  const auto shape = shape_of(m, 4, false);
  CHECK(transformer_layer_recompute(shape, Recompute::selective, modules({"layernorm", "moe_act"})).empty());
  const auto steps = transformer_layer_recompute(shape, Recompute::selective, modules({"mlp"}));
  CHECK(names(steps) == std::vector<std::string>{"mlp.norm", "mlp.fc1.all_gather", "mlp.fc1", "mlp.swiglu", "mlp.fc2",
                                                 "mlp.fc2.reduce_scatter"});
  CHECK(all_recompute(steps));
  // fc1 (gate and up) and fc2 on the gathered s tokens and f / t columns: 2 s h (3 f / t) FLOPs.
  const double s = 8192, h = 8192, f = 28672, t = 4;
  double gemm = 0;
  for (const auto& step : steps)
    if (const auto* op = std::get_if<ComputeOp>(&step); op && op->gemm) gemm += op->flops.value();
  CHECK(gemm == doctest::Approx(2 * s * h * 3 * f / t));
  // A MoE layer's MLP is the experts: mlp skips it.
  const auto qwen = shape_of(twocs::testing::qwen3_235b(), 2, true);
  CHECK(transformer_layer_recompute(qwen, Recompute::selective, modules({"mlp"})).empty());
}

TEST_CASE("MLA: mla_up_proj re-runs the query and key/value up-projections and RoPE, layernorm the input norm") {
  const auto m = twocs::testing::deepseek_v3();
  const auto shape = shape_of(m, 1, true);
  const auto steps = transformer_layer_recompute(shape, Recompute::selective, modules({"layernorm", "mla_up_proj"}));
  CHECK(names(steps) == std::vector<std::string>{"attn.norm", "attn.q_up", "attn.kv_up", "attn.rope", "mlp.norm"});
  // q_up: q_lora 1536 -> 128 heads x (128 + 64); kv_up: kv_lora 512 -> 128 heads x (128 + 128).
  const double s = 4096;
  const auto* q_up = find_step(steps, "attn.q_up", Pass::recompute);
  const auto* kv_up = find_step(steps, "attn.kv_up", Pass::recompute);
  REQUIRE(q_up);
  REQUIRE(kv_up);
  CHECK(q_up->flops.value() == doctest::Approx(2 * s * 1536 * 128 * 192));
  CHECK(kv_up->flops.value() == doctest::Approx(2 * s * 512 * 128 * 256));
}

TEST_CASE("moe re-runs the whole MoE layer with its token exchange, shared_experts only the shared MLP") {
  const auto m = twocs::testing::deepseek_v3();
  const auto shape = shape_of(m, 2, true);
  const auto forward = transformer_layer_forward(shape);
  const auto whole = transformer_layer_recompute(shape, Recompute::selective, modules({"moe", "moe_act"}));
  CHECK(all_recompute(whole));
  // Every forward step from the shared experts (before the router) to the unpermutation, once
  // (moe covers moe_act): what follows the pre-MLP norm, up to the residual.
  std::vector<std::string> moe_forward;
  bool in_moe = false;
  for (const auto& name : names(forward)) {
    if (in_moe && name != "mlp.residual") moe_forward.push_back(name);
    in_moe = in_moe || name == "mlp.norm";
  }
  CHECK(moe_forward.front() != "moe.router"); // the shared experts come first
  CHECK(names(whole) == moe_forward);
  bool dispatch = false;
  for (const auto& step : whole)
    if (const auto* c = std::get_if<CollectiveOp>(&step); c && c->group == CommGroup::expert) dispatch = true;
  CHECK_FALSE(dispatch); // ep = 1 here: nothing to exchange
  auto ep = shape;
  ep.expert = 8;
  for (const auto& step : transformer_layer_recompute(ep, Recompute::selective, modules({"moe"})))
    if (const auto* c = std::get_if<CollectiveOp>(&step); c && c->group == CommGroup::expert) dispatch = true;
  CHECK(dispatch);
  // The shared expert (one of width 2048): fc1 gate and up, fc2, on the gathered s tokens, 2 s h 3 f / t.
  const auto shared = transformer_layer_recompute(shape, Recompute::selective, modules({"shared_experts"}));
  double gemm = 0;
  for (const auto& step : shared)
    if (const auto* op = std::get_if<ComputeOp>(&step); op && op->gemm) gemm += op->flops.value();
  CHECK(gemm == doctest::Approx(2.0 * 4096 * 7168 * 3 * 2048 / 2));
  // A dense layer of the same model has neither.
  CHECK(transformer_layer_recompute(shape.for_layer(0), Recompute::selective, modules({"moe", "shared_experts"}))
            .empty());
}

TEST_CASE("discarded modules free their outputs: the norm output, fc2's input per copy, Q K V, the MLP") {
  const double e = 2;
  SUBCASE("Qwen3 MoE: layernorm and moe_act") {
    const auto m = twocs::testing::qwen3_235b();
    const auto kept = layer_activation_units(m, true);
    const auto freed = layer_activation_units(m, true, modules({"layernorm", "moe_act"}));
    const double f = 1536.0 / 4096, copies = 8;
    CHECK(kept.replicated - freed.replicated == doctest::Approx(e));
    CHECK(kept.split - freed.split == doctest::Approx(copies * e * f));
    // FP8 saved fc2's input at one byte; it is not saved at all now (set_save_original_input).
    CHECK(kept.fp8_split - freed.fp8_split == doctest::Approx(copies * e * f / 2));
    CHECK(kept.fp8_replicated == doctest::Approx(freed.fp8_replicated));
  }
  SUBCASE("DeepSeek-V3 MoE: moe frees every routed copy and the shared expert, shared_experts the latter") {
    const auto m = twocs::testing::deepseek_v3();
    const double h = 7168, f = 2048 / h, copies = 8;
    const double routed = copies * e * (1 + 2 * f + f), shared = e * (2 * f + f);
    const auto kept = layer_activation_units(m, true);
    const auto freed = layer_activation_units(m, true, modules({"moe", "moe_act"}));
    CHECK(kept.split - freed.split == doctest::Approx(routed + shared));
    CHECK(kept.replicated == doctest::Approx(freed.replicated)); // the checkpoint's input
    CHECK(kept.fp8_split - freed.fp8_split == doctest::Approx(copies * e * (1 + f) / 2));
    CHECK(kept.split - layer_activation_units(m, true, modules({"shared_experts"})).split == doctest::Approx(shared));
  }
  SUBCASE("Llama 3 70B dense: layernorm frees nothing, mlp all but its input") {
    const auto m = twocs::testing::llama3_70b();
    const auto kept = layer_activation_units(m, false);
    CHECK(layer_activation_units(m, false, modules({"layernorm"})).replicated == doctest::Approx(kept.replicated));
    const auto freed = layer_activation_units(m, false, modules({"mlp"}));
    const double f = 28672.0 / 8192;
    CHECK(kept.replicated - freed.replicated == doctest::Approx(e));     // fc1's input
    CHECK(kept.split - freed.split == doctest::Approx(e * (2 * f + f))); // gate and up, fc2's input
    CHECK(kept.fp8_replicated - freed.fp8_replicated == doctest::Approx(e / 2));
    CHECK(kept.fp8_split - freed.fp8_split == doctest::Approx(e * f / 2));
  }
  SUBCASE("DeepSeek-V3 MLA: mla_up_proj frees Q, K, V; layernorm the input norm's output") {
    const auto m = twocs::testing::deepseek_v3();
    const auto kept = layer_activation_units(m, true);
    const auto freed = layer_activation_units(m, true, modules({"mla_up_proj", "layernorm"}));
    const double h = 7168, qk = e * 128 * (128 + 64) / h, v = e * 128 * 128 / h;
    CHECK(kept.split - freed.split == doctest::Approx(qk + qk + v));
    CHECK(kept.replicated - freed.replicated == doctest::Approx(2 * e)); // input and pre-MLP norms
    CHECK(kept.fp8_replicated - freed.fp8_replicated == doctest::Approx(e / 2));
  }
}
