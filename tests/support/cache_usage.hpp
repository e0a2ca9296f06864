// The prompt-cache figures the loop views (`loopr show`, the web UI's loop page) are tested with:
// one loop's and its tree's, as the API's loop detail carries them.
#pragma once

#include <nlohmann/json.hpp>

namespace loopr::testing {

/// Sets on `loop` (a loop detail's JSON) a cache of 7,000 read and 2,000 written of 1,000 input
/// tokens, $0.50 without the cache (70% of input read), and for its tree 45,000 read and 12,000
/// written of 3,000 input tokens, $2.25 without the cache (75% of input read).
inline void set_cache_usage(nlohmann::json& loop) {
  loop["input_tokens"] = 1000;
  loop["cache_read_tokens"] = 7000;
  loop["cache_write_tokens"] = 2000;
  loop["uncached_cost_usd"] = 0.5;
  loop["tree_usage"] = {{"input_tokens", 3000},
                        {"output_tokens", 900},
                        {"cache_read_tokens", 45000},
                        {"cache_write_tokens", 12000},
                        {"uncached_cost_usd", 2.25}};
}

}  // namespace loopr::testing
