// What a model call cost in USD: usage × the config's price table (per million tokens).
#pragma once

#include <map>
#include <mutex>
#include <set>
#include <string>
#include <string_view>

#include <loopr/core/config.hpp>
#include <loopr/core/loop.hpp>

namespace loopr::llm {

/// Cost of `usage` at `price` (input, output, cache write, cache read per MTok).
double cost_usd(const Price& price, const Usage& usage);

/// The price table of a Config. Thread-safe; an unknown model costs 0 and is warned about once.
class Pricing {
 public:
  explicit Pricing(std::map<std::string, Price> table);

  /// The price of `model`: an exact entry, else the longest entry that `model` starts with
  /// followed by '-' (a dated snapshot such as `claude-opus-5-5-20261101`); nullptr if none.
  const Price* find(std::string_view model) const;

  /// USD for `usage` with `model`; 0 (and one warning per model) when the model is unknown.
  double cost_usd(std::string_view model, const Usage& usage) const;

 private:
  std::map<std::string, Price, std::less<>> table_;
  mutable std::mutex mutex_;
  mutable std::set<std::string, std::less<>> warned_;
};

}  // namespace loopr::llm
