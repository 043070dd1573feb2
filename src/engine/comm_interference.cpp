#include "comm_interference.hpp"

#include <cassert>

namespace twocs::engine::detail {

CommInterference::CommInterference(std::size_t devices, const hardware::CommInterference& params, OnChange on_change)
    : on_change_(std::move(on_change)), enabled_(params.compute_slowdown > 0), open_(enabled_ ? devices : 0, 0) {}

void CommInterference::transfer_started(lowering::DeviceId sender, lowering::DeviceId receiver) {
  if (!enabled_) return;
  change(sender, +1);
  if (receiver != sender) change(receiver, +1);
}

void CommInterference::transfer_finished(lowering::DeviceId sender, lowering::DeviceId receiver) {
  if (!enabled_) return;
  change(sender, -1);
  if (receiver != sender) change(receiver, -1);
}

void CommInterference::change(lowering::DeviceId device, int delta) {
  assert(device >= 0 && static_cast<std::size_t>(device) < open_.size());
  std::uint32_t& open = open_[static_cast<std::size_t>(device)];
  assert(delta > 0 || open > 0);
  const bool was_open = open > 0;
  open = delta > 0 ? open + 1 : open - 1;
  if (was_open != (open > 0)) on_change_(device, open > 0);
}

} // namespace twocs::engine::detail
