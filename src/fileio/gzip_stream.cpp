#include <twocs/fileio/gzip_stream.hpp>

#include <array>
#include <memory>
#include <stdexcept>
#include <streambuf>
#include <string>

#include <zlib.h>

namespace twocs::fileio {
namespace {

// windowBits 15 + 16 asks deflateInit2 for gzip framing instead of zlib's (zlib manual, deflateInit2).
constexpr int gzip_window_bits = 15 + 16;
// zlib's default memory level (zlib manual: "memLevel=8 ... the default value").
constexpr int default_memory_level = 8;
constexpr std::size_t chunk_bytes = std::size_t{1} << 16;

/// A streambuf that deflates what it receives into `out`.
class GzipBuffer final : public std::streambuf {
public:
  explicit GzipBuffer(std::ostream& out) : out_(out) {
    // Level 6: zlib's Z_DEFAULT_COMPRESSION, its balance of size and speed (zlib manual).
    if (deflateInit2(&z_, 6, Z_DEFLATED, gzip_window_bits, default_memory_level, Z_DEFAULT_STRATEGY) != Z_OK)
      throw std::runtime_error("gzip: zlib could not start compressing");
    setp(input_.data(), input_.data() + input_.size());
  }
  GzipBuffer(const GzipBuffer&) = delete;
  GzipBuffer& operator=(const GzipBuffer&) = delete;
  ~GzipBuffer() override { deflateEnd(&z_); }

  /// Compresses what is buffered and writes the gzip trailer.
  void finish() {
    deflate_pending(Z_FINISH);
    out_.flush();
  }

protected:
  int_type overflow(int_type ch) override {
    deflate_pending(Z_NO_FLUSH);
    if (traits_type::eq_int_type(ch, traits_type::eof())) return traits_type::not_eof(ch);
    *pptr() = traits_type::to_char_type(ch);
    pbump(1);
    return ch;
  }
  int sync() override {
    deflate_pending(Z_NO_FLUSH);
    return 0;
  }

private:
  void deflate_pending(int flush) {
    z_.next_in = reinterpret_cast<Bytef*>(pbase());
    z_.avail_in = static_cast<uInt>(pptr() - pbase());
    int status = Z_OK;
    do {
      z_.next_out = reinterpret_cast<Bytef*>(output_.data());
      z_.avail_out = static_cast<uInt>(output_.size());
      status = deflate(&z_, flush);
      if (status == Z_STREAM_ERROR) throw std::runtime_error("gzip: zlib failed while compressing");
      out_.write(output_.data(), static_cast<std::streamsize>(output_.size() - z_.avail_out));
    } while (z_.avail_out == 0 || (flush == Z_FINISH && status != Z_STREAM_END));
    setp(input_.data(), input_.data() + input_.size());
  }

  std::ostream& out_;
  z_stream z_{};
  std::array<char, chunk_bytes> input_{};
  std::array<char, chunk_bytes> output_{};
};

} // namespace

void write_gzipped(std::ostream& out, const std::function<void(std::ostream&)>& write) {
  auto buffer = std::make_unique<GzipBuffer>(out); // two 64 KiB buffers: off the stack
  std::ostream compressed(buffer.get());
  write(compressed);
  compressed.flush();
  if (!compressed) throw std::runtime_error("gzip: the compressed stream failed");
  buffer->finish();
}

} // namespace twocs::fileio
