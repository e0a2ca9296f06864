// The loops' summaries (loop_summary(): a loop without progress, run marks and unknown marks):
// their encoding in the store's summary index, and the copy the store keeps in memory once the
// first listing made it.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include <loopr/store/task_store.hpp>

namespace loopr::store_detail {

/// The summary as the index stores it: the store's own JSON of the loop (to_store_json), with
/// what a summary leaves out empty. One codec for records and summaries, so a field added to
/// the record is in the index too.
std::string summary_text(const Loop& summary);
Result<Loop> summary_from_text(std::string_view text);

/// The top-level "status" of a record or summary (nlohmann's compact dump) without parsing it;
/// nullopt if absent.
std::optional<std::string_view> top_level_status(std::string_view json);

/// Every loop's summary by id, from the first listing on. The store changes it with its write
/// mutex held (so no write slips between the scan that makes it and the first update); readers
/// take the shared lock.
class SummaryCopy {
 public:
  bool kept() const;
  /// Installs the copy a scan made (once).
  void install(std::map<std::string, Loop, std::less<>> made);
  /// After a write reached RocksDB: its loops' new summaries (nothing before install()).
  void keep(const std::vector<Loop>& summaries);
  /// A copy in id order of those `keep` says yes to (all when null); nullopt before install().
  std::optional<std::vector<Loop>> sorted(const std::function<bool(const Loop&)>* keep) const;
  /// How many loops have each status; nullopt before install().
  std::optional<std::map<LoopStatus, std::size_t>> count_by_status() const;

 private:
  mutable std::shared_mutex mutex_;
  bool kept_ = false;
  std::map<std::string, Loop, std::less<>> by_id_;
};

}  // namespace loopr::store_detail
