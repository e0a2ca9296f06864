// Markdown for the terminal (`loopr review`, `loopr show`): rendered from the cmark-gfm AST with
// bold headings, indented and wrapped lists, dimmed code. Without colour it is plain text that
// keeps the markdown markers that carry structure (`#` headings, `-` bullets, `>` quotes).
#pragma once

#include <string>
#include <string_view>

#include "cli/terminal.hpp"

namespace loopr::cli {

/// `markdown` as terminal text wrapped to `width` columns (code blocks and tables are not
/// wrapped); every line ends with '\n'.
std::string render_markdown(std::string_view markdown, const Style& style, int width);

/// Greedy word wrap of `text` (may contain escape codes and '\n' for hard breaks): the first
/// line starts with `first`, the others with `rest`; words longer than a line stay whole.
std::string wrap_text(std::string_view text, std::string_view first, std::string_view rest,
                      int width);

}  // namespace loopr::cli
