// Compute kernels outside SimGrid's models (private to the engine layer).
//
// A device's kernels are not contended by anything but each other and interference, so they
// need no max-min solver: each device shares its speed equally among its running kernels
// (processor sharing, as SimGrid's CPU model Cas01 does for Execs on one host) at a rate set by
// its power state (speed variation, and interference while a transfer of its own is in flight,
// comm_interference.hpp). One SimGrid timer per device fires at its next kernel completion. This
// keeps kernels out of SimGrid 3.32's list of live activities, which it scans at every completion
// (docs/performance.md, "Where the time goes").
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include <twocs/lowering/task_graph.hpp>

namespace simgrid::s4u {
class Host;
} // namespace simgrid::s4u
namespace simgrid::kernel::timer {
class Timer;
} // namespace simgrid::kernel::timer

namespace twocs::engine::detail {

class DeviceCompute {
public:
  /// Called when a kernel finishes, with its start and finish dates (SimGrid clock).
  using Finished = std::function<void(lowering::TaskId, double start, double finish)>;

  /// Rates come from the hosts' power states: pstate 0 is the device's speed, pstate 1 (when
  /// present) its speed under interference; `host_speed` is the speed of an unslowed device.
  DeviceCompute(const std::vector<simgrid::s4u::Host*>& hosts, double host_speed, Finished on_finished);
  ~DeviceCompute();
  DeviceCompute(const DeviceCompute&) = delete;
  DeviceCompute& operator=(const DeviceCompute&) = delete;

  /// Starts kernel `id` needing `work` seconds of the device at full, unshared speed.
  void start(lowering::DeviceId device, lowering::TaskId id, double work);
  /// The device has (or no longer has) a transfer of its own in flight.
  void set_interfered(lowering::DeviceId device, bool interfered);

private:
  struct Running {
    lowering::TaskId id;
    double remaining; // seconds of work at full, unshared speed
    double start;
  };
  struct Device {
    std::vector<Running> running; // in start order
    double updated = 0;           // date up to which `remaining` is accounted
    double speed = 1, interfered_speed = 1;
    bool interfered = false;
    simgrid::kernel::timer::Timer* timer = nullptr;
  };

  [[nodiscard]] double rate_each(const Device& device) const;
  void advance(Device& device, double now) const;
  void reschedule(lowering::DeviceId id, double now);
  void on_timer(lowering::DeviceId id);

  std::vector<Device> devices_;
  Finished on_finished_;
};

} // namespace twocs::engine::detail
