#include <twocs/sweep/sweep.hpp>

#include <atomic>
#include <chrono>
#include <csignal>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "child_process.hpp"
#include "columns.hpp"
#include "progress.hpp"
#include "results_file.hpp"

namespace twocs::sweep {
namespace {

using Clock = std::chrono::steady_clock;

volatile std::sig_atomic_t stop_requested = 0;
extern "C" void request_stop(int) { stop_requested = 1; }

/// SIGINT and SIGTERM stop the sweep between scenarios; restored when the sweep ends.
class StopSignals {
public:
  StopSignals() {
    stop_requested = 0;
    struct sigaction action {};
    action.sa_handler = request_stop;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &old_int_);
    sigaction(SIGTERM, &action, &old_term_);
  }
  ~StopSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

private:
  struct sigaction old_int_ {
  }, old_term_{};
};

struct Running {
  std::size_t index = 0;
  Clock::time_point start;
  bool timed_out = false;
};

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> child_argv(const config::Study& study, const SweepOptions& options, std::size_t index) {
  const config::ScenarioSources sources = study.scenario_sources(index);
  std::vector<std::string> argv{options.program.string(), "run"};
  if (sources.workload) argv.insert(argv.end(), {"--workload", sources.workload->string()});
  if (sources.platform) argv.insert(argv.end(), {"--platform", sources.platform->string()});
  argv.insert(argv.end(), {"--json", (options.work_dir / fmt::format("{}.json", index)).string(), "--quiet"});
  for (const std::string& o : sources.overrides) argv.insert(argv.end(), {"--set", o});
  return argv;
}

detail::ScenarioOutcome outcome_of(const SweepOptions& options, const Running& run, ChildExit exit) {
  exit.timed_out = run.timed_out;
  detail::ScenarioOutcome o;
  o.index = run.index;
  o.status = classify(exit);
  const auto json = options.work_dir / fmt::format("{}.json", run.index);
  const auto err = options.work_dir / fmt::format("{}.err", run.index);
  o.reason = reason_for(exit, read_text(err), options.timeout_s);
  if (o.status == Status::ok) {
    o.summary = nlohmann::json::parse(read_text(json), nullptr, false);
    if (o.summary->is_discarded()) {
      o.summary.reset();
      o.status = Status::error;
      o.reason = "the scenario's JSON summary is unreadable";
    }
  }
  o.wall_time_s = std::chrono::duration<double>(Clock::now() - run.start).count();
  std::filesystem::remove(json);
  std::filesystem::remove(err);
  return o;
}

void kill_overdue(std::map<pid_t, Running>& running, double timeout_s) {
  if (timeout_s <= 0) return;
  for (auto& [pid, run] : running)
    if (!run.timed_out && std::chrono::duration<double>(Clock::now() - run.start).count() > timeout_s) {
      run.timed_out = true;
      detail::kill_child(pid);
    }
}

} // namespace

SweepTotals run_sweep(const config::Study& study, const SweepOptions& options, std::ostream& progress_out) {
  const std::vector<std::string> header = detail::csv_header(study);
  const std::set<std::size_t> done = detail::prepare_results(options.output, header, study);
  SweepTotals totals{study.scenario_count(), done.size(), 0, 0, false};
  std::vector<std::size_t> pending;
  for (std::size_t i = totals.scenarios; i-- > 0;)
    if (!done.contains(i)) pending.push_back(i); // popped from the back: lowest index first
  std::filesystem::create_directories(options.work_dir);
  detail::ResultsAppender results(options.output);
  detail::Progress progress(progress_out, options.terminal, totals.scenarios, done.size());
  const StopSignals signals;
  std::map<pid_t, Running> running;
  const std::size_t jobs = std::max<std::size_t>(1, options.jobs);
  while (!pending.empty() || !running.empty()) {
    if (stop_requested) {
      for (const auto& entry : running) detail::kill_child(entry.first);
      while (!running.empty())
        if (const auto r = detail::reap_any(); r.pid) running.erase(r.pid);
      totals.interrupted = true;
      break;
    }
    while (!pending.empty() && running.size() < jobs) {
      const std::size_t index = pending.back();
      pending.pop_back();
      const pid_t pid =
          detail::spawn(child_argv(study, options, index), options.work_dir / fmt::format("{}.err", index));
      running.emplace(pid, Running{index, Clock::now(), false});
    }
    const detail::Reaped reaped = detail::reap_any();
    if (reaped.pid == 0 || !running.contains(reaped.pid)) {
      kill_overdue(running, options.timeout_s);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      continue;
    }
    const Running run = running.at(reaped.pid);
    running.erase(reaped.pid);
    if (stop_requested) continue; // killed by the same Ctrl-C: not a result, rerun on resume
    const detail::ScenarioOutcome outcome = outcome_of(options, run, reaped.exit);
    results.append(detail::csv_row(study, outcome));
    ++totals.ran;
    if (outcome.status != Status::ok) ++totals.failed;
    progress.finished(outcome.index, to_string(outcome.status), outcome.wall_time_s, outcome.reason);
  }
  progress.close();
  std::error_code ignored;
  std::filesystem::remove_all(options.work_dir, ignored);
  if (!totals.interrupted) detail::sort_results(options.output);
  return totals;
}

} // namespace twocs::sweep
