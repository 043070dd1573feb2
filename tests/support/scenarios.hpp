// Models, plans and clusters that many tests build: a GPT with the usual proportions, a plan
// from its parallel degrees, and an A100 cluster described by its links.
#pragma once

#include <cstdint>

#include <twocs/hardware/cluster.hpp>
#include <twocs/model/training_plan.hpp>
#include <twocs/model/transformer.hpp>
#include <twocs/units/quantity.hpp>

namespace twocs::testing {

/// A GPT: MLP width 4h, as many key/value heads as heads (Brown et al. 2020).
inline model::TransformerConfig gpt(std::int64_t layers, std::int64_t hidden, std::int64_t heads,
                                    std::int64_t seq_len = 2048, std::int64_t vocab = 51200) {
  model::TransformerConfig m;
  m.name = "gpt-test";
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.kv_heads = heads;
  m.ffn_hidden = 4 * hidden;
  m.vocab = vocab;
  m.seq_len = seq_len;
  return m;
}

/// `micro_batches` micro-batches of `micro_batch` sequences per data-parallel replica.
inline model::TrainingPlan plan_of(std::int64_t tensor, std::int64_t pipeline, std::int64_t data,
                                   std::int64_t micro_batches, std::int64_t micro_batch = 1) {
  model::TrainingPlan plan;
  plan.micro_batch = micro_batch;
  plan.global_batch = micro_batches * micro_batch * data;
  plan.parallelism.tensor = tensor;
  plan.parallelism.pipeline = pipeline;
  plan.parallelism.data = data;
  return plan;
}

/// Four causal layers of 4,096 tokens, `window` keys each (0: none), every `every`-th layer
/// attending the whole prefix (model.full_attention_every; 0: every layer windowed).
inline model::TransformerConfig windowed_gpt(std::int64_t window, std::int64_t every) {
  auto m = gpt(4, 1024, 16, 4096);
  m.sliding_window = window;
  m.full_attention_every = every;
  return m;
}

/// One micro-batch of one sequence on one device, attention by FlashAttention.
inline model::TrainingPlan fused_single_plan() {
  auto p = plan_of(1, 1, 1, 1);
  p.attention = model::AttentionKernel::fused;
  return p;
}

/// A100-SXM4-80GB figures from its datasheet, with the default operator-model parameters.
inline hardware::DeviceSpec a100() {
  hardware::DeviceSpec d;
  d.name = "A100";
  d.peak_flops[model::Dtype::bf16] = units::FlopRate(312e12);
  d.peak_flops[model::Dtype::fp16] = units::FlopRate(312e12);
  d.peak_flops[model::Dtype::fp32] = units::FlopRate(19.5e12);
  d.memory = units::Bytes(80.0 * 1073741824.0);
  d.memory_bandwidth = units::ByteRate(2039e9);
  return d;
}

struct Links {
  units::ByteRate node_bandwidth = units::ByteRate(300e9);
  units::Seconds node_latency = units::Seconds(2e-6);
  units::ByteRate nic_bandwidth = units::ByteRate(25e9);
  units::Seconds nic_latency = units::Seconds(5e-6);
};

/// `nodes` nodes of `devices_per_node` A100s on a switch, with one NIC per device into a
/// non-blocking fat tree.
inline hardware::ClusterSpec cluster_of(std::int64_t nodes, std::int64_t devices_per_node, const Links& links = {}) {
  hardware::ClusterSpec c;
  c.name = "test-cluster";
  c.device = a100();
  c.nodes = nodes;
  c.node.devices = devices_per_node;
  c.node.interconnect = {links.node_bandwidth, links.node_latency};
  c.network.link = {links.nic_bandwidth, links.nic_latency};
  return c;
}

} // namespace twocs::testing
