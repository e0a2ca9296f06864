// The TaskStore: every loop, iteration record, event and approval of one repository, in one
// RocksDB at `.loopr/state/`. Writes that touch several keys are ONE atomic WriteBatch.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <loopr/core/event.hpp>
#include <loopr/core/iteration_outcome.hpp>
#include <loopr/core/loop.hpp>
#include <loopr/core/result.hpp>

namespace loopr {

/// A protected file an iteration changed (docs/security.md S1): its path, how (`modified`,
/// `deleted`, … the engine's Breach words) and as what (`harness` | `test`).
struct ProtectedChange {
  std::string path, change, role;
  bool operator==(const ProtectedChange&) const = default;
};

/// The reviewer's receipt for an iteration (`review:`): its verdict word (`pass` | `fail` |
/// `error` …), summary, model and spend.
struct ReviewReceipt {
  std::string verdict, summary, model;
  double cost_usd = 0;
  int attempts = 0;
  std::int64_t input_tokens = 0, output_tokens = 0;
  bool operator==(const ReviewReceipt&) const = default;
};

/// What an iteration's record keeps besides its figures, made by the engine where the iteration
/// ends and stored under `"details"` with the key names earlier loopr wrote (one codec:
/// store/records.cpp). What this loopr does not read is kept in `other` and written back.
struct IterationDetails {
  int turns = 0;  ///< model calls
  int tool_calls = 0;
  int end = 0;         ///< how the conversation ended (engine::Conversation::End)
  std::string commit;  ///< the checkpoint
  std::string validation_command;
  std::int64_t model_ms = 0, validation_ms = 0;
  std::int64_t state_ms = 0, checkpoint_ms = 0;  ///< the orchestration's parts (engine_bench)
  /// The same calls without prompt caching (judge and review as spent); absent in records made
  /// before prompt caching, which read as their cost.
  std::optional<double> uncached_cost_usd;
  bool timed_out = false;  ///< the validation command ran out of time
  std::string end_reason;  ///< the loop's EndReason word when this iteration ended it
  /// A subscription login's receipt: what the CLI reported, which nobody is billed per token.
  std::optional<double> notional_cost_usd;
  std::vector<ProtectedChange> protected_files;  ///< stored as "protected"
  std::optional<ReviewReceipt> review;
  std::vector<std::string> jobs;  ///< cluster job ids (executor: slurm)
  nlohmann::json other = nlohmann::json::object();

  /// The cost without caching: `uncached_cost_usd`, else `cost` (a record from before it).
  double uncached_or(double cost) const { return uncached_cost_usd.value_or(cost); }
};
nlohmann::json to_json(const IterationDetails& details);
/// Never fails: a field of another type reads as its default, and is kept in `other` as it was.
IterationDetails iteration_details_from_json(const nlohmann::json& json);

/// What one iteration of a loop did (DESIGN.md "One iteration", step 6).
struct IterationRecord {
  std::string loop_id;
  int n = 0;                     ///< 1-based iteration number
  IterationOutcome status = IterationOutcome::failed;  ///< what the iteration came to
  std::optional<int> exit_code;  ///< of the validation command (code loops)
  Usage usage;
  std::int64_t duration_ms = 0;
  std::string summary;         ///< one line: what happened
  std::string output_excerpt;  ///< tail of the validation output / messages
  TimestampMs started_at = 0;
  TimestampMs finished_at = 0;
  IterationDetails details;
};
nlohmann::json to_json(const IterationRecord& record);
Result<IterationRecord> iteration_from_json(const nlohmann::json& json);

/// A user's decision at the plan gate: Approval (core/loop_marks.hpp).
nlohmann::json to_json(const Approval& approval);

/// Everything one atomic write does. Loops in `updates` must carry the version they were read
/// at (compare-and-set); `creates` must not exist yet. Events get their `seq` from the store.
struct WriteSet {
  std::vector<Loop> creates;
  std::vector<Loop> updates;
  std::vector<IterationRecord> iterations;
  std::vector<Event> events;
  std::vector<Approval> approvals;
  std::vector<std::pair<std::string, std::string>> meta;
  /// false: no fdatasync for this write (still crash-safe for a process crash, through the WAL;
  /// a power cut may lose it). For high-rate, low-value writes such as `tool_called` events.
  bool durable = true;
  /// false: the updated loops keep their `updated_at` (housekeeping that is not the loop's own
  /// doing, such as `loopr gc` clearing a removed worktree's path: "when did this loop last
  /// change" stays the loop's answer for stats, the forecast and gc's own age checks).
  bool touch = true;
};

/// What an applied WriteSet produced: the stored loops (new versions) and the numbered events.
struct WriteResult {
  std::vector<Loop> loops;  ///< creates then updates, as stored
  std::vector<Event> events;
};

struct StoreOptions {
  bool sync =
      true;  ///< fdatasync every write (durable across a machine crash, not only a process crash)
};

/// What a listing shows of a loop: every field but `progress`, the run marks and unknown marks
/// (the tree marks are kept: a plan's row shows its tree's verdict from them). What the store's
/// summary index holds, and list_loop_summaries() returns.
Loop loop_summary(const Loop& loop);

class TaskStore {
 public:
  /// 2: the summary index (every loop's loop_summary(), written in the same atomic write as the
  /// loop). A loopr that reads schema 1 only refuses the store (it would write loops without
  /// their summaries).
  static constexpr int kSchemaVersion = 2;

  /// Opens (creating if needed) the store in `dir`. Refuses a store written by a newer schema;
  /// a store of schema 1 gets its summary index at this open (every record decoded once).
  static Result<std::unique_ptr<TaskStore>> open(const std::string& dir, StoreOptions options = {});
  /// An empty store in this process's memory, gone with it: the same records, checks and
  /// numbering as open()'s over ordered maps instead of RocksDB (src/store/tables.hpp), for the
  /// tests of the engine and the manager; the database's own tests open a real one.
  static std::unique_ptr<TaskStore> in_memory();
  ~TaskStore();
  TaskStore(const TaskStore&) = delete;
  TaskStore& operator=(const TaskStore&) = delete;

  /// After a write failed for want of space RocksDB takes no writes (a background error, the
  /// database read-only, nothing stored lost) until it recovers: by itself once its file
  /// manager sees free space, or when asked here (DB::Resume). ok when it takes writes.
  Result<void> resume_writes();

  // -- loops
  Result<Loop> get_loop(const std::string& id) const;
  Result<std::vector<Loop>> list_loops() const;
  /// Direct children (specs of a plan, phases of a spec, the code loop of a phase), by index.
  Result<std::vector<Loop>> children(const std::string& parent_id) const;
  Result<std::vector<Loop>> loops_with_status(LoopStatus status) const;
  /// Every loop of a plan's tree (the plan included).
  Result<std::vector<Loop>> loops_of_plan(const std::string& plan_id) const;
  /// Every loop's loop_summary(), in id order: what a listing shows (`loopr list`, GET /v1/loops
  /// with each plan's tree verdict) and what the daemon's start classifies. Served from memory:
  /// the store is the only writer of its database (RocksDB's lock), so it keeps a copy of the
  /// summary index, read at the first call (summaries only: ~10 µs a loop, a third of a record's
  /// decode) and updated by every write after it (~1.7 KiB per loop in memory).
  Result<std::vector<Loop>> list_loop_summaries() const;
  /// The summaries `keep` says yes to (id order): only those are copied, so a filtered listing
  /// of a large store costs a pass over it, not a copy of it. `keep` runs under the summaries'
  /// read lock: it must not call back into the store.
  Result<std::vector<Loop>> list_loop_summaries(const std::function<bool(const Loop&)>& keep) const;
  /// How many loops have each status (statuses with none are left out). From the summaries once
  /// they are kept, else reading only each summary's status (GET /v1/health with 10,000 loops).
  Result<std::map<LoopStatus, std::size_t>> count_by_status() const;

  // -- iterations
  Result<std::vector<IterationRecord>> iterations(const std::string& loop_id) const;
  Result<IterationRecord> get_iteration(const std::string& loop_id, int n) const;

  // -- events
  /// Events with seq > `after`, oldest first, at most `limit`.
  Result<std::vector<Event>> events_since(std::uint64_t after, std::size_t limit = 10000) const;
  std::uint64_t last_event_seq() const;

  // -- approvals
  Result<std::optional<Approval>> get_approval(const std::string& loop_id) const;

  // -- meta
  /// The next plan number of this repository (1, 2, …); durable before it is returned.
  Result<int> next_plan_number();
  Result<std::optional<std::string>> get_meta(const std::string& key) const;
  Result<void> put_meta(const std::string& key, const std::string& value);
  /// Every meta key starting with `prefix` and its value, in key order (the notes of a plan).
  Result<std::vector<std::pair<std::string, std::string>>> meta_with_prefix(
      const std::string& prefix) const;

  /// The one writer (besides the meta keys and the plan counter): every change of loops,
  /// iterations, events and approvals is one WriteSet, applied atomically. The single-purpose
  /// writes of tests and benchmarks are loopr/store/store_writes.hpp, over this.
  Result<WriteResult> apply(WriteSet set);

 private:
  struct Impl;
  explicit TaskStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace loopr
