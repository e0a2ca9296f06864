// Rebasing a loop's branch onto its plan's integration branch after another loop landed there.
//
// Policy (DESIGN.md "Git model"): a conflict must leave the loop exactly as it was, so the loop
// can be marked blocked with its work intact. libgit2's in-memory rebase gives that for free:
// every commit is replayed into a private index and written as a new commit object, and nothing
// in the work tree, its index or any ref changes. Only when the whole chain applied is the
// branch moved, together with its checkout (move_branch: SAFE checkout, then compare-and-swap).
// A conflict just drops the half-built chain; its commit objects stay unreferenced until gc.
#include <loopr/git/worktree.hpp>

#include "git/deadline.hpp"
#include "git/history.hpp"
#include "git/libgit2.hpp"
#include "git/move_branch.hpp"

namespace loopr::git {

using namespace detail;

namespace {

struct Replay {
  bool conflict = false;
  std::vector<std::string> conflicts;
  git_oid stopped_at{};
  git_oid tip{};  // the last replayed commit (or `onto` when every commit was already there)
};

// Replays the commits of `branch` that `onto` lacks, in memory, on top of `onto`.
Result<Replay> replay(git_repository* repo, const git_oid& branch, const git_oid& onto) {
  LOOPR_ASSIGN(
      AnnotatedPtr branch_ac,
      make<AnnotatedPtr>("preparing the rebase", git_annotated_commit_lookup, repo, &branch));
  LOOPR_ASSIGN(AnnotatedPtr onto_ac, make<AnnotatedPtr>("preparing the rebase",
                                                        git_annotated_commit_lookup, repo, &onto));
  git_rebase_options opts = GIT_REBASE_OPTIONS_INIT;
  opts.inmemory = 1;
  LOOPR_ASSIGN(RebasePtr rebase, make<RebasePtr>("starting the rebase", git_rebase_init, repo,
                                                 branch_ac.get(), onto_ac.get(), nullptr, &opts));
  LOOPR_ASSIGN(SignaturePtr committer, default_signature(repo));
  Replay result;
  result.tip = onto;
  git_rebase_operation* op = nullptr;
  int rc = 0;
  while ((rc = git_rebase_next(&op, rebase.get())) == 0) {
    LOOPR_ASSIGN(IndexPtr index, make<IndexPtr>("reading the rebase index",
                                                git_rebase_inmemory_index, rebase.get()));
    if (git_index_has_conflicts(index.get())) {
      LOOPR_ASSIGN(result.conflicts, conflict_paths(index.get()));
      result.conflict = true;
      result.stopped_at = op->id;
      // In memory there is nothing to restore; abort only releases libgit2's state.
      git_rebase_abort(rebase.get());
      return result;
    }
    git_oid id;
    // Author and message stay the original commit's; the committer is whoever rebases.
    int crc = git_rebase_commit(&id, rebase.get(), nullptr, committer.get(), nullptr, nullptr);
    if (crc == GIT_EAPPLIED) continue;  // the same change already is in `onto`
    LOOPR_TRY(check(crc, "replaying commit " + to_hex(op->id)));
    result.tip = id;
  }
  if (rc != GIT_ITEROVER) LOOPR_TRY(check(rc, "rebasing"));
  LOOPR_TRY(check(git_rebase_finish(rebase.get(), committer.get()), "finishing the rebase"));
  return result;
}

}  // namespace

Result<RebaseOutcome> Worktree::rebase_onto(const std::string& onto) const {
  WorkDeadline deadline;  // git writes and reads the work tree (git/deadline.hpp)
  using Kind = RebaseOutcome::Kind;
  LOOPR_ASSIGN(RepoPtr repo, open_repo(path_, OpenMode::exact));
  LOOPR_ASSIGN(std::string ref_name, head_branch_ref(repo.get()));
  LOOPR_ASSIGN(git_oid tip, head_id(repo.get()));
  LOOPR_ASSIGN(git_oid base, branch_tip(repo.get(), onto));

  git_oid merge_base;
  int rc = kept_merge_base(&merge_base, repo.get(), tip, base);
  if (rc == GIT_ENOTFOUND) {
    return make_error(ErrorCode::invalid_argument,
                      ref_name + " and " + onto + " share no history; cannot rebase");
  }
  LOOPR_TRY(check(rc, "finding the merge base of " + ref_name + " and " + onto));
  if (git_oid_equal(&merge_base, &base))
    return RebaseOutcome{Kind::up_to_date, {}, to_hex(tip), {}};

  Kind kind = Kind::fast_forward;
  git_oid new_tip = base;
  if (!git_oid_equal(&merge_base, &tip)) {
    LOOPR_ASSIGN(Replay r, replay(repo.get(), tip, base));
    if (r.conflict) {
      return RebaseOutcome{Kind::conflict, std::move(r.conflicts), to_hex(tip),
                           to_hex(r.stopped_at)};
    }
    kind = Kind::rebased;
    new_tip = r.tip;
  }
  LOOPR_ASSIGN(MoveReport moved, move_branch(repo.get(), ref_name, tip, new_tip, path_,
                                             "rebase (loopr): onto " + onto + " " + to_hex(base)));
  switch (moved.kind) {
    case MoveReport::Kind::moved:
      return RebaseOutcome{kind, {}, to_hex(new_tip), {}};
    case MoveReport::Kind::local_changes:
      return RebaseOutcome{Kind::local_changes, std::move(moved.paths), to_hex(tip), {}};
    case MoveReport::Kind::ref_moved:
      break;
  }
  return make_error(ErrorCode::conflict,
                    ref_name + " moved while it was being rebased (a commit in " + path_.string() +
                        " at the same time?); nothing was changed, try again");
}

}  // namespace loopr::git
