// The dependencies of a TaskGraph in compressed form: per task a range of a flat array of
// successors and one of predecessors (compressed sparse rows). Built by a stable counting sort
// of the dependencies in the order they were added, so every task lists its successors and
// predecessors in that order, as an adjacency list would.
#include <twocs/lowering/task_graph.hpp>

#include <cassert>
#include <iterator>
#include <utility>
#include <vector>

#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <boost/graph/topological_sort.hpp>

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
  // Boost.Graph's topological sort over a compressed-sparse-row copy of the dependencies: it
  // throws not_a_dag on the first back edge (Boost Graph Library, topological_sort).
  std::vector<std::pair<std::size_t, std::size_t>> edges;
  edges.reserve(dependency_count());
  for (TaskId id = 0; id < size(); ++id)
    for (TaskId next : successors(id)) edges.emplace_back(id, next);
  const boost::compressed_sparse_row_graph<boost::directedS> csr(boost::edges_are_unsorted_multi_pass, edges.begin(),
                                                                 edges.end(), size());
  std::vector<std::size_t> order;
  order.reserve(size());
  try {
    boost::topological_sort(csr, std::back_inserter(order));
  } catch (const boost::not_a_dag&) {
    return false;
  }
  return true;
}

std::size_t TaskGraph::heap_bytes() const {
  return tasks_.capacity() * sizeof(Task) + kernels_.capacity() * sizeof(Kernel) +
         transfers_.capacity() * sizeof(Transfer) + collective_flows_.capacity() * sizeof(std::uint16_t) +
         unindexed_.capacity() * sizeof(unindexed_[0]) +
         (successor_begin_.capacity() + predecessor_begin_.capacity()) * sizeof(std::uint32_t) +
         (successors_.capacity() + predecessors_.capacity()) * sizeof(TaskId);
}

} // namespace twocs::lowering
