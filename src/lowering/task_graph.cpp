#include <twocs/lowering/task_graph.hpp>

#include <algorithm>
#include <cassert>
#include <functional>
#include <stdexcept>

#include <fmt/format.h>

namespace twocs::lowering {

std::string_view to_string(TaskKind k) {
  switch (k) {
  case TaskKind::compute: return "compute";
  case TaskKind::transfer: return "transfer";
  case TaskKind::host: return "host";
  }
  return "?";
}

std::string_view to_string(Stream s) {
  switch (s) {
  case Stream::compute: return "compute";
  case Stream::tensor_comm: return "comm.tensor";
  case Stream::pipeline_comm: return "comm.pipeline";
  case Stream::data_comm: return "comm.data";
  case Stream::expert_comm: return "comm.expert";
  case Stream::context_comm: return "comm.context";
  case Stream::host: return "host";
  }
  return "?";
}

Stream stream_for(model::CommGroup group) {
  switch (group) {
  case model::CommGroup::tensor: return Stream::tensor_comm;
  case model::CommGroup::pipeline: return Stream::pipeline_comm;
  case model::CommGroup::data: return Stream::data_comm;
  case model::CommGroup::expert: return Stream::expert_comm;
  case model::CommGroup::context: return Stream::context_comm;
  }
  return Stream::tensor_comm;
}

// The footprint the scale goals rest on (tens of millions of tasks): keep these records small.
static_assert(sizeof(Task) <= 24 && sizeof(Transfer) <= 24 && sizeof(Kernel) <= 32);

TaskGraph::TaskGraph(DeviceId device_count) : device_count_(device_count) {}

TaskId TaskGraph::add(DeviceId device, TaskKind kind, const TaskTag& tag, std::uint32_t detail) {
  assert(device >= 0 && device < device_count_);
  const auto id = static_cast<TaskId>(tasks_.size());
  if (tag.layer < -1 || tag.layer > max_task_layer)
    throw std::length_error(fmt::format("layer {} is outside a task's range (-1 .. {})", tag.layer, max_task_layer));
  if (tag.label >= max_task_labels)
    throw std::length_error(
        fmt::format("label id {} is outside a task's range (0 .. {})", tag.label, max_task_labels - 1));
  Task task;
  task.detail = detail;
  task.device = device;
  task.micro_batch = tag.micro_batch;
  task.layer = static_cast<std::int16_t>(tag.layer);
  task.kind = kind;
  task.pass = tag.pass;
  task.label = static_cast<std::uint16_t>(tag.label & (max_task_labels - 1)); // checked above
  tasks_.push_back(task);
  if (!successor_begin_.empty()) successor_begin_.push_back(successor_begin_.back()); // indexed: no dependencies yet
  drop_predecessor_rows();
  return id;
}

std::size_t TaskGraph::KernelHash::operator()(const Kernel& k) const noexcept {
  // boost::hash_combine's mixing step over the fields' own hashes (std::hash<double> maps 0.0
  // and -0.0 alike, as KernelEqual's comparison does).
  std::size_t seed = std::hash<double>{}(k.duration.value());
  const auto mix = [&seed](std::size_t h) { seed ^= h + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2); };
  mix(std::hash<double>{}(k.flops.value()));
  mix(std::hash<double>{}(k.bytes.value()));
  mix(std::hash<float>{}(k.clock_share));
  mix(static_cast<std::size_t>(k.model_flops));
  return seed;
}

bool TaskGraph::KernelEqual::operator()(const Kernel& a, const Kernel& b) const noexcept {
  return a.duration == b.duration && a.flops == b.flops && a.bytes == b.bytes && a.model_flops == b.model_flops &&
         a.clock_share == b.clock_share;
}

std::uint32_t TaskGraph::kernel_record(const Kernel& kernel) {
  const auto [it, added] = kernel_ids_.try_emplace(kernel, static_cast<std::uint32_t>(kernels_.size()));
  if (added) kernels_.push_back(kernel);
  return it->second;
}

TaskId TaskGraph::add_kernel(DeviceId device, const TaskTag& tag, const Kernel& kernel) {
  return add(device, TaskKind::compute, tag, kernel_record(kernel));
}

TaskId TaskGraph::add_host_launch(DeviceId device, const TaskTag& tag, units::Seconds duration) {
  ++host_tasks_;
  return add(device, TaskKind::host, tag, kernel_record({duration, units::Flops{}, units::Bytes{}, false}));
}

TaskId TaskGraph::add_transfer(DeviceId from, const TaskTag& tag, const Transfer& transfer) {
  assert(transfer.peer >= 0 && transfer.peer < device_count_ && transfer.peer != from);
  transfers_.push_back(transfer);
  return add(from, TaskKind::transfer, tag, static_cast<std::uint32_t>(transfers_.size() - 1));
}

void TaskGraph::on_collective_flows(std::int32_t collective, std::uint32_t flows) {
  assert(collective >= 0);
  if (flows <= 1) return;
  const auto at = static_cast<std::size_t>(collective);
  if (collective_flows_.size() <= at) collective_flows_.resize(at + 1, 0);
  collective_flows_[at] = static_cast<std::uint16_t>(std::min<std::uint32_t>(flows, 0xFFFF));
}

std::uint32_t TaskGraph::collective_flows(std::int32_t collective) const {
  const auto at = static_cast<std::size_t>(collective);
  if (collective < 0 || at >= collective_flows_.size()) return 1;
  return std::max<std::uint32_t>(collective_flows_[at], 1);
}

void TaskGraph::add_dependency(TaskId before, TaskId after) {
  assert(before != after && before < size() && after < size());
  if (!successors_.empty()) unindex();
  add_unindexed(before, after);
}

const Kernel& TaskGraph::kernel(TaskId id) const {
  assert(!task(id).is_transfer());
  return kernels_[task(id).detail];
}

const Transfer& TaskGraph::transfer(TaskId id) const {
  assert(task(id).is_transfer());
  return transfers_[task(id).detail];
}

Stream TaskGraph::stream(TaskId id) const {
  if (task(id).is_host()) return Stream::host;
  return task(id).is_transfer() ? stream_for(transfer(id).group) : Stream::compute;
}

bool TaskGraph::involves(TaskId id, DeviceId device) const {
  return task(id).device == device || (task(id).is_transfer() && transfer(id).peer == device);
}

std::uint32_t TaskGraph::intern_label(std::string_view label) {
  if (auto it = label_ids_.find(label); it != label_ids_.end()) return it->second;
  const auto id = static_cast<std::uint32_t>(labels_.size());
  if (id >= max_task_labels)
    throw std::length_error(fmt::format("more than {} distinct task labels (at '{}')", max_task_labels, label));
  labels_.emplace_back(label); // std::deque keeps earlier strings (and the views into them) in place
  label_ids_.emplace(labels_.back(), id);
  return id;
}

std::string TaskGraph::display_name(TaskId id) const {
  const Task& t = task(id);
  std::string name = label(t.label);
  if (t.layer >= 0) name += fmt::format(" L{}", t.layer);
  if (t.micro_batch >= 0) name += fmt::format(" mb{}", t.micro_batch);
  if (t.is_transfer()) name += fmt::format(" {}->{}", t.device, transfer(id).peer);
  return name;
}

} // namespace twocs::lowering
