// The manager's say at a loop's iteration boundary (engine::IterationGate): when the plan's
// integration branch moved since the loop's branch was based on it and what landed touches a
// path the loop changed, the loop rebases onto it (status `rebasing`); a conflict blocks it with
// its work intact. Work that does not meet is merged as it is (a conflict there rebases and
// validates again first: completion.cpp). Plans never rebase: their branch is where the
// integration branch starts.
#pragma once

#include <memory>

#include <loopr/engine/engine.hpp>

namespace loopr::manager {

struct ManagerState;
struct Run;

class RebaseGate final : public engine::IterationGate {
 public:
  RebaseGate(ManagerState& state, std::shared_ptr<Run> run) : s_(state), run_(std::move(run)) {}

  awaitable<Verdict> before_iteration(Loop loop) override;

 private:
  ManagerState& s_;
  std::shared_ptr<Run> run_;
};

}  // namespace loopr::manager
