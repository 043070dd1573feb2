#include "scenario_pool.hpp"

#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <twocs/error.hpp>

#include "child_process.hpp"
#include "columns.hpp"

namespace twocs::sweep::detail {
namespace {

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

/// A scenario whose process could not write its scratch files (a full or read-only temporary
/// folder, or the folder removed) failed for the sweep's disk, not for itself: the sweep stops.
void check_scratch(const SweepOptions& options, std::size_t index, const ChildExit& exit, const std::string& reason) {
  if (exit.signal != 0 || exit.exit_code == 0) return;
  const std::string folder = options.work_dir.string();
  if (exit.exit_code != scratch_unavailable_exit && reason.find(folder) == std::string::npos) return;
  InputError error(fmt::format("scenario {}'s process could not write its scratch files in '{}': {}", index, folder,
                               reason.empty() ? "it could not create them" : reason),
                   {},
                   "free space in the temporary folder (or point TMPDIR at a writable one), then rerun the same "
                   "command to resume");
  throw error;
}

} // namespace

ScenarioPool::ScenarioPool(const config::Study& study, const SweepOptions& options)
    : study_(study), options_(options), jobs_(std::max<std::size_t>(1, options.jobs)) {
  std::filesystem::create_directories(options.work_dir);
}

ScenarioPool::~ScenarioPool() { kill_all(); }

void ScenarioPool::start(std::size_t index) {
  const pid_t pid = spawn(child_argv(study_, options_, index), options_.work_dir / fmt::format("{}.err", index),
                          options_.run_in_child);
  running_.emplace(pid, Running{index, Clock::now(), false});
}

std::optional<FinishedScenario> ScenarioPool::reap() {
  const Reaped reaped = reap_any();
  if (reaped.pid == 0 || !running_.contains(reaped.pid)) {
    if (options_.timeout_s > 0)
      for (auto& [pid, run] : running_)
        if (!run.timed_out && std::chrono::duration<double>(Clock::now() - run.start).count() > options_.timeout_s) {
          run.timed_out = true;
          kill_child(pid);
        }
    return std::nullopt;
  }
  const Running run = running_.at(reaped.pid);
  running_.erase(reaped.pid);
  return finish(run, reaped.exit);
}

void ScenarioPool::kill_all() {
  for (const auto& entry : running_) kill_child(entry.first);
  while (!running_.empty())
    if (const Reaped r = reap_any(); r.pid) running_.erase(r.pid);
}

FinishedScenario ScenarioPool::finish(const Running& run, ChildExit exit) const {
  exit.timed_out = run.timed_out;
  ScenarioOutcome o;
  o.index = run.index;
  o.status = classify(exit);
  const auto json = options_.work_dir / fmt::format("{}.json", run.index);
  const auto err = options_.work_dir / fmt::format("{}.err", run.index);
  o.reason = reason_for(exit, read_text(err), options_.timeout_s);
  check_scratch(options_, run.index, exit, o.reason);
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
  const int stopped_by = !exit.timed_out && is_stop_signal(exit.signal) ? exit.signal : 0;
  return {o.index, std::string(to_string(o.status)), o.reason, o.wall_time_s, csv_row(study_, o), stopped_by};
}

} // namespace twocs::sweep::detail
