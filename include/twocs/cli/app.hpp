// The `twocs` command line. main() only forwards to run_cli, so that tests can run the whole
// program in-process and check its output and exit code.
#pragma once

#include <ostream>

namespace twocs::cli {

/// Exit codes of the contract.
enum ExitCode : int { success = 0, internal_error = 1, bad_input = 2, out_of_memory = 3 };

/// Runs the command line; never throws and never calls exit().
[[nodiscard]] int run_cli(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

} // namespace twocs::cli
