#include "layer_cuts.hpp"

#include <string_view>
#include <variant>

namespace twocs::lowering::detail {
namespace {

bool is_token_exchange(const PreparedStep& p) {
  const auto* c = std::get_if<model::CollectiveOp>(&p.step);
  return c && c->kind == model::Collective::all_to_all && c->group == model::CommGroup::expert;
}

/// Splits `steps` at its token exchanges: the steps before the first, the first, the steps
/// between, the second, the steps after. Without exchanges everything is `before`.
struct ExchangeSplit {
  PreparedSequence before, first, between, second, after;
};

ExchangeSplit split_at_exchanges(const PreparedSequence& steps) {
  ExchangeSplit split;
  PreparedSequence* parts[] = {&split.before, &split.first, &split.between, &split.second, &split.after};
  std::size_t part = 0;
  for (const auto& p : steps) {
    if (is_token_exchange(p) && part < 4) {
      parts[++part]->push_back(p);
      ++part;
      continue;
    }
    parts[part]->push_back(p);
  }
  return split;
}

/// What the experts' backward recomputes first: the experts' activation (moe_act) and the
/// pre-MLP norm, whose checkpoint Megatron-Core discards after the experts' forward and recomputes
/// from the experts' output gradient (fine_grained_callables.py, submodule_moe_forward).
bool recomputed_for_experts(const PreparedStep& p) {
  const std::string_view name = std::visit([](const auto& s) -> std::string_view { return s.name; }, p.step);
  return name.starts_with("moe.") || name == "mlp.norm";
}

} // namespace

LayerCuts cut_layer(const PreparedLayer& layer) {
  LayerCuts cuts;
  auto forward = split_at_exchanges(layer.forward);
  cuts.pre_dispatch = std::move(forward.before);
  cuts.dispatch = std::move(forward.first);
  cuts.experts = std::move(forward.between);
  cuts.combine = std::move(forward.second);
  cuts.post_combine = std::move(forward.after);
  auto backward = split_at_exchanges(layer.backward);
  const bool moe = !cuts.dispatch.empty();
  for (const auto& p : layer.recompute)
    (moe && recomputed_for_experts(p) ? cuts.experts_backward : cuts.pre_dispatch_backward).push_back(p);
  if (!moe) {
    for (auto& p : backward.before) cuts.pre_dispatch_backward.push_back(std::move(p));
    return cuts;
  }
  cuts.combine_input_grad = std::move(backward.before);
  cuts.combine_backward = std::move(backward.first);
  for (auto& p : backward.between) (is_weight_grad(p) ? cuts.experts_wgrad : cuts.experts_backward).push_back(p);
  cuts.dispatch_backward = std::move(backward.second);
  for (auto& p : backward.after) cuts.pre_dispatch_backward.push_back(std::move(p));
  return cuts;
}

} // namespace twocs::lowering::detail
