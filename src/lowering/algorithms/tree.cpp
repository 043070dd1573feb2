// NCCL's tree all-reduce (NCCL 2.4 "trees"; src/graph/trees.cc, connect.cc, device/all_reduce.h
// runTreeUpDown): between nodes a double binary tree (Sanders, Speck & Träff, "Two-tree
// algorithms for full bandwidth broadcast, reduction and scan", Parallel Computing 2009), inside
// a node a chain of its ranks. Per channel the buffer is split over the two trees; each half is
// reduced up (chain to the node's top rank, then from child nodes to parent nodes) and broadcast
// back down, in slices that pipeline through the trees. The top rank of a node talks to the other
// nodes through its NIC: channel c's chain starts at local rank c (as its ring does, ring_order),
// and the second tree runs the chain the other way, so the node's NICs share the inter-node load.
// Within one node (m = 1) both trees are the chain, one each way.
#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "schedule_builder.hpp"

namespace twocs::lowering::detail {
namespace {

constexpr std::int32_t none = -1;

/// NCCL's binary tree over `m` nodes rooted at 0 (src/graph/trees.cc, ncclGetBtree): the parent
/// and the children of node `r`, none where absent.
struct TreeLinks {
  std::int32_t parent = none;
  std::int32_t child0 = none, child1 = none;
};

TreeLinks btree(std::int32_t m, std::int32_t r) {
  std::int32_t bit = 1;
  while (bit < m && (bit & r) == 0) bit <<= 1;
  if (r == 0) return {none, none, m > 1 ? bit >> 1 : none};
  TreeLinks t;
  t.parent = (r ^ bit) | (bit << 1);
  if (t.parent >= m) t.parent = r ^ bit;
  std::int32_t low = bit >> 1;
  if (low == 0) return t;
  t.child0 = r - low;
  t.child1 = r + low;
  while (t.child1 >= m) {
    low >>= 1;
    t.child1 = low == 0 ? none : r + low;
  }
  return t;
}

/// The second tree of NCCL's double binary tree (ncclGetDtree): the first mirrored when m is
/// even, shifted by one node when it is odd, so that inner nodes of one are leaves of the other.
TreeLinks dtree(std::int32_t m, std::int32_t r, int tree) {
  if (tree == 0) return btree(m, r);
  const bool shift = m % 2 == 1;
  const auto to = [&](std::int32_t x) { return shift ? (x - 1 + m) % m : m - 1 - x; };
  const auto back = [&](std::int32_t x) { return x == none ? none : shift ? (x + 1) % m : m - 1 - x; };
  const TreeLinks t = btree(m, to(r));
  return {back(t.parent), back(t.child0), back(t.child1)};
}

/// One tree of one channel: its node-level links and each node's chain of ranks, top first.
struct Tree {
  std::vector<TreeLinks> nodes;                  // per node
  std::vector<std::vector<std::int32_t>> chains; // per node: ranks, the top (which talks to other nodes) first
  std::int32_t root = 0;
};

Tree make_tree(const ScheduleShape& shape, int channel, int tree) {
  const std::int32_t n = shape.ranks;
  const std::int32_t g = shape.ranks_per_node > 0 && n % shape.ranks_per_node == 0 ? shape.ranks_per_node : n;
  const std::int32_t m = n / g;
  Tree t;
  for (std::int32_t node = 0; node < m; ++node) {
    t.nodes.push_back(dtree(m, node, tree));
    if (t.nodes.back().parent == none) t.root = node;
    std::vector<std::int32_t> chain(static_cast<std::size_t>(g));
    for (std::int32_t j = 0; j < g; ++j) {
      const std::int32_t local = tree == 0 ? (j + channel) % g : (channel - 1 - j + 2 * g) % g;
      chain[static_cast<std::size_t>(j)] = node * g + local;
    }
    t.chains.push_back(std::move(chain));
  }
  return t;
}

/// Slices in flight on one link: a connection has NCCL_STEPS = 8 buffer slots (src/include/device.h),
/// so a sender runs up to 8 slices ahead of what its receiver has taken, and a link streaming its
/// slices pays its latency once per 8 of them.
constexpr int pipeline_window = 8;

/// The messages of one slice on one tree: reduced up the chains and the node tree, then broadcast
/// down. Every slice has the same messages in the same order; message i waits for the previous
/// slice's message i (the same link), and a rank sends to all its children at once. `streams`:
/// the messages carry the slices before the last at once, without the tree's order (below).
class SliceBuilder {
public:
  SliceBuilder(CollectiveSchedule& s, const Tree& t) : s_(s), t_(t) {}

  /// Adds a slice of `bytes` per message, each paying `latency_steps` route latencies; `previous`
  /// holds the slice before's messages (none for the first) and receives this one's.
  void add(units::Bytes bytes, std::int32_t step, std::int32_t latency_steps, bool streams,
           std::vector<std::int32_t>& previous) {
    bytes_ = bytes;
    step_ = step;
    latency_steps_ = latency_steps;
    streams_ = streams;
    previous_ = &previous;
    ordinal_ = 0;
    const auto m = static_cast<std::int32_t>(t_.nodes.size());
    std::vector<MessageIds> into_top(static_cast<std::size_t>(m)); // what a node's top reduces with
    std::vector<MessageIds> up_done(static_cast<std::size_t>(m));
    const auto order = up_order();
    for (std::int32_t node : order) { // children before parents
      const auto& chain = chain_of(node);
      MessageIds from_below;
      for (std::size_t j = chain.size() - 1; j >= 1; --j) from_below = {send(chain[j], chain[j - 1], from_below)};
      auto& in = into_top[static_cast<std::size_t>(node)];
      in = from_below;
      for (std::int32_t child : children(node))
        in.insert(in.end(), up_done[static_cast<std::size_t>(child)].begin(),
                  up_done[static_cast<std::size_t>(child)].end());
      const std::int32_t parent = t_.nodes[static_cast<std::size_t>(node)].parent;
      if (parent != none) up_done[static_cast<std::size_t>(node)] = {send(chain[0], chain_of(parent)[0], in)};
    }
    std::vector<MessageIds> result(static_cast<std::size_t>(m)); // when a node's top has the sum
    result[static_cast<std::size_t>(t_.root)] = into_top[static_cast<std::size_t>(t_.root)];
    const std::vector<std::int32_t> top_down(order.rbegin(), order.rend()); // parents before children
    for (const std::int32_t node : top_down) {
      const auto& chain = chain_of(node);
      const MessageIds have = result[static_cast<std::size_t>(node)];
      for (std::int32_t child : children(node))
        result[static_cast<std::size_t>(child)] = {send(chain[0], chain_of(child)[0], have)};
      MessageIds from_above = have;
      for (std::size_t j = 0; j + 1 < chain.size(); ++j) from_above = {send(chain[j], chain[j + 1], from_above)};
    }
  }

private:
  std::uint32_t send(std::int32_t from, std::int32_t to, const MessageIds& tree_order) {
    auto& previous = (*previous_)[ordinal_++];
    // Off the path: that link's slice is its stream's (its last slice runs in parallel with the path's).
    if (path_ && !path_->contains({from, to})) return static_cast<std::uint32_t>(previous);
    MessageIds after = streams_ ? MessageIds{} : tree_order;
    if (previous != none) after.push_back(static_cast<std::uint32_t>(previous));
    const auto id = add_message(s_, from, to, bytes_, step_, std::move(after));
    s_.messages[id].latency_steps = latency_steps_;
    previous = static_cast<std::int32_t>(id);
    return id;
  }
  [[nodiscard]] const std::vector<std::int32_t>& chain_of(std::int32_t node) const {
    return t_.chains[static_cast<std::size_t>(node)];
  }
  [[nodiscard]] std::vector<std::int32_t> children(std::int32_t node) const {
    const TreeLinks& links = t_.nodes[static_cast<std::size_t>(node)];
    std::vector<std::int32_t> c;
    for (std::int32_t x : {links.child0, links.child1})
      if (x != none) c.push_back(x);
    return c;
  }
  /// Nodes ordered children before parents (reverse breadth-first from the root).
  [[nodiscard]] std::vector<std::int32_t> up_order() const {
    std::vector<std::int32_t> bfs = {t_.root};
    for (std::size_t i = 0; i < bfs.size(); ++i)
      for (std::int32_t c : children(bfs[i])) bfs.push_back(c);
    assert(bfs.size() == t_.nodes.size() && "every node is in the tree");
    return {bfs.rbegin(), bfs.rend()};
  }

  CollectiveSchedule& s_;
  const Tree& t_;
  units::Bytes bytes_;
  std::int32_t step_ = 0, latency_steps_ = 1;
  bool streams_ = false;
  std::vector<std::int32_t>* previous_ = nullptr;
  std::size_t ordinal_ = 0;
  const std::set<std::pair<std::int32_t, std::int32_t>>* path_ = nullptr; // only these links' last slice

public:
  /// The last slice along `path` only (the tree's longest), after the streams.
  void add_last_slice_on(const std::set<std::pair<std::int32_t, std::int32_t>>& path, units::Bytes bytes,
                         std::vector<std::int32_t>& previous) {
    path_ = &path;
    add(bytes, 1, 1, false, previous);
    path_ = nullptr;
  }
};

/// The links of a tree's longest path: the chain of its deepest node, and the node links from it to
/// the root, both ways.
std::set<std::pair<std::int32_t, std::int32_t>> longest_path(const Tree& t) {
  const auto m = t.nodes.size();
  std::vector<int> depth(m, 0);
  std::int32_t deepest = t.root;
  for (std::size_t node = 0; node < m; ++node) {
    for (std::int32_t x = static_cast<std::int32_t>(node); x != t.root; x = t.nodes[static_cast<std::size_t>(x)].parent)
      ++depth[node];
    if (depth[node] > depth[static_cast<std::size_t>(deepest)]) deepest = static_cast<std::int32_t>(node);
  }
  std::set<std::pair<std::int32_t, std::int32_t>> path;
  const auto& chain = t.chains[static_cast<std::size_t>(deepest)];
  for (std::size_t j = 0; j + 1 < chain.size(); ++j) path.insert({{chain[j], chain[j + 1]}, {chain[j + 1], chain[j]}});
  for (std::int32_t x = deepest; x != t.root; x = t.nodes[static_cast<std::size_t>(x)].parent) {
    const std::int32_t a = t.chains[static_cast<std::size_t>(x)][0];
    const std::int32_t b = t.chains[static_cast<std::size_t>(t.nodes[static_cast<std::size_t>(x)].parent)][0];
    path.insert({{a, b}, {b, a}});
  }
  return path;
}

/// NCCL's tree depth (src/graph/connect.cc, connectTrees): ranks per node - 1 + log2(nodes).
int tree_depth(const ScheduleShape& shape) {
  const std::int32_t n = shape.ranks;
  const std::int32_t g = shape.ranks_per_node > 0 && n % shape.ranks_per_node == 0 ? shape.ranks_per_node : n;
  int log2_nodes = 0;
  while ((2 << log2_nodes) <= n / g) ++log2_nodes;
  return g - 1 + log2_nodes;
}

/// Slices per tree: NCCL's Simple tree chunk, 512 KiB (NCCL_BUFFSIZE 4 MiB / NCCL_STEPS 8), halved
/// while a channel has fewer than 8, 4 and 1 times the tree's depth of them, down to 128, 64 and
/// 32 KiB (src/enqueue.cc calcCollChunking, NCCL 2.12-2.19), so small messages still pipeline; at
/// most max_tree_slices (a bound on the simulation's work: 1 GiB on one channel is 1024 slices).
int tree_slices(const ScheduleShape& shape, units::Bytes per_tree) {
  if (shape.chunks > 1 || shape.slice_bytes <= 0) return shape.chunks;
  const double bytes = per_tree.value();
  const double depth = tree_depth(shape);
  double chunk = shape.slice_bytes;
  while (bytes / chunk < depth * 8 && chunk > 131072) chunk /= 2;
  while (bytes / chunk < depth * 4 && chunk > 65536) chunk /= 2;
  while (bytes / chunk < depth && chunk > 32768) chunk /= 2;
  constexpr double max_tree_slices = 1024;
  return static_cast<int>(std::clamp(std::ceil(bytes / chunk), 1.0, max_tree_slices));
}

} // namespace

CollectiveSchedule tree_schedule(units::Bytes size, const ScheduleShape& shape) {
  CollectiveSchedule s;
  s.algorithm = Algorithm::tree;
  s.ranks = shape.ranks;
  if (shape.ranks <= 1) return s;
  const units::Bytes per_tree = size / (2.0 * static_cast<double>(shape.channels));
  const int k = tree_slices(shape, per_tree);
  const units::Bytes slice = per_tree / static_cast<double>(k);
  MessageIds last; // the last message of each tree's last slice
  // A pipeline of k slices in steady state: every link streams the slices before the last at
  // once (sharing its bandwidth with the other links' streams, paying its latency once per
  // pipeline_window slices), then the last slice runs along the tree's longest path in order,
  // which is the pipeline's fill and drain (each of its links after its stream, each node after
  // every stream into it; the last slice's other links run in parallel with the path and end
  // sooner, so only the path is simulated). (Slice after slice, each waiting for the one before on its link,
  // every slice would pay every link's latency; all in flight at once, the links' fair sharing
  // would move them in lockstep: neither is how NCCL's buffered steps behave.)
  for (int c = 0; c < shape.channels; ++c)
    for (int tree = 0; tree < 2; ++tree) {
      const Tree t = make_tree(shape, c, tree);
      std::vector<std::int32_t> previous(2 * static_cast<std::size_t>(shape.ranks - 1), none);
      SliceBuilder builder(s, t);
      if (k == 1) {
        builder.add(slice, 0, 1, false, previous);
        continue;
      }
      builder.add(slice * static_cast<double>(k - 1), 0, (k - 1 + pipeline_window - 1) / pipeline_window, true,
                  previous);
      const std::size_t before = s.messages.size();
      builder.add_last_slice_on(longest_path(t), slice, previous);
      for (std::size_t i = before; i < s.messages.size(); ++i) last.push_back(static_cast<std::uint32_t>(i));
    }
  if (k > 1) // every rank leaves once the last slice is through every tree (as a pipelined ring's members do)
    s.common_exit = add_message(s, 0, 1, units::Bytes(0), 1, std::move(last));
  return s;
}

} // namespace twocs::lowering::detail
