#include <twocs/cli/app.hpp>

#include <exception>
#include <memory>
#include <optional>
#include <string>

#include <iostream>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <twocs/error.hpp>

#include "analyze_command.hpp"
#include "calibrate_command.hpp"
#include "collbench_command.hpp"
#include "import_command.hpp"
#include "run_command.hpp"
#include "show_command.hpp"
#include "study_report_command.hpp"
#include "sweep_command.hpp"
#include "validate_command.hpp"

namespace twocs::cli {
namespace {

constexpr const char* version_text = "twocs " TWOCS_VERSION;

std::shared_ptr<spdlog::logger> make_logger(std::ostream& err, const RunOptions& options) {
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(err, true);
  auto log = std::make_shared<spdlog::logger>("twocs", sink);
  log->set_pattern("twocs: %v");
  log->set_level(options.quiet ? spdlog::level::err : options.verbose ? spdlog::level::debug : spdlog::level::info);
  return log;
}

/// Flags whose values twocs checks itself after parsing, so that a bad value gets the project's
/// error (the flag, what it accepts, the fix) instead of the parser's.
struct CheckedRunFlags {
  std::optional<std::string> fold;
  std::optional<std::string> max_tasks;

  void apply(RunOptions& o) const {
    if (fold) o.fold = parse_fold_mode(*fold);
    if (max_tasks) o.max_tasks = parse_max_tasks(*max_tasks);
  }
};

void add_run_command(CLI::App& app, RunOptions& o, CheckedRunFlags& checked) {
  auto* run = app.add_subcommand("run", "Simulate one training iteration and report where its time goes");
  run->add_option("--workload", o.workload, "Workload YAML (model + training plan); default: the embedded scenario");
  run->add_option("--platform", o.platform, "Platform YAML (cluster); default: the embedded DGX A100 cluster");
  run->add_option("--set", o.overrides, "Override any input key by its dotted path, e.g. training.parallelism.data=4")
      ->take_all()
      ->allow_extra_args(false);
  run->add_option("--json", o.json, "Write the JSON summary to FILE");
  run->add_option("--trace", o.trace, "Write a Chrome trace-event timeline (Perfetto, chrome://tracing) to FILE");
  run->add_option("--report", o.report, "Write a self-contained HTML report to FILE");
  run->add_option("--dag", o.dag, "Write the task DAG to FILE (.dot for Graphviz, otherwise JSON)");
  auto* quiet = run->add_flag("--quiet,-q", o.quiet, "Print nothing but errors");
  run->add_flag("--verbose,-v", o.verbose, "Log each phase in detail")->excludes(quiet);
  run->add_flag("--ignore-memory", o.ignore_memory, "Simulate even when the plan does not fit in device memory");
  run->add_option("--max-tasks", checked.max_tasks,
                  "Refuse plans that lower to more tasks than this (default 20000000)");
  run->add_option("--memory-budget", o.memory_budget,
                  "Refuse plans whose simulation would need more host memory than this, e.g. 8GiB (default: the "
                  "machine's physical memory)");
  run->add_option("--fold", checked.fold,
                  "Simulate one device per pipeline stage, mirroring identical tensor and data-parallel peers: "
                  "auto (when the full run exceeds 2M tasks), on, off");
}

/// "run, validate, ..." in the order the commands were added.
std::string command_list(CLI::App& app) {
  std::string names;
  for (const CLI::App* command : app.get_subcommands([](CLI::App*) { return true; })) {
    if (!names.empty()) names += ", ";
    names += command->get_name();
  }
  return names;
}

} // namespace

int run_cli(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  CLI::App app{"twocs: computation vs. communication in one Transformer training iteration, simulated", "twocs"};
  app.set_version_flag("--version", version_text);
  app.require_subcommand(1);
  RunOptions options;
  CheckedRunFlags checked;
  add_run_command(app, options, checked);
  CalibrateOptions calibrate_options;
  const CLI::App* calibrate = add_calibrate_command(app, calibrate_options);
  ShowOptions show_options;
  const CLI::App* show = add_show_command(app, show_options);
  ValidateOptions validate_options;
  const CLI::App* validate = add_validate_command(app, validate_options);
  CollbenchOptions collbench_options;
  const CLI::App* collbench = add_collbench_command(app, collbench_options);
  AnalyzeOptions analyze_options;
  const CLI::App* analyze = add_analyze_command(app, analyze_options);
  SweepCommandOptions sweep_options;
  const CLI::App* sweep = add_sweep_command(app, sweep_options);
  StudyReportOptions report_options;
  const CLI::App* study_report = add_study_report_command(app, report_options);
  ImportOptions import_options;
  const CLI::App* import_hf = add_import_command(app, import_options);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e, out, err) == 0 ? ExitCode::success : ExitCode::bad_input;
    // One error line like every other input error, then the fix (docs/errors.md).
    const std::string first = argc > 1 ? argv[1] : "";
    const std::string commands = command_list(app);
    if (!first.empty() && first[0] != '-' && commands.find(first) == std::string::npos) {
      err << "twocs: error: unknown command '" << first << "'\n  fix: the commands are " << commands
          << "; see 'twocs --help'\n";
      return ExitCode::bad_input;
    }
    err << "twocs: error: " << e.what() << "\n  fix: see 'twocs "
        << (argc > 1 && argv[1][0] != '-' ? std::string(argv[1]) + " " : std::string()) << "--help'\n";
    return ExitCode::bad_input;
  }
  if (validate->parsed()) options.quiet = validate_options.quiet;
  const auto log = make_logger(err, options);
  try {
    if (calibrate->parsed())
      run_calibrate(calibrate_options, out);
    else if (show->parsed())
      run_show_platform(show_options, out);
    else if (validate->parsed())
      run_validate(validate_options, out, *log);
    else if (collbench->parsed())
      run_collbench(collbench_options, out);
    else if (analyze->parsed())
      run_analyze(analyze_options, out);
    else if (sweep->parsed())
      return run_sweep_command(sweep_options, out, err);
    else if (import_hf->parsed())
      run_import_hf(import_options, out);
    else if (study_report->parsed())
      write_study_report(report_options.results, report_options.output, report_options);
    else {
      checked.apply(options);
      options.progress = &err;
      options.progress_terminal = &err == &std::cerr && isatty(STDERR_FILENO) == 1;
      run_simulation(options, out, *log);
    }
    return ExitCode::success;
  } catch (const InputError& e) {
    err << e.message() << '\n';
    return ExitCode::bad_input;
  } catch (const OutOfMemoryError& e) {
    err << "twocs: error: " << e.what() << '\n';
    return ExitCode::out_of_memory;
  } catch (const std::exception& e) {
    err << "twocs: internal error: " << e.what() << "\n  please report it with the inputs that caused it\n";
    return ExitCode::internal_error;
  } catch (...) {
    err << "twocs: internal error of unknown kind\n";
    return ExitCode::internal_error;
  }
}

} // namespace twocs::cli
