// The loop record: the unit of work loopr stores, schedules and shows, its type and its status
// machine (ONE transition table; every status change in loopr goes through `check_transition`).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <loopr/core/end_reason.hpp>
#include <loopr/core/loop_marks.hpp>
#include <loopr/core/result.hpp>

namespace loopr {

enum class LoopType { plan, spec, phase, code };

enum class LoopStatus {
  pending,
  running,
  paused,
  rebasing,
  blocked,
  awaiting_approval,
  awaiting_answer,  ///< the loop asked the person (`ask_user`); `loopr answer` resumes it
  complete,
  failed,
  stopped,
  invalidated,
};

inline constexpr LoopType kAllLoopTypes[] = {LoopType::plan, LoopType::spec, LoopType::phase,
                                             LoopType::code};
inline constexpr LoopStatus kAllLoopStatuses[] = {
    LoopStatus::pending, LoopStatus::running,           LoopStatus::paused,   LoopStatus::rebasing,
    LoopStatus::blocked, LoopStatus::awaiting_approval, LoopStatus::awaiting_answer,
    LoopStatus::complete, LoopStatus::failed, LoopStatus::stopped, LoopStatus::invalidated};

const char* to_string(LoopType type);
const char* to_string(LoopStatus status);
std::optional<LoopType> parse_loop_type(std::string_view text);
std::optional<LoopStatus> parse_loop_status(std::string_view text);

/// True for complete, failed, stopped and invalidated: nothing more happens to such a loop
/// unless the user asks (resume of a stopped loop, a fresh retry of a failed one).
bool is_terminal(LoopStatus status);

/// True if the status machine allows `from -> to`.
bool transition_allowed(LoopStatus from, LoopStatus to);

/// `transition_allowed` as a Result whose error names both states (ErrorCode::illegal_transition).
Result<void> check_transition(LoopStatus from, LoopStatus to);

/// Milliseconds since the Unix epoch (UTC); what every timestamp in the store is.
using TimestampMs = std::int64_t;
TimestampMs now_ms();
/// `2026-11-21T08:42:19.123Z`.
std::string format_timestamp(TimestampMs ms);
std::optional<TimestampMs> parse_timestamp(std::string_view text);

/// Tokens and dollars spent, summed over a loop's iterations.
struct Usage {
  std::int64_t input_tokens = 0;
  std::int64_t output_tokens = 0;
  std::int64_t cache_read_tokens = 0;
  std::int64_t cache_write_tokens = 0;
  double cost_usd = 0;

  Usage& operator+=(const Usage& other);
};

/// One loop (DESIGN.md "Loop fields"). The store owns `version` (compare-and-set).
struct Loop {
  std::string id;
  LoopType type = LoopType::plan;
  std::string parent_id;       ///< empty for a plan
  std::string plan_id;         ///< the root plan of this loop's tree (itself for a plan)
  int index = 0;               ///< 1-based position among its parent's children (0 for a plan)
  std::string task;            ///< the user's request (plan) or the item's description
  std::string input_artifact;  ///< repo-relative path of the parent's artifact (empty: plan)
  std::vector<std::string> output_artifacts;  ///< repo-relative paths this loop writes
  std::string prompt_template;                ///< template name (plan|spec|phase|code) or a path
  std::string validation_command;  ///< code loops: the shell command; others: empty (format check)
  int max_iterations = 0;
  std::string worktree;  ///< absolute path of its git worktree (empty until made)
  std::string branch;    ///< its git branch
  int iteration = 0;     ///< iterations recorded so far
  LoopStatus status = LoopStatus::pending;
  std::string status_reason;  ///< why it is failed/blocked/stopped (shown to the user)
  EndReason end_reason = EndReason::none;  ///< the same for scripts (core/end_reason.hpp)
  std::string progress;       ///< accumulated feedback of earlier iterations (bounded)
  TreeMarks tree;             ///< the manager's marks (stored under "context")
  RunMarks run;               ///< the engine's marks (stored under "context")
  /// Keys under "context" this loopr does not know (a newer one wrote them): kept as they are,
  /// so reading and writing a record back never drops them.
  nlohmann::json unknown_marks = nlohmann::json::object();
  Usage usage;
  TimestampMs created_at = 0;
  TimestampMs updated_at = 0;
  std::uint64_t version = 0;  ///< bumped by the store on every write

  /// Changes `status` if the transition is legal; otherwise leaves it and returns the error.
  /// `end` is kept where the status holds one (holds_end_reason), else cleared.
  Result<void> transition_to(LoopStatus next, std::string reason = {},
                             EndReason end = EndReason::none);
};

/// The full record, for the store (every field).
nlohmann::json to_store_json(const Loop& loop);
Result<Loop> loop_from_store_json(const nlohmann::json& json);

/// INTERFACE.md's `--json` shape of a loop: exactly these fields, in this order.
/// loopr adds `end_reason` (null while the loop works; docs/architecture.md "End reasons").
inline constexpr const char* kApiLoopFields[] = {
    "id",         "type",         "status",        "parent_id", "iteration", "max_iterations",
    "cost_usd",   "input_tokens", "output_tokens", "artifacts", "worktree",  "branch",
    "created_at", "updated_at",   "end_reason"};

/// INTERFACE.md's `--json` shape of a loop (the fields of kApiLoopFields).
nlohmann::json to_api_json(const Loop& loop);

/// A person's decision at the plan gate (stored with the plan: store/task_store.hpp).
struct Approval {
  std::string loop_id;
  std::string decision;  ///< approve | reject | iterate
  std::string text;      ///< reject reason / iterate feedback
  TimestampMs at = 0;
};

}  // namespace loopr
