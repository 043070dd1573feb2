#include "kernel_shape.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <map>

#include <fmt/format.h>

namespace twocs::config::detail {
namespace {

constexpr std::array<std::string_view, 9> kind_names = {"gemm",          "batched_gemm",  "elementwise",
                                                        "normalization", "softmax",       "embedding",
                                                        "optimizer",     "flash_forward", "flash_backward"};
constexpr std::array kind_values = {
    model::OpKind::gemm,          model::OpKind::batched_gemm,  model::OpKind::elementwise,
    model::OpKind::normalization, model::OpKind::softmax,       model::OpKind::embedding,
    model::OpKind::optimizer,     model::OpKind::flash_forward, model::OpKind::flash_backward};

bool is_gemm(model::OpKind k) { return k == model::OpKind::gemm || k == model::OpKind::batched_gemm; }

/// "m=8192,n=2304,k=6144" -> {m: (8192, offset of '8')}, ...
std::map<std::string, std::pair<std::int64_t, std::size_t>, std::less<>> split_pairs(std::string_view text) {
  std::map<std::string, std::pair<std::int64_t, std::size_t>, std::less<>> pairs;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    const std::string_view item = text.substr(start, end - start);
    const std::size_t eq = item.find('=');
    if (item.empty() || eq == std::string_view::npos || eq == 0)
      throw ShapeError(fmt::format("expected key=value in the shape, got '{}'", item), start,
                       "write the shape as e.g. m=4096,n=4096,k=4096 or bytes=402653184");
    const std::string key(item.substr(0, eq));
    const std::string_view digits = item.substr(eq + 1);
    std::int64_t value = 0;
    const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    const bool flag = key == "causal"; // 0 or 1, the only count that may be 0
    if (digits.empty() || ec != std::errc() || ptr != digits.data() + digits.size() || value < 0 ||
        (value == 0 && !flag) || (flag && value > 1))
      throw ShapeError(flag ? fmt::format("causal must be 0 or 1, got '{}'", digits)
                            : fmt::format("{} must be a positive whole number, got '{}'", key, digits),
                       start + eq + 1,
                       flag ? "write causal=1 (a causal mask) or causal=0 (none)"
                            : fmt::format("write e.g. {}=4096", key));
    if (!pairs.try_emplace(key, value, start).second)
      throw ShapeError(fmt::format("{} is given twice in the shape", key), start, "give each dimension once");
    start = end + 1;
  }
  return pairs;
}

void require_keys(const std::map<std::string, std::pair<std::int64_t, std::size_t>, std::less<>>& pairs,
                  std::span<const std::string_view> required, std::span<const std::string_view> allowed,
                  std::string_view example) {
  for (const auto& [key, value] : pairs) {
    bool known = false;
    for (auto a : allowed) known = known || a == key;
    if (!known)
      throw ShapeError(fmt::format("unknown dimension '{}' in the shape", key), value.second,
                       fmt::format("a shape of this kind has {}: e.g. {}", fmt::join(allowed, ", "), example));
  }
  for (auto r : required)
    if (pairs.find(r) == pairs.end())
      throw ShapeError(fmt::format("the shape is missing '{}'", r), 0, fmt::format("write e.g. {}", example));
}

using Pairs = std::map<std::string, std::pair<std::int64_t, std::size_t>, std::less<>>;

/// "heads=32,seq=8192,head_dim=128,causal=1": FlashAttention's benchmark axes (batch x heads).
void parse_attention_shape(const Pairs& pairs, hardware::KernelMeasurement& m) {
  constexpr std::array<std::string_view, 4> keys = {"heads", "seq", "head_dim", "causal"};
  require_keys(pairs, keys, keys, "heads=32,seq=8192,head_dim=128,causal=1");
  const auto at = [&](std::string_view key) { return pairs.find(key)->second.first; };
  m.attention = model::AttentionShape{at("heads"), at("seq"), at("seq"), at("head_dim"), at("causal") == 1};
}

} // namespace

std::span<const std::string_view> kernel_kind_names() { return kind_names; }

std::optional<model::OpKind> parse_kernel_kind(std::string_view name) {
  for (std::size_t i = 0; i < kind_names.size(); ++i)
    if (kind_names[i] == name) return kind_values[i];
  return std::nullopt;
}

void parse_kernel_shape(std::string_view text, hardware::KernelMeasurement& m) {
  const auto pairs = split_pairs(text);
  if (model::is_fused_attention(m.kind)) {
    parse_attention_shape(pairs, m);
    return;
  }
  if (is_gemm(m.kind)) {
    constexpr std::array<std::string_view, 3> required = {"m", "n", "k"};
    constexpr std::array<std::string_view, 4> allowed = {"m", "n", "k", "batch"};
    require_keys(pairs, required, allowed,
                 m.kind == model::OpKind::batched_gemm ? "m=2048,n=2048,k=128,batch=32" : "m=4096,n=4096,k=4096");
    const auto batch = pairs.find("batch");
    // 2 x m x n x k x batch FLOPs must stay inside 64-bit integers (the cost model multiplies them).
    std::int64_t product = 2;
    for (const auto& [key, value] : pairs)
      if (__builtin_mul_overflow(product, value.first, &product))
        throw ShapeError(fmt::format("the shape's m x n x k x batch is too large (at {})", key), value.second,
                         "check the dimensions: each is a count of rows or columns, e.g. m=4096");
    m.gemm = model::GemmShape{pairs.find("m")->second.first, pairs.find("n")->second.first,
                              pairs.find("k")->second.first, batch == pairs.end() ? 1 : batch->second.first};
    return;
  }
  constexpr std::array<std::string_view, 1> required = {"bytes"};
  constexpr std::array<std::string_view, 2> allowed = {"bytes", "flops"};
  require_keys(pairs, required, allowed, "bytes=402653184,flops=100663296");
  m.bytes = units::Bytes(static_cast<double>(pairs.find("bytes")->second.first));
  const auto flops = pairs.find("flops");
  m.flops = units::Flops(flops == pairs.end() ? 0.0 : static_cast<double>(flops->second.first));
}

std::string format_kernel_shape(const hardware::KernelMeasurement& m) {
  if (m.attention) {
    const auto& a = *m.attention;
    return fmt::format("heads={},seq={},head_dim={},causal={}", a.heads, a.queries, a.head_dim, a.causal ? 1 : 0);
  }
  if (m.gemm) {
    const auto& g = *m.gemm;
    if (g.batch == 1 && m.kind == model::OpKind::gemm) return fmt::format("m={},n={},k={}", g.m, g.n, g.k);
    return fmt::format("m={},n={},k={},batch={}", g.m, g.n, g.k, g.batch);
  }
  const auto as_count = [](double v) { return static_cast<std::int64_t>(std::llround(v)); };
  if (m.flops.value() > 0)
    return fmt::format("bytes={},flops={}", as_count(m.bytes.value()), as_count(m.flops.value()));
  return fmt::format("bytes={}", as_count(m.bytes.value()));
}

} // namespace twocs::config::detail
