// A real process writes loop-update + iteration-record pairs as fast as it can and is SIGKILLed
// at a random moment; the reopened store must hold only whole pairs.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <random>
#include <thread>

#include <loopr/store/task_store.hpp>

#include "support/temp_dir.hpp"

using namespace loopr;

namespace {

constexpr int kLoops = 4;

std::string loop_id(int i) { return "code-001-001-00" + std::to_string(i + 1); }

[[noreturn]] void writer(const std::string& dir) {
  auto opened = TaskStore::open(dir, {.sync = false});
  if (!opened) _exit(3);
  auto& store = *opened;
  for (int i = 0; i < kLoops; ++i) {
    auto existing = store->get_loop(loop_id(i));
    if (!existing) {
      Loop l;
      l.id = loop_id(i);
      l.type = LoopType::code;
      if (!store->create_loop(l)) _exit(4);
    }
  }
  for (long n = 0;; ++n) {
    int i = static_cast<int>(n % kLoops);
    Loop l = *store->get_loop(loop_id(i));
    l.iteration += 1;
    l.progress = "iteration " + std::to_string(l.iteration) + std::string(200, 'x');
    l.usage.output_tokens += 10;
    IterationRecord rec;
    rec.loop_id = l.id;
    rec.n = l.iteration;
    rec.status = "failed";
    rec.usage.output_tokens = 10;
    Event ev;
    ev.loop_id = l.id;
    ev.type = "iteration_finished";
    ev.data = {{"n", rec.n}};
    if (!store->commit_iteration(l, rec, {ev})) _exit(5);
  }
}

}  // namespace

TEST(StoreCrashTest, KillNineNeverLeavesAHalfWrittenPair) {
  std::mt19937 rng(std::random_device{}());
  loopr::testing::TempDir dir;
  std::string path = (dir / "state").string();
  int runs_with_writes = 0;
  for (int run = 0; run < 25; ++run) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) writer(path);
    // A random moment in the child's life: some runs die while opening, most mid-write.
    std::this_thread::sleep_for(std::chrono::milliseconds(std::uniform_int_distribution<int>(5, 120)(rng)));
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status)) << "writer exited by itself with " << WEXITSTATUS(status);

    auto opened = TaskStore::open(path, {.sync = false});
    ASSERT_TRUE(opened.ok()) << opened.error().message;
    auto& store = *opened;
    std::size_t total = 0;
    for (int i = 0; i < kLoops; ++i) {
      auto loop = store->get_loop(loop_id(i));
      if (!loop) continue;  // killed before it was created
      auto recs = store->iterations(loop->id);
      ASSERT_TRUE(recs.ok());
      // Every record has its loop state, and the loop state has every record: no half pair.
      ASSERT_EQ(static_cast<int>(recs->size()), loop->iteration) << loop->id << " in run " << run;
      for (std::size_t k = 0; k < recs->size(); ++k) ASSERT_EQ((*recs)[k].n, static_cast<int>(k + 1));
      ASSERT_EQ(loop->usage.output_tokens, 10 * loop->iteration);
      total += recs->size();
    }
    auto events = store->events_since(0, 10'000'000);
    ASSERT_TRUE(events.ok());
    ASSERT_EQ(events->size(), total) << "events and iterations disagree in run " << run;
    if (total > 0) ++runs_with_writes;
  }
  EXPECT_GE(runs_with_writes, 20) << "the writer should have written before most kills";
}
