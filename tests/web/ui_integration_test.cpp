// The web UI served by a real daemon on a real loopback port (`POST /v1/web`): every route over
// real HTTP, the refusals (token, Host, Origin, method), and the decisions reaching the manager
// through the same API calls as the CLI's.
#include <gtest/gtest.h>

#include <latch>
#include <regex>
#include <thread>

#include <loopr/web/web_ui.hpp>

#include "daemon/daemon_fixture.hpp"
#include "daemon/tcp_http.hpp"

namespace loopr::testing {
namespace {

using nlohmann::json;

class WebUiTest : public DaemonFixture {
 protected:
  WebUiTest() { web_ui = loopr::web::make_web_ui; }

  int port = 0;
  std::string token;

  void start_web() {
    auto r = api("POST", "/v1/web", json::object());
    ASSERT_EQ(r.status, 200) << r.body.dump();
    const std::string url = r.body.value("url", "");
    std::smatch m;
    ASSERT_TRUE(
        std::regex_match(url, m, std::regex(R"(http://127\.0\.0\.1:(\d+)/\?token=([0-9a-f]{64}))")))
        << url;
    port = std::stoi(m[1]);
    token = m[2];
    EXPECT_EQ(r.body["port"], port);
  }

  std::string host() const { return "Host: 127.0.0.1:" + std::to_string(port); }
  std::string origin() const { return "Origin: http://127.0.0.1:" + std::to_string(port); }

  TcpAnswer get(const std::string& path, const std::string& extra_query = {}) {
    std::string target = path + "?token=" + token + (extra_query.empty() ? "" : "&" + extra_query);
    return tcp_request(port, "GET " + target + " HTTP/1.1\r\n" + host());
  }

  TcpAnswer post(const std::string& path, const std::string& form) {
    return tcp_request(port,
                       "POST " + path + " HTTP/1.1\r\n" + host() + "\r\n" + origin() +
                           "\r\nContent-Type: application/x-www-form-urlencoded",
                       "token=" + token + (form.empty() ? "" : "&" + form));
  }

  /// Waits until the code loop failed for good: a code loop's first failure gets a fresh second
  /// attempt at once, and only the second one's failure rolls up to its phase.
  bool failed_for_good(const std::string& code, const std::string& phase) {
    return wait_loops(
        [&](auto& l) {
          return l.count(code) && l[code]["status"] == "failed" && l.count(phase) &&
                 l[phase]["status"] == "failed";
        },
        std::chrono::seconds(120));
  }

  void start_tree(TreeScript script = {}) {
    start_tree_daemon(script);
    start_web();
  }
};

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST_F(WebUiTest, IsOffUntilAskedThenHealthShowsItAndStopEndsIt) {
  make_repo();
  start_mock({});
  start_daemon();
  EXPECT_TRUE(api("GET", "/v1/health").body["web"].is_null());
  start_web();
  auto health = api("GET", "/v1/health").body;
  EXPECT_EQ(health["web"]["url"], "http://127.0.0.1:" + std::to_string(port) + "/?token=" + token);

  // Asking again gives the same address; another port while it runs is refused.
  auto again = api("POST", "/v1/web", {{"port", 0}});
  EXPECT_EQ(again.status, 200);
  EXPECT_EQ(again.body["started"], false);
  EXPECT_EQ(again.body["port"], port);
  auto other = api("POST", "/v1/web", {{"port", port == 65535 ? 1 : port + 1}});
  EXPECT_EQ(other.status, 409) << other.body.dump();
  EXPECT_EQ(api("POST", "/v1/web", {{"port", "x"}}).status, 400);
  EXPECT_EQ(api("GET", "/v1/web").status, 405);
  EXPECT_EQ(get("/").status, 200);

  auto stopped = api("POST", "/v1/web/stop");
  EXPECT_EQ(stopped.body["stopped"], true);
  EXPECT_EQ(get("/").status, 0);  // nothing listens
  EXPECT_TRUE(api("GET", "/v1/health").body["web"].is_null());
  EXPECT_EQ(api("POST", "/v1/web/stop").body["stopped"], false);
  const std::string old = token;
  start_web();
  EXPECT_NE(token, old);  // a new token: the old address is dead
  std::string stale = "GET /?token=" + old + " HTTP/1.1\r\n" + host();
  EXPECT_EQ(tcp_request(port, stale).status, 403);
}

TEST_F(WebUiTest, RefusesRequestsWithoutTheTokenOrFromAForeignHostOrOrigin) {
  start_tree();
  const std::string id = submit("Build files");
  ASSERT_TRUE(wait_status(id, "awaiting_approval")) << dump_loops();

  for (std::string path : {"/", "/gate", "/loop/001", "/loop/001/iterations/1",
                                  "/static/app.js", "/static/style.css", "/events", "/nope"}) {
    auto none = tcp_request(port, "GET " + path + " HTTP/1.1\r\n" + host());
    EXPECT_EQ(none.status, 403) << path;
    EXPECT_TRUE(has(none.body, "token is missing or wrong")) << path << ": " << none.body;
    EXPECT_TRUE(has(none.header("content-security-policy"), "default-src 'none'")) << path;
    auto wrong = tcp_request(
        port, "GET " + path + "?token=" + std::string(64, '0') + " HTTP/1.1\r\n" + host());
    EXPECT_EQ(wrong.status, 403) << path;
  }
  // DNS rebinding: a page of evil.example whose name now points at 127.0.0.1.
  for (std::string h :
       {"Host: evil.example:" + std::to_string(port), std::string("Host: evil.example")}) {
    auto rebound = tcp_request(port, "GET /?token=" + token + " HTTP/1.1\r\n" + h);
    EXPECT_EQ(rebound.status, 403) << h;
    EXPECT_TRUE(has(rebound.body, "Host header")) << rebound.body;
  }
  // Cross-site forgery: the right token (say it leaked) but another site's Origin, or none.
  const std::string approve = "POST /loop/" + id + "/approve HTTP/1.1\r\n" + host() +
                              "\r\nContent-Type: application/x-www-form-urlencoded";
  for (const std::string& o : {std::string("\r\nOrigin: http://evil.example"),
                               std::string("\r\nOrigin: null"), std::string()}) {
    auto forged = tcp_request(port, approve + o, "token=" + token);
    EXPECT_EQ(forged.status, 403) << o;
    EXPECT_TRUE(has(forged.body, "this UI's own pages")) << forged.body;
  }
  auto no_token = tcp_request(port, approve + "\r\n" + origin(), "back=gate");
  EXPECT_EQ(no_token.status, 403);
  auto put = tcp_request(port, "PUT /?token=" + token + " HTTP/1.1\r\n" + host(), "x");
  EXPECT_EQ(put.status, 405);
  EXPECT_EQ(status_of(id), "awaiting_approval");  // nothing of the above changed anything
}

TEST_F(WebUiTest, PagesAssetsAndTheEventStream) {
  start_tree();
  const std::string id = submit("Build <b>files</b>");
  ASSERT_TRUE(wait_status(id, "awaiting_approval")) << dump_loops();

  auto tree = get("/");
  ASSERT_EQ(tree.status, 200) << tree.body;
  EXPECT_EQ(tree.header("content-type"), "text/html; charset=utf-8");
  EXPECT_TRUE(has(tree.header("content-security-policy"), "script-src 'self'"));
  EXPECT_EQ(tree.header("x-frame-options"), "DENY");
  EXPECT_EQ(tree.header("referrer-policy"), "same-origin");
  EXPECT_TRUE(has(tree.body, "data-live=\"tree\"")) << tree.body;
  EXPECT_TRUE(has(tree.body, "Build &lt;b&gt;files&lt;/b&gt;")) << tree.body;
  EXPECT_TRUE(has(tree.body, "data-since=\"")) << tree.body;
  EXPECT_TRUE(has(tree.body, "forecast $")) << tree.body;
  auto part = get("/", "part=tree");
  EXPECT_EQ(part.status, 200);
  EXPECT_EQ(part.body.rfind("<section id=\"tree\"", 0), 0u) << part.body;

  auto js = get("/static/app.js");
  EXPECT_EQ(js.status, 200);
  EXPECT_EQ(js.header("content-type"), "text/javascript; charset=utf-8");
  EXPECT_TRUE(has(js.body, "EventSource"));
  auto css = get("/static/style.css");
  EXPECT_EQ(css.status, 200);
  EXPECT_EQ(css.header("content-type"), "text/css; charset=utf-8");
  EXPECT_EQ(get("/static/other.js").status, 404);
  EXPECT_EQ(get("/nope").status, 404);
  EXPECT_EQ(get("/loop/not-an-id").status, 404);
  EXPECT_EQ(get("/loop/999").status, 404);
  EXPECT_EQ(get("/loop/001/iterations/x").status, 404);

  auto gate = get("/gate");
  EXPECT_EQ(gate.status, 200);
  EXPECT_TRUE(has(gate.body, "action=\"/loop/001/approve\"")) << gate.body;
  EXPECT_TRUE(has(gate.body, "<h2>Overview</h2>")) << gate.body;  // the plan, rendered
  EXPECT_TRUE(has(gate.body, "spec-alpha")) << gate.body;

  auto loop = get("/loop/" + id);
  EXPECT_EQ(loop.status, 200);
  EXPECT_TRUE(has(loop.body, "data-live=\"summary\"")) << loop.body;
  // At the gate the plan's diff is its own branch, from the base commit it started from.
  const std::string fork = git("rev-parse main").substr(0, 12);
  EXPECT_TRUE(has(loop.body, "git diff " + fork + "...loopr/001-loops/001")) << loop.body;
  EXPECT_TRUE(has(loop.body, "data-file=\".loopr/plans/")) << loop.body;
  EXPECT_TRUE(has(loop.body, "<details class=\"iteration\" data-n=\"1\"")) << loop.body;
  EXPECT_EQ(get("/loop/" + id, "part=summary").body.rfind("<section id=\"summary\"", 0), 0u);
  auto iteration = get("/loop/" + id + "/iterations/1", "part=body");
  EXPECT_EQ(iteration.status, 200);
  EXPECT_TRUE(has(iteration.body, "→ write_file")) << iteration.body;
  EXPECT_TRUE(has(iteration.body, "<summary>Prompt</summary>")) << iteration.body;
  auto full = get("/loop/" + id + "/iterations/1");
  EXPECT_TRUE(has(full.body, "<!DOCTYPE html>"));

  // The event stream: the API's events, unnamed (every one reaches the page's onmessage).
  auto events = tcp_request(port, "GET /events?token=" + token + "&since=0 HTTP/1.1\r\n" + host(),
                            {}, std::chrono::milliseconds(1500));
  EXPECT_EQ(events.status, 200);
  EXPECT_EQ(events.header("content-type"), "text/event-stream");
  EXPECT_TRUE(has(events.body, "data: {")) << events.body;
  EXPECT_TRUE(has(events.body, "\"loop_created\"")) << events.body;
  EXPECT_FALSE(has(events.body, "event: ")) << events.body;
}

TEST_F(WebUiTest, DecisionsFromThePageAreTheApisCalls) {
  TreeScript script = one_part_script();
  script.extra_rules =
      "  - name: code-uses-answer\n    match: {loop_type: code, first_user: \"The user "
      "answered:\\\\s+(PORT-\\\\d+)\"}\n    reply:\n"
      "      tool_use:\n        - name: write_file\n          input: {path: "
      "\"code/{{loop_id}}.txt\", content: \"{{first_user.1}}\\n\"}\n"
      "        - name: write_file\n          input: {path: \"wip/{{loop_id}}.txt\", content: "
      "\"done\\n\"}\n"
      // A question holds the loop only when its iteration fails (a passing loop drops it).
      "  - name: code-asks\n    match: {loop_type: code, loop_id: \"code-001-001-001\"}\n    "
      "reply:\n"
      "      tool_use:\n        - name: write_file\n          input: {path: "
      "\"wip/{{loop_id}}.txt\", content: \"WIP\\n\"}\n"
      "        - name: ask_user\n          input: {question: \"Which <port>?\"}\n";
  start_tree(script);

  // iterate: the plan runs again with the feedback.
  const std::string id = submit("Build files");
  ASSERT_TRUE(wait_status(id, "awaiting_approval")) << dump_loops();
  auto empty = post("/loop/" + id + "/iterate", "back=loop&feedback=");
  EXPECT_EQ(empty.status, 400) << empty.body;
  EXPECT_TRUE(has(empty.body, "feedback")) << empty.body;
  auto iterated = post("/loop/" + id + "/iterate", "back=loop&feedback=USE-GAMMA+please");
  EXPECT_EQ(iterated.status, 303) << iterated.body;
  EXPECT_EQ(iterated.header("location"), "/loop/" + id + "?token=" + token);
  ASSERT_TRUE(wait_loops([&](auto& l) {
    return l[id]["status"] == "awaiting_approval" && l[id]["iteration"] == 2;
  })) << dump_loops();

  // approve: the specs start.
  auto approved = post("/loop/" + id + "/approve", "back=gate");
  EXPECT_EQ(approved.status, 303) << approved.body;
  EXPECT_EQ(approved.header("location"), "/gate?token=" + token);
  ASSERT_TRUE(wait_loops([&](auto& l) { return l.count("001-001") > 0; })) << dump_loops();
  auto again = post("/loop/" + id + "/approve", "back=gate");
  EXPECT_EQ(again.status, 409) << again.body;  // the API's answer, as a page
  EXPECT_TRUE(has(again.body, "Not done")) << again.body;

  // answer: the code loop asked; the page's answer reaches it.
  const std::string code = "code-001-001-001";
  auto rules_of = [&](const std::string& loop) {
    std::string out;
    for (const auto& r : mock->requests())
      if (r["headers"].value("x-loopr-loop-id", "") == loop)
        out += r["rule"].is_string() ? r["rule"].get<std::string>() + " " : "(none) ";
    return "rules that answered " + loop + ": " + out;
  };
  ASSERT_TRUE(wait_status(code, "awaiting_answer", std::chrono::seconds(90)))
      << dump_loops() << rules_of(code);
  auto gate = get("/gate");
  EXPECT_TRUE(has(gate.body, "Which &lt;port&gt;?")) << gate.body;
  EXPECT_TRUE(has(gate.body, "action=\"/loop/" + code + "/answer\"")) << gate.body;
  auto answered = post("/loop/" + code + "/answer", "back=gate&text=PORT-8080");
  EXPECT_EQ(answered.status, 303) << answered.body;
  ASSERT_TRUE(wait_status(code, "complete", std::chrono::seconds(90))) << dump_loops();
  auto page = get("/loop/" + code);
  EXPECT_TRUE(has(page.body, "<span class=\"sg\">+</span>PORT-8080</td>")) << page.body;  // the diff

  // reject: a second plan fails.
  const std::string second = submit("Another");
  ASSERT_TRUE(wait_status(second, "awaiting_approval")) << dump_loops();
  auto rejected = post("/loop/" + second + "/reject", "back=loop&reason=not+now");
  EXPECT_EQ(rejected.status, 303) << rejected.body;
  EXPECT_TRUE(wait_status(second, "failed")) << dump_loops();
  EXPECT_EQ(post("/loop/" + second + "/explode", "").status, 404);
  // Stop and merge cannot be taken back: without `confirmed=yes` the page asks, and calls nothing.
  for (const char* action : {"stop", "merge"}) {
    auto asked = post("/loop/" + id + "/" + action, "back=loop");
    EXPECT_EQ(asked.status, 200) << action;
    EXPECT_TRUE(has(asked.body, "name=\"confirmed\" value=\"yes\"")) << asked.body;
    EXPECT_TRUE(has(asked.body, "action=\"/loop/" + id + "/" + action + "\"")) << asked.body;
  }
  EXPECT_NE(loops(true)[id]["status"], "stopped") << dump_loops();
}

// Issue 43: comments on two lines of a failed code loop's diff, kept across a daemon restart,
// become ONE iteration whose prompt names file and line of each, in order.
TEST_F(WebUiTest, CommentsOnTwoLinesBecomeOneIterationsFeedbackAcrossARestart) {
  TreeScript script = one_part_script();
  // The code loop keeps its work WIP (the validation fails) until the comments reach it.
  script.extra_rules =
      "  - name: code-commented\n    match: {loop_type: code, turn: 1, first_user: \"Comments on "
      "lines of the diff\"}\n    reply:\n      tool_use:\n        - name: write_file\n"
      "          input: {path: \"wip/{{loop_id}}.txt\", content: \"done\\n\"}\n"
      "  - name: code-wip\n    match: {loop_type: code, turn: 1}\n    reply:\n      tool_use:\n"
      "        - name: write_file\n          input: {path: \"code/{{loop_id}}.txt\", content: "
      "\"one\\ntwo\\nthree\\n\"}\n        - name: write_file\n          input: {path: "
      "\"wip/{{loop_id}}.txt\", content: \"WIP\\n\"}\n";
  start_tree(script);
  const std::string id = submit("Write three lines");
  ASSERT_TRUE(wait_status(id, "awaiting_approval")) << dump_loops();
  ASSERT_EQ(api("POST", "/v1/loops/" + id + "/approve", json::object()).status, 200);
  const std::string code = "code-001-001-001";
  ASSERT_TRUE(failed_for_good(code, "001-001-001")) << dump_loops();
  const int before = static_cast<int>(api("GET", "/v1/loops/" + code).body["iterations"].size());

  const std::string file = "code%2Fcode-001-001-001.txt";
  EXPECT_EQ(post("/loop/" + code + "/comment",
                 "back=loop&file=" + file + "&side=new&line=2&text=say+TWO")
                .status,
            303);
  EXPECT_EQ(post("/loop/" + code + "/comment",
                 "back=loop&file=" + file + "&side=new&line=3&text=and+THREE%0Aplease")
                .status,
            303);
  // Refused: no such side, no line, no text.
  EXPECT_EQ(api("POST", "/v1/loops/" + code + "/comments",
                {{"file", "x"}, {"line", 1}, {"side", "up"}, {"text", "t"}})
                .status,
            400);
  EXPECT_EQ(api("POST", "/v1/loops/" + code + "/comments", {{"file", "x"}, {"text", "t"}}).status,
            400);
  EXPECT_EQ(api("POST", "/v1/loops/" + code + "/comments", {{"file", "x"}, {"line", 1}}).status,
            400);
  EXPECT_EQ(api("POST", "/v1/loops/code-009-001-001/comments",
                {{"file", "x"}, {"line", 1}, {"text", "t"}})
                .status,
            404);

  // Stored with the loop: a restart keeps them (and the page shows them, waiting).
  stop_daemon();
  start_daemon();
  start_web();
  auto listed = api("GET", "/v1/loops/" + code + "/comments");
  ASSERT_EQ(listed.status, 200);
  ASSERT_EQ(listed.body["comments"].size(), 2u) << listed.body.dump();
  EXPECT_TRUE(listed.body["comments"][0]["iteration"].is_null());
  EXPECT_TRUE(has(get("/loop/" + code).body, "Send 2 comments as one iteration"));

  EXPECT_EQ(post("/loop/" + code + "/send-comments", "back=loop").status, 303);
  ASSERT_TRUE(wait_status(code, "complete", std::chrono::seconds(120))) << dump_loops();
  listed = api("GET", "/v1/loops/" + code + "/comments");
  const int took = listed.body["comments"][0].value("iteration", 0);
  EXPECT_GT(took, before) << listed.body.dump();
  EXPECT_EQ(listed.body["comments"][1].value("iteration", 0), took) << "one iteration took both";
  // The iteration before it had not seen them: `took` is the first to read them.
  EXPECT_EQ(read_file(paths().iteration_dir(code, took - 1) / "prompt.md").find("Comments on lines"),
            std::string::npos);
  const std::string prompt = read_file(paths().iteration_dir(code, took) / "prompt.md");
  const auto first = prompt.find("1. code/code-001-001-001.txt line 2:\n   say TWO\n");
  const auto second =
      prompt.find("2. code/code-001-001-001.txt line 3:\n   and THREE\n   please\n");
  EXPECT_NE(first, std::string::npos) << prompt;
  EXPECT_NE(second, std::string::npos) << prompt;
  EXPECT_LT(first, second) << prompt;
  // Nothing left to send: the page offers no send, the API refuses another.
  EXPECT_FALSE(has(get("/loop/" + code).body, "send-comments"));
  EXPECT_EQ(api("POST", "/v1/loops/" + code + "/iterate", {{"comments", true}}).status, 409);
}

TEST_F(WebUiTest, TwoSendsAtOnceSendTheCommentsOnce) {
  TreeScript script = one_part_script();
  // The code loop's work stays WIP (its validation fails), with the comments or without.
  script.extra_rules =
      "  - name: code-wip\n    match: {loop_type: code, turn: 1}\n    reply:\n      tool_use:\n"
      "        - name: write_file\n          input: {path: \"wip/{{loop_id}}.txt\", content: "
      "\"WIP\\n\"}\n";
  start_tree(script);
  const std::string id = submit("Write a file");
  ASSERT_TRUE(wait_status(id, "awaiting_approval")) << dump_loops();
  ASSERT_EQ(api("POST", "/v1/loops/" + id + "/approve", json::object()).status, 200);
  const std::string code = "code-001-001-001";
  ASSERT_TRUE(failed_for_good(code, "001-001-001")) << dump_loops();
  for (int line : {1, 2})
    ASSERT_EQ(api("POST", "/v1/loops/" + code + "/comments",
                  {{"file", "wip/" + code + ".txt"}, {"line", line}, {"text", "fix it"}})
                  .status,
              201);

  // Two sends at once (a double click, two tabs), from the page.
  std::latch go(2);
  TcpAnswer answers[2];
  std::thread sends[2];
  for (int i = 0; i < 2; ++i)
    sends[i] = std::thread([&, i] {
      go.arrive_and_wait();
      answers[i] = post("/loop/" + code + "/send-comments", "back=loop");
    });
  for (auto& t : sends) t.join();
  const int sent = (answers[0].status == 303) + (answers[1].status == 303);
  ASSERT_EQ(sent, 1) << answers[0].status << " " << answers[1].status;
  // The other was refused because the comments were taken, not for another reason (before the
  // send was one flight, it read the same pending comments and reached the manager with them).
  const TcpAnswer& refused = answers[0].status == 303 ? answers[1] : answers[0];
  EXPECT_EQ(refused.status, 409) << refused.body;
  EXPECT_TRUE(has(refused.body, "are being sent by another request") ||
              has(refused.body, "has no comments waiting to be sent"))
      << refused.body;

  // One iteration took both; it is the first whose prompt carries them, and no prompt carries
  // them twice (a second send would add them to the loop's feedback again).
  json listed;
  ASSERT_TRUE(wait_until([&] {
    listed = api("GET", "/v1/loops/" + code + "/comments").body;
    return listed["comments"].size() == 2 && !listed["comments"][1]["iteration"].is_null();
  }, std::chrono::seconds(60))) << listed.dump();
  const int took = listed["comments"][0].value("iteration", 0);
  EXPECT_EQ(listed["comments"][1].value("iteration", 0), took) << listed.dump();
  ASSERT_TRUE(failed_for_good(code, "001-001-001")) << dump_loops();
  int first = 0;
  std::string seen;  // what was read, for a failure
  const auto detail = api("GET", "/v1/loops/" + code);
  ASSERT_EQ(detail.status, 200) << detail.body.dump();
  for (const auto& it : detail.body["iterations"]) {
    const int n = it.value("n", 0);
    const std::string prompt = read_file(paths().iteration_dir(code, n) / "prompt.md");
    seen += std::to_string(n) + ": " + std::to_string(prompt.size()) + " bytes; ";
    const auto at = prompt.find("Comments on lines of the diff");
    if (at == std::string::npos) continue;
    if (first == 0) first = n;
    EXPECT_EQ(prompt.find("Comments on lines of the diff", at + 1), std::string::npos)
        << "iteration " << n << " got the comments twice:\n" << prompt;
  }
  EXPECT_EQ(first, took) << seen << "\n" << dump_loops();
}

}  // namespace
}  // namespace loopr::testing
