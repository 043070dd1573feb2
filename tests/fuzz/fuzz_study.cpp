// Fuzzes the study reader (`twocs sweep`): any text is either a valid study or an InputError.
// Paths in `base:` resolve against sim/studies (scripts/fuzz.sh runs from the repository root),
// so the seeds' workloads and platforms load; inputs naming a device file are skipped (a FIFO
// such as /dev/stdin would wait for input, as it would for a user who names one).
#include <cstddef>
#include <cstdint>
#include <string>

#include <twocs/config/study.hpp>
#include <twocs/error.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (text.find("/dev") != std::string::npos || text.find("/proc") != std::string::npos) return 0;
  try {
    (void)twocs::config::parse_study({"fuzz.yaml", text}, "sim/studies");
  } catch (const twocs::InputError&) {
  }
  return 0;
}
