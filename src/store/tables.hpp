// The seam below the TaskStore (issue 44 R5): the six tables of keys and values it keeps its
// records in, and the atomic write of several of them. The TaskStore owns everything above
// (the records' codecs, compare-and-set, event numbering, the summary index), so a store kept in
// memory for the fast tests is the same store as the daemon's but for where its bytes live, as
// LevelDB's memenv is the same database over another file system.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <loopr/core/result.hpp>

namespace loopr::store_detail {

/// The tables. In RocksDB: the default column family (the summary index) and one family each.
enum Family { kSummaries = 0, kLoops, kIterations, kEvents, kApprovals, kMeta, kFamilyCount };

struct Put {
  Family family;
  std::string key, value;
};

/// Called with each key and value in key order; returns false to stop.
using Visit = std::function<bool(std::string_view key, std::string_view value)>;

class Tables {
 public:
  virtual ~Tables() = default;
  virtual Result<std::optional<std::string>> get(Family family, const std::string& key) const = 0;
  /// visit(key, value) for every key ≥ `from` that starts with `prefix`, in key order, until it
  /// returns false. What it sees is one state of the table: a write meanwhile is either wholly
  /// in it or not at all.
  virtual Result<void> scan(Family family, std::string_view from, std::string_view prefix,
                            const Visit& visit) const = 0;
  /// All of `puts` or none of them (`sync`: durable across a machine crash before it returns).
  virtual Result<void> write(std::vector<Put> puts, bool sync) = 0;
  /// After a failed write: takes writes again if it can.
  virtual Result<void> resume() = 0;
};

/// The tables of the RocksDB in `dir` (made if missing); an error says when another process
/// holds it.
Result<std::unique_ptr<Tables>> open_rocksdb_tables(const std::string& dir);

/// Tables in this process's memory, empty, gone with the store: for tests that do not test the
/// database itself.
std::unique_ptr<Tables> memory_tables();

}  // namespace loopr::store_detail
