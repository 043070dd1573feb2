// Private: the loop every sweep process runs (serial, or one rank of an MPI job): start
// scenarios while this process has room and its Transport has work, hand each finished row to
// the Transport, stop between scenarios when asked.
#pragma once

#include <cstddef>
#include <optional>

#include <twocs/config/study.hpp>
#include <twocs/sweep/sweep.hpp>

#include "scenario_pool.hpp"

namespace twocs::sweep::detail {

/// Where a sweep process gets scenarios and where their rows go: the serial sweep's own list
/// and CSV (run_sweep.cpp), or the MPI job's coordinator (mpi_transport.hpp).
class Transport {
public:
  Transport() = default;
  virtual ~Transport() = default;
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;
  /// Called on every pass of the loop: exchanges messages with the other processes, if any.
  virtual void serve() = 0;
  /// A scenario for this process to start now, if one is ready (never waits).
  [[nodiscard]] virtual std::optional<std::size_t> take() = 0;
  /// A scenario this process ran.
  virtual void finished(const FinishedScenario& scenario) = 0;
  /// No scenario will come any more and every other process's rows are in.
  [[nodiscard]] virtual bool drained() const = 0;
  /// Another process asked this one to stop (an interrupted MPI job).
  [[nodiscard]] virtual bool stop_requested() const { return false; }
  /// This process stops early (a signal): tell the others.
  virtual void stopping() {}
};

/// Answers whether the sweep was asked to stop (SIGINT, SIGTERM, or mpirun gone).
using StopCheck = bool (*)();

/// Runs scenarios until the Transport is drained (returns false) or a stop (returns true:
/// running scenarios killed, their rows dropped so that a rerun runs them).
bool run_loop(const config::Study& study, const SweepOptions& options, Transport& transport, StopCheck stop);

} // namespace twocs::sweep::detail
