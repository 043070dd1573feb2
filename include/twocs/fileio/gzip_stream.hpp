// Gzip compression as a stream: writers keep writing to a std::ostream while the bytes reach
// the file compressed (`twocs run --trace FILE.json.gz`). zlib's deflate in gzip framing
// (RFC 1952); the header's modification time is 0 so the same content gives the same bytes.
#pragma once

#include <functional>
#include <ostream>

namespace twocs::fileio {

/// Calls `write(stream)` with a stream whose bytes reach `out` gzip-compressed, then finishes
/// the gzip member. Throws std::runtime_error if zlib fails; a failure of `out` shows in its state.
void write_gzipped(std::ostream& out, const std::function<void(std::ostream&)>& write);

} // namespace twocs::fileio
