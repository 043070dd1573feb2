// One whole iteration lowered and simulated on a small A100 node with the roofline cost
// model: the graph and its summary, for end-to-end tests of the parallelism dimensions.
#pragma once

#include <cstdint>

#include <twocs/analysis/summarize.hpp>
#include <twocs/cost/roofline.hpp>
#include <twocs/engine/simulate.hpp>
#include <twocs/lowering/lower_iteration.hpp>
#include <twocs/model/validate.hpp>
#include <twocs/platform/topology.hpp>

#include "support/scenarios.hpp"

namespace twocs::testing {

struct IterationRun {
  lowering::TaskGraph graph;
  analysis::Summary summary;
};

/// Checks the plan, lowers it (folding replicas when `fold`) and simulates it on one node of
/// `devices` A100s.
inline IterationRun simulate_iteration(const model::TransformerConfig& m, const model::TrainingPlan& plan,
                                       std::int64_t devices, bool fold = false) {
  model::validate(m, plan);
  const auto cluster = cluster_of(1, devices);
  const cost::RooflineCostModel cost(cluster.device);
  lowering::LoweringOptions options;
  options.fold_replicas = fold;
  IterationRun run{lowering::lower_iteration(m, plan, cost, options), {}};
  const auto timeline = engine::simulate(run.graph, platform::build_topology(cluster, plan.world_size()));
  run.summary = analysis::summarize(run.graph, timeline, m, plan, cluster);
  return run;
}

} // namespace twocs::testing
