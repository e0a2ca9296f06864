// Store throughput: loop updates/s and iteration appends/s (sync and non-sync writes), and the
// time to list 10,000 loops. Prints figures; run `build/store_bench [DIR]`.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

#include <loopr/core/ids.hpp>
#include <loopr/store/store_writes.hpp>
#include <loopr/store/task_store.hpp>

using namespace loopr;
using Clock = std::chrono::steady_clock;

static double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

static void bench(const std::string& dir, bool sync, int n) {
  std::filesystem::remove_all(dir);
  auto store = std::move(TaskStore::open(dir, {.sync = sync}).value());
  Loop loop;
  loop.id = "code-001-001-001";
  loop.type = LoopType::code;
  loop.progress = std::string(2000, 'p');  // a realistic record carries feedback text
  loop = *create_loop(*store, loop);

  auto t = Clock::now();
  for (int i = 0; i < n; ++i) {
    loop.iteration = i;
    loop = *update_loop(*store, loop);
  }
  double updates = n / seconds_since(t);

  t = Clock::now();
  for (int i = 0; i < n; ++i) {
    loop.iteration += 1;
    IterationRecord rec;
    rec.loop_id = loop.id;
    rec.n = loop.iteration;
    rec.status = IterationOutcome::failed;
    rec.output_excerpt = std::string(1000, 'o');
    Event ev;
    ev.loop_id = loop.id;
    ev.type = "iteration_finished";
    loop = *commit_iteration(*store, loop, rec, {ev});
  }
  double appends = n / seconds_since(t);
  std::printf("%-10s loop updates/s %10.0f   iteration appends/s (loop+record+event) %10.0f\n",
              sync ? "sync" : "no-sync", updates, appends);
}

int main(int argc, char** argv) {
  std::string base =
      argc > 1 ? argv[1] : (std::filesystem::temp_directory_path() / "loopr-store-bench").string();
  bench(base + "/sync", true, 2000);
  bench(base + "/nosync", false, 20000);

  std::string dir = base + "/list";
  std::filesystem::remove_all(dir);
  {
    auto store = std::move(TaskStore::open(dir, {.sync = false}).value());
    WriteSet set;
    for (int p = 1; p <= 100; ++p) {
      for (int c = 0; c < 100; ++c) {
        Loop l;
        l.id = c == 0 ? plan_id(p) : child_id(plan_id(p), LoopType::spec, c);
        l.type = c == 0 ? LoopType::plan : LoopType::spec;
        l.parent_id = c == 0 ? "" : plan_id(p);
        l.plan_id = plan_id(p);
        l.task = std::string(200, 't');
        l.progress = std::string(1000, 'p');
        set.creates.push_back(l);
      }
    }
    store->apply(std::move(set)).value();
    auto t = Clock::now();
    auto all = store->list_loops();
    std::printf("list 10,000 loops: %.1f ms (%zu loops)\n", seconds_since(t) * 1000, all->size());
    t = Clock::now();
    auto counts = store->count_by_status();
    std::printf("count_by_status of 10,000 loops: %.1f ms (%zu statuses)\n",
                seconds_since(t) * 1000, counts->size());
    t = Clock::now();
    auto kids = store->children("050");
    std::printf("children of one plan among 10,000 loops: %.2f ms (%zu loops)\n",
                seconds_since(t) * 1000, kids->size());
  }
  std::filesystem::remove_all(base);
  return 0;
}
