// Runs a task DAG on a platform with SimGrid and returns the timeline. This is the only part
// of twocs that includes SimGrid (in its .cpp files).
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>

#include <twocs/engine/timeline.hpp>
#include <twocs/lowering/task_graph.hpp>
#include <twocs/platform/topology.hpp>

namespace twocs::engine {

/// How far a simulation has got: tasks finished of the graph's total.
struct Progress {
  std::uint64_t done = 0;
  std::uint64_t total = 0;
};

/// Called by the engine as tasks finish, on the simulating thread; it must not throw. The
/// engine never prints: the caller renders progress (src/cli/progress.hpp).
using ProgressCallback = std::function<void(const Progress&)>;

struct EngineOptions {
  bool log_simgrid = false;                // let SimGrid print its own log lines (for debugging)
  ProgressCallback on_progress;            // optional: called every `progress_every` finished tasks
  std::uint64_t progress_every = 1U << 16; // ~0.1-0.6 s of simulation at 0.1-0.6 M tasks/s
};

struct EngineStats {
  std::uint64_t activities = 0; // SimGrid activities created (tasks that needed one)
  std::uint64_t peak_live_activities = 0;
};

/// The DAG did not run to completion (a cycle, or a task that could never start): an
/// internal error, reported with the first task that never ran.
class SimulationError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Simulates `graph` on `topology`. Device i of the graph runs on device i of the topology;
/// the topology must have at least graph.device_count() devices. Several simulations may run
/// one after the other in one process.
[[nodiscard]] Timeline simulate(const lowering::TaskGraph& graph, const platform::Topology& topology,
                                const EngineOptions& options = {}, EngineStats* stats = nullptr);

} // namespace twocs::engine
