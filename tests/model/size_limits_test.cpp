// model::validate's size limits (size_limits.hpp): every count is accepted at its largest value
// and refused above it, and at its largest value the integer parameter counts, the memory and
// the FLOPs computed from it agree with the floating-point estimate: nothing has wrapped.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <string>
#include <utility>

#include <twocs/error.hpp>
#include <twocs/model/megatron_flops.hpp>
#include <twocs/model/memory.hpp>
#include <twocs/model/parameters.hpp>
#include <twocs/model/size_limits.hpp>
#include <twocs/model/validate.hpp>

using namespace twocs;
using namespace twocs::model;

namespace {

/// A small MoE model with latent attention off, on one device.
TransformerConfig small_moe() {
  TransformerConfig m;
  m.name = "small";
  m.layers = 2;
  m.hidden = 256;
  m.heads = 4;
  m.kv_heads = 4;
  m.ffn_hidden = 1024;
  m.ffn_kind = FfnKind::swiglu;
  m.vocab = 1000;
  m.seq_len = 128;
  m.moe = MoeConfig{.experts = 4, .top_k = 2, .expert_ffn_hidden = 128};
  return m;
}

TrainingPlan one_device() {
  TrainingPlan p;
  p.global_batch = 1;
  p.micro_batch = 1;
  return p;
}

MlaConfig& with_mla(TransformerConfig& m) {
  if (!m.mla) m.mla = MlaConfig{64, 64, 32, 16, 32};
  return *m.mla;
}

struct Limit {
  const char* key;
  std::int64_t largest;
  std::function<void(TransformerConfig&, TrainingPlan&, std::int64_t)> set;
};

/// Every count with a limit, each set alone on small_moe (with what it needs beside it).
std::vector<Limit> limits_under_test() {
  using M = TransformerConfig&;
  using P = TrainingPlan&;
  return {
      {"model.layers", limits::layers, [](M m, P, std::int64_t v) { m.layers = v; }},
      {"model.hidden", limits::hidden, [](M m, P, std::int64_t v) { m.hidden = v; }},
      {"model.heads", limits::heads,
       [](M m, P, std::int64_t v) {
         m.heads = m.kv_heads = v;
         m.head_dim_override = 8;
       }},
      {"model.kv_heads", limits::heads,
       [](M m, P, std::int64_t v) {
         m.heads = limits::heads;
         m.kv_heads = v;
         m.head_dim_override = 8;
       }},
      {"model.head_dim", limits::head_dim, [](M m, P, std::int64_t v) { m.head_dim_override = v; }},
      {"model.ffn_hidden", limits::ffn_hidden, [](M m, P, std::int64_t v) { m.ffn_hidden = v; }},
      {"model.vocab", limits::vocab, [](M m, P, std::int64_t v) { m.vocab = v; }},
      {"model.seq_len", limits::seq_len, [](M m, P, std::int64_t v) { m.seq_len = v; }},
      {"model.sliding_window", limits::seq_len, [](M m, P, std::int64_t v) { m.sliding_window = v; }},
      {"model.full_attention_every", limits::layers,
       [](M m, P, std::int64_t v) {
         m.sliding_window = 64;
         m.full_attention_every = v;
       }},
      {"model.mtp_layers", limits::mtp_layers, [](M m, P, std::int64_t v) { m.mtp_layers = v; }},
      {"model.moe.experts", limits::experts, [](M m, P, std::int64_t v) { m.moe->experts = v; }},
      {"model.moe.top_k", 64,
       [](M m, P, std::int64_t v) {
         m.moe->experts = 64;
         m.moe->top_k = v;
       }},
      {"model.moe.expert_ffn_hidden", limits::ffn_hidden, [](M m, P, std::int64_t v) { m.moe->expert_ffn_hidden = v; }},
      {"model.moe.shared_experts", limits::ffn_hidden / 128, [](M m, P, std::int64_t v) { m.moe->shared_experts = v; }},
      {"model.mla.q_lora_rank", limits::lora_rank, [](M m, P, std::int64_t v) { with_mla(m).q_lora_rank = v; }},
      {"model.mla.kv_lora_rank", limits::lora_rank, [](M m, P, std::int64_t v) { with_mla(m).kv_lora_rank = v; }},
      {"model.mla.qk_nope_head_dim", limits::head_dim,
       [](M m, P, std::int64_t v) { with_mla(m).qk_nope_head_dim = v; }},
      {"model.mla.qk_rope_head_dim", limits::head_dim,
       [](M m, P, std::int64_t v) { with_mla(m).qk_rope_head_dim = v; }},
      {"model.mla.v_head_dim", limits::head_dim, [](M m, P, std::int64_t v) { with_mla(m).v_head_dim = v; }},
      {"training.micro_batch", limits::micro_batch,
       [](M, P p, std::int64_t v) {
         p.micro_batch = v;
         p.global_batch = v;
       }},
      {"training.global_batch", limits::global_batch, [](M, P p, std::int64_t v) { p.global_batch = v; }},
      {"training.parallelism", limits::devices,
       [](M, P p, std::int64_t v) {
         p.parallelism.data = v;
         p.global_batch = v;
       }},
  };
}

/// The whole model's parameters as count_parameters gives them on one device (every layer, the
/// multi-token-prediction depths, the embeddings), in 64-bit integers.
double counted_parameters(const TransformerConfig& m) {
  const ParameterCounts c = count_parameters(m, 1, 1);
  const std::int64_t mtp_embedding = m.mtp_keeps_embedding_copy(false) ? c.embedding : 0;
  return static_cast<double>(c.total(m.layers) + c.mtp_range(m.layers, m.mtp_layers) + mtp_embedding);
}

/// The small MoE model on one device with `limit`'s count at its largest accepted value.
std::pair<TransformerConfig, TrainingPlan> at_largest(const Limit& limit) {
  auto m = small_moe();
  auto p = one_device();
  limit.set(m, p, limit.largest);
  return {m, p};
}

} // namespace

TEST_CASE("size limits: every count is accepted at its largest value and refused above it") {
  for (const Limit& limit : limits_under_test()) {
    const std::string key = limit.key;
    CAPTURE(key);
    auto [m, p] = at_largest(limit);
    CHECK_NOTHROW(validate(m, p));
    limit.set(m, p, limit.largest + 1);
    try {
      validate(m, p);
      FAIL("expected an InputError");
    } catch (const InputError& e) {
      CHECK(e.key_path() == limit.key);
      CHECK_FALSE(e.fix().empty());
    }
  }
}

TEST_CASE("size limits: at each largest value the counts, memory and FLOPs are exact, not wrapped") {
  for (const Limit& limit : limits_under_test()) {
    const std::string key = limit.key;
    CAPTURE(key);
    const auto [m, p] = at_largest(limit);
    REQUIRE_NOTHROW(validate(m, p));
    // The integer count is the floating-point estimate's, less the few terms it rounds up.
    const double counted = counted_parameters(m);
    const double estimated = estimate_parameters(m);
    CHECK(counted > 0);
    CHECK(counted <= estimated);
    CHECK(counted >= 0.9 * estimated);
    // One device holds them all: at least their bf16 weights, fp32 gradients and Adam state.
    const double peak = estimate_memory(m, p).peak().value();
    CHECK(std::isfinite(peak));
    CHECK(peak >= 18 * counted);
    const double flops = megatron_model_flops(m, p.global_batch).value();
    CHECK(std::isfinite(flops));
    CHECK(flops > 0);
  }
}

TEST_CASE("size limits: counts each within their limit that make too large a model together are refused") {
  auto m = small_moe();
  m.moe->experts = limits::experts;
  m.moe->expert_ffn_hidden = limits::ffn_hidden;
  m.hidden = 4096; // 2^16 experts of 3 x 4096 x 2^20 weights: 8.4e16 parameters per layer
  try {
    validate(m, one_device());
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(e.key_path() == "model.moe.experts");
    CHECK(std::string(e.what()).find("beyond what twocs models") != std::string::npos);
  }
  m = small_moe();
  m.moe.reset();
  m.layers = limits::layers;
  m.hidden = limits::hidden;
  m.ffn_hidden = limits::ffn_hidden; // 2^16 layers of 1.1e12 parameters each
  try {
    validate(m, one_device());
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(e.key_path() == "model.layers");
  }
  // Just inside the limit: accepted, and its integer count is exact.
  m.layers = 512;
  REQUIRE(estimate_parameters(m) <= limits::parameters);
  CHECK_NOTHROW(validate(m, one_device()));
  CHECK(counted_parameters(m) >= 0.9 * estimate_parameters(m));
}
