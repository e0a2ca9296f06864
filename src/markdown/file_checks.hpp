// Private to the markdown module: the rules about the file as bytes (size, encoding), checked
// before and independently of its markdown structure.
#pragma once

#include <string_view>
#include <vector>

#include <loopr/core/config.hpp>
#include <loopr/markdown/problem.hpp>

namespace loopr::markdown {

/// Adds a `too_large` problem when `text` is over `limits.max_bytes`.
void check_size(std::string_view text, const ArtifactsConfig& limits, std::vector<Problem>& out);

/// Adds a `not_utf8` problem for each line holding bytes that are not well-formed UTF-8
/// (overlong forms, surrogates and code points past U+10FFFF included), up to a cap.
void check_utf8(std::string_view text, std::vector<Problem>& out);

/// True when `text` is well-formed UTF-8.
bool is_utf8(std::string_view text);

}  // namespace loopr::markdown
