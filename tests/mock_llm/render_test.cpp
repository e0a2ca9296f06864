// Renderers: the JSON bodies have the services' shapes, and a stream reassembled the way a
// client does (deltas concatenated per index) gives exactly the non-streamed message.
#include <gtest/gtest.h>

#include <mock_llm/render.hpp>
#include <mock_llm/text_util.hpp>

namespace loopr::mock_llm {
namespace {

Reply sample_reply() {
  Reply r;
  r.id = "msg_01abc";
  r.model = "claude-opus-5-5";
  r.blocks.push_back({BlockKind::thinking, "Let me think about ünïcödé and more text here.",
                      "sig==", "", "", nullptr});
  r.blocks.push_back({BlockKind::redacted_thinking, "opaque-data", "", "", "", nullptr});
  r.blocks.push_back({BlockKind::text,
                      "I will write the plan now, with a fairly long sentence — “quoted”.", "", "",
                      "", nullptr});
  r.blocks.push_back(
      {BlockKind::tool_use, "", "", "toolu_01x", "write_file",
       Json{{"path", ".loopr/plans/001.plan.md"}, {"content", "# Plan\n\n日本語 text"}}});
  r.blocks.push_back({BlockKind::tool_use, "", "", "toolu_01y", "list_dir", Json{{"path", "."}}});
  r.stop_reason = "tool_use";
  r.usage = {1200, 300, 4000, 10};
  return r;
}

struct Event {
  std::string name;
  Json data;
};

std::vector<Event> split_events(const std::vector<std::string>& frames) {
  std::vector<Event> out;
  for (const auto& f : frames) {
    EXPECT_EQ(f.substr(f.size() - 2), "\n\n");
    EXPECT_EQ(f.rfind("event: ", 0), 0u) << f;
    auto nl = f.find('\n');
    std::string name = f.substr(7, nl - 7);
    EXPECT_EQ(f.substr(nl + 1, 6), "data: ");
    out.push_back({name, Json::parse(f.substr(nl + 7, f.size() - nl - 9))});
    EXPECT_EQ(out.back().data["type"], name);  // event name and data type agree
  }
  return out;
}

/// Rebuilds the message from its events the way the SDKs do.
Json reassemble_anthropic(const std::vector<Event>& events) {
  Json message;
  std::map<std::size_t, std::string> partial_json;
  for (const auto& e : events) {
    const Json& d = e.data;
    if (e.name == "message_start") {
      message = d["message"];
    } else if (e.name == "content_block_start") {
      EXPECT_EQ(d["index"].get<std::size_t>(), message["content"].size());
      message["content"].push_back(d["content_block"]);
    } else if (e.name == "content_block_delta") {
      Json& block = message["content"][d["index"].get<std::size_t>()];
      const Json& delta = d["delta"];
      if (delta["type"] == "text_delta")
        block["text"] = block["text"].get<std::string>() + delta["text"].get<std::string>();
      else if (delta["type"] == "thinking_delta")
        block["thinking"] =
            block["thinking"].get<std::string>() + delta["thinking"].get<std::string>();
      else if (delta["type"] == "signature_delta")
        block["signature"] = delta["signature"];
      else if (delta["type"] == "input_json_delta")
        partial_json[d["index"]] += delta["partial_json"].get<std::string>();
      else
        ADD_FAILURE() << "unknown delta " << delta;
    } else if (e.name == "content_block_stop") {
      std::size_t i = d["index"];
      if (partial_json.count(i)) message["content"][i]["input"] = Json::parse(partial_json[i]);
    } else if (e.name == "message_delta") {
      for (const auto& [k, v] : d["delta"].items()) message[k] = v;
      for (const auto& [k, v] : d["usage"].items()) message["usage"][k] = v;
    }
  }
  return message;
}

TEST(RenderAnthropicTest, MessageJsonHasTheServiceShape) {
  Json m = anthropic_message_json(sample_reply());
  EXPECT_EQ(m["type"], "message");
  EXPECT_EQ(m["role"], "assistant");
  EXPECT_EQ(m["id"], "msg_01abc");
  EXPECT_EQ(m["stop_reason"], "tool_use");
  EXPECT_TRUE(m["stop_sequence"].is_null());
  EXPECT_TRUE(m.contains("stop_details"));
  ASSERT_EQ(m["content"].size(), 5u);
  EXPECT_EQ(m["content"][0], (Json{{"type", "thinking"},
                                   {"thinking", "Let me think about ünïcödé and more text here."},
                                   {"signature", "sig=="}}));
  EXPECT_EQ(m["content"][1], (Json{{"type", "redacted_thinking"}, {"data", "opaque-data"}}));
  EXPECT_TRUE(m["content"][2]["citations"].is_null());
  EXPECT_EQ(m["content"][3]["caller"], (Json{{"type", "direct"}}));
  EXPECT_EQ(m["usage"]["input_tokens"], 1200);
  EXPECT_EQ(m["usage"]["output_tokens"], 300);
  EXPECT_EQ(m["usage"]["cache_read_input_tokens"], 4000);
  EXPECT_EQ(m["usage"]["cache_creation_input_tokens"], 10);
}

TEST(RenderAnthropicTest, StreamReassemblesToTheSameMessage) {
  Reply r = sample_reply();
  auto events = split_events(anthropic_sse(r, 7));
  ASSERT_GE(events.size(), 10u);
  EXPECT_EQ(events.front().name, "message_start");
  EXPECT_EQ(events[1].name, "ping");
  EXPECT_EQ(events[events.size() - 2].name, "message_delta");
  EXPECT_EQ(events.back().name, "message_stop");
  EXPECT_TRUE(events.front().data["message"]["stop_reason"].is_null());

  // Several pieces per streamed text and tool input, as the service sends them.
  std::map<std::string, int> delta_counts;
  for (const auto& e : events)
    if (e.name == "content_block_delta") ++delta_counts[e.data["delta"]["type"]];
  EXPECT_GE(delta_counts["text_delta"], 2);
  EXPECT_GE(delta_counts["thinking_delta"], 2);
  EXPECT_GE(delta_counts["input_json_delta"], 4);
  EXPECT_EQ(delta_counts["signature_delta"], 1);

  Json rebuilt = reassemble_anthropic(events);
  Json expected = anthropic_message_json(r);
  // The streamed text block start has no `citations` field; compare the rest exactly.
  rebuilt["content"][2]["citations"] = nullptr;
  rebuilt["usage"].erase("cache_creation");
  rebuilt["usage"].erase("service_tier");
  expected["usage"].erase("cache_creation");
  expected["usage"].erase("service_tier");
  EXPECT_EQ(rebuilt, expected);
}

TEST(RenderAnthropicTest, StopReasonDetailsAndSequence) {
  Reply r;
  r.id = "msg_1";
  r.blocks.push_back({BlockKind::text, "no", "", "", "", nullptr});
  r.stop_reason = "refusal";
  r.stop_details = {{"type", "refusal"}, {"category", "cyber"}, {"explanation", "x"}};
  Json m = anthropic_message_json(r);
  EXPECT_EQ(m["stop_details"]["category"], "cyber");
  auto events = split_events(anthropic_sse(r, 1));
  EXPECT_EQ(events[events.size() - 2].data["delta"]["stop_details"]["category"], "cyber");
  r.stop_reason = "stop_sequence";
  r.stop_sequence = "###";
  EXPECT_EQ(anthropic_message_json(r)["stop_sequence"], "###");
}

TEST(RenderAnthropicTest, ErrorEventShape) {
  std::string e = anthropic_error_event("overloaded_error", "Overloaded", "req_1");
  auto events = split_events({e});
  EXPECT_EQ(events[0].data["error"]["type"], "overloaded_error");
  EXPECT_EQ(events[0].data["request_id"], "req_1");
}

Json parse_data(const std::string& frame) {
  EXPECT_EQ(frame.rfind("data: ", 0), 0u);
  return Json::parse(frame.substr(6, frame.size() - 8));
}

TEST(RenderOpenAiTest, CompletionJsonMapsBlocksAndUsage) {
  Reply r = sample_reply();
  std::erase_if(r.blocks, [](const Block& b) {
    return b.kind != BlockKind::text && b.kind != BlockKind::tool_use;
  });
  r.id = "chatcmpl-1";
  Json c = openai_completion_json(r, 1700000000);
  EXPECT_EQ(c["object"], "chat.completion");
  const Json& choice = c["choices"][0];
  EXPECT_EQ(choice["finish_reason"], "tool_calls");
  EXPECT_EQ(choice["message"]["role"], "assistant");
  EXPECT_EQ(choice["message"]["content"], r.blocks[0].text);
  ASSERT_EQ(choice["message"]["tool_calls"].size(), 2u);
  EXPECT_EQ(choice["message"]["tool_calls"][0]["id"], "toolu_01x");
  EXPECT_EQ(
      Json::parse(choice["message"]["tool_calls"][0]["function"]["arguments"].get<std::string>()),
      r.blocks[1].input);
  EXPECT_EQ(c["usage"]["prompt_tokens"], 1200 + 4000 + 10);
  EXPECT_EQ(c["usage"]["completion_tokens"], 300);
  EXPECT_EQ(c["usage"]["total_tokens"], 1200 + 4000 + 10 + 300);
  EXPECT_EQ(c["usage"]["prompt_tokens_details"]["cached_tokens"], 4000);
}

TEST(RenderOpenAiTest, FinishReasonMapping) {
  EXPECT_EQ(openai_finish_reason("end_turn"), "stop");
  EXPECT_EQ(openai_finish_reason("tool_use"), "tool_calls");
  EXPECT_EQ(openai_finish_reason("max_tokens"), "length");
  EXPECT_EQ(openai_finish_reason("stop_sequence"), "stop");
  EXPECT_EQ(openai_finish_reason("refusal"), "content_filter");
}

TEST(RenderOpenAiTest, StreamReassemblesByIndexWithUsageAndDone) {
  Reply r = sample_reply();
  std::erase_if(r.blocks, [](const Block& b) {
    return b.kind != BlockKind::text && b.kind != BlockKind::tool_use;
  });
  auto frames = openai_sse(r, true, 1700000000, 3);
  ASSERT_GE(frames.size(), 5u);
  EXPECT_EQ(frames.back(), "data: [DONE]\n\n");
  Json usage_chunk = parse_data(frames[frames.size() - 2]);
  EXPECT_TRUE(usage_chunk["choices"].empty());
  EXPECT_EQ(usage_chunk["usage"]["completion_tokens"], 300);

  std::string content, finish;
  std::map<std::size_t, Json> calls;
  int argument_pieces = 0;
  for (std::size_t i = 0; i + 2 < frames.size(); ++i) {
    Json c = parse_data(frames[i]);
    EXPECT_EQ(c["object"], "chat.completion.chunk");
    EXPECT_TRUE(c["usage"].is_null());
    const Json& choice = c["choices"][0];
    const Json& delta = choice["delta"];
    if (delta.contains("content")) content += delta["content"].get<std::string>();
    if (delta.contains("tool_calls"))
      for (const auto& tc : delta["tool_calls"]) {
        Json& call = calls[tc["index"].get<std::size_t>()];
        if (tc.contains("id"))
          call = {{"id", tc["id"]}, {"name", tc["function"]["name"]}, {"arguments", ""}};
        if (tc["function"].contains("arguments") && !tc.contains("id")) ++argument_pieces;
        call["arguments"] =
            call["arguments"].get<std::string>() + tc["function"]["arguments"].get<std::string>();
      }
    if (!choice["finish_reason"].is_null()) finish = choice["finish_reason"];
  }
  EXPECT_EQ(content, r.blocks[0].text);
  EXPECT_EQ(finish, "tool_calls");
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0]["id"], "toolu_01x");
  EXPECT_EQ(Json::parse(calls[0]["arguments"].get<std::string>()), r.blocks[1].input);
  EXPECT_EQ(Json::parse(calls[1]["arguments"].get<std::string>()), r.blocks[2].input);
  EXPECT_GE(argument_pieces, 4);  // arguments arrive in several pieces

  // Without include_usage: no usage chunk and no usage field.
  auto plain = openai_sse(r, false, 1700000000, 3);
  EXPECT_FALSE(parse_data(plain[0]).contains("usage"));
  EXPECT_FALSE(parse_data(plain[plain.size() - 2])["choices"].empty());
}

TEST(TextUtilTest, SplitUtf8NeverCutsACharacter) {
  const std::string text = "aé日本語😀b — “x” " + std::string(100, 'z') + "ünï";
  for (std::uint64_t seed = 0; seed < 50; ++seed) {
    auto pieces = split_utf8(text, 1, 5, seed);
    std::string joined;
    for (const auto& p : pieces) {
      EXPECT_NO_THROW((void)Json(p).dump()) << "piece is not valid UTF-8";
      joined += p;
    }
    EXPECT_EQ(joined, text);
  }
  EXPECT_EQ(utf8_prefix("日本", 4), "日");
  EXPECT_EQ(utf8_prefix("abc", 10), "abc");
}

TEST(TextUtilTest, RngIsDeterministic) {
  Rng a(42), b(42), c(43);
  EXPECT_EQ(a.base62(22), b.base62(22));
  EXPECT_NE(a.next(), c.next());
  double u = Rng(1).unit();
  EXPECT_GE(u, 0.0);
  EXPECT_LT(u, 1.0);
  EXPECT_EQ(Rng(5).base64(96).size(), 128u);
}

}  // namespace
}  // namespace loopr::mock_llm
