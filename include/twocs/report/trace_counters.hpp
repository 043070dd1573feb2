// Counter tracks of the --trace outputs: values that change over the simulated iteration,
// computed from the task graph and its timeline after the simulation (docs/outputs.md, "Counter
// tracks"). Each is a step function: a sample holds until the next one.
//   - link utilisation: per direction of each link a kept device's transfers cross, the summed
//     average rate of the transfers streaming over it, in whole percent of its sustained bandwidth;
//   - memory in use: per device, its stage's weights, gradients, optimizer state and buffers,
//     plus the activations of each (micro-batch, layer) from its first forward task to its last
//     backward task.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <twocs/engine/timeline.hpp>
#include <twocs/lowering/task_graph.hpp>
#include <twocs/model/memory.hpp>
#include <twocs/model/training_plan.hpp>
#include <twocs/platform/topology.hpp>
#include <twocs/report/chrome_trace.hpp>
#include <twocs/units/quantity.hpp>

namespace twocs::report {

enum class CounterUnit { percent, bytes, count };

struct CounterSample {
  units::Seconds time;
  double value = 0;
};

struct CounterTrack {
  std::string name; // "memory in use", "node 0 NIC 1 -> network"
  CounterUnit unit = CounterUnit::count;
  std::optional<lowering::DeviceId> device; // the device it belongs to; none: a link of the platform
  std::vector<CounterSample> samples;       // by time, one per change; the first at the window's start
};

/// What a device holds: its stage's resident state, and one layer's activations of one micro-batch.
struct DeviceMemory {
  units::Bytes resident;
  units::Bytes layer_activations;
};

/// Per device of the plan, from the memory model's stages (model/memory.hpp): resident = weights
/// + gradients + optimizer state + communication buffers; a layer's activations of a micro-batch =
/// the stage's peak activations / (micro-batches in flight x layers), so that the counter's peak
/// approaches the model's.
[[nodiscard]] std::vector<DeviceMemory> device_memory(const model::MemoryReport& memory,
                                                      const model::Parallelism& parallelism);

[[nodiscard]] std::vector<CounterTrack> link_utilisation_tracks(const lowering::TaskGraph& graph,
                                                                const engine::Timeline& timeline,
                                                                const platform::Topology& topology,
                                                                const TraceFilter& filter);

/// `memory` indexed by device; devices beyond it, or without tasks (folded mirrors), get no track.
[[nodiscard]] std::vector<CounterTrack> memory_tracks(const lowering::TaskGraph& graph,
                                                      const engine::Timeline& timeline,
                                                      const std::vector<DeviceMemory>& memory,
                                                      const TraceFilter& filter);

/// The name of one direction of link `link` of `topology` ("device 3 -> node switch").
[[nodiscard]] std::string link_name(const platform::Topology& topology, std::int64_t link, bool up);

} // namespace twocs::report
