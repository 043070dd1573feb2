// Collective schedules as pure data: the ring is the collective lowering's ring, message by
// message; every algorithm's messages wait only on earlier ones and move at least the bytes the
// collective needs; algorithms that do not apply fall back to the ring and say so.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <numeric>

#include <twocs/lowering/collective.hpp>
#include <twocs/lowering/collective_algorithm.hpp>
#include <twocs/lowering/collective_algorithm_lowering.hpp>
#include <twocs/lowering/task_graph.hpp>

using namespace twocs;
using lowering::Algorithm;
using lowering::CollectiveKind;

namespace {

lowering::CollectiveSchedule build(Algorithm a, CollectiveKind k, std::int32_t n, double size, int ranks_per_node = 0,
                                   int channels = 1, int chunks = 1) {
  lowering::ScheduleShape shape;
  shape.ranks = n;
  shape.ranks_per_node = ranks_per_node;
  shape.channels = channels;
  shape.chunks = chunks;
  return lowering::make_schedule(a, k, units::bytes(size), shape);
}

std::vector<double> bytes_sent(const lowering::CollectiveSchedule& s) {
  std::vector<double> sent(static_cast<std::size_t>(s.ranks), 0.0);
  for (const auto& m : s.messages) sent[static_cast<std::size_t>(m.src)] += m.bytes.value();
  return sent;
}

} // namespace

TEST_CASE("the ring schedule is the collective lowering's ring, message by message") {
  for (const auto kind :
       {model::Collective::all_reduce, model::Collective::reduce_scatter, model::Collective::all_gather}) {
    CAPTURE(model::to_string(kind));
    std::vector<lowering::DeviceId> devices(6);
    std::iota(devices.begin(), devices.end(), 0);
    lowering::TaskGraph old_graph(6), new_graph(6);
    lowering::CollectiveSpec spec;
    spec.kind = kind;
    spec.size = units::bytes(6e6);
    lowering::CollectiveInstance ring(old_graph, spec, devices, 0);
    lowering::Transfer prototype;
    prototype.group = spec.group;
    prototype.collective = 0;
    (void)lowering::add_schedule(new_graph, build(Algorithm::ring, lowering::kind_of(kind), 6, 6e6), devices,
                                 lowering::TaskTag{}, prototype);
    REQUIRE(old_graph.size() == new_graph.size());
    CHECK(old_graph.dependency_count() == new_graph.dependency_count());
    for (lowering::TaskId id = 0; id < old_graph.size(); ++id) {
      CHECK(old_graph.task(id).device == new_graph.task(id).device);
      const auto &a = old_graph.transfer(id), &b = new_graph.transfer(id);
      CHECK(a.peer == b.peer);
      CHECK(a.bytes.value() == doctest::Approx(b.bytes.value()));
      CHECK(a.step == b.step);
      std::vector<lowering::TaskId> pa, pb;
      old_graph.for_each_predecessor(id, [&](lowering::TaskId p) { pa.push_back(p); });
      new_graph.for_each_predecessor(id, [&](lowering::TaskId p) { pb.push_back(p); });
      std::sort(pa.begin(), pa.end());
      std::sort(pb.begin(), pb.end());
      CHECK(pa == pb);
    }
  }
}

TEST_CASE("every algorithm waits only on earlier messages and sends at least the bound") {
  const double size = 1 << 20;
  struct Case {
    Algorithm algorithm;
    CollectiveKind kind;
    std::int32_t n;
    int per_node;
  };
  const Case cases[] = {
      {Algorithm::ring, CollectiveKind::all_reduce, 5, 0},
      {Algorithm::ring, CollectiveKind::broadcast, 5, 0},
      {Algorithm::tree, CollectiveKind::all_reduce, 7, 0},
      {Algorithm::halving_doubling, CollectiveKind::all_reduce, 8, 0},
      {Algorithm::halving_doubling, CollectiveKind::reduce_scatter, 8, 0},
      {Algorithm::halving_doubling, CollectiveKind::all_gather, 4, 0},
      {Algorithm::hierarchical, CollectiveKind::all_reduce, 12, 4},
      {Algorithm::hierarchical, CollectiveKind::reduce_scatter, 8, 4},
      {Algorithm::hierarchical, CollectiveKind::all_gather, 8, 2},
      {Algorithm::in_network, CollectiveKind::all_reduce, 8, 0},
      {Algorithm::direct, CollectiveKind::all_reduce, 6, 0},
      {Algorithm::direct, CollectiveKind::all_to_all, 6, 0},
      {Algorithm::pairwise, CollectiveKind::all_to_all, 6, 0},
  };
  for (const Case& c : cases) {
    CAPTURE(lowering::to_string(c.algorithm));
    CAPTURE(lowering::to_string(c.kind));
    const auto s = build(c.algorithm, c.kind, c.n, size, c.per_node, 2, 3);
    CHECK(s.algorithm == c.algorithm);
    for (std::size_t i = 0; i < s.messages.size(); ++i)
      for (auto a : s.messages[i].after) CHECK(a < i);
    const double bound = lowering::bytes_each_rank_sends(c.kind, c.algorithm, units::bytes(size), c.n).value();
    double most = 0;
    for (double b : bytes_sent(s)) most = std::max(most, b);
    CHECK(most >= bound * (1 - 1e-12)); // the busiest rank moves at least what every rank must
  }
}

TEST_CASE("algorithms that do not apply fall back to the ring") {
  CHECK(build(Algorithm::halving_doubling, CollectiveKind::all_reduce, 6, 1e6).algorithm == Algorithm::ring);
  CHECK(build(Algorithm::hierarchical, CollectiveKind::all_reduce, 8, 1e6).algorithm == Algorithm::ring);
  CHECK(build(Algorithm::tree, CollectiveKind::all_gather, 8, 1e6).algorithm == Algorithm::ring);
  CHECK(build(Algorithm::in_network, CollectiveKind::reduce_scatter, 8, 1e6).algorithm == Algorithm::ring);
}

TEST_CASE("ring all-reduce: n channels x k chunks of S / (n c k), 2 (n - 1) steps") {
  const auto s = build(Algorithm::ring, CollectiveKind::all_reduce, 4, 4800, 0, 3, 2);
  CHECK(s.messages.size() == 3u * 2u * 6u * 4u);
  for (const auto& m : s.messages) CHECK(m.bytes.value() == doctest::Approx(4800.0 / (4 * 3 * 2)));
  for (double sent : bytes_sent(s)) CHECK(sent == doctest::Approx(2.0 * 3 / 4 * 4800));
}

TEST_CASE("a collective lowered with another algorithm joins through its schedule") {
  std::vector<lowering::DeviceId> devices = {0, 1, 2, 3};
  lowering::TaskGraph graph(4);
  lowering::CollectiveSpec spec;
  spec.size = units::bytes(4e6);
  spec.algorithm = Algorithm::halving_doubling;
  lowering::CollectiveInstance instance(graph, spec, devices, 0);
  CHECK(graph.size() == 4u * 4u); // 2 log2 4 steps of 4 messages
  std::vector<lowering::TaskId> entries;
  for (lowering::DeviceId d : devices) {
    const auto before = graph.add_kernel(d, lowering::TaskTag{}, lowering::Kernel{});
    const auto exits = instance.join(graph, d, std::vector<lowering::TaskId>{before});
    CHECK(exits.size() == 2); // its last send and last receive
    for (auto e : exits) CHECK(graph.transfer(e).step == 3);
  }
  CHECK(instance.all_joined());
  CHECK(graph.is_acyclic());
}

TEST_CASE("the platform's algorithm per communication kind, the ring where it names none") {
  const std::map<std::string, std::string> collectives = {{"tensor", "in-network"}, {"data", "auto"}};
  CHECK(lowering::configured_algorithm(collectives, model::CommGroup::tensor) == Algorithm::in_network);
  CHECK(lowering::configured_algorithm(collectives, model::CommGroup::data) == Algorithm::automatic);
  CHECK(lowering::configured_algorithm(collectives, model::CommGroup::pipeline) == Algorithm::automatic);
  // Unresolved, `auto` builds the ring.
  CHECK(build(Algorithm::automatic, CollectiveKind::all_reduce, 4, 1e6).algorithm == Algorithm::ring);
}

TEST_CASE("a token reaches a rank (or node) holding one of its top-k experts with 1 - C(E - m, k) / C(E, k)") {
  // C(n, r) from its definition, in doubles.
  const auto choose = [](double n, double r) {
    double c = 1;
    for (double i = 0; i < r; ++i) c = c * (n - i) / (i + 1);
    return c;
  };
  // Qwen3: 128 experts, top 8; 16 per rank (EP 8), 32 per node of 8 ranks (EP 32).
  CHECK(model::routed_share(128, 8, 16) == doctest::Approx(1 - choose(112, 8) / choose(128, 8)));
  CHECK(model::routed_share(128, 8, 32) == doctest::Approx(1 - choose(96, 8) / choose(128, 8)));
  // Top 1: the share of experts held; every expert held: certain.
  CHECK(model::routed_share(64, 1, 8) == doctest::Approx(8.0 / 64));
  CHECK(model::routed_share(64, 4, 64) == 1.0);
  CHECK(model::routed_share(64, 4, 0) == 0.0);
}

TEST_CASE("DeepEP's dispatch: once per node across nodes to the same local index, forwarded inside the node") {
  // 4 nodes of 8 ranks, 128 experts top 8 (4 per rank, 32 per node), 1 MB of tokens per rank.
  const model::TokenRouting routing{units::bytes(1e6), 128, 8};
  lowering::ScheduleShape shape;
  shape.ranks = 32;
  shape.ranks_per_node = 8;
  const auto s = lowering::forwarded_dispatch_schedule(routing, shape);
  const double p_rank = model::routed_share(128, 8, 4), p_node = model::routed_share(128, 8, 32);
  double network = 0, nvlink = 0;
  std::size_t across = 0;
  for (const auto& m : s.messages) {
    CHECK(m.after.empty()); // forwarding streams while tokens arrive: every message starts at once
    if (m.src / 8 != m.dst / 8) {
      CHECK(m.src % 8 == m.dst % 8); // to the rank of the same local index
      CHECK(m.bytes.value() == doctest::Approx(1e6 * p_node));
      network += m.bytes.value();
      ++across;
    } else {
      // Its own tokens for that rank and those that arrived for it from the 3 other nodes.
      CHECK(m.bytes.value() == doctest::Approx(4 * 1e6 * p_rank));
      nvlink += m.bytes.value();
    }
  }
  CHECK(across == 32 * 3);
  CHECK(s.messages.size() == 32 * 3 + 32 * 7);
  // Per rank over the network: 3 nodes' worth, against the all-to-all's k copies of which 24 of
  // 31 peers are remote (the reduction DeepSeek-V3 section 3.2.2 describes).
  CHECK(network / 32 == doctest::Approx(3 * 1e6 * p_node));
  CHECK(network / 32 < 8 * 1e6 * 24.0 / 32);
  CHECK(nvlink / 32 == doctest::Approx(7 * 4 * 1e6 * p_rank));
  // One node: every token once to each rank that holds one of its experts.
  shape.ranks = 8;
  shape.ranks_per_node = 0;
  const auto one = lowering::forwarded_dispatch_schedule(routing, shape);
  CHECK(one.messages.size() == 8 * 7);
  for (const auto& m : one.messages) CHECK(m.bytes.value() == doctest::Approx(1e6 * model::routed_share(128, 8, 16)));
}
