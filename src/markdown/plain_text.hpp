// Private to the markdown module: turning cmark nodes into the plain text that artifact fields
// and validation messages carry (code spans and emphasis keep their words, lose their markers).
#pragma once

#include <cmark-gfm.h>

#include <string>
#include <string_view>

namespace loopr::markdown {

/// The words of a node's inline content: text and code spans verbatim, emphasis, links and
/// strikethrough reduced to their text, soft and hard breaks as '\n', raw HTML dropped.
std::string inline_text(cmark_node* node);

/// `inline_text` of `first` and every sibling after it (the rest of a paragraph).
std::string inline_text_from(cmark_node* first);

/// A block (or run of blocks) as plain text lines: paragraphs as their inline text, list items
/// as `- text` indented by depth, code blocks verbatim, table rows as `a | b`.
std::string block_text(cmark_node* block);

/// Runs of whitespace (newlines included) collapsed to one space, trimmed.
std::string collapse_spaces(std::string_view text);

/// Leading and trailing ASCII whitespace removed.
std::string_view trim(std::string_view text);

/// ASCII lower-case copy.
std::string lower(std::string_view text);

/// `text` cut to at most `max_chars` code points with `…` appended when cut (never splits a
/// UTF-8 sequence), for quoting what the model wrote inside a message.
std::string excerpt(std::string_view text, std::size_t max_chars = 60);

}  // namespace loopr::markdown
