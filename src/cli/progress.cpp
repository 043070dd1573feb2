#include "progress.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace twocs::cli {
namespace {

std::string millions(std::uint64_t n) { return fmt::format("{:.1f} M", static_cast<double>(n) / 1e6); }

double fraction(const ProgressSample& s) {
  return s.total == 0 ? 1.0 : std::min(1.0, static_cast<double>(s.done) / static_cast<double>(s.total));
}

/// "0.31 M tasks/s  ETA 7 s", or "" before the rate is known.
std::string rate_and_eta(const ProgressSample& s) {
  if (s.done == 0 || s.elapsed_s <= 0) return {};
  const double rate = static_cast<double>(s.done) / s.elapsed_s;
  const double left = static_cast<double>(s.total > s.done ? s.total - s.done : 0) / rate;
  return fmt::format("{:.2f} M tasks/s  ETA {}", rate / 1e6, duration_text(left));
}

} // namespace

std::string duration_text(double seconds) {
  const auto s = static_cast<std::int64_t>(std::llround(std::max(seconds, 0.0)));
  if (s < 60) return fmt::format("{} s", s);
  if (s < 3600) return fmt::format("{} min {:02} s", s / 60, s % 60);
  return fmt::format("{} h {:02} min", s / 3600, (s % 3600) / 60);
}

std::string progress_bar(const ProgressSample& sample, int width) {
  const double f = fraction(sample);
  const auto filled = static_cast<int>(std::floor(f * width));
  std::string bar(static_cast<std::size_t>(filled), '#');
  bar.append(static_cast<std::size_t>(std::max(width - filled, 0)), '.');
  std::string text = fmt::format("simulation [{}] {:3.0f}%  {}/{} tasks", bar, 100 * std::floor(f * 100) / 100,
                                 millions(sample.done), millions(sample.total));
  if (const auto tail = rate_and_eta(sample); !tail.empty()) text += "  " + tail;
  return text;
}

std::string progress_line(const ProgressSample& sample) {
  std::string text = fmt::format("simulation: {:.0f}% ({} of {} tasks", 100 * std::floor(fraction(sample) * 100) / 100,
                                 millions(sample.done), millions(sample.total));
  if (const auto tail = rate_and_eta(sample); !tail.empty()) text += ", " + tail;
  return text + ")";
}

ProgressReporter::ProgressReporter(std::ostream* out, bool terminal) : out_(out), terminal_(terminal) {}

ProgressReporter::~ProgressReporter() { finish(); }

bool ProgressReporter::past_quiet_period() const { return Clock::now() - start_ >= quiet_for; }

void ProgressReporter::phase(std::string_view name) {
  phase_start_ = Clock::now();
  last_draw_ = phase_start_;
  if (out_ == nullptr || !past_quiet_period()) return;
  finish();
  const double at = std::chrono::duration<double>(phase_start_ - start_).count();
  *out_ << fmt::format("twocs: [{}] {}\n", duration_text(at), name) << std::flush;
}

void ProgressReporter::update(std::uint64_t done, std::uint64_t total) {
  if (out_ == nullptr || !past_quiet_period()) return;
  const auto now = Clock::now();
  if (now - last_draw_ < (terminal_ ? redraw_every : line_every)) return;
  last_draw_ = now;
  const ProgressSample sample{done, total, std::chrono::duration<double>(now - phase_start_).count()};
  if (terminal_) {
    *out_ << "\r\033[K" << progress_bar(sample) << std::flush; // \033[K: erase the rest of the line
    bar_open_ = true;
  } else {
    *out_ << "twocs: " << progress_line(sample) << '\n' << std::flush;
  }
}

void ProgressReporter::finish() {
  if (!bar_open_ || out_ == nullptr) return;
  *out_ << "\r\033[K" << std::flush;
  bar_open_ = false;
}

} // namespace twocs::cli
