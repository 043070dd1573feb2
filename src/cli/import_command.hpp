// Private: `twocs import hf config.json [-o workload.yaml]` (src/config/hf_import.cpp).
#pragma once

#include <filesystem>
#include <optional>
#include <ostream>

namespace CLI {
class App;
} // namespace CLI

namespace twocs::cli {

struct ImportOptions {
  std::filesystem::path config; // the Hugging Face config.json
  std::optional<std::filesystem::path> output;
};

/// Registers `import` with its `hf` subcommand; returns the `hf` subcommand.
CLI::App* add_import_command(CLI::App& app, ImportOptions& options);
/// Writes the workload to --output (atomically) or prints it.
void run_import_hf(const ImportOptions& options, std::ostream& out);

} // namespace twocs::cli
