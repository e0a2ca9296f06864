// The TaskStore's tables in memory (tables.hpp): ordered maps under one lock, for the fast tests
// (TaskStore::in_memory). A scan visits a copy of what it reads, taken under the lock, so a
// visitor may call back into the store and sees one state of the table, as RocksDB's iterator
// does.
#include <array>
#include <map>
#include <mutex>
#include <shared_mutex>

#include "store/tables.hpp"

namespace loopr::store_detail {
namespace {

class MemoryTables final : public Tables {
 public:
  Result<std::optional<std::string>> get(Family family, const std::string& key) const override {
    std::shared_lock lock(mutex_);
    const auto& table = tables_[family];
    auto it = table.find(key);
    if (it == table.end()) return std::optional<std::string>();
    return std::optional<std::string>(it->second);
  }

  Result<void> scan(Family family, std::string_view from, std::string_view prefix,
                    const Visit& visit) const override {
    std::vector<std::pair<std::string, std::string>> rows;
    {
      std::shared_lock lock(mutex_);
      const auto& table = tables_[family];
      for (auto it = table.lower_bound(from);
           it != table.end() && std::string_view(it->first).starts_with(prefix); ++it)
        rows.push_back(*it);
    }
    for (const auto& [key, value] : rows)
      if (!visit(key, value)) break;
    return ok();
  }

  Result<void> write(std::vector<Put> puts, bool /*sync: nothing outlives the process*/) override {
    std::unique_lock lock(mutex_);
    for (Put& p : puts) tables_[p.family][std::move(p.key)] = std::move(p.value);
    return ok();
  }

  Result<void> resume() override { return ok(); }

 private:
  mutable std::shared_mutex mutex_;
  std::array<std::map<std::string, std::string, std::less<>>, kFamilyCount> tables_;
};

}  // namespace

std::unique_ptr<Tables> memory_tables() { return std::make_unique<MemoryTables>(); }

}  // namespace loopr::store_detail
