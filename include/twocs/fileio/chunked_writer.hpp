// Formatting large outputs (traces, DAG dumps) into a memory buffer that is handed to the
// stream in chunks, so millions of records never sit in memory at once. Shared by every writer of files.
#pragma once

#include <cstddef>
#include <iterator>
#include <ostream>
#include <string_view>

#include <fmt/format.h>

namespace twocs::fileio {

class ChunkedWriter {
public:
  explicit ChunkedWriter(std::ostream& out) : out_(out) {}
  ChunkedWriter(const ChunkedWriter&) = delete;
  ChunkedWriter& operator=(const ChunkedWriter&) = delete;
  ~ChunkedWriter() = default; // callers flush() explicitly: a destructor must not throw

  [[nodiscard]] fmt::memory_buffer& buffer() { return buffer_; }

  template <class... Args> void format(fmt::format_string<Args...> pattern, Args&&... args) {
    fmt::format_to(std::back_inserter(buffer_), pattern, std::forward<Args>(args)...);
  }
  void append(std::string_view text) { buffer_.append(text); }

  /// Hands the buffer to the stream once it holds a chunk; call after each record.
  void end_record() {
    if (buffer_.size() >= chunk_bytes) flush();
  }
  void flush() {
    out_.write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
    buffer_.clear();
  }

private:
  static constexpr std::size_t chunk_bytes = std::size_t{1} << 20;
  std::ostream& out_;
  fmt::memory_buffer buffer_;
};

} // namespace twocs::fileio
