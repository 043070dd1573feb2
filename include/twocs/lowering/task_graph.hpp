// The task DAG that an iteration is lowered to: compute kernels and point-to-point transfers,
// with data dependencies and per-stream order edges, stored in a Boost.Graph adjacency list.
// The engine runs it; analysis and report read it with the timeline.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <boost/graph/adjacency_list.hpp>

#include <twocs/model/operator.hpp>
#include <twocs/units/quantity.hpp>

namespace twocs::lowering {

using TaskId = std::uint32_t;
using DeviceId = std::int32_t;

enum class TaskKind : std::uint8_t {
  compute,  // a kernel on the device's compute stream; costs `duration`
  transfer, // `bytes` from `device` to `peer` over the platform's links; time emerges from the network
};

/// A CUDA stream of one device. Tasks on one stream run in order (order edges in the DAG);
/// tasks on different streams of a device may overlap.
enum class Stream : std::uint8_t { compute, tensor_comm, pipeline_comm, data_comm };

inline constexpr int stream_count = 4;
inline constexpr Stream all_streams[] = {Stream::compute, Stream::tensor_comm, Stream::pipeline_comm,
                                         Stream::data_comm};

[[nodiscard]] std::string_view to_string(TaskKind k);
[[nodiscard]] std::string_view to_string(Stream s);
/// The communication stream that carries collectives of `group`.
[[nodiscard]] Stream stream_for(model::CommGroup group);

struct Task {
  TaskKind kind = TaskKind::compute;
  Stream stream = Stream::compute;
  model::CommGroup group = model::CommGroup::tensor; // transfers only
  model::Pass pass = model::Pass::forward;
  DeviceId device = 0;     // the device computing, or the sender of a transfer
  DeviceId peer = -1;      // the receiver of a transfer; -1 for compute
  std::int32_t layer = -1; // transformer layer, -1 for embedding, head, optimizer
  std::int32_t micro_batch = -1;
  std::int32_t collective = -1; // collective instance this transfer belongs to
  std::int32_t step = -1;       // step of the collective's algorithm
  std::uint32_t label = 0;      // TaskGraph::label(label): "attn.qkv", "mlp.fc2.all_reduce"
  units::Seconds duration;      // compute: from the operator cost model
  units::Flops flops;           // compute: arithmetic work
  units::Bytes bytes;           // compute: HBM traffic; transfer: payload
  bool model_flops = false;     // compute: counts towards model FLOPs (MFU)

  [[nodiscard]] bool is_transfer() const { return kind == TaskKind::transfer; }
};

class TaskGraph {
public:
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, Task>;

  explicit TaskGraph(DeviceId device_count = 0);

  TaskId add_task(const Task& task);
  /// `after` may start only once `before` has finished. Self-loops are rejected.
  void add_dependency(TaskId before, TaskId after);

  /// Returns the id of `label`, adding it on first use.
  std::uint32_t intern_label(std::string_view label);
  [[nodiscard]] const std::string& label(std::uint32_t id) const { return labels_[id]; }
  [[nodiscard]] const std::string& label_of(TaskId id) const { return labels_[task(id).label]; }

  [[nodiscard]] std::size_t size() const { return boost::num_vertices(graph_); }
  [[nodiscard]] std::size_t dependency_count() const { return boost::num_edges(graph_); }
  [[nodiscard]] DeviceId device_count() const { return device_count_; }
  [[nodiscard]] const Task& task(TaskId id) const { return graph_[id]; }
  [[nodiscard]] std::size_t predecessor_count(TaskId id) const { return boost::in_degree(id, graph_); }
  [[nodiscard]] const Graph& graph() const { return graph_; }

  /// Calls f(successor) for every task that waits on `id`.
  template <class F> void for_each_successor(TaskId id, F&& f) const {
    for (auto [it, end] = boost::out_edges(id, graph_); it != end; ++it)
      f(static_cast<TaskId>(boost::target(*it, graph_)));
  }
  template <class F> void for_each_predecessor(TaskId id, F&& f) const {
    for (auto [it, end] = boost::in_edges(id, graph_); it != end; ++it)
      f(static_cast<TaskId>(boost::source(*it, graph_)));
  }

  /// A readable name: label plus layer and micro-batch, e.g. "attn.qkv L3 mb1".
  [[nodiscard]] std::string display_name(TaskId id) const;

  /// True when the dependencies contain no cycle (Boost topological sort).
  [[nodiscard]] bool is_acyclic() const;

private:
  Graph graph_;
  DeviceId device_count_;
  std::deque<std::string> labels_;
  std::unordered_map<std::string_view, std::uint32_t> label_ids_;
};

} // namespace twocs::lowering
