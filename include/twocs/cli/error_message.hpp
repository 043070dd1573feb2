// The text an error a user caused is reported with (docs/errors.md): what the command line
// prints on stderr, and what the Python module's exceptions carry.
#pragma once

#include <string>

#include <twocs/error.hpp>

namespace twocs::cli {

/// "file:line:column: error: problem\n  fix: ..." (InputError::message()).
[[nodiscard]] std::string error_message(const InputError& error);
/// "twocs: error: " and the per-stage table of peak memory versus capacity.
[[nodiscard]] std::string error_message(const OutOfMemoryError& error);

} // namespace twocs::cli
