// Where each number of a platform file comes from (docs/platform-model.md, "Provenance"): a
// measurement with its citation, a value derived by a named rule applied to every device alike,
// or an assumption with what the validation does when it moves. A platform states them in its
// `provenance:` section; `twocs show platform` prints them beside the values.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <twocs/config/scenario_loader.hpp>

namespace twocs::config {

enum class ProvenanceClass {
  measurement,  // a datasheet, kernel benchmark or nccl-tests figure, cited
  derived,      // a named rule applied to every device alike, with the evidence it is applied to
  assumption,   // neither: said so, with the sensitivity of the validation to it
  command_line, // replaced by --set: the file's statement no longer applies
  unstated      // the file sets it and says nothing of where it comes from
};

[[nodiscard]] std::string_view to_string(ProvenanceClass c);

struct ParameterProvenance {
  std::string parameter; // dotted path, "device.operator_model.gemm_efficiency"
  std::string value;     // the value as the file writes it (one line)
  ProvenanceClass kind = ProvenanceClass::assumption;
  std::string source;      // the citation, or the evidence a rule is applied to
  std::string rule;        // derived: the rule (where it is documented)
  std::string sensitivity; // assumption: how the validation moves with it
};

struct PlatformProvenance {
  std::vector<ParameterProvenance> parameters; // those the file sets, in provenance_parameters()'s order

  /// The parameters the file sets without a statement.
  [[nodiscard]] std::vector<std::string> unstated() const;
};

/// The platform keys that price time and so need a statement when a file sets them. Names,
/// topology and routing choices, seeds and the cluster's size describe the cluster, not
/// evidence, and are not listed.
[[nodiscard]] std::span<const std::string_view> provenance_parameters();

/// The statements of a platform (with --set overrides applied: a replaced parameter is
/// `command_line`), checked as strictly as the rest of the file.
[[nodiscard]] PlatformProvenance read_platform_provenance(const InputText& platform,
                                                          const std::vector<std::string>& overrides = {});

} // namespace twocs::config
