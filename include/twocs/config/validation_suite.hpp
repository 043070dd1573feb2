// A validation file (workloads/validation/runs.yaml): published training runs and per-layer
// timings, each with its citation, the workload and platform files it ran on and what was
// measured. `twocs validate` simulates every entry and compares (docs/validation.md).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <twocs/error.hpp>
#include <twocs/units/quantity.hpp>

namespace twocs::config {

/// What a row measured: one whole iteration, or one transformer layer's forward and backward
/// on one tensor-parallel group (Korthikanti et al. 2022, Table 4).
enum class ValidationKind { iteration, layer };

/// How the run's replicas are simulated: as `--fold` (auto), or always folded (on, for runs too
/// large to simulate unfolded whose shared links carry little traffic; the file says why), or off.
enum class ValidationFold { automatic, on, off };

/// Where one entry of a run's `set:` list is in the validation file.
struct OverrideOrigin {
  SourceLocation where; // the entry's first character
  bool plain = true;    // written unquoted on one line: column c of "KEY=VALUE" is where + c - 1
};

/// What a layer row times: the whole transformer layer, or its mixture-of-experts block alone
/// (Megatron-Core's MoELayer: router, dispatch, experts, combine and shared experts; not the
/// attention, the norms or the residual adds), as Megatron-LM's moe_perf tests time it.
enum class ValidationPart { layer, moe };

struct ValidationRun {
  std::string name;
  std::string citation;
  ValidationKind kind = ValidationKind::iteration;
  std::filesystem::path workload; // resolved against the validation file's folder
  std::filesystem::path platform;
  std::vector<std::string> overrides;              // "KEY=VALUE", as `twocs run --set`
  std::vector<OverrideOrigin> override_origins;    // each of `overrides` in the file
  std::optional<units::Seconds> iteration_time;    // iteration rows
  std::optional<double> tokens_per_second_per_gpu; // iteration rows: converted with the plan
  std::optional<double> model_tflops_per_gpu;      // iteration rows: by Megatron's model FLOPs
  std::optional<units::Bytes> peak_memory;         // iteration rows: measured peak per device
  ValidationFold fold = ValidationFold::automatic; // `--fold` other than auto wins
  units::Seconds forward;                          // layer rows
  units::Seconds backward;                         // layer rows
  /// Layer rows whose source gives only the sum of forward and backward (then `forward` and
  /// `backward` are 0): compared as one row, "NAME forward+backward".
  std::optional<units::Seconds> forward_backward;
  ValidationPart part = ValidationPart::layer; // layer rows
  SourceLocation where;                        // the row, for errors
};

struct ValidationSuite {
  std::string name; // the file's stem
  std::vector<ValidationRun> runs;
};

/// Moves an error located in one of `run`'s `set:` entries (at "--set KEY=VALUE", as the
/// scenario loader names overrides) to that entry's line and column in the validation file.
void locate_in_validation_file(InputError& error, const ValidationRun& run);

/// Reads and checks a validation file; errors name file:line:column and the fix.
[[nodiscard]] ValidationSuite load_validation_suite(const std::filesystem::path& file);

/// The same from text in memory; relative paths resolve against `base_dir`.
[[nodiscard]] ValidationSuite parse_validation_suite(const std::string& name, const std::string& text,
                                                     const std::filesystem::path& base_dir);

} // namespace twocs::config
