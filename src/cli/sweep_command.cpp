#include "sweep_command.hpp"

#include <cmath>
#include <csignal>
#include <optional>
#include <thread>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <twocs/cli/app.hpp>
#include <twocs/cli/error_message.hpp>
#include <twocs/config/study.hpp>
#include <twocs/error.hpp>
#include <twocs/sweep/mpi_job.hpp>
#include <twocs/sweep/status.hpp>
#include <twocs/sweep/sweep.hpp>

#include "study_report_command.hpp"

namespace twocs::cli {
namespace {

/// This program, to run each scenario as `twocs run` in its own process.
std::filesystem::path own_program() {
  std::error_code ec;
  auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("cannot find the twocs program (/proc/self/exe): " + ec.message());
  return path;
}

/// Far beyond any machine's cores; more only exhausts process slots.
constexpr std::size_t max_jobs = 4096;

/// A time limit: a finite number of seconds above zero.
CLI::Validator positive_seconds() {
  return CLI::Validator(
      [](const std::string& text) -> std::string {
        double seconds = 0;
        if (!CLI::detail::lexical_cast(text, seconds) || !std::isfinite(seconds) || seconds <= 0)
          return "'" + text + "' is not a positive number of seconds, e.g. 600";
        return {};
      },
      "SECONDS");
}

/// 128 + the signal, as shells report a process it stopped (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP);
/// 130 when none (an MPI rank whose launcher is gone, or stopped by rank 0).
int interrupted_exit(int signal) { return 128 + (signal != 0 ? signal : SIGINT); }

/// What stopped the sweep early and what to do; returns the exit code.
int report_interrupted(const sweep::SweepTotals& totals, const std::filesystem::path& csv, std::ostream& err) {
  const std::string kept =
      fmt::format("{} of {} scenarios are in {}", totals.already_done + totals.ran, totals.scenarios, csv.string());
  if (totals.stop_signal == 0 && !totals.left_out.empty()) {
    std::vector<std::string> indices;
    for (const sweep::LeftOut& l : totals.left_out) indices.push_back(std::to_string(l.scenario));
    err << fmt::format("twocs: the process of scenario {} was stopped from outside the sweep ({}), so it has no row; "
                       "{}; rerun the same command to run it\n",
                       fmt::join(indices, ", "), sweep::signal_name(totals.left_out.front().signal), kept);
    return interrupted_exit(totals.left_out.front().signal);
  }
  const std::string by = totals.stop_signal != 0 ? " by " + sweep::signal_name(totals.stop_signal) : "";
  err << fmt::format("twocs: interrupted{}; {}; rerun the same command to finish\n", by, kept);
  return interrupted_exit(totals.stop_signal);
}

} // namespace

CLI::App* add_sweep_command(CLI::App& app, SweepCommandOptions& o) {
  auto* sweep = app.add_subcommand("sweep", "Run every scenario of a study; one CSV row each, resumable");
  sweep->add_option("study", o.study, "Study YAML (base workload and platform, axes)")->required();
  sweep->add_option("--output,-o", o.output, "Results CSV (default: <study name>.csv)");
  sweep->add_option("--report", o.report, "Also write the study's HTML report to FILE");
  sweep->add_option("--jobs,-j", o.jobs, "Scenarios run at once (default: all cores; 1 per MPI rank)")
      ->check(CLI::Range(std::size_t{1}, max_jobs));
  sweep->add_option("--timeout", o.timeout_s, "Per-scenario time limit in seconds (default: none)")
      ->check(positive_seconds());
  return sweep;
}

namespace {

/// One process's part of the sweep: the whole of it, or one rank's under mpirun.
int sweep_here(const SweepCommandOptions& o, const sweep::MpiJob& job, std::ostream& out, std::ostream& err) {
  std::optional<config::Study> loaded;
  job.everywhere([&] { loaded.emplace(config::load_study(o.study)); }); // reported once, by rank 0
  const config::Study& study = *loaded;
  sweep::SweepOptions options;
  options.program = own_program();
  options.output = o.output ? *o.output : std::filesystem::path(study.name + ".csv");
  // Folders of sweeps killed with SIGKILL (which cannot clean up) go first, then ours.
  const std::filesystem::path temp = std::filesystem::temp_directory_path();
  (void)sweep::remove_stale_work_dirs(temp); // every rank: its own machine's temporary folder
  options.work_dir = sweep::work_dir_of(temp, ::getpid());
  // Under mpirun, one scenario at a time per rank: place ranks as cores (docs/studies.md).
  options.jobs = o.jobs > 0 ? o.jobs : job.size() > 1 ? 1 : std::max(1u, std::thread::hardware_concurrency());
  options.timeout_s = o.timeout_s;
  options.terminal = job.rank() == 0 && ::isatty(STDERR_FILENO) == 1;
  const sweep::SweepTotals totals = sweep::run_sweep(study, options, err, &job);
  if (job.rank() != 0) return totals.interrupted ? interrupted_exit(totals.stop_signal) : 0; // rank 0 reports
  if (totals.interrupted) return report_interrupted(totals, options.output, err);
  out << fmt::format("{} scenarios ({} run now, {} from an earlier run), {} not ok; results in {}\n", totals.scenarios,
                     totals.ran, totals.already_done, totals.failed, options.output.string());
  if (o.report) {
    StudyReportOptions report;
    report.figures = study.figures;
    write_study_report(options.output, *o.report, report);
  }
  return 0;
}

} // namespace

int run_sweep_command(const SweepCommandOptions& o, std::ostream& out, std::ostream& err) {
  const sweep::MpiJob job; // joins the MPI job when started by mpirun
  if (job.size() == 1 && sweep::MpiJob::launched_rank() > 0) {
    err << fmt::format("twocs: rank {}: this twocs was built without MPI; rank 0 runs the whole sweep alone\n",
                       sweep::MpiJob::launched_rank());
    return 0;
  }
  try {
    return sweep_here(o, job, out, err);
  } catch (const sweep::PeerFailed& e) {
    if (job.rank() == 0) err << "twocs: error: " << e.what() << '\n';
    return ExitCode::bad_input;
  } catch (const InputError& e) {
    if (job.size() == 1) throw;
    // Under mpirun the message is written before `job` leaves the MPI job: the other ranks wait
    // in MPI_Finalize for this one, and mpirun, which kills the job at the first rank that exits
    // non-zero, would otherwise kill this rank before its message is out.
    err << error_message(e) << std::endl;
    return ExitCode::bad_input;
  }
}

} // namespace twocs::cli
