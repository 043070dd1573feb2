// The values of `twocs run`'s flags as typed on the command line (run_command.hpp): each parser
// throws InputError naming the flag, what it accepts and the fix.
#include "run_command.hpp"
#include "whole_number.hpp"

#include <cctype>
#include <limits>

#include <fmt/format.h>

#include <twocs/error.hpp>

namespace twocs::cli {
namespace {

/// A flag's value as typed, in lower case: the choices are matched whatever the case.
std::string lowered(std::string_view text) {
  std::string value(text);
  for (char& c : value) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return value;
}

} // namespace

FoldMode parse_fold_mode(std::string_view text) {
  const std::string mode = lowered(text);
  if (mode == "auto") return FoldMode::automatic;
  if (mode == "on") return FoldMode::on;
  if (mode == "off") return FoldMode::off;
  if (mode == "shared") return FoldMode::shared;
  throw InputError(fmt::format("--fold: '{}' is not a fold mode; it accepts auto, on, off or shared", text), "--fold",
                   fmt::format("pass --fold auto (fold when the full run exceeds {} tasks, the default), --fold on "
                               "(one device per pipeline stage), --fold off (every device) or --fold shared (one "
                               "device per stage, with its peers' traffic on the links they share)",
                               RunOptions{}.fold_above_tasks));
}

std::uint64_t parse_max_tasks(std::string_view text) {
  const auto value = whole_number<std::uint64_t>(text);
  if (!value || *value == 0)
    throw InputError(fmt::format("--max-tasks: '{}' is not a task count; it accepts a whole number from 1 to {}", text,
                                 std::numeric_limits<std::uint64_t>::max()),
                     "--max-tasks",
                     fmt::format("pass a positive whole number without separators, e.g. --max-tasks 50000000 "
                                 "(the default is {})",
                                 RunOptions{}.max_tasks));
  return *value;
}

std::string parse_plan_search(std::string_view text) {
  std::string objective = lowered(text);
  if (objective == "none" || objective == "smallest" || objective == "fastest") return objective;
  throw InputError(
      fmt::format("--plan-search: '{}' is not a search objective; it accepts none, smallest or fastest", text),
      "--plan-search",
      "pass --plan-search smallest (the least tensor x pipeline parallelism that fits in memory) or "
      "--plan-search fastest (simulate the closed form's best few plans, --plan-candidates)");
}

std::int64_t parse_plan_candidates(std::string_view text) {
  const auto value = whole_number<std::int64_t>(text);
  if (!value || *value < 1 || *value > 1000)
    throw InputError(fmt::format("--plan-candidates: '{}' is not a count of plans from 1 to 1000", text),
                     "--plan-candidates", "pass a small whole number, e.g. --plan-candidates 4 (the default)");
  return *value;
}

lowering::CollectiveLowering parse_collective_lowering(std::string_view text) {
  if (const auto mode = lowering::collective_lowering_from_string(text)) return *mode;
  throw InputError(fmt::format("--collective-lowering: '{}' is not a lowering; it accepts step, coarse or auto", text),
                   "--collective-lowering",
                   "pass --collective-lowering auto (coarse for rings of 8 or more ranks, the default), step (every "
                   "ring step a transfer) or coarse (one transfer per ring link)");
}

ReplayMode parse_replay_mode(std::string_view text) {
  const std::string mode = lowered(text);
  if (mode == "auto") return ReplayMode::automatic;
  if (mode == "on") return ReplayMode::on;
  if (mode == "off") return ReplayMode::off;
  throw InputError(fmt::format("--replay: '{}' is not a replay mode; it accepts auto, on or off", text), "--replay",
                   fmt::format("pass --replay auto (replay the steady state of runs over {} tasks, the default), "
                               "--replay on (whenever the schedule allows) or --replay off (simulate every "
                               "micro-batch)",
                               RunOptions{}.fold_above_tasks));
}

} // namespace twocs::cli
