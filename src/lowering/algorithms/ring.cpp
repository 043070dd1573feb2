// Ring algorithms (Patarasuk & Yuan, "Bandwidth optimal all-reduce algorithms for clusters of
// workstations", JPDC 2009; NCCL's ring): the buffer is cut into n pieces per channel; in each
// step every rank sends one piece to its successor. With c channels the buffer is split over c
// rings that run at once; with k chunks each piece moves in k slices, a slice forwarded as soon
// as it arrives (NCCL's pipelined ring steps). Broadcast is a chain from rank 0 (NCCL's ring
// broadcast), where slicing turns (n - 1) S / B into about S / B for large S. With shape.coarse a
// reduction or gather ring is one message per link and channel (collective_lowering.hpp).
#include <cassert>

#include "schedule_builder.hpp"

namespace twocs::lowering::detail {
namespace {

int ring_steps(CollectiveKind kind, std::int32_t n) {
  switch (kind) {
  case CollectiveKind::all_reduce: return 2 * (n - 1);
  case CollectiveKind::reduce_scatter:
  case CollectiveKind::all_gather: return n - 1;
  default: return 0;
  }
}

void add_ring_channel(CollectiveSchedule& s, CollectiveKind kind, units::Bytes piece, const ScheduleShape& shape,
                      int channel) {
  const std::int32_t n = shape.ranks;
  const int steps = ring_steps(kind, n);
  const int k_count = shape.chunks;
  const auto order = ring_order(shape, channel);
  const auto base = static_cast<std::uint32_t>(s.messages.size());
  const auto id = [&](int step, int k, std::int32_t p) {
    return base + static_cast<std::uint32_t>((step * k_count + k) * n + p);
  };
  for (int step = 0; step < steps; ++step)
    for (int k = 0; k < k_count; ++k)
      for (std::int32_t p = 0; p < n; ++p) {
        MessageIds after;
        if (step > 0) after.push_back(id(step - 1, k, (p + n - 1) % n)); // the slice it forwards arrived
        if (k > 0)
          after.push_back(id(step, k - 1, p)); // one send at a time per channel
        else if (step > 0)
          after.push_back(id(step - 1, k_count - 1, p));
        add_message(s, order[static_cast<std::size_t>(p)], order[static_cast<std::size_t>((p + 1) % n)], piece, step,
                    std::move(after));
      }
}

/// The coarse form of a channel's ring (collective_lowering.hpp): one message per ring link
/// carrying the bytes its steps x slices would, all at once, standing for their latencies.
void add_coarse_ring_channel(CollectiveSchedule& s, CollectiveKind kind, units::Bytes piece, const ScheduleShape& shape,
                             int channel) {
  const std::int32_t n = shape.ranks;
  const int sends = ring_steps(kind, n) * shape.chunks; // per rank and channel, step by step
  const auto order = ring_order(shape, channel);
  for (std::int32_t p = 0; p < n; ++p) {
    const std::uint32_t id =
        add_message(s, order[static_cast<std::size_t>(p)], order[static_cast<std::size_t>((p + 1) % n)],
                    piece * static_cast<double>(sends), ring_steps(kind, n) - 1, {});
    s.messages[id].latency_steps = sends;
  }
}

/// A chain of `hops` + 1 ranks in `order`, `k_count` slices pipelined along it.
void add_chain(CollectiveSchedule& s, const std::vector<std::int32_t>& order, units::Bytes slice, int k_count) {
  const auto hops = static_cast<std::int32_t>(order.size()) - 1;
  const auto base = static_cast<std::uint32_t>(s.messages.size());
  const auto id = [&](int k, std::int32_t h) { return base + static_cast<std::uint32_t>(k * hops + h); };
  for (int k = 0; k < k_count; ++k)
    for (std::int32_t h = 0; h < hops; ++h) {
      MessageIds after;
      if (h > 0) after.push_back(id(k, h - 1));
      if (k > 0) after.push_back(id(k - 1, h));
      add_message(s, order[static_cast<std::size_t>(h)], order[static_cast<std::size_t>(h) + 1], slice, k + h,
                  std::move(after));
    }
}

} // namespace
} // namespace twocs::lowering::detail

namespace twocs::lowering {

std::vector<std::int32_t> ring_order(const ScheduleShape& shape, int channel) {
  const std::int32_t n = shape.ranks;
  const std::int32_t g = shape.ranks_per_node;
  std::vector<std::int32_t> order(static_cast<std::size_t>(n));
  const bool rotate = g > 1 && g < n && n % g == 0;
  for (std::int32_t i = 0; i < n; ++i)
    order[static_cast<std::size_t>(i)] = rotate ? (i / g) * g + (i % g + channel) % g : i;
  return order;
}

} // namespace twocs::lowering

namespace twocs::lowering::detail {

CollectiveSchedule ring_schedule(CollectiveKind kind, units::Bytes size, const ScheduleShape& shape) {
  assert(shape.channels >= 1 && shape.chunks >= 1);
  CollectiveSchedule s;
  s.algorithm = Algorithm::ring;
  s.ranks = shape.ranks;
  const std::int32_t n = shape.ranks;
  if (n <= 1) return s;
  const double slices = static_cast<double>(shape.channels) * static_cast<double>(shape.chunks);
  if (kind == CollectiveKind::broadcast || kind == CollectiveKind::send_recv) {
    std::vector<std::int32_t> order(static_cast<std::size_t>(kind == CollectiveKind::send_recv ? 2 : n));
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<std::int32_t>(i);
    const units::Bytes per_channel = size / static_cast<double>(shape.channels);
    const int k = pipeline_slices(shape, per_channel);
    for (int c = 0; c < shape.channels; ++c) add_chain(s, order, per_channel / static_cast<double>(k), k);
    return s;
  }
  assert(kind != CollectiveKind::all_to_all);
  const units::Bytes piece = size / (static_cast<double>(n) * slices);
  // Transfer::latency_steps holds 16 bits: longer rings stay step by step.
  const bool coarse = shape.coarse && n > 2 && ring_steps(kind, n) * shape.chunks <= 0xFFFF;
  for (int c = 0; c < shape.channels; ++c) {
    if (coarse)
      add_coarse_ring_channel(s, kind, piece, shape, c);
    else
      add_ring_channel(s, kind, piece, shape, c);
  }
  if (coarse) {
    // Every member of a pipelined ring finishes with its slowest link (each forwards what it
    // receives): a zero-byte message after every link's stream, which every rank leaves by.
    MessageIds all(s.messages.size());
    for (std::uint32_t i = 0; i < all.size(); ++i) all[i] = i;
    const auto order = ring_order(shape, 0);
    s.common_exit = add_message(s, order[0], order[1], units::Bytes(0), ring_steps(kind, n) - 1, std::move(all));
  }
  return s;
}

} // namespace twocs::lowering::detail
