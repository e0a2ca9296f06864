// The events of the wire between the daemon and its clients, typed: one struct per event type,
// one codec that reads and writes exactly the JSON the store and `GET /v1/events` carry
// (src/daemon/API.md "Events"). A type this loopr does not know stays an `OtherEvent` with its
// data as it came, so nothing is lost and a newer daemon never breaks an older client.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <loopr/core/end_reason.hpp>
#include <loopr/core/event.hpp>
#include <loopr/core/iteration_outcome.hpp>
#include <loopr/core/loop.hpp>

namespace loopr::api {

struct LoopCreated {
  LoopType type = LoopType::plan;
  std::string parent_id;  ///< empty for a plan (then not in the JSON)
  std::string task;
  bool fix = false;      ///< an integration fix loop
  bool dry_run = false;  ///< a plan of `submit --dry-run`
};
struct StatusChanged {
  LoopStatus from = LoopStatus::pending;
  LoopStatus to = LoopStatus::pending;
  std::string reason;
  EndReason end_reason = EndReason::none;
};
struct IterationStarted {
  int n = 0;
};
struct ToolCalled {
  std::string tool;
  nlohmann::json input;
  int turn = 0;
};
struct ValidationFinished {
  int n = 0;
  bool passed = false;
  std::string summary;
  std::optional<int> exit_code;
  std::vector<std::string> jobs;
};
struct ExecutorRetry {
  int n = 0;
  std::string reason;
  std::vector<std::string> jobs;
};
struct CostEvent {
  int n = 0;
  double cost_usd = 0;
  std::int64_t input_tokens = 0;  ///< uncached input
  std::int64_t output_tokens = 0;
  double loop_cost_usd = 0;
  std::int64_t cache_read_tokens = 0;   ///< input read from the prompt cache
  std::int64_t cache_write_tokens = 0;  ///< input written to it
};
/// Which of a tree's caps was reached (`limit` on the wire: its to_string).
enum class CapKind { cost, runtime, input_tokens };
std::string_view to_string(CapKind kind);

/// A tree reached a cap with `limits.at_cost_limit: pause`: this loop paused after its current
/// model turn; `loopr resume PLAN --max-cost USD` (or `--max-runtime`) raises the cap.
struct CostLimitEvent {
  std::string plan_id;
  CapKind limit = CapKind::cost;
  double spent_usd = 0;
  double max_cost_usd = 0;
  std::int64_t input_tokens = 0;      ///< the tree's input so far, cached included
  std::int64_t max_input_tokens = 0;  ///< 0: no token cap
  std::string reason;                 ///< for a person, naming the resume that goes on
};
struct IterationFinished {
  int n = 0;
  IterationOutcome status = IterationOutcome::failed;
  std::string summary;
  std::int64_t duration_ms = 0;
};
struct LlmErrorEvent {
  std::string kind;
  bool retryable = false;
  int status = 0;
  std::string message;
  int consecutive = 0;
};
struct LlmRetry {
  int attempt = 0;
  std::int64_t wait_ms = 0;
  std::string kind;
  int status = 0;
  std::string message;
};
struct Merged {
  std::string into;
  std::string sha;
  std::string kind;
};
struct Rebased {
  std::string onto;
  std::string sha;
  std::string kind;
};
struct RebaseConflict {
  std::string onto;
  std::vector<std::string> paths;
};
struct MergeFailed {
  std::string into;
  std::string message;
};
struct RetryEvent {
  int attempt = 0;
  std::string archived_branch;
};
struct TreeComplete {};
struct ApprovalEvent {
  std::string decision;  ///< approve | reject | iterate
  std::string text;
};
struct DaemonStarted {
  int pid = 0;
};
struct DaemonStopping {
  int pid = 0;
  std::int64_t drain_ms = 0;  ///< how long the daemon lets running iterations finish
};
struct IntegrationCheckStarted {
  std::string sha;
  std::string command;
};
struct IntegrationCheck {
  std::string sha;
  bool passed = false;
  std::string command;
  std::optional<int> exit_code;
  std::string summary;
  std::int64_t duration_ms = 0;
  std::string log;
};
struct IntegrationFix {
  std::string loop_id;
};
struct Revalidated {
  bool passed = false;
  std::string summary;
};
/// A code loop's new worktree ran the config's `setup:` commands (`log`: in its log folder).
struct SetupFinished {
  bool passed = false;
  std::string summary;
  std::int64_t duration_ms = 0;
  std::string log;
};
/// A plan's baseline check (its tests before any code loop) ended; `reused`: the result of an
/// earlier check of the same commit and settings.
struct BaselineCheck {
  std::string sha;
  bool passed = false;
  std::string summary;
  std::int64_t duration_ms = 0;
  std::int64_t setup_ms = 0;
  std::string log;
  bool reused = false;
};
struct NoteShared {
  int n = 0;
  std::string text;
};
struct QuestionAsked {
  int n = 0;
  std::string question;
};
struct QuestionAnswered {
  std::string question;
  std::string answer;
};
struct ForecastMade {
  double cost_usd = 0, low = 0, high = 0;
  int loops = 0;
  std::string basis;
  double max_cost_usd = 0;
  bool over_limit = false;
  nlohmann::json rest = nlohmann::json::object();  ///< the forecast's other fields, as they came
};
/// loops.review's verdict on a code iteration whose tests passed (its cost is in `cost` too).
struct ReviewFinished {
  int n = 0;
  std::string verdict;  ///< pass | fail | error
  std::string summary;
  std::string feedback;
  std::string model;
  int attempts = 0;
  double cost_usd = 0;
  std::int64_t input_tokens = 0;
  std::int64_t output_tokens = 0;
};
struct GcDone {
  std::vector<std::string> removed;
  std::uint64_t bytes_freed = 0;
};
/// A connection to the daemon (its control socket or web UI) from a process in a loopr sandbox
/// (this repository's or another's) was refused (docs/security.md, S2.1).
struct PeerRefused {
  std::string listener;  ///< "control socket" | "web UI"
  int pid = 0;           ///< the peer's process as the daemon sees it (0: not found)
  std::string why;
};
/// `merge: pr`: `loopr/<plan>` pushed to the forge's remote and its pull request opened
/// (`created`) or found open.
struct PrPublished {
  int number = 0;
  std::string url;
  std::string sha;  ///< the commit pushed
  std::string remote;
  bool created = false;
};
/// `merge: pr`: the forge's checks of the PR's head commit ended: passed | failed | timeout.
struct CiChecked {
  std::string sha;
  std::string state;
  std::vector<std::string> failing;  ///< the failing checks' names
  std::string summary;
};
/// A fix loop made from the forge: failing checks (`source` ci) or review comments (review).
struct CiFix {
  std::string loop_id;
  std::string source;
  int count = 0;  ///< CI fix loops made for this PR so far (ci), or comments taken (review)
};
/// Pushing or the forge's API failed (`step`: push | open_pr | checks | comments); `retry` says
/// how (`loopr merge <plan>`). Never carries the token.
struct ForgeFailed {
  std::string step;
  int status = 0;  ///< the HTTP status (0: none: network, git)
  std::string message;
  std::string retry;
};
/// `merge: pr`: the pull request's state as the forge said it, when it changed (open | closed |
/// merged: the team merged or closed it on the forge).
struct PrState {
  int number = 0;
  std::string state;
};
/// A type this loopr does not know (or a newer shape): kept as it came.
struct OtherEvent {
  std::string type;
  nlohmann::json data = nlohmann::json::object();
};

using EventBody =
    std::variant<LoopCreated, StatusChanged, IterationStarted, ToolCalled, ValidationFinished,
                 ExecutorRetry, CostEvent, IterationFinished, LlmErrorEvent, LlmRetry, Merged,
                 Rebased, RebaseConflict, MergeFailed, RetryEvent, TreeComplete, ApprovalEvent,
                 BaselineCheck, DaemonStarted, DaemonStopping, IntegrationCheckStarted,
                 IntegrationCheck, IntegrationFix, Revalidated, SetupFinished, NoteShared,
                 QuestionAsked, QuestionAnswered, ForecastMade, GcDone, ReviewFinished,
                 CostLimitEvent, PeerRefused, PrPublished, CiChecked, CiFix, ForgeFailed,
                 PrState, OtherEvent>;

/// One event as a client sees it.
struct TypedEvent {
  std::uint64_t seq = 0;
  TimestampMs time = 0;
  std::string loop_id;  ///< empty for daemon-wide events
  EventBody body;
};

/// The wire name of a body's type (`status_changed`, …; an OtherEvent's own).
std::string type_name(const EventBody& body);

/// The body of `type` with `data`; a known type whose data does not read (a field of the wrong
/// type) is an OtherEvent, never an exception.
EventBody decode_body(const std::string& type, const nlohmann::json& data);
/// The data JSON of a body: exactly what the emitters write today.
nlohmann::json encode_body(const EventBody& body);

TypedEvent decode(const Event& event);
/// The store's event for `loop_id` (seq and time are the store's to set).
Event encode(const std::string& loop_id, const EventBody& body);

}  // namespace loopr::api
