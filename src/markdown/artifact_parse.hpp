// Private to the markdown module: the steps every artifact check starts and ends with.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include <loopr/core/config.hpp>
#include <loopr/markdown/gfm.hpp>
#include <loopr/markdown/problem.hpp>

#include "markdown/line_index.hpp"
#include "markdown/outline.hpp"

namespace loopr::markdown {

/// The file-level checks (size, UTF-8) done, the markdown parsed, its outline built.
struct ArtifactParse {
  ArtifactParse(std::string_view text, const ArtifactsConfig& limits);

  std::vector<Problem> problems;
  NodePtr document;
  LineIndex lines;
  Outline outline;  ///< refers to `lines` and `document`, declared before it
};

/// Problems in line order; problems on one line keep the order they were found in.
void sort_problems(std::vector<Problem>& problems);

/// The number a list item was written with (`3.` → 3), read from the source at the item's
/// position: cmark keeps only the list's start number, and `1. 1. 1.` must not pass as 1, 2, 3.
std::optional<int> written_item_number(cmark_node* item, const LineIndex& lines);

}  // namespace loopr::markdown
