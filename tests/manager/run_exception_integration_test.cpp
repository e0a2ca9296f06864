// A run that ends on an exception (a bug; before issue 28, text that was not UTF-8) leaves its
// loop in a state with a reason — paused, with the error — never `running` with no run behind
// it, also when the run of a restart throws again.
#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <thread>

#include <loopr/manager/loop_manager.hpp>
#include <loopr/store/store_writes.hpp>

#include "support/fakes/engine_kit.hpp"

using namespace loopr;
using namespace loopr::testing;

namespace {

// A model client with a bug: every call throws.
class ThrowingClient final : public llm::LlmClient {
 public:
  awaitable<llm::Outcome> complete(const llm::Request&) override {
    throw std::runtime_error("a bug in the client");
    co_return llm::Outcome(llm::LlmError{});
  }
  bool runs_own_tools() const override { return false; }
  const std::string& provider() const override { return name_; }
  const std::string& model() const override { return name_; }

 private:
  std::string name_ = "throwing";
};

template <typename T>
awaitable<void> store_into(awaitable<T> work, std::optional<T>* out) {
  out->emplace(co_await std::move(work));
}

// Runs `work` on the harness's io_context to its end (Results have no default value, so not
// through a future of their own).
template <typename T>
T drive(EngineKit& h, awaitable<T> work) {
  std::optional<T> out;
  auto fut = net::co_spawn(h.io, store_into(std::move(work), &out), net::use_future);
  h.drive_until(fut);
  fut.get();
  return std::move(*out);
}

void drive(EngineKit& h, awaitable<void> work) {
  auto fut = net::co_spawn(h.io, std::move(work), net::use_future);
  h.drive_until(fut);
  fut.get();
}

Loop wait_for(EngineKit& h, const std::string& id, LoopStatus status) {
  // Until a deadline: the run's work comes back to the io_context from the pool, so an io
  // context with nothing queued right now is not done (run_for would return at once).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    auto l = h.store->get_loop(id);
    if (l && l->status == status) return *l;
    h.io.restart();
    if (h.io.run_for(std::chrono::milliseconds(50)) == 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  auto l = h.store->get_loop(id);
  ADD_FAILURE() << id << " did not become " << to_string(status) << "; it is "
                << (l ? std::string(to_string(l->status)) + ": " + l->status_reason : "missing");
  return l ? *l : Loop{};
}

}  // namespace

TEST(RunException, ThePlanIsPausedWithTheErrorAlsoAfterARestart) {
  EngineKit h(kOverLoopback, "rules: []\n", {{"README.md", "x\n"}});
  h.config->base_branch = "main";
  engine::EngineContext& real = h.engine();
  ThrowingClient throwing;
  engine::EngineContext ctx{real.io,           real.pool,    real.journal,   real.config,
                            real.paths,        throwing,     real.scheduler, real.runners,
                            real.executor,     real.prompts, real.costs,     real.retry,
                            real.error_backoff};
  {
    manager::LoopManager m(ctx);
    ASSERT_TRUE(drive(h, m.start()).ok());
    auto submitted = drive(h, m.submit("Add a thing"));
    ASSERT_TRUE(submitted.ok()) << submitted.error().message;
    Loop paused = wait_for(h, "001", LoopStatus::paused);
    EXPECT_NE(paused.status_reason.find("internal error (a bug in the client)"), std::string::npos)
        << paused.status_reason;
    EXPECT_NE(paused.status_reason.find("`loopr resume 001`"), std::string::npos);
    EXPECT_EQ(paused.end_reason, EndReason::run_error);
    drive(h, m.shutdown(std::chrono::seconds(5)));
  }
  // A daemon killed during such a run left the loop `running`: the next start runs it, the run
  // throws again, and the loop is paused again.
  Loop l = h.store->get_loop("001").value();
  l.status = LoopStatus::running;
  ASSERT_TRUE(update_loop(*h.store, l).ok());
  manager::LoopManager again(ctx);
  ASSERT_TRUE(drive(h, again.start()).ok());
  Loop after = wait_for(h, "001", LoopStatus::paused);
  EXPECT_NE(after.status_reason.find("internal error"), std::string::npos);
  EXPECT_EQ(after.end_reason, EndReason::run_error);
  drive(h, again.shutdown(std::chrono::seconds(5)));
}
