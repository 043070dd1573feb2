#include <fmt/format.h>

#include <twocs/model/operator.hpp>
#include <twocs/model/training_plan.hpp>

namespace twocs::model {

std::string_view to_string(OpKind k) {
  switch (k) {
  case OpKind::gemm: return "gemm";
  case OpKind::batched_gemm: return "batched_gemm";
  case OpKind::elementwise: return "elementwise";
  case OpKind::normalization: return "normalization";
  case OpKind::softmax: return "softmax";
  case OpKind::embedding: return "embedding";
  case OpKind::optimizer: return "optimizer";
  case OpKind::flash_forward: return "flash_forward";
  case OpKind::flash_backward: return "flash_backward";
  }
  return "?";
}

std::string_view to_string(Pass p) {
  switch (p) {
  case Pass::forward: return "forward";
  case Pass::backward: return "backward";
  case Pass::recompute: return "recompute";
  case Pass::optimizer: return "optimizer";
  }
  return "?";
}

std::string_view to_string(Collective c) {
  switch (c) {
  case Collective::all_reduce: return "all_reduce";
  case Collective::reduce_scatter: return "reduce_scatter";
  case Collective::all_gather: return "all_gather";
  case Collective::send_recv: return "send_recv";
  case Collective::all_to_all: return "all_to_all";
  case Collective::ring_exchange: return "ring_exchange";
  }
  return "?";
}

std::string_view to_string(CommGroup g) {
  switch (g) {
  case CommGroup::tensor: return "tensor";
  case CommGroup::pipeline: return "pipeline";
  case CommGroup::data: return "data";
  case CommGroup::expert: return "expert";
  case CommGroup::context: return "context";
  }
  return "?";
}

std::string_view to_string(PipelineSchedule s) {
  switch (s) {
  case PipelineSchedule::gpipe: return "gpipe";
  case PipelineSchedule::one_f_one_b: return "1f1b";
  case PipelineSchedule::interleaved_one_f_one_b: return "interleaved-1f1b";
  case PipelineSchedule::zb_h1: return "zb-h1";
  case PipelineSchedule::dualpipe: return "dualpipe";
  }
  return "?";
}

std::string_view to_string(Recompute r) {
  switch (r) {
  case Recompute::none: return "none";
  case Recompute::selective: return "selective";
  case Recompute::full: return "full";
  case Recompute::selective_op: return "selective-op";
  }
  return "?";
}

namespace {

/// The flags of `modules` in recompute_module_names's order.
std::array<bool*, recompute_module_names.size()> module_flags(RecomputeModules& m) {
  return {&m.core_attn, &m.moe_act, &m.layernorm, &m.mla_up_proj, &m.mlp, &m.moe, &m.shared_experts};
}

} // namespace

RecomputeModules with_recompute_module(RecomputeModules modules, std::size_t index) {
  *module_flags(modules).at(index) = true;
  return modules;
}

std::vector<std::string_view> names_of(const RecomputeModules& modules) {
  RecomputeModules copy = modules;
  const auto flags = module_flags(copy);
  std::vector<std::string_view> names;
  for (std::size_t i = 0; i < flags.size(); ++i)
    if (*flags[i]) names.push_back(recompute_module_names[i]);
  return names;
}

std::string_view to_string(OptimizerKind k) { return k == OptimizerKind::adam ? "adam" : "sgd"; }

std::string_view to_string(OptimizerSharding s) {
  switch (s) {
  case OptimizerSharding::none: return "none";
  case OptimizerSharding::optimizer: return "optimizer";
  case OptimizerSharding::gradients: return "gradients";
  case OptimizerSharding::full: return "full";
  }
  return "?";
}

std::string_view to_string(Framework f) {
  switch (f) {
  case Framework::megatron_lm: return "megatron-lm";
  case Framework::megatron_deepspeed: return "megatron-deepspeed";
  case Framework::fsdp: return "fsdp";
  }
  return "?";
}

std::string describe_degrees(const Parallelism& p) {
  std::string text = fmt::format("tensor {}", p.tensor);
  if (p.context > 1) text += fmt::format(" x context {}", p.context);
  text += fmt::format(" x pipeline {} x data {}", p.pipeline, p.data);
  if (p.expert > 1) text += fmt::format(", expert {} among them", p.expert);
  return text;
}

} // namespace twocs::model
