// An iteration record's details: typed where the engine makes them, stored under the key names
// earlier loopr wrote, read back as they were (store/records.cpp).
#include <gtest/gtest.h>

#include <loopr/store/task_store.hpp>

using namespace loopr;
using nlohmann::json;

namespace {

// A record's details as the engine wrote them before they were typed (a reviewed iteration that
// changed the harness, on a cluster, with a subscription login's receipt).
constexpr const char* kStoredDetails = R"({
  "turns": 7, "tool_calls": 12, "end": 1, "commit": "0123456789abcdef0123456789abcdef01234567",
  "validation_command": "make test", "model_ms": 4100, "validation_ms": 900, "state_ms": 3,
  "checkpoint_ms": 11, "uncached_cost_usd": 0.42, "timed_out": false, "end_reason": "max_iterations",
  "notional_cost_usd": 0.07,
  "protected": [{"path": "check.sh", "change": "modified", "role": "harness"},
                {"path": "tests/test_a.py", "change": "deleted", "role": "test"}],
  "review": {"verdict": "fail", "summary": "no test for the name", "model": "claude-x",
             "cost_usd": 0.01, "attempts": 2, "input_tokens": 1500, "output_tokens": 90},
  "jobs": ["4711", "4712"]
})";

}  // namespace

TEST(IterationDetailsTest, ARecordWrittenBeforeTheTypesReadsAsItsFieldsAndWritesBackTheSame) {
  const json stored = json::parse(kStoredDetails);
  IterationDetails d = iteration_details_from_json(stored);
  EXPECT_EQ(d.turns, 7);
  EXPECT_EQ(d.tool_calls, 12);
  EXPECT_EQ(d.end, 1);
  EXPECT_EQ(d.validation_command, "make test");
  EXPECT_EQ(d.checkpoint_ms, 11);
  ASSERT_TRUE(d.uncached_cost_usd);
  EXPECT_DOUBLE_EQ(*d.uncached_cost_usd, 0.42);
  EXPECT_DOUBLE_EQ(d.uncached_or(0.1), 0.42);
  EXPECT_EQ(d.end_reason, "max_iterations");
  ASSERT_TRUE(d.notional_cost_usd);
  ASSERT_EQ(d.protected_files.size(), 2u);
  EXPECT_EQ(d.protected_files[1], (ProtectedChange{"tests/test_a.py", "deleted", "test"}));
  ASSERT_TRUE(d.review);
  EXPECT_EQ(d.review->verdict, "fail");
  EXPECT_EQ(d.review->attempts, 2);
  EXPECT_EQ(d.review->output_tokens, 90);
  EXPECT_EQ(d.jobs, (std::vector<std::string>{"4711", "4712"}));
  EXPECT_TRUE(d.other.empty()) << d.other.dump();
  EXPECT_EQ(to_json(d), stored);
}

TEST(IterationDetailsTest, AnOlderRecordsMissingKeysReadAsDefaultsAndItsCostStandsForTheUncached) {
  IterationDetails d = iteration_details_from_json(json::parse(R"({"turns": 2})"));
  EXPECT_EQ(d.turns, 2);
  EXPECT_FALSE(d.uncached_cost_usd);
  EXPECT_DOUBLE_EQ(d.uncached_or(0.25), 0.25);  // a record from before prompt caching
  EXPECT_FALSE(d.review);
  EXPECT_FALSE(d.notional_cost_usd);
  EXPECT_TRUE(d.protected_files.empty());
  const json written = to_json(d);
  EXPECT_FALSE(written.contains("uncached_cost_usd")) << written.dump();
  EXPECT_FALSE(written.contains("review")) << written.dump();
  EXPECT_FALSE(written.contains("protected")) << written.dump();
  EXPECT_FALSE(written.contains("end_reason")) << written.dump();
}

// A key a newer loopr wrote is kept and written back; a field of another type (a damaged or
// hand-edited record) reads as its default, never as an error, and is written back as it was.
TEST(IterationDetailsTest, UnknownKeysAreKeptAndMistypedFieldsReadAsDefaults) {
  IterationDetails d = iteration_details_from_json(json::parse(R"({
    "turns": "seven", "timed_out": 1, "review": [], "protected": [3, {"path": "a"}],
    "jobs": ["1", 2], "sandbox_ms": 5, "uncached_cost_usd": "cheap"})"));
  EXPECT_EQ(d.turns, 0);
  EXPECT_FALSE(d.timed_out);
  EXPECT_FALSE(d.review);
  ASSERT_EQ(d.protected_files.size(), 1u);
  EXPECT_EQ(d.protected_files[0].path, "a");
  EXPECT_EQ(d.jobs, (std::vector<std::string>{"1"}));
  EXPECT_FALSE(d.uncached_cost_usd);
  EXPECT_EQ(d.other,
            json::parse(R"({"sandbox_ms": 5, "review": [], "uncached_cost_usd": "cheap"})"))
      << d.other.dump();
  const json back = to_json(d);
  EXPECT_EQ(back["sandbox_ms"], 5);
  EXPECT_EQ(back["review"], json::array());
  EXPECT_EQ(back["turns"], 0);
  EXPECT_EQ(iteration_details_from_json(json("not an object")).turns, 0);
}

TEST(IterationDetailsTest, TheRecordCarriesItsDetailsThroughItsCodec) {
  IterationRecord r;
  r.loop_id = "code-001";
  r.n = 3;
  r.details = iteration_details_from_json(json::parse(kStoredDetails));
  auto back = iteration_from_json(to_json(r));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(to_json(back->details), json::parse(kStoredDetails));
  // A record with no details (the earliest stores) reads with empty ones.
  json bare = to_json(r);
  bare.erase("details");
  auto old = iteration_from_json(bare);
  ASSERT_TRUE(old.ok());
  EXPECT_EQ(old->details.turns, 0);
  EXPECT_FALSE(old->details.review);
}
