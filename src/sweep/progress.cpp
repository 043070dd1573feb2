#include "progress.hpp"

#include <fmt/format.h>

#include <twocs/sweep/status.hpp>

namespace twocs::sweep::detail {
namespace {

std::string clock_text(double seconds) {
  const auto s = static_cast<long>(seconds + 0.5);
  return s >= 3600 ? fmt::format("{}h{:02}m", s / 3600, s / 60 % 60) : fmt::format("{}m{:02}s", s / 60, s % 60);
}

} // namespace

Progress::Progress(std::ostream& out, bool terminal, std::size_t total, std::size_t already_done)
    : out_(out), terminal_(terminal), total_(total), done_(already_done) {
  if (already_done > 0) out_ << fmt::format("twocs: resuming: {} of {} scenarios already done\n", done_, total_);
  if (terminal_) draw();
}

void Progress::finished(std::size_t index, std::string_view status, double seconds, const std::string& reason) {
  ++done_;
  ++ran_;
  if (status != "ok") ++failed_;
  if (terminal_) {
    draw();
    return;
  }
  out_ << fmt::format("twocs: [{}/{}] scenario {} {} in {:.1f} s{}{}\n", done_, total_, index, status, seconds,
                      reason.empty() ? "" : ": ", reason);
  out_.flush();
}

void Progress::left_out(std::size_t index, int signal) {
  out_ << fmt::format("{}twocs: scenario {}'s process was stopped by {} from outside the sweep: no row, a rerun "
                      "runs it\n",
                      terminal_ ? "\n" : "", index, signal_name(signal));
  if (terminal_) draw();
  out_.flush();
}

void Progress::draw() {
  constexpr std::size_t width = 30;
  const std::size_t filled = total_ == 0 ? width : done_ * width / total_;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const std::size_t left = total_ - done_;
  const std::string eta =
      ran_ == 0 ? "--" : clock_text(elapsed / static_cast<double>(ran_) * static_cast<double>(left));
  out_ << fmt::format("\r[{}{}] {}/{}  {} failed  ETA {}   ", std::string(filled, '#'),
                      std::string(width - filled, '.'), done_, total_, failed_, eta);
  out_.flush();
}

void Progress::close() {
  if (terminal_) out_ << '\n';
}

} // namespace twocs::sweep::detail
