// Landing work: a loop branch into its plan's integration branch, and that into the base branch.
// The merge is computed without any work tree (git_merge_commits), so a conflict changes
// nothing; only a clean result moves the target, and the target's checkout if it has one.
#include <chrono>
#include <thread>

#include <loopr/git/repository.hpp>

#include "git/libgit2.hpp"
#include "git/move_branch.hpp"

namespace loopr::git {

using namespace detail;

namespace {

// A concurrent merge into the same target (two loops finishing together) makes the
// compare-and-swap fail; the merge is recomputed on the new tip. More than a few lost races in
// a row means something keeps moving the branch, which a caller should hear about.
constexpr int kMaxAttempts = 8;

struct Planned {
  MergeOutcome::Kind kind = MergeOutcome::Kind::up_to_date;
  std::vector<std::string> conflicts;
  git_oid new_tip{};
};

// The merge bases of src and tgt, found on the repository's kept object handle: the walk goes
// back over every merge made into the integration branch so far, and on a fresh handle each
// merge would read (inflate, hash) all of them from disk again — O(merges made) per merge,
// quadratic over a plan (git_bench: 1,000 merges, the last ~10x the first). Only raw reads
// happen on the kept handle: a commit parsed as an object there would be cached in a form the
// history walk cannot use (libgit2 caches an object raw or parsed, and the walk reads raw).
Result<std::vector<git_oid>> merge_bases(const std::filesystem::path& root,
                                         const std::string& source, const std::string& target,
                                         const git_oid& src, const git_oid& tgt) {
  LOOPR_ASSIGN(ObjectRepoLease objects, lease_object_repo(root));
  git_oidarray found{nullptr, 0};
  int rc = git_merge_bases(&found, objects.get(), &src, &tgt);
  if (rc == GIT_ENOTFOUND) {
    return make_error(ErrorCode::invalid_argument,
                      source + " and " + target + " share no history; not merging");
  }
  LOOPR_TRY(check(rc, "finding the merge base of " + source + " and " + target));
  std::vector<git_oid> bases(found.ids, found.ids + found.count);
  git_oidarray_dispose(&found);
  if (bases.empty()) {
    return make_error(ErrorCode::invalid_argument,
                      source + " and " + target + " share no history; not merging");
  }
  return bases;
}

Result<Planned> plan_merge(git_repository* repo, const std::filesystem::path& root,
                           const std::string& source, const std::string& target, const git_oid& src,
                           const git_oid& tgt, const std::string& message) {
  using Kind = MergeOutcome::Kind;
  LOOPR_ASSIGN(std::vector<git_oid> bases, merge_bases(root, source, target, src, tgt));
  // With one base (src or tgt itself when one contains the other) it decides up to date and
  // fast-forward; several bases (criss-cross history) never contain src or tgt.
  if (bases.size() == 1 && git_oid_equal(&bases[0], &src))
    return Planned{Kind::up_to_date, {}, tgt};
  if (bases.size() == 1 && git_oid_equal(&bases[0], &tgt))
    return Planned{Kind::fast_forward, {}, src};

  LOOPR_ASSIGN(CommitPtr ours, lookup_commit(repo, tgt));
  LOOPR_ASSIGN(CommitPtr theirs, lookup_commit(repo, src));
  git_merge_options opts = GIT_MERGE_OPTIONS_INIT;  // rename detection on, like git merge
  IndexPtr index;
  if (bases.size() == 1) {
    // The three trees, merged as git_merge_commits would after finding this same base.
    LOOPR_ASSIGN(TreePtr base_tree, commit_tree(repo, bases[0]));
    LOOPR_ASSIGN(TreePtr our_tree, commit_tree(repo, tgt));
    LOOPR_ASSIGN(TreePtr their_tree, commit_tree(repo, src));
    LOOPR_ASSIGN(index,
                 make<IndexPtr>("merging " + source + " into " + target, git_merge_trees, repo,
                                base_tree.get(), our_tree.get(), their_tree.get(), &opts));
  } else {
    // Criss-cross history: git_merge_commits merges the bases into a virtual one first, as git
    // does. Rare; this walks the history again on the fresh handle.
    LOOPR_ASSIGN(index, make<IndexPtr>("merging " + source + " into " + target, git_merge_commits,
                                       repo, ours.get(), theirs.get(), &opts));
  }
  if (git_index_has_conflicts(index.get())) {
    LOOPR_ASSIGN(auto paths, conflict_paths(index.get()));
    return Planned{Kind::conflict, std::move(paths), tgt};
  }
  git_oid tree_id;
  LOOPR_TRY(check(git_index_write_tree_to(&tree_id, index.get(), repo), "writing the merge tree"));
  LOOPR_ASSIGN(TreePtr tree,
               make<TreePtr>("reading the merge tree", git_tree_lookup, repo, &tree_id));
  LOOPR_ASSIGN(SignaturePtr sig, default_signature(repo));
  std::string text =
      message.empty() ? "Merge branch '" + source + "' into " + target + "\n" : message;
  const git_commit* parents[] = {ours.get(), theirs.get()};
  git_oid id;
  // No update_ref: the branch moves in move_branch, after its checkout (if any) is updated.
  LOOPR_TRY(check(git_commit_create(&id, repo, nullptr, sig.get(), sig.get(), nullptr, text.c_str(),
                                    tree.get(), 2, parents),
                  "creating the merge commit"));
  return Planned{Kind::merged, {}, id};
}

}  // namespace

Result<MergeOutcome> Repository::merge(const std::string& source, const std::string& target,
                                       const std::string& message) const {
  using Kind = MergeOutcome::Kind;
  LOOPR_ASSIGN(std::string ref_name, branch_ref_name(target));
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    LOOPR_ASSIGN(RepoPtr repo, open_repo(root_, OpenMode::exact));
    LOOPR_ASSIGN(git_oid src, branch_tip(repo.get(), source));
    LOOPR_ASSIGN(git_oid tgt, branch_tip(repo.get(), target));
    LOOPR_ASSIGN(Planned plan, plan_merge(repo.get(), root_, source, target, src, tgt, message));
    if (plan.kind == Kind::up_to_date || plan.kind == Kind::conflict) {
      return MergeOutcome{plan.kind, std::move(plan.conflicts), to_hex(tgt)};
    }
    // Where target is checked out must stay true until it has moved.
    auto registry = lock_worktree_registry();
    LOOPR_ASSIGN(auto checkout, find_checkout(repo.get(), ref_name));
    std::string reflog =
        "merge " + source +
        (plan.kind == Kind::fast_forward ? ": Fast-forward (loopr)" : ": Merge made by loopr");
    LOOPR_ASSIGN(MoveReport moved,
                 move_branch(repo.get(), ref_name, tgt, plan.new_tip, checkout, reflog));
    switch (moved.kind) {
      case MoveReport::Kind::moved:
        return MergeOutcome{plan.kind, {}, to_hex(plan.new_tip)};
      case MoveReport::Kind::local_changes:
        return MergeOutcome{Kind::local_changes, std::move(moved.paths), to_hex(tgt)};
      case MoveReport::Kind::ref_moved:
        continue;  // lost a race: recompute on the new tip
    }
  }
  return make_error(ErrorCode::conflict, target + " kept moving while merging " + source +
                                             " into it; nothing was changed, try again");
}

}  // namespace loopr::git
