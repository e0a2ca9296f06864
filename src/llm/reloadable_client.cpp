#include <loopr/llm/client.hpp>

namespace loopr::llm {

ReloadableClient::ReloadableClient(std::unique_ptr<LlmClient> first) : current_(std::move(first)) {}

void ReloadableClient::replace(std::unique_ptr<LlmClient> next) {
  std::lock_guard lock(mutex_);
  retired_.push_back(std::move(current_));
  current_ = std::move(next);
}

std::shared_ptr<LlmClient> ReloadableClient::current() const {
  std::lock_guard lock(mutex_);
  return current_;
}

awaitable<Outcome> ReloadableClient::complete(const Request& request) {
  std::shared_ptr<LlmClient> client = current();  // held by this frame until the call ends
  Outcome out = co_await client->complete(request);
  co_return out;
}

bool ReloadableClient::runs_own_tools() const { return current()->runs_own_tools(); }
const std::string& ReloadableClient::provider() const { return current()->provider(); }
const std::string& ReloadableClient::model() const { return current()->model(); }
const LlmClient& ReloadableClient::for_provider(std::string_view provider) const {
  return current()->for_provider(provider);  // retired_ keeps a replaced one alive
}

}  // namespace loopr::llm
