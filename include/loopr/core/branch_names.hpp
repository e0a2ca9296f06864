// Branch names loopr uses, in one place: plain strings, so the rules that name a branch in a
// message need no git. Git stores `refs/heads/a` as a file, so `loopr/001` and
// `loopr/001/001-002` cannot both exist; loop branches therefore live under
// `loopr/<plan>-loops/`. (git/branches.hpp gives the same functions as `git::…`.)
#pragma once

#include <string>
#include <string_view>

namespace loopr {

/// The integration branch of a plan: `loopr/<plan-id>` (DESIGN.md "Git model").
std::string integration_branch(std::string_view plan_id);

/// The branch a loop works on: `loopr/<plan-id>-loops/<loop-id>`. Not `loopr/<plan-id>/<loop-id>`:
/// git refuses a ref below another ref ("'refs/heads/loopr/001' exists; cannot create
/// 'refs/heads/loopr/001/001-002'"), and the integration branch must keep its plain name.
std::string loop_branch(std::string_view plan_id, std::string_view loop_id);

/// Where an archived loop's commits are kept: `loopr/archive/<loop-id>`.
std::string archive_branch(std::string_view loop_id);

}  // namespace loopr
