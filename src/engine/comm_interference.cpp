#include "comm_interference.hpp"

#include <cassert>

#include <simgrid/s4u/Host.hpp>

namespace twocs::engine::detail {

CommInterference::CommInterference(const std::vector<simgrid::s4u::Host*>& hosts,
                                   const hardware::CommInterference& params)
    : hosts_(hosts), enabled_(params.compute_slowdown > 0), open_(enabled_ ? hosts.size() : 0, 0) {}

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
  if (was_open != (open > 0)) hosts_[static_cast<std::size_t>(device)]->set_pstate(open > 0 ? 1 : 0);
}

} // namespace twocs::engine::detail
