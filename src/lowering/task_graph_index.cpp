// The dependencies of a TaskGraph in compressed form: per task a range of a flat array of
// successors and one of predecessors (compressed sparse rows). Built by a stable counting sort
// of the dependencies in the order they were added, so every task lists its successors and
// predecessors in that order, as an adjacency list would.
#include <twocs/lowering/task_graph.hpp>

#include <cassert>

namespace twocs::lowering {
namespace {

/// Rows of `edges` grouped by `key` (first or second of each pair), each listing the other end.
void compress(const std::vector<std::pair<TaskId, TaskId>>& edges, std::size_t tasks, bool by_first,
              std::vector<std::uint32_t>& begin, std::vector<TaskId>& ends) {
  begin.assign(tasks + 1, 0);
  for (const auto& [from, to] : edges) ++begin[(by_first ? from : to) + 1];
  for (std::size_t i = 0; i < tasks; ++i) begin[i + 1] += begin[i];
  std::vector<std::uint32_t> cursor(begin.begin(), begin.end() - 1);
  ends.resize(edges.size());
  for (const auto& [from, to] : edges) ends[cursor[by_first ? from : to]++] = by_first ? to : from;
}

} // namespace

void TaskGraph::index() const {
  if (unindexed_.empty() && successor_begin_.size() == tasks_.size() + 1) return;
  assert(successors_.empty() && "dependencies are either all indexed or none");
  compress(unindexed_, tasks_.size(), true, successor_begin_, successors_);
  compress(unindexed_, tasks_.size(), false, predecessor_begin_, predecessors_);
  unindexed_.clear();
  unindexed_.shrink_to_fit();
}

void TaskGraph::unindex() {
  // Read the rows directly: successors() would index again.
  unindexed_.reserve(successors_.size() + 1);
  for (std::size_t id = 0; id + 1 < successor_begin_.size(); ++id)
    for (std::uint32_t k = successor_begin_[id]; k < successor_begin_[id + 1]; ++k)
      unindexed_.emplace_back(static_cast<TaskId>(id), successors_[k]);
  successors_ = {};
  predecessors_ = {};
  successor_begin_ = {};
  predecessor_begin_ = {};
}

std::span<const TaskId> TaskGraph::successors(TaskId id) const {
  index();
  return {successors_.data() + successor_begin_[id], successors_.data() + successor_begin_[id + 1]};
}

std::span<const TaskId> TaskGraph::predecessors(TaskId id) const {
  index();
  return {predecessors_.data() + predecessor_begin_[id], predecessors_.data() + predecessor_begin_[id + 1]};
}

void TaskGraph::compact() {
  index();
  tasks_.shrink_to_fit();
  kernels_.shrink_to_fit();
  transfers_.shrink_to_fit();
}

bool TaskGraph::is_acyclic() const {
  // Kahn's algorithm: the graph is acyclic when repeatedly removing tasks without
  // predecessors removes them all.
  std::vector<std::uint32_t> waiting(size());
  std::vector<TaskId> ready;
  for (TaskId id = 0; id < size(); ++id)
    if ((waiting[id] = static_cast<std::uint32_t>(predecessor_count(id))) == 0) ready.push_back(id);
  std::size_t removed = 0;
  while (!ready.empty()) {
    const TaskId id = ready.back();
    ready.pop_back();
    ++removed;
    for (TaskId next : successors(id))
      if (--waiting[next] == 0) ready.push_back(next);
  }
  return removed == size();
}

std::size_t TaskGraph::heap_bytes() const {
  return tasks_.capacity() * sizeof(Task) + kernels_.capacity() * sizeof(Kernel) +
         transfers_.capacity() * sizeof(Transfer) + unindexed_.capacity() * sizeof(unindexed_[0]) +
         (successor_begin_.capacity() + predecessor_begin_.capacity()) * sizeof(std::uint32_t) +
         (successors_.capacity() + predecessors_.capacity()) * sizeof(TaskId);
}

} // namespace twocs::lowering
