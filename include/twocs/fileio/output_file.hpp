// Writing an output file all at once: content goes to a temporary file beside the target,
// which is renamed over it only when complete, so no run leaves a half-written file.
#pragma once

#include <filesystem>
#include <functional>
#include <ostream>
#include <string_view>

namespace twocs::fileio {

/// Calls `write(stream)` on a temporary file and renames it to `path` on success. Throws
/// InputError (naming the path) when the file cannot be written; removes the temporary file
/// on any failure, including an exception from `write`. A process killed while writing
/// (SIGKILL) leaves its temporary file ("PATH.tmp-PID-N") and the old PATH untouched; the
/// next write of PATH removes such files of processes that no longer exist. A PATH that is a
/// device, FIFO or socket (/dev/null, /dev/stdout, a pipe) is written directly, never replaced.
void write_file_atomically(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write);

void write_file_atomically(const std::filesystem::path& path, std::string_view content);

} // namespace twocs::fileio
