#include "device_compute.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>

#include <simgrid/kernel/Timer.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>

namespace twocs::engine::detail {
namespace {

/// Work left below this many seconds counts as done: the rounding of `remaining -= elapsed x
/// rate` at the date the timer was set for (1e-12 s is far below any kernel's duration).
constexpr double done_below = 1e-12;

} // namespace

DeviceCompute::DeviceCompute(const std::vector<simgrid::s4u::Host*>& hosts, double host_speed, Finished on_finished)
    : devices_(hosts.size()), on_finished_(std::move(on_finished)) {
  for (std::size_t d = 0; d < hosts.size(); ++d) {
    if (hosts[d] == nullptr) continue; // a device the graph does not use
    devices_[d].speed = hosts[d]->get_pstate_speed(0) / host_speed;
    devices_[d].interfered_speed =
        hosts[d]->get_pstate_count() > 1 ? hosts[d]->get_pstate_speed(1) / host_speed : devices_[d].speed;
  }
}

DeviceCompute::~DeviceCompute() {
  for (Device& device : devices_)
    if (device.timer != nullptr) device.timer->remove();
}

double DeviceCompute::rate_each(const Device& device) const {
  const double speed = device.interfered ? device.interfered_speed : device.speed;
  return speed / static_cast<double>(std::max<std::size_t>(device.running.size(), 1));
}

void DeviceCompute::advance(Device& device, double now) const {
  const double done = (now - device.updated) * rate_each(device);
  if (done > 0)
    for (Running& kernel : device.running) kernel.remaining -= done;
  device.updated = now;
}

void DeviceCompute::reschedule(lowering::DeviceId id, double now) {
  Device& device = devices_[static_cast<std::size_t>(id)];
  if (device.timer != nullptr) {
    device.timer->remove();
    device.timer = nullptr;
  }
  if (device.running.empty()) return;
  double least = device.running.front().remaining;
  for (const Running& kernel : device.running) least = std::min(least, kernel.remaining);
  const double at = now + std::max(least, 0.0) / rate_each(device);
  device.timer = simgrid::kernel::timer::Timer::set(at, [this, id] { on_timer(id); });
}

void DeviceCompute::start(lowering::DeviceId id, lowering::TaskId task, double work) {
  assert(id >= 0 && static_cast<std::size_t>(id) < devices_.size() && work > 0 && std::isfinite(work));
  const double now = simgrid::s4u::Engine::get_clock();
  Device& device = devices_[static_cast<std::size_t>(id)];
  advance(device, now);
  device.running.push_back({task, work, now});
  reschedule(id, now);
}

void DeviceCompute::set_interfered(lowering::DeviceId id, bool interfered) {
  Device& device = devices_[static_cast<std::size_t>(id)];
  if (device.interfered == interfered) return;
  const double now = simgrid::s4u::Engine::get_clock();
  advance(device, now);
  device.interfered = interfered;
  reschedule(id, now);
}

void DeviceCompute::on_timer(lowering::DeviceId id) {
  Device& device = devices_[static_cast<std::size_t>(id)];
  device.timer = nullptr; // SimGrid deletes a timer after running it
  const double now = simgrid::s4u::Engine::get_clock();
  advance(device, now);
  // The timer was set for the kernel with the least work left: it and any as close to done finish.
  double least = device.running.empty() ? 0 : device.running.front().remaining;
  for (const Running& kernel : device.running) least = std::min(least, kernel.remaining);
  const double finish_below = std::max(least, 0.0) + done_below;
  std::vector<Running> finished;
  const auto keep = std::stable_partition(device.running.begin(), device.running.end(),
                                          [finish_below](const Running& k) { return k.remaining > finish_below; });
  finished.assign(keep, device.running.end());
  device.running.erase(keep, device.running.end());
  reschedule(id, now);
  // Callbacks last: they may start kernels on this device, which reschedules it again.
  for (const Running& kernel : finished) on_finished_(kernel.id, kernel.start, now);
}

} // namespace twocs::engine::detail
