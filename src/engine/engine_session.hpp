// One SimGrid engine for one simulation (private to the engine layer).
//
// SimGrid 3.32 is a process-wide singleton with process-wide state that outlives an engine
// (docs/platform-model.md, "SimGrid settings"): its configuration can be set only once per
// process, its static signals accumulate across engines and its clock never resets. A session
// hides all of that: it creates a fresh engine, applies the configuration the first time,
// routes the static signals to the simulation that is running now, and starts the clock at 0
// (times are still reported relative to the session's start, should a SimGrid version not let
// the clock be reset). Sessions are serialised by a process-wide lock.
#pragma once

#include <mutex>

#include <twocs/engine/simulate.hpp>
#include <twocs/units/quantity.hpp>

namespace simgrid::s4u {
class Activity;
class Engine;
} // namespace simgrid::s4u

namespace twocs::engine::detail {

/// Receives SimGrid's process-wide signals while its session runs.
class SimulationListener {
public:
  SimulationListener() = default;
  SimulationListener(const SimulationListener&) = delete;
  SimulationListener& operator=(const SimulationListener&) = delete;

  /// An activity completed. It may belong to no simulation of ours: the listener checks.
  virtual void on_activity_completed(const simgrid::s4u::Activity& activity) = 0;
  /// The simulated clock moved forward: activities completed before now may be released.
  virtual void on_time_advanced() = 0;

protected:
  ~SimulationListener() = default;
};

class EngineSession {
public:
  explicit EngineSession(const EngineOptions& options);
  ~EngineSession();
  EngineSession(const EngineSession&) = delete;
  EngineSession& operator=(const EngineSession&) = delete;

  /// Sends the signals to `listener` from now until detach() or the end of the session.
  void attach(SimulationListener& listener);
  void detach();
  /// Runs the simulation until no activity is left.
  void run();
  /// Converts a SimGrid date into time since this session started.
  [[nodiscard]] units::Seconds since_start(double simgrid_date) const;
  /// Time since this session started.
  [[nodiscard]] units::Seconds now() const;

private:
  std::unique_lock<std::mutex> lock_;
  simgrid::s4u::Engine* engine_ = nullptr;
  double clock_origin_ = 0.0;
};

} // namespace twocs::engine::detail
