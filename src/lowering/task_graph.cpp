#include <twocs/lowering/task_graph.hpp>

#include <cassert>
#include <iterator>

#include <boost/graph/topological_sort.hpp>
#include <fmt/format.h>

namespace twocs::lowering {

std::string_view to_string(TaskKind k) { return k == TaskKind::compute ? "compute" : "transfer"; }

std::string_view to_string(Stream s) {
  switch (s) {
  case Stream::compute: return "compute";
  case Stream::tensor_comm: return "comm.tensor";
  case Stream::pipeline_comm: return "comm.pipeline";
  case Stream::data_comm: return "comm.data";
  }
  return "?";
}

Stream stream_for(model::CommGroup group) {
  switch (group) {
  case model::CommGroup::tensor: return Stream::tensor_comm;
  case model::CommGroup::pipeline: return Stream::pipeline_comm;
  case model::CommGroup::data: return Stream::data_comm;
  }
  return Stream::tensor_comm;
}

TaskGraph::TaskGraph(DeviceId device_count) : device_count_(device_count) {}

TaskId TaskGraph::add_task(const Task& task) {
  assert(task.device >= 0 && task.device < device_count_);
  assert(task.kind == TaskKind::compute || (task.peer >= 0 && task.peer < device_count_ && task.peer != task.device));
  return static_cast<TaskId>(boost::add_vertex(task, graph_));
}

void TaskGraph::add_dependency(TaskId before, TaskId after) {
  assert(before != after && before < size() && after < size());
  boost::add_edge(before, after, graph_);
}

std::uint32_t TaskGraph::intern_label(std::string_view label) {
  if (auto it = label_ids_.find(label); it != label_ids_.end()) return it->second;
  const auto id = static_cast<std::uint32_t>(labels_.size());
  labels_.emplace_back(label); // std::deque keeps earlier strings (and the views into them) in place
  label_ids_.emplace(labels_.back(), id);
  return id;
}

std::string TaskGraph::display_name(TaskId id) const {
  const Task& t = task(id);
  std::string name = label(t.label);
  if (t.layer >= 0) name += fmt::format(" L{}", t.layer);
  if (t.micro_batch >= 0) name += fmt::format(" mb{}", t.micro_batch);
  if (t.is_transfer()) name += fmt::format(" {}->{}", t.device, t.peer);
  return name;
}

bool TaskGraph::is_acyclic() const {
  std::vector<TaskId> order;
  order.reserve(size());
  try {
    boost::topological_sort(graph_, std::back_inserter(order));
  } catch (const boost::not_a_dag&) {
    return false;
  }
  return true;
}

} // namespace twocs::lowering
