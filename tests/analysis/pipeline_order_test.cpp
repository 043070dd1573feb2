// Golden test of the order in which pipeline stages run their forward (F) and backward (B)
// passes on the simulated timeline, per schedule. The 1F1B pattern (warm-up forwards, then
// one forward one backward, then the drain) must emerge from the simulation.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "support/golden.hpp"
#include "support/scenarios.hpp"

#include <twocs/cost/roofline.hpp>
#include <twocs/engine/simulate.hpp>
#include <twocs/lowering/lower_iteration.hpp>
#include <twocs/platform/topology.hpp>

using namespace twocs;

namespace {

/// "stage 0: F0 F1 F2 B0 ..." from the start times of each device's kernels.
std::string work_order(model::PipelineSchedule schedule, std::int64_t p, std::int64_t m, std::int64_t v) {
  const auto model = testing::gpt(2 * p * v, 512, 8, 512, 1024);
  auto plan = testing::plan_of(1, p, 1, m);
  plan.parallelism.virtual_stages = v;
  plan.pipeline_schedule = schedule;
  const auto cluster = testing::cluster_of(p, 1);
  const cost::RooflineCostModel cost(cluster.device);
  const auto graph = lowering::lower_iteration(model, plan, cost);
  const auto timeline = engine::simulate(graph, platform::build_topology(cluster, p));
  std::string text = std::string(model::to_string(schedule)) + "\n";
  for (lowering::DeviceId d = 0; d < p; ++d) {
    struct Kernel {
      double start;
      lowering::TaskId id;
    };
    std::vector<Kernel> kernels;
    for (lowering::TaskId id = 0; id < graph.size(); ++id) {
      const auto& t = graph.task(id);
      if (!t.is_transfer() && t.device == d && t.micro_batch >= 0 && t.pass != model::Pass::recompute)
        kernels.push_back({timeline.tasks[id].start.value(), id});
    }
    std::stable_sort(kernels.begin(), kernels.end(),
                     [](const Kernel& a, const Kernel& b) { return a.start < b.start; });
    text += "stage " + std::to_string(d) + ":";
    std::string last;
    for (const auto& k : kernels) {
      const auto& t = graph.task(k.id);
      // Layer l of the model belongs to chunk l / 2 (two layers per chunk).
      const std::string chunk = v > 1 && t.layer >= 0 ? "c" + std::to_string(t.layer / 2) : "";
      const std::string item = (t.pass == model::Pass::forward ? "F" : "B") + std::to_string(t.micro_batch) + chunk;
      if (item != last && (chunk.size() > 0 || v == 1)) text += " " + item;
      if (chunk.size() > 0 || v == 1) last = item;
    }
    text += "\n";
  }
  return text;
}

} // namespace

TEST_CASE("pipeline schedules run their passes in the order of the schedule (golden)") {
  std::string text = work_order(model::PipelineSchedule::gpipe, 4, 6, 1);
  text += work_order(model::PipelineSchedule::one_f_one_b, 4, 6, 1);
  text += work_order(model::PipelineSchedule::interleaved_one_f_one_b, 2, 4, 2);
  twocs::testing::check_golden("pipeline_order.txt", text);
}
