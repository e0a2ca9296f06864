#include <gtest/gtest.h>

#include <loopr/engine/feedback.hpp>

using namespace loopr::engine;

TEST(FeedbackTest, NewestInFullOlderAsOneLineEach) {
  std::vector<FeedbackEntry> entries;
  for (int i = 1; i <= 3; ++i)
    entries.push_back({i, loopr::FeedbackSource::validation, "summary " + std::to_string(i),
                       "full text " + std::to_string(i) + "\nline two"});
  std::string out = render_feedback(entries, 16 * 1024);
  EXPECT_NE(out.find("### Iteration 3 (validation)\n\nfull text 3\nline two"), std::string::npos)
      << out;
  EXPECT_NE(out.find("- Iteration 2 (validation): summary 2\n"), std::string::npos);
  EXPECT_NE(out.find("- Iteration 1 (validation): summary 1\n"), std::string::npos);
  EXPECT_EQ(out.find("full text 2"), std::string::npos);
  EXPECT_LT(out.find("Iteration 2"), out.find("Iteration 1"));  // newest first
}

TEST(FeedbackTest, StaysWithinTheBudget) {
  std::vector<FeedbackEntry> entries;
  for (int i = 1; i <= 2000; ++i)
    entries.push_back({i, loopr::FeedbackSource::validation, "failure number " + std::to_string(i),
                       std::string(50'000, 'x') + "END"});
  std::string out = render_feedback(entries, 16 * 1024);
  EXPECT_LE(out.size(), 16u * 1024);
  EXPECT_NE(out.find("Iteration 2000"), std::string::npos);
  EXPECT_NE(out.find("END"), std::string::npos);  // the tail of the newest output is kept
  EXPECT_NE(out.find("older entries omitted"), std::string::npos);
}

TEST(FeedbackTest, UserFeedbackAndStorage) {
  loopr::RunMarks context;
  add_feedback(context,
               {0, loopr::FeedbackSource::user, "split spec 2", "Please split spec 2 into two."},
               3);
  for (int i = 1; i <= 4; ++i)
    add_feedback(context, {i, loopr::FeedbackSource::validation, "s", "t"}, 3);
  auto entries = context.feedback;
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries.front().iteration, 2);
  add_feedback(context, {0, loopr::FeedbackSource::user, "more tests", "Add tests."}, 3);
  EXPECT_NE(
      render_feedback(context.feedback, 4096).find("### Feedback from the user\n\nAdd tests."),
      std::string::npos);
  EXPECT_EQ(first_line("\n\n   hello world  \nsecond"), "hello world");
  EXPECT_EQ(first_line(std::string(200, 'a'), 10), std::string(10, 'a') + "…");
}
