// The markdown module checks the artifacts that carry work down the loop tree. A Problem is one
// broken format rule at one line, worded as an instruction the model can follow next iteration.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace loopr::markdown {

/// Which format rule a problem breaks. The names (`to_string`) are stable: `--json` prints them.
enum class Rule {
  too_large,            ///< the file is over `artifacts.max_bytes`
  not_utf8,             ///< bytes that are not UTF-8
  missing_title,        ///< no `# Title` heading
  missing_section,      ///< a required `## Section` is absent
  misplaced_section,    ///< the section exists at the wrong heading level (`### Overview`)
  duplicate_section,    ///< a required section appears twice
  empty_section,        ///< a required section has nothing under it
  no_items,             ///< the section that lists children has no list items
  malformed_item,       ///< an item that does not have the required shape
  bad_name,             ///< a spec name outside `[a-z0-9-]+`
  missing_description,  ///< an item with a name but nothing saying what it is
  duplicate_name,       ///< two items with the same name
  bad_number,           ///< phase numbers that are not 1..n in order
  too_many_items,       ///< more items than `artifacts.max_items`
};

const char* to_string(Rule rule);

/// One broken rule: where (1-based line of the artifact) and what to write instead.
struct Problem {
  int line = 1;
  Rule rule = Rule::malformed_item;
  std::string message;
};

/// `FILE:LINE: message`, the line `loopr validate` prints and the engine feeds back to the model.
std::string format_problem(std::string_view file, const Problem& problem);

/// Every problem formatted, one per line (each ending in '\n').
std::string format_problems(std::string_view file, const std::vector<Problem>& problems);

}  // namespace loopr::markdown
