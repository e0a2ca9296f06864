// RocksDB-backed TaskStore. One writer at a time (a mutex serialises compare-and-set and the
// event counter); reads go straight to RocksDB, which is thread-safe.
#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/options.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <mutex>

#include <loopr/core/ids.hpp>
#include <loopr/core/text.hpp>
#include <loopr/store/record_probe.hpp>
#include <loopr/store/task_store.hpp>

#include "store/loop_summaries.hpp"

namespace loopr {
namespace {

constexpr const char* kFamilies[] = {"loops", "iterations", "events", "approvals", "meta"};
// The default column family holds the summary index (schema 2): each loop's loop_summary() under
// its id, written in the same WriteBatch as the loop's record. (Not a family of its own: a loopr
// that reads schema 1 only would then fail in RocksDB's open instead of saying "upgrade loopr".)
// RocksDB's memory bounds (TaskStore::open): all memtables together, and the shared block cache.
constexpr std::size_t kMemtableBytes = 4u << 20;
constexpr std::size_t kBlockCacheBytes = 8u << 20;
enum Family { kSummaries = 0, kLoops, kIterations, kEvents, kApprovals, kMeta };

constexpr const char* kSchemaKey = "schema_version";
constexpr const char* kEventSeqKey = "event_seq";
constexpr const char* kPlanCounterKey = "plan_counter";

Error io_error(const rocksdb::Status& s, const std::string& what) {
  return make_error(ErrorCode::io, what + ": " + s.ToString());
}

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

std::uint64_t event_seq_of(const rocksdb::Slice& key) {
  std::uint64_t seq = 0;
  for (std::size_t i = 0; i < 8 && i < key.size(); ++i)
    seq = (seq << 8) | static_cast<unsigned char>(key.data()[i]);
  return seq;
}

// RocksDB's own log goes to loopr's log (warnings and errors), not to a LOG file in the store.
// That file shares the disk with everything else, and this RocksDB (7.8, built with assertions)
// aborts the process on the write after one that failed: a full disk would end the daemon at
// RocksDB's next log line (its background error, or closing the store).
class StoreLog : public rocksdb::Logger {
 public:
  StoreLog() : rocksdb::Logger(rocksdb::InfoLogLevel::WARN_LEVEL) {}
  using rocksdb::Logger::Logv;
  void Logv(const char* format, va_list ap) override {
    Logv(rocksdb::InfoLogLevel::INFO_LEVEL, format, ap);
  }
  void Logv(const rocksdb::InfoLogLevel level, const char* format, va_list ap) override {
    if (level < GetInfoLogLevel()) return;
    char buf[1024];
    std::vsnprintf(buf, sizeof buf, format, ap);
    if (level >= rocksdb::InfoLogLevel::ERROR_LEVEL)
      spdlog::error("store (RocksDB): {}", buf);
    else
      spdlog::warn("store (RocksDB): {}", buf);
  }
};

}  // namespace

struct TaskStore::Impl {
  const TaskStore* self = nullptr;  // for the record probe (record_probe.hpp)
  std::unique_ptr<rocksdb::DB> db;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::WriteOptions write_options;
  mutable std::mutex write_mutex;
  std::uint64_t event_seq = 0;  // guarded by write_mutex

  // list_loop_summaries()'s copy of the summary index, from the first call on.
  mutable store_detail::SummaryCopy summaries;

  // Writes the summary index of every stored loop and schema 2, in one synced batch: a store
  // written before the index existed (schema 1), at its first open by this loopr.
  Result<void> build_summary_index() {
    rocksdb::WriteBatch batch;
    std::size_t n = 0;
    std::optional<Error> err;
    LOOPR_TRY(scan(kLoops, "", [&](const rocksdb::Slice& k, const rocksdb::Slice& v) {
      auto loop = decode_loop(v);
      if (!loop) {
        err =
            make_error(ErrorCode::io, "the loop record " + k.ToString() +
                                          " in the store cannot be read: " + loop.error().message);
        return false;
      }
      batch.Put(cf(kSummaries), k, store_detail::summary_text(loop_summary(*loop)));
      ++n;
      return true;
    }));
    if (err) return *err;
    batch.Put(cf(kMeta), kSchemaKey, std::to_string(TaskStore::kSchemaVersion));
    rocksdb::WriteOptions wo;
    wo.sync = true;
    rocksdb::Status s = db->Write(wo, &batch);
    if (!s.ok()) return io_error(s, "writing the store's summary index");
    if (n > 0)
      spdlog::info("store: summary index of {} loops made (a store of an earlier loopr)", n);
    return ok();
  }

  ~Impl() {
    // Large memtables go to table files now, so the next open reads those instead of replaying
    // the write-ahead log (10,000 loops: ~0.15 s of the daemon's start); small ones replay in a
    // few ms. Not after a failed write: this RocksDB aborts on writing again (see StoreLog); the
    // log keeps it all.
    std::uint64_t errors = 0, memtables = 0;
    if (db && handles.size() == std::size(kFamilies) + 1 &&
        db->GetIntProperty("rocksdb.background-errors", &errors) && errors == 0 &&
        db->GetAggregatedIntProperty("rocksdb.cur-size-all-mem-tables", &memtables) &&
        memtables > (4u << 20)) {
      rocksdb::Status s = db->Flush(rocksdb::FlushOptions(), handles);
      if (!s.ok()) spdlog::warn("store: writing its memtables at close: {}", s.ToString());
    }
    for (auto* h : handles)
      if (db && h) db->DestroyColumnFamilyHandle(h);
    if (db) db->Close();
  }

  rocksdb::ColumnFamilyHandle* cf(Family f) const { return handles[static_cast<std::size_t>(f)]; }

  Result<std::optional<std::string>> get(Family f, const std::string& key) const {
    std::string value;
    rocksdb::Status s = db->Get(rocksdb::ReadOptions(), cf(f), key, &value);
    if (s.IsNotFound()) return std::optional<std::string>();
    if (!s.ok()) return io_error(s, "reading the store");
    return std::optional<std::string>(std::move(value));
  }

  // Calls fn(key, value) for every key with `prefix`; stops when fn returns false.
  template <typename Fn>
  Result<void> scan(Family f, const std::string& prefix, Fn&& fn) const {
    std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions(), cf(f)));
    for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
      if (!fn(it->key(), it->value())) break;
    }
    if (!it->status().ok()) return io_error(it->status(), "scanning the store");
    return ok();
  }

  Result<Loop> decode_loop(const rocksdb::Slice& value) const {
    auto json = nlohmann::json::parse(value.data(), value.data() + value.size(), nullptr, false);
    if (json.is_discarded())
      return make_error(ErrorCode::io, "a loop record in the store is not JSON");
    return loop_from_store_json(json);
  }

  Result<std::vector<Loop>> scan_loops(const std::string& prefix,
                                       const std::function<bool(const Loop&)>& keep) const {
    std::vector<Loop> out;
    std::optional<Error> err;
    LOOPR_TRY(scan(kLoops, prefix, [&](const rocksdb::Slice& k, const rocksdb::Slice& v) {
      auto loop = decode_loop(v);
      store_detail::note_record_read(*self, std::string_view(k.data(), k.size()));
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
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    return make_error(ErrorCode::io, "cannot create the store folder " + dir + ": " + ec.message());

  rocksdb::DBOptions db_options;
  db_options.create_if_missing = true;
  db_options.create_missing_column_families = true;
  db_options.keep_log_file_num = 3;
  db_options.max_manifest_file_size = 8 << 20;
  db_options.info_log = std::make_shared<StoreLog>();
  // A daemon runs for months, so what RocksDB holds in memory is bounded, not left at its
  // defaults: 64 MiB of memtable per family (6 families, 2 memtables each) before a flush, and a
  // block cache per family. All memtables together stay under db_write_buffer_size (the largest
  // is flushed when they reach it) and one block cache serves every family. The write-ahead log
  // is preallocated at 1.1 × write_buffer_size: 70 MiB on disk for an empty store by default.
  db_options.db_write_buffer_size = kMemtableBytes;
  // A log file is deleted only once every family's part of it is flushed: without this bound a
  // family written rarely (the summaries, the meta) kept the first log, and every later one,
  // alive (24 MiB of events left 24 MiB of logs). Past it RocksDB flushes the families that
  // hold the oldest log.
  db_options.max_total_wal_size = 2 * kMemtableBytes;
  rocksdb::ColumnFamilyOptions family_options;
  family_options.write_buffer_size = kMemtableBytes / 2;
  rocksdb::BlockBasedTableOptions table;
  table.block_cache = rocksdb::NewLRUCache(kBlockCacheBytes);
  family_options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  std::vector<rocksdb::ColumnFamilyDescriptor> families;
  families.emplace_back(rocksdb::kDefaultColumnFamilyName, family_options);
  for (const char* name : kFamilies) families.emplace_back(name, family_options);

  auto impl = std::make_unique<Impl>();
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(db_options, dir, families, &impl->handles, &raw);
  if (!s.ok()) {
    if (s.IsIOError() && s.ToString().find("lock") != std::string::npos)
      return make_error(
          ErrorCode::io,
          "the store " + dir + " is in use by another process (is a loopr daemon running?)");
    return io_error(s, "cannot open the store " + dir);
  }
  impl->db.reset(raw);
  impl->write_options.sync = options.sync;

  auto schema = impl->get(kMeta, kSchemaKey);
  if (!schema) return schema.take_error();
  const int version = schema->has_value() ? std::atoi((*schema)->c_str()) : 0;
  if (version > kSchemaVersion)
    return make_error(ErrorCode::unsupported,
                      "the store " + dir + " was written by a newer loopr (schema " +
                          std::to_string(version) + ", this loopr reads up to " +
                          std::to_string(kSchemaVersion) + "); upgrade loopr");
  // A new store (no loops: its index is complete) or one of an earlier loopr (schema 1).
  if (version < kSchemaVersion) LOOPR_TRY(impl->build_summary_index());
  auto seq = impl->get(kMeta, kEventSeqKey);
  if (!seq) return seq.take_error();
  if (seq->has_value()) impl->event_seq = std::stoull(**seq);
  return std::unique_ptr<TaskStore>(new TaskStore(std::move(impl)));
}

Result<WriteResult> TaskStore::apply(WriteSet set) {
  std::lock_guard lock(impl_->write_mutex);
  rocksdb::WriteBatch batch;
  WriteResult result;
  TimestampMs now = now_ms();

  std::vector<Loop> summaries;  // of the loops written, for the index and the copy in memory
  auto put_loop = [&](const Loop& loop) {
    batch.Put(impl_->cf(kLoops), loop.id, json_text(to_store_json(loop)));
    summaries.push_back(loop_summary(loop));
    batch.Put(impl_->cf(kSummaries), loop.id, store_detail::summary_text(summaries.back()));
    result.loops.push_back(loop);
  };
  for (Loop& loop : set.creates) {
    auto existing = impl_->get(kLoops, loop.id);
    if (!existing) return existing.take_error();
    if (existing->has_value())
      return make_error(ErrorCode::already_exists, "loop " + loop.id + " already exists");
    if (loop.created_at == 0) loop.created_at = now;
    loop.updated_at = now;
    loop.version = 1;
    put_loop(loop);
  }
  for (Loop& loop : set.updates) {
    auto existing = impl_->get(kLoops, loop.id);
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
    batch.Put(impl_->cf(kIterations), iteration_key(rec.loop_id, rec.n), json_text(to_json(rec)));
  for (const Approval& a : set.approvals)
    batch.Put(impl_->cf(kApprovals), a.loop_id, json_text(to_json(a)));
  for (const auto& [k, v] : set.meta) batch.Put(impl_->cf(kMeta), k, v);

  std::uint64_t seq = impl_->event_seq;
  for (Event& e : set.events) {
    e.seq = ++seq;
    if (e.time == 0) e.time = now;
    batch.Put(impl_->cf(kEvents), event_key(e.seq), json_text(to_json(e)));
    result.events.push_back(e);
  }
  if (!set.events.empty()) batch.Put(impl_->cf(kMeta), kEventSeqKey, std::to_string(seq));

  rocksdb::WriteOptions wo = impl_->write_options;
  wo.sync = wo.sync && set.durable;
  rocksdb::Status s = impl_->db->Write(wo, &batch);
  if (!s.ok()) return io_error(s, "writing the store");
  impl_->event_seq = seq;
  impl_->summaries.keep(summaries);
  for (const Loop& loop : summaries) store_detail::note_record_write(*this, loop.id);
  return result;
}

Result<void> TaskStore::resume_writes() {
  rocksdb::Status s = impl_->db->Resume();
  if (!s.ok()) return io_error(s, "resuming writes");
  return ok();
}

Result<Loop> TaskStore::get_loop(const std::string& id) const {
  auto value = impl_->get(kLoops, id);
  if (!value) return value.take_error();
  if (!value->has_value()) return make_error(ErrorCode::not_found, "no loop " + id);
  store_detail::note_record_read(*this, id);
  return impl_->decode_loop(**value);
}

Result<std::vector<Loop>> TaskStore::list_loops() const {
  return impl_->scan_loops("", [](const Loop&) { return true; });
}

Result<std::vector<Loop>> TaskStore::list_loop_summaries() const {
  if (auto copy = impl_->summaries.sorted(nullptr)) return std::move(*copy);
  // First call: one scan of the index with writes held off, so the copy starts exactly at the
  // stored state. count_by_status() and other readers meanwhile read the store themselves
  // instead of waiting for the scan.
  std::lock_guard write(impl_->write_mutex);
  // Another first caller made them while this one waited.
  if (auto copy = impl_->summaries.sorted(nullptr)) return std::move(*copy);
  std::map<std::string, Loop, std::less<>> made;
  std::optional<Error> err;
  LOOPR_TRY(impl_->scan(kSummaries, "", [&](const rocksdb::Slice& k, const rocksdb::Slice& v) {
    auto summary = store_detail::summary_from_text(std::string_view(v.data(), v.size()));
    if (!summary) {
      err =
          make_error(ErrorCode::io, "the summary of loop " + k.ToString() +
                                        " in the store cannot be read: " + summary.error().message);
      return false;
    }
    made.emplace_hint(made.end(), k.ToString(), std::move(*summary));  // keys come in id order
    return true;
  }));
  if (err) return *err;
  impl_->summaries.install(std::move(made));
  return std::move(*impl_->summaries.sorted(nullptr));
}

Result<std::vector<Loop>> TaskStore::list_loop_summaries(
    const std::function<bool(const Loop&)>& keep) const {
  if (auto copy = impl_->summaries.sorted(&keep)) return std::move(*copy);
  LOOPR_ASSIGN(std::vector<Loop> all, list_loop_summaries());  // the first call makes them
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
  LOOPR_TRY(impl_->scan(kSummaries, "", [&](const rocksdb::Slice& k, const rocksdb::Slice& v) {
    auto text = store_detail::top_level_status(std::string_view(v.data(), v.size()));
    auto status = text ? parse_loop_status(*text) : std::nullopt;
    if (!status) {
      err = make_error(ErrorCode::io,
                       "the summary of loop " + k.ToString() + " in the store has no valid status");
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
      impl_->scan(kIterations, loop_id + "/", [&](const rocksdb::Slice&, const rocksdb::Slice& v) {
        auto json = nlohmann::json::parse(v.data(), v.data() + v.size(), nullptr, false);
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
  auto value = impl_->get(kIterations, iteration_key(loop_id, n));
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
  std::unique_ptr<rocksdb::Iterator> it(
      impl_->db->NewIterator(rocksdb::ReadOptions(), impl_->cf(kEvents)));
  for (it->Seek(event_key(after + 1)); it->Valid() && out.size() < limit; it->Next()) {
    auto json = nlohmann::json::parse(it->value().data(), it->value().data() + it->value().size(),
                                      nullptr, false);
    if (json.is_discarded()) return make_error(ErrorCode::io, "an event record is not JSON");
    LOOPR_ASSIGN(Event e, event_from_json(json));
    e.seq = event_seq_of(it->key());
    out.push_back(std::move(e));
  }
  if (!it->status().ok()) return io_error(it->status(), "reading events");
  return out;
}

std::uint64_t TaskStore::last_event_seq() const {
  std::lock_guard lock(impl_->write_mutex);
  return impl_->event_seq;
}

Result<std::optional<Approval>> TaskStore::get_approval(const std::string& loop_id) const {
  auto value = impl_->get(kApprovals, loop_id);
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
  auto current = impl_->get(kMeta, kPlanCounterKey);
  if (!current) return current.take_error();
  int next = current->has_value() ? std::atoi((*current)->c_str()) + 1 : 1;
  rocksdb::WriteOptions wo;
  wo.sync = true;  // a plan number handed out is never handed out again, even after a power cut
  rocksdb::Status s = impl_->db->Put(wo, impl_->cf(kMeta), kPlanCounterKey, std::to_string(next));
  if (!s.ok()) return io_error(s, "writing the plan counter");
  return next;
}

Result<std::optional<std::string>> TaskStore::get_meta(const std::string& key) const {
  return impl_->get(kMeta, key);
}

Result<std::vector<std::pair<std::string, std::string>>> TaskStore::meta_with_prefix(
    const std::string& prefix) const {
  std::vector<std::pair<std::string, std::string>> out;
  LOOPR_TRY(impl_->scan(kMeta, prefix, [&](const rocksdb::Slice& k, const rocksdb::Slice& v) {
    out.emplace_back(k.ToString(), v.ToString());
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
