// Running the command line in-process for the calibrate and show tests: exit code and output.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include <twocs/cli/app.hpp>

namespace twocs::test {

struct CliResult {
  int code = -1;
  std::string out;
  std::string err;
};

inline CliResult run_command_line(std::vector<std::string> args) {
  args.insert(args.begin(), "twocs");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  CliResult r;
  r.code = cli::run_cli(static_cast<int>(argv.size()), argv.data(), out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

/// A fresh directory for one test's files, removed afterwards.
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& name)
      : path(std::filesystem::temp_directory_path() / ("twocs-" + name + "-" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  [[nodiscard]] std::string file(const std::string& name) const { return (path / name).string(); }
  [[nodiscard]] std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path / name, std::ios::binary) << text;
    return file(name);
  }
};

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

inline std::string source_file(const std::string& relative) {
  return (std::filesystem::path(TWOCS_SOURCE_DIR) / relative).string();
}

/// A small, fast `twocs run` command line: two layers on a tensor x data = 2 x 2 grid (4
/// devices), with `extra` arguments after it.
inline std::vector<std::string> small_run(std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"run",
                                "--set",
                                "model.layers=2",
                                "--set",
                                "model.hidden=1024",
                                "--set",
                                "model.heads=16",
                                "--set",
                                "model.seq_len=1024",
                                "--set",
                                "training.global_batch=4",
                                "--set",
                                "training.micro_batch=1",
                                "--set",
                                "training.parallelism.tensor=2",
                                "--set",
                                "training.parallelism.data=2"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

} // namespace twocs::test
