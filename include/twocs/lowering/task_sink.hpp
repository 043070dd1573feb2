// The kinds of task the lowering emits, and the interface it emits them through. A TaskGraph
// stores them; a TaskCounter (task_count.hpp) only counts them, so that the size of a plan
// comes from the same code that builds it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include <twocs/lowering/collective_algorithm.hpp>
#include <twocs/model/operator.hpp>
#include <twocs/units/quantity.hpp>

namespace twocs::lowering {

using TaskId = std::uint32_t;
using DeviceId = std::int32_t;

enum class TaskKind : std::uint8_t {
  compute,  // a kernel on the device's compute stream; costs its `Kernel::duration`
  transfer, // `Transfer::bytes` from the device to its peer; time emerges from the network
  /// The host (CPU thread driving the device) launching a kernel or collective: `Kernel::duration`
  /// of host time, in program order, that the work it launches waits for (device_program.hpp).
  host,
};

/// Where a task belongs in the iteration, whatever its kind.
struct TaskTag {
  model::Pass pass = model::Pass::forward;
  std::int32_t layer = -1; // transformer layer, -1 for embedding, head, optimizer
  std::int32_t micro_batch = -1;
  std::uint32_t label = 0; // an interned label
};

/// A kernel on a device's compute stream.
struct Kernel {
  units::Seconds duration;  // from the operator cost model
  units::Flops flops;       // arithmetic work
  units::Bytes bytes;       // HBM traffic
  bool model_flops = false; // counts towards model FLOPs (MFU)
  /// The share of `duration` that runs at the SM clock (cost::OperatorCostModel::clock_share):
  /// what a slower device (speed variation) stretches; memory-bound kernels and host-side
  /// overheads are 0.
  float clock_share = 1.0F;
};

/// A point-to-point message from the task's device to `peer`, one step of a collective.
struct Transfer {
  units::Bytes bytes;           // payload
  DeviceId peer = -1;           // the receiver
  std::int32_t collective = -1; // collective instance this transfer belongs to
  std::int32_t step = -1;       // step of the collective's algorithm
  model::CommGroup group = model::CommGroup::tensor;
  Algorithm algorithm = Algorithm::ring; // of the collective (send-recv: ring), for the summary and traces
  /// Message latencies the transfer pays: 1, or a coarse ring's steps, the engine waiting
  /// (latency_steps - 1) route latencies before the bytes move (collective_lowering.hpp).
  std::uint16_t latency_steps = 1;
};

class TaskSink {
public:
  virtual ~TaskSink() = default;
  virtual TaskId add_kernel(DeviceId device, const TaskTag& tag, const Kernel& kernel) = 0;
  virtual TaskId add_transfer(DeviceId from, const TaskTag& tag, const Transfer& transfer) = 0;
  /// `duration` of the device's host launching the work tagged `tag`.
  virtual TaskId add_host_launch(DeviceId device, const TaskTag& tag, units::Seconds duration) = 0;
  /// `after` may start only once `before` has finished.
  virtual void add_dependency(TaskId before, TaskId after) = 0;
  /// The id of `label`, the same for the same text.
  virtual std::uint32_t intern_label(std::string_view label) = 0;
  /// A collective over `devices` devices was lowered from one member's side only (the others
  /// folded away); unfolded, the whole collective has `transfers` transfers. For counting.
  virtual void on_folded_collective(std::size_t devices, std::uint64_t transfers) {
    (void)devices;
    (void)transfers;
  }
  /// Collective `collective` was lowered into `flows` transfers that one of its ranks starts at
  /// once (at most, over its ranks): the engine gives the collective one share of a link it
  /// shares with others, whatever its lowering's count (docs/network.md, "Concurrent collectives").
  virtual void on_collective_flows(std::int32_t collective, std::uint32_t flows) {
    (void)collective;
    (void)flows;
  }
};

} // namespace twocs::lowering
