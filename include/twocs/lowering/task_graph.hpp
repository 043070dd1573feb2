// The task DAG that an iteration is lowered to: compute kernels and point-to-point transfers,
// with data dependencies and per-stream order edges. The engine runs it; analysis and report
// read it with the timeline.
//
// Storage is sized for tens of millions of tasks: one slim common record per task (`Task`),
// the kind-specific fields in one array per kind (`Kernel`, `Transfer`) that the record
// indexes, and the dependencies as a compressed adjacency (each task's successors in one flat
// array, built on the first read after a change; the predecessors, which only analysis reads,
// built from them on their own first read). Kernels are interned: the same operator on every
// micro-batch and device is one record, so a kernel task costs its `Task` alone; transfers
// (each with its own collective and step) keep one record each. A graph that has been
// compact()ed (and, for predecessors, read once) can be read from several threads;
// lower_iteration returns it compacted.
#pragma once

#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <twocs/lowering/stream.hpp>
#include <twocs/lowering/task_sink.hpp>

namespace twocs::lowering {

[[nodiscard]] std::string_view to_string(TaskKind k);

/// What every task has, whatever its kind, in 16 bytes (a plan of 50 M tasks holds 0.8 GB of
/// them): `detail` indexes the kernels or the transfers; the layer, the label's id, the kind and
/// the pass share the last four bytes (TaskGraph::add checks that they fit: layers up to
/// max_task_layer, label ids below max_task_labels).
struct Task {
  std::uint32_t detail = 0; // index into the graph's kernels or transfers
  DeviceId device = 0;      // the device computing, or the sender of a transfer
  std::int32_t micro_batch = -1;
  std::int16_t layer = -1; // transformer layer, -1 for embedding, head, optimizer
  TaskKind kind : 2 = TaskKind::compute;
  model::Pass pass : 2 = model::Pass::forward;
  std::uint16_t label : 12 = 0; // TaskGraph::label(label): "attn.qkv", "mlp.fc2.all_reduce"

  [[nodiscard]] bool is_transfer() const { return kind == TaskKind::transfer; }
  /// A kernel on the device (not a transfer, not the host launching one).
  [[nodiscard]] bool is_kernel() const { return kind == TaskKind::compute; }
  [[nodiscard]] bool is_host() const { return kind == TaskKind::host; }
};
static_assert(sizeof(Task) == 16, "a task's record is 16 bytes");

/// The largest transformer layer index a task can carry (Task::layer).
inline constexpr std::int32_t max_task_layer = 32767;
/// How many distinct labels a graph can hold (Task::label).
inline constexpr std::uint32_t max_task_labels = 4096;

class TaskGraph final : public TaskSink {
public:
  explicit TaskGraph(DeviceId device_count = 0);

  TaskId add_kernel(DeviceId device, const TaskTag& tag, const Kernel& kernel) override;
  TaskId add_transfer(DeviceId from, const TaskTag& tag, const Transfer& transfer) override;
  /// Stored as a kernel without work: kernel(id) gives its duration.
  TaskId add_host_launch(DeviceId device, const TaskTag& tag, units::Seconds duration) override;
  /// `after` may start only once `before` has finished. Self-loops are rejected.
  void add_dependency(TaskId before, TaskId after) override;

  /// Returns the id of `label`, adding it on first use.
  std::uint32_t intern_label(std::string_view label) override;
  [[nodiscard]] const std::string& label(std::uint32_t id) const { return labels_[id]; }
  [[nodiscard]] const std::string& label_of(TaskId id) const { return labels_[task(id).label]; }

  [[nodiscard]] std::size_t size() const { return tasks_.size(); }
  [[nodiscard]] std::size_t dependency_count() const { return unindexed_count_ + successors_.size(); }
  [[nodiscard]] DeviceId device_count() const { return device_count_; }
  [[nodiscard]] const Task& task(TaskId id) const { return tasks_[id]; }
  /// The kernel of a compute or host task / the transfer of a transfer task (checked in debug builds).
  [[nodiscard]] const Kernel& kernel(TaskId id) const;
  [[nodiscard]] const Transfer& transfer(TaskId id) const;
  /// The stream a task runs on: compute for kernels, its group's stream for transfers, host for
  /// host launches.
  [[nodiscard]] Stream stream(TaskId id) const;
  /// True when some task launches on the host (the host model is on).
  [[nodiscard]] bool has_host_tasks() const { return host_tasks_ > 0; }
  /// True when `device` computes `id`, sends it or receives it.
  [[nodiscard]] bool involves(TaskId id, DeviceId device) const;

  void on_collective_flows(std::int32_t collective, std::uint32_t flows) override;
  /// The transfers a rank of `collective` starts at once (on_collective_flows; 1 when not told).
  [[nodiscard]] std::uint32_t collective_flows(std::int32_t collective) const;

  [[nodiscard]] std::size_t predecessor_count(TaskId id) const { return predecessors(id).size(); }
  /// A task's successors in the order the dependencies were added.
  [[nodiscard]] std::span<const TaskId> successors(TaskId id) const;
  /// A task's predecessors in increasing id order (a repeated dependency repeats).
  [[nodiscard]] std::span<const TaskId> predecessors(TaskId id) const;
  template <class F> void for_each_successor(TaskId id, F&& f) const {
    for (TaskId next : successors(id)) f(next);
  }
  template <class F> void for_each_predecessor(TaskId id, F&& f) const {
    for (TaskId before : predecessors(id)) f(before);
  }

  /// A readable name: label plus layer and micro-batch, e.g. "attn.qkv L3 mb1".
  [[nodiscard]] std::string display_name(TaskId id) const;

  /// True when the dependencies contain no cycle.
  [[nodiscard]] bool is_acyclic() const;

  /// Room for `tasks` tasks in all (a hint: the lowering's count of the plan), so that the
  /// records are neither copied as they grow nor left with spare capacity.
  void reserve(std::size_t tasks);

  /// Builds the compressed adjacency now (reads do it on demand) and releases spare capacity.
  void compact();

  /// Heap bytes held by tasks and dependencies (not labels): for sizing large runs.
  [[nodiscard]] std::size_t heap_bytes() const;

private:
  TaskId add(DeviceId device, TaskKind kind, const TaskTag& tag, std::uint32_t detail);
  /// The index of `kernel`'s record, adding it on first use.
  std::uint32_t kernel_record(const Kernel& kernel);
  void index() const;
  void index_predecessors() const;
  /// Forgets predecessor rows read before a change (a task or dependency added): the next read
  /// rebuilds them.
  void drop_predecessor_rows() const;
  void unindex();
  void add_unindexed(TaskId before, TaskId after) const;

  /// Kernels equal in every field share a record (exact comparison: the same operator costed
  /// by the same model gives bitwise the same numbers).
  struct KernelHash {
    std::size_t operator()(const Kernel& k) const noexcept;
  };
  struct KernelEqual {
    bool operator()(const Kernel& a, const Kernel& b) const noexcept;
  };

  DeviceId device_count_;
  std::vector<Task> tasks_;
  std::vector<Kernel> kernels_; // distinct kernels only (kernel_record)
  std::unordered_map<Kernel, std::uint32_t, KernelHash, KernelEqual> kernel_ids_;
  std::vector<Transfer> transfers_;
  std::vector<std::uint16_t> collective_flows_; // per collective id; 0 or absent: 1
  std::size_t host_tasks_ = 0;
  // Dependencies added since the last index, in order, in blocks of a fixed size (no copy as
  // they grow, at most one block of spare room; index() frees each block once it is read); then
  // per task, in compressed form: successors_[successor_begin_[id] .. successor_begin_[id + 1]);
  // likewise predecessors_, empty until read (index_predecessors) and dropped at every change.
  mutable std::vector<std::vector<std::pair<TaskId, TaskId>>> unindexed_;
  mutable std::size_t unindexed_count_ = 0;
  mutable std::vector<std::uint32_t> successor_begin_, predecessor_begin_;
  mutable std::vector<TaskId> successors_, predecessors_;
  std::deque<std::string> labels_;
  std::unordered_map<std::string_view, std::uint32_t> label_ids_;
};

} // namespace twocs::lowering
