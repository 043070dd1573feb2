// The kernel operator model: tile and wave quantization, the efficiency curve, the tensor-core
// and vector paths, memory-bound kernels, the per-kernel overhead, and measured tables.
#include <doctest/doctest.h>

#include <cmath>
#include <optional>

#include <twocs/cost/gemm_timing.hpp>
#include <twocs/cost/kernel_cost_model.hpp>
#include <twocs/cost/make_cost_model.hpp>
#include <twocs/cost/roofline.hpp>

using namespace twocs;

namespace {

/// An A100-like device: 108 units, one 256x128x32 tile, no k_half or overhead unless asked.
hardware::DeviceSpec device(double k_half = 0, double overhead = 0) {
  hardware::DeviceSpec d;
  d.name = "test";
  d.peak_flops[model::Dtype::bf16] = units::FlopRate(312e12);
  d.peak_flops[model::Dtype::fp32] = units::FlopRate(19.5e12);
  d.memory = units::Bytes(80e9);
  d.memory_bandwidth = units::ByteRate(2039e9);
  d.roofline = {0.8, 0.8, units::Seconds(overhead), std::nullopt};
  d.kernels.compute_units = 108;
  d.kernels.gemm_tiles = {{256, 128, 32, 1.0}};
  d.kernels.gemm_k_half = k_half;
  d.kernels.matrix_dtypes = {model::Dtype::bf16};
  d.kernels.vector_tiles = {{128, 128, 8, 1.0}};
  return d;
}

model::ComputeOp gemm(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch = 1,
                      model::Dtype dtype = model::Dtype::bf16) {
  model::ComputeOp op;
  op.name = "gemm";
  op.kind = batch > 1 ? model::OpKind::batched_gemm : model::OpKind::gemm;
  op.dtype = dtype;
  op.gemm = model::GemmShape{m, n, k, batch};
  op.flops = op.gemm->flops();
  op.bytes = op.gemm->operand_bytes(dtype);
  return op;
}

model::ComputeOp streaming(double bytes, double flops = 0) {
  model::ComputeOp op;
  op.name = "layernorm";
  op.kind = model::OpKind::normalization;
  op.dtype = model::Dtype::bf16;
  op.bytes = units::Bytes(bytes);
  op.flops = units::Flops(flops);
  return op;
}

/// Time of one wave of full 256x128 tiles with k = `k`.
double wave(double k, double k_half = 0) { return 2.0 * 256 * 128 * (k + k_half) / (312e12 * 0.8 / 108); }

} // namespace

TEST_CASE("a GEMM with one tile more than a full wave costs one extra wave") {
  // A 12 x 9 grid of 256 x 128 tiles fills the 108 units once.
  const cost::KernelCostModel model(device());
  const auto full_wave = gemm(256 * 12, 128 * 9, 4096);
  const double full = model.duration(full_wave).value();
  CHECK(full == doctest::Approx(wave(4096)).epsilon(1e-9));
  // One tile more (a batch of 109 single tiles, on a device whose memory does not bound them):
  // the second wave, with one busy unit, takes as long as the first.
  auto fast_memory = device();
  fast_memory.memory_bandwidth = units::ByteRate(1e16);
  const cost::KernelCostModel compute_only(fast_memory);
  const auto wave_of_108 = gemm(256, 128, 4096, 108);
  const auto one_more = gemm(256, 128, 4096, 109);
  const auto t = cost::time_gemm(fast_memory, *one_more.gemm, model::Dtype::bf16);
  CHECK(t.tiles == 109);
  CHECK(t.waves == 2);
  CHECK(compute_only.duration(wave_of_108).value() == doctest::Approx(wave(4096)).epsilon(1e-9));
  CHECK(compute_only.duration(one_more).value() == doctest::Approx(2 * wave(4096)).epsilon(1e-9));
  // ... for under 1% more work. On the grid: a 13th row of tiles (117 tiles) doubles the time too.
  CHECK(model.duration(gemm(256 * 12 + 1, 128 * 9, 4096)).value() == doctest::Approx(2 * full).epsilon(1e-9));
}

TEST_CASE("the tiles of a batched GEMM beyond 64-bit integers are counted, not wrapped") {
  // Unfused attention scores at s = 2^22 over 2^36 heads: 2^14 x 2^15 tiles of 256 x 128 per
  // head, 2^65 in all (as many as a 16 x 16 tile makes with micro_batch, heads and seq_len at
  // their limits).
  const std::int64_t s = std::int64_t{1} << 22;
  const std::int64_t heads = std::int64_t{1} << 36;
  auto fast_memory = device();
  fast_memory.memory_bandwidth = units::ByteRate(1e30);
  const auto op = gemm(s, s, 128, heads);
  const auto t = cost::time_gemm(fast_memory, *op.gemm, model::Dtype::bf16);
  CHECK(t.tiles == doctest::Approx(std::ldexp(1.0, 65)));
  CHECK(t.waves == doctest::Approx(std::ldexp(1.0, 65) / 108));
  // Full waves throughout: the time is the work at the tile's rate, as for one head times 2^34.
  const cost::KernelCostModel model(fast_memory);
  CHECK(model.duration(op).value() == doctest::Approx(op.flops.value() / (312e12 * 0.8)).epsilon(1e-6));
}

TEST_CASE("a partial tile costs a whole tile (tile quantization)") {
  const cost::KernelCostModel model(device());
  // n = 128 * 4 + 1 needs five tile columns of 128: as slow as n = 640.
  CHECK(model.duration(gemm(256 * 20, 128 * 4 + 1, 4096)).value() ==
        doctest::Approx(model.duration(gemm(256 * 20, 128 * 5, 4096)).value()).epsilon(1e-12));
  // A small GEMM with a short k occupies one tile on one unit for a whole wave.
  CHECK(model.duration(gemm(64, 64, 32)).value() == doctest::Approx(wave(32)).epsilon(1e-9));
}

TEST_CASE("the efficiency curve: a tile's rate grows with k as k / (k + k_half)") {
  auto fast_memory = device(64);
  fast_memory.memory_bandwidth = units::ByteRate(1e16);
  const cost::KernelCostModel model(fast_memory);
  const auto efficiency = [&](std::int64_t k) {
    const auto op = gemm(256 * 12, 128 * 9, k);
    return op.flops.value() / (model.duration(op).value() * 312e12);
  };
  CHECK(efficiency(64) == doctest::Approx(0.8 * 0.5).epsilon(1e-9));
  CHECK(efficiency(4096) == doctest::Approx(0.8 * 4096 / 4160.0).epsilon(1e-9));
  CHECK(efficiency(96) < efficiency(1024));
}

TEST_CASE("GEMM time never decreases when any dimension grows") {
  const cost::KernelCostModel model(device(64, 4e-6));
  for (std::int64_t base : {64, 500, 2048}) {
    double last_m = 0, last_n = 0, last_k = 0, last_b = 0;
    for (std::int64_t x = 1; x <= 8192; x = x * 3 / 2 + 1) {
      CAPTURE(base);
      CAPTURE(x);
      const double tm = model.duration(gemm(x, base, base)).value();
      const double tn = model.duration(gemm(base, x, base)).value();
      const double tk = model.duration(gemm(base, base, x)).value();
      const double tb = model.duration(gemm(base, base, 96, x)).value();
      CHECK(tm >= last_m);
      CHECK(tn >= last_n);
      CHECK(tk >= last_k);
      CHECK(tb >= last_b);
      last_m = tm, last_n = tn, last_k = tk, last_b = tb;
    }
  }
}

TEST_CASE("dtypes without matrix units take the vector path: their peak, tiles and efficiency") {
  auto d = device();
  d.kernels.vector_gemm_efficiency = 0.9;
  const cost::KernelCostModel model(d);
  const auto fp32 = gemm(128 * 108, 128, 4096, 1, model::Dtype::fp32);
  const auto t = cost::time_gemm(d, *fp32.gemm, model::Dtype::fp32);
  CHECK_FALSE(t.matrix_path);
  CHECK(t.tile.m == 128);
  CHECK(t.waves == 1);
  CHECK(model.duration(fp32).value() == doctest::Approx(fp32.flops.value() / (19.5e12 * 0.9)).epsilon(1e-9));
  // In bf16 the tensor cores run 3072 x 1152 in one wave of 256x128 tiles; in fp32 it takes two
  // waves of 128x128 tiles at a sixteenth of the rate.
  const auto bf16 = gemm(3072, 1152, 4096);
  auto as_fp32 = bf16;
  as_fp32.dtype = model::Dtype::fp32;
  CHECK(cost::time_gemm(d, *bf16.gemm, model::Dtype::bf16).matrix_path);
  CHECK(cost::time_gemm(d, *bf16.gemm, model::Dtype::fp32).waves == 2);
  CHECK(model.duration(as_fp32).value() / model.duration(bf16).value() ==
        doctest::Approx(2 * (128.0 * 128 / (19.5 * 0.9)) / (256.0 * 128 / (312 * 0.8))).epsilon(1e-6));
}

TEST_CASE("memory-bound kernels take their bytes over the sustained bandwidth, plus the overhead") {
  const cost::KernelCostModel model(device(0, 5e-6));
  CHECK(model.duration(streaming(4e8)).value() == doctest::Approx(4e8 / (2039e9 * 0.8) + 5e-6).epsilon(1e-12));
  // Their arithmetic runs on the vector units once given, and bounds them when it dominates.
  auto d = device();
  d.kernels.vector_flops = units::FlopRate(19.5e12);
  const cost::KernelCostModel vector(d);
  CHECK(vector.duration(streaming(1e6, 1e12)).value() == doctest::Approx(1e12 / 19.5e12).epsilon(1e-12));
  // A skinny GEMM (matrix-vector like) splits its k loop over the idle units (split-K) and is
  // then bound by its bytes, within the reduction's extra traffic.
  const auto skinny = gemm(1, 8192, 8192);
  const auto split = cost::time_gemm(model.device(), *skinny.gemm, model::Dtype::bf16);
  CHECK(split.splits > 1);
  CHECK(split.tiles * split.splits <= 108);
  const double streaming_time = skinny.bytes.value() / (2039e9 * 0.8) + 5e-6;
  CHECK(model.duration(skinny).value() >= streaming_time);
  CHECK(model.duration(skinny).value() < 1.1 * streaming_time);
}

TEST_CASE("every kernel pays the fixed overhead once") {
  const cost::KernelCostModel without(device(64, 0));
  const cost::KernelCostModel with(device(64, 7e-6));
  for (const auto& op : {gemm(4096, 4096, 4096), gemm(2048, 2048, 96, 32), streaming(1e6)})
    CHECK(with.duration(op).value() - without.duration(op).value() == doctest::Approx(7e-6).epsilon(1e-6));
}

TEST_CASE("a memory-bound op of several kernels pays the overhead once for each") {
  const cost::KernelCostModel model(device(0, 5e-6));
  auto three = streaming(4e8);
  three.kernels = 3; // a cast with two one-thread bookkeeping kernels
  CHECK(model.duration(three).value() == doctest::Approx(4e8 / (2039e9 * 0.8) + 3 * 5e-6).epsilon(1e-12));
  CHECK(model.duration(three).value() - model.duration(streaming(4e8)).value() ==
        doctest::Approx(2 * 5e-6).epsilon(1e-9));
}

TEST_CASE("a batch issued as separate kernels over streams runs in rounds of concurrent GEMMs") {
  // 10 GEMMs of 27 tiles each over 4 streams: rounds of 4, 4 and 2 GEMMs. A round of 4 holds
  // 108 tiles, one wave; the last round's 54 tiles take a wave too. One batched kernel would
  // hold 270 tiles in 3 waves. k is one tile step, so that no round can split k.
  auto fast_memory = device(0, 5e-6);
  fast_memory.memory_bandwidth = units::ByteRate(1e16);
  const cost::KernelCostModel model(fast_memory);
  auto op = gemm(256 * 9, 128 * 3, 32, 10);
  CHECK(model.duration(op).value() == doctest::Approx(3 * wave(32) + 5e-6).epsilon(1e-9));
  op.gemm->streams = 4;
  const auto t = cost::time_gemm(fast_memory, *op.gemm, model::Dtype::bf16);
  CHECK(t.rounds == 3);
  // Three rounds of one wave each, and a launch per round on the critical path.
  CHECK(model.duration(op).value() == doctest::Approx(3 * wave(32) + 3 * 5e-6).epsilon(1e-9));
  // 12 GEMMs of 27 tiles: three full rounds (3 waves) where one kernel needs ceil(324/108) = 3.
  op.gemm->batch = 12;
  CHECK(cost::time_gemm(fast_memory, *op.gemm, model::Dtype::bf16).compute.value() ==
        doctest::Approx(3 * wave(32)).epsilon(1e-9));
  // 6 GEMMs of 20 tiles: rounds of 80 and 40 tiles, a wave each, as one kernel of 120 takes two.
  auto small = gemm(256 * 5, 128 * 4, 32, 6);
  small.gemm->streams = 4;
  CHECK(cost::time_gemm(fast_memory, *small.gemm, model::Dtype::bf16).compute.value() ==
        doctest::Approx(2 * wave(32)).epsilon(1e-9));
  // No more GEMMs than streams: one round, as one kernel.
  small.gemm->streams = 8;
  CHECK(cost::time_gemm(fast_memory, *small.gemm, model::Dtype::bf16).rounds == 1);
}

TEST_CASE("without compute units, tiles or k_half the kernel model is the roofline") {
  hardware::DeviceSpec d = device();
  d.kernels = {};
  d.roofline.kernel_overhead = units::Seconds(4e-6);
  const cost::KernelCostModel kernel(d);
  const cost::RooflineCostModel roofline(d);
  for (const auto& op : {gemm(8192, 8192, 8192), gemm(1, 8192, 8192), gemm(2048, 2048, 96, 32), streaming(4e8, 8e8)})
    CHECK(kernel.duration(op).value() == doctest::Approx(roofline.duration(op).value()).epsilon(1e-12));
  // make_cost_model hands out the kernel model.
  CHECK(cost::make_cost_model(d)->duration(gemm(4096, 4096, 4096)).value() ==
        doctest::Approx(kernel.duration(gemm(4096, 4096, 4096)).value()));
}

TEST_CASE("the fastest tile wins, in either orientation") {
  auto d = device();
  d.kernels.gemm_tiles = {{256, 128, 32, 1.0}, {128, 128, 32, 0.9}};
  // m = 128 * 109, n = 256: with 256x128 laid as 128x256 it is 109 tiles (2 waves); with
  // 128x128 it is 218 tiles (3 waves at 0.9 of the rate, 1.5 big-tile waves' work / 0.9 > ... ).
  const auto t = cost::time_gemm(d, model::GemmShape{128 * 109, 256, 4096, 1}, model::Dtype::bf16);
  CHECK(t.tile.m == 128);
  CHECK(t.waves == 3);
  const double big_tile_waves = 2 * wave(4096);
  const double small_tile_waves = 3 * wave(4096) / 2 / 0.9;
  CHECK(t.compute.value() == doctest::Approx(std::min(big_tile_waves, small_tile_waves)).epsilon(1e-9));
  const auto wide = cost::time_gemm(d, model::GemmShape{128, 256 * 108, 4096, 1}, model::Dtype::bf16);
  CHECK(wide.waves == 1);
  CHECK(wide.transposed);
}

TEST_CASE("a kernel's clock share: the compute side of a compute-bound kernel, none of a memory-bound one") {
  const cost::KernelCostModel model(device(0, 5e-6));
  // An 8192^3 GEMM: compute far above its bytes, so its share is its compute over its time.
  const auto big = gemm(8192, 8192, 8192);
  const double total = model.duration(big).value();
  const double compute = total - 5e-6;
  CHECK(model.clock_share(big) == doctest::Approx(compute / total).epsilon(1e-12));
  CHECK(model.clock_share(big) > 0.99);
  // Layer norm moves bytes: the SM clock does not set its time.
  CHECK(model.clock_share(streaming(4e8)) == 0.0);
  // The roofline model splits the same way: all of a compute-bound kernel but its overhead.
  auto d = device(0, 5e-6);
  const cost::RooflineCostModel roofline(d);
  const double r_total = roofline.duration(big).value();
  CHECK(roofline.clock_share(big) == doctest::Approx((r_total - 5e-6) / r_total).epsilon(1e-12));
  CHECK(roofline.clock_share(streaming(4e8)) == 0.0);
}

TEST_CASE("a chunk of a GEMM split over several streams costs its share of the whole, not its own waves") {
  auto fast_memory = device(0, 4e-6);
  fast_memory.memory_bandwidth = units::ByteRate(1e16);
  const cost::KernelCostModel model(fast_memory);
  const double overhead = 4e-6;
  // 54 x 4 tiles of 256 x 128 with one k step (no split-K): two full waves. A quarter of its rows
  // alone is 14 x 4 = 56 tiles, one half-empty wave: half the whole's time instead of a quarter.
  const auto whole = gemm(256 * 54, 128 * 4, 32);
  auto chunk = gemm(256 * 54 / 4, 128 * 4, 32);
  CHECK(model.duration(whole).value() == doctest::Approx(2 * wave(32) + overhead).epsilon(1e-9));
  CHECK(model.duration(chunk).value() == doctest::Approx(wave(32) + overhead).epsilon(1e-9));
  chunk.gemm_chunks = 4;
  CHECK(model::whole_gemm(chunk).gemm->m == whole.gemm->m);
  CHECK(model::whole_gemm(chunk).flops.value() == doctest::Approx(whole.flops.value()));
  CHECK(model.duration(chunk).value() == doctest::Approx(2 * wave(32) / 4 + overhead).epsilon(1e-9));
}

TEST_CASE("the cost model reports whether the device's FP8 GEMMs take any operand layout") {
  hardware::DeviceSpec d = device();
  CHECK_FALSE(cost::make_cost_model(d)->fp8_gemms_any_layout()); // Hopper's TN-only kernels unless told
  d.kernels.fp8_any_layout = true;
  CHECK(cost::make_cost_model(d)->fp8_gemms_any_layout());
}

TEST_CASE("a GEMM that leaves SMs to a communication kernel computes on the rest, its launch unchanged") {
  auto fast_memory = device(0, 4e-6);
  fast_memory.memory_bandwidth = units::ByteRate(1e16);
  const cost::KernelCostModel model(fast_memory);
  const double overhead = 4e-6;
  // Chunks of the two-wave GEMM above, on 108 - 24 = 84 of the device's 108 SMs: their share of
  // the whole's compute stretched by 108 / 84.
  auto chunk = gemm(256 * 54 / 4, 128 * 4, 32);
  chunk.gemm_chunks = 4;
  const double all_sms = 2 * wave(32) / 4;
  chunk.sm_margin = 24;
  CHECK(model.duration(chunk).value() == doctest::Approx(all_sms * 108.0 / 84.0 + overhead).epsilon(1e-9));
  // A whole GEMM with a margin: its own two waves, stretched the same way.
  auto whole = gemm(256 * 54, 128 * 4, 32);
  whole.sm_margin = 16;
  CHECK(model.duration(whole).value() == doctest::Approx(2 * wave(32) * 108.0 / 92.0 + overhead).epsilon(1e-9));
}
