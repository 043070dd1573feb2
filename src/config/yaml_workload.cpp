#include "yaml_workload.hpp"

#include <array>
#include <limits>

#include <fmt/format.h>

#include "yaml_platform.hpp"
#include "yaml_quantity.hpp"
#include "yaml_reader.hpp"

namespace twocs::config::detail {
namespace {

/// The most layers a model may have, and multi-token-prediction depths beside them: a task
/// records its layer in 16 bits (lowering::Task), and 16,384 is far beyond any model built.
constexpr std::int64_t max_model_layers = 16384;

using model::TrainingPlan;
using model::TransformerConfig;

// `platform`: the platform file the workload was written for (read by scenario_loader.cpp).
constexpr std::array<std::string_view, 3> workload_keys = {"model", "training", "platform"};
constexpr std::array<std::string_view, 22> model_keys = {
    "name",      "layers",  "hidden", "heads",      "kv_heads",       "ffn_hidden",           "ffn_kind",
    "vocab",     "seq_len", "norm",   "position",   "attention_mask", "tied_embeddings",      "head_dim",
    "moe",       "dropout", "mla",    "mtp_layers", "sliding_window", "full_attention_every", "qk_norm",
    "post_norms"};
constexpr std::array<std::string_view, 5> mla_keys = {"q_lora_rank", "kv_lora_rank", "qk_nope_head_dim",
                                                      "qk_rope_head_dim", "v_head_dim"};
constexpr std::array<std::string_view, 7> moe_keys = {
    "experts", "top_k", "expert_ffn_hidden", "shared_experts", "dense_layers", "capacity_factor", "load_imbalance"};
constexpr std::array<std::string_view, 2> norm_names = {"layernorm", "rmsnorm"};
constexpr std::array norm_values = {model::NormKind::layernorm, model::NormKind::rmsnorm};
constexpr std::array<std::string_view, 2> position_names = {"learned", "rope"};
constexpr std::array position_values = {model::PositionKind::learned, model::PositionKind::rope};
constexpr std::array<std::string_view, 2> mask_names = {"causal", "full"};
constexpr std::array mask_values = {model::AttentionMask::causal, model::AttentionMask::full};
constexpr std::array<std::string_view, 21> training_keys = {"global_batch",
                                                            "micro_batch",
                                                            "dtype",
                                                            "parallelism",
                                                            "recompute",
                                                            "recompute_modules",
                                                            "recompute_layers",
                                                            "optimizer",
                                                            "attention",
                                                            "attention_kernel",
                                                            "kernels",
                                                            "loss",
                                                            "pipeline_schedule",
                                                            "overlap",
                                                            "framework",
                                                            "host",
                                                            "grad_reduce",
                                                            "grad_accumulation_fusion",
                                                            "fp8_params",
                                                            "fp8_recipe",
                                                            "collectives"};
constexpr std::array<std::string_view, 3> fp8_recipe_names = {"delayed", "tensorwise", "blockwise"};
constexpr std::array fp8_recipe_values = {model::TrainingPlan::Fp8Recipe::delayed,
                                          model::TrainingPlan::Fp8Recipe::tensorwise,
                                          model::TrainingPlan::Fp8Recipe::blockwise};
constexpr std::array<std::string_view, 5> host_keys = {"micro_batch_overhead", "iteration_overhead", "synchronize",
                                                       "launch_time", "cuda_graphs"};
constexpr std::array<std::string_view, 3> cuda_graphs_names = {"none", "partial", "full"};
constexpr std::array cuda_graphs_values = {model::CudaGraphs::none, model::CudaGraphs::partial,
                                           model::CudaGraphs::full};
constexpr std::array<std::string_view, 3> framework_names = {"megatron-lm", "megatron-deepspeed", "fsdp"};
constexpr std::array framework_values = {model::Framework::megatron_lm, model::Framework::megatron_deepspeed,
                                         model::Framework::fsdp};
constexpr std::array<std::string_view, 3> grad_reduce_names = {"auto", "fp32", "model"};
constexpr std::array grad_reduce_values = {TrainingPlan::GradReduce::automatic, TrainingPlan::GradReduce::fp32,
                                           TrainingPlan::GradReduce::model_dtype};
constexpr std::array<std::string_view, 14> parallelism_keys = {"tensor",
                                                               "pipeline",
                                                               "data",
                                                               "sequence",
                                                               "virtual_stages",
                                                               "stage_layers",
                                                               "context",
                                                               "expert",
                                                               "search",
                                                               "search_candidates",
                                                               "context_comm",
                                                               "expert_dispatcher",
                                                               "sync_free_dispatch",
                                                               "fused_permute_pad"};
constexpr std::array<std::string_view, 3> objective_names = {"none", "smallest", "fastest"};
constexpr std::array objective_values = {PlanObjective::none, PlanObjective::smallest, PlanObjective::fastest};
constexpr std::array<std::string_view, 3> context_comm_names = {"ring", "all_gather", "all_to_all"};
constexpr std::array context_comm_values = {model::ContextComm::ring, model::ContextComm::all_gather,
                                            model::ContextComm::all_to_all};
constexpr std::array<std::string_view, 3> expert_dispatcher_names = {"all_to_all", "deepep", "hybridep"};
constexpr std::array expert_dispatcher_values = {model::ExpertDispatcher::all_to_all, model::ExpertDispatcher::deepep,
                                                 model::ExpertDispatcher::hybridep};
constexpr std::array<std::string_view, 2> optimizer_keys = {"kind", "sharding"};
constexpr std::array<std::string_view, 11> overlap_keys = {
    "dp_grad_reduce",         "bucket_size", "tp_async_backward", "shared_experts",
    "expert_wgrad",           "expert_comm", "param_gather",      "tp_comm",
    "tp_comm_reduce_scatter", "p2p",         "tp_comm_sm_margin"};
// Transformer Engine's names of the GEMM + reduce-scatter pairs (module/base.py, initialize_ub).
constexpr std::array<std::string_view, 2> sm_margin_keys = {"proj_fprop", "fc2_fprop"};
// More SMs than any device has: a margin past it is a typo (the device's own count is checked
// against the platform in hardware::validate_fit).
constexpr std::int64_t max_sm_margin = 4096;
constexpr std::array<std::string_view, 3> tp_comm_names = {"none", "transformer_engine", "async_tp"};
constexpr std::array tp_comm_values = {model::TpCommOverlap::none, model::TpCommOverlap::transformer_engine,
                                       model::TpCommOverlap::async_tp};
constexpr std::array<std::string_view, 2> tp_reduce_scatter_names = {"pipeline", "ring_exchange"};
constexpr std::array tp_reduce_scatter_values = {model::TpReduceScatter::pipeline,
                                                 model::TpReduceScatter::ring_exchange};

constexpr std::array<std::string_view, 3> ffn_names = {"gelu", "swiglu", "squared_relu"};
constexpr std::array ffn_values = {model::FfnKind::gelu, model::FfnKind::swiglu, model::FfnKind::squared_relu};
constexpr std::array<std::string_view, 4> dtype_names = {"bf16", "fp16", "fp32", "fp8"};
constexpr std::array dtype_values = {model::Dtype::bf16, model::Dtype::fp16, model::Dtype::fp32, model::Dtype::fp8};
constexpr std::array<std::string_view, 5> schedule_names = {"gpipe", "1f1b", "interleaved-1f1b", "zb-h1", "dualpipe"};
constexpr std::array schedule_values = {model::PipelineSchedule::gpipe, model::PipelineSchedule::one_f_one_b,
                                        model::PipelineSchedule::interleaved_one_f_one_b,
                                        model::PipelineSchedule::zb_h1, model::PipelineSchedule::dualpipe};
constexpr std::array<std::string_view, 4> recompute_names = {"none", "selective", "full", "selective-op"};
constexpr std::array recompute_values = {model::Recompute::none, model::Recompute::selective, model::Recompute::full,
                                         model::Recompute::selective_op};
constexpr std::array<std::string_view, 2> attention_names = {"unfused", "fused"};
constexpr std::array attention_values = {model::AttentionKernel::unfused, model::AttentionKernel::fused};
constexpr std::array<std::string_view, 2> kernels_names = {"fused", "eager"};
constexpr std::array kernels_values = {model::KernelFusion::fused, model::KernelFusion::eager};
constexpr std::array<std::string_view, 2> loss_names = {"eager", "compiled"};
constexpr std::array loss_values = {model::LossKernel::eager, model::LossKernel::compiled};
constexpr std::array<std::string_view, 2> optimizer_kind_names = {"adam", "sgd"};
constexpr std::array optimizer_kind_values = {model::OptimizerKind::adam, model::OptimizerKind::sgd};
constexpr std::array<std::string_view, 4> sharding_names = {"none", "optimizer", "gradients", "full"};
constexpr std::array sharding_values = {model::OptimizerSharding::none, model::OptimizerSharding::optimizer,
                                        model::OptimizerSharding::gradients, model::OptimizerSharding::full};

/// The ffn_hidden default 4 * hidden, guarded against overflow of absurd widths.
std::int64_t default_ffn_hidden(const Field& hidden_field, std::int64_t hidden) {
  if (hidden > std::numeric_limits<std::int64_t>::max() / 4)
    fail_at(hidden_field.where(), hidden_field.path, fmt::format("model.hidden = {} is too large", hidden),
            "give a realistic model width, e.g. 12288");
  return 4 * hidden;
}

constexpr std::string_view capacity_factor_fix =
    "write a factor of at least 1 such as 1.25 (each expert takes 1.25 times its even share of tokens), or none "
    "for dropless routing (the default)";
constexpr std::string_view load_imbalance_fix =
    "write the busiest expert's tokens over the mean, at least 1, e.g. 1.2 (1: a balanced router, the default)";

/// A ratio >= 1 (capacity factor, load imbalance); `fix` says what the key takes.
double read_ratio(const Field& f, std::string_view fix) {
  const double v = read_real(f, fix);
  if (!(v >= 1.0))
    fail_at(f.where(), f.path, fmt::format("{} must be at least 1, got {}", f.path, v), std::string(fix));
  return v;
}

/// Multi-head latent attention (DeepSeek-V2/V3; the config.json names): q_lora_rank 0 projects
/// queries straight from h.
model::MlaConfig read_mla(const Field& field) {
  const MappingReader m(field, mla_keys);
  model::MlaConfig mla;
  if (const auto f = m.optional("q_lora_rank")) mla.q_lora_rank = read_count_or_zero(*f);
  mla.kv_lora_rank = read_count(m.required("kv_lora_rank", "512"));
  mla.qk_nope_head_dim = read_count(m.required("qk_nope_head_dim", "128"));
  mla.qk_rope_head_dim = read_count(m.required("qk_rope_head_dim", "64"));
  mla.v_head_dim = read_count(m.required("v_head_dim", "128"));
  return mla;
}

model::MoeConfig read_moe(const Field& field) {
  const MappingReader m(field, moe_keys);
  model::MoeConfig moe;
  moe.experts = read_count(m.required("experts", "128"));
  moe.top_k = read_count(m.required("top_k", "8"));
  moe.expert_ffn_hidden = read_count(m.required("expert_ffn_hidden", "1536"));
  if (const auto f = m.optional("shared_experts")) moe.shared_experts = read_count_or_zero(*f);
  if (const auto f = m.optional("dense_layers")) moe.dense_layers = read_count_or_zero(*f);
  if (const auto f = m.optional("capacity_factor")) {
    const bool none = f->value && f->value->kind == YamlNode::Kind::scalar && f->value->scalar == "none";
    moe.capacity_factor = none ? 0.0 : read_ratio(*f, capacity_factor_fix);
  }
  if (const auto f = m.optional("load_imbalance")) moe.load_imbalance = read_ratio(*f, load_imbalance_fix);
  if (moe.top_k > moe.experts)
    fail_at(field.where(), field.path + ".top_k",
            fmt::format("top_k = {} exceeds experts = {}", moe.top_k, moe.experts), "route to at most `experts`");
  return moe;
}

void read_modern_keys(const MappingReader& m, TransformerConfig& c) {
  if (const auto f = m.optional("norm")) c.norm = read_enum(*f, norm_names, norm_values);
  if (const auto f = m.optional("position")) c.position = read_enum(*f, position_names, position_values);
  if (const auto f = m.optional("attention_mask")) c.attention_mask = read_enum(*f, mask_names, mask_values);
  if (const auto f = m.optional("sliding_window")) c.sliding_window = read_count(*f);
  if (const auto f = m.optional("full_attention_every")) c.full_attention_every = read_count(*f);
  if (const auto f = m.optional("tied_embeddings")) c.tied_embeddings = read_bool(*f);
  if (const auto f = m.optional("dropout")) c.dropout = read_bool(*f);
  if (const auto f = m.optional("qk_norm")) c.qk_norm = read_bool(*f);
  if (const auto f = m.optional("post_norms")) c.post_norms = read_bool(*f);
  if (const auto f = m.optional("head_dim")) c.head_dim_override = read_count(*f);
  if (const auto f = m.optional("moe")) c.moe = read_moe(*f);
  if (const auto f = m.optional("mla")) c.mla = read_mla(*f);
  if (const auto f = m.optional("mtp_layers")) c.mtp_layers = read_count_up_to(*f, max_model_layers, 0);
}

TransformerConfig read_model(const Field& field, std::string_view default_name) {
  const MappingReader m(field, model_keys);
  TransformerConfig c;
  const auto name = m.optional("name");
  c.name = name ? read_text(*name) : std::string(default_name);
  c.layers = read_count_up_to(m.required("layers", "96"), max_model_layers);
  const Field hidden = m.required("hidden", "12288");
  c.hidden = read_count(hidden);
  c.heads = read_count(m.required("heads", "96"));
  const auto kv_heads = m.optional("kv_heads");
  c.kv_heads = kv_heads ? read_count(*kv_heads) : c.heads;
  const auto ffn_hidden = m.optional("ffn_hidden");
  c.ffn_hidden = ffn_hidden ? read_count(*ffn_hidden) : default_ffn_hidden(hidden, c.hidden);
  if (const auto kind = m.optional("ffn_kind")) c.ffn_kind = read_enum(*kind, ffn_names, ffn_values);
  c.vocab = read_count(m.required("vocab", "51200"));
  c.seq_len = read_count(m.required("seq_len", "2048"));
  read_modern_keys(m, c);
  return c;
}

model::Parallelism read_parallelism(const Field& field) {
  const MappingReader p(field, parallelism_keys);
  model::Parallelism par;
  par.tensor = read_count(p.required("tensor", "8"));
  par.pipeline = read_count(p.required("pipeline", "8"));
  par.data = read_count(p.required("data", "16"));
  if (const auto f = p.optional("sequence")) par.sequence = read_bool(*f);
  if (const auto f = p.optional("virtual_stages")) par.virtual_stages = read_count(*f);
  if (const auto f = p.optional("context")) par.context = read_count(*f);
  if (const auto f = p.optional("context_comm"))
    par.context_comm = read_enum(*f, context_comm_names, context_comm_values);
  if (const auto f = p.optional("expert_dispatcher"))
    par.expert_dispatcher = read_enum(*f, expert_dispatcher_names, expert_dispatcher_values);
  if (const auto f = p.optional("sync_free_dispatch")) par.sync_free_dispatch = read_bool(*f);
  if (const auto f = p.optional("fused_permute_pad")) par.fused_permute_pad = read_bool(*f);
  if (const auto f = p.optional("expert")) par.expert = read_count(*f);
  if (const auto f = p.optional("stage_layers"))
    for (const Field& item : read_list(*f)) par.stage_layers.push_back(read_count_or_zero(item)); // ends may be 0
  return par;
}

PlanSearchRequest read_plan_search(const Field& field) {
  const MappingReader p(field, parallelism_keys);
  PlanSearchRequest search;
  if (const auto f = p.optional("search")) search.objective = read_enum(*f, objective_names, objective_values);
  if (const auto f = p.optional("search_candidates")) search.candidates = read_count(*f);
  return search;
}

model::OptimizerPlan read_optimizer(const Field& field) {
  const MappingReader o(field, optimizer_keys);
  model::OptimizerPlan plan;
  if (const auto f = o.optional("kind")) plan.kind = read_enum(*f, optimizer_kind_names, optimizer_kind_values);
  if (const auto f = o.optional("sharding")) plan.sharding = read_enum(*f, sharding_names, sharding_values);
  return plan;
}

model::TpSmMargin read_sm_margin(const Field& field) {
  const MappingReader m(field, sm_margin_keys);
  model::TpSmMargin margin;
  if (const auto f = m.optional("proj_fprop")) margin.proj_fprop = read_count_up_to(*f, max_sm_margin, 0);
  if (const auto f = m.optional("fc2_fprop")) margin.fc2_fprop = read_count_up_to(*f, max_sm_margin, 0);
  return margin;
}

model::OverlapPlan read_overlap(const Field& field) {
  const MappingReader o(field, overlap_keys);
  model::OverlapPlan plan;
  if (const auto f = o.optional("dp_grad_reduce")) plan.dp_grad_reduce = read_bool(*f);
  if (const auto f = o.optional("bucket_size")) plan.bucket_size = read_bytes(*f, "25MB");
  if (const auto f = o.optional("tp_async_backward")) plan.tp_async_backward = read_bool(*f);
  if (const auto f = o.optional("shared_experts")) plan.shared_experts = read_bool(*f);
  if (const auto f = o.optional("expert_wgrad")) plan.expert_wgrad = read_bool(*f);
  if (const auto f = o.optional("expert_comm")) plan.expert_comm = read_bool(*f);
  if (const auto f = o.optional("param_gather")) plan.param_gather = read_bool(*f);
  if (const auto f = o.optional("p2p")) plan.p2p = read_bool(*f);
  if (const auto f = o.optional("tp_comm")) plan.tp_comm = read_enum(*f, tp_comm_names, tp_comm_values);
  if (const auto f = o.optional("tp_comm_reduce_scatter"))
    plan.tp_comm_reduce_scatter = read_enum(*f, tp_reduce_scatter_names, tp_reduce_scatter_values);
  if (const auto f = o.optional("tp_comm_sm_margin")) plan.tp_comm_sm_margin = read_sm_margin(*f);
  return plan;
}

model::HostPlan read_host(const Field& field) {
  const MappingReader h(field, host_keys);
  model::HostPlan plan;
  if (const auto f = h.optional("micro_batch_overhead")) plan.micro_batch_overhead = read_duration(*f, "50us");
  if (const auto f = h.optional("iteration_overhead")) plan.iteration_overhead = read_duration(*f, "10ms");
  if (const auto f = h.optional("synchronize")) plan.synchronize = read_bool(*f);
  if (const auto f = h.optional("launch_time")) plan.launch_time = read_duration(*f, "13.5us");
  if (const auto f = h.optional("cuda_graphs")) plan.cuda_graphs = read_enum(*f, cuda_graphs_names, cuda_graphs_values);
  return plan;
}

/// Megatron-Core's --recompute-modules: what recompute: selective re-runs. Like Megatron-Core,
/// other recompute modes ignore the list, so that a sweep over training.recompute can keep it.
model::RecomputeModules read_recompute_modules(const Field& field) {
  model::RecomputeModules modules = model::no_recompute_modules();
  for (const Field& item : read_list(field)) {
    const std::size_t index = read_choice(item, model::recompute_module_names);
    const model::RecomputeModules added = model::with_recompute_module(modules, index);
    if (added == modules)
      fail_at(item.where(), item.path,
              fmt::format("training.recompute_modules lists {} twice", model::recompute_module_names[index]),
              "list each module once");
    modules = added;
  }
  return modules;
}

TrainingPlan read_training(const Field& field, PlanSearchRequest& search) {
  const MappingReader t(field, training_keys);
  TrainingPlan plan;
  plan.global_batch = read_count(t.required("global_batch", "1536"));
  plan.micro_batch = read_count(t.required("micro_batch", "1"));
  if (const auto f = t.optional("dtype")) plan.dtype = read_enum(*f, dtype_names, dtype_values);
  const Field parallelism = t.required("parallelism", "{tensor: 8, pipeline: 8, data: 16}");
  plan.parallelism = read_parallelism(parallelism);
  search = read_plan_search(parallelism);
  if (const auto f = t.optional("pipeline_schedule"))
    plan.pipeline_schedule = read_enum(*f, schedule_names, schedule_values);
  else if (plan.parallelism.virtual_stages > 1)
    plan.pipeline_schedule = model::PipelineSchedule::interleaved_one_f_one_b;
  if (const auto f = t.optional("recompute")) plan.recompute = read_enum(*f, recompute_names, recompute_values);
  if (const auto f = t.optional("recompute_modules")) plan.recompute_modules = read_recompute_modules(*f);
  if (const auto f = t.optional("recompute_layers")) plan.recompute_layers = read_count(*f);
  if (const auto f = t.optional("attention")) plan.attention = read_enum(*f, attention_names, attention_values);
  if (const auto f = t.optional("attention_kernel")) plan.attention_kernel = read_text(*f);
  if (const auto f = t.optional("kernels")) plan.kernels = read_enum(*f, kernels_names, kernels_values);
  if (const auto f = t.optional("loss")) plan.loss = read_enum(*f, loss_names, loss_values);
  if (const auto f = t.optional("optimizer")) plan.optimizer = read_optimizer(*f);
  if (const auto f = t.optional("overlap")) plan.overlap = read_overlap(*f);
  if (const auto f = t.optional("framework")) plan.framework = read_enum(*f, framework_names, framework_values);
  if (const auto f = t.optional("host")) plan.host = read_host(*f);
  if (const auto f = t.optional("grad_reduce")) plan.grad_reduce = read_enum(*f, grad_reduce_names, grad_reduce_values);
  if (const auto f = t.optional("grad_accumulation_fusion")) plan.grad_accumulation_fusion = read_bool(*f);
  if (const auto f = t.optional("fp8_params")) plan.fp8_params = read_bool(*f);
  if (const auto f = t.optional("fp8_recipe")) plan.fp8_recipe = read_enum(*f, fp8_recipe_names, fp8_recipe_values);
  return plan;
}

} // namespace

Workload read_workload(const YamlNode& root, std::string_view default_name) {
  const MappingReader top(root, workload_keys, "the workload");
  Workload w;
  w.model = read_model(top.required("model", "{layers: 96, hidden: 12288, heads: 96, vocab: 51200, seq_len: 2048}"),
                       default_name);
  const Field training = top.required("training", "{global_batch: 1536, micro_batch: 1, parallelism: {...}}");
  w.plan = read_training(training, w.search);
  // The algorithm per communication kind this workload asks for, over the platform's choice.
  if (const auto f = MappingReader(training, training_keys).optional("collectives"))
    w.collectives = read_collectives(*f);
  return w;
}

} // namespace twocs::config::detail
