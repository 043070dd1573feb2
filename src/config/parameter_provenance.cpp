#include <twocs/config/parameter_provenance.hpp>

#include "yaml_document.hpp"
#include "yaml_overrides.hpp"
#include "yaml_provenance.hpp"

namespace twocs::config {

PlatformProvenance read_platform_provenance(const InputText& platform, const std::vector<std::string>& overrides) {
  (void)parse_platform(platform, overrides); // every other key checked as `twocs run` checks it
  detail::YamlNode document =
      detail::parse_yaml_file(platform.text, platform.name, "'device:', 'node:' and 'cluster:'");
  detail::apply_overrides(document, detail::parse_overrides(overrides), detail::InputKind::platform);
  return detail::read_provenance(document);
}

} // namespace twocs::config
