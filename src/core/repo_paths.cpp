#include <cstdio>

#include <loopr/core/ids.hpp>
#include <loopr/core/repo_paths.hpp>

namespace loopr {

std::filesystem::path RepoPaths::iteration_dir(const std::string& loop_id, int n) const {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%03d", n);
  return loop_log_dir(loop_id) / "iterations" / buf;
}

std::string artifact_path(LoopType type, const std::string& loop_id, const std::string& title) {
  std::string slug = slugify(title);
  switch (type) {
    case LoopType::plan:
      return ".loopr/plans/" + loop_id + "-" + slug + ".plan.md";
    case LoopType::spec:
      return ".loopr/specs/" + loop_id + "-" + slug + ".spec.md";
    case LoopType::phase:
      return ".loopr/phases/" + loop_id + "-" + slug + ".phase.md";
    case LoopType::code:
      return {};
  }
  return {};
}

}  // namespace loopr
