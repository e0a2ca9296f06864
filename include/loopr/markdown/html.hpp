// Markdown as HTML for the web UI (`loopr web`): a model-written artifact rendered with cmark-gfm
// so that nothing in it can run or load anything in the reader's browser.
#pragma once

#include <string>
#include <string_view>

namespace loopr::markdown {

/// `text` (GFM: tables, task lists, strikethrough) as an HTML fragment that is safe to put in a
/// page whatever the text holds: raw HTML is shown as text (inline) or as a code block (blocks),
/// never passed through; images become links (nothing is loaded); a link keeps its target only
/// when it is `http:`, `https:` or `mailto:`, any other (`javascript:`, `data:`, relative paths)
/// becomes its text followed by the target in parentheses. Every string is HTML-escaped by
/// cmark's renderer (safe mode).
std::string render_safe_html(std::string_view text);

/// True for the link targets render_safe_html keeps as links (`http:`, `https:`, `mailto:`,
/// case-insensitive, after leading spaces).
bool is_safe_link(std::string_view url);

}  // namespace loopr::markdown
