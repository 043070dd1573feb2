// Megatron-Core's overlapped pipeline messages (training.overlap.p2p, overlap_p2p_comm): under the
// interleaved schedule each pass's send and the next pass of its kind's receive run under the
// pass of the other kind, without batching or torch.cuda.synchronize; other schedules and
// frameworks ignore the key.
#include <doctest/doctest.h>

#include <twocs/analysis/summary.hpp>

#include "support/iteration_run.hpp"
#include "support/scenarios.hpp"

using namespace twocs;

namespace {

constexpr auto pipeline = analysis::index(model::CommGroup::pipeline);

model::TrainingPlan interleaved(bool overlapped, std::int64_t micro_batches = 8) {
  auto plan = testing::plan_of(1, 2, 1, micro_batches);
  plan.parallelism.virtual_stages = 2;
  plan.pipeline_schedule = model::PipelineSchedule::interleaved_one_f_one_b;
  plan.overlap.p2p = overlapped;
  return plan;
}

double kernel_time(const testing::IterationRun& run, lowering::DeviceId device) {
  double t = 0;
  for (lowering::TaskId id = 0; id < run.graph.size(); ++id)
    if (!run.graph.task(id).is_transfer() && run.graph.task(id).device == device)
      t += run.graph.kernel(id).duration.value();
  return t;
}

std::size_t pipeline_transfers(const testing::IterationRun& run) {
  std::size_t n = 0;
  for (lowering::TaskId id = 0; id < run.graph.size(); ++id)
    if (run.graph.task(id).is_transfer() && run.graph.transfer(id).group == model::CommGroup::pipeline) ++n;
  return n;
}

} // namespace

TEST_CASE("overlapped messages run under the other kind's passes: the same kernels and messages, less exposed") {
  const auto m = testing::gpt(8, 1024, 16, 1024);
  const auto batched = testing::simulate_iteration(m, interleaved(false), 2);
  const auto overlapped = testing::simulate_iteration(m, interleaved(true), 2);
  for (const lowering::DeviceId d : {0, 1})
    CHECK(kernel_time(overlapped, d) == doctest::Approx(kernel_time(batched, d)).epsilon(1e-12));
  CHECK(pipeline_transfers(overlapped) == pipeline_transfers(batched));
  // Batched: every exchange is waited for before the next kernel, so no message runs under compute.
  CHECK(batched.summary.overlapped_comm_by_group[pipeline].value() == doctest::Approx(0).epsilon(1e-12));
  CHECK(overlapped.summary.overlapped_comm_by_group[pipeline].value() > 0);
  CHECK(overlapped.summary.exposed_comm_by_group[pipeline].value() <
        batched.summary.exposed_comm_by_group[pipeline].value());
  CHECK(overlapped.summary.iteration_time.value() < batched.summary.iteration_time.value());
}

TEST_CASE("1F1B and Megatron-DeepSpeed ignore overlap.p2p, as Megatron-LM turns it off outside the interleaved "
          "schedule") {
  const auto m = testing::gpt(8, 1024, 16, 1024);
  auto plan = testing::plan_of(1, 2, 1, 8);
  const auto time_of = [&](bool overlapped) {
    plan.overlap.p2p = overlapped;
    return testing::simulate_iteration(m, plan, 2).summary.iteration_time.value();
  };
  CHECK(time_of(true) == time_of(false));
  plan = interleaved(false);
  plan.framework = model::Framework::megatron_deepspeed;
  plan.pipeline_schedule = model::PipelineSchedule::one_f_one_b;
  plan.parallelism.virtual_stages = 1;
  CHECK(time_of(true) == time_of(false));
}
