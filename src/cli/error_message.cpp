#include <twocs/cli/error_message.hpp>

namespace twocs::cli {

std::string error_message(const InputError& error) { return error.message(); }

std::string error_message(const OutOfMemoryError& error) { return std::string("twocs: error: ") + error.what(); }

} // namespace twocs::cli
