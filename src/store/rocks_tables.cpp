// The TaskStore's tables in RocksDB (tables.hpp): one column family a table, the summary index
// in the default family, memory bounded for a daemon that runs for months.
#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/options.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>
#include <spdlog/spdlog.h>

#include <cstdarg>
#include <cstdio>
#include <filesystem>

#include "store/tables.hpp"

namespace loopr::store_detail {
namespace {

constexpr const char* kFamilies[] = {"loops", "iterations", "events", "approvals", "meta"};
static_assert(std::size(kFamilies) + 1 == kFamilyCount);
// The default column family holds the summary index (schema 2): each loop's loop_summary() under
// its id, written in the same WriteBatch as the loop's record. (Not a family of its own: a loopr
// that reads schema 1 only would then fail in RocksDB's open instead of saying "upgrade loopr".)
// RocksDB's memory bounds (open_rocksdb_tables): all memtables together, and the shared block
// cache.
constexpr std::size_t kMemtableBytes = 4u << 20;
constexpr std::size_t kBlockCacheBytes = 8u << 20;

Error io_error(const rocksdb::Status& s, const std::string& what) {
  return make_error(ErrorCode::io, what + ": " + s.ToString());
}

std::string_view view(const rocksdb::Slice& s) { return {s.data(), s.size()}; }

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

class RocksTables final : public Tables {
 public:
  std::unique_ptr<rocksdb::DB> db;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;

  ~RocksTables() override {
    // Large memtables go to table files now, so the next open reads those instead of replaying
    // the write-ahead log (10,000 loops: ~0.15 s of the daemon's start); small ones replay in a
    // few ms. Not after a failed write: this RocksDB aborts on writing again (see StoreLog); the
    // log keeps it all.
    std::uint64_t errors = 0, memtables = 0;
    if (db && handles.size() == kFamilyCount &&
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

  Result<std::optional<std::string>> get(Family family, const std::string& key) const override {
    std::string value;
    rocksdb::Status s = db->Get(rocksdb::ReadOptions(), cf(family), key, &value);
    if (s.IsNotFound()) return std::optional<std::string>();
    if (!s.ok()) return io_error(s, "reading the store");
    return std::optional<std::string>(std::move(value));
  }

  Result<void> scan(Family family, std::string_view from, std::string_view prefix,
                    const Visit& visit) const override {
    // An iterator reads the implicit snapshot taken when it was made.
    std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions(), cf(family)));
    for (it->Seek(rocksdb::Slice(from.data(), from.size()));
         it->Valid() && view(it->key()).starts_with(prefix); it->Next())
      if (!visit(view(it->key()), view(it->value()))) break;
    if (!it->status().ok()) return io_error(it->status(), "scanning the store");
    return ok();
  }

  Result<void> write(std::vector<Put> puts, bool sync) override {
    rocksdb::WriteBatch batch;
    for (const Put& p : puts) batch.Put(cf(p.family), p.key, p.value);
    rocksdb::WriteOptions wo;
    wo.sync = sync;
    rocksdb::Status s = db->Write(wo, &batch);
    if (!s.ok()) return io_error(s, "writing the store");
    return ok();
  }

  Result<void> resume() override {
    rocksdb::Status s = db->Resume();
    if (!s.ok()) return io_error(s, "resuming writes");
    return ok();
  }
};

}  // namespace

Result<std::unique_ptr<Tables>> open_rocksdb_tables(const std::string& dir) {
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

  auto tables = std::make_unique<RocksTables>();
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(db_options, dir, families, &tables->handles, &raw);
  if (!s.ok()) {
    if (s.IsIOError() && s.ToString().find("lock") != std::string::npos)
      return make_error(
          ErrorCode::io,
          "the store " + dir + " is in use by another process (is a loopr daemon running?)");
    return io_error(s, "cannot open the store " + dir);
  }
  tables->db.reset(raw);
  return std::unique_ptr<Tables>(std::move(tables));
}

}  // namespace loopr::store_detail
