#include <twocs/planning/estimate.hpp>

#include <algorithm>
#include <cstddef>

namespace twocs::planning {

namespace {
constexpr auto tensor = static_cast<std::size_t>(model::CommGroup::tensor);
constexpr auto pipeline = static_cast<std::size_t>(model::CommGroup::pipeline);
constexpr auto data = static_cast<std::size_t>(model::CommGroup::data);
constexpr auto context = static_cast<std::size_t>(model::CommGroup::context);
constexpr auto expert = static_cast<std::size_t>(model::CommGroup::expert);
} // namespace

Estimate estimate_iteration(const projection::Projection& projection, const model::TrainingPlan& plan) {
  const auto& p = plan.parallelism;
  const projection::Work& it = projection.iteration;
  // One micro-batch on one stage: its layers' kernels and their (exposed) tensor-parallel
  // all-reduces, forward, backward and recomputation.
  // Context-parallel K/V exchanges are counted as exposed: the ring hides them under attention
  // steps only when a step's attention outlasts its hand-over (docs/simulation.md), which the
  // simulation of the `fastest` search then shows.
  // Expert all-to-alls sit between the layer's kernels that need their tokens: exposed too.
  const projection::Work& layers = projection.stage;
  const units::Seconds stage_micro =
      layers.compute + layers.comm_time[tensor] + layers.comm_time[context] + layers.comm_time[expert];
  // 1F1B and interleaved 1F1B idle (p - 1) / v micro-batch slots of the stage per iteration
  // (Narayanan et al. SC'21, section 2.2: bubble fraction (p - 1) / (v m)).
  const units::Seconds bubble =
      stage_micro * (static_cast<double>(p.pipeline - 1) / static_cast<double>(p.virtual_stages));
  // Gradient buckets reduce during the last micro-batch's backward pass, about two thirds of its
  // work (backward = 2 x forward FLOPs; Narayanan et al. SC'21, eq. 3); the rest is exposed.
  const units::Seconds hidden = plan.overlap.dp_grad_reduce ? stage_micro * (2.0 / 3.0) : units::Seconds(0);
  const units::Seconds exposed_data = std::max(units::Seconds(0), it.comm_time[data] - hidden);
  Estimate e;
  e.time = it.compute + it.comm_time[tensor] + it.comm_time[context] + it.comm_time[expert] + it.comm_time[pipeline] +
           bubble + exposed_data;
  e.lower_bound = projection.time_full_overlap;
  return e;
}

} // namespace twocs::planning
