// A view's flat usage fields (`cost_usd` and the four token counts, as INTERFACE.md shows them)
// from the core's Usage: one mapping for every view that shows them.
#pragma once

#include <loopr/core/loop.hpp>

namespace loopr::api {

template <typename View>
void set_usage_fields(View& v, const Usage& u) {
  v.cost_usd = u.cost_usd;
  v.input_tokens = u.input_tokens;
  v.output_tokens = u.output_tokens;
  v.cache_read_tokens = u.cache_read_tokens;
  v.cache_write_tokens = u.cache_write_tokens;
}

}  // namespace loopr::api
