// A real process writes loop-update + iteration-record pairs as fast as it can and is SIGKILLed
// at a random moment; the reopened store must hold only whole pairs, and each loop's summary in
// the index must be its record's.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <random>
#include <thread>

#include <loopr/store/store_writes.hpp>
#include <loopr/store/task_store.hpp>

#include "support/temp_dir.hpp"

using namespace loopr;

namespace {

constexpr int kLoops = 4;

std::string loop_id(int i) { return "code-001-001-00" + std::to_string(i + 1); }

// Writes pairs until killed; sends one byte on `ready` after its first pair is stored.
[[noreturn]] void writer(const std::string& dir, int ready) {
  auto opened = TaskStore::open(dir, {.sync = false});
  if (!opened) _exit(3);
  auto& store = *opened;
  for (int i = 0; i < kLoops; ++i) {
    auto existing = store->get_loop(loop_id(i));
    if (!existing) {
      Loop l;
      l.id = loop_id(i);
      l.type = LoopType::code;
      if (!create_loop(*store, l)) _exit(4);
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
    rec.status = IterationOutcome::failed;
    rec.usage.output_tokens = 10;
    Event ev;
    ev.loop_id = l.id;
    ev.type = "iteration_finished";
    ev.data = {{"n", rec.n}};
    if (!commit_iteration(*store, l, rec, {ev})) _exit(5);
    if (n == 0 && ::write(ready, "w", 1) != 1) _exit(6);
  }
}

// Waits up to 60 s for the writer's byte; false if it did not come.
bool wait_for_byte(int fd) {
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, 60'000) != 1) return false;
  char c = 0;
  return ::read(fd, &c, 1) == 1;
}

}  // namespace

TEST(StoreCrashTest, KillNineNeverLeavesAHalfWrittenPair) {
  std::mt19937 rng(std::random_device{}());
  loopr::testing::TempDir dir;
  std::string path = (dir / "state").string();
  int runs_with_writes = 0;
  std::size_t total_before = 0;
  for (int run = 0; run < 25; ++run) {
    int ready[2];
    ASSERT_EQ(pipe(ready), 0);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(ready[0]);
      writer(path, ready[1]);
    }
    close(ready[1]);
    // Every fifth run dies at a random moment of its life, opening the store included; the
    // others a random moment after their first write, so that (however loaded the machine)
    // most kills land mid-write.
    const bool anywhere = run % 5 == 0;
    if (!anywhere) {
      ASSERT_TRUE(wait_for_byte(ready[0])) << "the writer never wrote, run " << run;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(
        std::uniform_int_distribution<int>(anywhere ? 0 : 1, anywhere ? 120 : 40)(rng)));
    kill(pid, SIGKILL);
    close(ready[0]);
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
    // The summary index was written in the same batches: each summary is its record's.
    auto counts = store->count_by_status();  // read from the index (nothing listed yet)
    ASSERT_TRUE(counts.ok());
    auto records = store->list_loops();
    auto summaries = store->list_loop_summaries();
    ASSERT_TRUE(records.ok() && summaries.ok());
    ASSERT_EQ(summaries->size(), records->size()) << "run " << run;
    for (std::size_t k = 0; k < records->size(); ++k)
      ASSERT_EQ(to_store_json((*summaries)[k]), to_store_json(loop_summary((*records)[k])))
          << "run " << run;
    EXPECT_EQ(counts->count(LoopStatus::pending) ? counts->at(LoopStatus::pending) : 0,
              records->size());
    auto events = store->events_since(0, 10'000'000);
    ASSERT_TRUE(events.ok());
    ASSERT_EQ(events->size(), total) << "events and iterations disagree in run " << run;
    if (total > total_before) ++runs_with_writes;
    if (!anywhere) {
      EXPECT_GT(total, total_before) << "run " << run << " wrote, the store lost it";
    }
    total_before = total;
  }
  EXPECT_GE(runs_with_writes, 20) << "the writer should have written before most kills";
}
