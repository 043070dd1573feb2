#include <twocs/fileio/output_file.hpp>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>

#include <fmt/format.h>
#include <unistd.h>

#include <twocs/error.hpp>

namespace twocs::fileio {
namespace {

constexpr std::string_view fix_hint = "check that the directory exists and is writable, or choose another path";

/// A name beside `path` that no other writer uses: the process id tells concurrent runs apart,
/// the counter concurrent writers of one process (a sweep writing several outputs).
std::filesystem::path temporary_path_for(const std::filesystem::path& path) {
  static std::atomic<unsigned> counter{0};
  auto temp = path;
  temp += fmt::format(".tmp-{}-{}", static_cast<long>(::getpid()), counter.fetch_add(1));
  return temp;
}

void remove_quietly(const std::filesystem::path& path) {
  std::error_code ignored;
  std::filesystem::remove(path, ignored);
}

[[noreturn]] void fail(const std::filesystem::path& path, const std::filesystem::path& temp, std::string_view why) {
  remove_quietly(temp);
  throw InputError(fmt::format("cannot write output file '{}': {}", path.string(), why), {}, std::string(fix_hint));
}

std::string describe_errno(int error, std::string_view fallback) {
  return error != 0 ? std::string(std::strerror(error)) : std::string(fallback);
}

} // namespace

void write_file_atomically(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write) {
  const auto temp = temporary_path_for(path);
  errno = 0;
  std::ofstream out(temp, std::ios::binary | std::ios::trunc);
  if (!out) fail(path, temp, describe_errno(errno, "cannot create a file in its directory"));
  try {
    write(out);
    out.flush();
  } catch (...) {
    out.close();
    remove_quietly(temp);
    throw;
  }
  errno = 0;
  const bool written = static_cast<bool>(out);
  out.close();
  if (!written || out.fail()) fail(path, temp, describe_errno(errno, "the write failed (is the disk full?)"));
  std::error_code renamed;
  std::filesystem::rename(temp, path, renamed);
  if (renamed) fail(path, temp, renamed.message());
}

void write_file_atomically(const std::filesystem::path& path, std::string_view content) {
  write_file_atomically(path, [content](std::ostream& out) { out.write(content.data(), std::ssize(content)); });
}

} // namespace twocs::fileio
