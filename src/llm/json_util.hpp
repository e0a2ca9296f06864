// Tolerant field access for provider JSON: a missing, null or mistyped field reads as empty,
// because providers add, null out and rename optional fields over time.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace loopr::llm {

/// `j[key]` if it is a string, else "".
inline std::string string_field(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return {};
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

/// Sets `out` from `j[key]` if that is a number; leaves it otherwise.
inline void read_count(const nlohmann::json& j, const char* key, std::int64_t& out) {
  if (!j.is_object()) return;
  auto it = j.find(key);
  if (it != j.end() && it->is_number()) out = it->get<std::int64_t>();
}

}  // namespace loopr::llm
