// Private: progress of a long `twocs run` on stderr (issue "Performance and scale": a user never
// wonders whether it hangs). Phases (lowering, platform, simulation) and, while simulating, a
// bar with tasks done, rate and ETA: redrawn in place on a terminal, plain lines every few
// seconds otherwise; silent for runs shorter than about 2 s and with --quiet.
#pragma once

#include <chrono>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>

namespace twocs::cli {

/// One observation of the simulation: tasks done of total after `elapsed_s` of simulating.
struct ProgressSample {
  std::uint64_t done = 0;
  std::uint64_t total = 0;
  double elapsed_s = 0; // since the simulation phase began
};

/// "simulation [#########...........]  45%  1.9 M/4.2 M tasks  0.31 M tasks/s  ETA 7 s" with a
/// bar `width` characters wide; no ETA before any task has finished.
[[nodiscard]] std::string progress_bar(const ProgressSample& sample, int width = 30);

/// The same without the bar, for logs: "simulation: 45% (1.9 M of 4.2 M tasks, ...)".
[[nodiscard]] std::string progress_line(const ProgressSample& sample);

/// "7 s", "2 min 05 s", "1 h 02 min".
[[nodiscard]] std::string duration_text(double seconds);

class ProgressReporter {
public:
  /// `out`: stderr, or nullptr to report nothing (--quiet). `terminal`: redraw a bar in place.
  ProgressReporter(std::ostream* out, bool terminal);
  ~ProgressReporter();

  /// A new phase of the run begins; named on stderr once the run has lasted `quiet_for`.
  void phase(std::string_view name);
  /// The engine's progress callback (engine::EngineOptions::on_progress).
  void update(std::uint64_t done, std::uint64_t total);
  /// The simulation ended: a terminal's bar line is closed.
  void finish();

private:
  using Clock = std::chrono::steady_clock;
  [[nodiscard]] bool past_quiet_period() const;

  std::ostream* out_;
  bool terminal_;
  Clock::time_point start_ = Clock::now();
  Clock::time_point phase_start_ = start_;
  Clock::time_point last_draw_{};
  bool bar_open_ = false;
  static constexpr std::chrono::milliseconds quiet_for{2000};   // shorter runs stay silent
  static constexpr std::chrono::milliseconds redraw_every{200}; // terminal bar refresh
  static constexpr std::chrono::milliseconds line_every{5000};  // plain lines when not a terminal
};

} // namespace twocs::cli
