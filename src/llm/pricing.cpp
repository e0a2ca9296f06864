#include <spdlog/spdlog.h>

#include <loopr/llm/pricing.hpp>

namespace loopr::llm {

double cost_usd(const Price& price, const Usage& usage) {
  constexpr double kPerToken = 1e-6;  // prices are per million tokens
  return kPerToken * (static_cast<double>(usage.input_tokens) * price.input +
                      static_cast<double>(usage.output_tokens) * price.output +
                      static_cast<double>(usage.cache_write_tokens) * price.cache_write +
                      static_cast<double>(usage.cache_read_tokens) * price.cache_read);
}

Pricing::Pricing(std::map<std::string, Price> table) : table_(table.begin(), table.end()) {}

const Price* Pricing::find(std::string_view model) const {
  if (auto it = table_.find(model); it != table_.end()) return &it->second;
  const Price* best = nullptr;
  std::size_t best_len = 0;
  for (const auto& [name, price] : table_) {
    bool snapshot = model.size() > name.size() && model.substr(0, name.size()) == name &&
                    model[name.size()] == '-';
    if (snapshot && name.size() > best_len) {
      best = &price;
      best_len = name.size();
    }
  }
  return best;
}

double Pricing::cost_usd(std::string_view model, const Usage& usage) const {
  if (const Price* p = find(model)) return llm::cost_usd(*p, usage);
  std::lock_guard lock(mutex_);
  if (warned_.insert(std::string(model)).second)
    spdlog::warn("no price for model '{}' in the config's pricing table: its calls count as $0",
                 model);
  return 0;
}

}  // namespace loopr::llm
