// `loopr mcp-serve`: the MCP server (stdio, newline-delimited JSON-RPC 2.0) an agent CLI starts
// in its sandbox for loopr's own tools; each call goes over the command's channel to the daemon
// (loopr/llm/mcp.hpp). It holds no state of the loop and never names one.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <iostream>

#include <loopr/llm/mcp.hpp>

namespace loopr::llm {

namespace {

using nlohmann::json;

// The protocol versions this server speaks; a client asking for another gets the newest.
constexpr const char* kVersions[] = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};

json error_reply(const json& id, int code, const std::string& message) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}};
}

json result_reply(const json& id, json result) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

json tool_list(const json& listed, const McpAliases& aliases) {
  json tools = json::array();
  if (listed.contains("tools") && listed["tools"].is_array())
    for (const auto& t : listed["tools"]) {
      json schema = t.value("input_schema", json::object());
      if (!schema.is_object()) schema = json{{"type", "object"}};
      std::string name = t.value("name", "");
      if (auto a = aliases.find(name); a != aliases.end()) name = a->second;
      tools.push_back(
          {{"name", name}, {"description", t.value("description", "")}, {"inputSchema", schema}});
    }
  return tools;
}

/// The tool a call names: loopr's own name of an alias the CLI was shown, else the name as is.
std::string own_name(const std::string& called, const McpAliases& aliases) {
  for (const auto& [name, shown] : aliases)
    if (shown == called) return name;
  return called;
}

json answer(const json& req, const std::function<std::optional<json>(const json&)>& forward,
            const McpAliases& aliases) {
  const json id = req.contains("id") ? req["id"] : json();
  const std::string method = req["method"].get<std::string>();
  const json params =
      req.contains("params") && req["params"].is_object() ? req["params"] : json::object();
  if (method == "initialize") {
    std::string version = kVersions[0];
    if (params.contains("protocolVersion") && params["protocolVersion"].is_string())
      for (const char* v : kVersions)
        if (params["protocolVersion"] == v) version = v;
    return result_reply(id, {{"protocolVersion", version},
                             {"capabilities", {{"tools", {{"listChanged", false}}}}},
                             {"serverInfo", {{"name", "loopr"}, {"version", "0.1.0"}}},
                             {"instructions",
                              "loopr's coordination tools for this loop: share_note tells the "
                              "other loops of the plan, ask_user asks the person."}});
  }
  if (method == "ping") return result_reply(id, json::object());
  if (method == "tools/list") {
    auto listed = forward({{"op", "list"}});
    if (!listed) return error_reply(id, -32603, "loopr's daemon is not reachable");
    return result_reply(id, {{"tools", tool_list(*listed, aliases)}});
  }
  if (method == "tools/call") {
    if (!params.contains("name") || !params["name"].is_string())
      return error_reply(id, -32602, "tools/call needs `name` (a string)");
    json arguments = params.contains("arguments") ? params["arguments"] : json::object();
    if (!arguments.is_object()) return error_reply(id, -32602, "`arguments` must be an object");
    const std::string name = own_name(params["name"].get<std::string>(), aliases);
    auto done = forward({{"op", "call"}, {"name", name}, {"arguments", arguments}});
    if (!done) return error_reply(id, -32603, "loopr's daemon is not reachable");
    if (done->value("unknown", false))
      return error_reply(id, -32602, "Unknown tool: " + done->value("text", std::string()));
    if (done->contains("error"))
      return error_reply(id, -32603, "loopr: " + done->value("error", std::string()));
    return result_reply(
        id, {{"content", json::array({{{"type", "text"}, {"text", done->value("text", "")}}})},
             {"isError", done->value("is_error", false)}});
  }
  return error_reply(id, -32601, "Method not found: " + method);
}

/// One persistent connection to the daemon's end; reconnects once if it dropped.
class ChannelClient {
 public:
  ChannelClient(std::string socket, std::string token)
      : socket_(std::move(socket)), token_(std::move(token)) {}
  ~ChannelClient() { close(); }

  std::optional<json> send(json request) {
    request["token"] = token_;
    for (int attempt = 0; attempt < 2; ++attempt) {
      if (fd_ < 0 && !connect()) return std::nullopt;
      if (auto reply = exchange(request.dump(-1, ' ', false, json::error_handler_t::replace)))
        return reply;
      close();
    }
    return std::nullopt;
  }

 private:
  bool connect() {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (socket_.size() >= sizeof addr.sun_path) return false;
    std::strcpy(addr.sun_path, socket_.c_str());
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ >= 0 && ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0)
      return true;
    close();
    return false;
  }

  std::optional<json> exchange(const std::string& line) {
    std::string out = line + "\n";
    for (std::size_t done = 0; done < out.size();) {
      ssize_t n = ::send(fd_, out.data() + done, out.size() - done, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return std::nullopt;
      done += static_cast<std::size_t>(n);
    }
    std::string in;
    char chunk[4096];
    while (in.find('\n') == std::string::npos) {
      ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0 || in.size() > kMcpLineMax) return std::nullopt;
      in.append(chunk, static_cast<std::size_t>(n));
    }
    auto reply = json::parse(in.substr(0, in.find('\n')), nullptr, false);
    if (!reply.is_object()) return std::nullopt;
    if (reply.contains("error")) close();  // the daemon closed it after saying why
    return reply;
  }

  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  std::string socket_, token_;
  int fd_ = -1;
};

}  // namespace

std::optional<std::string> mcp_reply(std::string_view line,
                                     const std::function<std::optional<json>(const json&)>& forward,
                                     const McpAliases& aliases) {
  if (line.find_first_not_of(" \t\r") == std::string_view::npos) return std::nullopt;
  auto req = json::parse(line, nullptr, false);
  json reply;
  if (req.is_discarded()) {
    reply = error_reply(nullptr, -32700, "Parse error");
  } else if (!req.is_object() || req.value("jsonrpc", json()) != "2.0" || !req.contains("method") ||
             !req["method"].is_string() ||
             (req.contains("id") && !req["id"].is_string() && !req["id"].is_number_integer())) {
    json id = req.is_object() && req.contains("id") &&
                      (req["id"].is_string() || req["id"].is_number_integer())
                  ? req["id"]
                  : json();
    reply = error_reply(id, -32600, "Invalid Request");
  } else if (!req.contains("id")) {
    return std::nullopt;  // a notification (notifications/initialized, cancelled, …)
  } else {
    reply = answer(req, forward, aliases);
  }
  return reply.dump(-1, ' ', false, json::error_handler_t::replace);
}

int run_mcp_serve(const std::string& socket, const McpAliases& aliases) {
  const char* token = std::getenv("LOOPR_MCP_TOKEN");
  ChannelClient channel(socket, token ? token : "");
  auto forward = [&](const json& request) { return channel.send(request); };
  std::ios::sync_with_stdio(false);
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.size() > kMcpLineMax) {
      std::cout << error_reply(nullptr, -32700, "Parse error: the message is too long").dump()
                << "\n"
                << std::flush;
      continue;
    }
    if (auto reply = mcp_reply(line, forward, aliases)) std::cout << *reply << "\n" << std::flush;
  }
  return 0;
}

}  // namespace loopr::llm
