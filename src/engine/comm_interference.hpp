// Compute-communication interference on a device (private to the engine layer).
//
// While a NCCL/RCCL kernel runs it holds SMs (one thread block per channel) and HBM bandwidth,
// so a compute kernel overlapped with it runs slower (Lee et al., arXiv 2507.03114; NVIDIA/nccl
// issues #1428, #1433). Each device counts the transfers it sends or receives that are in
// flight; while the count is positive its host runs in power state 1, whose speed is
// host_speed / (1 + compute_slowdown). SimGrid re-rates the running Exec when the power state
// changes, so a kernel pays for exactly the part of its run that overlaps communication.
#pragma once

#include <cstdint>
#include <vector>

#include <twocs/hardware/device.hpp>
#include <twocs/lowering/task_graph.hpp>

namespace simgrid::s4u {
class Host;
} // namespace simgrid::s4u

namespace twocs::engine::detail {

class CommInterference {
public:
  CommInterference(const std::vector<simgrid::s4u::Host*>& hosts, const hardware::CommInterference& params);

  /// A transfer from `sender` to `receiver` started or finished.
  void transfer_started(lowering::DeviceId sender, lowering::DeviceId receiver);
  void transfer_finished(lowering::DeviceId sender, lowering::DeviceId receiver);

private:
  void change(lowering::DeviceId device, int delta);

  const std::vector<simgrid::s4u::Host*>& hosts_;
  bool enabled_;
  std::vector<std::uint32_t> open_; // transfers in flight per device
};

} // namespace twocs::engine::detail
