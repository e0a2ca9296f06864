// Which loop types get which tools (tools::policy_for), the coordination tools included.
#include <gtest/gtest.h>

#include <loopr/tools/tool_router.hpp>

using namespace loopr;
using loopr::tools::policy_for;

TEST(CoordinationToolsTest, CoordinationToolsPerLoopType) {
  Config c;
  for (LoopType t : kAllLoopTypes) {
    auto p = policy_for(t, c, "a.md");
    EXPECT_TRUE(p.allowed.count("ask_user")) << to_string(t);
    EXPECT_EQ(p.allowed.count("share_note") > 0, t != LoopType::plan) << to_string(t);
    EXPECT_EQ(p.allowed.count("run_command") > 0, t == LoopType::code) << to_string(t);
  }
  c.loops[LoopType::code].tools = {"read_file", "write_file"};
  auto narrowed = policy_for(LoopType::code, c, "");
  EXPECT_FALSE(narrowed.allowed.count("share_note"));
  EXPECT_FALSE(narrowed.allowed.count("ask_user"));
}

TEST(CoordinationToolsTest, TheSchemasOfTheCoordinationToolsAreShippedAndTheRouterRefersThemOn) {
  bool share = false, ask = false;
  for (const auto& d : tools::tool_definitions()) {
    if (d.name == "share_note") share = d.input_schema["required"] == nlohmann::json{"text"};
    if (d.name == "ask_user") ask = d.input_schema["required"] == nlohmann::json{"question"};
  }
  EXPECT_TRUE(share);
  EXPECT_TRUE(ask);
}
