// The forecast's history (manager::history_samples): the 50 newest finished loops of each type
// from other trees, with each spec's phases and each loop's iterations, picked in passes over
// the store's kept summaries that copy none of them (issue 47 item 6: a daemon that ran a
// thousand trees copied ~5,000 summaries for every plan it forecast).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include <loopr/manager/forecast.hpp>
#include <loopr/store/record_probe.hpp>
#include <loopr/store/task_store.hpp>

#include "manager/tree_fixture.hpp"

using namespace loopr;
using namespace loopr::manager;
using namespace loopr::manager::test;

namespace {

constexpr int kTrees = 80;  // more finished loops of each type than the 50 a forecast takes

std::string tree_id(int t) {
  std::string n = std::to_string(t);
  return std::string(3 - n.size(), '0') + n;
}

// The tree an id is of: "NNN…" or "code-NNN…".
int tree_of(const std::string& id) {
  return std::stoi(id.substr(id.rfind("code-", 0) == 0 ? 5 : 0, 3));
}

// Tree t: a plan, a spec, two phases (the second invalidated in even trees) and a code loop per
// phase. Each loop's cost names it. Trees did not finish in id order (a tree's time is a
// permutation of t), and a tree's two code loops finished in the same millisecond: the pass
// must not lean on the store's id order, and equal times are settled by id.
struct History {
  std::unique_ptr<TaskStore> store = TaskStore::in_memory();
  std::map<double, std::string> id_of_cost;
  std::map<std::string, TimestampMs> time_of;
  std::vector<Loop> all;

  History() {
    WriteSet set;
    for (int t = 1; t <= kTrees + 1; ++t) {  // tree kTrees + 1 is the plan being forecast
      std::string p = tree_id(t);
      TimestampMs finished_at = 1'000'000 + 1000 * ((t * 37) % 83);
      for (std::string id : {p, p + "-001", p + "-001-001", p + "-001-002",
                             "code-" + p + "-001-001", "code-" + p + "-001-002"}) {
        Loop l = finished(id, 1 + t % 3);
        if (id == p + "-001-002" && t % 2 == 0) l.status = LoopStatus::invalidated;
        l.usage.cost_usd = t + 0.01 * static_cast<double>(all.size() % 6);
        l.usage.input_tokens = 1000 * t;
        l.updated_at = finished_at + (l.type == LoopType::phase && id.back() == '2' ? 1 : 0);
        id_of_cost[l.usage.cost_usd] = id;
        time_of[id] = l.updated_at;
        all.push_back(l);
        set.creates.push_back(l);
        IterationRecord it;
        it.loop_id = id;
        it.n = 1;
        it.duration_ms = 100 * t;
        it.details.turns = 3;
        set.iterations.push_back(it);
      }
    }
    auto created = store->apply(std::move(set));
    EXPECT_TRUE(created.ok()) << created.error().message;
    // Creating stamps every loop with now: put each one's own time back, as a store that ran
    // the trees one after another holds them.
    WriteSet back;
    back.touch = false;
    for (Loop l : created->loops) {
      l.updated_at = time_of.at(l.id);
      back.updates.push_back(std::move(l));
    }
    auto put_back = store->apply(std::move(back));
    EXPECT_TRUE(put_back.ok()) << put_back.error().message;
  }
};

}  // namespace

TEST(HistorySamplesTest, TheNewestFiftyFinishedLoopsOfEachOtherTreeWithPhasesAndIterations) {
  History h;
  const std::string plan = tree_id(kTrees + 1);
  auto samples = history_samples(*h.store, plan);

  // What the old copy-everything pass picked: sort every finished loop of other trees newest
  // first, take 50 per type.
  std::vector<Loop> finished_loops;
  for (const Loop& l : h.all)
    if (l.status == LoopStatus::complete && l.plan_id != plan && l.type != LoopType::plan)
      finished_loops.push_back(l);
  std::sort(finished_loops.begin(), finished_loops.end(), [](const Loop& a, const Loop& b) {
    return a.updated_at != b.updated_at ? a.updated_at > b.updated_at : a.id > b.id;
  });
  std::map<LoopType, int> taken;
  std::vector<std::string> expected;
  for (const Loop& l : finished_loops)
    if (taken[l.type]++ < 50) expected.push_back(l.id);

  std::vector<std::string> got;
  for (const LoopSample& s : samples) got.push_back(h.id_of_cost.at(s.usage.cost_usd));
  EXPECT_EQ(got, expected) << "newest first, 50 of each type";
  ASSERT_EQ(samples.size(), 150u);

  for (const LoopSample& s : samples) {
    const std::string& id = h.id_of_cost.at(s.usage.cost_usd);
    int t = tree_of(id);
    EXPECT_NE(t, kTrees + 1) << id << ": the forecast plan's own tree is left out";
    EXPECT_EQ(s.usage.input_tokens, 1000 * t) << id;
    EXPECT_EQ(s.iterations, 1 + t % 3) << id;
    EXPECT_EQ(s.duration_ms, 100 * t) << id << ": its iterations' time";
    EXPECT_EQ(s.model_calls, 3) << id;
    if (s.type == LoopType::spec)
      EXPECT_EQ(s.children, t % 2 == 0 ? 1 : 2) << id << ": its phases, the invalidated one not";
    else
      EXPECT_EQ(s.children, -1) << id;
  }
}

TEST(HistorySamplesTest, ItCopiesNoSummaryOutOfTheStore) {
  History h;
  // The daemon's start lists every summary once (recovery): from then on the store keeps them,
  // and a listing hands out copies of what it is asked for.
  ASSERT_TRUE(h.store->list_loop_summaries().ok());
  for (std::string id : {"code-001-001-001", "code-080-001-001", "080-001", "080-001-001"}) {
    watch_record(*h.store, id);
    auto samples = history_samples(*h.store, tree_id(kTrees + 1));
    EXPECT_EQ(samples.size(), 150u);
    RecordCounts counts = record_counts(*h.store);
    EXPECT_EQ(counts.listed, 0u) << id << ": a pass over the summaries, not a copy of them";
    EXPECT_EQ(counts.reads, 0u) << id << ": nor a read of its record";
    unwatch_record(*h.store);
  }
  // The probe sees a listing's copy.
  watch_record(*h.store, "080-001");
  ASSERT_TRUE(h.store->list_loop_summaries().ok());
  EXPECT_EQ(record_counts(*h.store).listed, 1u);
  unwatch_record(*h.store);
}
