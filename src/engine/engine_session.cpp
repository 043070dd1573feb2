#include "engine_session.hpp"

#include "process_state.hpp"

#include <cassert>
#include <stdexcept>

#include <simgrid/s4u/Activity.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/version.h>
#include <xbt/log.h>

#if SIMGRID_VERSION_MAJOR == 3 && SIMGRID_VERSION_MINOR == 32
// SimGrid 3.32 keeps the simulated clock in the static member simgrid::kernel::EngineImpl::now_
// (exported by libsimgrid, declared only in its private headers) and never resets it, not even
// when an engine is destroyed. Named here by its symbol so each simulation can start at 0.
extern double twocs_simgrid_clock __asm__("_ZN7simgrid6kernel10EngineImpl4now_E");
#define TWOCS_RESET_SIMGRID_CLOCK 1
#endif

namespace twocs::engine::detail {
namespace {

namespace sg = simgrid::s4u;

std::mutex& session_mutex() {
  static std::mutex m;
  return m;
}

// The listener of the running session; null between sessions. Guarded by session_mutex().
SimulationListener* current_listener = nullptr;

/// SimGrid's static signals accumulate across engines (measured in 3.32): connect them once per
/// process, to forwarders that reach whichever simulation runs now.
void connect_signals_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    sg::Activity::on_completion_cb([](const sg::Activity& activity) {
      if (current_listener != nullptr) current_listener->on_activity_completed(activity);
    });
    sg::Engine::on_time_advance_cb([](double) {
      if (current_listener != nullptr) current_listener->on_time_advanced();
    });
  });
}

/// In 3.32, setting the network model a second time aborts the process, and the settings persist
/// across engines: apply them once, with the first engine, before any platform exists.
/// CM02 without cross-traffic and without the TCP window bound (gamma 0) makes a message take
/// exactly latency + size / bandwidth on an idle route (Velho and Legrand, "Accuracy Study and
/// Improvement of Network Simulation in the SimGrid Framework", SIMUTools 2009, describe the
/// factors LV08 adds instead: latency x 13.01, bandwidth x 0.97).
void configure_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    sg::Engine::set_config("network/model:CM02");
    sg::Engine::set_config("network/crosstraffic:0");
    sg::Engine::set_config("network/TCP-gamma:0");
  });
}

/// Starts the new engine's clock at 0. Without this, times of later simulations in a process are
/// offsets from an ever larger date: they lose precision (at a date of 1e5 s a double resolves
/// only 1.5e-11 s) and depend, in their last bits, on what ran before. Only safe before the
/// platform exists, when the fresh engine has no model and no action that remembers a date.
void reset_clock() {
#ifdef TWOCS_RESET_SIMGRID_CLOCK
  twocs_simgrid_clock = 0.0;
  assert(sg::Engine::get_clock() == 0.0);
#endif
}

} // namespace

EngineSession::EngineSession(const EngineOptions& options) : lock_(session_mutex()) {
  if (sg::Engine::has_instance())
    throw std::logic_error("engine::simulate: a SimGrid engine already exists in this process");
  const ProcessState before; // SimGrid's engine replaces signal and terminate handlers
  engine_ = new sg::Engine("twocs");
  before.restore();
  reset_clock();
  xbt_log_control_set(options.log_simgrid ? "root.thres:info" : "root.thres:critical");
  configure_once();
  connect_signals_once();
  clock_origin_ = sg::Engine::get_clock();
}

EngineSession::~EngineSession() {
  detach();
  delete engine_;
}

void EngineSession::attach(SimulationListener& listener) {
  assert(current_listener == nullptr);
  current_listener = &listener;
}

void EngineSession::detach() { current_listener = nullptr; }

void EngineSession::run() { engine_->run(); }

units::Seconds EngineSession::since_start(double simgrid_date) const {
  return units::Seconds(simgrid_date - clock_origin_);
}

units::Seconds EngineSession::now() const { return since_start(sg::Engine::get_clock()); }

} // namespace twocs::engine::detail
