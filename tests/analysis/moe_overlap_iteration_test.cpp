// Megatron-Core's MoE overlaps end to end: the kernels a device runs do not change, and the
// iteration saves no more than the work moved under the all-to-alls, nor more than the expert
// communication it exposed without them.
#include <doctest/doctest.h>

#include <string>

#include "support/iteration_run.hpp"
#include "support/scenarios.hpp"

using namespace twocs;

namespace {

/// Two MoE layers of 8 experts (top 2) and one shared expert, over an expert-parallel group of 4.
model::TransformerConfig shared_moe() {
  auto m = testing::gpt(2, 1024, 16, 1024);
  m.ffn_kind = model::FfnKind::swiglu;
  m.moe = model::MoeConfig{8, 2, 1024, 1, 0, 0, 1.0};
  return m;
}

model::TrainingPlan expert_plan(bool shared, bool wgrad) {
  auto plan = testing::plan_of(1, 1, 4, 2);
  plan.parallelism.expert = 4;
  plan.overlap.shared_experts = shared;
  plan.overlap.expert_wgrad = wgrad;
  return plan;
}

/// Device 0's kernel time in all, and that of the kernels whose label starts with `prefix`.
double kernel_time(const testing::IterationRun& run, const std::string& prefix = "") {
  double t = 0;
  for (lowering::TaskId id = 0; id < run.graph.size(); ++id)
    if (!run.graph.task(id).is_transfer() && run.graph.task(id).device == 0 &&
        run.graph.label(run.graph.task(id).label).rfind(prefix, 0) == 0)
      t += run.graph.kernel(id).duration.value();
  return t;
}

double exposed_expert(const testing::IterationRun& run) {
  return run.summary.exposed_comm_by_group[analysis::index(model::CommGroup::expert)].value();
}

} // namespace

TEST_CASE("shared-expert overlap hides the shared MLP under the token exchanges, and no more") {
  const auto plain = testing::simulate_iteration(shared_moe(), expert_plan(false, false), 4);
  const auto overlapped = testing::simulate_iteration(shared_moe(), expert_plan(true, false), 4);
  CHECK(kernel_time(overlapped) == doctest::Approx(kernel_time(plain)).epsilon(1e-12));
  const double saved = plain.summary.iteration_time.value() - overlapped.summary.iteration_time.value();
  CHECK(saved > 0);
  // Every MLP kernel here is the shared expert's (all layers are MoE layers).
  CHECK(saved <= kernel_time(plain, "mlp.") * (1 + 1e-9));
  CHECK(saved <= exposed_expert(plain) * (1 + 1e-9));
  CHECK(exposed_expert(overlapped) < exposed_expert(plain));
}

TEST_CASE("delayed expert weight gradients hide under the dispatch's backward all-to-all") {
  const auto plain = testing::simulate_iteration(shared_moe(), expert_plan(false, false), 4);
  const auto delayed = testing::simulate_iteration(shared_moe(), expert_plan(false, true), 4);
  CHECK(kernel_time(delayed) == doctest::Approx(kernel_time(plain)).epsilon(1e-12));
  const double saved = plain.summary.iteration_time.value() - delayed.summary.iteration_time.value();
  CHECK(saved > 0);
  const double wgrad = kernel_time(plain, "moe.experts.fc1.wgrad") + kernel_time(plain, "moe.experts.fc2.wgrad");
  CHECK(wgrad > 0);
  CHECK(saved <= wgrad * (1 + 1e-9));
  CHECK(exposed_expert(delayed) < exposed_expert(plain));
}
