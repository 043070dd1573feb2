// Private: the sweep's progress on stderr: a bar redrawn in place on a terminal (done/total,
// failures, ETA), one plain line per finished scenario otherwise (logs, CI).
#pragma once

#include <chrono>
#include <cstddef>
#include <ostream>
#include <string>

namespace twocs::sweep::detail {

class Progress {
public:
  Progress(std::ostream& out, bool terminal, std::size_t total, std::size_t already_done);
  void finished(std::size_t index, std::string_view status, double seconds, const std::string& reason);
  /// A scenario whose process was stopped from outside by `signal`: no row, a rerun runs it.
  void left_out(std::size_t index, int signal);
  void close();

private:
  void draw();
  std::ostream& out_;
  bool terminal_;
  std::size_t total_, done_, failed_ = 0, ran_ = 0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

} // namespace twocs::sweep::detail
