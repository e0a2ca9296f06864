// The TaskStore over its tables (store/tables.hpp: RocksDB, or memory for tests). One writer at
// a time (a mutex serialises compare-and-set and the event counter); reads go straight to the
// tables, which are thread-safe.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <mutex>

#include <loopr/core/ids.hpp>
#include <loopr/core/text.hpp>
#include <loopr/store/record_probe.hpp>
#include <loopr/store/task_store.hpp>

#include "store/loop_summaries.hpp"
#include "store/tables.hpp"

namespace loopr {
namespace {

using store_detail::Family;
using store_detail::kApprovals;
using store_detail::kEvents;
using store_detail::kIterations;
using store_detail::kLoops;
using store_detail::kMeta;
using store_detail::kSummaries;
using store_detail::Put;

constexpr const char* kSchemaKey = "schema_version";
constexpr const char* kEventSeqKey = "event_seq";
constexpr const char* kPlanCounterKey = "plan_counter";

std::string iteration_key(const std::string& loop_id, int n) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08d", n);
  return loop_id + "/" + buf;
}

std::string event_key(std::uint64_t seq) {
  std::string k(8, '\0');
  for (int i = 7; i >= 0; --i) {
    k[static_cast<std::size_t>(i)] = static_cast<char>(seq & 0xff);
    seq >>= 8;
  }
  return k;
}

std::uint64_t event_seq_of(std::string_view key) {
  std::uint64_t seq = 0;
  for (std::size_t i = 0; i < 8 && i < key.size(); ++i)
    seq = (seq << 8) | static_cast<unsigned char>(key[i]);
  return seq;
}

}  // namespace

struct TaskStore::Impl {
  const TaskStore* self = nullptr;  // for the record probe (record_probe.hpp)
  std::unique_ptr<store_detail::Tables> tables;
  bool sync = true;  // StoreOptions::sync
  mutable std::mutex write_mutex;
  std::uint64_t event_seq = 0;  // guarded by write_mutex

  // list_loop_summaries()'s copy of the summary index, from the first call on.
  mutable store_detail::SummaryCopy summaries;

  // Reads the schema and the event counter: a new store gets schema 2, one of an earlier loopr
  // (schema 1) its summary index; one of a newer loopr is refused.
  Result<void> start(const std::string& where) {
    LOOPR_ASSIGN(auto schema, tables->get(kMeta, kSchemaKey));
    const int version = schema.has_value() ? std::atoi(schema->c_str()) : 0;
    if (version > kSchemaVersion)
      return make_error(ErrorCode::unsupported,
                        "the store " + where + " was written by a newer loopr (schema " +
                            std::to_string(version) + ", this loopr reads up to " +
                            std::to_string(kSchemaVersion) + "); upgrade loopr");
    // A new store (no loops: its index is complete) or one of an earlier loopr (schema 1).
    if (version < kSchemaVersion) LOOPR_TRY(build_summary_index());
    LOOPR_ASSIGN(auto seq, tables->get(kMeta, kEventSeqKey));
    if (seq.has_value()) event_seq = std::stoull(*seq);
    return ok();
  }

  // Writes the summary index of every stored loop and schema 2, in one synced write: a store
  // written before the index existed (schema 1), at its first open by this loopr.
  Result<void> build_summary_index() {
    std::vector<Put> puts;
    std::optional<Error> err;
    LOOPR_TRY(scan(kLoops, "", [&](std::string_view k, std::string_view v) {
      auto loop = decode_loop(v);
      if (!loop) {
        err =
            make_error(ErrorCode::io, "the loop record " + std::string(k) +
                                          " in the store cannot be read: " + loop.error().message);
        return false;
      }
      puts.push_back({kSummaries, std::string(k), store_detail::summary_text(loop_summary(*loop))});
      return true;
    }));
    if (err) return *err;
    const std::size_t n = puts.size();
    puts.push_back({kMeta, kSchemaKey, std::to_string(TaskStore::kSchemaVersion)});
    if (auto w = tables->write(std::move(puts), true); !w)
      return make_error(ErrorCode::io, "writing the store's summary index: " + w.error().message);
    if (n > 0)
      spdlog::info("store: summary index of {} loops made (a store of an earlier loopr)", n);
    return ok();
  }

  // Calls fn(key, value) for every key with `prefix`; stops when fn returns false.
  Result<void> scan(Family f, const std::string& prefix, const store_detail::Visit& fn) const {
    return tables->scan(f, prefix, prefix, fn);
  }

  Result<Loop> decode_loop(std::string_view value) const {
    auto json = nlohmann::json::parse(value.begin(), value.end(), nullptr, false);
    if (json.is_discarded())
      return make_error(ErrorCode::io, "a loop record in the store is not JSON");
    return loop_from_store_json(json);
  }

  Result<std::vector<Loop>> scan_loops(const std::string& prefix,
                                       const std::function<bool(const Loop&)>& keep) const {
    std::vector<Loop> out;
    std::optional<Error> err;
    LOOPR_TRY(scan(kLoops, prefix, [&](std::string_view k, std::string_view v) {
      auto loop = decode_loop(v);
      store_detail::note_record_read(*self, k);
      if (!loop) {
        err = loop.take_error();
        return false;
      }
      if (keep(*loop)) out.push_back(std::move(*loop));
      return true;
    }));
    if (err) return *err;
    return out;
  }
};

TaskStore::TaskStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) { impl_->self = this; }
TaskStore::~TaskStore() { unwatch_record(*this); }

Result<std::unique_ptr<TaskStore>> TaskStore::open(const std::string& dir, StoreOptions options) {
  auto impl = std::make_unique<Impl>();
  LOOPR_ASSIGN(impl->tables, store_detail::open_rocksdb_tables(dir));
  impl->sync = options.sync;
  LOOPR_TRY(impl->start(dir));
  return std::unique_ptr<TaskStore>(new TaskStore(std::move(impl)));
}

std::unique_ptr<TaskStore> TaskStore::in_memory() {
  auto impl = std::make_unique<Impl>();
  impl->tables = store_detail::memory_tables();
  auto started = impl->start("in memory");
  if (!started) throw std::logic_error("an empty store in memory: " + started.error().message);
  return std::unique_ptr<TaskStore>(new TaskStore(std::move(impl)));
}

Result<WriteResult> TaskStore::apply(WriteSet set) {
  std::lock_guard lock(impl_->write_mutex);
  std::vector<Put> puts;
  WriteResult result;
  TimestampMs now = now_ms();

  std::vector<Loop> summaries;  // of the loops written, for the index and the copy in memory
  auto put_loop = [&](const Loop& loop) {
    puts.push_back({kLoops, loop.id, json_text(to_store_json(loop))});
    summaries.push_back(loop_summary(loop));
    puts.push_back({kSummaries, loop.id, store_detail::summary_text(summaries.back())});
    result.loops.push_back(loop);
  };
  for (Loop& loop : set.creates) {
    auto existing = impl_->tables->get(kLoops, loop.id);
    if (!existing) return existing.take_error();
    if (existing->has_value())
      return make_error(ErrorCode::already_exists, "loop " + loop.id + " already exists");
    if (loop.created_at == 0) loop.created_at = now;
    loop.updated_at = now;
    loop.version = 1;
    put_loop(loop);
  }
  for (Loop& loop : set.updates) {
    auto existing = impl_->tables->get(kLoops, loop.id);
    if (!existing) return existing.take_error();
    if (!existing->has_value()) return make_error(ErrorCode::not_found, "no loop " + loop.id);
    LOOPR_ASSIGN(Loop stored, impl_->decode_loop(**existing));
    if (stored.version != loop.version)
      return make_error(ErrorCode::conflict, "loop " + loop.id + " changed meanwhile (version " +
                                                 std::to_string(stored.version) +
                                                 ", update was based on " +
                                                 std::to_string(loop.version) + ")");
    loop.version = stored.version + 1;
    if (set.touch) loop.updated_at = now;
    put_loop(loop);
  }
  for (const IterationRecord& rec : set.iterations)
    puts.push_back({kIterations, iteration_key(rec.loop_id, rec.n), json_text(to_json(rec))});
  for (const Approval& a : set.approvals)
    puts.push_back({kApprovals, a.loop_id, json_text(to_json(a))});
  for (const auto& [k, v] : set.meta) puts.push_back({kMeta, k, v});

  std::uint64_t seq = impl_->event_seq;
  for (Event& e : set.events) {
    e.seq = ++seq;
    if (e.time == 0) e.time = now;
    puts.push_back({kEvents, event_key(e.seq), json_text(to_json(e))});
    result.events.push_back(e);
  }
  if (!set.events.empty()) puts.push_back({kMeta, kEventSeqKey, std::to_string(seq)});

  LOOPR_TRY(impl_->tables->write(std::move(puts), impl_->sync && set.durable));
  impl_->event_seq = seq;
  impl_->summaries.keep(summaries);
  for (const Loop& loop : summaries) store_detail::note_record_write(*this, loop.id);
  return result;
}

Result<void> TaskStore::resume_writes() { return impl_->tables->resume(); }

Result<Loop> TaskStore::get_loop(const std::string& id) const {
  auto value = impl_->tables->get(kLoops, id);
  if (!value) return value.take_error();
  if (!value->has_value()) return make_error(ErrorCode::not_found, "no loop " + id);
  store_detail::note_record_read(*this, id);
  return impl_->decode_loop(**value);
}

Result<std::vector<Loop>> TaskStore::list_loops() const {
  return impl_->scan_loops("", [](const Loop&) { return true; });
}

Result<std::vector<Loop>> TaskStore::list_loop_summaries() const {
  if (auto copy = impl_->summaries.sorted(nullptr)) {
    store_detail::note_summaries_listed(*this, *copy);
    return std::move(*copy);
  }
  // First call: one scan of the index with writes held off, so the copy starts exactly at the
  // stored state. count_by_status() and other readers meanwhile read the store themselves
  // instead of waiting for the scan.
  std::lock_guard write(impl_->write_mutex);
  // Another first caller made them while this one waited.
  if (auto copy = impl_->summaries.sorted(nullptr)) return std::move(*copy);
  std::map<std::string, Loop, std::less<>> made;
  std::optional<Error> err;
  LOOPR_TRY(impl_->scan(kSummaries, "", [&](std::string_view k, std::string_view v) {
    auto summary = store_detail::summary_from_text(v);
    if (!summary) {
      err =
          make_error(ErrorCode::io, "the summary of loop " + std::string(k) +
                                        " in the store cannot be read: " + summary.error().message);
      return false;
    }
    made.emplace_hint(made.end(), std::string(k), std::move(*summary));  // keys come in id order
    return true;
  }));
  if (err) return *err;
  impl_->summaries.install(std::move(made));
  auto copy = impl_->summaries.sorted(nullptr);
  store_detail::note_summaries_listed(*this, *copy);
  return std::move(*copy);
}

Result<std::vector<Loop>> TaskStore::list_loop_summaries(
    const std::function<bool(const Loop&)>& keep) const {
  if (auto copy = impl_->summaries.sorted(&keep)) {
    store_detail::note_summaries_listed(*this, *copy);
    return std::move(*copy);
  }
  // The first call makes them (and counts its copy of all as listed: it is one).
  LOOPR_ASSIGN(std::vector<Loop> all, list_loop_summaries());
  std::erase_if(all, [&](const Loop& l) { return !keep(l); });
  return all;
}

Result<std::vector<Loop>> TaskStore::children(const std::string& parent_id) const {
  // Children share the parent's id as a prefix (`001-` for specs of 001) or are `code-<phase>`.
  auto type = type_of_id(parent_id);
  if (type == LoopType::phase) {
    auto code = get_loop(child_id(parent_id, LoopType::code, 1));
    if (code) return std::vector<Loop>{*code};
    if (code.error().code == ErrorCode::not_found) return std::vector<Loop>{};
    return code.take_error();
  }
  auto result =
      impl_->scan_loops(parent_id + "-", [&](const Loop& l) { return l.parent_id == parent_id; });
  if (!result) return result;
  if (type == LoopType::plan) {  // and its integration fix loops, `fix-<plan>-NNN`
    LOOPR_ASSIGN(std::vector<Loop> fixes,
                 impl_->scan_loops("fix-" + parent_id + "-",
                                   [&](const Loop& l) { return l.parent_id == parent_id; }));
    for (auto& l : fixes) result->push_back(std::move(l));
  }
  std::sort(result->begin(), result->end(),
            [](const Loop& a, const Loop& b) { return a.index < b.index; });
  return result;
}

Result<std::vector<Loop>> TaskStore::loops_with_status(LoopStatus status) const {
  return impl_->scan_loops("", [status](const Loop& l) { return l.status == status; });
}

Result<std::vector<Loop>> TaskStore::loops_of_plan(const std::string& plan_id) const {
  // A tree's ids are the plan's, `<plan>-…` (specs, phases), `code-<plan>-…` and `fix-<plan>-…`
  // (ids.hpp): four key ranges, not a decode of every loop in the store (the manager asks at
  // every completion). Same order as a full scan: "001" < "001-…" < "code-…" < "fix-…".
  auto keep = [&](const Loop& l) { return l.plan_id == plan_id || l.id == plan_id; };
  std::vector<Loop> out;
  auto plan = get_loop(plan_id);
  if (plan && keep(*plan))
    out.push_back(std::move(*plan));
  else if (!plan && plan.error().code != ErrorCode::not_found)
    return plan.take_error();
  for (const std::string& prefix : {plan_id + "-", "code-" + plan_id + "-", "fix-" + plan_id + "-"}) {
    LOOPR_ASSIGN(std::vector<Loop> part, impl_->scan_loops(prefix, keep));
    for (auto& l : part) out.push_back(std::move(l));
  }
  return out;
}

Result<std::map<LoopStatus, std::size_t>> TaskStore::count_by_status() const {
  if (auto counts = impl_->summaries.count_by_status()) return std::move(*counts);
  // Before the first listing made the copy: each summary's status, read without a JSON parser.
  std::map<LoopStatus, std::size_t> counts;
  std::optional<Error> err;
  LOOPR_TRY(impl_->scan(kSummaries, "", [&](std::string_view k, std::string_view v) {
    auto text = store_detail::top_level_status(v);
    auto status = text ? parse_loop_status(*text) : std::nullopt;
    if (!status) {
      err = make_error(ErrorCode::io, "the summary of loop " + std::string(k) +
                                          " in the store has no valid status");
      return false;
    }
    ++counts[*status];
    return true;
  }));
  if (err) return *err;
  return counts;
}

Result<std::vector<IterationRecord>> TaskStore::iterations(const std::string& loop_id) const {
  std::vector<IterationRecord> out;
  std::optional<Error> err;
  LOOPR_TRY(
      impl_->scan(kIterations, loop_id + "/", [&](std::string_view, std::string_view v) {
        auto json = nlohmann::json::parse(v.begin(), v.end(), nullptr, false);
        auto rec = json.is_discarded() ? Result<IterationRecord>(make_error(
                                             ErrorCode::io, "an iteration record is not JSON"))
                                       : iteration_from_json(json);
        if (!rec) {
          err = rec.take_error();
          return false;
        }
        out.push_back(std::move(*rec));
        return true;
      }));
  if (err) return *err;
  return out;
}

Result<IterationRecord> TaskStore::get_iteration(const std::string& loop_id, int n) const {
  auto value = impl_->tables->get(kIterations, iteration_key(loop_id, n));
  if (!value) return value.take_error();
  if (!value->has_value())
    return make_error(ErrorCode::not_found,
                      "loop " + loop_id + " has no iteration " + std::to_string(n));
  auto json = nlohmann::json::parse(**value, nullptr, false);
  if (json.is_discarded()) return make_error(ErrorCode::io, "an iteration record is not JSON");
  return iteration_from_json(json);
}

Result<std::vector<Event>> TaskStore::events_since(std::uint64_t after, std::size_t limit) const {
  std::vector<Event> out;
  if (limit == 0) return out;
  std::optional<Error> err;
  LOOPR_TRY(impl_->tables->scan(
      kEvents, event_key(after + 1), "", [&](std::string_view k, std::string_view v) {
        auto json = nlohmann::json::parse(v.begin(), v.end(), nullptr, false);
        auto e = json.is_discarded()
                     ? Result<Event>(make_error(ErrorCode::io, "an event record is not JSON"))
                     : event_from_json(json);
        if (!e) {
          err = e.take_error();
          return false;
        }
        e->seq = event_seq_of(k);
        out.push_back(std::move(*e));
        return out.size() < limit;
      }));
  if (err) return *err;
  return out;
}

std::uint64_t TaskStore::last_event_seq() const {
  std::lock_guard lock(impl_->write_mutex);
  return impl_->event_seq;
}

Result<std::optional<Approval>> TaskStore::get_approval(const std::string& loop_id) const {
  auto value = impl_->tables->get(kApprovals, loop_id);
  if (!value) return value.take_error();
  if (!value->has_value()) return std::optional<Approval>();
  auto j = nlohmann::json::parse(**value, nullptr, false);
  if (j.is_discarded()) return make_error(ErrorCode::io, "an approval record is not JSON");
  Approval a;
  a.loop_id = j.value("loop_id", loop_id);
  a.decision = j.value("decision", "");
  a.text = j.value("text", "");
  a.at = j.value("at", TimestampMs{0});
  return std::optional<Approval>(std::move(a));
}

Result<int> TaskStore::next_plan_number() {
  std::lock_guard lock(impl_->write_mutex);
  auto current = impl_->tables->get(kMeta, kPlanCounterKey);
  if (!current) return current.take_error();
  int next = current->has_value() ? std::atoi((*current)->c_str()) + 1 : 1;
  // A plan number handed out is never handed out again, even after a power cut: synced.
  std::vector<Put> puts{{kMeta, kPlanCounterKey, std::to_string(next)}};
  if (auto w = impl_->tables->write(std::move(puts), true); !w)
    return make_error(ErrorCode::io, "writing the plan counter: " + w.error().message);
  return next;
}

Result<std::optional<std::string>> TaskStore::get_meta(const std::string& key) const {
  return impl_->tables->get(kMeta, key);
}

Result<std::vector<std::pair<std::string, std::string>>> TaskStore::meta_with_prefix(
    const std::string& prefix) const {
  std::vector<std::pair<std::string, std::string>> out;
  LOOPR_TRY(impl_->scan(kMeta, prefix, [&](std::string_view k, std::string_view v) {
    out.emplace_back(k, v);
    return true;
  }));
  return out;
}

Result<void> TaskStore::put_meta(const std::string& key, const std::string& value) {
  WriteSet set;
  set.meta.emplace_back(key, value);
  LOOPR_TRY(apply(std::move(set)));
  return ok();
}

}  // namespace loopr
