// Double binary tree all-reduce (Sanders, Speck & Träff, "Two-tree algorithms for full bandwidth
// broadcast, reduction and scan", Parallel Computing 2009; NCCL 2.4's trees): two binary trees,
// each reducing then broadcasting half the buffer; the second tree mirrors the first, so a rank
// that is an inner node of one is a leaf of the other. Slices pipeline up and down the trees,
// so for large S the time tends to the busiest rank's bytes over its link (not log n steps of S).
#include <cassert>

#include "schedule_builder.hpp"

namespace twocs::lowering::detail {
namespace {

/// Rank at heap position p of tree t (t = 1 mirrors t = 0).
std::int32_t rank_at(int tree, std::int32_t p, std::int32_t n) { return tree == 0 ? p : n - 1 - p; }

void add_tree(CollectiveSchedule& s, int tree, units::Bytes slice, int k_count) {
  const std::int32_t n = s.ranks;
  constexpr auto none = static_cast<std::uint32_t>(-1);
  std::vector<std::uint32_t> up(static_cast<std::size_t>(n), none), down(static_cast<std::size_t>(n), none);
  std::vector<std::uint32_t> prev_up = up, prev_down = down; // the previous slice's, per position
  for (int k = 0; k < k_count; ++k) {
    // Reduce: children (higher positions) before parents.
    for (std::int32_t p = n - 1; p >= 1; --p) {
      MessageIds after;
      for (std::int32_t c : {2 * p + 1, 2 * p + 2})
        if (c < n) after.push_back(up[static_cast<std::size_t>(c)]);
      if (prev_up[static_cast<std::size_t>(p)] != none) after.push_back(prev_up[static_cast<std::size_t>(p)]);
      up[static_cast<std::size_t>(p)] =
          add_message(s, rank_at(tree, p, n), rank_at(tree, (p - 1) / 2, n), slice, 0, std::move(after));
    }
    // Broadcast: the root once its children's partial sums arrived, then down the tree.
    for (std::int32_t p = 1; p < n; ++p) {
      const std::int32_t parent = (p - 1) / 2;
      MessageIds after;
      if (parent == 0) {
        for (std::int32_t c : {1, 2})
          if (c < n) after.push_back(up[static_cast<std::size_t>(c)]);
      } else {
        after.push_back(down[static_cast<std::size_t>(parent)]);
      }
      if (prev_down[static_cast<std::size_t>(p)] != none) after.push_back(prev_down[static_cast<std::size_t>(p)]);
      down[static_cast<std::size_t>(p)] =
          add_message(s, rank_at(tree, parent, n), rank_at(tree, p, n), slice, 1, std::move(after));
    }
    prev_up = up;
    prev_down = down;
  }
}

} // namespace

CollectiveSchedule tree_schedule(units::Bytes size, const ScheduleShape& shape) {
  CollectiveSchedule s;
  s.algorithm = Algorithm::tree;
  s.ranks = shape.ranks;
  if (shape.ranks <= 1) return s;
  const units::Bytes per_tree = size / (2.0 * static_cast<double>(shape.channels));
  const int k = pipeline_slices(shape, per_tree);
  for (int c = 0; c < shape.channels; ++c)
    for (int tree = 0; tree < 2; ++tree) add_tree(s, tree, per_tree / static_cast<double>(k), k);
  return s;
}

} // namespace twocs::lowering::detail
