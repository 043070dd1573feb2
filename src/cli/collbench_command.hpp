// Private: `twocs collbench --platform FILE [--collective C] [-g N] [-b S] [-e S] [-f F] [-n N]
// [-w N] [--algorithm A] [--json FILE]`: the nccl-tests of a simulated platform, with nccl-tests'
// flags and table. Each size is lowered to point-to-point messages (the same schedules as
// `twocs run`) and simulated on the platform's links by the same engine.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace twocs::cli {

struct CollbenchOptions {
  std::optional<std::filesystem::path> platform; // default: the embedded platform
  std::vector<std::string> overrides;
  std::string collective = "all-reduce";
  std::optional<std::int64_t> devices;  // default: one node (or --per-node ranks)
  std::optional<std::int64_t> ngpus;    // nccl-tests' -g: the same group size as --devices
  std::optional<std::int64_t> per_node; // ranks per node, spread over its devices; default: the first N devices
  std::string min_bytes = "8MiB";
  std::string max_bytes = "1GiB";
  double factor = 2.0;  // nccl-tests -f
  int iters = 20;       // nccl-tests -n, echoed (v2.16.9 src/common.cu default)
  int warmup_iters = 1; // nccl-tests -w, echoed (v2.16.9 src/common.cu default)
  std::string algorithm = "auto";
  int chunks = 1;              // pipeline slices per channel
  std::optional<int> channels; // default: one per NIC across nodes, one within a node
  std::optional<std::filesystem::path> json;
  std::string collective_lowering = "step"; // rings step by step or coarse (lowering/collective_lowering.hpp)
};

/// Registers `collbench`; returns it.
CLI::App* add_collbench_command(CLI::App& app, CollbenchOptions& options);

/// Throws InputError for bad inputs.
void run_collbench(const CollbenchOptions& options, std::ostream& out);

} // namespace twocs::cli
