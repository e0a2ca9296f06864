#include "markdown/plain_text.hpp"

#include <cstring>

#include <loopr/markdown/gfm.hpp>

namespace loopr::markdown {
namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

void append_inline(cmark_node* node, std::string& out) {
  switch (cmark_node_get_type(node)) {
    case CMARK_NODE_TEXT:
    case CMARK_NODE_CODE:
      if (const char* lit = cmark_node_get_literal(node)) out += lit;
      return;
    case CMARK_NODE_SOFTBREAK:
    case CMARK_NODE_LINEBREAK:
      out += '\n';
      return;
    case CMARK_NODE_HTML_INLINE:
    case CMARK_NODE_FOOTNOTE_REFERENCE:
      return;  // markup, not words
    default:
      for (cmark_node* child : children(node)) append_inline(child, out);
  }
}

// Tables are extension nodes: their types are only known by name (API-NOTES §3.2).
bool has_type_string(cmark_node* node, const char* name) {
  const char* t = cmark_node_get_type_string(node);
  return t != nullptr && std::strcmp(t, name) == 0;
}

void append_lines(std::string_view text, std::string_view prefix, std::string& out) {
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    out += prefix;
    out += text.substr(start, end - start);
    out += '\n';
    start = end + 1;
  }
}

void append_block(cmark_node* node, int depth, std::string& out) {
  const std::string indent(static_cast<std::size_t>(depth) * 2, ' ');
  switch (cmark_node_get_type(node)) {
    case CMARK_NODE_PARAGRAPH:
    case CMARK_NODE_HEADING:
      append_lines(inline_text(node), indent, out);
      return;
    case CMARK_NODE_CODE_BLOCK: {
      std::string_view lit = cmark_node_get_literal(node) ? cmark_node_get_literal(node) : "";
      if (!lit.empty() && lit.back() == '\n') lit.remove_suffix(1);
      append_lines(lit, indent, out);
      return;
    }
    case CMARK_NODE_LIST:
      for (cmark_node* item : children(node)) {
        std::string inner;
        for (cmark_node* child : children(item)) append_block(child, 0, inner);
        // The item's first line carries the bullet; its further lines are indented under it.
        std::string_view rest = inner;
        if (!rest.empty() && rest.back() == '\n') rest.remove_suffix(1);
        std::size_t nl = rest.find('\n');
        out += indent + "- " + std::string(rest.substr(0, nl)) + "\n";
        if (nl != std::string_view::npos) append_lines(rest.substr(nl + 1), indent + "  ", out);
      }
      return;
    case CMARK_NODE_BLOCK_QUOTE: {
      std::string inner;
      for (cmark_node* child : children(node)) append_block(child, 0, inner);
      if (!inner.empty() && inner.back() == '\n') inner.pop_back();
      append_lines(inner, indent + "> ", out);
      return;
    }
    case CMARK_NODE_HTML_BLOCK:
    case CMARK_NODE_THEMATIC_BREAK:
      return;
    default:
      if (has_type_string(node, "table")) {
        for (cmark_node* row : children(node)) {
          std::string line;
          for (cmark_node* cell : children(row)) {
            if (!line.empty()) line += " | ";
            line += collapse_spaces(inline_text(cell));
          }
          out += indent + line + "\n";
        }
        return;
      }
      for (cmark_node* child : children(node)) append_block(child, depth, out);
  }
}

}  // namespace

std::string inline_text(cmark_node* node) {
  std::string out;
  for (cmark_node* child : children(node)) append_inline(child, out);
  return out;
}

std::string inline_text_from(cmark_node* first) {
  std::string out;
  for (cmark_node* n = first; n; n = cmark_node_next(n)) append_inline(n, out);
  return out;
}

std::string block_text(cmark_node* block) {
  std::string out;
  append_block(block, 0, out);
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

std::string collapse_spaces(std::string_view text) {
  std::string out;
  bool pending_space = false;
  for (char c : text) {
    if (is_space(c)) {
      pending_space = !out.empty();
      continue;
    }
    if (pending_space) out += ' ';
    pending_space = false;
    out += c;
  }
  return out;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

std::string excerpt(std::string_view text, std::size_t max_chars) {
  std::size_t chars = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    // Count code points by their lead bytes; cut only before a lead byte.
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
      if (chars == max_chars) return std::string(text.substr(0, i)) + "…";
      ++chars;
    }
  }
  return std::string(text);
}

}  // namespace loopr::markdown
