// model::validate: one test per consistency rule of a model and its training plan.
#include <doctest/doctest.h>

#include <functional>
#include <string>

#include <twocs/error.hpp>
#include <twocs/model/validate.hpp>

using namespace twocs;
using namespace twocs::model;

namespace {

TransformerConfig gpt3_175b() {
  TransformerConfig m;
  m.name = "gpt3-175b";
  m.layers = 96;
  m.hidden = 12288;
  m.heads = 96;
  m.kv_heads = 96;
  m.ffn_hidden = 4 * 12288;
  m.vocab = 51200;
  m.seq_len = 2048;
  return m;
}

TrainingPlan megatron_plan() {
  TrainingPlan p;
  p.global_batch = 1536;
  p.micro_batch = 1;
  p.parallelism.tensor = 8;
  p.parallelism.pipeline = 8;
  p.parallelism.data = 16;
  p.parallelism.sequence = true;
  return p;
}

/// The InputError of validating `m` and `p` (std::logic_error when they pass).
InputError error_of(const TransformerConfig& m, const TrainingPlan& p) {
  try {
    validate(m, p);
  } catch (const InputError& e) {
    return e;
  }
  throw std::logic_error("expected an InputError");
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

} // namespace

TEST_CASE("validate: the GPT-3 175B Megatron plan passes") {
  CHECK_NOTHROW(validate(gpt3_175b()));
  CHECK_NOTHROW(validate(gpt3_175b(), megatron_plan()));
}

TEST_CASE("validate: every count must be positive") {
  using Member = std::int64_t TransformerConfig::*;
  const std::pair<Member, const char*> model_counts[] = {
      {&TransformerConfig::layers, "model.layers"},         {&TransformerConfig::hidden, "model.hidden"},
      {&TransformerConfig::heads, "model.heads"},           {&TransformerConfig::kv_heads, "model.kv_heads"},
      {&TransformerConfig::ffn_hidden, "model.ffn_hidden"}, {&TransformerConfig::vocab, "model.vocab"},
      {&TransformerConfig::seq_len, "model.seq_len"}};
  for (const auto& [member, key] : model_counts) {
    CAPTURE(key);
    auto m = gpt3_175b();
    m.*member = 0;
    const auto e = error_of(m, megatron_plan());
    CHECK(e.key_path() == key);
    CHECK(e.problem() == std::string(key) + " must be positive, got 0");
    CHECK_FALSE(e.fix().empty());
  }
  const std::pair<std::function<void(TrainingPlan&)>, const char*> plan_counts[] = {
      {[](TrainingPlan& p) { p.global_batch = -1; }, "training.global_batch"},
      {[](TrainingPlan& p) { p.micro_batch = 0; }, "training.micro_batch"},
      {[](TrainingPlan& p) { p.parallelism.tensor = 0; }, "training.parallelism.tensor"},
      {[](TrainingPlan& p) { p.parallelism.pipeline = 0; }, "training.parallelism.pipeline"},
      {[](TrainingPlan& p) { p.parallelism.data = 0; }, "training.parallelism.data"},
      {[](TrainingPlan& p) { p.parallelism.virtual_stages = 0; }, "training.parallelism.virtual_stages"}};
  for (const auto& [change, key] : plan_counts) {
    CAPTURE(key);
    auto p = megatron_plan();
    change(p);
    CHECK(error_of(gpt3_175b(), p).key_path() == key);
  }
}

TEST_CASE("validate: parallel degrees whose product overflows are rejected, not wrapped") {
  auto p = megatron_plan();
  p.parallelism.tensor = p.parallelism.pipeline = p.parallelism.data = std::int64_t{1} << 40;
  CHECK(error_of(gpt3_175b(), p).key_path() == "training.parallelism");
}

TEST_CASE("validate: hidden must divide by heads") {
  auto m = gpt3_175b();
  m.heads = 100;
  m.kv_heads = 100;
  const auto e = error_of(m, megatron_plan());
  CHECK(e.key_path() == "model.heads");
  CHECK(e.problem() == "model.hidden (12288) must be divisible by model.heads (100)");
  CHECK(contains(e.fix(), "e.g. 96 or 128"));
}

TEST_CASE("validate: heads must divide by kv_heads") {
  auto m = gpt3_175b();
  m.kv_heads = 7;
  const auto e = error_of(m, megatron_plan());
  CHECK(e.key_path() == "model.kv_heads");
  CHECK(e.problem() == "model.heads (96) must be divisible by model.kv_heads (7)");
  CHECK(contains(e.fix(), "e.g. 6 or 8"));
  m.kv_heads = 8; // grouped-query attention with 12 query heads per group
  CHECK_NOTHROW(validate(m, megatron_plan()));
}

TEST_CASE("validate: heads must divide by tensor") {
  auto p = megatron_plan();
  p.parallelism.tensor = 5;
  p.parallelism.sequence = false;
  const auto e = error_of(gpt3_175b(), p);
  CHECK(e.key_path() == "training.parallelism.tensor");
  CHECK(e.problem() == "model.heads (96) must be divisible by training.parallelism.tensor (5)");
  CHECK(contains(e.fix(), "e.g. 4 or 6"));
}

TEST_CASE("validate: kv_heads must divide by tensor (grouped-query attention)") {
  auto m = gpt3_175b();
  m.kv_heads = 4;
  const auto e = error_of(m, megatron_plan());
  CHECK(e.key_path() == "training.parallelism.tensor");
  CHECK(e.problem() == "model.kv_heads (4) must be divisible by training.parallelism.tensor (8)");
}

TEST_CASE("validate: global_batch must divide by data x micro_batch") {
  auto p = megatron_plan();
  p.global_batch = 1537;
  const auto e = error_of(gpt3_175b(), p);
  CHECK(e.key_path() == "training.global_batch");
  CHECK(e.problem() == "training.global_batch (1537) must be divisible by data x micro_batch (16 x 1 = 16)");
  CHECK(e.fix() == "use global_batch 1536 or 1552, or change data or micro_batch");
  p.global_batch = 8; // smaller than one micro-batch per replica
  CHECK(error_of(gpt3_175b(), p).fix() == "use global_batch 16, or change data or micro_batch");
}

TEST_CASE("validate: sequence parallelism needs seq_len divisible by tensor") {
  auto m = gpt3_175b();
  m.seq_len = 2047;
  const auto e = error_of(m, megatron_plan());
  CHECK(e.key_path() == "training.parallelism.sequence");
  CHECK(
      e.problem() ==
      "with training.parallelism.sequence, model.seq_len (2047) must be divisible by training.parallelism.tensor (8)");
  auto p = megatron_plan();
  p.parallelism.sequence = false;
  CHECK_NOTHROW(validate(m, p));
}

TEST_CASE("validate: virtual_stages > 1 needs the interleaved schedule and a pipeline") {
  auto p = megatron_plan();
  p.parallelism.virtual_stages = 2;
  const auto schedule = error_of(gpt3_175b(), p);
  CHECK(schedule.key_path() == "training.pipeline_schedule");
  CHECK(schedule.problem() == "training.pipeline_schedule must be interleaved-1f1b for "
                              "training.parallelism.virtual_stages = 2, not 1f1b");
  p.pipeline_schedule = PipelineSchedule::interleaved_one_f_one_b;
  CHECK_NOTHROW(validate(gpt3_175b(), p));
  p.parallelism.pipeline = 1;
  p.parallelism.data = 128;
  const auto pipeline = error_of(gpt3_175b(), p);
  CHECK(pipeline.key_path() == "training.parallelism.virtual_stages");
  CHECK(pipeline.problem() == "training.parallelism.virtual_stages = 2 needs more than one pipeline stage");
}

TEST_CASE("validate: the interleaved schedule needs micro-batches divisible by pipeline (Megatron-LM)") {
  auto p = megatron_plan();
  p.pipeline_schedule = PipelineSchedule::interleaved_one_f_one_b;
  p.parallelism.virtual_stages = 2;
  p.global_batch = 16 * 12; // 12 micro-batches per replica, pipeline 8
  const auto e = error_of(gpt3_175b(), p);
  CHECK(e.key_path() == "training.global_batch");
  CHECK(contains(e.problem(),
                 "(global_batch / (data x micro_batch) = 12) divisible by training.parallelism.pipeline (8)"));
  CHECK(e.fix() == "use global_batch 128 or 256, or pipeline_schedule: 1f1b");
  p.pipeline_schedule = PipelineSchedule::one_f_one_b;
  p.parallelism.virtual_stages = 1;
  CHECK_NOTHROW(validate(gpt3_175b(), p)); // 1F1B has no such rule
}

TEST_CASE("validate: every model chunk needs a layer, layers need not divide evenly") {
  auto m = gpt3_175b();
  m.layers = 70; // BLOOM-176B: 70 layers on 12 stages
  auto p = megatron_plan();
  p.parallelism.pipeline = 12;
  p.parallelism.data = 8;
  CHECK_NOTHROW(validate(m, p));
  // The first and the last chunk may hold only the embedding and the output layer (Llama 3).
  m.layers = 10;
  CHECK_NOTHROW(validate(m, p));
  m.layers = 9;
  const auto e = error_of(m, p);
  CHECK(e.key_path() == "training.parallelism.pipeline");
  CHECK(contains(e.problem(), "model.layers (9) is fewer than the pipeline's model chunks (pipeline 12 x "
                              "virtual_stages 1 = 12) less the two end chunks"));
}

TEST_CASE("validate: stage_layers has one positive entry per model chunk, summing to layers") {
  auto p = megatron_plan();
  p.parallelism.stage_layers = {12, 12, 12, 12, 12, 12, 12, 12};
  CHECK_NOTHROW(validate(gpt3_175b(), p));
  p.parallelism.stage_layers = {11, 13, 12, 12, 12, 12, 12, 12};
  CHECK_NOTHROW(validate(gpt3_175b(), p));

  p.parallelism.stage_layers = {48, 48};
  auto e = error_of(gpt3_175b(), p);
  CHECK(e.key_path() == "training.parallelism.stage_layers");
  CHECK(contains(e.problem(), "lists 2 stages but the pipeline has 8 model chunks"));

  p.parallelism.stage_layers = {0, 24, 12, 12, 12, 12, 12, 12}; // the first chunk: the embedding only
  CHECK_NOTHROW(validate(gpt3_175b(), p));
  p.parallelism.stage_layers = {12, 0, 24, 12, 12, 12, 12, 12};
  e = error_of(gpt3_175b(), p);
  CHECK(e.problem() == "training.parallelism.stage_layers[1] is 0: every model chunk but the first and the last "
                       "needs at least one layer");

  p.parallelism.stage_layers = {12, 12, 12, 12, 12, 12, 12, 11};
  e = error_of(gpt3_175b(), p);
  CHECK(e.problem() == "training.parallelism.stage_layers must add up to model.layers (96), but adds up to 95");

  p.parallelism.stage_layers = {12, 12, 12, 12, 12, 12, 12, INT64_MAX};
  e = error_of(gpt3_175b(), p);
  CHECK(e.problem() == "training.parallelism.stage_layers adds up to more than model.layers (96)");

  p.parallelism.virtual_stages = 2;
  p.pipeline_schedule = PipelineSchedule::interleaved_one_f_one_b;
  p.parallelism.stage_layers.assign(16, 6);
  CHECK_NOTHROW(validate(gpt3_175b(), p));
}

TEST_CASE("validate: the vocabulary need not divide by tensor (Megatron pads it)") {
  auto m = gpt3_175b();
  m.vocab = 50257; // GPT-2's vocabulary, prime to 8
  CHECK_NOTHROW(validate(m, megatron_plan()));
}

TEST_CASE("validate: optimizer sharding is allowed without data parallelism") {
  auto p = megatron_plan();
  p.parallelism.data = 1;
  p.global_batch = 96;
  p.optimizer.sharding = OptimizerSharding::full;
  CHECK_NOTHROW(validate(gpt3_175b(), p));
}

TEST_CASE("validate: sizes beyond any model are rejected before they can overflow") {
  twocs::model::TransformerConfig m;
  m.name = "huge";
  m.layers = 2;
  m.hidden = std::int64_t{1} << 40;
  m.heads = 16;
  m.kv_heads = 16;
  m.ffn_hidden = 4096;
  m.vocab = 51200;
  m.seq_len = 2048;
  try {
    twocs::model::validate(m);
    FAIL("expected an InputError");
  } catch (const twocs::InputError& e) {
    CHECK(e.key_path() == "model.hidden");
    CHECK(std::string(e.what()).find("beyond") != std::string::npos);
  }
}

TEST_CASE("validate: moe.dense_layers may keep the first layers dense, not every layer") {
  auto m = gpt3_175b();
  m.moe = MoeConfig{.experts = 16, .top_k = 2, .expert_ffn_hidden = 12288};
  m.moe->dense_layers = 3; // DeepSeek-V3's first 3 layers
  CHECK_NOTHROW(validate(m, megatron_plan()));
  m.moe->dense_layers = 96;
  const auto e = error_of(m, megatron_plan());
  CHECK(e.key_path() == "model.moe.dense_layers");
  CHECK(contains(e.what(), "must be below model.layers (96)"));
}

TEST_CASE("validate: model.mla needs positive latent and head dims, and runs with context parallelism") {
  auto m = gpt3_175b();
  m.mla = MlaConfig{1536, 512, 128, 64, 128};
  CHECK_NOTHROW(validate(m, megatron_plan()));
  auto plan = megatron_plan();
  plan.parallelism.context = 2;
  plan.attention = AttentionKernel::fused; // Transformer Engine's context parallelism is fused only
  CHECK_NOTHROW(validate(m, plan));
  m.mla->v_head_dim = 0;
  CHECK(error_of(m, megatron_plan()).key_path() == "model.mla.v_head_dim");
}

TEST_CASE("validate: a sliding window is causal and not yet under context parallelism") {
  auto m = gpt3_175b();
  m.sliding_window = 1024;
  CHECK_NOTHROW(validate(m, megatron_plan()));
  m.attention_mask = AttentionMask::full;
  CHECK(error_of(m, megatron_plan()).key_path() == "model.sliding_window");
  m.attention_mask = AttentionMask::causal;
  auto p = megatron_plan();
  p.parallelism.context = 2;
  p.parallelism.data = 8;
  CHECK(contains(error_of(m, p).what(), "model.sliding_window with context parallelism"));
}

TEST_CASE("validate: recompute_modules name only modules the model has") {
  auto p = megatron_plan();
  p.recompute = Recompute::selective;
  p.recompute_modules = with_recompute_module(no_recompute_modules(), 3); // mla_up_proj
  const auto mla = error_of(gpt3_175b(), p);
  CHECK(mla.key_path() == "training.recompute_modules");
  CHECK(contains(mla.what(), "no latent attention"));
  p.recompute_modules = with_recompute_module(no_recompute_modules(), 1); // moe_act
  CHECK(contains(error_of(gpt3_175b(), p).what(), "no experts"));
  p.recompute_modules = with_recompute_module(no_recompute_modules(), 5); // moe
  CHECK(contains(error_of(gpt3_175b(), p).what(), "lists moe, but the model has no experts"));
  auto moe = gpt3_175b();
  moe.moe = MoeConfig{.experts = 8, .top_k = 2, .expert_ffn_hidden = 4096};
  p.recompute_modules = with_recompute_module(no_recompute_modules(), 6); // shared_experts
  CHECK(contains(error_of(moe, p).what(), "lists shared_experts, but the model has none"));
  // Megatron-Core cannot recompute the shared experts it overlaps with the token exchanges.
  moe.moe->shared_experts = 1;
  CHECK_NOTHROW(validate(moe, p));
  p.overlap.shared_experts = true;
  const auto overlap = error_of(moe, p);
  CHECK(overlap.key_path() == "training.overlap.shared_experts");
  CHECK(contains(overlap.what(), "cannot be recomputed"));
  p.overlap.shared_experts = false;
  // layernorm and mlp apply to every model; other recompute modes ignore the list.
  p.recompute_modules = with_recompute_module(with_recompute_module(no_recompute_modules(), 2), 4);
  CHECK_NOTHROW(validate(gpt3_175b(), p));
  p.recompute = Recompute::full;
  p.recompute_modules = with_recompute_module(no_recompute_modules(), 1);
  CHECK_NOTHROW(validate(gpt3_175b(), p));
}

TEST_CASE("validate: overlap.expert_comm refuses what Megatron-Core refuses beside it") {
  auto moe = gpt3_175b();
  moe.moe = MoeConfig{.experts = 16, .top_k = 2, .expert_ffn_hidden = 4096};
  auto p = megatron_plan();
  p.parallelism.expert = 8;
  p.parallelism.virtual_stages = 2;
  p.pipeline_schedule = PipelineSchedule::interleaved_one_f_one_b;
  p.overlap.expert_comm = true;
  CHECK_NOTHROW(validate(moe, p));
  const auto refused = [&](TrainingPlan q, const TransformerConfig& m, const std::string& part) {
    const auto e = error_of(m, q);
    CHECK(e.key_path() == "training.overlap.expert_comm");
    CHECK_MESSAGE(contains(e.what(), part), std::string(e.what()));
  };
  auto q = p;
  q.parallelism.expert = 1;
  refused(q, moe, "this plan has none");
  refused(q, gpt3_175b(), "this plan has none"); // no experts
  q = p;
  q.parallelism.virtual_stages = 1;
  q.pipeline_schedule = PipelineSchedule::one_f_one_b;
  refused(q, moe, "needs the interleaved schedule");
  q = p;
  q.recompute = Recompute::full;
  refused(q, moe, "full recomputation");
  q = p;
  q.recompute = Recompute::selective;
  q.recompute_modules = with_recompute_module(no_recompute_modules(), 5); // moe
  refused(q, moe, "lists moe");
  q = p;
  q.overlap.shared_experts = true;
  refused(q, moe, "replaces shared_experts and expert_wgrad");
  q = p;
  q.overlap.expert_wgrad = true;
  refused(q, moe, "replaces shared_experts and expert_wgrad");
  q = p;
  q.framework = Framework::fsdp;
  q.parallelism.pipeline = 1;
  q.parallelism.virtual_stages = 1;
  q.pipeline_schedule = PipelineSchedule::one_f_one_b;
  q.parallelism.data = 64;
  q.global_batch = 64 * 2;
  refused(q, moe, "Megatron-Core's");
  q = p;
  q.optimizer.sharding = OptimizerSharding::full;
  refused(q, moe, "sharding: full");
  auto mtp = moe;
  mtp.mtp_layers = 2;
  refused(p, mtp, "at most one multi-token-prediction layer");
  // Without pipeline stages the plain 1F1B schedule merges too; GPipe does not pair steps.
  q = p;
  q.parallelism.pipeline = 1;
  q.parallelism.virtual_stages = 1;
  q.parallelism.data = 128;
  q.global_batch = 128 * 4;
  q.pipeline_schedule = PipelineSchedule::one_f_one_b;
  CHECK_NOTHROW(validate(moe, q));
  q.pipeline_schedule = PipelineSchedule::gpipe;
  refused(q, moe, "GPipe");
}
