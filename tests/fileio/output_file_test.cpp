#include <twocs/fileio/output_file.hpp>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

#include <twocs/error.hpp>

#include "support/golden.hpp"

namespace fs = std::filesystem;
using twocs::InputError;
using twocs::fileio::write_file_atomically;
using twocs::testing::read_text;

namespace {

/// A fresh, empty directory for one test, removed afterwards.
class TempDir {
public:
  explicit TempDir(const std::string& name)
      : path_(fs::temp_directory_path() / ("twocs-output-file-" + std::to_string(::getpid()) + "-" + name)) {
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  [[nodiscard]] const fs::path& path() const { return path_; }
  [[nodiscard]] std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(path_)) names.push_back(e.path().filename().string());
    return names;
  }

private:
  fs::path path_;
};

} // namespace

TEST_SUITE("output file") {
  TEST_CASE("output file: writes the content and nothing else") {
    TempDir dir("writes");
    const auto target = dir.path() / "summary.json";
    write_file_atomically(target, [](std::ostream& out) { out << "{\"a\": 1}\n"; });
    CHECK(read_text(target) == "{\"a\": 1}\n");
    CHECK(dir.entries() == std::vector<std::string>{"summary.json"});
  }

  TEST_CASE("output file: replaces an existing file") {
    TempDir dir("replaces");
    const auto target = dir.path() / "out.txt";
    write_file_atomically(target, std::string_view("first version, longer"));
    write_file_atomically(target, std::string_view("second"));
    CHECK(read_text(target) == "second");
    CHECK(dir.entries().size() == 1);
  }

  TEST_CASE("output file: a missing directory is an InputError naming the path, and leaves no file") {
    TempDir dir("missing");
    const auto target = dir.path() / "no" / "such" / "dir" / "trace.json";
    try {
      write_file_atomically(target, std::string_view("x"));
      FAIL("expected an InputError");
    } catch (const InputError& e) {
      CHECK(std::string(e.what()).find(target.string()) != std::string::npos);
      CHECK(e.fix().find("directory exists and is writable") != std::string::npos);
    }
    CHECK(dir.entries().empty());
  }

  TEST_CASE("output file: a target that is a directory fails cleanly") {
    TempDir dir("isdir");
    fs::create_directory(dir.path() / "report.html");
    CHECK_THROWS_AS(write_file_atomically(dir.path() / "report.html", std::string_view("x")), InputError);
    CHECK(dir.entries() == std::vector<std::string>{"report.html"});
    CHECK(fs::is_directory(dir.path() / "report.html"));
  }

  TEST_CASE("output file: an exception in the writer leaves no file and keeps the previous one") {
    TempDir dir("throws");
    const auto target = dir.path() / "summary.json";
    write_file_atomically(target, std::string_view("previous"));
    CHECK_THROWS_WITH_AS(write_file_atomically(target,
                                               [](std::ostream& out) {
                                                 out << "half of it";
                                                 throw std::runtime_error("boom");
                                               }),
                         "boom", std::runtime_error);
    CHECK(read_text(target) == "previous");
    CHECK(dir.entries() == std::vector<std::string>{"summary.json"});

    const auto fresh = dir.path() / "fresh.json";
    CHECK_THROWS(write_file_atomically(fresh, [](std::ostream&) { throw std::runtime_error("boom"); }));
    CHECK_FALSE(fs::exists(fresh));
    CHECK(dir.entries().size() == 1);
  }

  TEST_CASE("output file: a stream error is an InputError and keeps the previous file") {
    TempDir dir("badbit");
    const auto target = dir.path() / "trace.json";
    write_file_atomically(target, std::string_view("previous"));
    CHECK_THROWS_AS(write_file_atomically(target,
                                          [](std::ostream& out) {
                                            out << "partial";
                                            out.setstate(std::ios::badbit);
                                          }),
                    InputError);
    CHECK(read_text(target) == "previous");
    CHECK(dir.entries() == std::vector<std::string>{"trace.json"});
  }

  TEST_CASE("output file: an unwritable directory is an InputError" * doctest::skip(::geteuid() == 0)) {
    TempDir dir("readonly");
    fs::permissions(dir.path(), fs::perms::owner_read | fs::perms::owner_exec);
    CHECK_THROWS_AS(write_file_atomically(dir.path() / "x.json", std::string_view("x")), InputError);
    fs::permissions(dir.path(), fs::perms::owner_all);
    CHECK(dir.entries().empty());
  }
}

TEST_CASE("an output path that is a pipe is written into, not replaced by a file") {
  // Renaming a finished temporary over it would turn the pipe (or /dev/null, as root) into a
  // plain file; the reader must get the content and the pipe must stay a pipe.
  const TempDir dir("fifo");
  const fs::path fifo = dir.path() / "out.json";
  REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  std::string received;
  std::thread reader([&] { received = read_text(fifo); });
  write_file_atomically(fifo, std::string_view("{\"ok\": true}\n"));
  reader.join();
  CHECK(received == "{\"ok\": true}\n");
  CHECK(fs::is_fifo(fifo));
  CHECK(dir.entries() == std::vector<std::string>{"out.json"}); // no temporary beside it
}
