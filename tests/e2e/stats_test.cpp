// `loopr stats` through the real binary: what a tree spent, per plan and in total, from the
// daemon while it runs and from the store itself when it does not.
#include "e2e/cli_fixture.hpp"

using namespace loopr::testing;
using nlohmann::json;

TEST_F(CliE2E, StatsTotalsWhatTheTreesSpentWithAndWithoutTheDaemon) {
  make_repo(CliScript{{"alpha", "beta"}});
  CliRun none = loopr("stats");
  ASSERT_EQ(none.exit_code, 0) << none.err;
  EXPECT_NE(none.out.find("nothing spent yet"), std::string::npos) << none.out;
  EXPECT_FALSE(std::filesystem::exists(dir / ".loopr/state/CURRENT")) << "a read made a store";

  ASSERT_EQ(loopr("submit --wait --yes 'Add two things'").exit_code, 0);
  ASSERT_EQ(loopr("submit 'Not this one'").exit_code, 0);
  ASSERT_TRUE(wait_status("002", "awaiting_approval"));
  ASSERT_EQ(loopr("reject 002 --reason no").exit_code, 0);
  double listed = 0;
  long long tokens_in = 0;
  for (auto& [id, l] : loops()) {
    listed += l["cost_usd"].get<double>();
    tokens_in += l["input_tokens"].get<long long>();
  }

  CliRun live = loopr("--json stats");
  ASSERT_EQ(live.exit_code, 0) << live.err;
  json s = live.json();
  ASSERT_EQ(s["plans"].size(), 2u) << s.dump();
  const json& first = s["plans"][0];
  EXPECT_EQ(first["id"], "001");
  EXPECT_EQ(first["task"], "Add two things");
  EXPECT_EQ(first["tree_verdict"], "merged");
  EXPECT_EQ(first["loops"]["complete"], 7);
  EXPECT_EQ(first["iterations"], 7);
  EXPECT_EQ(s["plans"][1]["tree_verdict"], "failed");
  EXPECT_EQ(s["plans"][1]["loops"]["failed"], 1);
  const json& total = s["total"];
  EXPECT_NEAR(total["cost_usd"].get<double>(), listed, 1e-9);
  EXPECT_EQ(total["input_tokens"], tokens_in);
  // The scripted model reports 1000 input tokens per reply: the calls counted are the replies.
  EXPECT_EQ(total["input_tokens"].get<long long>(), 1000 * total["model_calls"].get<long long>());
  EXPECT_EQ(total["loops"]["total"], 8);
  EXPECT_GT(total["wall_ms"].get<long long>(), 0);

  CliRun text = loopr("stats");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("001"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("merged"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("total"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("7 complete"), std::string::npos) << text.out;

  // No daemon: the same numbers, read from the store.
  ASSERT_EQ(loopr("daemon stop").exit_code, 0);
  CliRun offline = loopr("--json stats");
  ASSERT_EQ(offline.exit_code, 0) << offline.err;
  json o = offline.json();
  EXPECT_EQ(o["plans"], s["plans"]) << o.dump();
  EXPECT_EQ(o["total"]["cost_usd"], total["cost_usd"]);
  EXPECT_EQ(o["total"]["model_calls"], total["model_calls"]);
  CliRun recent = loopr("--json stats --since 1h");
  ASSERT_EQ(recent.exit_code, 0) << recent.err;
  EXPECT_EQ(recent.json()["total"]["iterations"], total["iterations"]);
  EXPECT_TRUE(recent.json()["since"].is_string());
  EXPECT_EQ(loopr("stats --since soon").exit_code, 2);
}
