#include <twocs/sweep/sweep.hpp>

#include <optional>

#include "columns.hpp"
#include "local_transport.hpp"
#include "results_file.hpp"
#include "results_lock.hpp"
#include "stop_signals.hpp"
#include "sweep_loop.hpp"
#ifdef TWOCS_HAVE_MPI
#include "mpi_transport.hpp"
#endif

namespace twocs::sweep {
namespace {

bool should_stop() { return detail::stop_requested(); }

/// The scenarios' scratch folder, removed however the sweep ends (a signal, a full disk).
class ScratchFolder {
public:
  explicit ScratchFolder(std::filesystem::path path) : path_(std::move(path)) {}
  ~ScratchFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;

private:
  std::filesystem::path path_;
};

/// Locks the CSV and reads the earlier run's; on an MPI job, every rank learns whether rank 0
/// could (a CSV of another study, or one another sweep writes, stops all of them).
detail::PreparedResults prepare(const config::Study& study, const SweepOptions& options, const MpiJob* job,
                                std::optional<detail::ResultsLock>& lock) {
  detail::PreparedResults prepared;
  const auto read_csv = [&] {
    lock.emplace(options.output);
    prepared = detail::prepare_results(options.output, detail::csv_header(study), study);
  };
  if (job)
    job->everywhere([&] {
      if (job->rank() == 0) read_csv();
    });
  else
    read_csv();
  return prepared;
}

} // namespace

SweepTotals run_sweep(const config::Study& study, const SweepOptions& options, std::ostream& progress_out,
                      const MpiJob* job) {
  const ScratchFolder scratch(options.work_dir);
  const bool distributed = job && job->size() > 1;
  std::optional<detail::ResultsLock> lock;
#ifdef TWOCS_HAVE_MPI
  if (distributed && job->rank() != 0) {
    (void)prepare(study, options, job, lock); // throws PeerFailed when rank 0 cannot use the CSV
    const detail::StopSignals signals(true);
    SweepTotals totals{study.scenario_count(), 0, 0, 0, false, 0, {}, {}};
    totals.interrupted = detail::run_mpi_worker(study, options, totals, should_stop);
    totals.stop_signal = detail::stop_signal();
    return totals;
  }
#endif
  const detail::PreparedResults prepared = prepare(study, options, job, lock);
  for (const std::string& note : prepared.notes) progress_out << "twocs: " << note << '\n';
  SweepTotals totals{study.scenario_count(), prepared.done.size(), 0, 0, false, 0, {}, prepared.notes};
  detail::LocalTransport local(study, options, prepared.done, progress_out);
  const detail::StopSignals signals(distributed);
#ifdef TWOCS_HAVE_MPI
  if (distributed)
    totals.interrupted = detail::run_mpi_coordinator(study, options, local, should_stop);
  else
#endif
    totals.interrupted = detail::run_loop(study, options, local, should_stop);
  local.close();
  totals.ran = local.ran();
  totals.failed = local.failed();
  totals.stop_signal = detail::stop_signal();
  totals.left_out = local.left_out();
  totals.interrupted = totals.interrupted || !totals.left_out.empty();
  if (!totals.interrupted) detail::sort_results(options.output);
  return totals;
}

} // namespace twocs::sweep
