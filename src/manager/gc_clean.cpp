// `loopr gc`'s removals, on git and disk, for one qualifying tree and for the leftovers of
// crashes. Each step looks at what git holds now (not at what a record says), so running it
// again after a crash finishes the job, and running it with nothing left changes nothing.
#include <spdlog/spdlog.h>

#include <map>

#include <loopr/core/commit_message.hpp>
#include <loopr/git/branches.hpp>
#include <loopr/git/cleanup.hpp>
#include <loopr/git/loop_worktrees.hpp>
#include <loopr/manager/gc.hpp>

namespace loopr::manager {
namespace {

using api::GcAction;
using api::GcKind;

constexpr std::string_view kArchivePrefix = "loopr/archive/";

std::string ago(std::int64_t ms) {
  std::int64_t h = ms / 3'600'000;
  if (h >= 48) return std::to_string(h / 24) + " days";
  if (h >= 1) return std::to_string(h) + " h";
  return std::to_string(ms / 60'000) + " min";
}

// A path as the person knows it: relative to the repository when it is inside it.
std::string shown_path(const RepoPaths& paths, const std::string& path) {
  std::string root = paths.root.string() + "/";
  return path.rfind(root, 0) == 0 ? path.substr(root.size()) : path;
}

// The loop an archive branch belongs to: `loopr/archive/<id>` or `loopr/archive/<id>-<n>`.
std::string archive_owner(const std::string& branch, const std::set<std::string>& ids) {
  if (branch.rfind(kArchivePrefix, 0) != 0) return {};
  std::string rest = branch.substr(kArchivePrefix.size());
  if (ids.count(rest)) return rest;
  auto dash = rest.rfind('-');
  if (dash == std::string::npos || dash + 1 == rest.size()) return {};
  if (rest.find_first_not_of("0123456789", dash + 1) != std::string::npos) return {};
  std::string id = rest.substr(0, dash);
  return ids.count(id) ? id : std::string();
}

class TreeCleaner {
 public:
  TreeCleaner(const RepoPaths& paths, const GcTarget& t, const GcOptions& o)
      : paths_(paths), t_(t), o_(o), git_(paths.root), worktrees_(paths.root) {
    report_.dry_run = o.dry_run;
  }

  GcReport run() {
    auto branches = git_.loopr_branches();
    auto registered = git_.worktrees();
    if (!branches || !registered) {
      fail("plan " + t_.plan_id + ": " +
           (!branches ? branches.error().message : registered.error().message));
      return std::move(report_);
    }
    branches_.insert(branches->begin(), branches->end());
    for (auto& w : *registered) worktree_of_[w.name] = w;
    integration_ = git::integration_branch(t_.plan_id);
    for (const Loop& l : t_.loops) ids_.insert(l.id);
    for (const Loop& l : t_.loops) clean_loop(l);
    if (t_.ended) {
      clean_gate();
      clean_integration();
    }
    return std::move(report_);
  }

 private:
  void fail(std::string what) {
    spdlog::warn("gc: {}", what);
    report_.errors.push_back(std::move(what));
  }

  void item(GcItem i) {
    report_.bytes_freed += i.bytes;
    spdlog::info("gc: {}{} {} {}{}", o_.dry_run ? "would have " : "", api::to_string(i.action),
                 api::to_string(i.kind), i.name,
                 i.kept_on.empty() ? "" : " (kept on " + i.kept_on + ")");
    report_.items.push_back(std::move(i));
  }

  // Where `branch`'s commits are, if the integration or the base branch has all of them.
  std::optional<std::string> merged_home(const std::string& branch) {
    for (const std::string& into : {integration_, t_.base_branch}) {
      if (into.empty() || (into == integration_ && !branches_.count(into))) continue;
      auto merged = git_.merged_into(branch, into);
      if (merged && *merged) return into;
    }
    return std::nullopt;
  }

  void clean_loop(const Loop& l) {
    GcLoopChange change{l.id, l.worktree, l.branch};
    bool archived_now = false;
    // 1. Its worktree: what it holds is committed, the folder removed, the branch archived.
    if (auto w = worktree_of_.find(l.id); w != worktree_of_.end() && w->second.valid) {
      GcItem i{GcKind::worktree,
               shown_path(paths_, w->second.path),
               GcAction::archived,
               git::archive_branch(l.id),
               git::disk_usage(w->second.path),
               l.id,
               std::string("its tree ended (") + to_string(l.status) + ")"};
      if (!o_.dry_run) {
        auto kept = worktrees_.archive(
            l.id, loop_commit_message(l.id, "what its worktree held when `loopr gc` removed it"));
        if (!kept) return fail("worktree of " + l.id + ": " + kept.error().message);
        i.kept_on = *kept;
        change.branch = *kept;
      }
      item(std::move(i));
      archived_now = true;
    }
    change.worktree.clear();
    // 2. Its branch: deleted when its commits are merged, else archived.
    std::string branch = l.branch.empty() ? git::loop_branch(t_.plan_id, l.id) : l.branch;
    bool is_archive = branch.rfind(kArchivePrefix, 0) == 0;
    if (!archived_now && !is_archive && branches_.count(branch)) {
      if (auto home = merged_home(branch)) {
        if (!o_.dry_run)
          if (auto d = git_.delete_branch(branch); !d)
            return fail("branch " + branch + ": " + d.error().message);
        item({GcKind::branch, branch, GcAction::deleted, "", 0, l.id,
              "its commits are in " + *home});
        change.branch.clear();
      } else {
        std::string kept = git::archive_branch(l.id);
        if (!o_.dry_run) {
          auto a = git_.archive_branch(branch, l.id);
          if (!a) return fail("branch " + branch + ": " + a.error().message);
          kept = *a;
        }
        item({GcKind::branch, branch, GcAction::archived, kept, 0, l.id,
              "its commits are merged nowhere"});
        change.branch = kept;
      }
    } else if (!archived_now && !branches_.count(branch)) {
      change.branch.clear();  // gone already (an earlier run, or archived by the manager)
    }
    // 3. Its archived attempts, `keep_archived` after they were archived.
    for (const std::string& a : branches_) {
      if (archive_owner(a, ids_) != l.id) continue;
      auto moved = git_.moved_at(a);
      TimestampMs at = moved && *moved ? **moved : l.updated_at;
      if (o_.now - at < o_.keep_archived.count()) continue;
      if (!o_.dry_run)
        if (auto d = git_.delete_branch(a); !d) {
          fail("branch " + a + ": " + d.error().message);
          continue;
        }
      item({GcKind::branch, a, GcAction::deleted, "", 0, l.id,
            "archived " + ago(o_.now - at) + " ago (gc.keep_archived)"});
      if (change.branch == a) change.branch.clear();
    }
    if (change.worktree != l.worktree || change.branch != l.branch)
      report_.changes.push_back(std::move(change));
    clean_logs(l);
  }

  // 4. Its logs: the iterations' transcripts, setup and check logs. A plan keeps its events.log
  // (the tree's gc event is written there next, and a second run finds nothing to do).
  void clean_logs(const Loop& l) {
    const std::filesystem::path dir = paths_.loop_log_dir(l.id);
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) return;
    const bool keep_events = l.id == t_.plan_id;
    std::vector<std::filesystem::path> gone;
    std::uint64_t bytes = 0;
    for (auto it = std::filesystem::directory_iterator(dir, ec);
         !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
      if (keep_events && it->path().filename() == "events.log") continue;
      gone.push_back(it->path());
      bytes += git::disk_usage(it->path());
    }
    if (gone.empty()) return;
    if (!keep_events) {
      gone = {dir};
      bytes = git::disk_usage(dir);
    }
    if (!o_.dry_run)
      for (const auto& p : gone) {
        std::error_code rm;
        std::filesystem::remove_all(p, rm);
        if (rm)
          return fail("logs of " + l.id + ": cannot remove " + p.string() + ": " + rm.message());
      }
    item({GcKind::logs, shown_path(paths_, dir.string()), GcAction::removed, "", bytes, l.id,
          t_.ended ? std::string("its tree ended (") + to_string(l.status) + ")"
                   : std::string("its generation was invalidated")});
  }

  // The integration gate's checkout of the tip (`<plan>-gate`), if a crash left it.
  void clean_gate() {
    const std::string name = t_.plan_id + "-gate";
    auto w = worktree_of_.find(name);
    bool has_branch = branches_.count("loopr/" + name) > 0;
    if (w == worktree_of_.end() && !has_branch) return;
    std::uint64_t bytes = w != worktree_of_.end() ? git::disk_usage(w->second.path) : 0;
    if (!o_.dry_run)
      if (auto r = worktrees_.remove_gate(t_.plan_id); !r)
        return fail("the integration check's checkout of " + t_.plan_id + ": " + r.error().message);
    item({GcKind::worktree, shown_path(paths_, paths_.worktree(name).string()), GcAction::removed,
          "", bytes, t_.plan_id, "the integration check's checkout of an ended tree"});
  }

  // The integration branch, once the base branch has every commit of it.
  void clean_integration() {
    if (!branches_.count(integration_) || t_.base_branch.empty() || integration_ == t_.base_branch)
      return;
    auto merged = git_.merged_into(integration_, t_.base_branch);
    if (!merged || !*merged) return;
    if (!o_.dry_run)
      if (auto d = git_.delete_branch(integration_); !d)
        return fail("branch " + integration_ + ": " + d.error().message);
    item({GcKind::branch, integration_, GcAction::deleted, "", 0, t_.plan_id,
          "the base branch " + t_.base_branch + " has all of it"});
  }

  const RepoPaths& paths_;
  const GcTarget& t_;
  const GcOptions& o_;
  git::Cleanup git_;
  git::LoopWorktrees worktrees_;
  GcReport report_;
  std::set<std::string> branches_;
  std::map<std::string, git::WorktreeInfo> worktree_of_;
  std::set<std::string> ids_;
  std::string integration_;
};

}  // namespace

GcReport clean_target(const RepoPaths& paths, const GcTarget& target, const GcOptions& options) {
  return TreeCleaner(paths, target, options).run();
}

GcReport clean_leftovers(const RepoPaths& paths, const std::set<std::string>& ids,
                         const GcOptions& options) {
  GcReport r;
  r.dry_run = options.dry_run;
  git::Cleanup git(paths.root);
  auto ours = [&ids](const std::string& name) {
    if (ids.count(name)) return true;
    constexpr std::string_view gate = "-gate";
    return name.size() > gate.size() &&
           name.compare(name.size() - gate.size(), gate.size(), gate) == 0 &&
           ids.count(name.substr(0, name.size() - gate.size()));
  };
  if (auto registered = git.worktrees()) {
    for (const auto& w : *registered) {
      if (w.valid || w.locked || !ours(w.name)) continue;
      if (!options.dry_run) {
        auto pruned = git.prune_registration(w.name);
        if (!pruned) {
          r.errors.push_back("worktree record " + w.name + ": " + pruned.error().message);
          continue;
        }
        if (!*pruned) continue;
      }
      r.items.push_back({GcKind::registration, w.name, GcAction::pruned, "", 0,
                         ids.count(w.name) ? w.name : "",
                         "git's record of a worktree whose folder is gone"});
    }
  } else {
    r.errors.push_back("listing worktrees: " + registered.error().message);
  }
  // Folders a crash recovery set aside: `.loopr/archive/<id>-stray-<ms>`.
  std::error_code ec;
  std::vector<std::filesystem::path> folders;
  for (auto it = std::filesystem::directory_iterator(paths.archive_dir(), ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
    folders.push_back(it->path());
  for (const auto& folder : folders) {
    std::string name = folder.filename().string();
    auto at = name.rfind("-stray-");
    if (at == std::string::npos || !ids.count(name.substr(0, at))) continue;
    std::string stamp = name.substr(at + 7);
    if (stamp.empty() || stamp.find_first_not_of("0123456789") != std::string::npos) continue;
    TimestampMs set_aside = std::stoll(stamp);
    if (options.now - set_aside < options.keep_archived.count()) continue;
    std::uint64_t bytes = git::disk_usage(folder);
    if (!options.dry_run) {
      std::error_code rm;
      std::filesystem::remove_all(folder, rm);
      if (rm) {
        r.errors.push_back("cannot remove " + folder.string() + ": " + rm.message());
        continue;
      }
    }
    r.bytes_freed += bytes;
    r.items.push_back({GcKind::folder, ".loopr/archive/" + name, GcAction::removed, "", bytes,
                       name.substr(0, at),
                       "set aside " + ago(options.now - set_aside) +
                           " ago by a crash recovery (gc.keep_archived)"});
  }
  return r;
}

}  // namespace loopr::manager
