#include "yaml_operator_model.hpp"

#include <array>
#include <filesystem>
#include <iterator>

#include <fmt/format.h>

#include <twocs/config/profile_csv.hpp>
#include <twocs/config/scenario_loader.hpp>

#include "kernel_shape.hpp"
#include "yaml_quantity.hpp"
#include "yaml_suggest.hpp"

namespace twocs::config::detail {
namespace {

constexpr std::array<std::string_view, 16> operator_model_keys = {"gemm_efficiency",       "fp8_gemm_efficiency",
                                                                  "memory_efficiency",     "kernel_overhead",
                                                                  "compute_units",         "gemm_tiles",
                                                                  "gemm_k_half",           "matrix_dtypes",
                                                                  "vector_tiles",          "vector_gemm_efficiency",
                                                                  "vector_flops",          "measured",
                                                                  "attention_kernel",      "measured_profiles",
                                                                  "measured_device_scale", "fp8_gemm_layouts"};
constexpr std::array<std::string_view, 2> fp8_layout_names = {"tn", "any"};
constexpr std::array fp8_layout_values = {false, true};
constexpr std::array<std::string_view, 2> device_scale_keys = {"compute", "memory_bandwidth"};
constexpr std::array<std::string_view, 4> tile_keys = {"m", "n", "k", "efficiency"};
constexpr std::array<std::string_view, 8> measured_keys = {"op",   "shape",  "dtype",        "time",
                                                           "name", "kernel", "accumulation", "scaling"};
constexpr std::array<std::string_view, 2> scaling_names = {"tensorwise", "blockwise"};
constexpr std::array scaling_values = {hardware::Fp8Scaling::tensorwise, hardware::Fp8Scaling::blockwise};
constexpr std::array<std::string_view, 2> accumulation_names = {"split", "fast"};
constexpr std::array accumulation_values = {hardware::Fp8Accumulation::split, hardware::Fp8Accumulation::fast};
constexpr std::array<std::string_view, 4> dtype_names = {"bf16", "fp16", "fp32", "fp8"};
constexpr std::array dtype_values = {model::Dtype::bf16, model::Dtype::fp16, model::Dtype::fp32, model::Dtype::fp8};

/// Far beyond any device (an H100 has 132 SMs, cuBLAS tiles are at most 256 wide), so that tile
/// and wave counts stay small.
constexpr std::int64_t max_compute_units = std::int64_t{1} << 20;
constexpr std::int64_t max_tile_side = std::int64_t{1} << 16;

/// A fraction in (0, 1]: an efficiency.
double read_fraction(const Field& f) {
  const double value = read_real(f);
  if (!(value > 0 && value <= 1))
    fail_at(f.where(), f.path, fmt::format("{} must lie in (0, 1], got {}", f.path, value),
            "give a fraction of peak such as 0.8");
  return value;
}

std::vector<hardware::GemmTile> read_tiles(const Field& field) {
  std::vector<hardware::GemmTile> tiles;
  for (const Field& item : read_list(field)) {
    const MappingReader t(item, tile_keys);
    hardware::GemmTile tile;
    tile.m = read_count_up_to(t.required("m", "256"), max_tile_side);
    tile.n = read_count_up_to(t.required("n", "128"), max_tile_side);
    tile.k = read_count_up_to(t.required("k", "32"), max_tile_side);
    if (const auto f = t.optional("efficiency")) tile.efficiency = read_fraction(*f);
    tiles.push_back(tile);
  }
  if (tiles.empty())
    fail_at(field.where(), field.path, fmt::format("{} lists no tile", field.path),
            "give at least one tile, e.g. [{m: 256, n: 128, k: 32}], or remove the key");
  return tiles;
}

std::vector<model::Dtype> read_dtypes(const Field& field) {
  std::vector<model::Dtype> dtypes;
  for (const Field& item : read_list(field)) dtypes.push_back(read_enum(item, dtype_names, dtype_values));
  return dtypes;
}

/// The optional `key` of an FP8 GEMM row (accumulation, scaling) into `value`; on any other row
/// the key is refused.
template <typename Enum, std::size_t N>
void read_fp8_gemm_key(const MappingReader& r, std::string_view key, const hardware::KernelMeasurement& m,
                       const std::array<std::string_view, N>& names, const std::array<Enum, N>& values, Enum& value) {
  const auto f = r.optional(key);
  if (!f) return;
  if (!m.is_fp8_gemm())
    fail_at(f->where(), f->path, fmt::format("{} is set on a row that is not an FP8 GEMM", f->path),
            fmt::format("keep `{}` on fp8 gemm rows only", key));
  value = read_enum(*f, names, values);
}

/// `op`, `shape`, `dtype`, `time` (and an optional `name`) of one measured kernel.
hardware::KernelMeasurement read_measurement(const Field& item) {
  const MappingReader r(item, measured_keys);
  hardware::KernelMeasurement m;
  if (const auto f = r.optional("name")) m.name = read_text(*f);
  const Field op = r.required("op", "gemm");
  const std::string kind = read_text(op);
  const auto parsed = parse_kernel_kind(kind);
  if (!parsed)
    fail_at(op.where(), op.path,
            fmt::format("{} cannot be '{}'; allowed values: {}", op.path, kind, join_names(kernel_kind_names())),
            suggest(kind, kernel_kind_names()));
  m.kind = *parsed;
  if (const auto f = r.optional("kernel")) {
    m.kernel = read_text(*f);
    if (!model::is_fused_attention(m.kind))
      fail_at(f->where(), f->path,
              fmt::format("{} names a fused attention implementation, but this row's op is {}", f->path, kind),
              "keep `kernel` on flash_forward and flash_backward rows only");
  }
  m.dtype = read_enum(r.required("dtype", "bf16"), dtype_names, dtype_values);
  const Field shape = r.required("shape", "\"m=4096,n=4096,k=4096\"");
  const std::string text = read_text(shape);
  try {
    parse_kernel_shape(text, m);
  } catch (const ShapeError& e) {
    SourceLocation where = shape.where();
    where.column += static_cast<int>(e.offset()) + (shape.value->quoted ? 1 : 0);
    fail_at(where, shape.path, fmt::format("{}: {}", shape.path, e.what()), e.fix());
  }
  const Field time = r.required("time", "1.2ms");
  m.time = read_duration(time, "1.2ms");
  if (!(m.time.value() > 0))
    fail_at(time.where(), time.path, fmt::format("{} must be positive", time.path),
            "give the measured time, e.g. 1.2ms");
  read_fp8_gemm_key(r, "accumulation", m, accumulation_names, accumulation_values, m.accumulation);
  read_fp8_gemm_key(r, "scaling", m, scaling_names, scaling_values, m.scaling);
  return m;
}

/// The rows of the profile CSVs a platform names, each path relative to the file that names it.
std::vector<hardware::KernelMeasurement> read_measured_profiles(const Field& field) {
  std::vector<hardware::KernelMeasurement> rows;
  for (const Field& item : read_list(field)) {
    const std::string path = read_text(item);
    const std::filesystem::path resolved = beside(item.where().file, path);
    std::error_code ec;
    if (!std::filesystem::is_regular_file(resolved, ec))
      fail_at(item.where(), item.path,
              fmt::format("{}: '{}' (resolved to '{}') is not a file", item.path, path, resolved.string()),
              "give the profile CSV's path relative to the platform file (scripts/profile_operators.py writes one)");
    auto table = parse_profile_csv(read_input(resolved));
    rows.insert(rows.end(), std::make_move_iterator(table.begin()), std::make_move_iterator(table.end()));
  }
  return rows;
}

} // namespace

OperatorModelParams read_operator_model(const Field& field) {
  const MappingReader m(field, operator_model_keys);
  OperatorModelParams p;
  if (const auto f = m.optional("gemm_efficiency")) p.roofline.gemm_efficiency = read_fraction(*f);
  if (const auto f = m.optional("fp8_gemm_efficiency")) p.roofline.fp8_gemm_efficiency = read_fraction(*f);
  if (const auto f = m.optional("memory_efficiency")) p.roofline.memory_efficiency = read_fraction(*f);
  if (const auto f = m.optional("kernel_overhead")) p.roofline.kernel_overhead = read_duration(*f, "4us");
  auto& k = p.kernels;
  if (const auto f = m.optional("compute_units")) k.compute_units = read_count_up_to(*f, max_compute_units);
  if (const auto f = m.optional("gemm_tiles")) k.gemm_tiles = read_tiles(*f);
  if (const auto f = m.optional("gemm_k_half")) {
    k.gemm_k_half = read_real(*f);
    if (k.gemm_k_half < 0)
      fail_at(f->where(), f->path, fmt::format("{} must not be negative, got {}", f->path, k.gemm_k_half),
              "give the k at which a tile reaches half its rate, e.g. 64, or 0");
  }
  if (const auto f = m.optional("matrix_dtypes")) k.matrix_dtypes = read_dtypes(*f);
  if (const auto f = m.optional("vector_tiles")) k.vector_tiles = read_tiles(*f);
  if (const auto f = m.optional("vector_gemm_efficiency")) k.vector_gemm_efficiency = read_fraction(*f);
  if (const auto f = m.optional("vector_flops")) k.vector_flops = read_flop_rate(*f, "19.5TFLOP/s");
  if (const auto f = m.optional("measured"))
    for (const Field& item : read_list(*f)) k.measured.push_back(read_measurement(item));
  if (const auto f = m.optional("measured_device_scale")) {
    // This device against the one its measured rows were timed on (KernelModelParams).
    const MappingReader scale(*f, device_scale_keys);
    const auto factor = [&](std::string_view key) {
      const auto g = scale.optional(key);
      return g ? read_real_between(*g, 0.01, 100, "give this device's rate over the measured device's, e.g. 0.92")
               : 1.0;
    };
    k.measured_compute_scale = factor("compute");
    k.measured_memory_scale = factor("memory_bandwidth");
  }
  if (const auto f = m.optional("measured_profiles")) {
    auto rows = read_measured_profiles(*f);
    k.measured.insert(k.measured.end(), std::make_move_iterator(rows.begin()), std::make_move_iterator(rows.end()));
  }
  if (const auto f = m.optional("attention_kernel")) k.attention_kernel = read_text(*f);
  if (const auto f = m.optional("fp8_gemm_layouts"))
    k.fp8_any_layout = read_enum(*f, fp8_layout_names, fp8_layout_values);
  return p;
}

} // namespace twocs::config::detail
