// Private: the scenarios one sweep process runs at once, each a child process `twocs run`
// (at most --jobs), killed past the time limit, and each turned into its CSV row when it ends.
// The serial sweep and every rank of an MPI sweep run scenarios through this one pool.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

#include <twocs/config/study.hpp>
#include <twocs/sweep/status.hpp>
#include <twocs/sweep/sweep.hpp>

namespace twocs::sweep::detail {

/// A finished scenario: its index, the CSV's status and reason, the child's wall time, and the
/// whole CSV row (columns.hpp).
struct FinishedScenario {
  std::size_t index = 0;
  std::string status;
  std::string reason;
  double wall_time_s = 0;
  std::vector<std::string> row;
  int stopped_by = 0; // the process was stopped from outside by this signal (is_stop_signal): no row
};

class ScenarioPool {
public:
  ScenarioPool(const config::Study& study, const SweepOptions& options);
  ~ScenarioPool(); // kills what still runs
  ScenarioPool(const ScenarioPool&) = delete;
  ScenarioPool& operator=(const ScenarioPool&) = delete;

  [[nodiscard]] bool has_room() const { return running_.size() < jobs_; }
  [[nodiscard]] bool empty() const { return running_.empty(); }
  /// Starts scenario `index` as a child process.
  void start(std::size_t index);
  /// A scenario that has just ended (non-blocking), as its row; kills the overdue ones.
  [[nodiscard]] std::optional<FinishedScenario> reap();
  /// Kills every running scenario and waits for them (their rows are not wanted).
  void kill_all();

private:
  using Clock = std::chrono::steady_clock;
  struct Running {
    std::size_t index = 0;
    Clock::time_point start;
    bool timed_out = false;
  };
  [[nodiscard]] FinishedScenario finish(const Running& run, ChildExit exit) const;

  const config::Study& study_;
  const SweepOptions& options_;
  std::size_t jobs_;
  std::map<pid_t, Running> running_;
};

} // namespace twocs::sweep::detail
