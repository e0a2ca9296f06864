// A repository made from a folder of files (`loopr demo`) and a diff summary between two
// revisions, so nothing in loopr runs git.
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

}  // namespace loopr::git
