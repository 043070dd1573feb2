// The results of one simulated iteration, as reported by `twocs run` (table, --json).
// Field meanings follow the contract (docs/outputs.md).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <twocs/model/memory.hpp>
#include <twocs/model/operator.hpp>
#include <twocs/units/quantity.hpp>

namespace twocs::analysis {

/// Where the iteration time of one device goes. compute + exposed_comm + idle = iteration time;
/// overlapped_comm is communication hidden under compute (part of `compute`).
struct Breakdown {
  units::Seconds compute;         // at least one compute kernel runs
  units::Seconds exposed_comm;    // communication runs, no compute runs
  units::Seconds overlapped_comm; // communication runs while compute runs
  units::Seconds idle;            // neither: pipeline bubbles, waiting
};

/// Per communication group (tensor, pipeline, data), indexed by model::CommGroup.
using PerGroup = std::array<units::Seconds, model::comm_group_count>;

[[nodiscard]] constexpr std::size_t index(model::CommGroup g) { return static_cast<std::size_t>(g); }

struct MemorySummary {
  units::Bytes peak;     // the largest per-device peak over stages
  units::Bytes capacity; // device memory
  bool fits = true;
  model::MemoryReport report;
};

/// The approximations a run used, so that a result never changes silently (issue "Performance
/// and scale"): each is named in the table and the JSON summary.
struct Approximations {
  /// Steady-state replay (--replay; analysis/steady_state.hpp): `simulated` of `micro_batches`
  /// per replica ran, the rest added as `period`-micro-batch repetitions of `period_time` each.
  struct Replay {
    bool replayed = false;
    std::int64_t micro_batches = 0;
    std::int64_t simulated = 0;
    std::int64_t period = 0;
    units::Seconds period_time;
    std::string reason; // why it replayed or not (the --replay decision)
  };
  bool folded = false;                      // one device per pipeline stage simulated, its replicas mirrored
  std::string fold_reason;                  // why it folded or not (the --fold decision)
  std::string collective_lowering = "step"; // --collective-lowering: step, coarse or auto
  std::int64_t coarse_collectives = 0;      // ring collectives lowered as one transfer per link
  Replay replay;
};

/// How the plan was chosen: as written (objective "none") or by the plan search of
/// src/planning, with how many plans it weighed (docs/outputs.md, "plan").
struct PlanChoice {
  std::string objective = "none"; // none | smallest | fastest
  std::int64_t considered = 0;    // combinations of degrees, micro-batch and recomputation tried
  std::int64_t valid = 0;         // of those, plans that divide the model and the cluster
  std::int64_t fitting = 0;       // of those, plans that fit in device memory
  std::int64_t simulated = 0;     // of those, plans simulated to choose (fastest)
};
/// Per communication group, how many of its collectives ran each algorithm ("ring", "tree", ...;
/// lowering::to_string(Algorithm)), counted once per collective lowered (folded: per group simulated).
using AlgorithmCounts = std::array<std::map<std::string, std::int64_t>, model::comm_group_count>;

struct Summary {
  std::string workload_name;
  std::string platform_name;
  units::Seconds iteration_time;
  std::int64_t world_size = 0;
  std::int64_t simulated_devices = 0; // devices whose programs ran; fewer than world_size when folded
  std::int32_t measured_device = 0;   // the device that finishes last; breakdowns are measured on it
  Breakdown breakdown;
  PerGroup exposed_comm_by_group{};       // exposed time split evenly among the groups active at once
  PerGroup comm_busy_by_group{};          // time each group's communication runs on the measured device
  PerGroup overlapped_comm_by_group{};    // overlapped time split evenly among the groups active at once
  units::Seconds comm_busy;               // time any communication runs on the measured device
  units::Seconds host_wait;               // time its kernels waited only for their host's launch
  double comm_fraction = 0;               // comm_busy / (compute + comm_busy)
  double exposed_comm_fraction = 0;       // exposed_comm / iteration_time
  units::Flops model_flops;               // per iteration, all devices, no recomputation
  units::FlopRate model_flops_per_device; // model_flops / (iteration_time * world_size)
  double mfu = 0;                         // model_flops_per_device / device peak for the dtype
  MemorySummary memory;
  std::uint64_t simulated_tasks = 0;
  units::Seconds wall_time; // host time spent, lowering to analysis
  Approximations approximations;
  model::TrainingPlan plan; // the plan that ran (the searched one with a plan search)
  PlanChoice plan_choice;
  AlgorithmCounts collective_algorithms; // which algorithm each group's collectives ran
};

} // namespace twocs::analysis
