// Parameters of the kernel-level operator model (docs/operator-models.md) that go beyond the
// roofline's three numbers: the device's compute units, the GEMM tiles its BLAS library uses,
// the size-dependent GEMM efficiency curve, the non-tensor-core (vector) path, and measured
// kernel times that take precedence over the formulas. The platform file's
// `device.operator_model`; every catalogue file gives them with sources.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <twocs/model/dtype.hpp>
#include <twocs/model/operator.hpp>
#include <twocs/units/quantity.hpp>

namespace twocs::hardware {

/// The output block one thread block (CTA, workgroup) of a GEMM kernel computes: an m x n tile
/// of C, walking k in steps of `k` (NVIDIA, "Matrix Multiplication Background User's Guide",
/// 2023, section 2.3). `efficiency` scales the device's GEMM efficiency for this tile (smaller
/// tiles reuse less data).
struct GemmTile {
  std::int64_t m = 256;
  std::int64_t n = 128;
  std::int64_t k = 32;
  double efficiency = 1.0;

  friend bool operator==(const GemmTile&, const GemmTile&) = default;
};

/// How an FP8 GEMM accumulates its products in cuBLASLt: `fast` keeps partial sums in the
/// tensor cores' reduced-precision accumulator, `split` promotes them to fp32 every few k steps
/// (CUBLASLT_MATMUL_DESC_FAST_ACCUM 1 or 0), and is slower. Transformer Engine runs its forward
/// GEMMs fast and its dgrad and wgrad GEMMs split (transformer_engine/common/recipe.py:
/// fp8_gemm_fprop use_split_accumulator=False, fp8_gemm_dgrad and fp8_gemm_wgrad True), as
/// torchao's float8 training does (Float8LinearConfig: use_fast_accum for the output only).
enum class Fp8Accumulation : std::uint8_t { any, split, fast };

/// The accumulation an FP8 GEMM of this pass runs with (above): split in the backward pass.
[[nodiscard]] inline Fp8Accumulation fp8_accumulation_of(model::Pass pass) {
  return pass == model::Pass::backward ? Fp8Accumulation::split : Fp8Accumulation::fast;
}

/// How an FP8 GEMM row scaled its operands: one factor per tensor (Transformer Engine's delayed
/// and current scaling), or per 1x128 and 128x128 block (its Float8BlockScaling).
enum class Fp8Scaling : std::uint8_t { tensorwise, blockwise };

/// One measured kernel time (a row of a profile): what ran and how long it took.
struct KernelMeasurement {
  std::string name; // what ran ("attn.qkv", "layernorm"); may be empty
  /// The implementation of a fused attention row ("cudnn", "flash2"): a platform may list
  /// several, and training.attention_kernel picks one (attention_kernel.hpp). Empty: any.
  std::string kernel;
  model::OpKind kind = model::OpKind::gemm; // gemm, batched_gemm, fused attention, memory-bound
  model::Dtype dtype = model::Dtype::bf16;
  std::optional<model::GemmShape> gemm;           // set for gemm and batched_gemm
  std::optional<model::AttentionShape> attention; // set for flash_forward and flash_backward
  units::Bytes bytes;                             // memory-bound kernels: HBM traffic read + written
  units::Flops flops;                             // memory-bound kernels: arithmetic (0 when not given)
  /// FP8 GEMM rows: the accumulation measured (any: not stated, stands for both).
  Fp8Accumulation accumulation = Fp8Accumulation::any;
  /// FP8 GEMM rows: the operands' scaling (tensorwise unless stated).
  Fp8Scaling scaling = Fp8Scaling::tensorwise;
  units::Seconds time;

  /// Whether the row is an FP8 GEMM (the rows an accumulation and a scaling apply to).
  [[nodiscard]] bool is_fp8_gemm() const { return dtype == model::Dtype::fp8 && gemm.has_value(); }
};

struct KernelModelParams {
  /// Streaming multiprocessors (NVIDIA) or compute units (AMD): tiles run in waves of this many.
  /// 0 turns tile and wave quantization off (the roofline's behaviour).
  std::int64_t compute_units = 0;
  /// Tiles of the tensor-core (matrix) GEMM path; the model takes the fastest, as a BLAS
  /// library's heuristic does. Empty: no tile quantization.
  std::vector<GemmTile> gemm_tiles;
  /// Hockney's half-performance length of a tile's k loop: fixed work per tile (prologue, pipeline
  /// fill, epilogue) worth this many k; a tile's time is proportional to k + gemm_k_half, so GEMMs
  /// with a short k (attention's k = head size) run less efficiently. 0 keeps the roofline.
  double gemm_k_half = 0;
  /// Dtypes whose GEMMs run on matrix units (tensor cores, matrix cores). Empty: all listed dtypes.
  std::vector<model::Dtype> matrix_dtypes;
  /// GEMMs in other dtypes run on the vector units with these tiles and this efficiency
  /// (nullopt: the matrix path's efficiency).
  std::vector<GemmTile> vector_tiles;
  std::optional<double> vector_gemm_efficiency;
  /// Arithmetic rate of memory-bound kernels (element-wise math on the vector units). nullopt:
  /// the training dtype's peak times gemm_efficiency, as the roofline does.
  std::optional<units::FlopRate> vector_flops;
  /// Measured kernel times; where some match a kernel's kind and dtype they replace the formula
  /// (interpolated between measured sizes).
  std::vector<KernelMeasurement> measured;
  /// How many times the compute rates and the memory bandwidth of this device exceed those of the
  /// device `measured` was timed on (a what-if's scales; 1: the same device). Each measured
  /// kernel keeps its measured/formula ratio, taken against that device's formula.
  double measured_compute_scale = 1;
  double measured_memory_scale = 1;
  /// The fused attention implementation whose measured rows a workload gets unless its
  /// training.attention_kernel names another (empty: the rows' only one, if they name one).
  std::string attention_kernel;
  /// Whether the device's FP8 GEMMs take operands in any layout (Blackwell), not only the "TN"
  /// layout cuBLASLt's FP8 kernels need on Hopper and Ada (A transposed, B not), for which
  /// frameworks keep a transposed FP8 copy of each weight-gradient operand (docs/simulation.md,
  /// "FP8"). `device.operator_model.fp8_gemm_layouts`: `tn` (false, the default) or `any`.
  bool fp8_any_layout = false;

  /// Whether `dtype` GEMMs take the matrix (tensor-core) path.
  [[nodiscard]] bool is_matrix_dtype(model::Dtype dtype) const {
    if (matrix_dtypes.empty()) return true;
    for (model::Dtype d : matrix_dtypes)
      if (d == dtype) return true;
    return false;
  }
};

} // namespace twocs::hardware
