#include <doctest/doctest.h>

#include <twocs/error.hpp>
#include <twocs/model/memory.hpp>
#include <twocs/model/parameters.hpp>
#include <twocs/model/stage_partition.hpp>

#include "support/scenarios.hpp"

using namespace twocs::model;
using twocs::InputError;

namespace {

using twocs::testing::gpt;

TrainingPlan plan_of(std::int64_t t, std::int64_t p, std::int64_t d, std::int64_t b, std::int64_t batch) {
  TrainingPlan plan;
  plan.global_batch = batch;
  plan.micro_batch = b;
  plan.parallelism.tensor = t;
  plan.parallelism.pipeline = p;
  plan.parallelism.data = d;
  return plan;
}

} // namespace

TEST_CASE("mixed-precision Adam holds 16 bytes per parameter with fp16 and 18 with bf16 (fp32 main gradients)") {
  const auto m = gpt(2, 1024, 16);
  auto plan = plan_of(1, 1, 4, 1, 4);
  const double params = static_cast<double>(count_parameters(m, 1).total(2));
  const auto per_param = [&](Dtype dtype) {
    plan.dtype = dtype;
    const auto report = estimate_memory(m, plan);
    REQUIRE(report.stages.size() == 1);
    const auto& b = report.stages[0].breakdown;
    return (b.weights + b.gradients + b.optimizer_state).value() / params;
  };
  CHECK(per_param(Dtype::fp16) == doctest::Approx(16));
  CHECK(per_param(Dtype::bf16) == doctest::Approx(18));
  CHECK(per_param(Dtype::fp32) == doctest::Approx(16)); // 4 + 4 + 8, no master copy
}

TEST_CASE("Megatron-Core's gradient buffer takes the reduction's dtype, other frameworks keep fp32 gradients") {
  const auto m = gpt(2, 1024, 16);
  auto plan = plan_of(1, 1, 4, 1, 4);
  plan.dtype = Dtype::bf16;
  const double params = static_cast<double>(count_parameters(m, 1).total(2));
  const auto gradient_bytes = [&](TrainingPlan::GradReduce reduce, Framework framework) {
    plan.grad_reduce = reduce;
    plan.framework = framework;
    return estimate_memory(m, plan).stages[0].breakdown.gradients.value() / params;
  };
  // distributed_data_parallel.py: torch.float if grad_reduce_in_fp32 else the parameter's dtype.
  CHECK(gradient_bytes(TrainingPlan::GradReduce::automatic, Framework::megatron_lm) == doctest::Approx(4));
  CHECK(gradient_bytes(TrainingPlan::GradReduce::model_dtype, Framework::megatron_lm) == doctest::Approx(2));
  CHECK(gradient_bytes(TrainingPlan::GradReduce::fp32, Framework::megatron_lm) == doctest::Approx(4));
  // DeepSpeed's BF16_Optimizer keeps fp32 copies whatever the reduction.
  CHECK(gradient_bytes(TrainingPlan::GradReduce::model_dtype, Framework::megatron_deepspeed) == doctest::Approx(4));
}

TEST_CASE("each ZeRO stage shards one more kind of state over the data-parallel replicas") {
  const auto m = gpt(2, 1024, 16);
  auto plan = plan_of(1, 1, 8, 1, 8);
  const double params = static_cast<double>(count_parameters(m, 1).total(2));
  const auto per_param = [&](OptimizerSharding s) {
    plan.optimizer.sharding = s;
    const auto b = estimate_memory(m, plan).stages[0].breakdown;
    return (b.weights + b.gradients + b.optimizer_state).value() / params;
  };
  // bf16: 2-byte weights, 4-byte fp32 main gradients, 12 bytes of fp32 optimizer state.
  CHECK(per_param(OptimizerSharding::none) == doctest::Approx(18));
  CHECK(per_param(OptimizerSharding::optimizer) == doctest::Approx(6 + 12.0 / 8));
  CHECK(per_param(OptimizerSharding::gradients) == doctest::Approx(2 + 16.0 / 8));
  CHECK(per_param(OptimizerSharding::full) == doctest::Approx(18.0 / 8));
}

TEST_CASE("activations per layer follow Korthikanti et al. 2022, Table 2") {
  // 22B model of the paper: h = 6144, a = 64, s = 2048, b = 4, t = 8, one layer, one stage.
  const auto m = gpt(1, 6144, 64);
  auto plan = plan_of(8, 1, 1, 4, 4);
  plan.attention = AttentionKernel::unfused; // the paper's Megatron-LM stores the s x s scores
  const double s = 2048, b = 4, h = 6144, a = 64, t = 8;
  const double sbh = s * b * h;
  const auto activations = [&](Recompute r, bool sp) {
    plan.recompute = r;
    plan.parallelism.sequence = sp;
    const auto stage = estimate_memory(m, plan).stages[0];
    // Remove the output head's fp32 logits and the one-layer recompute buffer: the table is per layer.
    double head = 4 * s * b * 51200 / t;
    double rebuilt =
        r == Recompute::full ? (sp ? sbh / t * (34 + 5 * a * s / h) : sbh * (10 + 24 / t + 5 * a * s / (h * t))) : 0;
    return stage.breakdown.activations.value() - head - rebuilt;
  };
  CHECK(activations(Recompute::none, false) == doctest::Approx(sbh * (10 + 24 / t + 5 * a * s / (h * t))));
  CHECK(activations(Recompute::none, true) == doctest::Approx(sbh / t * (34 + 5 * a * s / h)));
  CHECK(activations(Recompute::selective, false) == doctest::Approx(sbh * (10 + 24 / t)));
  CHECK(activations(Recompute::selective, true) == doctest::Approx(sbh * 34 / t));
  CHECK(activations(Recompute::full, false) == doctest::Approx(2 * sbh));
}

TEST_CASE("1F1B holds p - i micro-batches on stage i, GPipe all of them") {
  const auto m = gpt(8, 1024, 16);
  auto plan = plan_of(1, 4, 1, 1, 16);
  const auto one_f_one_b = estimate_memory(m, plan);
  REQUIRE(one_f_one_b.stages.size() == 4);
  for (std::int64_t i = 0; i < 4; ++i)
    CHECK(one_f_one_b.stages[static_cast<std::size_t>(i)].micro_batches_in_flight == 4 - i);
  CHECK(one_f_one_b.peak_stage() == 0);
  plan.pipeline_schedule = PipelineSchedule::gpipe;
  for (const auto& s : estimate_memory(m, plan).stages) CHECK(s.micro_batches_in_flight == 16);
}

TEST_CASE("layers split evenly when they can, else embedding and output layer weigh in (BLOOM-176B)") {
  auto plan = plan_of(4, 12, 8, 2, 2048);
  const auto bloom = partition_layers(gpt(70, 14336, 112), plan);
  REQUIRE(bloom.size() == 12);
  CHECK(bloom.front().layers == 5);
  CHECK(bloom.back().layers == 5);
  for (std::size_t c = 1; c + 1 < bloom.size(); ++c) CHECK(bloom[c].layers == 6);
  CHECK(bloom.front().has_embedding);
  CHECK(bloom.back().has_output_head);
  CHECK(bloom.back().first_layer == 65);

  plan.parallelism.pipeline = 8;
  for (const auto& chunk : partition_layers(gpt(96, 12288, 96), plan)) CHECK(chunk.layers == 12);

  plan.parallelism.pipeline = 2;
  plan.parallelism.virtual_stages = 2;
  const auto interleaved = partition_layers(gpt(8, 1024, 16), plan);
  REQUIRE(interleaved.size() == 4);
  CHECK(interleaved[0].stage == 0);
  CHECK(interleaved[1].stage == 1);
  CHECK(interleaved[2].stage == 0);
  CHECK(interleaved[3].stage == 1);

  plan.parallelism.virtual_stages = 1;
  plan.parallelism.stage_layers = {3, 5};
  const auto explicit_split = partition_layers(gpt(8, 1024, 16), plan);
  CHECK(explicit_split[0].layers == 3);
  CHECK(explicit_split[1].layers == 5);
  CHECK(explicit_split[1].first_layer == 3);
}

TEST_CASE("Llama 3 405B's partition: 126 layers on 16 stages x 8 chunks, the end chunks hold no layer") {
  auto plan = plan_of(8, 16, 64, 1, 2048);
  plan.parallelism.virtual_stages = 8;
  plan.pipeline_schedule = PipelineSchedule::interleaved_one_f_one_b;
  const auto chunks = partition_layers(gpt(126, 16384, 128), plan);
  REQUIRE(chunks.size() == 128);
  // Dubey et al. 2024, 3.3.2: the first chunk holds only the embedding, the last only the output.
  CHECK(chunks.front().layers == 0);
  CHECK(chunks.front().has_embedding);
  CHECK(chunks.back().layers == 0);
  CHECK(chunks.back().has_output_head);
  CHECK(chunks.back().first_layer == 126);
  for (std::size_t c = 1; c + 1 < chunks.size(); ++c) CHECK(chunks[c].layers == 1);
  // Stage 0 holds 7 layers (its first chunk is empty), stage 1 holds 8.
  const auto report = estimate_memory(gpt(126, 16384, 128), plan);
  CHECK(report.stages[0].layers == 7);
  CHECK(report.stages[1].layers == 8);
  CHECK(report.stages[15].layers == 7);
  // A middle chunk may not be empty.
  plan.parallelism.stage_layers.assign(128, 1);
  plan.parallelism.stage_layers[5] = 0;
  plan.parallelism.stage_layers[6] = 2;
  CHECK_THROWS_AS(static_cast<void>(partition_layers(gpt(128, 16384, 128), plan)), InputError);
}

TEST_CASE("context parallelism divides activations by cp and adds its K/V buffers") {
  auto m = gpt(2, 1024, 16, 8192);
  m.kv_heads = 4;
  auto plan = plan_of(1, 1, 1, 1, 4);
  plan.attention = AttentionKernel::fused;
  const auto one = estimate_memory(m, plan).stages[0].breakdown;
  for (const auto comm : {ContextComm::ring, ContextComm::all_gather}) {
    plan.parallelism.context = 8;
    plan.parallelism.context_comm = comm;
    const auto split = estimate_memory(m, plan).stages[0].breakdown;
    CHECK(split.activations.value() == doctest::Approx(one.activations.value() / 8));
    CHECK(split.weights.value() == doctest::Approx(one.weights.value()));
    // One K/V block: b (s / cp) kv_heads d_head x 2 tensors x 2 bytes; ring keeps cp of them
    // (max(cp, 4)), all-gather 2 cp.
    const double block = 1024.0 * 4 * 64 * 2 * 2;
    const double blocks = comm == ContextComm::ring ? 8 : 16;
    CHECK(split.communication_buffers.value() ==
          doctest::Approx(one.communication_buffers.value() / 8 + blocks * block));
  }
}

TEST_CASE("FSDP2 holds one more gathered layer and a layer's gradients with their fp32 reduce-scatter input") {
  const auto m = gpt(2, 1024, 16);
  auto plan = plan_of(1, 1, 8, 1, 8);
  plan.optimizer.sharding = OptimizerSharding::full;
  const double megatron = estimate_memory(m, plan).stages[0].breakdown.communication_buffers.value();
  plan.framework = Framework::fsdp;
  const double fsdp = estimate_memory(m, plan).stages[0].breakdown.communication_buffers.value();
  const auto counts = count_parameters(m, 1);
  // The root's embedding (V h + s h) and final norm unsharded, 16-bit; per layer P_l (2 + 2 + 4).
  const double root = 51200.0 * 1024 + 2048.0 * 1024 + static_cast<double>(counts.final_norm);
  CHECK(fsdp - megatron == doctest::Approx(2.0 * root + 8.0 * static_cast<double>(counts.per_layer)));
}

TEST_CASE("DTensor's tensor parallelism keeps the QKV and fc1 inputs gathered: (t - 1) / t of each more, FP8 under "
          "FP8") {
  // 22B shape of Table 2 with sequence parallelism; one layer's activations, the difference of a
  // two-layer and a one-layer model (the frameworks' output heads differ).
  auto plan = plan_of(8, 1, 1, 4, 4);
  plan.parallelism.sequence = true;
  const double sbh = 2048.0 * 4 * 6144, t = 8;
  const auto activations = [&](Framework framework, Dtype dtype) {
    plan.framework = framework;
    plan.dtype = dtype;
    return estimate_memory(gpt(2, 6144, 64), plan).stages[0].breakdown.activations.value() -
           estimate_memory(gpt(1, 6144, 64), plan).stages[0].breakdown.activations.value();
  };
  const double gathered = 2 * sbh * (t - 1) / t; // two inputs
  CHECK(activations(Framework::fsdp, Dtype::bf16) - activations(Framework::megatron_lm, Dtype::bf16) ==
        doctest::Approx(2 * gathered));
  CHECK(activations(Framework::fsdp, Dtype::fp8) - activations(Framework::megatron_lm, Dtype::fp8) ==
        doctest::Approx(gathered));
  // Without sequence parallelism every rank already holds them whole.
  plan.parallelism.sequence = false;
  CHECK(activations(Framework::fsdp, Dtype::bf16) == doctest::Approx(activations(Framework::megatron_lm, Dtype::bf16)));
}

TEST_CASE("the last stage holds the output layer's logits of its last chunk's micro-batches in flight only") {
  // The vocabulary changes nothing but the head (tied embeddings: the word-embedding weights sit on
  // the first stage), so the last stage's activations grow by the fp32 logits, 4 s b V / t bytes,
  // per micro-batch of the last chunk in flight at the peak.
  const std::int64_t s = 1024, b = 1, small = 51200, large = 2 * 51200;
  const auto last_stage_growth = [&](PipelineSchedule schedule, std::int64_t p, std::int64_t v) {
    auto plan = plan_of(1, p, 1, b, 16);
    plan.parallelism.virtual_stages = v;
    plan.pipeline_schedule = schedule;
    auto model = gpt(p * v, 1024, 16, s);
    const auto activations = [&](std::int64_t vocab) {
      model.vocab = vocab;
      return estimate_memory(model, plan).stages.back().breakdown.activations.value();
    };
    return (activations(large) - activations(small)) / (4.0 * static_cast<double>(s * b * (large - small)));
  };
  // 1F1B: the last stage runs each forward's backward next; one micro-batch in flight.
  CHECK(last_stage_growth(PipelineSchedule::one_f_one_b, 4, 1) == doctest::Approx(1));
  // Interleaved, p = 4, v = 3: 2 (p - i - 1) + (v - 1) p + 1 = 9 chunks in flight on the last
  // stage, 8 of them chunks 0 and 1's, one the last chunk's (was counted v = 3 times).
  CHECK(last_stage_growth(PipelineSchedule::interleaved_one_f_one_b, 4, 3) == doctest::Approx(1));
  // GPipe: every forward before any backward, all 16 micro-batches.
  CHECK(last_stage_growth(PipelineSchedule::gpipe, 4, 1) == doctest::Approx(16));
}
