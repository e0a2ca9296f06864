#include <gtest/gtest.h>

#include <loopr/core/loop.hpp>

using namespace loopr;

static Loop sample_loop() {
  Loop l;
  l.id = "001-002";
  l.type = LoopType::spec;
  l.parent_id = "001";
  l.plan_id = "001";
  l.index = 2;
  l.task = "db schema";
  l.input_artifact = ".loopr/plans/001-add-oauth.plan.md";
  l.output_artifacts = {".loopr/specs/001-002-db-schema.spec.md"};
  l.prompt_template = "spec";
  l.validation_command = "";
  l.max_iterations = 5;
  l.worktree = "/repo/.loopr/worktrees/001-002";
  l.branch = "loopr/001/001-002";
  l.iteration = 3;
  l.status = LoopStatus::blocked;
  l.status_reason = "conflict in a.txt";
  l.progress = "iteration 2 failed: ## Overview missing";
  l.unknown_marks = {{"blocked_paths", {"a.txt"}}};
  l.usage = {100, 200, 30, 40, 0.125};
  l.created_at = 1763700000123;
  l.updated_at = 1763700005456;
  l.version = 7;
  return l;
}

TEST(LoopJsonTest, StoreJsonRoundTripsEveryField) {
  Loop a = sample_loop();
  auto b = loop_from_store_json(nlohmann::json::parse(to_store_json(a).dump()));
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_EQ(to_store_json(*b), to_store_json(a));
  EXPECT_EQ(b->status, LoopStatus::blocked);
  EXPECT_EQ(b->unknown_marks["blocked_paths"][0], "a.txt");
  EXPECT_EQ(b->usage.cache_write_tokens, 40);
  EXPECT_EQ(b->version, 7u);
}

TEST(LoopJsonTest, ApiJsonHasExactlyTheInterfaceFields) {
  nlohmann::json j = to_api_json(sample_loop());
  std::set<std::string> keys;
  for (auto& [k, v] : j.items()) keys.insert(k);
  std::set<std::string> expected = {
      "id",         "type",         "status",        "parent_id", "iteration", "max_iterations",
      "cost_usd",   "input_tokens", "output_tokens", "artifacts", "worktree",  "branch",
      "created_at", "updated_at",   "end_reason"};
  EXPECT_EQ(keys, expected);
  EXPECT_EQ(j["status"], "blocked");
  EXPECT_EQ(j["type"], "spec");
  EXPECT_EQ(j["parent_id"], "001");
  EXPECT_EQ(j["iteration"], 3);
  EXPECT_DOUBLE_EQ(j["cost_usd"].get<double>(), 0.125);
  EXPECT_EQ(j["artifacts"][0], ".loopr/specs/001-002-db-schema.spec.md");
  EXPECT_EQ(j["created_at"], "2025-11-21T04:40:00.123Z");
}

TEST(LoopJsonTest, PlanHasNullParent) {
  Loop l = sample_loop();
  l.parent_id.clear();
  l.worktree.clear();
  EXPECT_TRUE(to_api_json(l)["parent_id"].is_null());
  EXPECT_TRUE(to_api_json(l)["worktree"].is_null());
}

TEST(LoopJsonTest, MalformedRecordIsAnErrorNotAnException) {
  EXPECT_FALSE(loop_from_store_json(nlohmann::json::object()).ok());
  EXPECT_FALSE(loop_from_store_json({{"id", "001"}, {"type", "epic"}, {"status", "pending"}}).ok());
  EXPECT_FALSE(loop_from_store_json({{"id", 5}, {"type", "plan"}, {"status", "pending"}}).ok());
}

TEST(LoopJsonTest, TimestampsRoundTrip) {
  TimestampMs t = 1763714539123;
  EXPECT_EQ(parse_timestamp(format_timestamp(t)), t);
  EXPECT_FALSE(parse_timestamp("yesterday").has_value());
}
