// Typed reads of a JSON object's fields for the api codecs: a missing, null or mistyped field
// reads as its default (a client shows what it can; reading never throws).
#pragma once

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include <loopr/core/loop.hpp>

namespace loopr::api::read {

using json = nlohmann::json;

inline std::string str(const json& j, const char* k) {
  auto it = j.find(k);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}
inline double num(const json& j, const char* k) {
  auto it = j.find(k);
  return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
}
inline std::int64_t i64(const json& j, const char* k) {
  auto it = j.find(k);
  return it != j.end() && it->is_number() ? it->get<std::int64_t>() : 0;
}
inline std::uint64_t u64(const json& j, const char* k) {
  auto it = j.find(k);
  if (it != j.end() && it->is_number_unsigned()) return it->get<std::uint64_t>();
  return static_cast<std::uint64_t>(std::max<std::int64_t>(0, i64(j, k)));
}
inline int i32(const json& j, const char* k) { return static_cast<int>(i64(j, k)); }
inline bool flag(const json& j, const char* k) {
  auto it = j.find(k);
  return it != j.end() && it->is_boolean() && it->get<bool>();
}
inline std::optional<int> opt_int(const json& j, const char* k) {
  auto it = j.find(k);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<int>();
}
inline std::vector<std::string> strs(const json& j, const char* k) {
  std::vector<std::string> out;
  auto it = j.find(k);
  if (it == j.end() || !it->is_array()) return out;
  for (const auto& v : *it)
    if (v.is_string()) out.push_back(v.get<std::string>());
  return out;
}
inline TimestampMs when(const json& j, const char* k) {
  return parse_timestamp(str(j, k)).value_or(0);
}
/// The field `k`, or null when missing.
inline const json& sub(const json& j, const char* k) {
  static const json none;
  auto it = j.find(k);
  return it != j.end() ? *it : none;
}

}  // namespace loopr::api::read
