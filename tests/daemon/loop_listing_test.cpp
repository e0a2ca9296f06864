// GET /v1/loops's query and pages as pure rules (the daemon tests run them over a real socket).
#include "daemon/loop_listing.hpp"

#include <gtest/gtest.h>

#include <tuple>

#include <loopr/core/ids.hpp>

using namespace loopr;
using namespace loopr::daemon;

namespace {

Loop loop(const std::string& id, LoopStatus status) {
  Loop l;
  l.id = id;
  l.type = *type_of_id(id);
  l.plan_id = root_plan_id(id);
  l.status = status;
  return l;
}

std::vector<Loop> two_trees() {
  return {loop("code-001-001-001", LoopStatus::running),
          loop("001", LoopStatus::complete),
          loop("002-001", LoopStatus::pending),
          loop("001-001-001", LoopStatus::complete),
          loop("fix-001-001", LoopStatus::running),
          loop("001-001", LoopStatus::complete),
          loop("002", LoopStatus::complete),
          loop("001-002", LoopStatus::invalidated)};
}

std::vector<std::string> ids(const ListPage& page) {
  std::vector<std::string> out;
  for (const Loop* l : page.rows) out.push_back(l->id);
  return out;
}

ListQuery parsed(std::map<std::string, std::string> q) {
  auto r = parse_list_query(q);
  EXPECT_TRUE(r) << (r ? "" : r.error().message);
  return r ? *r : ListQuery{};
}

std::vector<Loop> kept(const ListQuery& q) {
  std::vector<Loop> out;
  for (Loop& l : two_trees())
    if (q.keeps(l)) out.push_back(std::move(l));
  return out;
}

}  // namespace

TEST(LoopListingTest, WithoutFiltersEveryLoopButTheInvalidatedInTreeOrder) {
  auto q = parsed({});
  auto matched = kept(q);
  auto page = page_of(matched, q);
  EXPECT_EQ(ids(page),
            (std::vector<std::string>{"001", "001-001", "001-001-001", "code-001-001-001",
                                      "fix-001-001", "002", "002-001"}));
  EXPECT_TRUE(page.next.empty());
  EXPECT_FALSE(q.filtered());
  EXPECT_TRUE(q.tree_fields());
  EXPECT_FALSE(parsed({{"view", "interface"}}).tree_fields());
  auto all = parsed({{"all", "true"}});
  auto every = kept(all);
  EXPECT_EQ(page_of(every, all).rows.size(), 8u);
}

TEST(LoopListingTest, StatusTypeAndPlanFilterTogether) {
  auto q = parsed({{"status", "running,pending"}});
  auto matched = kept(q);
  EXPECT_EQ(ids(page_of(matched, q)),
            (std::vector<std::string>{"code-001-001-001", "fix-001-001", "002-001"}));
  EXPECT_TRUE(q.filtered());
  auto code = parsed({{"type", "code"}, {"plan", "001"}});
  auto codes = kept(code);
  EXPECT_EQ(ids(page_of(codes, code)),
            (std::vector<std::string>{"code-001-001-001", "fix-001-001"}));
  auto invalidated = parsed({{"status", "invalidated"}});
  auto gone = kept(invalidated);
  EXPECT_EQ(ids(page_of(gone, invalidated)), (std::vector<std::string>{"001-002"}));
  auto tree = parsed({{"plan", "002"}});
  auto two = kept(tree);
  EXPECT_EQ(ids(page_of(two, tree)), (std::vector<std::string>{"002", "002-001"}));
}

TEST(LoopListingTest, PagesFollowEachOtherWithNothingLostOrRepeated) {
  auto q = parsed({{"limit", "3"}});
  std::vector<std::string> seen;
  for (int pages = 0; pages < 10; ++pages) {
    auto matched = kept(q);
    auto page = page_of(matched, q);
    for (const auto& id : ids(page)) seen.push_back(id);
    if (page.next.empty()) break;
    EXPECT_EQ(page.rows.size(), 3u);
    q.after = page.next;
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"001", "001-001", "001-001-001", "code-001-001-001",
                                            "fix-001-001", "002", "002-001"}));
}

TEST(LoopListingTest, EachPlansTreeIsOneRunOfRecordsInTreeOrder) {
  auto all = two_trees();
  sort_tree_order(all);
  auto spans = tree_spans(all);
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_EQ(spans["001"].size(), 6u);
  EXPECT_EQ(spans["001"].front().id, "001");
  EXPECT_EQ(spans["001"].back().id, "fix-001-001");
  EXPECT_EQ(spans["002"].size(), 2u);
}

TEST(LoopListingTest, BadParametersSayWhatTheyTake) {
  for (auto [key, value, says] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"status", "runing", "unknown status `runing`"},
           {"status", ",", "status= is empty"},
           {"type", "task", "unknown type `task`"},
           {"plan", "001-001", "plan= takes a plan's id"},
           {"after", "../etc", "after= takes a loop id"},
           {"limit", "0", "limit= takes a number from 1"},
           {"limit", "12x", "limit= takes a number from 1"},
           {"limit", "-1", "limit= takes a number from 1"},
           {"view", "terse", "view= takes `full`"}}) {
    auto r = parse_list_query({{key, value}});
    ASSERT_FALSE(r) << key << "=" << value;
    EXPECT_EQ(r.error().code, ErrorCode::invalid_argument);
    EXPECT_NE(r.error().message.find(says), std::string::npos) << r.error().message;
  }
}
