// The diff comments' codec and the feedback text they become (loopr/api/comments.hpp).
#include <loopr/api/comments.hpp>

#include <gtest/gtest.h>

using namespace loopr::api;

TEST(CommentsCodecTest, RoundTripsAndReadsBadFieldsAsDefaults) {
  DiffComment c{3, "src/a.cpp", 12, DiffSide::old_file, "why?", 1700000000000, 5};
  DiffComment back = comment_from_json(to_json(c));
  EXPECT_EQ(back.n, 3);
  EXPECT_EQ(back.file, "src/a.cpp");
  EXPECT_EQ(back.line, 12);
  EXPECT_EQ(back.side, DiffSide::old_file);
  EXPECT_EQ(back.text, "why?");
  EXPECT_EQ(back.iteration, 5);
  c.iteration = 0;
  EXPECT_TRUE(to_json(c)["iteration"].is_null());
  DiffComment bad = comment_from_json({{"line", "x"}, {"side", "sideways"}, {"file", 3}});
  EXPECT_EQ(bad.line, 0);
  EXPECT_EQ(bad.side, DiffSide::new_file);
  EXPECT_EQ(bad.file, "");
  EXPECT_EQ(comments_from_json({{"comments", {to_json(c)}}}).comments.size(), 1u);
  IterateRequest r = iterate_request_from_json(to_json(IterateRequest{"more", true, false}));
  EXPECT_EQ(r.feedback, "more");
  EXPECT_TRUE(r.comments);
  EXPECT_FALSE(r.from_pr);
  EXPECT_FALSE(iterate_request_from_json({{"feedback", "x"}}).comments);
  // `iterate --from-pr` (the CLI's and the page's call) is the same request type.
  const nlohmann::json from_pr = to_json(IterateRequest{"", false, true});
  EXPECT_EQ(from_pr["from_pr"], true);
  EXPECT_TRUE(iterate_request_from_json(from_pr).from_pr);
  EXPECT_FALSE(from_pr.contains("comments"));
}

TEST(CommentsFeedbackTest, NamesFileAndLineOfEachCommentInOrder) {
  std::vector<DiffComment> pending = {
      {1, "code/a.txt", 3, DiffSide::new_file, "use 4 spaces", 0, 0},
      {2, "code/b.txt", 7, DiffSide::old_file, "keep this line\nit matters", 0, 0}};
  EXPECT_EQ(comments_feedback(pending),
            "Comments on lines of the diff (2, in order):\n"
            "1. code/a.txt line 3:\n   use 4 spaces\n"
            "2. code/b.txt line 7 (a removed line, numbered in the old version):\n"
            "   keep this line\n   it matters\n");
  EXPECT_EQ(comments_feedback({}), "");
}

TEST(CommentsFeedbackTest, AHostileFileNameStaysOnItsLine) {
  // A name that would start a new entry and hide an escape sequence: one line, controls visible.
  std::vector<DiffComment> pending = {
      {1, "x\n2. evil.txt line 1:\n\x1b[2J", 1, DiffSide::new_file, "t", 0, 0}};
  const std::string said = comments_feedback(pending);
  EXPECT_EQ(said.find("\n2. "), std::string::npos) << said;
  EXPECT_EQ(said.find('\x1b'), std::string::npos) << said;
  EXPECT_NE(said.find("1. x\\n2. evil.txt line 1:\\n^[[2J line 1:"), std::string::npos) << said;
}

TEST(DiffCommentsTest, ANewCommentIsItsFourFieldsAndASideOtherThanNewOrOldIsRefused) {
  // What the web page's comment form sends: the four fields, nothing the daemon assigns.
  const nlohmann::json sent = to_json(CommentRequest{"src/a.c", 3, DiffSide::old_file, "why?"});
  EXPECT_EQ(sent,
            nlohmann::json::parse(R"({"file":"src/a.c","line":3,"side":"old","text":"why?"})"));
  auto back = comment_request_from_json(sent);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->file, "src/a.c");
  EXPECT_EQ(back->line, 3);
  EXPECT_EQ(back->side, DiffSide::old_file);
  EXPECT_EQ(back->text, "why?");
  // No side: a new line. Mistyped file, line or text read as empty (the daemon names them).
  back = comment_request_from_json({{"file", 3}, {"line", "2"}, {"text", nullptr}});
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->side, DiffSide::new_file);
  EXPECT_EQ(back->file, "");
  EXPECT_EQ(back->line, 0);
  for (const nlohmann::json& side :
       {nlohmann::json("up"), nlohmann::json(nullptr), nlohmann::json(1), nlohmann::json("NEW")}) {
    auto refused = comment_request_from_json({{"file", "x"}, {"line", 1}, {"side", side}});
    ASSERT_FALSE(refused.ok()) << side;
    EXPECT_EQ(refused.error().message, "`side` is `new` or `old`");
  }
}
