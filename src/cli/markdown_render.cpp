#include "cli/markdown_render.hpp"

#include <cmark-gfm-core-extensions.h>

#include <algorithm>
#include <sstream>
#include <vector>

#include <loopr/core/text.hpp>
#include <loopr/markdown/gfm.hpp>

namespace loopr::cli {
namespace {

using markdown::children;
using markdown::is_type;

std::string type_string(cmark_node* node) {
  const char* s = cmark_node_get_type_string(node);
  return s ? s : "";
}

// A node's text as it may be shown: cmark decodes entities (`&#x1b;` is an ESC, `&#x9b;` a
// CSI), so the controls are made visible here, after parsing.
std::string literal(cmark_node* node) {
  const char* s = cmark_node_get_literal(node);
  return s ? terminal_text(s) : "";
}

std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> lines;
  std::string cur;
  for (char c : text) {
    if (c == '\n') {
      lines.push_back(cur);
      cur.clear();
    } else if (c != '\r') {
      cur += c;
    }
  }
  if (!cur.empty()) lines.push_back(cur);
  return lines;
}

std::string rtrim(std::string s) {
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

class Renderer {
 public:
  Renderer(const Style& style, int width) : style_(style), width_(std::max(width, 20)) {}

  std::vector<std::string> lines;

  // Inline content of a block as one string (escape codes included, '\n' for hard breaks).
  std::string inlines(cmark_node* parent) {
    std::string out;
    for (cmark_node* n : children(parent)) out += inline_node(n);
    return out;
  }

  void blocks(cmark_node* parent, const std::string& first, const std::string& rest, bool tight) {
    bool is_first = true;
    for (cmark_node* child : children(parent)) {
      if (!is_first && !tight) lines.push_back(rtrim(rest));
      block(child, is_first ? first : rest, rest, tight);
      is_first = false;
    }
  }

  void block(cmark_node* node, const std::string& first, const std::string& rest, bool tight) {
    switch (cmark_node_get_type(node)) {
      case CMARK_NODE_HEADING:
        heading(node, first);
        return;
      case CMARK_NODE_PARAGRAPH:
        paragraph(inlines(node), first, rest);
        return;
      case CMARK_NODE_LIST:
        list(node, first, rest);
        return;
      case CMARK_NODE_CODE_BLOCK:
        code_block(node, first, rest);
        return;
      case CMARK_NODE_HTML_BLOCK: {
        bool f = true;
        for (const auto& l : split_lines(literal(node))) {
          lines.push_back((f ? first : rest) + style_.dim(l));
          f = false;
        }
        return;
      }
      case CMARK_NODE_BLOCK_QUOTE: {
        std::string bar = style_.color ? style_.dim("│ ") : "> ";
        blocks(node, first + bar, rest + bar, false);
        return;
      }
      case CMARK_NODE_THEMATIC_BREAK: {
        int w = std::min(width_ - static_cast<int>(visible_width(rest)), 40);
        std::string rule;
        for (int i = 0; i < std::max(w, 3); ++i) rule += style_.color ? "─" : "-";
        lines.push_back(first + style_.dim(rule));
        return;
      }
      default:
        break;
    }
    if (type_string(node) == "table") {
      table(node, first, rest);
      return;
    }
    // Anything else (footnotes, custom blocks): its inline text, or its children's blocks.
    if (cmark_node_first_child(node) != nullptr) blocks(node, first, rest, tight);
  }

 private:
  const Style& style_;
  int width_;

  std::string inline_node(cmark_node* n) {
    switch (cmark_node_get_type(n)) {
      case CMARK_NODE_TEXT:
        return literal(n);
      case CMARK_NODE_SOFTBREAK:
        return " ";
      case CMARK_NODE_LINEBREAK:
        return "\n";
      case CMARK_NODE_CODE:
        return style_.color ? style_.dim(literal(n)) : "`" + literal(n) + "`";
      case CMARK_NODE_HTML_INLINE:
        return literal(n);
      case CMARK_NODE_EMPH:
        return style_.color ? style_.italic(inlines(n)) : "_" + inlines(n) + "_";
      case CMARK_NODE_STRONG:
        return style_.color ? style_.bold(inlines(n)) : "**" + inlines(n) + "**";
      case CMARK_NODE_LINK:
      case CMARK_NODE_IMAGE: {
        std::string text = inlines(n);
        const char* url = cmark_node_get_url(n);
        std::string u = url ? terminal_text(url) : "";
        if (u.empty() || u == text) return style_.underline(text.empty() ? u : text);
        return style_.underline(text) + " " + style_.dim("(" + u + ")");
      }
      default:
        break;
    }
    if (type_string(n) == "strikethrough")
      return style_.color ? style_.wrap("9", inlines(n)) : "~~" + inlines(n) + "~~";
    return inlines(n);
  }

  void heading(cmark_node* node, const std::string& first) {
    int level = cmark_node_get_heading_level(node);
    std::string text = inlines(node);
    std::replace(text.begin(), text.end(), '\n', ' ');
    if (style_.color) {
      lines.push_back(first + (level == 1 ? style_.wrap("1;4", text) : style_.bold(text)));
    } else {
      lines.push_back(first + std::string(static_cast<std::size_t>(level), '#') + " " + text);
    }
  }

  void paragraph(const std::string& text, const std::string& first, const std::string& rest) {
    std::string wrapped = wrap_text(text, first, rest, width_);
    for (auto& l : split_lines(wrapped)) lines.push_back(l);
  }

  void list(cmark_node* node, const std::string& first, const std::string& rest) {
    bool ordered = cmark_node_get_list_type(node) == CMARK_ORDERED_LIST;
    bool tight = cmark_node_get_list_tight(node) != 0;
    int number = cmark_node_get_list_start(node);
    bool is_first = true;
    for (cmark_node* item : children(node)) {
      if (!is_first && !tight) lines.push_back(rtrim(rest));
      std::string marker = ordered ? std::to_string(number++) + ". " : (style_.color ? "• " : "- ");
      if (type_string(item) == "tasklist")
        marker += cmark_gfm_extensions_get_tasklist_item_checked(item) ? "[x] " : "[ ] ";
      std::string item_first = (is_first ? first : rest) + marker;
      std::string item_rest = rest + std::string(visible_width(marker), ' ');
      if (cmark_node_first_child(item) == nullptr)
        lines.push_back(rtrim(item_first));
      else
        blocks(item, item_first, item_rest, tight);
      is_first = false;
    }
  }

  void code_block(cmark_node* node, const std::string& first, const std::string& rest) {
    bool f = true;
    for (const auto& l : split_lines(literal(node))) {
      lines.push_back(rtrim((f ? first : rest) + "    " + style_.dim(l)));
      f = false;
    }
    if (f) lines.push_back(rtrim(first));
  }

  void table(cmark_node* node, const std::string& first, const std::string& rest) {
    std::vector<std::vector<std::string>> rows;
    for (cmark_node* row : children(node)) {
      std::vector<std::string> cells;
      for (cmark_node* cell : children(row)) {
        std::string t = inlines(cell);
        std::replace(t.begin(), t.end(), '\n', ' ');
        cells.push_back(t);
      }
      rows.push_back(std::move(cells));
    }
    std::vector<std::size_t> widths;
    for (const auto& r : rows)
      for (std::size_t i = 0; i < r.size(); ++i) {
        if (widths.size() <= i) widths.push_back(0);
        widths[i] = std::max(widths[i], visible_width(r[i]));
      }
    bool f = true;
    for (std::size_t r = 0; r < rows.size(); ++r) {
      std::string line = f ? first : rest;
      for (std::size_t i = 0; i < rows[r].size(); ++i) {
        std::string cell = r == 0 ? style_.bold(rows[r][i]) : rows[r][i];
        line += i + 1 < rows[r].size() ? pad_visible(cell, widths[i]) + "  " : cell;
      }
      lines.push_back(rtrim(line));
      f = false;
      if (r == 0) {
        std::string sep = rest;
        for (std::size_t i = 0; i < widths.size(); ++i) {
          for (std::size_t k = 0; k < widths[i]; ++k) sep += style_.color ? "─" : "-";
          if (i + 1 < widths.size()) sep += "  ";
        }
        lines.push_back(style_.color ? rest + style_.dim(sep.substr(rest.size())) : sep);
      }
    }
  }
};

}  // namespace

std::string wrap_text(std::string_view text, std::string_view first, std::string_view rest,
                      int width) {
  std::string out;
  std::string line(first);
  std::size_t line_width = visible_width(first);
  bool line_has_word = false;
  auto flush = [&] {
    out += rtrim(line);
    out += '\n';
    line = std::string(rest);
    line_width = visible_width(rest);
    line_has_word = false;
  };
  std::size_t i = 0;
  while (i <= text.size()) {
    std::size_t end = text.find_first_of(" \n", i);
    if (end == std::string_view::npos) end = text.size();
    std::string_view word = text.substr(i, end - i);
    if (!word.empty()) {
      std::size_t w = visible_width(word);
      if (line_has_word && line_width + 1 + w > static_cast<std::size_t>(width)) flush();
      if (line_has_word) {
        line += ' ';
        ++line_width;
      }
      line += word;
      line_width += w;
      line_has_word = true;
    }
    if (end == text.size()) break;
    if (text[end] == '\n') flush();
    i = end + 1;
  }
  if (line_has_word || out.empty()) {
    out += rtrim(line);
    out += '\n';
  }
  return out;
}

std::string render_markdown(std::string_view markdown_text, const Style& style, int width) {
  auto doc = markdown::parse_gfm(markdown_text);
  Renderer r(style, width);
  r.blocks(doc.get(), "", "", false);
  std::string out;
  for (const auto& l : r.lines) out += l + "\n";
  return out;
}

}  // namespace loopr::cli
