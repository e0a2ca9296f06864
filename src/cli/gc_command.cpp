// `loopr gc [--dry-run] [--older-than D]`: removes the worktrees and branches of trees that
// ended (manager/gc.hpp says what and why). The daemon does it when one serves the repository
// (it holds the store and knows which loops run); the CLI does it on the store otherwise.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <memory>
#include <optional>

#include <loopr/api/requests.hpp>
#include <loopr/daemon/offline.hpp>
#include <loopr/exec/build_caches.hpp>

#include "cli/command.hpp"
#include "cli/commands.hpp"
#include "cli/daemon_client.hpp"
#include "cli/format.hpp"
#include "cli/maintenance_view.hpp"

namespace loopr::cli {
namespace {

std::uintmax_t tree_bytes(const std::filesystem::path& dir) {
  std::uintmax_t total = 0;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec))
    if (it->is_regular_file(ec) && !it->is_symlink(ec)) total += it->file_size(ec);
  return total;
}

/// What `gc --caches` cleared (or would clear): printed, and put in the `--json` answer.
struct CachesCleared {
  std::filesystem::path dir;
  std::uintmax_t bytes = 0;
  bool dry_run = false;
  nlohmann::json to_json() const {
    return {{"dir", dir.string()}, {"bytes", bytes}, {"dry_run", dry_run}};
  }
};

// Each cache folder is renamed away first, so a command starting meanwhile gets a new empty one
// (the executor makes it) rather than a half-removed one; links inside are removed, never
// followed. A command running in an old one meanwhile may miss a file once.
CachesCleared clear_caches(const RepoPaths& paths, bool dry_run, std::vector<std::string>& errors) {
  const std::filesystem::path dir = exec::caches_dir(paths);
  std::uintmax_t bytes = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (!entry.is_directory(ec) || entry.is_symlink(ec)) continue;
    bytes += tree_bytes(entry.path());
    if (dry_run) continue;
    std::filesystem::path old = entry.path();
    old += ".old-" + std::to_string(::getpid());
    std::error_code e;
    std::filesystem::rename(entry.path(), old, e);
    if (!e) std::filesystem::remove_all(old, e);
    if (e) errors.push_back("cannot clear " + entry.path().string() + ": " + e.message());
  }
  return CachesCleared{dir, bytes, dry_run};
}

}  // namespace

int run_gc(Session& s, bool dry_run, const std::string& older_than, bool caches) {
  const GlobalOptions& opts = s.opts;
  const RepoPaths& paths = s.paths();
  const Config& config = s.config();
  manager::GcOptions options = manager::GcOptions::from(config, now_ms());
  options.dry_run = dry_run;
  if (!older_than.empty()) {
    auto d = parse_duration(older_than);
    if (!d)
      throw CommandError{kUsage, "--older-than \"" + older_than + "\" is not a duration",
                         "write e.g. --older-than 7d, 12h or 0s"};
    options.older_than = *d;
  }
  nlohmann::json report;
  DaemonClient api(paths);
  if (api.health()) {
    report = api.post("/v1/gc", api::to_json(api::GcRequest{dry_run, older_than}),
                      std::chrono::minutes(30));
  } else {
    auto done = daemon::gc_without_daemon(paths, config, options);
    if (!done && done.error().code == ErrorCode::conflict)
      throw CommandError{kDaemonUnreachable, done.error().message,
                         "wait until the daemon has started or stopped, then try again"};
    if (!done)
      throw CommandError{kFailed, "gc failed: " + done.error().message, "see `loopr doctor`"};
    report = std::move(*done);
  }
  const api::GcView view = api::gc_from_json(report);
  std::vector<std::string> cache_errors;
  std::optional<CachesCleared> cleared;
  if (caches) {
    cleared = clear_caches(paths, dry_run, cache_errors);
    report["caches"] = cleared->to_json();
  }
  if (opts.json)
    std::cout << report.dump() << "\n";
  else if (!opts.quiet)
    std::cout << render_gc(view, Style{stdout_color(opts)});
  if (cleared && !opts.json && !opts.quiet)
    std::cout << (dry_run ? "would clear" : "cleared") << " the build caches in "
              << cleared->dir.string() << " (" << cleared->bytes / (1024 * 1024) << " MiB)\n";
  for (const auto& e : cache_errors) std::cerr << "loopr: " << e << "\n";
  return view.errors.empty() && cache_errors.empty() ? kOk : kFailed;
}

namespace {

CommandRun define_gc(CLI::App& gc) {
  struct Values {
    bool dry_run = false, caches = false;
    std::string older_than;
  };
  auto v = std::make_shared<Values>();
  gc.add_flag("--dry-run", v->dry_run, "Only say what would be removed");
  gc.add_option("--older-than", v->older_than,
                "Only trees that ended at least this long ago (default gc.older_than, 7d)")
      ->option_text("D");
  gc.add_flag("--caches", v->caches,
              "Also clear this repository's build caches (.loopr/cache/: Go, cargo, npm, pip, "
              "uv, ccache, Gradle); the next commands fill them again");
  return CommandRun([v](Session& s) { return run_gc(s, v->dry_run, v->older_than, v->caches); });
}

}  // namespace

const Command kGcCommand{
    "gc",
    "Remove what trees that ended left behind: their worktrees (what they held is kept on "
    "loopr/archive/<id>), loop branches whose commits are merged, archived attempts after "
    "gc.keep_archived, merged integration branches; prints what went and the space freed "
    "(exit 1 if something could not be removed)",
    false, Needs::config, define_gc};

}  // namespace loopr::cli
