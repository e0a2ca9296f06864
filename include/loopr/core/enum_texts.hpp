// The texts of a small enum's values (what the store and the API carry), as one table of
// {value, text} per enum and the two look-ups over it.
#pragma once

#include <cstddef>
#include <string_view>

namespace loopr {

template <typename E>
struct EnumText {
  E value;
  const char* text;
};

/// The text of `value` in `table`; `fallback` when the table has none.
template <typename E, std::size_t N>
constexpr const char* text_of(const EnumText<E> (&table)[N], E value, const char* fallback = "") {
  for (const auto& t : table)
    if (t.value == value) return t.text;
  return fallback;
}

/// The value `text` names in `table`; `fallback` for any other text.
template <typename E, std::size_t N>
constexpr E value_of(const EnumText<E> (&table)[N], std::string_view text, E fallback) {
  for (const auto& t : table)
    if (text == t.text) return t.value;
  return fallback;
}

}  // namespace loopr
