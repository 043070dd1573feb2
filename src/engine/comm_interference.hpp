// Compute-communication interference on a device (private to the engine layer).
//
// While a NCCL/RCCL kernel runs it holds SMs (one thread block per channel) and HBM bandwidth,
// so a compute kernel overlapped with it runs slower (Lee et al., arXiv 2507.03114; NVIDIA/nccl
// issues #1428, #1433). Each device counts the transfers it sends or receives that are in
// flight; while the count is positive its kernels run at the speed of its host's power state 1,
// host_speed / (1 + compute_slowdown): DeviceCompute re-rates the running kernels when the state
// changes, so a kernel pays for exactly the part of its run that overlaps communication.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include <twocs/hardware/device.hpp>
#include <twocs/lowering/task_graph.hpp>

namespace twocs::engine::detail {

class CommInterference {
public:
  /// `on_change(device, interfered)` is called when a device's first transfer starts and when its
  /// last one finishes.
  using OnChange = std::function<void(lowering::DeviceId, bool)>;
  CommInterference(std::size_t devices, const hardware::CommInterference& params, OnChange on_change);

  /// A transfer from `sender` to `receiver` started or finished.
  void transfer_started(lowering::DeviceId sender, lowering::DeviceId receiver);
  void transfer_finished(lowering::DeviceId sender, lowering::DeviceId receiver);

private:
  void change(lowering::DeviceId device, int delta);

  OnChange on_change_;
  bool enabled_;
  std::vector<std::uint32_t> open_; // transfers in flight per device
};

} // namespace twocs::engine::detail
