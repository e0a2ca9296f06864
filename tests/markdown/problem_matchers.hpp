// Test helpers: find a problem by rule and line, and print problems when an assertion fails.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include <loopr/markdown/problem.hpp>

namespace loopr::markdown::test {

inline std::string dump(const std::vector<Problem>& problems) {
  return format_problems("FILE", problems);
}

/// The problem with this rule at this line, or nullptr.
inline const Problem* find_problem(const std::vector<Problem>& problems, Rule rule, int line) {
  auto it = std::find_if(problems.begin(), problems.end(),
                         [&](const Problem& p) { return p.rule == rule && p.line == line; });
  return it == problems.end() ? nullptr : &*it;
}

inline int count_rule(const std::vector<Problem>& problems, Rule rule) {
  return static_cast<int>(std::count_if(problems.begin(), problems.end(),
                                        [&](const Problem& p) { return p.rule == rule; }));
}

}  // namespace loopr::markdown::test
