// Loop ids: plans `001`, children `001-002`, `001-002-003`, code loops `code-001-002-003`
// (`code-001-002-003-002` for a phase's second generation),
// integration fix loops `fix-001-001`.
// A child's id depends only on its parent's id and its index, so spawning is idempotent.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <loopr/core/loop.hpp>

namespace loopr {

/// `001` for plan number 1 (at least three digits, more when the number needs them).
std::string plan_id(int number);

/// The id of the `index`-th (1-based) child of `parent_id`, whose type is `child_type`:
/// spec/phase children append `-NNN`; a code loop is `code-` + its phase's id, and `-NNN` after
/// that from the second generation on (a phase that iterated again after it had its code loop).
std::string child_id(std::string_view parent_id, LoopType child_type, int index);

/// The `number`-th integration fix loop of a plan (`fix-001-001`): a code loop whose parent is
/// the plan, made when the plan's integration branch fails the code validation.
std::string fix_loop_id(std::string_view plan_id, int number);
bool is_fix_loop_id(std::string_view id);

/// The plan id at the root of any loop id (`code-001-002-003` → `001`).
std::string root_plan_id(std::string_view id);

/// The type an id implies from its shape, or nullopt if it is not a loopr id.
std::optional<LoopType> type_of_id(std::string_view id);

/// The id of the loop that spawned `id` (empty for a plan, nullopt for a malformed id).
std::optional<std::string> parent_of_id(std::string_view id);

/// True if `id` is a descendant of `ancestor` (`001-002-003` and `code-001-002-003` of `001`).
bool is_descendant(std::string_view id, std::string_view ancestor);

/// Tree order: a plan, then each spec followed by its phases, each phase followed by its code loop.
std::string tree_sort_key(std::string_view id);

/// A file-name slug: lower-case ASCII letters, digits and single dashes, at most `max_len` chars.
std::string slugify(std::string_view text, std::size_t max_len = 40);

}  // namespace loopr
