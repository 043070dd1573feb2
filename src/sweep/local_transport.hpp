// Private: the Transport of the process that owns the CSV (the serial sweep, or rank 0 of an
// MPI job): the unfinished scenarios, lowest index first, and the CSV and progress that
// finished rows go to.
#pragma once

#include <cstddef>
#include <optional>
#include <ostream>
#include <set>
#include <vector>

#include "progress.hpp"
#include "results_file.hpp"
#include "sweep_loop.hpp"

namespace twocs::sweep::detail {

class LocalTransport final : public Transport {
public:
  /// `done`: the scenarios the CSV already holds (prepare_results), not run again.
  LocalTransport(const config::Study& study, const SweepOptions& options, const std::set<std::size_t>& done,
                 std::ostream& progress);
  void serve() override {}
  [[nodiscard]] std::optional<std::size_t> take() override;
  /// Appends the scenario's row; a scenario stopped from outside gets none (left_out). Throws
  /// InputError when the CSV cannot take the row (its disk full): the sweep must stop.
  void finished(const FinishedScenario& scenario) override;
  [[nodiscard]] bool drained() const override { return pending_.empty(); }

  [[nodiscard]] std::size_t ran() const { return ran_; }
  [[nodiscard]] std::size_t failed() const { return failed_; }
  [[nodiscard]] const std::vector<LeftOut>& left_out() const { return left_out_; }
  void close() { progress_.close(); }

private:
  const SweepOptions& options_;
  std::size_t total_, already_done_;
  std::vector<std::size_t> pending_; // popped from the back
  ResultsAppender results_;
  Progress progress_;
  std::size_t ran_ = 0, failed_ = 0;
  std::vector<LeftOut> left_out_;
};

} // namespace twocs::sweep::detail
