// Reading a kernel profile: the CSV that scripts/profile_operators.py writes and `twocs
// calibrate` fits (docs/operator-models.md, "Profiles"). A header line names the columns
//   op,shape,dtype,measured_time[,name][,accumulation][,scaling][,kernel]
// in any order; then one kernel per line, e.g.
//   gemm,"m=8192,n=2304,k=6144",fp16,1.234ms,attn.qkv
// `accumulation` (split or fast, or empty) states how an FP8 GEMM row accumulated
// (hardware::Fp8Accumulation), `scaling` (tensorwise or blockwise) its operands' scales, and
// `kernel` the implementation a fused attention row measured (cudnn, flash2: a platform's
// attention_kernel picks among them), as a platform's inline `measured` rows name it.
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
