// The model keys of today's models (norm, position, attention_mask, tied_embeddings, head_dim,
// moe, sliding_window, full_attention_every) and parallelism.context / expert, read strictly like every other key.
#include <doctest/doctest.h>

#include <twocs/config/scenario_loader.hpp>

#include "config/input_error_capture.hpp"

using namespace twocs;

namespace {

std::string with_model_keys(const std::string& keys) {
  // MoE with tensor parallelism needs sequence parallelism (Megatron-Core).
  std::string yaml = test::small_workload + "    sequence: true\n";
  yaml.insert(yaml.find("training:"), keys);
  return yaml;
}

} // namespace

TEST_CASE("the modern model keys default to a GPT and read a Llama") {
  const auto gpt = config::parse_workload({"w.yaml", test::small_workload});
  CHECK(gpt.model.norm == model::NormKind::layernorm);
  CHECK(gpt.model.position == model::PositionKind::learned);
  CHECK(gpt.model.attention_mask == model::AttentionMask::causal);
  CHECK(gpt.model.tied_embeddings);
  CHECK(gpt.model.dropout); // Megatron-LM's default 0.1
  CHECK_FALSE(gpt.model.moe.has_value());
  CHECK(gpt.plan.parallelism.context == 1);
  CHECK(gpt.plan.parallelism.expert == 1);
  const auto llama =
      config::parse_workload({"w.yaml", with_model_keys("  norm: rmsnorm\n  position: rope\n  attention_mask: full\n"
                                                        "  tied_embeddings: false\n  head_dim: 128\n")});
  CHECK(llama.model.norm == model::NormKind::rmsnorm);
  CHECK(llama.model.position == model::PositionKind::rope);
  CHECK(llama.model.attention_mask == model::AttentionMask::full);
  CHECK_FALSE(llama.model.tied_embeddings);
  CHECK(llama.model.head_dim() == 128);
  const auto no_dropout = config::parse_workload({"w.yaml", with_model_keys("  dropout: false\n")});
  CHECK_FALSE(no_dropout.model.dropout);
  const auto bad = test::workload_error(with_model_keys("  dropout: 0.1\n"));
  CHECK(bad.key_path() == "model.dropout");
}

TEST_CASE("model.moe reads experts, top_k, capacity (none = dropless) and load imbalance") {
  const auto w = config::parse_workload(
      {"w.yaml", with_model_keys("  moe: {experts: 8, top_k: 2, expert_ffn_hidden: 256, shared_experts: 1,\n"
                                 "        dense_layers: 0, capacity_factor: none, load_imbalance: 1.5}\n")});
  REQUIRE(w.model.moe.has_value());
  CHECK(w.model.moe->experts == 8);
  CHECK(w.model.moe->top_k == 2);
  CHECK(w.model.moe->expert_ffn_hidden == 256);
  CHECK(w.model.moe->shared_experts == 1);
  CHECK(w.model.moe->capacity_factor == 0);
  CHECK(w.model.moe->load_imbalance == 1.5);
  const auto capped = config::parse_workload(
      {"w.yaml", with_model_keys("  moe: {experts: 8, top_k: 2, expert_ffn_hidden: 256, capacity_factor: 1.25}\n")});
  CHECK(capped.model.moe->capacity_factor == 1.25);
}

TEST_CASE("model.mla reads DeepSeek-V3's latent attention, q_lora_rank optional") {
  const auto w = config::parse_workload(
      {"w.yaml", with_model_keys("  mla: {q_lora_rank: 1536, kv_lora_rank: 512, qk_nope_head_dim: 128, "
                                 "qk_rope_head_dim: 64, v_head_dim: 128}\n")});
  REQUIRE(w.model.mla.has_value());
  CHECK(w.model.mla->q_lora_rank == 1536);
  CHECK(w.model.mla->v_head_dim == 128);
  CHECK(w.model.qk_head_dim() == 192);
  const auto lite = config::parse_workload(
      {"w.yaml", with_model_keys("  mla: {kv_lora_rank: 512, qk_nope_head_dim: 128, qk_rope_head_dim: 64, "
                                 "v_head_dim: 128}\n")});
  CHECK(lite.model.mla->q_lora_rank == 0);
  const auto missing = test::workload_error(with_model_keys("  mla: {kv_lora_rank: 512}\n"));
  CHECK(missing.key_path() == "model.mla");
  CHECK(missing.problem().find("qk_nope_head_dim") != std::string::npos);
  const auto unknown = test::workload_error(
      with_model_keys("  mla: {kv_lora_rank: 512, qk_nope_head_dim: 128, qk_rope_head_dim: 64, v_head_dim: 128, "
                      "rope_theta: 10000}\n"));
  CHECK(unknown.problem().find("rope_theta") != std::string::npos);
}

TEST_CASE("model.mtp_layers reads the multi-token-prediction depths, 0 without the key") {
  CHECK(config::parse_workload({"w.yaml", with_model_keys("  mtp_layers: 1\n")}).model.mtp_layers == 1);
  CHECK(config::parse_workload({"w.yaml", with_model_keys("")}).model.mtp_layers == 0);
  const auto negative = test::workload_error(with_model_keys("  mtp_layers: -1\n"));
  CHECK(negative.key_path() == "model.mtp_layers");
}

TEST_CASE("model.full_attention_every reads the period of the whole-prefix layers of a windowed model") {
  const auto w = config::parse_workload(
      {"w.yaml", with_model_keys("  sliding_window: 32\n  full_attention_every: 6\n")}); // Gemma 3's pattern
  CHECK(w.model.sliding_window == 32);
  CHECK(w.model.full_attention_every == 6);
  CHECK(config::parse_workload({"w.yaml", with_model_keys("")}).model.full_attention_every == 0);
  const auto alone = test::workload_error(with_model_keys("  full_attention_every: 2\n"));
  CHECK(alone.key_path() == "model.full_attention_every");
}

TEST_CASE("bad MoE values are located and explained") {
  const auto e = test::workload_error(with_model_keys("  moe: {experts: 8, top_k: 9, expert_ffn_hidden: 256}\n"));
  CHECK(e.problem() == "top_k = 9 exceeds experts = 8");
  const auto skew = test::workload_error(
      with_model_keys("  moe: {experts: 8, top_k: 2, expert_ffn_hidden: 256, load_imbalance: 0.5}\n"));
  CHECK(skew.problem() == "model.moe.load_imbalance must be at least 1, got 0.5");
  const auto norm = test::workload_error(with_model_keys("  norm: rms\n"));
  CHECK(norm.problem() == "model.norm cannot be 'rms'; allowed values: layernorm, rmsnorm");
}

TEST_CASE("capacity_factor and load_imbalance each say what they take") {
  // capacity_factor takes none (dropless) or a factor >= 1, never the 0.8 of an efficiency.
  const auto dropless = test::workload_error(
      with_model_keys("  moe: {experts: 8, top_k: 2, expert_ffn_hidden: 256, capacity_factor: dropless}\n"));
  CHECK(dropless.problem() == "model.moe.capacity_factor must be a number, got 'dropless'");
  CHECK(dropless.fix().find("or none for dropless routing") != std::string::npos);
  CHECK(dropless.fix().find("0.8") == std::string::npos);
  const auto low = test::workload_error(
      with_model_keys("  moe: {experts: 8, top_k: 2, expert_ffn_hidden: 256, capacity_factor: 0.5}\n"));
  CHECK(low.fix() == dropless.fix());
  // load_imbalance has its own text: the busiest expert's load, not a capacity.
  const auto skew = test::workload_error(
      with_model_keys("  moe: {experts: 8, top_k: 2, expert_ffn_hidden: 256, load_imbalance: even}\n"));
  CHECK(skew.fix().find("busiest expert's tokens over the mean") != std::string::npos);
  CHECK(skew.fix().find("capacity") == std::string::npos);
  CHECK(skew.fix().find("0.8") == std::string::npos);
}

TEST_CASE("counts that may be 0 say at least 0, not positive") {
  const std::pair<const char*, const char*> cases[] = {
      {"  moe: {experts: 8, top_k: 2, expert_ffn_hidden: 256, shared_experts: -1}\n", "model.moe.shared_experts"},
      {"  moe: {experts: 8, top_k: 2, expert_ffn_hidden: 256, dense_layers: -1}\n", "model.moe.dense_layers"},
      {"  mtp_layers: -1\n", "model.mtp_layers"},
      {"  mla: {q_lora_rank: -1, kv_lora_rank: 64, qk_nope_head_dim: 32, qk_rope_head_dim: 16, v_head_dim: 32}\n",
       "model.mla.q_lora_rank"}};
  for (const auto& [keys, key] : cases) {
    CAPTURE(key);
    const auto e = test::workload_error(with_model_keys(keys));
    CHECK(e.problem() == std::string(key) + " must be at least 0, got -1");
    CHECK(e.fix() == "give a whole number of at least 0");
  }
  const auto seed = test::platform_error(test::small_platform, {"cluster.network.ecmp_seed=-1"});
  CHECK(seed.problem() == "cluster.network.ecmp_seed must be at least 0, got -1");
  CHECK(config::parse_platform({"p.yaml", test::small_platform}, {"cluster.network.ecmp_seed=0"}).network.ecmp_seed ==
        0);
  CHECK(config::parse_workload({"w.yaml", with_model_keys("  mtp_layers: 0\n")}).model.mtp_layers == 0);
}

TEST_CASE("training.kernels reads fused (default) or eager, and names the choices otherwise") {
  CHECK(config::parse_workload({"w.yaml", test::small_workload}).plan.kernels == model::KernelFusion::fused);
  std::string eager = test::small_workload;
  eager.insert(eager.find("  parallelism:"), "  kernels: eager\n");
  CHECK(config::parse_workload({"w.yaml", eager}).plan.kernels == model::KernelFusion::eager);
  const auto error = test::workload_error(test::small_workload, {"training.kernels=compiled"});
  CHECK(std::string(error.what()).find("fused, eager") != std::string::npos);
}

TEST_CASE("training.loss reads eager (default) or compiled under framework fsdp, and refuses it elsewhere") {
  CHECK(config::parse_workload({"w.yaml", test::small_workload}).plan.loss == model::LossKernel::eager);
  const auto fsdp = config::parse_workload({"w.yaml", test::small_workload},
                                           {"training.framework=fsdp", "training.parallelism.sequence=true",
                                            "training.optimizer.sharding=full", "training.loss=compiled"});
  CHECK(fsdp.plan.loss == model::LossKernel::compiled);
  const auto word = test::workload_error(test::small_workload, {"training.loss=fused"});
  CHECK(std::string(word.what()).find("eager, compiled") != std::string::npos);
  // Megatron-LM runs its own fused vocabulary-parallel cross entropy.
  const auto megatron = test::workload_error(test::small_workload, {"training.loss=compiled"});
  CHECK(megatron.key_path() == "training.loss");
  CHECK(megatron.fix() == "set training.framework: fsdp, or remove loss");
}

TEST_CASE("training.parallelism.expert_dispatcher reads all_to_all (default), deepep or hybridep") {
  CHECK(config::parse_workload({"w.yaml", test::small_workload}).plan.parallelism.expert_dispatcher ==
        model::ExpertDispatcher::all_to_all);
  const auto deepep = config::parse_workload({"w.yaml", test::small_workload + "    expert_dispatcher: deepep\n"});
  CHECK(deepep.plan.parallelism.expert_dispatcher == model::ExpertDispatcher::deepep);
  const auto hybrid = config::parse_workload({"w.yaml", test::small_workload + "    expert_dispatcher: hybridep\n"});
  CHECK(hybrid.plan.parallelism.expert_dispatcher == model::ExpertDispatcher::hybridep);
  const auto error = test::workload_error(test::small_workload, {"training.parallelism.expert_dispatcher=flex"});
  CHECK(std::string(error.what()).find("all_to_all, deepep") != std::string::npos);
}
