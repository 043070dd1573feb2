// In-network reduction (NVLink SHARP, "NVLS", on NVSwitch 3+; InfiniBand SHARP, Graham et al.,
// COMHPC 2016): the switch reduces and multicasts, so each rank moves its data about once.
// With NVLS every rank loads-and-reduces its 1/n of the buffer from all ranks through the switch
// (its link carries S up, S/n down) and stores the result with a multicast (S/n up, S down):
// S (1 + 1/n) each way per rank. twocs carries that load as a shift permutation through the
// switch (rank i -> i + 1: the same bytes on each rank's link up and down), pipelined in
// slices, with the wire bytes divided by the in-network efficiency (NCCL's tuner: 0.85 Hopper,
// 0.74 Blackwell; src/graph/tuning.cc nvlsEfficiency).
#include <cassert>

#include "schedule_builder.hpp"

namespace twocs::lowering::detail {

CollectiveSchedule in_network_schedule(units::Bytes size, const ScheduleShape& shape) {
  assert(shape.in_network_efficiency > 0 && shape.in_network_efficiency <= 1);
  const std::int32_t n = shape.ranks;
  CollectiveSchedule s;
  s.algorithm = Algorithm::in_network;
  s.ranks = n;
  if (n <= 1) return s;
  const double slices = static_cast<double>(shape.channels) * static_cast<double>(shape.chunks);
  const units::Bytes wire = size * (1.0 + 1.0 / n) / (shape.in_network_efficiency * slices);
  for (int c = 0; c < shape.channels; ++c) {
    const auto base = static_cast<std::uint32_t>(s.messages.size());
    for (int k = 0; k < shape.chunks; ++k)
      for (std::int32_t i = 0; i < n; ++i) {
        MessageIds after;
        if (k > 0) after.push_back(base + static_cast<std::uint32_t>((k - 1) * n + i));
        add_message(s, i, (i + 1) % n, wire, k, std::move(after));
      }
  }
  return s;
}

} // namespace twocs::lowering::detail
