// A located YAML value written back as one line of flow-style YAML, the VALUE of a
// `--set KEY=VALUE` a study's scenario passes on.
#pragma once

#include <string>

#include "yaml_document.hpp"

namespace twocs::config::detail {

/// `25GB/s`, `"a b"` for a quoted string, `[12, 12]`, `{bf16: 312TFLOP/s}`, `null`.
[[nodiscard]] std::string flow_yaml(const YamlNode& node);

} // namespace twocs::config::detail
