#include <loopr/core/branch_names.hpp>

namespace loopr {

std::string integration_branch(std::string_view plan_id) { return "loopr/" + std::string(plan_id); }

std::string loop_branch(std::string_view plan_id, std::string_view loop_id) {
  return "loopr/" + std::string(plan_id) + "-loops/" + std::string(loop_id);
}

std::string archive_branch(std::string_view loop_id) {
  return "loopr/archive/" + std::string(loop_id);
}

}  // namespace loopr
