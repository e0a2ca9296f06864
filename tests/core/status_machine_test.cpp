#include <gtest/gtest.h>

#include <set>
#include <utility>

#include <loopr/core/loop.hpp>

using namespace loopr;
using S = LoopStatus;

// The expected table, written out independently of the implementation's edge list.
static const std::set<std::pair<S, S>> kLegal = {
    {S::pending, S::running}, {S::pending, S::paused}, {S::pending, S::stopped}, {S::pending, S::failed},
    {S::pending, S::invalidated}, {S::pending, S::blocked},
    {S::running, S::pending}, {S::running, S::paused}, {S::running, S::rebasing}, {S::running, S::blocked},
    {S::running, S::awaiting_approval}, {S::running, S::complete}, {S::running, S::failed},
    {S::running, S::stopped}, {S::running, S::invalidated},
    {S::paused, S::running}, {S::paused, S::pending}, {S::paused, S::stopped}, {S::paused, S::invalidated},
    {S::rebasing, S::running}, {S::rebasing, S::pending}, {S::rebasing, S::blocked}, {S::rebasing, S::paused},
    {S::rebasing, S::stopped}, {S::rebasing, S::failed}, {S::rebasing, S::invalidated},
    {S::blocked, S::running}, {S::blocked, S::pending}, {S::blocked, S::rebasing}, {S::blocked, S::paused},
    {S::blocked, S::stopped}, {S::blocked, S::failed}, {S::blocked, S::invalidated}, {S::blocked, S::complete},
    {S::awaiting_approval, S::complete}, {S::awaiting_approval, S::failed}, {S::awaiting_approval, S::running},
    {S::awaiting_approval, S::stopped}, {S::awaiting_approval, S::invalidated},
    {S::running, S::awaiting_answer},
    {S::awaiting_answer, S::pending}, {S::awaiting_answer, S::paused}, {S::awaiting_answer, S::stopped},
    {S::awaiting_answer, S::failed}, {S::awaiting_answer, S::invalidated},
    {S::complete, S::running}, {S::complete, S::invalidated}, {S::complete, S::failed}, {S::complete, S::blocked},
    {S::failed, S::pending}, {S::failed, S::invalidated}, {S::failed, S::complete},
    {S::stopped, S::pending}, {S::stopped, S::invalidated},
};

TEST(StatusMachineTest, EveryPairIsLegalExactlyWhenTheTableSaysSo) {
  int legal = 0, illegal = 0;
  for (S from : kAllLoopStatuses) {
    for (S to : kAllLoopStatuses) {
      bool expected = kLegal.count({from, to}) > 0;
      EXPECT_EQ(transition_allowed(from, to), expected) << to_string(from) << " -> " << to_string(to);
      auto r = check_transition(from, to);
      EXPECT_EQ(r.ok(), expected);
      if (!expected) {
        EXPECT_EQ(r.error().code, ErrorCode::illegal_transition);
        EXPECT_NE(r.error().message.find(to_string(from)), std::string::npos);
        EXPECT_NE(r.error().message.find(to_string(to)), std::string::npos);
        ++illegal;
      } else {
        ++legal;
      }
    }
  }
  EXPECT_EQ(legal, static_cast<int>(kLegal.size()));
  EXPECT_EQ(legal + illegal, 121);
}

TEST(StatusMachineTest, InvalidatedIsFinal) {
  for (S to : kAllLoopStatuses) EXPECT_FALSE(transition_allowed(S::invalidated, to));
}

TEST(StatusMachineTest, IllegalTransitionLeavesTheLoopUnchanged) {
  Loop loop;
  loop.status = S::complete;
  loop.status_reason = "validation passed";
  auto r = loop.transition_to(S::paused, "pause");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(loop.status, S::complete);
  EXPECT_EQ(loop.status_reason, "validation passed");
  ASSERT_TRUE(loop.transition_to(S::invalidated, "plan iterated").ok());
  EXPECT_EQ(loop.status, S::invalidated);
  EXPECT_EQ(loop.status_reason, "plan iterated");
}

TEST(StatusMachineTest, TerminalStatuses) {
  std::set<S> terminal = {S::complete, S::failed, S::stopped, S::invalidated};
  for (S s : kAllLoopStatuses) EXPECT_EQ(is_terminal(s), terminal.count(s) > 0) << to_string(s);
}

TEST(StatusMachineTest, NamesRoundTrip) {
  for (S s : kAllLoopStatuses) EXPECT_EQ(parse_loop_status(to_string(s)), s);
  for (LoopType t : kAllLoopTypes) EXPECT_EQ(parse_loop_type(to_string(t)), t);
  EXPECT_FALSE(parse_loop_status("done").has_value());
  EXPECT_FALSE(parse_loop_type("Plan").has_value());
}
