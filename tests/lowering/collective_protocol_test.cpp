// NCCL's protocol costs (collective_protocol.hpp) against NCCL's tuner constants
// (src/graph/tuning.cc) computed here, and their effect on a schedule.
#include <algorithm>

#include <doctest/doctest.h>

#include <twocs/lowering/collective_protocol.hpp>

using namespace twocs;
using namespace twocs::lowering;

namespace {

/// 8 ranks on one NVSwitch node of 230 GB/s per direction, 2 us per message (a DGX A100).
CollectiveContext one_node(std::int32_t ranks = 8, std::int32_t per_node = 0) {
  CollectiveContext c;
  c.ranks = ranks;
  c.ranks_per_node = per_node;
  c.intra_bandwidth = units::ByteRate(230e9);
  c.intra_pair_bandwidth = units::ByteRate(230e9);
  c.intra_latency = units::seconds(2e-6);
  c.inter_bandwidth = units::ByteRate(24e9);
  c.inter_latency = units::seconds(5e-6);
  return c;
}

} // namespace

TEST_CASE("NCCL's ring latency: base + steps x hop, NVLink within a node, the network across") {
  const auto c = one_node();
  // tuning.cc: ring Simple base 8.4 us, NVLink hop 3.4 us; LL128 14.0 and 1.9; LL 6.6 and 0.6.
  CHECK(nccl_latency(Algorithm::ring, Protocol::simple, CollectiveKind::all_reduce, c).value() ==
        doctest::Approx(8.4e-6 + 14 * 3.4e-6));
  CHECK(nccl_latency(Algorithm::ring, Protocol::ll128, CollectiveKind::all_gather, c).value() ==
        doctest::Approx(14.0e-6 + 7 * 1.9e-6));
  CHECK(nccl_latency(Algorithm::ring, Protocol::ll, CollectiveKind::reduce_scatter, c).value() ==
        doctest::Approx(6.6e-6 + 7 * 0.6e-6));
  // 4 nodes of 8: 62 steps, 6 of them over the network (14 us with Simple).
  const auto four = one_node(32, 8);
  CHECK(nccl_latency(Algorithm::ring, Protocol::simple, CollectiveKind::all_reduce, four).value() ==
        doctest::Approx(8.4e-6 + 56 * 3.4e-6 + 6 * 14e-6));
  CHECK(nccl_latency(Algorithm::in_network, Protocol::simple, CollectiveKind::all_reduce, c).value() ==
        doctest::Approx(25e-6));
  CHECK(nccl_latency(Algorithm::tree, Protocol::simple, CollectiveKind::all_reduce, four).value() ==
        doctest::Approx(8.4e-6 + 2 * (7 * 4.0e-6 + 2 * 14e-6)));
  CHECK(nccl_latency(Algorithm::hierarchical, Protocol::simple, CollectiveKind::all_reduce, four).value() == 0);
  CHECK(nccl_latency(Algorithm::direct, Protocol::simple, CollectiveKind::all_to_all, c).value() == 0);
}

TEST_CASE("the protocol is the one with the smallest latency + bytes / share, as NCCL's tuner") {
  const auto c = one_node();
  const auto time = [&](double size, double latency, double share) {
    return std::max(latency, 14 * 2e-6) + 2.0 * 7 / 8 * size / 230e9 / share;
  };
  for (double size : {64e3, 1e6, 8.0 * (1 << 20), 64.0 * (1 << 20), 1.0 * (1 << 30)}) {
    CAPTURE(size);
    const double ll = time(size, 6.6e-6 + 14 * 0.6e-6, 0.5);
    const double ll128 = time(size, 14.0e-6 + 14 * 1.9e-6, 0.92);
    const double simple = time(size, 8.4e-6 + 14 * 3.4e-6, 1.0);
    const Protocol expected = simple <= std::min(ll, ll128) ? Protocol::simple
                              : ll128 <= ll                 ? Protocol::ll128
                                                            : Protocol::ll;
    const auto p = choose_protocol(Algorithm::ring, CollectiveKind::all_reduce, units::Bytes(size), c);
    CHECK(p.protocol == expected);
    CHECK(estimate_with_protocol(Algorithm::ring, CollectiveKind::all_reduce, units::Bytes(size), c, p).value() ==
          doctest::Approx(std::min({ll, ll128, simple})));
  }
  // 8 MiB picks LL128, 1 GiB Simple (the curve of docs/network.md).
  CHECK(choose_protocol(Algorithm::ring, CollectiveKind::all_reduce, units::Bytes(8.0 * (1 << 20)), c).protocol ==
        Protocol::ll128);
  CHECK(choose_protocol(Algorithm::ring, CollectiveKind::all_reduce, units::Bytes(1.0 * (1 << 30)), c).protocol ==
        Protocol::simple);
}

TEST_CASE("a schedule pays the protocol: wire bytes / share, NCCL's extra latency before its first messages") {
  const auto c = one_node();
  ScheduleShape shape;
  shape.ranks = 8;
  const auto p = choose_protocol(Algorithm::ring, CollectiveKind::all_reduce, units::Bytes(8.0 * (1 << 20)), c);
  REQUIRE(p.protocol == Protocol::ll128);
  apply_protocol(shape, Algorithm::ring, CollectiveKind::all_reduce, c, p);
  // LL128: 40.6 us against the 14 x 2 us the messages pay: 12.6 us, 6 route latencies of 2 us.
  CHECK(shape.protocol_latency_steps == 6);
  CHECK(shape.protocol_bandwidth_fraction == doctest::Approx(0.92));
  const units::Bytes size(8.0 * (1 << 20));
  const auto s = make_schedule(Algorithm::ring, CollectiveKind::all_reduce, size, shape);
  for (const auto& m : s.messages) {
    CHECK(m.bytes.value() == doctest::Approx(size.value() / 8 / 0.92));
    CHECK(m.latency_steps == (m.after.empty() ? 7 : 1));
  }
}

TEST_CASE("NVLS chunks as NCCL's enqueue.cc sizes them: 128 KiB, halved below 64, 8 and 2 rounds") {
  auto c = one_node();
  c.in_network_reduction = true;
  c.in_network_efficiency = 0.85;
  c.in_network_channels = 16;
  // One round on 8 ranks of 16 channels: 128 concurrent chunks.
  const double KiB = 1024, MiB = 1024 * KiB, GiB = 1024 * MiB;
  const auto chunk = [&](double bytes) { return in_network_chunk(units::Bytes(bytes), c).value(); };
  CHECK(chunk(8 * GiB) == 128 * KiB);
  CHECK(chunk(1 * GiB) == 128 * KiB);    // 64 x 128 x 128 KiB = 1 GiB, not below
  CHECK(chunk(1 * GiB - 1) == 64 * KiB); // below 64 rounds of 128 KiB
  CHECK(chunk(64 * MiB) == 64 * KiB);    // 8 x 128 x 64 KiB = 64 MiB, not below
  CHECK(chunk(32 * MiB) == 32 * KiB);
  CHECK(chunk(8 * MiB) == 32 * KiB); // 2 x 128 x 32 KiB = 8 MiB, not below
  CHECK(chunk(4 * MiB) == 16 * KiB);
  CHECK(chunk(1 * KiB) == 16 * KiB);
  c.in_network_channels = 24; // Blackwell: 192 concurrent chunks
  CHECK(chunk(1 * GiB) == 64 * KiB);
  CHECK(chunk(96 * MiB) == 64 * KiB);
  CHECK(chunk(96 * MiB - 1) == 32 * KiB);
}

TEST_CASE("NVLS's three-stage pipeline adds two round times, a round capped by the message") {
  auto c = one_node();
  c.in_network_reduction = true;
  c.in_network_efficiency = 0.85;
  c.in_network_channels = 16;
  const double rate = 0.85 * 230e9 / (1 + 1.0 / 8); // S per second at the in-network rate
  const double MiB = 1024.0 * 1024;
  // 8 MiB: 32 KiB chunks, a round of 128 x 32 KiB = 4 MiB.
  CHECK(in_network_pipeline_fill(units::Bytes(8 * MiB), c).value() == doctest::Approx(2 * 4 * MiB / rate));
  // 1 MiB: below one round (2 MiB of 16 KiB chunks), the round is the message.
  CHECK(in_network_pipeline_fill(units::Bytes(1 * MiB), c).value() == doctest::Approx(2 * 1 * MiB / rate));
  // 8 GiB: 128 KiB chunks, 16 MiB rounds: 2 of 512 rounds, under 0.4% of the bandwidth term.
  const double big = 8 * 1024 * MiB;
  CHECK(in_network_pipeline_fill(units::Bytes(big), c).value() == doctest::Approx(2 * 16 * MiB / rate));
  CHECK(in_network_pipeline_fill(units::Bytes(big), c).value() < 0.004 * big / rate);
  // The protocol choice carries it in NVLS's latency: 25 us + the fill.
  const auto p = choose_protocol(Algorithm::in_network, CollectiveKind::all_reduce, units::Bytes(8 * MiB), c);
  CHECK(p.protocol == Protocol::simple);
  CHECK(p.latency.value() == doctest::Approx(25e-6 + 2 * 4 * MiB / rate));
  c.ranks = 1;
  CHECK(in_network_pipeline_fill(units::Bytes(8 * MiB), c).value() == 0);
}

TEST_CASE("NVLS over 72 ranks chunks and fills by its 32 heads, not by its ranks") {
  auto c = one_node(72);
  c.in_network_reduction = true;
  c.in_network_efficiency = 0.74;
  c.in_network_channels = 24; // Blackwell, one NVLink domain: 24 x 32 = 768 concurrent chunks
  const double KiB = 1024.0, GiB = 1024.0 * 1024 * 1024;
  // 1 GiB < 64 x 768 x 128 KiB (6 GiB): 64 KiB chunks; not below 8 x 768 x 64 KiB (384 MiB).
  CHECK(in_network_chunk(units::Bytes(GiB), c).value() == 64 * KiB);
  const double round = 24 * 32 * 64 * KiB; // 48 MiB, not 72 ranks' 108 MiB
  const double rate = 0.74 * 230e9 / (1 + 1.0 / 32);
  CHECK(in_network_pipeline_fill(units::Bytes(GiB), c).value() == doctest::Approx(2 * round / rate));
}
