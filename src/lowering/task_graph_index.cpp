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

/// Dependencies per block of unindexed_: 512 KiB, small beside a graph worth keeping in blocks.
constexpr std::size_t dependencies_per_block = std::size_t{1} << 16;

/// Row starts from per-row counts held one row on (counts[i + 1] is row i's): prefix sums.
void starts_from_counts(std::vector<std::uint32_t>& begin) {
  for (std::size_t i = 0; i + 1 < begin.size(); ++i) begin[i + 1] += begin[i];
}

/// After filling each row through `begin[row]++`, every start sits where the next row starts:
/// move them back one row.
void restore_starts(std::vector<std::uint32_t>& begin) {
  for (std::size_t i = begin.size() - 1; i > 0; --i) begin[i] = begin[i - 1];
  begin[0] = 0;
}

} // namespace

void TaskGraph::add_unindexed(TaskId before, TaskId after) const {
  if (unindexed_.empty() || unindexed_.back().size() == dependencies_per_block) {
    unindexed_.emplace_back();
    unindexed_.back().reserve(dependencies_per_block);
  }
  unindexed_.back().emplace_back(before, after);
  ++unindexed_count_;
  drop_predecessor_rows();
}

void TaskGraph::drop_predecessor_rows() const {
  if (predecessor_begin_.empty()) return;
  predecessor_begin_ = {};
  predecessors_ = {};
}

void TaskGraph::index() const {
  if (unindexed_count_ == 0 && successor_begin_.size() == tasks_.size() + 1) return;
  assert(successors_.empty() && "dependencies are either all indexed or none");
  successor_begin_.assign(tasks_.size() + 1, 0);
  for (const auto& block : unindexed_)
    for (const auto& dependency : block) ++successor_begin_[dependency.first + 1];
  starts_from_counts(successor_begin_);
  successors_.resize(unindexed_count_);
  // One pass in the order added fills the rows stably; each block is freed once read.
  for (auto& block : unindexed_) {
    for (const auto& [from, to] : block) successors_[successor_begin_[from]++] = to;
    block = {};
  }
  restore_starts(successor_begin_);
  unindexed_ = {};
  unindexed_count_ = 0;
}

void TaskGraph::index_predecessors() const {
  index();
  if (predecessor_begin_.size() == tasks_.size() + 1) return;
  // The successor rows transposed: visiting sources in increasing id order lists each task's
  // predecessors in that order.
  predecessor_begin_.assign(tasks_.size() + 1, 0);
  for (const TaskId to : successors_) ++predecessor_begin_[to + 1];
  starts_from_counts(predecessor_begin_);
  predecessors_.resize(successors_.size());
  for (std::size_t from = 0; from < tasks_.size(); ++from)
    for (std::uint32_t k = successor_begin_[from]; k < successor_begin_[from + 1]; ++k)
      predecessors_[predecessor_begin_[successors_[k]]++] = static_cast<TaskId>(from);
  restore_starts(predecessor_begin_);
}

void TaskGraph::unindex() {
  // Read the rows directly: successors() would index again.
  for (std::size_t id = 0; id + 1 < successor_begin_.size(); ++id)
    for (std::uint32_t k = successor_begin_[id]; k < successor_begin_[id + 1]; ++k)
      add_unindexed(static_cast<TaskId>(id), successors_[k]);
  successors_ = {};
  successor_begin_ = {};
  drop_predecessor_rows();
}

void TaskGraph::reserve(std::size_t tasks) {
  tasks_.reserve(tasks);
  if (!successor_begin_.empty()) successor_begin_.reserve(tasks + 1);
}

std::span<const TaskId> TaskGraph::successors(TaskId id) const {
  index();
  return {successors_.data() + successor_begin_[id], successors_.data() + successor_begin_[id + 1]};
}

std::span<const TaskId> TaskGraph::predecessors(TaskId id) const {
  index_predecessors();
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
  // The interning map: per node its kernel, index, next pointer and cached hash, and the buckets.
  const std::size_t interned = kernel_ids_.size() * (sizeof(Kernel) + sizeof(std::uint32_t) + 2 * sizeof(void*)) +
                               kernel_ids_.bucket_count() * sizeof(void*);
  using Block = decltype(unindexed_)::value_type; // a block's own header, then its dependencies
  std::size_t unindexed = unindexed_.capacity() * sizeof(Block);
  for (const auto& block : unindexed_) unindexed += block.capacity() * sizeof(Block::value_type);
  return tasks_.capacity() * sizeof(Task) + kernels_.capacity() * sizeof(Kernel) + interned +
         transfers_.capacity() * sizeof(Transfer) + collective_flows_.capacity() * sizeof(std::uint16_t) + unindexed +
         (successor_begin_.capacity() + predecessor_begin_.capacity()) * sizeof(std::uint32_t) +
         (successors_.capacity() + predecessors_.capacity()) * sizeof(TaskId);
}

} // namespace twocs::lowering
