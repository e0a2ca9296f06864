// The runs of this process: one per loop that iterates or waits for a loop slot
// (`concurrency.max_loops`), with the control the user's actions and the tree's rules talk to it
// through. Bookkeeping only; starting a run is the driver's (driver.hpp: spawn_run).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <loopr/engine/loop_control.hpp>
#include <loopr/net/async.hpp>

namespace loopr::manager {

struct Run {
  Run(std::string loop_id, net::any_io_executor ex, std::shared_ptr<AsyncSemaphore::Waiter> waiter)
      : id(std::move(loop_id)), slot(std::move(waiter)), done(std::move(ex)) {}

  std::string id;
  std::shared_ptr<engine::LoopControl> control = std::make_shared<engine::LoopControl>();
  std::shared_ptr<AsyncSemaphore::Waiter> slot;  ///< granted: the loop iterates
  AsyncEvent done;                               ///< set when the run has ended
};

class RunTable {
 public:
  RunTable(net::any_io_executor ex, int max_loops)
      : ex_(ex), slots_(ex, max_loops < 1 ? 1 : max_loops) {}

  /// A new run for `id`; null when it has one.
  std::shared_ptr<Run> add(const std::string& id);
  /// Forgets `run` (if it is still the one registered for its loop).
  void remove(const std::shared_ptr<Run>& run);

  std::shared_ptr<Run> find(const std::string& id) const;
  bool has(const std::string& id) const { return runs_.count(id) > 0; }
  /// A loop of this plan's tree has a run.
  bool any_of_plan(const std::string& plan_id) const { return per_plan_.count(plan_id) > 0; }
  std::size_t size() const { return runs_.size(); }
  std::vector<std::shared_ptr<Run>> all() const;

  /// Asks the run to stop; one still waiting for a slot is woken without it. True when it was
  /// iterating (its loop's record is the run's to write).
  /// `end`: the loop's end reason when it ends stopped (daemon_stopping: daemon_stopped).
  bool stop(const Run& run, const std::string& reason, EndReason end,
            engine::StopCause cause = engine::StopCause::user);
  /// Asks the run to pause at its next boundary; one still waiting is woken without a slot.
  bool pause(const Run& run);
  /// Every other run of the plan rebases at its next boundary.
  void notify_integration_moved(const std::string& plan_id, const std::string& except);

  /// The loop slots (`concurrency.max_loops`).
  AsyncSemaphore& slots() { return slots_; }

 private:
  net::any_io_executor ex_;
  AsyncSemaphore slots_;
  std::map<std::string, std::shared_ptr<Run>> runs_;
  std::map<std::string, std::map<std::string, std::shared_ptr<Run>>> per_plan_;
};

}  // namespace loopr::manager
