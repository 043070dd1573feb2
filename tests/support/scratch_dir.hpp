// A fresh folder under the system's temporary directory for tests that read files by path,
// with workloads/ and platforms/ inside; removed when the test ends.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

namespace twocs::test {

struct ScratchDir {
  std::filesystem::path path;
  explicit ScratchDir(const std::string& name) : path(std::filesystem::temp_directory_path() / name) {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path / "workloads");
    std::filesystem::create_directories(path / "platforms");
  }
  ~ScratchDir() { std::filesystem::remove_all(path); }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  /// Writes `text` to `relative` (below path) and returns the file's path.
  [[nodiscard]] std::filesystem::path write(const std::string& relative, const std::string& text) const {
    const auto file = path / relative;
    std::ofstream(file) << text;
    return file;
  }
};

} // namespace twocs::test
