#include <twocs/fileio/output_file.hpp>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <system_error>

#include <fmt/format.h>
#include <signal.h>
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

/// The writer's process id when `name` is a temporary name of `target`'s ("T.tmp-PID-N").
std::optional<long> writer_of(const std::string& name, const std::string& target) {
  const std::string prefix = target + ".tmp-";
  if (!name.starts_with(prefix)) return std::nullopt;
  const std::string_view rest = std::string_view(name).substr(prefix.size());
  long pid = 0;
  const auto [ptr, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), pid);
  if (ec != std::errc() || ptr == rest.data() + rest.size() || *ptr != '-' || pid <= 0) return std::nullopt;
  return pid;
}

/// Removes the temporary files of `path` left by writers that were killed before they could
/// (SIGKILL, a power cut): their process no longer exists. A live writer's file is kept, so
/// concurrent runs writing the same target never disturb each other.
void remove_stale_temporaries(const std::filesystem::path& path) {
  std::error_code ec;
  const auto directory = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  const std::string target = path.filename().string();
  std::filesystem::directory_iterator it(directory, ec);
  for (const std::filesystem::directory_iterator end; !ec && it != end; it.increment(ec)) {
    const auto pid = writer_of(it->path().filename().string(), target);
    if (pid && ::kill(static_cast<pid_t>(*pid), 0) != 0 && errno == ESRCH) remove_quietly(it->path());
  }
}

[[noreturn]] void fail(const std::filesystem::path& path, const std::filesystem::path& temp, std::string_view why) {
  remove_quietly(temp);
  throw InputError(fmt::format("cannot write output file '{}': {}", path.string(), why), {}, std::string(fix_hint));
}

std::string describe_errno(int error, std::string_view fallback) {
  return error != 0 ? std::string(std::strerror(error)) : std::string(fallback);
}

/// Whether `path` (its symlinks followed: /dev/stdout) names a device, a FIFO or a socket: output
/// goes into it, since a rename over it would replace the device or pipe with a plain file
/// (`--json /dev/null` run as root would otherwise remove /dev/null).
bool writes_in_place(const std::filesystem::path& path) {
  std::error_code ec;
  const auto type = std::filesystem::status(path, ec).type();
  if (ec) return false;
  using std::filesystem::file_type;
  return type == file_type::character || type == file_type::block || type == file_type::fifo ||
         type == file_type::socket;
}

void write_in_place(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write) {
  errno = 0;
  std::ofstream out(path, std::ios::binary);
  const auto failed = [&](std::string_view fallback) {
    throw InputError(fmt::format("cannot write output file '{}': {}", path.string(), describe_errno(errno, fallback)),
                     {}, std::string(fix_hint));
  };
  if (!out) failed("cannot open it");
  write(out);
  out.flush();
  if (!out) failed("the write failed");
}

} // namespace

void write_file_atomically(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write) {
  if (writes_in_place(path)) {
    write_in_place(path, write);
    return;
  }
  remove_stale_temporaries(path);
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
