// The daemon's end of a command's channel to `loopr mcp-serve` (loopr/llm/mcp.hpp).
#include <fcntl.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <fstream>
#include <thread>

#include <loopr/llm/mcp.hpp>

namespace loopr::llm {

namespace {

using nlohmann::json;

std::string random_token() {
  unsigned char bytes[24] = {};
  std::ifstream in("/dev/urandom", std::ios::binary);
  in.read(reinterpret_cast<char*>(bytes), sizeof bytes);
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned char b : bytes) out += {hex[b >> 4], hex[b & 15]};
  return out;
}

/// Compares without stopping at the first difference.
bool same_secret(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

bool write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::send(fd, text.data() + done, text.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

class Channel final : public McpChannel {
 public:
  Channel(std::filesystem::path socket, std::vector<ToolDefinition> tools, OwnToolCall call)
      : socket_(std::move(socket)),
        token_(random_token()),
        tools_(std::move(tools)),
        call_(std::move(call)) {}

  ~Channel() override {
    if (stop_[1] >= 0) {
      char c = 1;
      (void)!::write(stop_[1], &c, 1);
    }
    if (thread_.joinable()) thread_.join();
    for (int fd : {listen_, stop_[0], stop_[1]})
      if (fd >= 0) ::close(fd);
    std::error_code ec;
    std::filesystem::remove(socket_, ec);
  }

  Result<void> start() {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (socket_.native().size() >= sizeof addr.sun_path)
      return make_error(ErrorCode::internal, "the MCP channel's path is too long: " +
                                                 socket_.string());
    std::strcpy(addr.sun_path, socket_.c_str());
    std::error_code ec;
    std::filesystem::remove(socket_, ec);
    listen_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listen_ < 0 || ::pipe2(stop_, O_CLOEXEC) != 0)
      return make_error(ErrorCode::io, std::string("cannot make the MCP channel: ") +
                                           std::strerror(errno));
    if (::bind(listen_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(listen_, 4) != 0)
      return make_error(ErrorCode::io, "cannot listen on " + socket_.string() + ": " +
                                           std::strerror(errno));
    ::chmod(socket_.c_str(), 0600);
    thread_ = std::thread([this] { serve(); });
    return ok();
  }

  const std::filesystem::path& socket() const override { return socket_; }
  const std::string& token() const override { return token_; }

 private:
  /// Waits for `fd` to be readable or the channel to stop; false once it stops.
  bool wait_readable(int fd) {
    pollfd fds[2] = {{fd, POLLIN, 0}, {stop_[0], POLLIN, 0}};
    while (true) {
      int n = ::poll(fds, 2, -1);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 || (fds[1].revents & POLLIN)) return false;
      if (fds[0].revents) return true;
    }
  }

  void serve() {
    while (wait_readable(listen_)) {
      int conn = ::accept4(listen_, nullptr, nullptr, SOCK_CLOEXEC);
      if (conn < 0) continue;
      serve_connection(conn);
      ::close(conn);
    }
  }

  void serve_connection(int conn) {
    std::string buffer;
    char chunk[4096];
    while (wait_readable(conn)) {
      ssize_t n = ::recv(conn, chunk, sizeof chunk, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;
      buffer.append(chunk, static_cast<std::size_t>(n));
      for (auto nl = buffer.find('\n'); nl != std::string::npos; nl = buffer.find('\n')) {
        std::string line = buffer.substr(0, nl);
        buffer.erase(0, nl + 1);
        bool keep = true;
        json reply = answer(line, keep);
        if (!write_all(conn, reply.dump(-1, ' ', false, json::error_handler_t::replace) + "\n") ||
            !keep)
          return;
      }
      if (buffer.size() > kMcpLineMax) {
        write_all(conn, json{{"error", "request too long"}}.dump() + "\n");
        return;
      }
    }
  }

  json answer(const std::string& line, bool& keep) {
    auto req = json::parse(line, nullptr, false);
    if (!req.is_object() || !req.contains("token") || !req["token"].is_string() ||
        !same_secret(req["token"].get<std::string>(), token_)) {
      spdlog::warn("MCP channel {}: a request without the command's token, refused",
                   socket_.string());
      keep = false;
      return {{"error", "refused: not this command's channel"}};
    }
    const std::string op = req.value("op", "");
    if (op == "list") {
      json list = json::array();
      for (const auto& t : tools_)
        list.push_back(
            {{"name", t.name}, {"description", t.description}, {"input_schema", t.input_schema}});
      return {{"tools", list}};
    }
    if (op != "call") return {{"error", "unknown op"}};
    const std::string name =
        req.contains("name") && req["name"].is_string() ? req["name"].get<std::string>() : "";
    bool served = false;
    for (const auto& t : tools_) served = served || t.name == name;
    if (!served)
      return {{"unknown", true},
              {"text", "no tool " + json(name).dump() + " here; this loop has: " + names()}};
    json arguments = req.contains("arguments") ? req["arguments"] : json::object();
    try {
      auto [text, is_error] = call_(name, arguments);
      return {{"text", text}, {"is_error", is_error}};
    } catch (const std::exception& e) {
      return {{"text", std::string("the call failed: ") + e.what()}, {"is_error", true}};
    }
  }

  std::string names() const {
    std::string out;
    for (const auto& t : tools_) out += (out.empty() ? "" : ", ") + t.name;
    return out.empty() ? "none" : out;
  }

  std::filesystem::path socket_;
  std::string token_;
  std::vector<ToolDefinition> tools_;
  OwnToolCall call_;
  int listen_ = -1;
  int stop_[2] = {-1, -1};
  std::thread thread_;
};

}  // namespace

bool is_own_cli_tool(std::string_view name) { return name == "share_note" || name == "ask_user"; }

Result<std::unique_ptr<McpChannel>> McpChannel::open(std::filesystem::path socket,
                                                     std::vector<ToolDefinition> tools,
                                                     OwnToolCall call) {
  auto channel = std::make_unique<Channel>(std::move(socket), std::move(tools), std::move(call));
  LOOPR_TRY(channel->start());
  return std::unique_ptr<McpChannel>(std::move(channel));
}

}  // namespace loopr::llm
