// Where one device's time goes on the simulated timeline: compute, communication hidden under
// compute, exposed communication and idle time (definitions in docs/outputs.md).
#pragma once

#include <vector>

#include <twocs/analysis/summary.hpp>
#include <twocs/engine/timeline.hpp>
#include <twocs/lowering/task_graph.hpp>

namespace twocs::analysis {

struct DeviceBreakdown {
  Breakdown breakdown;
  PerGroup exposed_by_group{};    // exposed time split evenly among the groups active at once
  PerGroup busy_by_group{};       // time each group's transfers run on the device
  PerGroup overlapped_by_group{}; // overlapped time split evenly among the groups active at once
  units::Seconds comm_busy;       // time any transfer runs on the device
};

/// Measures `device` over [0, iteration_time]. A device communicates while a transfer it sends
/// or receives runs; it computes while one of its compute kernels runs.
[[nodiscard]] DeviceBreakdown measure_device(const lowering::TaskGraph& graph, const engine::Timeline& timeline,
                                             lowering::DeviceId device, units::Seconds iteration_time);

/// Measures `device` over [from, to) only, each task clipped to it; idle is the rest of the window.
[[nodiscard]] DeviceBreakdown measure_device_between(const lowering::TaskGraph& graph, const engine::Timeline& timeline,
                                                     lowering::DeviceId device, units::Seconds from, units::Seconds to);

/// Time `device`'s kernels waited for their host's launch after everything else they needed had
/// finished: the device held back by its host (lowering/device_program.hpp, "Host launches").
[[nodiscard]] units::Seconds host_wait(const lowering::TaskGraph& graph, const engine::Timeline& timeline,
                                       lowering::DeviceId device);
/// The same, for the kernels that start in [from, to).
[[nodiscard]] units::Seconds host_wait_between(const lowering::TaskGraph& graph, const engine::Timeline& timeline,
                                               lowering::DeviceId device, units::Seconds from, units::Seconds to);

/// Which devices run kernels: all of them, or one per pipeline stage when replicas are folded
/// (lowering::LoweringOptions); the others only appear as ends of mirrored transfers.
[[nodiscard]] std::vector<bool> devices_running_kernels(const lowering::TaskGraph& graph);

/// Among the devices that run kernels, the one whose last task (kernel, or transfer it sends or
/// receives) finishes last; the lowest such device on ties.
[[nodiscard]] lowering::DeviceId last_finishing_device(const lowering::TaskGraph& graph,
                                                       const engine::Timeline& timeline);

} // namespace twocs::analysis
