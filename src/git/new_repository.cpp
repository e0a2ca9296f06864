// A repository made from a folder of files (`loopr demo`), a diff summary between two
// revisions and the paths a branch changed since it forked, so nothing in loopr runs git.
#include <algorithm>
#include <cstring>

#include <loopr/git/repository.hpp>

#include "git/libgit2.hpp"

namespace loopr::git {

using namespace detail;

Result<Repository> Repository::create(const std::filesystem::path& root, const std::string& branch,
                                      const Identity& identity, const std::string& message) {
  ensure_libgit2();
  LOOPR_ASSIGN(std::string ref, branch_ref_name(branch));
  git_repository_init_options opts = GIT_REPOSITORY_INIT_OPTIONS_INIT;
  opts.flags = GIT_REPOSITORY_INIT_MKPATH | GIT_REPOSITORY_INIT_NO_REINIT;
  opts.initial_head = branch.c_str();
  git_repository* raw = nullptr;
  int rc = git_repository_init_ext(&raw, root.c_str(), &opts);
  RepoPtr repo(raw);
  if (rc == GIT_EEXISTS)
    return make_error(ErrorCode::already_exists, root.string() + " is a repository already");
  LOOPR_TRY(check(rc, "making a repository in " + root.string()));
  {
    LOOPR_ASSIGN(ConfigPtr config,
                 make<ConfigPtr>("opening the config", git_repository_config, repo.get()));
    LOOPR_TRY(check(git_config_set_string(config.get(), "user.name", identity.name.c_str()),
                    "setting user.name"));
    LOOPR_TRY(check(git_config_set_string(config.get(), "user.email", identity.email.c_str()),
                    "setting user.email"));
  }
  LOOPR_ASSIGN(IndexPtr index,
               make<IndexPtr>("opening the index", git_repository_index, repo.get()));
  LOOPR_TRY(check(git_index_add_all(index.get(), nullptr, GIT_INDEX_ADD_DEFAULT, nullptr, nullptr),
                  "staging the files of " + root.string()));
  LOOPR_TRY(check(git_index_write(index.get()), "writing the index"));
  git_oid tree_id;
  LOOPR_TRY(check(git_index_write_tree(&tree_id, index.get()), "writing the tree"));
  LOOPR_ASSIGN(TreePtr tree,
               make<TreePtr>("reading the tree", git_tree_lookup, repo.get(), &tree_id));
  LOOPR_ASSIGN(SignaturePtr sig, default_signature(repo.get()));
  git_oid id;
  LOOPR_TRY(check(git_commit_create(&id, repo.get(), ref.c_str(), sig.get(), sig.get(), nullptr,
                                    message.c_str(), tree.get(), 0, nullptr),
                  "making the first commit"));
  return Repository::open(root);
}

Result<std::string> Repository::diff_stat(const std::string& from, const std::string& to) const {
  LOOPR_ASSIGN(RepoPtr repo, open_repo(root_, OpenMode::exact));
  auto tree_of = [&](const std::string& rev) -> Result<TreePtr> {
    LOOPR_ASSIGN(ObjectPtr obj,
                 make<ObjectPtr>("resolving " + rev, git_revparse_single, repo.get(), rev.c_str()));
    LOOPR_ASSIGN(ObjectPtr tree, make<ObjectPtr>("reading the tree of " + rev, git_object_peel,
                                                 obj.get(), GIT_OBJECT_TREE));
    return TreePtr(reinterpret_cast<git_tree*>(tree.release()));
  };
  LOOPR_ASSIGN(TreePtr a, tree_of(from));
  LOOPR_ASSIGN(TreePtr b, tree_of(to));
  LOOPR_ASSIGN(DiffPtr diff, make<DiffPtr>("diffing " + from + " and " + to, git_diff_tree_to_tree,
                                           repo.get(), a.get(), b.get(), nullptr));
  LOOPR_ASSIGN(DiffStatsPtr stats,
               make<DiffStatsPtr>("counting the changes", git_diff_get_stats, diff.get()));
  Buf out;
  LOOPR_TRY(check(git_diff_stats_to_buf(&out.buf, stats.get(), GIT_DIFF_STATS_FULL, 80),
                  "formatting the changes"));
  return out.str();
}

Result<std::vector<std::string>> Repository::changed_since_fork(const std::string& from,
                                                                const std::string& to) const {
  LOOPR_ASSIGN(RepoPtr repo, open_repo(root_, OpenMode::exact));
  auto commit_of = [&](const std::string& rev) -> Result<git_oid> {
    LOOPR_ASSIGN(ObjectPtr obj,
                 make<ObjectPtr>("resolving " + rev, git_revparse_single, repo.get(), rev.c_str()));
    LOOPR_ASSIGN(ObjectPtr commit, make<ObjectPtr>("reading the commit " + rev, git_object_peel,
                                                   obj.get(), GIT_OBJECT_COMMIT));
    return *git_object_id(commit.get());
  };
  LOOPR_ASSIGN(git_oid a, commit_of(from));
  LOOPR_ASSIGN(git_oid b, commit_of(to));
  git_oid base{};
  int rc = git_merge_base(&base, repo.get(), &a, &b);
  if (rc == GIT_ENOTFOUND) base = a;  // unrelated histories: everything `to` has differs
  else LOOPR_TRY(check(rc, "finding the merge base of " + from + " and " + to));
  auto tree_of = [&](const git_oid& id) -> Result<TreePtr> {
    LOOPR_ASSIGN(ObjectPtr obj, make<ObjectPtr>("reading a commit", git_object_lookup, repo.get(),
                                                &id, GIT_OBJECT_COMMIT));
    LOOPR_ASSIGN(ObjectPtr tree, make<ObjectPtr>("reading a tree", git_object_peel, obj.get(),
                                                 GIT_OBJECT_TREE));
    return TreePtr(reinterpret_cast<git_tree*>(tree.release()));
  };
  LOOPR_ASSIGN(TreePtr ta, tree_of(base));
  LOOPR_ASSIGN(TreePtr tb, tree_of(b));
  LOOPR_ASSIGN(DiffPtr diff, make<DiffPtr>("diffing " + from + " and " + to, git_diff_tree_to_tree,
                                           repo.get(), ta.get(), tb.get(), nullptr));
  std::vector<std::string> paths;
  for (std::size_t i = 0, n = git_diff_num_deltas(diff.get()); i < n; ++i) {
    const git_diff_delta* d = git_diff_get_delta(diff.get(), i);
    if (d->old_file.path) paths.emplace_back(d->old_file.path);
    if (d->new_file.path && (!d->old_file.path || std::strcmp(d->old_file.path, d->new_file.path)))
      paths.emplace_back(d->new_file.path);
  }
  std::sort(paths.begin(), paths.end());
  paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
  return paths;
}

}  // namespace loopr::git
