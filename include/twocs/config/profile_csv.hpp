// Reading a kernel profile: the CSV that scripts/profile_operators.py writes and `twocs
// calibrate` fits (docs/operator-models.md, "Profiles"). A header line names the columns
//   op,shape,dtype,measured_time[,name][,accumulation]
// in any order; then one kernel per line, e.g.
//   gemm,"m=8192,n=2304,k=6144",fp16,1.234ms,attn.qkv
// `accumulation` (split or fast, or empty) states how an FP8 GEMM row accumulated
// (hardware::Fp8Accumulation).
// Fields follow RFC 4180 (a field with commas is quoted; "" is a quote inside one). Lines
// starting with '#' and blank lines are skipped. Every error is an InputError at
// file:line:column.
#pragma once

#include <vector>

#include <twocs/config/scenario_loader.hpp>
#include <twocs/hardware/kernel_params.hpp>

namespace twocs::config {

[[nodiscard]] std::vector<hardware::KernelMeasurement> parse_profile_csv(const InputText& csv);

} // namespace twocs::config
