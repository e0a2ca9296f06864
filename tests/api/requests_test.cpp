// The request bodies' codec: each written by `to_json` as the CLI and the web page sent it
// before (src/daemon/API.md), read back by the daemon's reader unchanged; a field of the wrong
// shape is refused with the daemon's 400 message, whatever a hostile client sends.
#include <gtest/gtest.h>

#include <loopr/api/requests.hpp>

using namespace loopr;
using namespace loopr::api;
using nlohmann::json;

namespace {

// The refusal's message (the test fails if the body was taken).
template <typename T>
std::string refused(const Result<T>& r) {
  EXPECT_FALSE(r.ok());
  if (r.ok()) return {};
  EXPECT_EQ(r.error().code, ErrorCode::invalid_argument);
  return r.error().message;
}

}  // namespace

TEST(RequestBodiesTest, APlanRequestIsTheRequestItsDryRunAndItsOwnLimits) {
  PlanRequest r{"Add OAuth", false, {}};
  EXPECT_EQ(to_json(r), json::parse(R"({"request":"Add OAuth"})"));
  r.dry_run = true;
  r.limits = {2.5, "2h", 3};
  const json j = to_json(r);
  EXPECT_EQ(j, json::parse(R"({"request":"Add OAuth","dry_run":true,"max_cost_usd":2.5,
                              "max_runtime":"2h","max_iterations":3})"));
  auto back = plan_request_from_json(j);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->request, "Add OAuth");
  EXPECT_TRUE(back->dry_run);
  EXPECT_EQ(back->limits.max_cost_usd, 2.5);
  EXPECT_EQ(back->limits.max_runtime, "2h");
  EXPECT_EQ(back->limits.max_iterations, 3);
  EXPECT_EQ(to_json(*back), j);
  // Nulls are unset; a dry_run that is not `true` is false.
  back = plan_request_from_json(json::parse(
      R"({"request":"x","dry_run":"yes","max_cost_usd":null,"max_runtime":null,"max_iterations":null})"));
  ASSERT_TRUE(back.ok());
  EXPECT_FALSE(back->dry_run);
  EXPECT_FALSE(back->limits.max_cost_usd || back->limits.max_runtime ||
               back->limits.max_iterations);
}

TEST(RequestBodiesTest, AFieldOfTheWrongShapeIsRefusedWithTheDaemons400) {
  const std::string need = "the body needs a string field `request` (the feature to build)";
  EXPECT_EQ(refused(plan_request_from_json(json::object())), need);
  EXPECT_EQ(refused(plan_request_from_json(json::parse(R"({"request":["x"]})"))), need);
  EXPECT_EQ(refused(plan_request_from_json(json::parse("[]"))), need);
  const std::string cost = "`max_cost_usd` must be a number above 0 (US dollars)";
  EXPECT_EQ(refused(plan_request_from_json(json::parse(R"({"request":"x","max_cost_usd":0})"))),
            cost);
  EXPECT_EQ(refused(limits_request_from_json(json::parse(R"({"max_cost_usd":"5"})"))), cost);
  EXPECT_EQ(refused(limits_request_from_json(json::parse(R"({"max_cost_usd":-1})"))), cost);
  EXPECT_EQ(refused(limits_request_from_json(json::parse(R"({"max_runtime":7200})"))),
            "`max_runtime` must be a string");
  const std::string its = "`max_iterations` must be a whole number from 1";
  EXPECT_EQ(refused(limits_request_from_json(json::parse(R"({"max_iterations":1.5})"))), its);
  EXPECT_EQ(refused(limits_request_from_json(json::parse(R"({"max_iterations":0})"))), its);
  EXPECT_EQ(refused(limits_request_from_json(json::parse(R"({"max_iterations":100001})"))), its);
  EXPECT_EQ(refused(limits_request_from_json(json::parse(R"({"max_iterations":1e300})"))), its);
  EXPECT_EQ(refused(reject_request_from_json(json::parse(R"({"reason":{"a":1}})"))),
            "`reason` must be a string");
  EXPECT_EQ(refused(gc_request_from_json(json::parse(R"({"older_than":7})"))),
            "`older_than` must be a string");
  EXPECT_EQ(refused(shutdown_request_from_json(json::parse(R"({"timeout":false})"))),
            "`timeout` must be a string");
  const std::string port = "`port` must be a number from 0 to 65535";
  EXPECT_EQ(refused(web_request_from_json(json::parse(R"({"port":65536})"))), port);
  EXPECT_EQ(refused(web_request_from_json(json::parse(R"({"port":-1})"))), port);
  EXPECT_EQ(refused(web_request_from_json(json::parse(R"({"port":"80"})"))), port);
  EXPECT_EQ(refused(web_request_from_json(json::parse(R"({"port":18446744073709551615})"))), port);
}

TEST(RequestBodiesTest, AnAnswerIsNotBlankAndARejectionsReasonIsOptional) {
  const std::string blank = "the body needs a non-empty string field `text` (the answer)";
  EXPECT_EQ(refused(answer_request_from_json(json::object())), blank);
  EXPECT_EQ(refused(answer_request_from_json(json::parse(R"({"text":" \n\t"})"))), blank);
  EXPECT_EQ(refused(answer_request_from_json(json::parse(R"({"text":42})"))),
            "`text` must be a string");
  EXPECT_EQ(to_json(AnswerRequest{"use sqlite"}), json::parse(R"({"text":"use sqlite"})"));
  EXPECT_EQ(answer_request_from_json(to_json(AnswerRequest{"use sqlite"}))->text, "use sqlite");

  // No reason: an empty body, as `loopr reject` sent it; the web page's empty reason is the same.
  EXPECT_EQ(to_json(RejectRequest{}), json::object());
  EXPECT_EQ(to_json(RejectRequest{"too big"}), json::parse(R"({"reason":"too big"})"));
  EXPECT_EQ(reject_request_from_json(json::object())->reason, "");
  EXPECT_EQ(reject_request_from_json(json::parse(R"({"reason":null})"))->reason, "");
  EXPECT_EQ(reject_request_from_json(json::parse(R"({"reason":"too big"})"))->reason, "too big");
}

TEST(RequestBodiesTest, GcWebAndShutdownBodiesRoundTrip) {
  EXPECT_EQ(to_json(GcRequest{false, ""}), json::parse(R"({"dry_run":false})"));
  const json gc = json::parse(R"({"dry_run":true,"older_than":"7d"})");
  EXPECT_EQ(to_json(GcRequest{true, "7d"}), gc);
  auto g = gc_request_from_json(gc);
  ASSERT_TRUE(g.ok());
  EXPECT_TRUE(g->dry_run);
  EXPECT_EQ(g->older_than, "7d");
  EXPECT_FALSE(gc_request_from_json(json::parse(R"({"dry_run":1})"))->dry_run);

  EXPECT_EQ(to_json(WebRequest{8123}), json::parse(R"({"port":8123})"));
  EXPECT_EQ(web_request_from_json(json::parse(R"({"port":8123})"))->port, 8123);
  EXPECT_EQ(web_request_from_json(json::parse(R"({"port":null})"))->port, 0);
  EXPECT_EQ(web_request_from_json(json::object())->port, 0);

  const json stop = json::parse(R"({"drain":true,"timeout":"30m"})");
  EXPECT_EQ(to_json(ShutdownRequest{true, "30m"}), stop);
  EXPECT_EQ(to_json(ShutdownRequest{}), json::object());
  auto s = shutdown_request_from_json(stop);
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->drain);
  EXPECT_EQ(s->timeout, "30m");
}
