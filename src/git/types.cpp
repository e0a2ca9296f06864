#include <loopr/git/types.hpp>

namespace loopr::git {

const char* to_string(CommitOutcome::Kind kind) {
  switch (kind) {
    case CommitOutcome::Kind::committed:
      return "committed";
    case CommitOutcome::Kind::nothing_to_commit:
      return "nothing_to_commit";
  }
  return "unknown";
}

const char* to_string(RebaseOutcome::Kind kind) {
  switch (kind) {
    case RebaseOutcome::Kind::rebased:
      return "rebased";
    case RebaseOutcome::Kind::fast_forward:
      return "fast_forward";
    case RebaseOutcome::Kind::up_to_date:
      return "up_to_date";
    case RebaseOutcome::Kind::conflict:
      return "conflict";
    case RebaseOutcome::Kind::local_changes:
      return "local_changes";
  }
  return "unknown";
}

const char* to_string(MergeOutcome::Kind kind) {
  switch (kind) {
    case MergeOutcome::Kind::fast_forward:
      return "fast_forward";
    case MergeOutcome::Kind::merged:
      return "merged";
    case MergeOutcome::Kind::up_to_date:
      return "up_to_date";
    case MergeOutcome::Kind::conflict:
      return "conflict";
    case MergeOutcome::Kind::local_changes:
      return "local_changes";
  }
  return "unknown";
}

}  // namespace loopr::git
