// Private to the markdown module: an artifact as a title and `## ` sections (top-level headings
// only, so a `## Phases` line in a fenced code block, a quote or a list never counts), and the
// rules every required section shares: present, at level 2, once, not empty.
#pragma once

#include <cmark-gfm.h>

#include <string>
#include <string_view>
#include <vector>

#include <loopr/markdown/artifacts.hpp>
#include <loopr/markdown/problem.hpp>

#include "markdown/line_index.hpp"

namespace loopr::markdown {

/// A heading that is a direct child of the document.
struct Heading {
  int level = 0;
  int line = 0;
  std::string text;  ///< plain text as written (trailing `#`s already gone)
  std::string key;   ///< normalised for matching: lower case, no trailing colon or numbering
};

/// A level-2 section: its heading and the top-level blocks up to the next heading of level 1 or 2.
struct Section {
  Heading heading;
  std::vector<cmark_node*> blocks;  ///< owned by the document tree
  int last_line = 0;                ///< the line before the next level-1/2 heading (or the end)
};

/// A required section: its name as written after `## `, and what belongs under it (the
/// messages tell the model to write exactly that).
struct SectionRule {
  std::string_view name;
  std::string_view content;
};

/// The section-matching key of a heading text (`1. Success criteria:` → `success criteria`).
std::string section_key(std::string_view heading_text);

class Outline {
 public:
  Outline(cmark_node* document, const LineIndex& lines);

  /// The first level-1 heading as plain text; adds `missing_title` when there is none or it is
  /// empty. `example` is a sample title for the message.
  SectionText title(std::string_view example, std::vector<Problem>& problems) const;

  /// The section `rule` names, or nullptr when missing (adding `missing_section`, or
  /// `misplaced_section` when it exists at another level). Adds `duplicate_section` for repeats
  /// and `empty_section` when nothing is under it (it is still returned then).
  const Section* require(const SectionRule& rule, std::vector<Problem>& problems) const;

  /// The markdown source under a section (see SectionText::text); empty for nullptr.
  std::string source_of(const Section* section) const;
  /// The words under a section as one line of plain text; empty for nullptr.
  std::string plain_of(const Section* section) const;

  const LineIndex& lines() const { return lines_; }

 private:
  const LineIndex& lines_;
  std::vector<Heading> headings_;  ///< every top-level heading, in order
  std::vector<Section> sections_;  ///< level-2 sections, in order
};

/// True when a section body holds nothing but blank space, HTML comments or rules.
bool is_empty_body(const std::vector<cmark_node*>& blocks);

}  // namespace loopr::markdown
