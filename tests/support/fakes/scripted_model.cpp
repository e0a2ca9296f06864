#include "support/fakes/scripted_model.hpp"

#include <chrono>
#include <fstream>
#include <stdexcept>

#include <mock_llm/engine.hpp>

namespace loopr::testing {

struct ScriptedModel::Impl {
  std::string log_path;
  mock_llm::RequestLog log;
  std::unique_ptr<mock_llm::Engine> engine;
  std::mutex mutex;  // the engine is not thread-safe; clients may run on several threads

  explicit Impl(std::string path) : log_path(path), log(path) {}

  llm::InProcessAnswer answer(const llm::InProcessRequest& request) {
    mock_llm::HttpRequest http;
    http.method = request.method;
    http.target = request.target;
    for (const auto& [name, value] : request.headers) {
      std::string lower = name;
      for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      http.headers.items.emplace_back(std::move(lower), value);
    }
    http.body = request.body;
    http.arrival_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
    mock_llm::ResponsePlan plan;
    {
      std::lock_guard lock(mutex);
      plan = engine->handle(http);
    }
    llm::InProcessAnswer out;
    out.status = plan.status;
    out.headers = plan.headers;
    if (plan.hang) {
      out.cut_after = 0;
      return out;
    }
    if (!plan.streaming) {
      out.body = plan.body;
      if (plan.cut_after) out.cut_after = *plan.cut_after;
      if (plan.stall_after) out.cut_after = *plan.stall_after;
      return out;
    }
    std::optional<std::size_t> cut = plan.cut_after ? plan.cut_after : plan.stall_after;
    for (std::size_t i = 0; i < plan.events.size(); ++i) {
      if (cut && i == *cut) {
        out.cut_after = out.body.size();
        break;
      }
      out.body += plan.events[i];
    }
    return out;
  }
};

ScriptedModel::ScriptedModel(const std::string& script, const std::string& log_path)
    : impl_(std::make_shared<Impl>(log_path)) {
  auto parsed = mock_llm::parse_script(script, "test script");
  if (!parsed) throw std::runtime_error("script: " + parsed.error().message);
  mock_llm::EngineOptions options;
  options.seed = 1;
  impl_->engine = std::make_unique<mock_llm::Engine>(std::move(parsed).value(), options, &impl_->log);
}

ScriptedModel::~ScriptedModel() = default;

llm::InProcessServer ScriptedModel::server() {
  std::shared_ptr<Impl> impl = impl_;
  return [impl](const llm::InProcessRequest& r) { return impl->answer(r); };
}

std::unique_ptr<llm::LlmClient> ScriptedModel::client(const Config& config) {
  auto env = [](const char* name) -> std::optional<std::string> {
    std::string n = name;
    if (n == "ANTHROPIC_API_KEY" || n == "OPENAI_API_KEY") return "test-key";
    return std::nullopt;
  };
  auto made = llm::make_in_process_client(config, env, server());
  if (!made) throw std::runtime_error(made.error().message);
  return std::move(made).value();
}

std::vector<nlohmann::json> ScriptedModel::requests() const {
  std::vector<nlohmann::json> out;
  std::ifstream in(impl_->log_path);
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_discarded()) out.push_back(std::move(j));
  }
  return out;
}

std::vector<nlohmann::json> ScriptedModel::requests_of(const std::string& loop_id) const {
  std::vector<nlohmann::json> out;
  for (auto& r : requests())
    if (r["headers"].value("x-loopr-loop-id", "") == loop_id) out.push_back(r);
  return out;
}

}  // namespace loopr::testing
