// A compute device (one GPU or GCD): the platform file's `device:`.
#pragma once

#include <map>
#include <optional>
#include <string>

#include <twocs/hardware/kernel_params.hpp>
#include <twocs/hardware/speed_variation.hpp>
#include <twocs/model/dtype.hpp>
#include <twocs/units/quantity.hpp>

namespace twocs::hardware {

/// The three numbers of the roofline operator model (docs/operator-models.md); the kernel model
/// adds tiles, waves and an efficiency curve (kernel_params.hpp). Defaults are conservative
/// A100-class values; every catalogue platform file sets its own, with sources.
struct RooflineParams {
  /// Fraction of peak FLOP/s a large GEMM sustains (the top of the efficiency curve). Megatron-LM
  /// reaches 163 of 312 TFLOP/s end to end on A100 (Narayanan et al. SC'21, Table 1); large GEMMs
  /// run near 0.8 of peak.
  double gemm_efficiency = 0.8;
  /// Fraction of peak HBM bandwidth a streaming kernel sustains (STREAM-like kernels reach
  /// about 0.8-0.9 of the A100 datasheet bandwidth; Jia et al. 2018 report ~0.9 on V100).
  double memory_efficiency = 0.8;
  /// Fixed cost per kernel: launch latency and framework overhead (about 4-5 us for a CUDA
  /// kernel launch through PyTorch; NVIDIA CUDA C++ Best Practices Guide, "kernel launch").
  units::Seconds kernel_overhead = units::Seconds(4e-6);
  /// The same for FP8 GEMMs, where the device's published maximum achievable FP8 matmul rate
  /// gives its own (Bekman's MAMF table lists bf16 and FP8 apart); unset: gemm_efficiency.
  std::optional<double> fp8_gemm_efficiency;

  /// The efficiency of a large GEMM in `dtype`.
  [[nodiscard]] double gemm_efficiency_for(model::Dtype dtype) const {
    return dtype == model::Dtype::fp8 && fp8_gemm_efficiency ? *fp8_gemm_efficiency : gemm_efficiency;
  }
};

/// Compute-communication interference (docs/validation.md, "Mechanisms"): a NCCL/RCCL kernel
/// holds SMs (one thread block per channel) and HBM bandwidth while it runs, so a compute kernel
/// overlapped with it runs slower. 0 models dedicated communication engines (the what-if). The
/// default is off so that hand-built test platforms stay closed-form; every catalogue platform
/// file sets its device's measured value.
struct CommInterference {
  /// A compute kernel takes (1 + compute_slowdown) times as long while at least one transfer of
  /// its device (sent or received) is in flight. Lee et al., arXiv 2507.03114: +18.9% on
  /// average (max +40%) over A100, H100, MI250 and MI210 for GPT and LLaMA layers.
  double compute_slowdown = 0.0;
};

struct DeviceSpec {
  std::string name;
  std::map<model::Dtype, units::FlopRate> peak_flops; // dense peak per dtype
  units::Bytes memory;                                // HBM capacity
  units::ByteRate memory_bandwidth;                   // HBM bandwidth
  RooflineParams roofline;
  KernelModelParams kernels; // tiles, waves, efficiency curve, measured times
  CommInterference comm_interference;
  SpeedVariation speed_variation; // stragglers; off by default

  /// Peak for `dtype`; nullopt when the device lists none (the plan is then infeasible).
  [[nodiscard]] std::optional<units::FlopRate> peak(model::Dtype dtype) const {
    auto it = peak_flops.find(dtype);
    if (it == peak_flops.end()) return std::nullopt;
    return it->second;
  }
};

/// Multiplies the device's compute rates (every dtype's peak and the vector rate) by `compute` and
/// its memory bandwidth by `memory_bandwidth`: a what-if's faster device, or (with the inverse
/// factors) the device a what-if's measured rows were timed on.
inline void scale_rates(DeviceSpec& device, double compute, double memory_bandwidth) {
  for (auto& [dtype, peak] : device.peak_flops) peak *= compute;
  if (device.kernels.vector_flops) *device.kernels.vector_flops *= compute;
  device.memory_bandwidth *= memory_bandwidth;
}

} // namespace twocs::hardware
