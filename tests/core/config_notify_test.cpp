// The coordination keys of the config: `notify` commands, `limits.notes_bytes`,
// `limits.notify_cost_fraction`, and the coordination tools in `loops.<type>.tools`.
#include <gtest/gtest.h>

#include <loopr/core/config.hpp>

#include "support/config_errors.hpp"

using namespace loopr;
using namespace std::chrono_literals;

namespace {

std::string error_of(const std::string& yaml) { return loopr::testing::config_error_of(yaml); }

}  // namespace

TEST(ConfigNotifyTest, DefaultsHaveNoCommandsAndABudgetForNotes) {
  Config c;
  EXPECT_TRUE(c.notify.empty());
  EXPECT_EQ(c.limits.notes_bytes, 4096u);
  EXPECT_DOUBLE_EQ(c.limits.notify_cost_fraction, 0.8);
}

TEST(ConfigNotifyTest, ReadsCommandsEventsAndTimeouts) {
  auto c = parse_config(
      "notify:\n"
      "  - command: notify-send loopr \"$LOOPR_EVENT\"\n"
      "    events: [awaiting_approval, awaiting_answer]\n"
      "  - command: printf '\\a'\n"
      "    timeout: 2s\n"
      "limits:\n  notes_bytes: 100\n  notify_cost_fraction: 0.5\n",
      "c.yml");
  ASSERT_TRUE(c.ok()) << c.error().message;
  ASSERT_EQ(c->notify.size(), 2u);
  EXPECT_EQ(c->notify[0].command, "notify-send loopr \"$LOOPR_EVENT\"");
  EXPECT_EQ(c->notify[0].events,
            (std::vector<std::string>{"awaiting_approval", "awaiting_answer"}));
  EXPECT_EQ(c->notify[0].timeout, 10s);
  EXPECT_TRUE(c->notify[1].events.empty());  // every event
  EXPECT_EQ(c->notify[1].timeout, 2s);
  EXPECT_EQ(c->limits.notes_bytes, 100u);
  EXPECT_DOUBLE_EQ(c->limits.notify_cost_fraction, 0.5);
}

TEST(ConfigNotifyTest, BadEntriesNameTheKeyAndLine) {
  std::string e = error_of("notify:\n  - command: x\n    events: [tree_done]\n");
  EXPECT_NE(e.find("notify[0].events"), std::string::npos) << e;
  EXPECT_NE(e.find("unknown event \"tree_done\""), std::string::npos) << e;
  EXPECT_NE(e.find(":3:"), std::string::npos) << e;
  e = error_of("notify:\n  - events: [blocked]\n");
  EXPECT_NE(e.find("needs a `command`"), std::string::npos) << e;
  e = error_of("notify:\n  - command: x\n    when: now\n");
  EXPECT_NE(e.find("unknown key"), std::string::npos) << e;
  e = error_of("notify: notify-send\n");
  EXPECT_NE(e.find("expected a list"), std::string::npos) << e;
  e = error_of("notify:\n  - command: x\n    timeout: soon\n");
  EXPECT_NE(e.find("bad duration"), std::string::npos) << e;
  e = error_of("limits:\n  notify_cost_fraction: 2\n");
  EXPECT_NE(e.find("between 0 and 1"), std::string::npos) << e;
}

TEST(ConfigNotifyTest, CoordinationToolsNarrowLikeTheOthers) {
  auto c = parse_config("loops:\n  code: {tools: [read_file, share_note, ask_user]}\n", "c.yml");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->loop(LoopType::code).tools.size(), 3u);
  std::string e = error_of("loops:\n  plan: {tools: [read_file, share_note]}\n");
  EXPECT_NE(e.find("share_note is not available to plan loops"), std::string::npos) << e;
}
