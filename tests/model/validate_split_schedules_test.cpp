// model::validate for the schedules that split backward (zb-h1, dualpipe): one test per kind of
// plan they refuse.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include <twocs/error.hpp>
#include <twocs/model/validate.hpp>

#include "support/scenarios.hpp"

using namespace twocs;
using namespace twocs::model;

namespace {

/// GPT-3 175B's Megatron plan (t 8, p 8, d 16, 96 micro-batches per replica) with `schedule`.
TrainingPlan plan_with(PipelineSchedule schedule) {
  auto p = testing::plan_of(8, 8, 16, 96);
  p.parallelism.sequence = true;
  p.pipeline_schedule = schedule;
  return p;
}

TransformerConfig gpt3_175b() { return testing::gpt(96, 12288, 96, 2048, 51200); }

InputError error_of(const TrainingPlan& p) {
  try {
    validate(gpt3_175b(), p);
  } catch (const InputError& e) {
    return e;
  }
  throw std::logic_error("expected an InputError");
}

} // namespace

TEST_CASE("validate: zb-h1 and dualpipe pass on a Megatron plan") {
  CHECK_NOTHROW(validate(gpt3_175b(), plan_with(PipelineSchedule::zb_h1)));
  CHECK_NOTHROW(validate(gpt3_175b(), plan_with(PipelineSchedule::dualpipe)));
}

TEST_CASE("validate: zb-h1 with virtual stages is refused at the schedule") {
  auto p = plan_with(PipelineSchedule::zb_h1);
  p.parallelism.virtual_stages = 2;
  const auto e = error_of(p);
  CHECK(e.key_path() == "training.pipeline_schedule");
  CHECK(e.problem() == "training.pipeline_schedule must be interleaved-1f1b for training.parallelism.virtual_stages "
                       "= 2, not zb-h1");
}

TEST_CASE("validate: dualpipe needs an even number of pipeline stages") {
  auto p = plan_with(PipelineSchedule::dualpipe);
  p.parallelism.pipeline = 3;
  p.global_batch = 16 * 12;
  const auto e = error_of(p);
  CHECK(e.key_path() == "training.parallelism.pipeline");
  CHECK(
      e.problem() ==
      "training.pipeline_schedule dualpipe needs an even number of pipeline stages, not training.parallelism.pipeline "
      "= 3");
  CHECK(e.fix() == "use pipeline 2 or 4, or pipeline_schedule: 1f1b");
  p.parallelism.pipeline = 1;
  CHECK(error_of(p).fix() == "use pipeline 2, or pipeline_schedule: 1f1b");
}

TEST_CASE("validate: dualpipe needs an even number of micro-batches, at least twice the stages") {
  auto p = plan_with(PipelineSchedule::dualpipe);
  p.global_batch = 16 * 15; // 15 micro-batches per replica
  const auto odd = error_of(p);
  CHECK(odd.key_path() == "training.global_batch");
  CHECK(odd.problem() == "training.global_batch gives 15 micro-batches per replica (global_batch / (data x "
                         "micro_batch)); training.pipeline_schedule dualpipe needs an even number, at least 2 x "
                         "pipeline = 16");
  CHECK(odd.fix() == "use global_batch 256 or 288, or pipeline_schedule: 1f1b");
  p.global_batch = 16 * 14; // even, but fewer than 16
  CHECK(error_of(p).key_path() == "training.global_batch");
  p.global_batch = 16 * 16;
  CHECK_NOTHROW(validate(gpt3_175b(), p));
}

TEST_CASE("validate: zb-h1 and dualpipe need framework megatron-lm") {
  for (auto schedule : {PipelineSchedule::zb_h1, PipelineSchedule::dualpipe}) {
    auto p = plan_with(schedule);
    p.framework = Framework::megatron_deepspeed;
    const auto e = error_of(p);
    CHECK(e.key_path() == "training.pipeline_schedule");
    CHECK(e.fix() == "set training.framework: megatron-lm, or pipeline_schedule: 1f1b");
  }
}

TEST_CASE("validate: zb-h1 and dualpipe refuse per-layer weight gathers (sharding full)") {
  for (auto schedule : {PipelineSchedule::zb_h1, PipelineSchedule::dualpipe}) {
    auto p = plan_with(schedule);
    p.optimizer.sharding = OptimizerSharding::full;
    const auto e = error_of(p);
    CHECK(e.key_path() == "training.pipeline_schedule");
    CHECK(e.problem().find("sharding: full") != std::string::npos);
  }
}
