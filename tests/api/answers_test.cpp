// The plan and web routes' answers: each written by `to_json` exactly as src/daemon/API.md has
// it and read back unchanged; what an older or a hostile daemon sends (missing, mistyped or
// unknown values) reads as defaults and never throws.
#include <gtest/gtest.h>

#include <loopr/api/answers.hpp>

using namespace loopr;
using namespace loopr::api;
using nlohmann::json;

TEST(AnswerViewsTest, AnErrorIsItsMessage) {
  EXPECT_EQ(to_json(ErrorView{"no loop 9 (see `loopr list --all`)"}),
            json::parse(R"js({"error":"no loop 9 (see `loopr list --all`)"})js"));
  EXPECT_EQ(error_from_json(json::parse(R"({"error":"busy"})")).error, "busy");
EXPECT_EQ(error_from_json(json::parse(R"({"error":{"message":"busy"}})")).error, "");
EXPECT_EQ(error_from_json(json::parse(R"("busy")")).error, "");
}

TEST(AnswerViewsTest, APlanMadeIsItsId) {
  EXPECT_EQ(to_json(PlanCreated{"007"}), json::parse(R"({"id":"007"})"));
  EXPECT_EQ(plan_created_from_json(json::parse(R"({"id":"007"})")).id, "007");
  EXPECT_EQ(plan_created_from_json(json::parse(R"({"id":7})")).id, "");
  EXPECT_EQ(plan_created_from_json(json::parse(R"(["007"])")).id, "");
}

TEST(AnswerViewsTest, AMergeIntoTheBaseAndAPushToAPullRequestAreTheDocumentsOfApiMd) {
  const json merged = json::parse(R"({"id":"001","merged":true,"sha":"abc","base_branch":"main"})");
  MergeView m = merge_from_json(merged);
  EXPECT_TRUE(m.merged);
  EXPECT_EQ(m.sha, "abc");
  EXPECT_EQ(m.base_branch, "main");
  EXPECT_FALSE(m.pr.has_value());
  EXPECT_EQ(to_json(m), merged);

  const json pushed = json::parse(R"({"id":"001","merged":false,"sha":"def","base_branch":"main",
      "pr":{"number":12,"url":"https://forge.example/o/r/pull/12","state":"merged"}})");
  m = merge_from_json(pushed);
  ASSERT_TRUE(m.pr.has_value());
  EXPECT_EQ(m.pr->number, 12);
  EXPECT_EQ(m.pr->url, "https://forge.example/o/r/pull/12");
  EXPECT_EQ(m.pr->state, PullRequestState::merged);
  EXPECT_EQ(to_json(m), pushed);
  // A PR whose state the daemon does not know yet is written as open.
  m.pr->state = PullRequestState::none;
  EXPECT_EQ(to_json(m)["pr"]["state"], "open");
}

TEST(AnswerViewsTest, AMergeAnswerFromAnOlderOrHostileDaemonReadsAsDefaults) {
  // An older daemon wrote no PR state: the PR was open.
  MergeView m = merge_from_json(json::parse(R"({"pr":{"number":3,"url":"u"}})"));
  ASSERT_TRUE(m.pr.has_value());
  EXPECT_EQ(m.pr->state, PullRequestState::open);
  // A word this loopr does not know is no state, never "merged".
  m = merge_from_json(json::parse(R"({"pr":{"number":3,"state":"MERGED!"}})"));
  EXPECT_EQ(m.pr->state, PullRequestState::none);
  // Mistyped fields read as defaults; a pr that is not an object is none.
  m = merge_from_json(json::parse(R"({"merged":"yes","sha":5,"pr":"12","base_branch":[]})"));
  EXPECT_FALSE(m.merged);
  EXPECT_EQ(m.sha, "");
  EXPECT_EQ(m.base_branch, "");
  EXPECT_FALSE(m.pr.has_value());
  EXPECT_FALSE(merge_from_json(json(nullptr)).pr.has_value());
}

TEST(AnswerViewsTest, APullRequestsReviewCommentsRoundTripAndSkipWhatIsNotAComment) {
  const json j = json::parse(R"({"id":"001","comments":[
      {"path":"src/a.c","line":3,"author":"rev","body":"rename it",
       "created_at":"2026-11-29T10:00:00Z","url":"https://forge.example/c/1"},
      {"path":"README.md","line":0,"author":"rev2","body":"why?","created_at":"","url":""}]})");
  PrCommentsView v = pr_comments_from_json(j);
  EXPECT_EQ(v.id, "001");
  ASSERT_EQ(v.comments.size(), 2u);
  EXPECT_EQ(v.comments[0].path, "src/a.c");
  EXPECT_EQ(v.comments[0].line, 3);
  EXPECT_EQ(v.comments[0].author, "rev");
  EXPECT_EQ(v.comments[0].body, "rename it");
  EXPECT_EQ(v.comments[1].line, 0);
  EXPECT_EQ(to_json(v), j);

  v = pr_comments_from_json(
      json::parse(R"({"comments":[7,"x",{"path":1,"line":"3","body":"kept"},null]})"));
  ASSERT_EQ(v.comments.size(), 1u);
  EXPECT_EQ(v.comments[0].path, "");
  EXPECT_EQ(v.comments[0].line, 0);
  EXPECT_EQ(v.comments[0].body, "kept");
  EXPECT_TRUE(pr_comments_from_json(json::parse(R"({"comments":{"a":1}})")).comments.empty());
}

TEST(AnswerViewsTest, TheWebUisAddressAndItsStop) {
  const json j =
      json::parse(R"({"url":"http://127.0.0.1:8123/?token=t","port":8123,"started":true})");
  WebStarted w = web_started_from_json(j);
  EXPECT_EQ(w.url, "http://127.0.0.1:8123/?token=t");
  EXPECT_EQ(w.port, 8123);
  EXPECT_TRUE(w.started);
  EXPECT_EQ(to_json(w), j);
  EXPECT_EQ(web_started_from_json(json::parse(R"({"url":1,"port":"80","started":1})")).url, "");
  EXPECT_EQ(web_started_from_json(json::parse(R"({"port":"80"})")).port, 0);

  EXPECT_EQ(to_json(WebStopped{true}), json::parse(R"({"stopped":true})"));
  EXPECT_TRUE(web_stopped_from_json(json::parse(R"({"stopped":true})")).stopped);
  EXPECT_FALSE(web_stopped_from_json(json::parse(R"({"stopped":"true"})")).stopped);
  EXPECT_FALSE(web_stopped_from_json(json::parse("[]")).stopped);
}
