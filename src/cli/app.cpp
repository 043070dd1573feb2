#include <twocs/cli/app.hpp>

#include <exception>
#include <map>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <twocs/error.hpp>

#include "calibrate_command.hpp"
#include "run_command.hpp"
#include "show_command.hpp"

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

void add_run_command(CLI::App& app, RunOptions& o) {
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
  run->add_option("--max-tasks", o.max_tasks, "Refuse plans that lower to more tasks than this (default 20000000)")
      ->check(CLI::Validator(
          [](const std::string& text) {
            return text.find_first_not_of("0123456789") == std::string::npos &&
                           text.find_first_not_of('0') != std::string::npos
                       ? std::string()
                       : "expected a whole number of at least 1, got '" + text + "'";
          },
          "COUNT"));
  run->add_option("--memory-budget", o.memory_budget,
                  "Refuse plans whose simulation would need more host memory than this, e.g. 8GiB (default: the "
                  "machine's physical memory)");
  const std::map<std::string, FoldMode> fold_modes{
      {"auto", FoldMode::automatic}, {"on", FoldMode::on}, {"off", FoldMode::off}};
  run->add_option("--fold", o.fold,
                  "Simulate one device per pipeline stage, mirroring identical tensor and data-parallel peers: "
                  "auto (when the full run exceeds 2M tasks), on, off")
      ->transform(CLI::CheckedTransformer(fold_modes, CLI::ignore_case));
}

} // namespace

int run_cli(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  CLI::App app{"twocs: computation vs. communication in one Transformer training iteration, simulated", "twocs"};
  app.set_version_flag("--version", version_text);
  app.require_subcommand(1);
  RunOptions options;
  add_run_command(app, options);
  CalibrateOptions calibrate_options;
  const CLI::App* calibrate = add_calibrate_command(app, calibrate_options);
  ShowOptions show_options;
  const CLI::App* show = add_show_command(app, show_options);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e, out, err) == 0 ? ExitCode::success : ExitCode::bad_input;
    // One error line like every other input error, then the fix (docs/errors.md).
    const std::string first = argc > 1 ? argv[1] : "";
    if (!first.empty() && first[0] != '-' && first != "run" && first != "calibrate" && first != "show") {
      err << "twocs: error: unknown command '" << first << "'\n  fix: the commands are run, calibrate and show; see "
          << "'twocs --help'\n";
      return ExitCode::bad_input;
    }
    err << "twocs: error: " << e.what() << "\n  fix: the commands are run, calibrate and show; see 'twocs "
        << (argc > 1 && argv[1][0] != '-' ? std::string(argv[1]) + " " : std::string()) << "--help'\n";
    return ExitCode::bad_input;
  }
  const auto log = make_logger(err, options);
  try {
    if (calibrate->parsed())
      run_calibrate(calibrate_options, out);
    else if (show->parsed())
      run_show_platform(show_options, out);
    else
      run_simulation(options, out, *log);
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
