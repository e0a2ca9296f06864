// Whether a checkout can run any content filter at all (issue 47: a worktree of 5,000 files).
#pragma once

#include <git2.h>

namespace loopr::git::detail {

/// False only when no filter can change a file of `tree` checked out in `repo`: no
/// `.gitattributes` anywhere in the tree, no attributes file git reads besides (the repository's
/// `info/attributes`, `core.attributesFile` or the XDG `git/attributes`, the system
/// `gitattributes`), and `core.autocrlf` unset or false. libgit2 1.5 looks up every file's
/// attributes for its filters even then, with two `realpath` calls per file (18 `readlink`s
/// each here): a third of a worktree's checkout beside git's. True when unsure (an error).
bool checkout_may_filter(git_repository* repo, const git_tree* tree);

}  // namespace loopr::git::detail
