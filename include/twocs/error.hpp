// The errors a user can cause. Each is thrown where it is detected and caught once, in the
// command line (src/cli), which maps it to an exit code: InputError -> 2, OutOfMemoryError -> 3.
// Anything else escaping the core is an internal error (exit code 1).
#pragma once

#include <optional>
#include <stdexcept>
#include <string>

namespace twocs {

/// Where in an input a value came from. Lines and columns are 1-based; `file` may name a
/// pseudo-source such as "--set training.parallelism.data=4" or "<embedded default.yaml>".
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;
};

/// Bad input or an infeasible plan. The model layer knows only the dotted key the problem is
/// about ("training.parallelism.tensor"); the config layer, which read the file, attaches the
/// file:line:column of that key before the message reaches the user.
class InputError : public std::runtime_error {
public:
  explicit InputError(std::string problem, std::string key_path = {}, std::string fix = {})
      : std::runtime_error(problem), problem_(std::move(problem)), key_path_(std::move(key_path)),
        fix_(std::move(fix)) {}

  [[nodiscard]] const std::string& problem() const { return problem_; }
  [[nodiscard]] const std::string& key_path() const { return key_path_; }
  [[nodiscard]] const std::string& fix() const { return fix_; }
  [[nodiscard]] const std::optional<SourceLocation>& location() const { return location_; }
  void set_location(SourceLocation where) { location_ = std::move(where); }

  /// "file:line:column: error: problem\n  fix: ..." as printed by the command line.
  [[nodiscard]] std::string message() const {
    std::string out;
    if (location_) {
      out += location_->file;
      if (location_->line > 0) out += ":" + std::to_string(location_->line) + ":" + std::to_string(location_->column);
      out += ": ";
    }
    out += "error: ";
    if (!key_path_.empty() && problem_.find(key_path_) == std::string::npos) out += key_path_ + ": ";
    out += problem_;
    if (!fix_.empty()) out += "\n  fix: " + fix_;
    return out;
  }

private:
  std::string problem_;
  std::string key_path_;
  std::string fix_;
  std::optional<SourceLocation> location_;
};

/// The plan does not fit in device memory (exit code 3). The message carries the per-stage
/// table of peak versus capacity.
class OutOfMemoryError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

} // namespace twocs
