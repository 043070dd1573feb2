// Mixture-of-experts FFN: router, grouped expert GEMMs at tokens x top_k / experts, load skew
// and capacity, shared experts, parameters, and Qwen3-235B-A22B's published FLOPs per token.
#include <doctest/doctest.h>

#include <string>
#include <variant>

#include <twocs/model/flops.hpp>
#include <twocs/model/layer_ops.hpp>
#include <twocs/model/parameters.hpp>

#include "support/modern_models.hpp"
#include "support/moe_layer_shape.hpp"
#include "support/step_lookup.hpp"

using namespace twocs::model;

namespace {

using twocs::testing::find_collective;
using twocs::testing::find_step;
using twocs::testing::qwen3_235b;

} // namespace

TEST_CASE("Qwen3-235B-A22B model FLOPs per token at s = 4096 match the published ~148 GFLOP") {
  const auto m = qwen3_235b();
  TrainingPlan plan;
  plan.global_batch = 1;
  plan.micro_batch = 1;
  const double l = 94, h = 4096, q = 64 * 128, kv = 2 * 4 * 128, E = 128, k = 8, fe = 1536, V = 151936, s = 4096;
  // 6 x active matrix weights (attention, router, k experts of 3 h fe) + causal attention 6 s q l.
  const double weights = l * (h * q + h * kv + q * h + h * E + k * 3 * h * fe) + h * V;
  const double expected = 6 * weights + 6 * s * q * l;
  const double per_token = model_flops_per_iteration(m, plan).value() / s;
  CHECK(per_token == doctest::Approx(expected).epsilon(1e-9));
  CHECK(per_token / 1e9 == doctest::Approx(148).epsilon(0.01));
}

TEST_CASE("grouped expert GEMMs run tokens x top_k / experts rows per expert") {
  const auto m = qwen3_235b();
  const auto steps = transformer_layer_forward(twocs::testing::moe_layer_shape(m));
  const auto* fc1 = find_step(steps, "moe.experts.fc1");
  REQUIRE(fc1);
  CHECK(fc1->gemm->m == 4096 * 8 / 128);
  CHECK(fc1->gemm->n == 2 * 1536);
  CHECK(fc1->gemm->batch == 128);
  const auto* router = find_step(steps, "moe.router");
  REQUIRE(router);
  CHECK(router->flops.value() == doctest::Approx(2.0 * 4096 * 4096 * 128));
  CHECK_FALSE(find_step(steps, "mlp.fc1")); // no shared expert in Qwen3
}

TEST_CASE("load skew makes the busiest expert-parallel rank work longer, not the model bigger") {
  auto m = qwen3_235b();
  m.moe->load_imbalance = 1.5;
  const auto balanced_steps = transformer_layer_forward(twocs::testing::moe_layer_shape(qwen3_235b(), 8));
  const auto skewed_steps = transformer_layer_forward(twocs::testing::moe_layer_shape(m, 8));
  const auto* balanced = find_step(balanced_steps, "moe.experts.fc1");
  const auto* skewed = find_step(skewed_steps, "moe.experts.fc1");
  REQUIRE(balanced);
  REQUIRE(skewed);
  CHECK(balanced->gemm->batch == 16); // 128 experts over 8 ranks
  CHECK(balanced->gemm->m == 2048);   // 4096 tokens x 8 / 128 experts x 8 ranks sending
  CHECK(skewed->gemm->m == 3072);     // 2048 x 1.5
  CHECK(skewed->flops.value() == doctest::Approx(1.5 * balanced->flops.value()));
  CHECK(skewed->model_flops().value() == doctest::Approx(balanced->model_flops().value()));
  // A capacity factor drops the tokens beyond it (Fedus et al. 2022, Eq. 3).
  m.moe->capacity_factor = 1.25;
  const auto capped = transformer_layer_forward(twocs::testing::moe_layer_shape(m, 8));
  CHECK(find_step(capped, "moe.experts.fc1")->gemm->m == 2560);
  // With every expert on one rank, skew moves load between its experts only.
  const auto one_rank = transformer_layer_forward(twocs::testing::moe_layer_shape(m, 1));
  CHECK(find_step(one_rank, "moe.experts.fc1")->gemm->m == 256);
}

TEST_CASE("load skew makes the busiest rank receive its experts' extra tokens, up to the capacity") {
  const auto dispatch = [](const StepSequence& steps) { return find_collective(steps, "moe.dispatch.all_to_all"); };
  auto m = qwen3_235b();
  m.moe->load_imbalance = 1.5;
  const auto balanced = transformer_layer_forward(twocs::testing::moe_layer_shape(qwen3_235b(), 8));
  const auto skewed = transformer_layer_forward(twocs::testing::moe_layer_shape(m, 8));
  REQUIRE(dispatch(balanced));
  REQUIRE(dispatch(skewed));
  // 4096 tokens x top-8 x h 4096 x 2 bytes, and 1.5 times that at the busiest rank.
  CHECK(dispatch(balanced)->size.value() == doctest::Approx(4096.0 * 8 * 4096 * 2));
  CHECK(dispatch(skewed)->size.value() == doctest::Approx(1.5 * 4096.0 * 8 * 4096 * 2));
  m.moe->capacity_factor = 1.25; // tokens beyond the capacity are dropped, not sent
  CHECK(dispatch(transformer_layer_forward(twocs::testing::moe_layer_shape(m, 8)))->size.value() ==
        doctest::Approx(1.25 * 4096.0 * 8 * 4096 * 2));
  // DeepEP: the busiest rank's and node's shares of the tokens scale alike, up to every token.
  auto deepep = twocs::testing::moe_layer_shape(qwen3_235b(), 8);
  deepep.expert_dispatcher = ExpertDispatcher::deepep;
  auto routing = *dispatch(transformer_layer_forward(deepep))->routing;
  CHECK(routing.load_imbalance == 1.0);
  const auto even = dispatch_shares(routing, 32, 8); // 4 experts a rank, 4 nodes
  routing.load_imbalance = 1.5;
  const auto hot = dispatch_shares(routing, 32, 8);
  const double p_rank = routed_share(128, 8, 4);
  CHECK(hot.to_each_rank.value() == doctest::Approx(1.5 * even.to_each_rank.value()));
  CHECK(hot.to_each_rank.value() == doctest::Approx(routing.tokens.value() * 4 * 1.5 * p_rank));
  // The node's share, 1 - C(96, 8) / C(128, 8) = 0.91, is capped at every token.
  CHECK(hot.to_each_node.value() == doctest::Approx(routing.tokens.value()));
}

TEST_CASE("expert parallelism dispatches and combines T k h elements per rank by all-to-all") {
  const auto forward = transformer_layer_forward(twocs::testing::moe_layer_shape(qwen3_235b(), 8));
  const auto backward = transformer_layer_backward(twocs::testing::moe_layer_shape(qwen3_235b(), 8));
  const auto count = [](const StepSequence& steps) {
    int n = 0;
    for (const auto& step : steps)
      if (const auto* c = std::get_if<CollectiveOp>(&step); c && c->kind == Collective::all_to_all) {
        CHECK(c->group == CommGroup::expert);
        // 4096 tokens x top-8 x h 4096 x 2 bytes.
        CHECK(c->size.value() == doctest::Approx(4096.0 * 8 * 4096 * 2));
        ++n;
      }
    return n;
  };
  CHECK(count(forward) == 2);
  CHECK(count(backward) == 2);
  const auto alone = transformer_layer_forward(twocs::testing::moe_layer_shape(qwen3_235b(), 1));
  for (const auto& step : alone) CHECK_FALSE(std::holds_alternative<CollectiveOp>(step));
}

TEST_CASE("the all-to-all dispatcher all-gathers per-expert token counts and waits on the host before dispatch") {
  const auto forward = transformer_layer_forward(twocs::testing::moe_layer_shape(qwen3_235b(), 8));
  std::size_t counts = forward.size(), sync = forward.size(), dispatch = forward.size();
  for (std::size_t i = 0; i < forward.size(); ++i) {
    if (const auto* c = std::get_if<CollectiveOp>(&forward[i])) {
      if (c->name == "moe.dispatch.counts.all_gather") {
        counts = i;
        CHECK(c->kind == Collective::all_gather);
        CHECK(c->group == CommGroup::expert);
        // 128 experts x 8 bytes (int64) from each of the 8 expert-parallel ranks.
        CHECK(c->size.value() == doctest::Approx(128.0 * 8 * 8));
      }
      if (c->name == "moe.dispatch.all_to_all") dispatch = i;
    }
    if (const auto* op = std::get_if<ComputeOp>(&forward[i]); op && op->name == "moe.dispatch.host_sync") {
      sync = i;
      CHECK(op->flops.value() == 0); // no work: the device waits for the host's next launch
      CHECK(op->bytes.value() == 0);
    }
  }
  REQUIRE(dispatch < forward.size());
  CHECK(counts + 1 == sync);
  CHECK(sync + 1 == dispatch);
  // Backward reuses the forward's split sizes: no second exchange.
  for (const auto& step : transformer_layer_backward(twocs::testing::moe_layer_shape(qwen3_235b(), 8)))
    if (const auto* c = std::get_if<CollectiveOp>(&step)) CHECK(c->kind == Collective::all_to_all);
  // One rank holds every expert (ep = 1): nothing to exchange.
  CHECK_FALSE(
      find_step(transformer_layer_forward(twocs::testing::moe_layer_shape(qwen3_235b(), 1)), "moe.dispatch.host_sync"));
}

TEST_CASE("shared experts run as a dense MLP, experts per rank divide the parameters") {
  auto m = qwen3_235b();
  m.moe->shared_experts = 1;
  const auto steps = transformer_layer_forward(twocs::testing::moe_layer_shape(m));
  const auto* shared = find_step(steps, "mlp.fc1");
  REQUIRE(shared);
  CHECK(shared->gemm->n == 2 * 1536);
  const auto whole = count_parameters(qwen3_235b(), 1, 1);
  const auto split = count_parameters(qwen3_235b(), 1, 8);
  CHECK(whole.per_layer - split.per_layer == (128 - 16) * 3LL * 4096 * 1536);
  // Qwen3-235B-A22B: 235B parameters in all (Qwen team 2025).
  CHECK(static_cast<double>(whole.total(94)) == doctest::Approx(235e9).epsilon(0.01));
}

TEST_CASE("the host issues one GEMM per local expert, the router's kernels and, in FP8, the experts' quantizations") {
  const auto m = qwen3_235b();
  const double share = 0.55; // each further kernel over one nn.Linear forward (platforms/measured/host-launch.csv)
  LayerShape shape = twocs::testing::moe_layer_shape(m, 8); // 128 / 8 = 16 local experts
  const auto bf16 = transformer_layer_forward(shape);
  const auto* fc1 = find_step(bf16, "moe.experts.fc1");
  REQUIRE(fc1);
  // 16 GEMMs; with the all-to-all dispatcher the received chunks' sort (2 kernels) and unsort (3)
  // are ops of their own.
  CHECK(fc1->host_launches == doctest::Approx(1 + share * (16 - 1)));
  CHECK(find_step(bf16, "moe.experts.fc2")->host_launches == doctest::Approx(1 + share * (16 - 1)));
  CHECK(find_step(bf16, "moe.dispatch.sort_chunks")->host_launches == doctest::Approx(1 + share * (2 - 1)));
  CHECK(find_step(bf16, "moe.combine.unsort_chunks")->host_launches == doctest::Approx(1 + share * (3 - 1)));
  const auto* topk = find_step(bf16, "moe.router.topk");
  REQUIRE(topk);
  // Fused top-k, aux-loss scores, token counts, the fused aux loss (2 and a memset), its logging (2).
  CHECK(topk->host_launches == doctest::Approx(1 + share * 7));
  // The permutation (4) and the all-to-all dispatcher's preprocessing (6 and 4 copies to the host).
  CHECK(find_step(bf16, "moe.permute")->host_launches == doctest::Approx(1 + share * 13));
  shape.expert_dispatcher = ExpertDispatcher::deepep; // its preprocessing: 4; its chunks arrive sorted
  const auto deepep = transformer_layer_forward(shape);
  CHECK(find_step(deepep, "moe.permute")->host_launches == doctest::Approx(1 + share * 7));
  CHECK(find_step(deepep, "moe.experts.fc1")->host_launches == doctest::Approx(1 + share * 15));
  const auto backward = transformer_layer_backward(shape);
  CHECK(find_step(backward, "moe.experts.fc1.wgrad")->host_launches == doctest::Approx(1 + share * 15));
  CHECK(find_step(backward, "moe.router.topk.bwd")->host_launches == doctest::Approx(1 + share * 5));
  CHECK(find_step(backward, "moe.router.dgrad")->host_launches == doctest::Approx(1 + share * 2));
  CHECK_FALSE(find_step(bf16, "moe.experts.fc1.fp8_quantize"));

  shape.fp8_linear = true;
  shape.fp8_recipe = TrainingPlan::Fp8Recipe::blockwise;
  const auto fp8 = transformer_layer_forward(shape);
  const auto* quantize = find_step(fp8, "moe.experts.fc1.fp8_quantize");
  REQUIRE(quantize);
  // 16 experts x 4096 x 8 x 8 / 128 rows x h, read in BF16 and written twice in FP8 (row- and columnwise).
  const double rows = 4096.0 * 8 * 8 / 128;
  CHECK(quantize->bytes.value() == doctest::Approx(16 * rows * 4096 * (2 + 1 + 1)));
  CHECK(quantize->host_launches == doctest::Approx(1 + share * 15)); // one kernel per expert
  CHECK(find_step(fp8, "moe.experts.fc2.fp8_quantize")->bytes.value() == doctest::Approx(16 * rows * 1536 * 4.0));
  const auto fp8_backward = transformer_layer_backward(shape);
  CHECK(find_step(fp8_backward, "moe.experts.fc2.grad.fp8_quantize")->bytes.value() ==
        doctest::Approx(16 * rows * 4096 * 4.0));
  CHECK(find_step(fp8_backward, "moe.experts.fc1.grad.fp8_quantize")->bytes.value() ==
        doctest::Approx(16 * rows * 2 * 1536 * 4.0));
  shape.fp8_recipe = TrainingPlan::Fp8Recipe::delayed; // one fused multi-tensor cast-transpose
  CHECK(find_step(transformer_layer_forward(shape), "moe.experts.fc1.fp8_quantize")->host_launches == 1);
}

TEST_CASE("in FP8 the all-to-all dispatcher's experts copy their rows into and out of padded buffers") {
  const auto m = qwen3_235b();
  LayerShape shape = twocs::testing::moe_layer_shape(m, 8); // 16 local experts, the all-to-all dispatcher
  CHECK_FALSE(find_step(transformer_layer_forward(shape), "moe.experts.fp8_pad")); // BF16: none
  shape.fp8_linear = true;
  shape.fp8_recipe = TrainingPlan::Fp8Recipe::tensorwise;
  const auto forward = transformer_layer_forward(shape);
  const auto backward = transformer_layer_backward(shape);
  // The busiest expert's rows on each of the 16 local experts: 4096 x 8 x 8 / 128.
  const double rows = 16 * (4096.0 * 8 * 8 / 128);
  const double bf16_copy = 2.0 * 2; // read and write one BF16 value
  for (const auto* name : {"moe.experts.fp8_pad", "moe.experts.fp8_unpad"})
    CHECK(find_step(forward, name)->bytes.value() == doctest::Approx(rows * 4096 * bf16_copy));
  CHECK(find_step(forward, "moe.experts.probs.fp8_pad")->bytes.value() == doctest::Approx(rows * 8.0)); // fp32
  for (const auto* name : {"moe.experts.fp8_unpad.bwd", "moe.experts.fp8_pad.bwd"})
    CHECK(find_step(backward, name)->bytes.value() == doctest::Approx(rows * 4096 * bf16_copy));
  CHECK(find_step(backward, "moe.experts.probs.fp8_pad.bwd")->bytes.value() == doctest::Approx(rows * 8.0));
  // The pad precedes fc1's quantization, the unpad follows fc2.
  const auto at = [&](const char* name) {
    for (std::size_t i = 0; i < forward.size(); ++i)
      if (const auto* op = std::get_if<ComputeOp>(&forward[i]); op != nullptr && op->name == name) return i;
    return forward.size();
  };
  CHECK(at("moe.experts.fp8_pad") < at("moe.experts.fc1.fp8_quantize"));
  CHECK(at("moe.experts.fc2") < at("moe.experts.fp8_unpad"));
  // DeepEP pads inside its fused permutation: no copies of TE's.
  shape.expert_dispatcher = ExpertDispatcher::deepep;
  CHECK_FALSE(find_step(transformer_layer_forward(shape), "moe.experts.fp8_pad"));
}

TEST_CASE("in FP8 DeepEP's fused permute-and-pad synchronises the host 4 times, and HybridEP's pads without") {
  const auto m = qwen3_235b();
  LayerShape shape = twocs::testing::moe_layer_shape(m, 8);
  shape.expert_dispatcher = ExpertDispatcher::deepep;
  const auto count = [](const StepSequence& steps, const char* name) {
    return std::count_if(steps.begin(), steps.end(), [name](const Step& s) {
      const auto* op = std::get_if<ComputeOp>(&s);
      return op != nullptr && op->name == name;
    });
  };
  CHECK(count(transformer_layer_forward(shape), "moe.permute.fp8_sync") == 0); // BF16
  shape.fp8_linear = true;
  shape.fp8_recipe = TrainingPlan::Fp8Recipe::blockwise;
  const auto forward = transformer_layer_forward(shape);
  CHECK(count(forward, "moe.permute.fp8_sync") == 4);
  double launches = 0;
  for (const Step& s : forward)
    if (const auto* op = std::get_if<ComputeOp>(&s); op != nullptr && op->name == "moe.permute.fp8_sync") {
      CHECK(op->host_waits);
      launches += op->host_launches;
    }
  CHECK(launches == doctest::Approx(4 + 0.55 * (13 - 4))); // 13 kernels issued among the 4 waits
  // The padded buffers' memsets: BF16 rows and fp32 probabilities forward, the gradient backward.
  const double rows = 16 * (4096.0 * 8 * 8 / 128);
  CHECK(find_step(forward, "moe.permute.fp8_pad")->bytes.value() == doctest::Approx(rows * (4096 * 2 + 4)));
  CHECK(find_step(transformer_layer_backward(shape), "moe.permute.fp8_pad.bwd")->bytes.value() ==
        doctest::Approx(rows * 4096 * 2));
  CHECK_FALSE(find_step(forward, "moe.experts.fp8_pad")); // padded in the permutation: no copies
  // Before Megatron-Core fused the padding (fused_permute_pad off, cf39a4d): no synchronisations or
  // memsets of the fused path; the experts copy their rows into padded buffers and back, as with the
  // all-to-all dispatcher (rows x h, read and written in BF16; the fp32 probabilities likewise).
  shape.fused_permute_pad = false;
  const auto unfused = transformer_layer_forward(shape);
  CHECK(count(unfused, "moe.permute.fp8_sync") == 0);
  CHECK_FALSE(find_step(unfused, "moe.permute.fp8_pad"));
  CHECK(find_step(unfused, "moe.experts.fp8_pad")->bytes.value() == doctest::Approx(rows * 4096 * 2 * 2));
  CHECK(find_step(unfused, "moe.experts.probs.fp8_pad")->bytes.value() == doctest::Approx(rows * 2 * 4));
  CHECK(find_step(unfused, "moe.experts.fp8_unpad")->bytes.value() == doctest::Approx(rows * 4096 * 2 * 2));
  CHECK(find_step(transformer_layer_backward(shape), "moe.experts.fp8_pad.bwd"));
  shape.fused_permute_pad = true;
  shape.expert_dispatcher = ExpertDispatcher::hybridep; // the same exchange, no synchronisation of its own
  const auto hybrid = transformer_layer_forward(shape);
  CHECK(count(hybrid, "moe.permute.fp8_sync") == 0);
  CHECK_FALSE(find_step(hybrid, "moe.permute.fp8_pad"));
  CHECK(count(hybrid, "moe.dispatch.host_sync") == 1);
}

TEST_CASE("the all-to-all dispatcher sorts the received chunks by local expert and back, a pass over them each") {
  const auto m = qwen3_235b();
  LayerShape shape = twocs::testing::moe_layer_shape(m, 8); // 16 local experts of 4096 x 8 x 8 / 128 = 2,048 rows each
  const double rows = 16 * 4096.0 * 8 * 8 / 128, h = 4096;
  const auto forward = transformer_layer_forward(shape);
  const auto backward = transformer_layer_backward(shape);
  const auto* sort = find_step(forward, "moe.dispatch.sort_chunks");
  const auto* unsort = find_step(forward, "moe.combine.unsort_chunks");
  REQUIRE(sort);
  REQUIRE(unsort);
  // Read and write every received row (2 bytes a value), the sort with its fp32 probability.
  CHECK(sort->bytes.value() == doctest::Approx(rows * (h * 2 * 2 + 2 * 4)));
  CHECK(unsort->bytes.value() == doctest::Approx(rows * h * 2 * 2));
  for (const char* name : {"moe.combine.unsort_chunks.bwd", "moe.dispatch.sort_chunks.bwd"}) {
    INFO(name);
    const auto* op = find_step(backward, name);
    REQUIRE(op);
    CHECK(op->bytes.value() == doctest::Approx(rows * h * 2 * 2));
  }
  // Around the experts: after the dispatch and before fc1, after fc2 and before the combine.
  using twocs::testing::step_index;
  CHECK(step_index(forward, "moe.dispatch.all_to_all") < step_index(forward, "moe.dispatch.sort_chunks"));
  CHECK(step_index(forward, "moe.dispatch.sort_chunks") < step_index(forward, "moe.experts.fc1"));
  CHECK(step_index(forward, "moe.experts.fc2") < step_index(forward, "moe.combine.unsort_chunks"));
  CHECK(step_index(forward, "moe.combine.unsort_chunks") < step_index(forward, "moe.combine.all_to_all"));
  CHECK(step_index(backward, "moe.combine.bwd.all_to_all") < step_index(backward, "moe.combine.unsort_chunks.bwd"));
  CHECK(step_index(backward, "moe.combine.unsort_chunks.bwd") < step_index(backward, "moe.experts.fc2.dgrad"));
  CHECK(step_index(backward, "moe.experts.fc1.dgrad") < step_index(backward, "moe.dispatch.sort_chunks.bwd"));
  CHECK(step_index(backward, "moe.dispatch.sort_chunks.bwd") < step_index(backward, "moe.dispatch.bwd.all_to_all"));
  // DeepEP receives them sorted; one local expert needs no sort. Without expert parallelism the
  // dispatcher still sorts (token_dispatcher.py: only num_local_experts > 1 decides).
  shape.expert_dispatcher = ExpertDispatcher::deepep;
  CHECK_FALSE(find_step(transformer_layer_forward(shape), "moe.dispatch.sort_chunks"));
  auto one = m;
  one.moe->experts = 8;
  CHECK_FALSE(
      find_step(transformer_layer_forward(twocs::testing::moe_layer_shape(one, 8)), "moe.dispatch.sort_chunks"));
  CHECK(find_step(transformer_layer_forward(twocs::testing::moe_layer_shape(m, 1)), "moe.dispatch.sort_chunks"));
}

TEST_CASE("in FP8 the shared experts quantize fc1's input themselves: no norm is fused into their fc1") {
  auto m = qwen3_235b();
  m.moe->shared_experts = 1;
  LayerShape shape = twocs::testing::moe_layer_shape(m, 8);
  shape.fp8_linear = true;
  shape.fp8_recipe = TrainingPlan::Fp8Recipe::blockwise;
  const auto forward = transformer_layer_forward(shape);
  const auto* cast = find_step(forward, "mlp.fc1.fp8_cast");
  REQUIRE(cast);
  // Every token once (no sequence parallelism here): read 2 bytes, write 1 and its transpose 1,
  // over 4,096 x h.
  CHECK(cast->bytes.value() == doctest::Approx(4096.0 * 4096 * (2 + 1 + 1)).scale(0));
  // A dense layer's fc1 takes its input from the norm fused in front of it (LayerNormLinear).
  shape.moe_ffn = false;
  CHECK_FALSE(find_step(transformer_layer_forward(shape), "mlp.fc1.fp8_cast"));
}
