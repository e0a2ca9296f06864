// One UTF-8 decoding step and the characters nothing shows as themselves: what every reader of
// the model's text (core/text.hpp's sanitisers, the web page's escaping, the merge policy's name
// check) decodes and hides with, so the terminal, the page and the checkout agree.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace loopr {

/// One step of UTF-8 decoding at `text[i]`: the code point and how many bytes it took, or, for
/// ill-formed input, `valid` false and the length of the maximal ill-formed subpart (at least 1:
/// Unicode's "U+FFFD substitution of maximal subparts", which Rust's lossy decoding follows).
/// core/text.hpp's sanitisers, the web page and the merge policy decode with this one.
struct Utf8Step {
  char32_t cp = 0;
  std::size_t len = 1;
  bool valid = true;
};
Utf8Step utf8_step(std::string_view text, std::size_t i);

/// A character nothing shows as itself, so that what a person reads may differ from what is
/// there: the C1 controls U+0080–U+009F (U+009B is a CSI) and the bidirectional overrides and
/// isolates U+202A–U+202E, U+2066–U+2069 (they reorder the text around them: "Trojan Source").
/// The terminal (`terminal_text`) and the web page show each as its `code_point_label`.
bool is_hidden_control(char32_t cp);

/// `<U+202E>`: how a hidden control is shown.
std::string code_point_label(char32_t cp);

}  // namespace loopr
