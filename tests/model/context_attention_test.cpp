// Context parallelism in the operator sequences: ring K/V traffic per rank and layer, the
// all-gather variant's volumes, the causal work balanced over the cp ranks, and cp = 1 unchanged.
#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <variant>

#include <twocs/error.hpp>
#include <twocs/model/layer_ops.hpp>
#include <twocs/model/validate.hpp>

#include "../support/scenarios.hpp"

using namespace twocs::model;

namespace {

/// Llama-3-like layer: 32 heads of 128, 8 key/value heads, s = 8192, fused attention, causal.
LayerShape llama_shape(std::int64_t cp, ContextComm comm, std::int64_t tensor = 1) {
  TransformerConfig m = twocs::testing::gpt(1, 4096, 32, 8192);
  m.kv_heads = 8;
  m.ffn_kind = FfnKind::swiglu;
  m.ffn_hidden = 14336;
  m.norm = NormKind::rmsnorm;
  m.position = PositionKind::rope;
  LayerShape shape;
  shape.model = m;
  shape.micro_batch = 2;
  shape.tensor = tensor;
  shape.sequence_parallel = tensor > 1;
  shape.attention = AttentionKernel::fused;
  shape.context = cp;
  shape.context_comm = comm;
  return shape;
}

struct Traffic {
  double bytes = 0;
  int collectives = 0;
};

Traffic context_traffic(const StepSequence& steps, Collective kind) {
  Traffic t;
  for (const auto& step : steps)
    if (const auto* c = std::get_if<CollectiveOp>(&step); c && c->group == CommGroup::context && c->kind == kind) {
      t.bytes += c->size.value();
      ++t.collectives;
    }
  return t;
}

/// Attention-core FLOPs of the rank (the flash kernels, recomputation included).
/// The bytes of the compute steps named `name`, adding their number to `count`.
double bytes_named(const StepSequence& steps, const std::string& name, int& count) {
  double bytes = 0;
  for (const auto& step : steps)
    if (const auto* op = std::get_if<ComputeOp>(&step); op && op->name == name) {
      bytes += op->bytes.value();
      ++count;
    }
  return bytes;
}

double attention_flops(const StepSequence& steps) {
  double f = 0;
  for (const auto& step : steps)
    if (const auto* op = std::get_if<ComputeOp>(&step); op && op->name.rfind("attn.flash", 0) == 0)
      f += op->flops.value();
  return f;
}

} // namespace

TEST_CASE("ring attention hands cp - 1 K/V blocks forward and 2 (cp - 1) backward per rank and layer") {
  for (const std::int64_t cp : {2, 4, 8}) {
    CAPTURE(cp);
    const auto shape = llama_shape(cp, ContextComm::ring);
    // One rank's K and V: b (s / cp) kv_heads d_head x 2 tensors x 2 bytes.
    const double block = 2.0 * (8192.0 / static_cast<double>(cp)) * 8 * 128 * 2 * 2;
    const auto forward = context_traffic(transformer_layer_forward(shape), Collective::ring_exchange);
    CHECK(forward.collectives == cp - 1);
    CHECK(forward.bytes == doctest::Approx(static_cast<double>(cp - 1) * block));
    // Backward: K/V alone, K/V with dK/dV (cp - 2 times), dK/dV alone: cp exchanges.
    const auto backward = context_traffic(transformer_layer_backward(shape), Collective::ring_exchange);
    CHECK(backward.collectives == cp);
    CHECK(backward.bytes == doctest::Approx(2.0 * static_cast<double>(cp - 1) * block));
  }
}

TEST_CASE("each ring exchange overlaps the attention step after it, the last step of forward sends nothing") {
  const auto forward = transformer_layer_forward(llama_shape(4, ContextComm::ring));
  int steps = 0;
  for (std::size_t i = 0; i < forward.size(); ++i) {
    const auto* op = std::get_if<ComputeOp>(&forward[i]);
    if (!op || op->name != "attn.flash.cp_step") continue;
    ++steps;
    const auto* before = std::get_if<CollectiveOp>(&forward[i - 1]);
    if (steps < 4) {
      REQUIRE(before);
      CHECK(before->overlapped_ops == 1);
    } else {
      CHECK_FALSE(before); // the fourth block arrived during the third step
    }
  }
  CHECK(steps == 4);
}

TEST_CASE("all-gather context parallelism gathers cp K/V blocks and reduce-scatters the same volume back") {
  const std::int64_t cp = 4;
  const auto shape = llama_shape(cp, ContextComm::all_gather, 2);
  // With t = 2 each rank holds 4 of the 8 key/value heads.
  const double block = 2.0 * (8192.0 / cp) * 4 * 128 * 2 * 2;
  const auto forward = context_traffic(transformer_layer_forward(shape), Collective::all_gather);
  CHECK(forward.collectives == 1);
  CHECK(forward.bytes == doctest::Approx(cp * block));
  // Backward re-gathers K and V and reduce-scatters dK and dV (Transformer Engine).
  const auto backward = transformer_layer_backward(shape);
  CHECK(context_traffic(backward, Collective::all_gather).bytes == doctest::Approx(cp * block));
  CHECK(context_traffic(backward, Collective::reduce_scatter).bytes == doctest::Approx(cp * block));
  CHECK(context_traffic(backward, Collective::ring_exchange).collectives == 0);
  // Bytes that leave a rank: (cp - 1) / cp of the gathered buffer.
  CHECK(forward.bytes * (cp - 1) / cp == doctest::Approx((cp - 1) * block));
}

TEST_CASE("causal attention work is split evenly: each rank does 1/cp of the whole sequence's") {
  const double whole_forward = attention_flops(transformer_layer_forward(llama_shape(1, ContextComm::ring)));
  const double whole_backward = attention_flops(transformer_layer_backward(llama_shape(1, ContextComm::ring)));
  // FlashAttention-2, causal: 4 b s^2 a d / 2 forward (Dao 2023); b = 2, s = 8192, a = 32, d = 128.
  CHECK(whole_forward == doctest::Approx(4.0 * 2 * 8192.0 * 8192 * 32 * 128 / 2));
  for (const auto comm : {ContextComm::ring, ContextComm::all_gather})
    for (const std::int64_t cp : {2, 4, 8}) {
      CAPTURE(cp);
      const auto shape = llama_shape(cp, comm);
      // The load-balancing split gives every rank the same steps, so one rank's share is 1/cp.
      CHECK(attention_flops(transformer_layer_forward(shape)) == doctest::Approx(whole_forward / cp));
      CHECK(attention_flops(transformer_layer_backward(shape)) == doctest::Approx(whole_backward / cp));
    }
}

TEST_CASE("all-to-all context parallelism trades the sequence split for a head split around attention") {
  const std::int64_t cp = 4;
  const auto shape = llama_shape(cp, ContextComm::all_to_all, 2);
  // Per rank: b (s / cp) tokens, 16 query heads and 4 key/value heads of 128 (t = 2), 2 bytes.
  const double tokens = 2.0 * 8192 / cp;
  const double qkv = tokens * (16 + 2 * 4) * 128 * 2, out = tokens * 16 * 128 * 2;
  const auto forward = transformer_layer_forward(shape);
  const auto backward = transformer_layer_backward(shape);
  const auto a2a = [](const StepSequence& steps) { return context_traffic(steps, Collective::all_to_all); };
  CHECK(a2a(forward).collectives == 2);
  CHECK(a2a(forward).bytes == doctest::Approx(qkv + out));
  CHECK(a2a(backward).collectives == 2);
  CHECK(a2a(backward).bytes == doctest::Approx(2 * out + qkv));
  // The whole sequence on 16 / cp heads: one rank's share of the work is 1/cp.
  const double whole = attention_flops(transformer_layer_forward(llama_shape(1, ContextComm::ring, 2)));
  CHECK(attention_flops(forward) == doctest::Approx(whole / cp));
  for (const auto& step : forward)
    if (const auto* op = std::get_if<ComputeOp>(&step); op && op->attention) {
      CHECK(op->attention->queries == 8192);
      CHECK(op->attention->heads == 2 * 16 / cp);
    }
}

TEST_CASE("all-to-all context parallelism keeps a sliding window and needs heads divisible by cp") {
  auto shape = llama_shape(4, ContextComm::all_to_all);
  shape.model.sliding_window = 1024;
  TrainingPlan plan;
  plan.global_batch = 8;
  plan.micro_batch = 2;
  plan.attention = AttentionKernel::fused;
  plan.parallelism.context = 4;
  plan.parallelism.data = 1;
  plan.parallelism.context_comm = ContextComm::all_to_all;
  CHECK_NOTHROW(validate(shape.model, plan));
  auto whole = llama_shape(1, ContextComm::ring);
  whole.model.sliding_window = 1024;
  CHECK(attention_flops(transformer_layer_forward(shape)) ==
        doctest::Approx(attention_flops(transformer_layer_forward(whole)) / 4));
  plan.parallelism.context_comm = ContextComm::ring; // the ring cuts the window: refused
  CHECK_THROWS_AS(validate(shape.model, plan), twocs::InputError);
  plan.parallelism.context_comm = ContextComm::all_to_all;
  plan.parallelism.context = 16; // 8 key/value heads do not split over 16 ranks
  plan.global_batch = 32;
  shape.model.sliding_window = 0;
  try {
    validate(shape.model, plan);
    FAIL("expected an InputError");
  } catch (const twocs::InputError& e) {
    CHECK(e.key_path() == "training.parallelism.context_comm");
  }
}

TEST_CASE("latent attention (MLA) under context parallelism hands on per-head K of nope + rope and V of v_head_dim") {
  // DeepSeek-V3's attention: 128 heads, K of 128 + 64, V of 128 per head, up-projected before the
  // core attention, which Transformer Engine's context parallelism then splits (enable_mla).
  // Every head has its own K and V from the latent: a kv_heads of 8 (a GQA leftover) changes nothing.
  for (const auto& [comm, kv_heads] :
       {std::pair{ContextComm::ring, 128}, std::pair{ContextComm::all_gather, 128}, std::pair{ContextComm::ring, 8}}) {
    INFO("kv_heads " << kv_heads);
    auto mla = llama_shape(1, comm);
    mla.model.hidden = 7168;
    mla.model.heads = 128;
    mla.model.kv_heads = kv_heads;
    mla.model.mla = MlaConfig{1536, 512, 128, 64, 128};
    const double whole_forward = attention_flops(transformer_layer_forward(mla));
    const double whole_backward = attention_flops(transformer_layer_backward(mla));
    const std::int64_t cp = 4;
    mla.context = cp;
    const auto forward = transformer_layer_forward(mla);
    // One rank's K and V: b (s / cp) heads (192 + 128) elements of 2 bytes.
    const double block = 2.0 * (8192.0 / cp) * 128 * (192 + 128) * 2;
    const double sent = comm == ContextComm::ring ? context_traffic(forward, Collective::ring_exchange).bytes
                                                  : context_traffic(forward, Collective::all_gather).bytes;
    CHECK(sent == doctest::Approx((comm == ContextComm::ring ? cp - 1 : cp) * block));
    // The attention work still splits evenly, at MLA's head dims.
    CHECK(attention_flops(forward) == doctest::Approx(whole_forward / cp));
    CHECK(attention_flops(transformer_layer_backward(mla)) == doctest::Approx(whole_backward / cp));
    for (const auto& step : forward)
      if (const auto* op = std::get_if<ComputeOp>(&step); op && op->attention) {
        CHECK(op->attention->head_dim == 192);
        CHECK(op->attention->v_dim() == 128);
      }
  }
}

TEST_CASE("balanced chunks: rank r's causal work with chunks r and 2cp-1-r is the same for every r") {
  // Independent check of the split the operator sequence assumes: count the unmasked
  // (query, key) pairs of each rank's two chunks of length c.
  for (const std::int64_t cp : {2, 3, 4, 8}) {
    const std::int64_t c = 16;
    std::int64_t first = -1;
    for (std::int64_t r = 0; r < cp; ++r) {
      std::int64_t pairs = 0;
      for (const std::int64_t chunk : {r, 2 * cp - 1 - r})
        for (std::int64_t q = chunk * c; q < (chunk + 1) * c; ++q) pairs += q + 1; // keys 0..q
      if (first < 0) first = pairs;
      CHECK(pairs == first);
    }
    // Each rank: 1/cp of the s (s + 1) / 2 pairs.
    const std::int64_t s = 2 * cp * c;
    CHECK(first * cp == s * (s + 1) / 2);
  }
}

TEST_CASE("token-wise work and tensor-parallel buffers shrink to s / cp tokens") {
  const auto one = transformer_layer_forward(llama_shape(1, ContextComm::ring, 2));
  const auto four = transformer_layer_forward(llama_shape(4, ContextComm::ring, 2));
  const auto gemm_rows = [](const StepSequence& steps, const std::string& name) {
    for (const auto& step : steps)
      if (const auto* op = std::get_if<ComputeOp>(&step); op && op->name == name) return op->gemm->m;
    return std::int64_t{0};
  };
  CHECK(gemm_rows(one, "attn.qkv") == 2 * 8192);
  CHECK(gemm_rows(four, "attn.qkv") == 2 * 8192 / 4);
  CHECK(gemm_rows(four, "mlp.fc1") == 2 * 8192 / 4);
  const auto tensor_bytes = [](const StepSequence& steps) {
    double b = 0;
    for (const auto& step : steps)
      if (const auto* c = std::get_if<CollectiveOp>(&step); c && c->group == CommGroup::tensor) b += c->size.value();
    return b;
  };
  CHECK(tensor_bytes(four) == doctest::Approx(tensor_bytes(one) / 4));
}

TEST_CASE("cp = 1 keeps the single FlashAttention kernel and no context collective") {
  const auto steps = transformer_layer_forward(llama_shape(1, ContextComm::ring));
  int flash = 0;
  for (const auto& step : steps) {
    if (const auto* c = std::get_if<CollectiveOp>(&step)) CHECK(c->group != CommGroup::context);
    if (const auto* op = std::get_if<ComputeOp>(&step)) flash += op->name == "attn.flash" ? 1 : 0;
  }
  CHECK(flash == 1);
}

TEST_CASE("context parallelism needs fused attention and a sequence of 2 cp equal chunks") {
  auto m = twocs::testing::gpt(4, 512, 8, 2048, 1000);
  auto plan = twocs::testing::plan_of(1, 1, 2, 2);
  plan.parallelism.context = 4;
  plan.attention = AttentionKernel::unfused;
  CHECK_THROWS_WITH_AS(validate(m, plan), doctest::Contains("fused attention"), twocs::InputError);
  plan.attention = AttentionKernel::fused;
  CHECK_NOTHROW(validate(m, plan));
  m.seq_len = 2044; // not a multiple of 2 x 4
  CHECK_THROWS_AS(validate(m, plan), twocs::InputError);
  CHECK(plan.world_size() == 8);
}

TEST_CASE("ring attention merges its steps' partial outputs and accumulates dQ and dK/dV per step") {
  const std::int64_t cp = 4;
  const LayerShape shape = llama_shape(cp, ContextComm::ring);
  // Per rank: b (s / cp) tokens x 32 heads x 128 of queries and outputs, x 8 x 2 x 128 of K and V.
  const double tokens = 2.0 * 8192 / cp, outputs = tokens * 32 * 128, keys = tokens * 8 * 2 * 128;
  // Step i >= 1 of the balanced causal split, averaged over the ranks: ranks r >= i take both
  // query chunks and half the keys, the others the second query chunk and all the keys.
  const auto query_share = [&](int i) { return i == 0 ? 1.0 : (cp - i + 0.5 * i) / cp; };
  const auto key_share = [&](int i) { return i == 0 ? 1.0 : (0.5 * (cp - i) + i) / cp; };
  double forward = 0, dq = 0, dkv = 0;
  for (int i = 0; i < cp; ++i) {
    forward += outputs * query_share(i) * (i == 0 ? 4 : 6); // out = o0 e; out += oi e (bf16)
    dq += outputs * query_share(i) * (i == 0 ? 4 : 6);      // copy, then add
    dkv += keys * key_share(i) * (i == 0 ? 4 : 6);
  }
  const auto& sum = bytes_named;
  int n = 0;
  CHECK(sum(transformer_layer_forward(shape), "attn.cp.out_correction", n) == doctest::Approx(forward));
  CHECK(n == cp);
  const auto backward = transformer_layer_backward(shape);
  n = 0;
  CHECK(sum(backward, "attn.cp.dq_correction", n) == doctest::Approx(dq));
  CHECK(sum(backward, "attn.cp.dkv_correction", n) == doctest::Approx(dkv));
  CHECK(n == 2 * cp);
  // The all-gather variant runs one kernel on the gathered keys: nothing to merge.
  n = 0;
  CHECK(sum(transformer_layer_forward(llama_shape(cp, ContextComm::all_gather)), "attn.cp.out_correction", n) == 0);
  CHECK(n == 0);
}

TEST_CASE("ring attention packs K and V for the ring and copies each causal step's half operands") {
  const std::int64_t cp = 4;
  const LayerShape shape = llama_shape(cp, ContextComm::ring);
  // Per rank: b (s / cp) tokens; Q and the output 32 heads x 128, K and V 8 x 2 x 128, bf16.
  const double tokens = 2.0 * 8192 / cp, q = tokens * 32 * 128 * 2, kv = tokens * 8 * 2 * 128 * 2;
  const auto& named_bytes = bytes_named;
  // Step i >= 1: ranks r >= i, (cp - i) / cp of them, copy half the received K/V; the others half
  // their queries (backward: also half the output and its gradient). Each copy reads and writes.
  double forward = 0, backward = 0;
  for (int i = 1; i < cp; ++i) {
    const double lower = static_cast<double>(cp - i) / cp;
    forward += 2 * (lower * kv / 2 + (1 - lower) * q / 2);
    backward += 2 * (lower * kv / 2 + (1 - lower) * 3 * q / 2);
  }
  int n = 0;
  const auto fwd = transformer_layer_forward(shape);
  CHECK(named_bytes(fwd, "attn.cp.kv.pack", n) == doctest::Approx(2 * kv).scale(0));
  CHECK(n == 1);
  n = 0;
  CHECK(named_bytes(fwd, "attn.cp.step_copy", n) == doctest::Approx(forward).scale(0));
  CHECK(n == cp - 1);
  n = 0;
  CHECK(named_bytes(transformer_layer_backward(shape), "attn.cp.step_copy.bwd", n) ==
        doctest::Approx(backward).scale(0));
  CHECK(n == cp - 1);
  // Without a causal mask every step attends whole blocks: nothing to copy but the pack.
  LayerShape full = shape;
  full.model.attention_mask = AttentionMask::full;
  n = 0;
  CHECK(named_bytes(transformer_layer_forward(full), "attn.cp.step_copy", n) == 0);
  CHECK(n == 0);
}
