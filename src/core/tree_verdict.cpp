#include <loopr/core/tree_verdict.hpp>

namespace loopr {

const char* to_string(TreeVerdict v) {
  switch (v) {
    case TreeVerdict::running:
      return "running";
    case TreeVerdict::failed:
      return "failed";
    case TreeVerdict::merging:
      return "merging";
    case TreeVerdict::complete:
      return "complete";
    case TreeVerdict::merged:
      return "merged";
    case TreeVerdict::merge_failed:
      return "merge_failed";
    case TreeVerdict::validating:
      return "validating";
    case TreeVerdict::integration_failed:
      return "integration_failed";
  }
  return "running";
}

std::optional<TreeVerdict> parse_tree_verdict(std::string_view text) {
  for (TreeVerdict v : {TreeVerdict::running, TreeVerdict::failed, TreeVerdict::merging,
                        TreeVerdict::complete, TreeVerdict::merged, TreeVerdict::merge_failed,
                        TreeVerdict::validating, TreeVerdict::integration_failed})
    if (text == to_string(v)) return v;
  return std::nullopt;
}

}  // namespace loopr
