#include "markdown/outline.hpp"

#include <loopr/markdown/gfm.hpp>

#include "markdown/plain_text.hpp"

namespace loopr::markdown {

std::string section_key(std::string_view heading_text) {
  std::string key = lower(collapse_spaces(heading_text));
  // Models number their sections (`## 2. Phases`) and end them with colons; neither changes
  // which section is meant.
  std::size_t digits = 0;
  while (digits < key.size() && key[digits] >= '0' && key[digits] <= '9') ++digits;
  if (digits > 0 && digits + 1 < key.size() && (key[digits] == '.' || key[digits] == ')') &&
      key[digits + 1] == ' ')
    key.erase(0, digits + 2);
  while (!key.empty() && (key.back() == ':' || key.back() == ' ')) key.pop_back();
  return key;
}

bool is_empty_body(const std::vector<cmark_node*>& blocks) {
  for (cmark_node* block : blocks) {
    cmark_node_type t = cmark_node_get_type(block);
    if (t == CMARK_NODE_HTML_BLOCK || t == CMARK_NODE_THEMATIC_BREAK) continue;
    if (!trim(block_text(block)).empty()) return false;
  }
  return true;
}

Outline::Outline(cmark_node* document, const LineIndex& lines) : lines_(lines) {
  // Index, not pointer: sections_ grows while blocks are assigned.
  constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  std::size_t current = kNone;
  for (cmark_node* block : children(document)) {
    if (is_type(block, CMARK_NODE_HEADING)) {
      Heading h;
      h.level = cmark_node_get_heading_level(block);
      h.line = cmark_node_get_start_line(block);
      h.text = collapse_spaces(inline_text(block));
      h.key = section_key(h.text);
      headings_.push_back(h);
      if (h.level <= 2) {
        if (current != kNone) sections_[current].last_line = h.line - 1;
        current = kNone;
      }
      if (h.level == 2) {
        sections_.push_back(Section{h, {}, lines.count()});
        current = sections_.size() - 1;
        continue;
      }
    }
    if (current != kNone) sections_[current].blocks.push_back(block);
  }
}

SectionText Outline::title(std::string_view example, std::vector<Problem>& problems) const {
  for (const Heading& h : headings_) {
    if (h.level != 1) continue;
    if (h.text.empty())
      problems.push_back({h.line, Rule::missing_title,
                          "the title is empty: write what this is about after the `#`, e.g. `# " +
                              std::string(example) + "`"});
    return {h.text, h.line};
  }
  problems.push_back({1, Rule::missing_title,
                      "the file has no title: make the first line a `# ` heading, e.g. `# " +
                          std::string(example) + "`"});
  return {};
}

const Section* Outline::require(const SectionRule& rule, std::vector<Problem>& problems) const {
  const std::string key = section_key(rule.name);
  const std::string heading = "`## " + std::string(rule.name) + "`";
  const Section* found = nullptr;
  for (const Section& s : sections_) {
    if (s.heading.key != key) continue;
    if (!found) {
      found = &s;
      continue;
    }
    problems.push_back({s.heading.line, Rule::duplicate_section,
                        "section " + heading + " appears again (first at line " +
                            std::to_string(found->heading.line) +
                            "): merge the two into one section"});
  }
  if (found) {
    if (is_empty_body(found->blocks))
      problems.push_back(
          {found->heading.line, Rule::empty_section,
           "section " + heading + " is empty: under it, write " + std::string(rule.content)});
    return found;
  }
  for (const Heading& h : headings_) {
    if (h.key != key) continue;
    problems.push_back({h.line, Rule::misplaced_section,
                        "`" + std::string(static_cast<std::size_t>(h.level), '#') + " " + h.text +
                            "` is a level-" + std::to_string(h.level) + " heading: write it as " +
                            heading + " (exactly two `#`)"});
    return nullptr;
  }
  problems.push_back({1, Rule::missing_section,
                      "missing section " + heading + ": add the heading " + heading +
                          " and under it " + std::string(rule.content)});
  return nullptr;
}

std::string Outline::source_of(const Section* section) const {
  if (!section || section->blocks.empty()) return {};
  return lines_.slice(cmark_node_get_start_line(section->blocks.front()), section->last_line);
}

std::string Outline::plain_of(const Section* section) const {
  if (!section) return {};
  std::string text;
  for (cmark_node* block : section->blocks) text += block_text(block) + "\n";
  return collapse_spaces(text);
}

}  // namespace loopr::markdown
