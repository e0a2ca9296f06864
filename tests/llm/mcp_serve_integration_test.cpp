// `loopr mcp-serve` (issue 46 point 6): the real loopr binary speaking MCP over stdio to a
// client, forwarding over a real Unix socket to the daemon's end of the channel (McpChannel,
// here in the test process with a handler that records what reached "the loop"). Malformed
// JSON-RPC, unknown and narrowed-out tools, a wrong token and a call that names another loop.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <mutex>
#include <sstream>

#include <loopr/llm/mcp.hpp>

#include "mock_llm_process.hpp"
#include "support/subprocess.hpp"
#include "support/temp_dir.hpp"

using namespace loopr;
using namespace loopr::llm;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

ToolDefinition tool(const std::string& name) {
  return {name,
          "loopr's " + name,
          {{"type", "object"},
           {"properties", {{name == "ask_user" ? "question" : "text", {{"type", "string"}}}}}}};
}

class McpServeTest : public ::testing::Test {
 protected:
  loopr::testing::TempDir dir{"loopr-mcp"};
  std::mutex mutex;
  std::vector<std::pair<std::string, json>> calls;  ///< what reached the loop's handler

  std::unique_ptr<McpChannel> open(std::vector<ToolDefinition> tools, const std::string& name) {
    auto channel = McpChannel::open(dir / name, std::move(tools),
                                    [this](const std::string& tool, const json& input) {
                                      std::lock_guard lock(mutex);
                                      calls.emplace_back(tool, input);
                                      return std::pair<std::string, bool>{"recorded", false};
                                    });
    EXPECT_TRUE(channel) << channel.error().message;
    return channel ? std::move(*channel) : nullptr;
  }

  /// Runs `loopr mcp-serve socket` with `lines` on its stdin; its stdout lines, parsed.
  std::vector<json> serve(const std::string& socket, const std::string& token,
                          const std::vector<std::string>& lines, const std::string& args = "") {
    std::string in;
    for (const auto& l : lines) in += l + "\n";
    loopr::testing::write_file(dir / "stdin", in);
    auto r =
        loopr::testing::run_command("LOOPR_MCP_TOKEN=" + loopr::testing::shell_quote(token) +
                                    " timeout 60 " + loopr::testing::shell_quote(LOOPR_BIN) +
                                    " mcp-serve " + loopr::testing::shell_quote(socket) + args +
                                    " < " + loopr::testing::shell_quote((dir / "stdin").string()) +
                                    " 2>" + loopr::testing::shell_quote((dir / "stderr").string()));
    EXPECT_EQ(r.exit_code, 0) << r.output << loopr::testing::read_file(dir / "stderr");
    std::vector<json> out;
    std::istringstream s(r.output);
    for (std::string line; std::getline(s, line);) {
      auto j = json::parse(line, nullptr, false);
      EXPECT_TRUE(j.is_object()) << "not a JSON-RPC line on stdout: " << line;
      out.push_back(j);
    }
    return out;
  }

  static std::string call(int id, const std::string& name, const json& arguments) {
    return json{{"jsonrpc", "2.0"},
                {"id", id},
                {"method", "tools/call"},
                {"params", {{"name", name}, {"arguments", arguments}}}}
        .dump();
  }
};

const char* kInit =
    R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})";
const char* kInitialized = R"({"jsonrpc":"2.0","method":"notifications/initialized"})";

}  // namespace

TEST_F(McpServeTest, TheProtocolListsAndCallsTheLoopsToolsAndSurvivesBadInput) {
  auto channel = open({tool("share_note"), tool("ask_user")}, "a.sock");
  ASSERT_TRUE(channel);
  auto out = serve(
      channel->socket().string(), channel->token(),
      {kInit, kInitialized, R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})",
       call(2, "share_note", {{"text", "the port is 8080"}}), "{not json", R"([1,2])",
       R"({"jsonrpc":"2.0","id":{"x":1},"method":"ping"})",
       R"({"jsonrpc":"2.0","id":3,"method":"resources/list"})",
       call(4, "run_command", {{"command", "id"}}),
       R"({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"ask_user","arguments":"x"}})",
       R"({"jsonrpc":"2.0","id":6,"method":"ping"})",
       call(7, "ask_user", {{"question", "Which port?"}})});
  // The notification has no reply; every other line has exactly one, in order.
  ASSERT_EQ(out.size(), 11u);
  EXPECT_EQ(out[0]["id"], 0);
  EXPECT_EQ(out[0]["result"]["protocolVersion"], "2025-06-18");
  EXPECT_EQ(out[0]["result"]["serverInfo"]["name"], "loopr");
  ASSERT_EQ(out[1]["result"]["tools"].size(), 2u) << out[1].dump();
  EXPECT_EQ(out[1]["result"]["tools"][0]["name"], "share_note");
  EXPECT_EQ(out[1]["result"]["tools"][0]["inputSchema"]["type"], "object");
  EXPECT_EQ(out[2]["id"], 2);
  EXPECT_EQ(out[2]["result"]["content"][0]["text"], "recorded");
  EXPECT_EQ(out[2]["result"]["isError"], false);
  EXPECT_EQ(out[3]["error"]["code"], -32700);  // parse error
  EXPECT_EQ(out[4]["error"]["code"], -32600);  // a batch: not in this protocol version
  EXPECT_EQ(out[5]["error"]["code"], -32600);  // an id that is neither a string nor a number
  EXPECT_EQ(out[6]["error"]["code"], -32601);  // unknown method
  EXPECT_EQ(out[7]["id"], 4);                  // not one of loopr's tools here
  EXPECT_EQ(out[7]["error"]["code"], -32602);
  EXPECT_EQ(out[8]["error"]["code"], -32602);  // arguments not an object
  EXPECT_EQ(out[9]["result"], json::object());
  EXPECT_EQ(out[10]["result"]["content"][0]["text"], "recorded");
  std::lock_guard lock(mutex);
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].first, "share_note");
  EXPECT_EQ(calls[0].second["text"], "the port is 8080");
  EXPECT_EQ(calls[1].first, "ask_user");
}

TEST_F(McpServeTest, ANarrowedLoopListsAndRunsOnlyItsTools) {
  // A plan loop (no siblings to tell) or `loops.<type>.tools` without share_note.
  auto channel = open({tool("ask_user")}, "plan.sock");
  ASSERT_TRUE(channel);
  auto out =
      serve(channel->socket().string(), channel->token(),
            {kInit, R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})",
             call(2, "share_note", {{"text", "hi"}}), call(3, "ask_user", {{"question", "?"}})});
  ASSERT_EQ(out.size(), 4u);
  ASSERT_EQ(out[1]["result"]["tools"].size(), 1u);
  EXPECT_EQ(out[1]["result"]["tools"][0]["name"], "ask_user");
  EXPECT_EQ(out[2]["error"]["code"], -32602) << out[2].dump();
  EXPECT_NE(out[2]["error"]["message"].get<std::string>().find("ask_user"), std::string::npos);
  EXPECT_EQ(out[3]["result"]["isError"], false);
  std::lock_guard lock(mutex);
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].first, "ask_user");
}

// proves S2.3
TEST_F(McpServeTest, AWrongTokenOrAnotherLoopsChannelReachesNoLoop) {
  auto mine = open({tool("share_note")}, "mine.sock");
  auto other = open({tool("share_note")}, "other.sock");
  ASSERT_TRUE(mine && other);
  // This command's token on another command's channel, and no token at all: refused, nothing
  // reaches either loop, and mcp-serve says so as a JSON-RPC error (it does not crash).
  for (const std::string& token : {mine->token(), std::string()}) {
    auto out = serve(other->socket().string(), token,
                     {kInit, call(1, "share_note", {{"text", "planted"}})});
    ASSERT_EQ(out.size(), 2u);
    EXPECT_TRUE(out[1].contains("error")) << out[1].dump();
  }
  // The loop is the channel's: a call that names another loop is still this loop's call (the
  // handler is bound to it; nothing in the arguments selects a loop).
  auto out = serve(mine->socket().string(), mine->token(),
                   {kInit, call(1, "share_note", {{"text", "hi"}, {"loop_id", "001-002"}})});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1]["result"]["isError"], false) << out[1].dump();
  std::lock_guard lock(mutex);
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].second["loop_id"], "001-002");  // passed on as data, never as a target
}

// The claude-code dialect's registration, end to end but for the CLI itself (the real claude
// CLI is not installed here): a stand-in `claude` (node) reads the --mcp-config file loopr wrote,
// starts the server it names exactly as the CLI would, and calls share_note through it.
TEST_F(McpServeTest, ClaudeGetsLooprsServerThroughItsMcpConfigAndItsCallsReachTheLoop) {
  const std::string fixture =
      std::string(LOOPR_SOURCE_DIR) + "/tests/llm/fixtures/claude-code-2.1.329-stream.jsonl";
  const std::string out = dir.str();
  std::string script = R"(#!/usr/bin/env node
const fs = require('fs'), cp = require('child_process');
const a = process.argv.slice(2), out = ')" +
                       out + R"(';
fs.writeFileSync(out + '/argv', a.join('\n'));
const config = JSON.parse(fs.readFileSync(a[a.indexOf('--mcp-config') + 1]));
const s = config.mcpServers.loopr;
const child = cp.spawn(s.command, s.args, {env: {...process.env, ...s.env}, stdio: ['pipe', 'pipe', 'inherit']});
const msgs = [
  {jsonrpc: '2.0', id: 0, method: 'initialize', params: {protocolVersion: '2025-06-18', capabilities: {}, clientInfo: {name: 'claude-code', version: '2'}}},
  {jsonrpc: '2.0', method: 'notifications/initialized'},
  {jsonrpc: '2.0', id: 1, method: 'tools/list'},
  {jsonrpc: '2.0', id: 2, method: 'tools/call', params: {name: 'share_note', arguments: {text: 'from claude'}}}];
child.stdin.end(msgs.map(m => JSON.stringify(m)).join('\n') + '\n');
let got = '';
child.stdout.on('data', d => got += d);
child.on('close', () => { fs.writeFileSync(out + '/mcp', got); process.stdout.write(fs.readFileSync(')" +
                       fixture + R"(')); });
)";
  loopr::testing::write_file(dir / "claude", script);
  ::chmod((dir / "claude").c_str(), 0755);
  Config c;
  c.llm.provider = "claude-code";
  c.llm.model = "claude-opus-5-5";
  c.llm.claude_code.command = (dir / "claude").string();
  loopr::llm::testing::ClientHarness h(
      c, loopr::llm::testing::env_with(
             {{"LOOPR_SANDBOX_BRIDGE", LOOPR_BIN}, {"PATH", "/usr/local/bin:/usr/bin:/bin"}}));
  Request r = loopr::llm::testing::user_request("Implement the phase.", "code-001-001-001", "code");
  r.working_dir = dir.str();
  r.tools = {tool("share_note"), tool("ask_user"), tool("run_command")};
  std::vector<std::pair<std::string, json>> seen;
  r.own_tool = [&](const std::string& name, const json& input) {
    seen.emplace_back(name, input);
    return std::pair<std::string, bool>{"shared", false};
  };
  Outcome o = h.call(r);
  ASSERT_TRUE(o.ok()) << o.error().describe();
  std::string argv = loopr::testing::read_file(dir / "argv");
  EXPECT_NE(argv.find("--strict-mcp-config"), std::string::npos) << argv;
  EXPECT_NE(argv.find("--allowedTools\nmcp__loopr__share_note,mcp__loopr__ask_user"),
            std::string::npos)
      << argv;
  std::vector<json> replies;
  std::istringstream s(loopr::testing::read_file(dir / "mcp"));
  for (std::string line; std::getline(s, line);) replies.push_back(json::parse(line));
  ASSERT_EQ(replies.size(), 3u);
  ASSERT_EQ(replies[1]["result"]["tools"].size(), 2u);  // loopr's own only, not run_command
  EXPECT_EQ(replies[2]["result"]["content"][0]["text"], "shared");
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].second["text"], "from claude");
  // The private folder, with the channel's socket and its token, went with the run.
  EXPECT_FALSE(fs::exists(h.run_dir.path() / "claude/code-001-001-001"));
}

// Gemini's headless mode drops every tool named `ask_user`: there mcp-serve shows it as
// `ask_person` (`--alias`), and a call of that name reaches loopr's ask_user; the loop's
// narrowing still holds under an alias, and a malformed alias is refused.
TEST_F(McpServeTest, AnAliasShowsAToolUnderAnotherNameAndItsCallsReachTheTool) {
  auto channel = open({tool("share_note"), tool("ask_user")}, "alias.sock");
  ASSERT_TRUE(channel);
  auto out = serve(channel->socket().string(), channel->token(),
                   {kInit, R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})",
                    call(2, "ask_person", {{"question", "Which port?"}})},
                   " --alias ask_user=ask_person");
  ASSERT_EQ(out.size(), 3u);
  std::vector<std::string> names;
  for (const auto& t : out[1]["result"]["tools"]) names.push_back(t["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"share_note", "ask_person"})) << out[1].dump();
  EXPECT_EQ(out[2]["result"]["isError"], false) << out[2].dump();
  {
    std::lock_guard lock(mutex);
    ASSERT_EQ(calls.size(), 1u);
    EXPECT_EQ(calls[0].first, "ask_user");
    EXPECT_EQ(calls[0].second["question"], "Which port?");
  }
  // A loop without ask_user: the alias lists nothing and its call is refused.
  auto narrow = open({tool("share_note")}, "narrow.sock");
  ASSERT_TRUE(narrow);
  out = serve(narrow->socket().string(), narrow->token(),
              {kInit, R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})",
               call(2, "ask_person", {{"question", "?"}})},
              " --alias ask_user=ask_person");
  ASSERT_EQ(out.size(), 3u);
  ASSERT_EQ(out[1]["result"]["tools"].size(), 1u);
  EXPECT_EQ(out[2]["error"]["code"], -32602) << out[2].dump();
  {
    std::lock_guard lock(mutex);
    EXPECT_EQ(calls.size(), 1u);
  }
  auto bad = loopr::testing::run_command(loopr::testing::shell_quote(LOOPR_BIN) +
                                         " mcp-serve /nonexistent --alias ask_user </dev/null");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("loopr: --alias takes NAME=SHOWN"), std::string::npos) << bad.output;
}
