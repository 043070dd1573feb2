#include <twocs/cli/app.hpp>

#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <iostream>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <twocs/cli/error_message.hpp>
#include <twocs/error.hpp>

#include "analyze_command.hpp"
#include "calibrate_command.hpp"
#include "collbench_command.hpp"
#include "import_command.hpp"
#include "replay_policy.hpp"
#include "run_command.hpp"
#include "show_command.hpp"
#include "study_report_command.hpp"
#include "sweep_command.hpp"
#include "trace_options.hpp"
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
  std::optional<std::string> replay;
  std::optional<std::string> max_tasks;
  std::optional<std::string> plan_search;
  std::optional<std::string> plan_candidates;
  std::optional<std::string> collective_lowering;
  std::optional<std::string> trace_devices;
  std::optional<std::string> trace_from;
  std::optional<std::string> trace_until;

  void apply(RunOptions& o) const {
    if (o.trace) o.trace_format = parse_trace_format(*o.trace);
    if (trace_devices) o.trace_filter.devices = parse_trace_devices(*trace_devices);
    if (trace_from) o.trace_filter.from = parse_trace_time("--trace-from", *trace_from);
    if (trace_until) o.trace_filter.until = parse_trace_time("--trace-until", *trace_until);
    if (fold) o.fold = parse_fold_mode(*fold);
    if (replay) o.replay = parse_replay_mode(*replay);
    if (max_tasks) o.max_tasks = parse_max_tasks(*max_tasks);
    if (plan_search) o.plan_search = parse_plan_search(*plan_search);
    if (plan_candidates) o.plan_candidates = parse_plan_candidates(*plan_candidates);
    if (collective_lowering) o.collective_lowering = parse_collective_lowering(*collective_lowering);
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
  auto* trace = run->add_option("--trace", o.trace,
                                "Write the timeline to FILE, in the format its extension names: .json (Chrome trace "
                                "JSON), .json.gz (the same, gzipped), .pftrace (Perfetto protobuf, smallest)");
  run->add_option("--trace-devices", checked.trace_devices,
                  "Trace only these devices, e.g. 0,8-15 (default: every simulated device)")
      ->needs(trace);
  run->add_option("--trace-from", checked.trace_from,
                  "Trace only tasks that end after this time of the iteration, e.g. 1.5s")
      ->needs(trace);
  run->add_option("--trace-until", checked.trace_until,
                  "Trace only tasks that start before this time of the iteration, e.g. 2s")
      ->needs(trace);
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
                  "auto (when the full run exceeds 2M tasks), on, off, shared (on, with the peers' traffic on the "
                  "links they share)");
  run->add_option("--replay", checked.replay,
                  "Replay the steady state of a long 1F1B pipeline instead of simulating every micro-batch, where "
                  "the simulated timeline repeats: auto (when the full run exceeds 2M tasks and no trace, report or "
                  "DAG is written), on, off");
  run->add_option("--plan-search", checked.plan_search,
                  "Choose tensor, pipeline, data degrees, virtual stages, micro-batch and recomputation: smallest "
                  "(least model parallelism that fits), fastest (simulate the closed form's best few), none "
                  "(default: the workload's training.parallelism.search)");
  run->add_option("--plan-candidates", checked.plan_candidates,
                  "Plans --plan-search fastest simulates (default 4, or training.parallelism.search_candidates)");
  run->add_option("--collective-lowering", checked.collective_lowering,
                  "Ring collectives as transfers: auto (coarse for rings of 8 or more ranks, the default), step "
                  "(every ring step a transfer), coarse (one transfer per ring link carrying all its steps' bytes)");
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

bool is_command(CLI::App& app, const std::string& name) {
  for (const CLI::App* command : app.get_subcommands([](CLI::App*) { return true; }))
    if (command->get_name() == name) return true;
  return false;
}

/// CLI11's parse errors as one error line like every other input error, then the fix
/// (docs/errors.md); --help and --version pass through.
int report_parse_error(CLI::App& app, const CLI::ParseError& e, int argc, const char* const* argv, std::ostream& out,
                       std::ostream& err) {
  if (e.get_exit_code() == 0) return app.exit(e, out, err) == 0 ? ExitCode::success : ExitCode::bad_input;
  const std::string first = argc > 1 ? argv[1] : "";
  if (!first.empty() && first[0] != '-' && !is_command(app, first)) {
    err << "twocs: error: unknown command '" << first << "'\n  fix: the commands are " << command_list(app)
        << "; see 'twocs --help'\n";
    return ExitCode::bad_input;
  }
  err << "twocs: error: " << e.what() << "\n  fix: see 'twocs "
      << (!first.empty() && first[0] != '-' ? first + " " : std::string()) << "--help'\n";
  return ExitCode::bad_input;
}

/// Runs `body`, turning the errors users can cause into messages and exit codes (the contract's).
int guarded(std::ostream& err, const std::function<int()>& body) {
  try {
    return body();
  } catch (const InputError& e) {
    err << error_message(e) << '\n';
    return ExitCode::bad_input;
  } catch (const OutOfMemoryError& e) {
    err << error_message(e) << '\n';
    return ExitCode::out_of_memory;
  } catch (const std::exception& e) {
    err << "twocs: internal error: " << e.what() << "\n  please report it with the inputs that caused it\n";
    return ExitCode::internal_error;
  } catch (...) {
    err << "twocs: internal error of unknown kind\n";
    return ExitCode::internal_error;
  }
}

/// Every command's options, kept for the life of one run_cli call.
struct AllOptions {
  RunOptions run;
  CheckedRunFlags checked;
  CalibrateOptions calibrate;
  ShowOptions show;
  ValidateOptions validate;
  CollbenchOptions collbench;
  AnalyzeOptions analyze;
  SweepCommandOptions sweep;
  StudyReportOptions report;
  ImportOptions import;
};

/// A command: its CLI11 subcommand and what runs it once parsed.
struct Command {
  const CLI::App* parsed;
  std::function<int()> run;
};

} // namespace

int run_cli(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  CLI::App app{"twocs: computation vs. communication in one Transformer training iteration, simulated", "twocs"};
  app.set_version_flag("--version", version_text);
  app.require_subcommand(1);
  AllOptions o;
  add_run_command(app, o.run, o.checked);
  std::shared_ptr<spdlog::logger> log;
  const auto ok = [](auto&& f) {
    return [f] {
      f();
      return int{ExitCode::success};
    };
  };
  const CLI::App* validate = add_validate_command(app, o.validate);
  const std::vector<Command> commands = {
      {add_calibrate_command(app, o.calibrate), ok([&] { run_calibrate(o.calibrate, out); })},
      {add_show_command(app, o.show), ok([&] { run_show_platform(o.show, out); })},
      {validate, ok([&] { run_validate(o.validate, out, *log); })},
      {add_collbench_command(app, o.collbench), ok([&] { run_collbench(o.collbench, out); })},
      {add_analyze_command(app, o.analyze), ok([&] { run_analyze(o.analyze, out); })},
      {add_sweep_command(app, o.sweep), [&] { return run_sweep_command(o.sweep, out, err); }},
      {add_study_report_command(app, o.report), ok([&] { run_report_command(o.report, out); })},
      {add_import_command(app, o.import), ok([&] { run_import_hf(o.import, out); })},
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return report_parse_error(app, e, argc, argv, out, err);
  }
  if (validate->parsed()) o.run.quiet = o.validate.quiet; // validate logs like run
  log = make_logger(err, o.run);
  for (const Command& command : commands)
    if (command.parsed->parsed()) return guarded(err, command.run);
  return guarded(err, [&] {
    o.checked.apply(o.run);
    o.run.progress = &err;
    o.run.progress_terminal = &err == &std::cerr && isatty(STDERR_FILENO) == 1;
    run_simulation(o.run, out, *log);
    return int{ExitCode::success};
  });
}

} // namespace twocs::cli
