// Human-readable rendering of quantities for tables and messages ("1.23 ms", "80.0 GiB").
// Machine-readable outputs (JSON, CSV, traces) write base units instead.
#pragma once

#include <string>

#include <twocs/units/quantity.hpp>

namespace twocs::units {

[[nodiscard]] std::string to_string(Seconds t);  // picks ns, us, ms or s
[[nodiscard]] std::string to_string(Bytes b);    // binary prefixes: KiB, MiB, GiB, TiB
[[nodiscard]] std::string to_string(ByteRate r); // decimal prefixes: GB/s
[[nodiscard]] std::string to_string(Flops f);    // decimal prefixes: TFLOP
[[nodiscard]] std::string to_string(FlopRate r); // decimal prefixes: TFLOP/s

} // namespace twocs::units
