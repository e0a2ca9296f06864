#include <filesystem>

#include <loopr/daemon/offline.hpp>
#include <loopr/manager/stats.hpp>
#include <loopr/store/task_store.hpp>

namespace loopr::daemon {
namespace {

// The store, when there is one; nullptr when loopr never wrote one here. Never made by a read.
Result<std::unique_ptr<TaskStore>> open_existing(const RepoPaths& paths) {
  std::error_code ec;
  if (!std::filesystem::exists(paths.state_dir() / "CURRENT", ec))
    return std::unique_ptr<TaskStore>();
  auto store = TaskStore::open(paths.state_dir().string());
  if (!store && store.error().message.find("in use by another process") != std::string::npos)
    return make_error(ErrorCode::conflict, store.error().message);
  return store;
}

}  // namespace

Result<nlohmann::json> stats_without_daemon(const RepoPaths& paths, const Config& config,
                                            TimestampMs since) {
  LOOPR_ASSIGN(std::unique_ptr<TaskStore> store, open_existing(paths));
  if (!store) {
    manager::Stats none;
    none.since = since;
    return manager::to_json(none);
  }
  LOOPR_ASSIGN(manager::Stats stats, manager::stats_of_store(*store, since, config.merge));
  return manager::to_json(stats);
}

Result<nlohmann::json> gc_without_daemon(const RepoPaths& paths, const Config& config,
                                         const manager::GcOptions& options) {
  LOOPR_ASSIGN(std::unique_ptr<TaskStore> store, open_existing(paths));
  if (!store) {
    manager::GcReport none;
    none.dry_run = options.dry_run;
    return manager::to_json(none);
  }
  LOOPR_ASSIGN(manager::GcReport report, manager::gc_store(*store, paths, options, config));
  return manager::to_json(report);
}

}  // namespace loopr::daemon
