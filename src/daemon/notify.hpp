// The user's `notify` commands (.loopr/config.yml): run on the events a person cares about
// (awaiting_approval, awaiting_answer, blocked, tree_complete, tree_failed, cost_threshold) with
// the event as JSON on stdin and LOOPR_EVENT / LOOPR_LOOP_ID / LOOPR_PLAN_ID in the environment.
// They run as the user, not sandboxed (the user wrote them), so never from a file inside the
// repository (the model can change those: docs/security.md B4), in the user's home, with a
// minimal environment (core/host_command.hpp: no provider keys, no tokens), on the pool with
// their timeout; a failure is logged, never fatal.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <loopr/api/events.hpp>
#include <loopr/engine/engine.hpp>

namespace loopr::daemon {

/// The notify event a stored event is, if it is one by itself (a status change to
/// awaiting_approval / awaiting_answer / blocked, or `tree_complete`); tree_failed and
/// cost_threshold need the tree and are decided by the Notifier.
std::optional<std::string> direct_notify_event(const api::EventBody& event);

class Notifier {
 public:
  /// Subscribes to `ctx.journal.bus()`; the commands are read from `ctx.config` at each event.
  explicit Notifier(engine::EngineContext& ctx);
  ~Notifier();
  Notifier(const Notifier&) = delete;
  Notifier& operator=(const Notifier&) = delete;

 private:
  struct State;
  std::shared_ptr<State> state_;
  int subscription_ = -1;
};

}  // namespace loopr::daemon
