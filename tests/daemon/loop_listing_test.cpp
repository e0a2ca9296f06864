// GET /v1/loops's query and pages as pure rules (the daemon tests run them over a real socket).
#include "daemon/loop_listing.hpp"

#include <gtest/gtest.h>

#include <tuple>

#include <loopr/core/ids.hpp>

#include "daemon/api.hpp"

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

// `view=interface` is written without building nlohmann objects: it must be the bytes the
// objects would dump to (INTERFACE.md's shape, the open question, no answer), for every kind of
// text a loop holds (quotes, control characters, UTF-8, invalid UTF-8) and every number.
TEST(LoopListingTest, TheInterfacePageIsWhatTheJsonObjectsWouldDumpTo) {
  std::vector<Loop> loops;
  const char* texts[] = {"",
                         "plain",
                         "say \"hi\"\\n",
                         "tab\there\nline\x01",
                         "caf\xc3\xa9 \xe2\x9c\x93",
                         "bad \xff\xfe utf-8 \xc3",
                         "\x7f del"};
  const double costs[] = {0, 0.12, 0.1 + 0.2, 1e-7, 12345.678, 3.0};
  int k = 0;
  for (const char* text : texts) {
    for (LoopStatus status :
         {LoopStatus::running, LoopStatus::awaiting_answer, LoopStatus::stopped}) {
      Loop l = loop(k % 2 ? "001-00" + std::to_string(k % 9 + 1) : "00" + std::to_string(k % 9 + 1),
                    status);
      l.parent_id = k % 2 ? l.plan_id : "";
      l.output_artifacts =
          k % 3 ? std::vector<std::string>{text, "b.md"} : std::vector<std::string>{};
      l.branch = text;
      l.worktree = k % 2 ? text : "";
      l.status_reason = text;
      l.run.question = k % 4 == 0 ? text : "";
      l.run.answer = "an answer";
      l.end_reason = status == LoopStatus::stopped ? EndReason::stopped_by_user : EndReason::none;
      l.usage.cost_usd = costs[k % std::size(costs)];
      l.usage.input_tokens = 1'000'000'000'000LL + k;
      l.usage.output_tokens = k;
      l.iteration = k;
      l.max_iterations = 40;
      l.created_at = 1795000000000 + k;
      l.updated_at = k == 0 ? 0 : 1795000000999 + k;
      loops.push_back(std::move(l));
      ++k;
    }
  }
  for (const std::string& next : {std::string(), std::string("001-003")}) {
    ListPage page;
    for (const Loop& l : loops) page.rows.push_back(&l);
    page.next = next;
    nlohmann::json rows = nlohmann::json::array();
    for (const Loop& l : loops) {
      nlohmann::json j = to_api_json(l);
      add_question_fields(j, l);
      j.erase("answer");
      rows.push_back(std::move(j));
    }
    nlohmann::json body{{"loops", std::move(rows)}};
    if (!next.empty()) body["next"] = next;
    EXPECT_EQ(interface_page_text(page),
              body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }
  EXPECT_EQ(interface_page_text(ListPage{}), "{\"loops\":[]}");
}
